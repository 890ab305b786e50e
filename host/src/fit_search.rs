//! `edgeflow fit`'s search: every way to build a spec's network on one board that leaves its
//! function alone (z per junction; registered reads and the deep pipeline where the board
//! does not build them anyway), costed by the planner's model, timed as the hardware builds
//! it, ranked by samples/s.
//!
//! The search walks the speed frontier, not every combination of z: a block cycle is set by
//! the longest pass, and every resource of the cost model grows with z (planner/src/cost.rs),
//! so for each pass length the smallest valid z of every junction that reaches it is the
//! design that uses the least of everything at that speed; any other combination is as slow
//! or slower with at least as much of every resource.

use edgeflow_core::Spec;
use edgeflow_hdl::boards::BoardInfo;
use edgeflow_hdl::design::Inner;
use edgeflow_planner::cost::{single_board_usage, Net, Usage};
use edgeflow_planner::Board;
use serde::Serialize;
use std::collections::BTreeSet;

/// One design of the network on the board.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// Place in the ranking, from 1 (0 for a design outside it).
    pub rank: usize,
    pub z: Vec<usize>,
    /// As the board builds it: the spec's choice or the board's.
    pub registered_reads: bool,
    pub deep_pipeline: bool,
    /// Clocks per block cycle (one training sample each) of the hardware as built on the
    /// board (`Spec::block_cycle_clocks`, as `edgeflow bitstream` reports).
    pub block_cycle_clocks: usize,
    pub samples_per_second: f64,
    /// The cost model's prediction on the board (`edgeflow cost`).
    pub usage: Usage,
    pub logic_percent: f64,
    pub dsp_percent: f64,
    pub ram_blocks_percent: f64,
    pub fits: bool,
    /// Within the model's error of the board's logic: only synthesis can tell.
    pub near_limit: bool,
    pub verdict: String,
    /// The candidate's spec: the input's with this z and these choices.
    #[serde(skip)]
    pub spec: Spec,
}

/// What the search looked at and what it kept.
#[derive(Debug, Serialize)]
pub struct Search {
    /// Valid z of each junction (divisors of its edge count that the spec's rules accept).
    pub z_options: Vec<Vec<usize>>,
    /// Combinations of z and of the free pipeline choices.
    pub combinations: f64,
    /// Whether registered reads and the deep pipeline were choices (the board builds them
    /// otherwise).
    pub pipeline_free: bool,
    /// Designs on the speed frontier, costed.
    pub considered: usize,
    pub not_fitting: usize,
    /// Fitting designs another fitting one beats: as fast or faster with no more of any
    /// resource, at the same pipeline choices.
    pub dominated: usize,
    /// The fitting designs, best first (the report lists the first `--top` of them).
    #[serde(skip)]
    pub ranked: Vec<Candidate>,
    /// The slowest design faster than the best fitting one: what one step more would need.
    pub next_faster: Option<Candidate>,
}

fn divisors(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..)
        .take_while(|d| d * d <= n)
        .filter(|d| n % d == 0)
        .flat_map(|d| [d, n / d])
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The valid z of junction `j`: the divisors of its edge count for which the spec, with only
/// that z changed, passes its own validation.
pub fn z_options(spec: &Spec, j: usize) -> Vec<usize> {
    divisors(spec.edges(j))
        .into_iter()
        .filter(|&d| {
            let mut s = spec.clone();
            s.z[j] = d;
            s.validate("").is_ok()
        })
        .collect()
}

/// The spec as the board builds it (its registered reads and deep pipeline added).
pub fn as_built(spec: &Spec, b: &BoardInfo) -> Spec {
    match Inner::Network(spec.clone()).for_board(b) {
        Inner::Network(s) => s,
        _ => unreachable!("a network stays a network"),
    }
}

fn percent(used: u64, available: u64) -> f64 {
    100.0 * used as f64 / available.max(1) as f64
}

/// The model's verdict in a few words: fits, or each resource over what it allows.
pub fn verdict(u: &Usage) -> String {
    if u.near_limit() {
        // within the model's error of the part: the real flow decides
        return format!(
            "near the limit (±{:.0}%): --verify decides",
            u.logic_error * 100.0
        );
    }
    if u.fits() {
        return "fits".into();
    }
    let over: Vec<String> = u
        .shortfalls()
        .iter()
        .map(|(what, need, allowed)| {
            let what = what.split(" (").next().unwrap_or(what);
            format!("{what} {need} > {allowed}")
        })
        .collect();
    format!("DOES NOT FIT: {}", over.join(", "))
}

/// Costs and times one design.
pub fn candidate(
    spec: Spec,
    b: &BoardInfo,
    board: &Board,
    mhz: f64,
) -> Result<Candidate, edgeflow_core::SpecError> {
    spec.validate(&spec.name)?;
    let built = as_built(&spec, b);
    let cycle = built.block_cycle_clocks();
    let z: Vec<u64> = spec.z.iter().map(|&z| z as u64).collect();
    let u = single_board_usage(&Net::from_spec(&spec), board, &z);
    Ok(Candidate {
        rank: 0,
        z: spec.z.clone(),
        registered_reads: built.registered_reads,
        deep_pipeline: built.deep_pipeline,
        block_cycle_clocks: cycle,
        samples_per_second: mhz * 1e6 / cycle as f64,
        logic_percent: percent(u.logic, u.logic_available),
        dsp_percent: percent(u.dsp, u.dsp_available),
        ram_blocks_percent: percent(u.ram_blocks, u.ram_blocks_available),
        fits: u.fits(),
        near_limit: u.near_limit(),
        verdict: verdict(&u),
        usage: u,
        spec,
    })
}

/// Ranking order: fewer clocks (more samples/s at the one clock), then less logic, then
/// fewer DSPs and block RAMs.
fn order(c: &Candidate) -> impl Ord + '_ {
    (
        c.block_cycle_clocks,
        c.usage.logic,
        c.usage.dsp,
        c.usage.ram_blocks,
        c.usage.ram_bits,
        c.registered_reads,
        c.deep_pipeline,
        &c.z,
    )
}

/// `b` beats `a`: the same pipeline choices, at least as fast, no more of any resource (a
/// design equal in all of these is a duplicate, and beaten by the first one ranked).
pub fn beats(b: &Candidate, a: &Candidate) -> bool {
    let (x, y) = (&b.usage, &a.usage);
    b.registered_reads == a.registered_reads
        && b.deep_pipeline == a.deep_pipeline
        && b.block_cycle_clocks <= a.block_cycle_clocks
        && x.logic <= y.logic
        && x.dsp <= y.dsp
        && x.ram_bits <= y.ram_bits
        && x.ram_blocks <= y.ram_blocks
}

/// Every design on the speed frontier of `spec` on the board, the fitting ones ranked.
pub fn search(
    spec: &Spec,
    b: &BoardInfo,
    board: &Board,
    mhz: f64,
) -> Result<Search, edgeflow_core::SpecError> {
    let l = spec.junctions();
    let opts: Vec<Vec<usize>> = (0..l).map(|j| z_options(spec, j)).collect();
    // every pass length some junction has at some z
    let passes: BTreeSet<usize> = (0..l)
        .flat_map(|j| opts[j].iter().map(move |&z| spec.edges(j) / z))
        .collect();
    let frontier: BTreeSet<Vec<usize>> = passes
        .iter()
        .filter_map(|&t| {
            (0..l)
                .map(|j| opts[j].iter().copied().find(|&z| spec.edges(j) / z <= t))
                .collect::<Option<Vec<usize>>>()
        })
        .collect();
    let choices = |forced: bool, own: bool| if forced { vec![own] } else { vec![false, true] };
    let rr = choices(b.registered_reads, spec.registered_reads);
    let dp = choices(b.deep_pipeline, spec.deep_pipeline);
    let mut all = Vec::new();
    for z in &frontier {
        for &r in &rr {
            for &d in &dp {
                let mut s = spec.clone();
                s.z = z.clone();
                s.registered_reads = r;
                s.deep_pipeline = d;
                all.push(candidate(s, b, board, mhz)?);
            }
        }
    }
    all.sort_by(|a, b| order(a).cmp(&order(b)));
    let considered = all.len();
    let (fitting, over): (Vec<Candidate>, Vec<Candidate>) = all.into_iter().partition(|c| c.fits);
    let mut ranked: Vec<Candidate> = Vec::new();
    for c in fitting.iter() {
        if !ranked.iter().any(|k| beats(k, c)) {
            ranked.push(c.clone());
        }
    }
    for (i, c) in ranked.iter_mut().enumerate() {
        c.rank = i + 1;
    }
    // at the best one's pipeline choices (or, when none fits, at any)
    let best = ranked.first();
    let next_faster = over
        .iter()
        .filter(|c| {
            best.is_none_or(|b| {
                c.block_cycle_clocks < b.block_cycle_clocks
                    && (c.registered_reads, c.deep_pipeline)
                        == (b.registered_reads, b.deep_pipeline)
            })
        })
        .min_by_key(|c| (std::cmp::Reverse(c.block_cycle_clocks), c.usage.logic))
        .cloned();
    Ok(Search {
        combinations: opts.iter().map(|o| o.len() as f64).product::<f64>()
            * (rr.len() * dp.len()) as f64,
        pipeline_free: rr.len() * dp.len() > 1,
        z_options: opts,
        considered,
        not_fitting: over.len(),
        dominated: fitting.len() - ranked.len(),
        ranked,
        next_faster,
    })
}
