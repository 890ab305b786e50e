//! How short a block cycle could be if block cycles overlapped, on the one-board schedule and
//! with the same bits (docs/design.md, "Why not `C`").
//!
//! A block cycle of `P` clocks in which junction `j` starts its passes `φ_j` clocks in is
//! exact only if every value a pass needs from the previous block cycle has landed:
//! - FF of junction `j+1` reads a left neuron in block cycle `t+1` that FF of junction `j`
//!   wrote in `t`: the write lands `λ_ff` clocks (the block cycle's overhead) after the
//!   neuron's last edge;
//! - BP/UP of junction `j` reads, in `t+1`, the delta sum of a right neuron that BP of
//!   junction `j+1` completed in `t`: its last contribution lands `λ_bp` clocks after its edge;
//! - BP/UP of the last junction reads, in `t+1`, the output delta its own FF wrote in `t`.
//!
//! For neighbours the first two give `φ_{j+1} − φ_j ≥ A_j − P` and `φ_j − φ_{j+1} ≥ B_j − P`,
//! so `2P ≥ A_j + B_j`, with `A_j` and `B_j` taken over the edge order of the two passes.
//! Every junction also needs `P ≥ C_j` for its own pass. Clearing the delta buffers and
//! writing weights back add conditions of their own; left out, they can only lower the
//! figure, so it is a bound no overlapping schedule goes below.

use crate::pattern::JunctionPattern;
use crate::spec::Spec;
use serde::Serialize;

/// The least block cycle of a spec with overlapped block cycles, and what sets it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct OverlapBound {
    /// The least block cycle, in clocks.
    pub clocks: usize,
    /// `A_j + B_j` of each pair of neighbouring junctions (`j`, `j+1`), 0-based by `j`.
    pub neighbours: Vec<usize>,
    /// The last junction's own condition: its FF's output delta, read by its BP.
    pub output: usize,
}

/// The clocks from an FF pass's edge to the landing of the right-layer value it finishes, and
/// from a BP edge to the landing of its contribution to a left delta sum
/// (hdl/src/datapath/junction/mod.rs, "Timing").
fn latencies(spec: &Spec) -> (usize, usize) {
    let rr = spec.registered_reads as usize;
    let deep = spec.deep_pipeline as usize;
    (spec.block_cycle_overhead(), 1 + rr + deep)
}

/// The clock of a pass at which each edge of junction pattern `p` is handled.
fn clock_of(p: &JunctionPattern, e: usize) -> usize {
    e / p.z
}

/// Per right neuron: the first and the last clock of its edges (consecutive in edge order).
fn right_span(p: &JunctionPattern) -> Vec<(usize, usize)> {
    (0..p.right)
        .map(|r| {
            let first = r * p.fan_in;
            (clock_of(p, first), clock_of(p, first + p.fan_in - 1))
        })
        .collect()
}

/// Per left neuron: the first and the last clock that reaches it.
fn left_span(p: &JunctionPattern) -> Vec<(usize, usize)> {
    let mut span = vec![(usize::MAX, 0); p.left];
    for (e, &m) in p.left_of_edge.iter().enumerate() {
        let c = clock_of(p, e);
        let s = &mut span[m as usize];
        s.0 = s.0.min(c);
        s.1 = s.1.max(c);
    }
    span
}

/// The most, over the neurons between two junctions, of `late(right span in the junction to
/// the left, left span in the junction to the right)`.
fn most_late(
    right: &[(usize, usize)],
    left: &[(usize, usize)],
    late: impl Fn(&(usize, usize), &(usize, usize)) -> usize,
) -> usize {
    right
        .iter()
        .zip(left)
        .map(|(r, l)| late(r, l))
        .max()
        .unwrap_or(0)
}

impl OverlapBound {
    pub fn of(spec: &Spec) -> OverlapBound {
        let (ff, bp) = latencies(spec);
        let pats = JunctionPattern::all(spec);
        let neighbours = pats
            .windows(2)
            .map(|w| {
                let (right, left) = (right_span(&w[0]), left_span(&w[1]));
                // a value is readable from the clock after it lands: FF's from the right
                // neuron's last edge to junction j+1's first read, BP's from the left neuron's
                // last contribution to junction j's first read of that delta sum
                most_late(&right, &left, |r, l| (r.1 + ff + 1).saturating_sub(l.0))
                    + most_late(&right, &left, |r, l| (l.1 + bp + 1).saturating_sub(r.0))
            })
            .collect::<Vec<_>>();
        let last = pats.last().expect("a spec has a junction");
        let output = right_span(last)
            .iter()
            .map(|r| r.1 + ff + 1 - r.0)
            .max()
            .unwrap_or(0);
        let clocks = neighbours
            .iter()
            .map(|s| s.div_ceil(2))
            .chain([spec.max_pass_clocks(), output])
            .max()
            .unwrap_or(1);
        OverlapBound {
            clocks,
            neighbours,
            output,
        }
    }
}

#[cfg(test)]
#[path = "overlap_tests.rs"]
mod tests;
