//! The plan as `edgeflow plan` prints and saves it: the chosen groups, boards and `z`, every
//! board's utilisation, the bottleneck, the predicted samples/s, a lower bound and the gap,
//! and the same figures for the baselines users know.

use crate::catalog::Board;
use crate::cost::{junction_need, junction_time, lut_multiplier_cost, Net, Ps, Usage};
use crate::dp::{evaluate, optimize, optimize_fixed, Order, PlanError, Solution, StagePlan};
use crate::error::{PlanFailure, PlanFileError, StageProblem};
use edgeflow_core::Spec;
use serde::{Deserialize, Serialize};

pub const PLAN_FORMAT: &str = "edgeflow-plan-v1";

/// A stage's resource use as the plan file records it: the cost model's figures.
pub type Utilisation = Usage;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StageReport {
    /// Index into `boards`.
    pub board_index: usize,
    pub board: String,
    /// First and last junction, 1-based, inclusive.
    pub junctions: [usize; 2],
    /// `z` of each junction of the stage.
    pub z: Vec<u64>,
    pub block_cycle_clocks: u64,
    pub block_cycle_ps: Ps,
    pub utilisation: Utilisation,
    /// The model puts the stage's logic within its error of the part: planned, but only
    /// synthesis (`edgeflow synth --board`) can tell whether it fits.
    #[serde(default)]
    pub near_limit: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinkReport {
    /// The link carries layer `after_junction` (1-based): between junction `after_junction`
    /// and the next.
    pub after_junction: usize,
    pub from_board: String,
    pub to_board: String,
    pub transfer_ps: Ps,
    pub latency_ps: Ps,
    /// `⌈(latency + transfer) / period⌉`: block cycles the link adds each way.
    pub delay_block_cycles: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Figures {
    pub period_ps: Ps,
    pub samples_per_second: f64,
    pub bottleneck: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Baseline {
    pub name: String,
    /// Junction groups, 1-based inclusive, on boards 1, 2, … of the given order.
    pub groups: Vec<[usize; 2]>,
    /// `None` when the baseline's split fits on no choice of `z`.
    pub figures: Option<Figures>,
    pub z: Option<Vec<u64>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bound {
    pub samples_per_second: f64,
    pub period_ps: Ps,
    /// Which bound binds: total work, largest junction, or unavoidable link.
    pub binding: String,
}

/// Everything about a plan; `edgeflow plan -o` writes it and `edgeflow train --plan` reads it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlanFile {
    pub format: String,
    pub spec_source: String,
    /// The spec with the planned `z` of every junction.
    pub spec: Spec,
    /// The boards offered, in the given order.
    pub boards: Vec<Board>,
    pub permute: bool,
    /// Every board holds at least one junction (`edgeflow plan --all-boards`).
    #[serde(default)]
    pub all_boards: bool,
    pub stages: Vec<StageReport>,
    pub links: Vec<LinkReport>,
    /// Block cycles of delay between junction `j` and `j+1` (L-1 entries; 0 within a board):
    /// the argument of `sim::Schedule::with_links`.
    pub link_delay: Vec<u64>,
    /// Staleness of every junction under this plan.
    pub staleness: Vec<u64>,
    #[serde(flatten)]
    pub figures: Figures,
    pub lower_bound: Bound,
    /// `1 - samples_per_second / lower_bound.samples_per_second`.
    pub gap: f64,
    pub baselines: Vec<Baseline>,
}

fn sps(p: Ps) -> f64 {
    1e12 / p as f64
}

fn bottleneck(net: &Net, boards: &[Board], sol: &Solution) -> String {
    let ev = evaluate(net, boards, &sol.stages, &sol.z, sol.period);
    for (st, &t) in sol.stages.iter().zip(&ev.stage_time) {
        if t == sol.period {
            return format!(
                "board {} ({}), junctions {}-{}: block cycle",
                st.board + 1,
                boards[st.board].name,
                st.first + 1,
                st.last + 1
            );
        }
    }
    for (i, l) in ev.links.iter().enumerate() {
        if l.transfer == sol.period {
            let (a, b) = (&sol.stages[i], &sol.stages[i + 1]);
            return format!(
                "link after junction {} ({} -> {}): transfer",
                a.last + 1,
                boards[a.board].name,
                boards[b.board].name
            );
        }
    }
    "link delays: the period is stretched until the in-flight copies the links' delays need fit in block RAM".into()
}

fn figures(net: &Net, boards: &[Board], sol: &Solution) -> Figures {
    Figures {
        period_ps: sol.period,
        samples_per_second: sps(sol.period),
        bottleneck: bottleneck(net, boards, sol),
    }
}

/// A lower bound on the period (an upper bound on samples/s) that no plan beats.
pub fn lower_bound(net: &Net, boards: &[Board]) -> Bound {
    let mut cands: Vec<(Ps, String)> = Vec::new();
    // Total work: every multiply of a sample, spread over every multiplier of every board.
    let capacity: f64 = boards
        .iter()
        .map(|b| {
            let lut = b
                .logic
                .saturating_sub(b.fit.logic_per_board + b.fit.logic_serial_link)
                / lut_multiplier_cost(b, net.width).max(1);
            (b.dsp + lut) as f64 * b.clock_mhz * 1e-6
        })
        .sum();
    if capacity > 0.0 {
        cands.push((
            (net.multiplies_per_sample() as f64 / capacity).floor() as Ps,
            "total work over every board's multipliers".into(),
        ));
    }
    // The largest junction alone on the best board for it.
    for j in 0..net.junctions() {
        let best = boards
            .iter()
            .flat_map(|b| {
                net.z_options[j].iter().filter_map(move |&z| {
                    let n = junction_need(net, b, j, z, net.staleness(j, 0));
                    Usage::new(net, b, &n, 0)
                        .fits()
                        .then(|| junction_time(net, b, j, z))
                })
            })
            .min();
        if let Some(t) = best {
            cands.push((
                t,
                format!("junction {} alone on the best board for it", j + 1),
            ));
        }
    }
    // An unavoidable link: when no single board holds the whole network.
    let one_board = boards
        .iter()
        .any(|b| optimize(net, std::slice::from_ref(b), Order::Chain).is_ok());
    if !one_board && net.junctions() > 1 {
        let mut t: Option<Ps> = None;
        for j in 0..net.junctions() - 1 {
            for a in boards {
                for b in boards {
                    let x = crate::cost::LinkCost::new(net, j, a, b).transfer;
                    t = Some(t.map_or(x, |y: Ps| y.min(x)));
                }
            }
        }
        if let Some(t) = t {
            cands.push((
                t,
                "the fastest link, which no single board can avoid".into(),
            ));
        }
    }
    let (p, binding) = cands
        .into_iter()
        .max_by_key(|c| c.0)
        .unwrap_or((1, "none".into()));
    let p = p.max(1);
    Bound {
        samples_per_second: sps(p),
        period_ps: p,
        binding,
    }
}

/// Equal junction counts per board (the first groups take the remainder).
pub fn equal_groups(l: usize, k: usize) -> Vec<(usize, usize)> {
    let k = k.min(l);
    let (q, r) = (l / k, l % k);
    let mut out = Vec::new();
    let mut first = 0;
    for i in 0..k {
        let n = q + (i < r) as usize;
        out.push((first, first + n - 1));
        first += n;
    }
    out
}

/// Parameter-balanced groups: contiguous, one per board, minimizing the largest group's
/// weights and biases (DeepSpeed's `partition_method = "parameters"`).
pub fn parameter_groups(net: &Net, k: usize) -> Vec<(usize, usize)> {
    let l = net.junctions();
    let k = k.min(l);
    let params: Vec<u64> = (0..l).map(|j| net.edges(j) + net.layers[j + 1]).collect();
    let mut prefix = vec![0u64];
    for p in &params {
        prefix.push(prefix.last().unwrap() + p);
    }
    // best[g][i]: smallest largest-group over the first i junctions in g groups.
    let inf = u64::MAX;
    let mut best = vec![vec![inf; l + 1]; k + 1];
    let mut cut = vec![vec![0usize; l + 1]; k + 1];
    best[0][0] = 0;
    for g in 1..=k {
        for i in g..=l {
            for c in g - 1..i {
                if best[g - 1][c] == inf {
                    continue;
                }
                let v = best[g - 1][c].max(prefix[i] - prefix[c]);
                if v < best[g][i] {
                    best[g][i] = v;
                    cut[g][i] = c;
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut i = l;
    for g in (1..=k).rev() {
        let c = cut[g][i];
        out.push((c, i - 1));
        i = c;
    }
    out.reverse();
    out
}

fn baseline(net: &Net, boards: &[Board], name: &str, groups: Vec<(usize, usize)>) -> Baseline {
    let stages: Vec<StagePlan> = groups
        .iter()
        .enumerate()
        .map(|(b, &(f, l))| StagePlan {
            board: b,
            first: f,
            last: l,
        })
        .collect();
    let sol = optimize_fixed(net, boards, &stages);
    Baseline {
        name: name.into(),
        groups: groups.iter().map(|&(f, l)| [f + 1, l + 1]).collect(),
        figures: sol.as_ref().map(|s| figures(net, boards, s)),
        z: sol.map(|s| s.z),
    }
}

/// Why nothing fits, naming the smallest missing resource.
pub fn diagnose(net: &Net, boards: &[Board]) -> String {
    // A junction that fits on no board even alone, at its smallest z.
    for j in 0..net.junctions() {
        let z = net.z_options[j][0];
        let mut closest: Option<(f64, String)> = None;
        let mut fits = false;
        for b in boards {
            let u = Usage::new(net, b, &junction_need(net, b, j, z, net.staleness(j, 0)), 0);
            if u.fits() {
                fits = true;
                break;
            }
            let (what, need, have) = u.shortfalls()[0];
            let rel = (need - have) as f64 / have.max(1) as f64;
            if closest.as_ref().map_or(true, |c| rel < c.0) {
                closest = Some((
                    rel,
                    format!(
                        "junction {} ({} edges) fits on no board even alone with z = {z}: it needs {need} {what}, the closest board ({}) has {have}, {} short",
                        j + 1,
                        net.edges(j),
                        b.name,
                        need - have
                    ),
                ));
            }
        }
        if !fits {
            return format!(
                "{}; use larger boards, a narrower fixed-point width or a sparser junction",
                closest.unwrap().1
            );
        }
    }
    // The whole network against the sum of every board's resources.
    let (mut need, mut have) = ([0u64; 2], [0u64; 2]);
    for j in 0..net.junctions() {
        let n = junction_need(net, &boards[0], j, net.z_options[j][0], net.staleness(j, 0));
        need[0] += n.ram_bits;
        need[1] += n.ram_blocks;
    }
    for b in boards {
        have[0] += b.ram_bits;
        have[1] += b.ram_blocks;
    }
    for (i, what) in ["block RAM bits", "block RAMs"].iter().enumerate() {
        if need[i] > have[i] {
            return format!(
                "the network needs at least {} {what} in all, {} {}, {} short; add boards",
                need[i],
                if boards.len() == 1 {
                    format!("the board ({}) offers", boards[0].name)
                } else {
                    format!("the {} boards offer", boards.len())
                },
                have[i],
                need[i] - have[i]
            );
        }
    }
    format!(
        "no split of the {} junctions into contiguous groups fits on these {} boards: every junction fits some board alone, but not together with its neighbours, the in-flight copies that link delays add, or the links' own logic; add boards or larger ones, or try --permute",
        net.junctions(),
        boards.len()
    )
}

/// The fastest plan that puts the whole network on one of `boards`.
fn best_alone(net: &Net, boards: &[Board]) -> Option<Solution> {
    let mut best: Option<Solution> = None;
    for (b, board) in boards.iter().enumerate() {
        if let Ok(mut s) = optimize(net, std::slice::from_ref(board), Order::Chain) {
            for st in &mut s.stages {
                st.board = b;
            }
            if best.as_ref().is_none_or(|x| s.period < x.period) {
                best = Some(s);
            }
        }
    }
    best
}

/// Plan `spec` on `boards`: the optimum, its figures, the lower bound and the baselines.
pub fn plan(
    spec: &Spec,
    spec_source: &str,
    boards: &[Board],
    order: Order,
) -> Result<PlanFile, PlanFailure> {
    let alone = Net::from_spec(spec);
    let mut net = alone.clone();
    net.chained = boards.len() > 1;
    let chained = optimize(&net, boards, order).map_err(|e| match e {
        PlanError::NoFit => PlanFailure::NoFit {
            spec: spec.name.clone(),
            why: diagnose(&net, boards),
        },
        PlanError::NoBoards => PlanFailure::NoBoards,
        PlanError::TooManyStates(states) => PlanFailure::TooManyStates { states },
    })?;
    // A plan of one stage is a board on its own, without a link's sequencer or its
    // one-word feed: priced as such, it wins over the same stage priced as linked.
    // the baselines split over every board: priced as linked
    let chain_net = net.clone();
    let sol =
        match best_alone(&alone, boards).filter(|_| order != Order::Every || boards.len() == 1) {
            Some(s) if chained.stages.len() == 1 || s.period <= chained.period => {
                net = alone;
                s
            }
            _ => chained,
        };
    let ev = evaluate(&net, boards, &sol.stages, &sol.z, sol.period);
    let mut planned = spec.clone();
    planned.z = sol.z.iter().map(|&z| z as usize).collect();
    planned
        .validate(spec_source)
        .map_err(PlanFailure::PlannedZ)?;
    let stages = sol
        .stages
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let b = &boards[st.board];
            let clocks = (st.first..=st.last)
                .map(|j| net.edges(j) / sol.z[j])
                .max()
                .unwrap()
                + net.overhead_on(b);
            StageReport {
                board_index: st.board,
                board: b.name.clone(),
                junctions: [st.first + 1, st.last + 1],
                z: sol.z[st.first..=st.last].to_vec(),
                block_cycle_clocks: clocks,
                block_cycle_ps: ev.stage_time[i],
                utilisation: ev.usage[i].clone(),
                near_limit: ev.usage[i].near_limit(),
            }
        })
        .collect();
    let mut link_delay = vec![0; net.junctions() - 1];
    let links = ev
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let (a, b) = (&sol.stages[i], &sol.stages[i + 1]);
            link_delay[a.last] = ev.link_delay[i];
            LinkReport {
                after_junction: a.last + 1,
                from_board: boards[a.board].name.clone(),
                to_board: boards[b.board].name.clone(),
                transfer_ps: l.transfer,
                latency_ps: l.latency,
                delay_block_cycles: ev.link_delay[i],
            }
        })
        .collect();
    let lb = lower_bound(&net, boards);
    let fig = figures(&net, boards, &sol);
    let gap = 1.0 - fig.samples_per_second / lb.samples_per_second;
    let k = boards.len();
    let baselines = vec![
        baseline(
            &chain_net,
            boards,
            "equal junction counts",
            equal_groups(net.junctions(), k),
        ),
        baseline(
            &chain_net,
            boards,
            "parameter-balanced",
            parameter_groups(&net, k),
        ),
    ];
    Ok(PlanFile {
        format: PLAN_FORMAT.into(),
        spec_source: spec_source.into(),
        spec: planned,
        boards: boards.to_vec(),
        permute: order == Order::Permute,
        all_boards: order == Order::Every,
        stages,
        links,
        link_delay,
        staleness: ev.staleness,
        figures: fig,
        lower_bound: lb,
        gap,
        baselines,
    })
}

impl PlanFile {
    pub fn from_json(text: &str, source: &str) -> Result<PlanFile, PlanFileError> {
        let file = || source.to_string();
        let p: PlanFile = serde_json::from_str(text).map_err(|error| PlanFileError::Json {
            file: file(),
            hint: if error.is_eof() {
                "the file is truncated"
            } else {
                "the file is not a plan or was edited"
            },
            error,
        })?;
        if p.format != PLAN_FORMAT {
            return Err(PlanFileError::Format {
                file: file(),
                format: p.format,
            });
        }
        p.spec.validate(source)?;
        let l = p.spec.junctions();
        if p.link_delay.len() + 1 != l || p.staleness.len() != l {
            return Err(PlanFileError::Lengths {
                file: file(),
                link_delays: l - 1,
                junctions: l,
            });
        }
        p.check_stages().map_err(|problem| PlanFileError::Stages {
            file: file(),
            problem,
        })?;
        Ok(p)
    }

    /// The stages must be what `plan` writes: contiguous junction ranges covering 1..L in
    /// order, each on an offered board, with the spec's `z`, and link delays only between
    /// stages (a junction boundary inside one board has no link).
    fn check_stages(&self) -> Result<(), StageProblem> {
        let l = self.spec.junctions();
        if self.stages.is_empty() {
            return Err(StageProblem::Empty);
        }
        let mut next = 1;
        for (i, s) in self.stages.iter().enumerate() {
            let [a, b] = s.junctions;
            if a != next || b < a || b > l {
                return Err(StageProblem::Cover {
                    index: i,
                    first: a,
                    last: b,
                    junctions: l,
                    next,
                });
            }
            if s.board_index >= self.boards.len() {
                return Err(StageProblem::BoardIndex {
                    index: i,
                    board_index: s.board_index,
                    boards: self.boards.len(),
                });
            }
            let want: Vec<u64> = self.spec.z[a - 1..b].iter().map(|&z| z as u64).collect();
            if s.z != want {
                return Err(StageProblem::Z {
                    index: i,
                    z: s.z.clone(),
                    want,
                    first: a,
                    last: b,
                });
            }
            for j in a..b {
                if self.link_delay[j - 1] != 0 {
                    return Err(StageProblem::DelayInsideStage {
                        index: j - 1,
                        delay: self.link_delay[j - 1],
                        left: j,
                        right: j + 1,
                        stage: i + 1,
                    });
                }
            }
            next = b + 1;
        }
        if next != l + 1 {
            return Err(StageProblem::End {
                end: next - 1,
                junctions: l,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mnist_large() -> Spec {
        Spec::from_toml_str(include_str!("../../specs/mnist-large.toml"), "mnist-large").unwrap()
    }

    #[test]
    fn permute_over_too_many_distinct_boards_is_a_clear_error() {
        let spec = mnist_large();
        let boards = crate::instances::mixed_boards(24);
        let e = plan(&spec, "x", &boards, Order::Permute)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--permute") && e.contains("drop --permute"),
            "{e}"
        );
        // The same boards in chain order plan fine.
        assert!(plan(&spec, "x", &boards, Order::Chain).is_ok());
    }

    #[test]
    fn permute_never_loses_to_the_chain_order() {
        let spec = mnist_large();
        let boards = Board::resolve_list(
            "icebreaker,nexys4-ddr,alchitry-cu,opencl-device,nexys4-ddr,opencl-device",
        )
        .unwrap();
        let chain = plan(&spec, "x", &boards, Order::Chain).unwrap();
        let any = plan(&spec, "x", &boards, Order::Permute).unwrap();
        assert!(any.figures.period_ps <= chain.figures.period_ps);
    }

    /// A plan file that was truncated or edited by hand is refused with the field at fault,
    /// never trained with junctions missing or stages overlapping.
    #[test]
    fn damaged_plan_files_are_refused() {
        let spec = mnist_large();
        let boards = Board::resolve_list("nexys4-ddrx4").unwrap();
        let good = plan(&spec, "x", &boards, Order::Chain).unwrap();
        assert!(good.stages.len() >= 2);
        let text = serde_json::to_string(&good).unwrap();
        assert!(PlanFile::from_json(&text, "p.json").is_ok());

        let e = PlanFile::from_json(&text[..text.len() / 2], "p.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.json") && e.contains("truncated"), "{e}");

        let edit = |f: &dyn Fn(&mut PlanFile)| {
            let mut p = good.clone();
            f(&mut p);
            PlanFile::from_json(&serde_json::to_string(&p).unwrap(), "p.json")
                .unwrap_err()
                .to_string()
        };
        let e = edit(&|p| p.stages[0].junctions[0] = 0);
        assert!(e.contains("stages[0].junctions = [0,"), "{e}");
        let e = edit(&|p| {
            p.stages.pop();
        });
        assert!(e.contains("the stages end at junction"), "{e}");
        let e = edit(&|p| p.stages.clear());
        assert!(e.contains("stages is empty"), "{e}");
        let e = edit(&|p| p.stages[1].board_index = 4);
        assert!(e.contains("stages[1].board_index = 4"), "{e}");
        let e = edit(&|p| p.stages[0].z[0] += 1);
        assert!(e.contains("stages[0].z"), "{e}");
        // Two stages merged into one while the link delay between them stays.
        let e = edit(&|p| {
            let last = p.stages[1].junctions[1];
            let mut z = p.stages[0].z.clone();
            z.extend(p.stages[1].z.clone());
            p.stages[0].junctions[1] = last;
            p.stages[0].z = z;
            p.stages.remove(1);
            let j = p.stages[0].junctions[0];
            p.link_delay[j - 1] = p.link_delay[j - 1].max(1);
        });
        assert!(e.contains("link_delay[") && e.contains("must be 0"), "{e}");
    }

    #[test]
    fn equal_groups_split_evenly() {
        assert_eq!(equal_groups(5, 2), vec![(0, 2), (3, 4)]);
        assert_eq!(equal_groups(2, 4), vec![(0, 0), (1, 1)]);
    }

    #[test]
    fn parameter_groups_balance_weights() {
        let net = Net::new(
            "p",
            vec![64, 64, 8, 8, 8],
            vec![8, 8, 8, 8],
            8,
            edgeflow_core::Activation::Sigmoid,
            false,
        );
        // Parameters 576, 520, 72, 72: junction 1 alone (largest group 664) beats 1-2, 3-4 (1096).
        assert_eq!(parameter_groups(&net, 2), vec![(0, 0), (1, 3)]);
    }
}
