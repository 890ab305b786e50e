//! The exact planner: for a period `P`, a dynamic program over (first junction of a stage,
//! board) decides whether some plan meets `P`; the smallest feasible `P` is found by binary
//! search over the finite set of values the optimum can take.
//!
//! Why it is exact:
//! * Feasibility is monotone in `P`: a larger `P` admits every `z` a smaller one did, and link
//!   delays `⌈span / P⌉` only shrink, so memory only shrinks.
//! * At a fixed `P` the smallest `z` meeting `P` is best in every resource (cost.rs), so each
//!   junction's `z` is determined by its board.
//! * A stage's memory grows with `D`, the total link delay after it, and nothing upstream
//!   depends on the suffix except through `D`; so for every suffix (first junction, board)
//!   the least `D` dominates.
//! * The optimum is either a block-cycle or link-transfer time (the bottleneck), or a point
//!   where some link delay steps down, `⌈span / k⌉`; both sets are enumerated.

use crate::catalog::Board;
use crate::cost::{junction_need, junction_time, link_multipliers, LinkCost, Need, Net, Ps, Usage};
use crate::memories::stage_blocks;
use serde::Serialize;

/// One group of consecutive junctions on one board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StagePlan {
    /// Index into the board list.
    pub board: usize,
    /// First and last junction, 0-based, inclusive.
    pub first: usize,
    pub last: usize,
}

/// A complete assignment: stages in chain order, `z` of every junction, and the period.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Solution {
    pub stages: Vec<StagePlan>,
    pub z: Vec<u64>,
    pub period: Ps,
}

/// Everything the cost model says about an assignment at period `p`.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    pub stage_time: Vec<Ps>,
    pub usage: Vec<Usage>,
    /// Links between consecutive stages.
    pub links: Vec<LinkCost>,
    pub link_delay: Vec<u64>,
    /// Staleness of every junction.
    pub staleness: Vec<u64>,
    /// Every time fits in `p` and every board holds its stage.
    pub feasible: bool,
}

pub fn evaluate(net: &Net, boards: &[Board], stages: &[StagePlan], z: &[u64], p: Ps) -> Evaluation {
    let n = stages.len();
    let links: Vec<LinkCost> = (0..n.saturating_sub(1))
        .map(|i| {
            LinkCost::new(
                net,
                stages[i].last,
                &boards[stages[i].board],
                &boards[stages[i + 1].board],
            )
        })
        .collect();
    let link_delay: Vec<u64> = links.iter().map(|l| l.delay(p)).collect();
    let mut staleness = vec![0; net.junctions()];
    let mut feasible = links.iter().all(|l| l.transfer <= p);
    let mut stage_time = Vec::new();
    let mut usage = Vec::new();
    for (i, st) in stages.iter().enumerate() {
        let board = &boards[st.board];
        let after: u64 = link_delay[i.min(link_delay.len())..].iter().sum();
        let mut need = Need::default();
        let mut t = 0;
        let mut stage = Vec::new();
        for j in st.first..=st.last {
            let s = net.staleness(j, after);
            staleness[j] = s;
            need += junction_need(net, board, j, z[j], s);
            t = t.max(junction_time(net, board, j, z[j]));
            stage.push((j, z[j], s));
        }
        if let Some(b) = stage_blocks(net, board, &stage, i > 0, i + 1 < n) {
            need.ram_blocks = b;
        }
        let endpoints = (i > 0) as u64 + (i + 1 < n) as u64;
        let need = need.with_link_multipliers(link_multipliers(
            net,
            board,
            (i > 0).then_some((st.first, z[st.first])),
            (i + 1 < n).then_some((st.last, z[st.last])),
        ));
        let u = Usage::new(net, board, &need, endpoints);
        feasible &= u.fits() && t <= p;
        stage_time.push(t);
        usage.push(u);
    }
    Evaluation {
        stage_time,
        usage,
        links,
        link_delay,
        staleness,
        feasible,
    }
}

/// The smallest period at which this exact assignment (groups, boards, `z`) works, by
/// raising `P` from the slowest time through the points where link delays step down.
/// `None` when it fits at no period.
pub fn min_period_for(net: &Net, boards: &[Board], stages: &[StagePlan], z: &[u64]) -> Option<Ps> {
    let ev = evaluate(net, boards, stages, z, Ps::MAX);
    let mut p = ev
        .stage_time
        .iter()
        .chain(ev.links.iter().map(|l| &l.transfer))
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    loop {
        let ev = evaluate(net, boards, stages, z, p);
        if ev.feasible {
            return Some(p);
        }
        let next = ev
            .links
            .iter()
            .filter(|l| l.delay(p) > 1)
            .map(|l| {
                let d = l.delay(p);
                l.span().div_ceil(d - 1)
            })
            .min()?;
        p = next.max(p + 1);
    }
}

/// Which board may host the stage after a stage on board `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Boards in the given chain order; a board may be left out.
    Chain,
    /// Boards in the given chain order, every one holding at least one junction.
    Every,
    /// Any order of any subset.
    Permute,
}

/// Downstream delays (block cycles) up to which a stage's block RAMs are checked one by one.
const MAX_SEARCHED_DELAY: u64 = 64;

/// Precomputed per-problem tables.
struct Tables {
    /// `time[j][b]`: (z, block-cycle time) of every valid z, ascending z (descending time).
    time: Vec<Vec<Vec<(u64, Ps)>>>,
    /// `link[(j * K + a) * K + b]`.
    link: Vec<LinkCost>,
    k: usize,
}

impl Tables {
    fn new(net: &Net, boards: &[Board]) -> Tables {
        let k = boards.len();
        let l = net.junctions();
        let time = (0..l)
            .map(|j| {
                boards
                    .iter()
                    .map(|b| {
                        net.z_options[j]
                            .iter()
                            .map(|&z| (z, junction_time(net, b, j, z)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let mut link = Vec::with_capacity(l * k * k);
        for j in 0..l {
            for a in boards {
                for b in boards {
                    link.push(LinkCost::new(net, j, a, b));
                }
            }
        }
        Tables { time, link, k }
    }

    fn link(&self, j: usize, a: usize, b: usize) -> &LinkCost {
        &self.link[(j * self.k + a) * self.k + b]
    }

    fn zmin(&self, j: usize, b: usize, p: Ps) -> Option<u64> {
        self.time[j][b]
            .iter()
            .find(|(_, t)| *t <= p)
            .map(|(z, _)| *z)
    }
}

/// A stage being grown junction by junction: the D-independent needs and the memory bits
/// added per block cycle of downstream delay.
struct Grow<'a> {
    net: &'a Net,
    board: &'a Board,
    need: Need,
    per_delay_bits: u64,
    /// Every junction added, in order, with its lanes.
    added: Vec<(usize, u64)>,
}

enum StageFit {
    /// Cannot fit even as the last stage: larger stages cannot either.
    Never,
    /// Fits with a right link when the downstream delay is at most this.
    UpTo(u64),
    /// Does not fit with a right link (may still fit as the last stage).
    NotWithLink,
}

impl<'a> Grow<'a> {
    fn add(&mut self, j: usize, z: u64) {
        let s0 = self.net.staleness(j, 0);
        let n = junction_need(self.net, self.board, j, z, s0);
        let n1 = junction_need(self.net, self.board, j, z, s0 + 2);
        self.per_delay_bits += n1.ram_bits - n.ram_bits;
        self.need += n;
        self.added.push((j, z));
    }

    /// The stage's block RAMs on a board that counts them per stage, with `delay` block
    /// cycles of downstream link delay.
    fn blocks(&self, left_link: bool, right_link: bool, delay: u64) -> Option<u64> {
        let stage: Vec<(usize, u64, u64)> = self
            .added
            .iter()
            .map(|&(j, z)| (j, z, self.net.staleness(j, delay)))
            .collect();
        stage_blocks(self.net, self.board, &stage, left_link, right_link)
    }

    /// The stage's needs with the links it has (no downstream delay).
    fn need(&self, left_link: bool, right_link: bool) -> Need {
        let mut need = self.need.with_link_multipliers(link_multipliers(
            self.net,
            self.board,
            self.added.first().copied().filter(|_| left_link),
            self.added.last().copied().filter(|_| right_link),
        ));
        if let Some(b) = self.blocks(left_link, right_link, 0) {
            need.ram_blocks = b;
        }
        need
    }

    fn fits_last(&self, left_link: bool) -> bool {
        Usage::new(
            self.net,
            self.board,
            &self.need(left_link, false),
            left_link as u64,
        )
        .fits()
    }

    fn with_link(&self, left_link: bool) -> StageFit {
        let u = Usage::new(
            self.net,
            self.board,
            &self.need(left_link, false),
            left_link as u64,
        );
        if !u.fits() {
            return StageFit::Never;
        }
        let u = Usage::new(
            self.net,
            self.board,
            &self.need(left_link, true),
            left_link as u64 + 1,
        );
        if !u.fits() {
            return StageFit::NotWithLink;
        }
        let spare = u.ram_bits_available - u.ram_bits;
        let by_bits = spare.checked_div(self.per_delay_bits).unwrap_or(u64::MAX);
        // blocks grow with the delay too (more copies in flight): the most delay they allow,
        // searched up to a bound no link of a real chain reaches
        let fits = |d: u64| {
            self.blocks(left_link, true, d)
                .map_or(true, |b| b <= u.ram_blocks_available)
        };
        let mut d = 0;
        while d < by_bits.min(MAX_SEARCHED_DELAY) && fits(d + 1) {
            d += 1;
        }
        StageFit::UpTo(if d == MAX_SEARCHED_DELAY { by_bits } else { d })
    }
}

/// The least downstream delay of a suffix and how it was reached.
#[derive(Clone, Copy, Debug)]
struct Cell {
    delay: u64,
    last: usize,
    /// Next state index (None: this stage ends the network).
    next: Option<(usize, usize)>,
}

/// Chain order: state (first junction, board).
fn feasible_chain(net: &Net, boards: &[Board], t: &Tables, p: Ps, every: bool) -> Option<Solution> {
    let l = net.junctions();
    let k = boards.len();
    let mut best: Vec<Option<Cell>> = vec![None; l * k];
    for j in (0..l).rev() {
        for b in 0..k {
            let mut g = Grow {
                net,
                board: &boards[b],
                need: Need::default(),
                per_delay_bits: 0,
                added: Vec::new(),
            };
            let mut cell: Option<Cell> = None;
            for r in j..l {
                let Some(z) = t.zmin(r, b, p) else { break };
                g.add(r, z);
                if r == l - 1 {
                    if g.fits_last(j > 0) && (!every || b + 1 == k) {
                        cell = Some(Cell {
                            delay: 0,
                            last: r,
                            next: None,
                        });
                    }
                    break;
                }
                let max_d = match g.with_link(j > 0) {
                    StageFit::Never => break,
                    StageFit::NotWithLink => continue,
                    StageFit::UpTo(d) => d,
                };
                let after = if every {
                    b + 1..(b + 2).min(k)
                } else {
                    b + 1..k
                };
                for nb in after {
                    let Some(next) = best[(r + 1) * k + nb] else {
                        continue;
                    };
                    let link = t.link(r, b, nb);
                    if link.transfer > p {
                        continue;
                    }
                    let d = link.delay(p) + next.delay;
                    if d <= max_d && cell.map_or(true, |c| d < c.delay) {
                        cell = Some(Cell {
                            delay: d,
                            last: r,
                            next: Some((r + 1, nb)),
                        });
                    }
                }
            }
            best[j * k + b] = cell;
        }
    }
    let starts = if every { 0..1 } else { 0..k };
    let start = starts.filter_map(|b| best[b].map(|c| (c.delay, b))).min()?;
    let mut stages = Vec::new();
    let mut z = vec![0; l];
    let mut at = Some((0, start.1));
    while let Some((j, b)) = at {
        let c = best[j * k + b].expect("reconstruction follows feasible cells");
        for (r, zr) in z.iter_mut().enumerate().take(c.last + 1).skip(j) {
            *zr = t.zmin(r, b, p).unwrap();
        }
        stages.push(StagePlan {
            board: b,
            first: j,
            last: c.last,
        });
        at = c.next;
    }
    Some(Solution {
        stages,
        z,
        period: p,
    })
}

/// Any order: boards grouped into identical kinds; state (first junction, kinds still
/// available, kind of this stage's board).
struct Kinds {
    /// Board indices of each kind.
    members: Vec<Vec<usize>>,
    /// Mixed-radix weights of the availability vector.
    radix: Vec<usize>,
    states: usize,
}

/// Most DP cells (junctions × availability vectors × board kinds) `--permute` handles;
/// identical boards share a kind, so many boards of few kinds stay small.
pub const MAX_PERMUTE_STATES: usize = 1 << 21;

impl Kinds {
    fn new(boards: &[Board]) -> Kinds {
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (i, b) in boards.iter().enumerate() {
            match members.iter_mut().find(|m| boards[m[0]] == *b) {
                Some(m) => m.push(i),
                None => members.push(vec![i]),
            }
        }
        let mut radix = Vec::new();
        let mut states = 1usize;
        for m in &members {
            radix.push(states);
            states = states.saturating_mul(m.len() + 1);
        }
        Kinds {
            members,
            radix,
            states,
        }
    }

    fn count(&self, avail: usize, kind: usize) -> usize {
        (avail / self.radix[kind]) % (self.members[kind].len() + 1)
    }
}

fn feasible_permute(
    net: &Net,
    boards: &[Board],
    t: &Tables,
    kinds: &Kinds,
    p: Ps,
) -> Option<Solution> {
    let l = net.junctions();
    let m = kinds.members.len();
    let rep: Vec<usize> = kinds.members.iter().map(|v| v[0]).collect();
    let idx = |j: usize, avail: usize, kind: usize| (j * kinds.states + avail) * m + kind;
    let mut best: Vec<Option<Cell>> = vec![None; l * kinds.states * m];
    for j in (0..l).rev() {
        for kind in 0..m {
            let b = rep[kind];
            // The stage's growth does not depend on availability: compute the per-r fits once.
            let mut g = Grow {
                net,
                board: &boards[b],
                need: Need::default(),
                per_delay_bits: 0,
                added: Vec::new(),
            };
            let mut fits: Vec<(usize, Option<u64>, bool)> = Vec::new(); // (r, max_d with link, fits as last)
            for r in j..l {
                let Some(z) = t.zmin(r, b, p) else { break };
                g.add(r, z);
                if r == l - 1 {
                    fits.push((r, None, g.fits_last(j > 0)));
                    break;
                }
                match g.with_link(j > 0) {
                    StageFit::Never => break,
                    StageFit::NotWithLink => {}
                    StageFit::UpTo(d) => fits.push((r, Some(d), false)),
                }
            }
            for avail in 0..kinds.states {
                // The stage's own board is not in `avail`: it must leave room for it.
                if kinds.count(avail, kind) + 1 > kinds.members[kind].len() {
                    continue;
                }
                let mut cell: Option<Cell> = None;
                for &(r, max_d, last_ok) in &fits {
                    if r == l - 1 {
                        if last_ok {
                            cell = Some(Cell {
                                delay: 0,
                                last: r,
                                next: None,
                            });
                        }
                        continue;
                    }
                    let max_d = max_d.unwrap();
                    for nk in 0..m {
                        if kinds.count(avail, nk) == 0 {
                            continue;
                        }
                        let next_avail = avail - kinds.radix[nk];
                        let Some(next) = best[idx(r + 1, next_avail, nk)] else {
                            continue;
                        };
                        let link = t.link(r, b, rep[nk]);
                        if link.transfer > p {
                            continue;
                        }
                        let d = link.delay(p) + next.delay;
                        if d <= max_d && cell.map_or(true, |c| d < c.delay) {
                            cell = Some(Cell {
                                delay: d,
                                last: r,
                                next: Some((next_avail, nk)),
                            });
                        }
                    }
                }
                best[idx(j, avail, kind)] = cell;
            }
        }
    }
    let full: usize = (0..m)
        .map(|k| kinds.members[k].len() * kinds.radix[k])
        .sum();
    let start = (0..m)
        .filter_map(|kind| {
            let avail = full - kinds.radix[kind];
            best[idx(0, avail, kind)].map(|c| (c.delay, avail, kind))
        })
        .min()?;
    let mut used = vec![0usize; m];
    let mut stages = Vec::new();
    let mut z = vec![0; l];
    let (mut j, mut at) = (0, Some((start.1, start.2)));
    while let Some((avail, kind)) = at {
        let c = best[idx(j, avail, kind)].expect("reconstruction follows feasible cells");
        let b = kinds.members[kind][used[kind]];
        used[kind] += 1;
        for (r, zr) in z.iter_mut().enumerate().take(c.last + 1).skip(j) {
            *zr = t.zmin(r, rep[kind], p).unwrap();
        }
        stages.push(StagePlan {
            board: b,
            first: j,
            last: c.last,
        });
        j = c.last + 1;
        at = c.next;
    }
    Some(Solution {
        stages,
        z,
        period: p,
    })
}

/// Every value the optimal period can take that is a block-cycle or link-transfer time,
/// plus each link's span (where its delay reaches 1), sorted and distinct.
fn time_candidates(net: &Net, t: &Tables, order: Order) -> Vec<Ps> {
    let mut c: Vec<Ps> = t.time.iter().flatten().flatten().map(|&(_, x)| x).collect();
    let l = net.junctions();
    for j in 0..l.saturating_sub(1) {
        for a in 0..t.k {
            for b in 0..t.k {
                if (order != Order::Permute && b <= a) || (order == Order::Permute && a == b) {
                    continue;
                }
                let link = t.link(j, a, b);
                c.push(link.transfer);
                c.push(link.span().max(1));
            }
        }
    }
    c.retain(|&x| x > 0);
    c.sort_unstable();
    c.dedup();
    c
}

/// Link spans, distinct, for the delay-step candidates.
fn spans(net: &Net, t: &Tables, order: Order) -> Vec<Ps> {
    let mut v = Vec::new();
    for j in 0..net.junctions().saturating_sub(1) {
        for a in 0..t.k {
            for b in 0..t.k {
                if (order != Order::Permute && b <= a) || (order == Order::Permute && a == b) {
                    continue;
                }
                v.push(t.link(j, a, b).span());
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Why no plan exists, or the inputs are unusable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    NoFit,
    TooManyStates(usize),
    NoBoards,
}

/// Smallest `p` in the sorted `cands` for which `f` holds (monotone), with its result.
fn search<T>(cands: &[Ps], mut f: impl FnMut(Ps) -> Option<T>) -> Option<(usize, T)> {
    let last = cands.len().checked_sub(1)?;
    let mut best = (last, f(cands[last])?);
    let (mut lo, mut hi) = (0usize, last);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match f(cands[mid]) {
            Some(s) => {
                best = (mid, s);
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    Some(best)
}

/// The smallest period `p` for which `feasible(p)` holds, over block-cycle, transfer and
/// delay-step candidates. `feasible` must be monotone in `p`.
pub fn minimize<T>(
    net: &Net,
    boards: &[Board],
    order: Order,
    mut feasible: impl FnMut(Ps) -> Option<T>,
) -> Option<(Ps, T)> {
    let t = Tables::new(net, boards);
    let cands = time_candidates(net, &t, order);
    let (i, sol) = search(&cands, &mut feasible)?;
    let hi = cands[i];
    if i == 0 {
        // every period is at least some junction's block-cycle time, and the smallest
        // candidate is the smallest of those: nothing below it is feasible (and the step
        // enumeration below would have no lower end)
        return Some((hi, sol));
    }
    let lo = cands[i - 1];
    // Between two time candidates only link delays change: try where they step down.
    let mut steps = Vec::new();
    for x in spans(net, &t, order) {
        if x == 0 {
            continue;
        }
        let mut k = x.div_ceil(hi).max(1);
        loop {
            let q = x.div_ceil(k);
            if q <= lo {
                break;
            }
            if q < hi {
                steps.push(q);
            }
            k += 1;
        }
    }
    steps.sort_unstable();
    steps.dedup();
    match search(&steps, &mut feasible) {
        Some((j, s)) => Some((steps[j], s)),
        None => Some((hi, sol)),
    }
}

/// The best plan: groups, boards and every `z`, maximizing samples/s.
pub fn optimize(net: &Net, boards: &[Board], order: Order) -> Result<Solution, PlanError> {
    if boards.is_empty() {
        return Err(PlanError::NoBoards);
    }
    let t = Tables::new(net, boards);
    match order {
        Order::Chain | Order::Every => minimize(net, boards, order, |p| {
            feasible_chain(net, boards, &t, p, order == Order::Every)
        }),
        Order::Permute => {
            let kinds = Kinds::new(boards);
            let cells = kinds
                .states
                .saturating_mul(net.junctions())
                .saturating_mul(kinds.members.len());
            if cells > MAX_PERMUTE_STATES {
                return Err(PlanError::TooManyStates(cells));
            }
            minimize(net, boards, order, |p| {
                feasible_permute(net, boards, &t, &kinds, p)
            })
        }
    }
    .map(|(_, s)| s)
    .ok_or(PlanError::NoFit)
}

/// The best plan with the groups fixed (boards in the given order): each junction's `z` and
/// the period. Used by the baselines.
pub fn optimize_fixed(net: &Net, boards: &[Board], stages: &[StagePlan]) -> Option<Solution> {
    let t = Tables::new(net, boards);
    let feasible = |p: Ps| {
        let mut z = vec![0; net.junctions()];
        for st in stages {
            for (j, zj) in z.iter_mut().enumerate().take(st.last + 1).skip(st.first) {
                *zj = t.zmin(j, st.board, p)?;
            }
        }
        evaluate(net, boards, stages, &z, p).feasible.then_some(z)
    };
    minimize(net, boards, Order::Permute, feasible).map(|(p, z)| Solution {
        stages: stages.to_vec(),
        z,
        period: p,
    })
}
