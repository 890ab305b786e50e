//! Exhaustive search: every split into groups, every assignment of boards to the groups and
//! every `z` of every junction, each at its own smallest period ([`min_period_for`]). Only
//! for small instances; the tests hold the planner to it.

use crate::catalog::Board;
use crate::cost::{Net, Ps};
use crate::dp::{min_period_for, Order, StagePlan};

/// The smallest period any assignment reaches, or `None` when nothing fits.
pub fn best_period(net: &Net, boards: &[Board], order: Order) -> Option<Ps> {
    let l = net.junctions();
    let mut best: Option<Ps> = None;
    // Every split: bit c of `cuts` set = a cut after junction c.
    for cuts in 0u64..(1u64 << (l - 1)) {
        let mut groups = Vec::new();
        let mut first = 0;
        for c in 0..l {
            if c == l - 1 || cuts & (1 << c) != 0 {
                groups.push((first, c));
                first = c + 1;
            }
        }
        if groups.len() > boards.len() || (order == Order::Every && groups.len() != boards.len()) {
            continue;
        }
        let mut chosen = Vec::new();
        assign(net, boards, order, &groups, &mut chosen, &mut best);
    }
    best
}

fn assign(
    net: &Net,
    boards: &[Board],
    order: Order,
    groups: &[(usize, usize)],
    chosen: &mut Vec<usize>,
    best: &mut Option<Ps>,
) {
    if chosen.len() == groups.len() {
        let stages: Vec<StagePlan> = groups
            .iter()
            .zip(chosen.iter())
            .map(|(&(f, l), &b)| StagePlan {
                board: b,
                first: f,
                last: l,
            })
            .collect();
        let mut z = vec![0; net.junctions()];
        every_z(net, boards, &stages, 0, &mut z, best);
        return;
    }
    for b in 0..boards.len() {
        let ok = match order {
            Order::Chain => chosen.last().map_or(true, |&p| b > p),
            Order::Every => b == chosen.len(),
            Order::Permute => !chosen.contains(&b),
        };
        if ok {
            chosen.push(b);
            assign(net, boards, order, groups, chosen, best);
            chosen.pop();
        }
    }
}

fn every_z(
    net: &Net,
    boards: &[Board],
    stages: &[StagePlan],
    j: usize,
    z: &mut Vec<u64>,
    best: &mut Option<Ps>,
) {
    if j == net.junctions() {
        if let Some(p) = min_period_for(net, boards, stages, z) {
            if best.map_or(true, |b| p < b) {
                *best = Some(p);
            }
        }
        return;
    }
    for &zj in &net.z_options[j] {
        z[j] = zj;
        every_z(net, boards, stages, j + 1, z, best);
    }
}
