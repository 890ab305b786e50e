use super::*;
use crate::rng::SplitMix64;
use crate::spec::PatternKind;
use std::path::Path;

fn bundled(name: &str) -> Spec {
    Spec::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../specs/{name}.toml")))
        .unwrap()
}

/// A random valid spec of two or three junctions with small passes, found by drawing sizes
/// until one validates.
fn random_spec(rng: &mut SplitMix64) -> Spec {
    let mut spec = bundled("tiny");
    loop {
        let l = 2 + rng.below(2);
        let layers: Vec<usize> = (0..=l).map(|_| [4, 8, 12, 16, 24][rng.below(5)]).collect();
        let fan_out: Vec<usize> = (0..l).map(|j| 1 + rng.below(layers[j + 1])).collect();
        let z: Vec<usize> = (0..l).map(|_| [1, 2, 4, 8][rng.below(4)]).collect();
        spec.layers = layers;
        spec.fan_out = fan_out;
        spec.z = z;
        spec.pattern.kind =
            [PatternKind::Type1, PatternKind::Type2, PatternKind::Type3][rng.below(3)];
        spec.pattern.dither = rng.below(2) == 1;
        spec.pattern.seed = rng.next_u64();
        spec.registered_reads = rng.below(2) == 1;
        spec.deep_pipeline = spec.registered_reads && rng.below(2) == 1;
        if spec.validate("random").is_ok() {
            return spec;
        }
    }
}

/// The least block cycle by brute force: every pair of edges whose values pass from one
/// block cycle to the next gives a condition on the phase difference of their junctions, and
/// block cycles and phase differences are tried in turn until all hold.
fn brute_force(spec: &Spec) -> usize {
    let (ff, bp) = (
        spec.block_cycle_overhead(),
        1 + spec.registered_reads as usize + spec.deep_pipeline as usize,
    );
    let pats = JunctionPattern::all(spec);
    let right = |p: &JunctionPattern, e: usize| e / p.fan_in;
    let left = |p: &JunctionPattern, e: usize| p.left_of_edge[e] as usize;
    // `(a, b)` per pair: `D ≥ a − P` and `−D ≥ b − P` for `D = φ_{j+1} − φ_j`
    let mut conditions = vec![];
    for w in pats.windows(2) {
        let (p, q) = (&w[0], &w[1]);
        let (mut a, mut b) = (i64::MIN, i64::MIN);
        for e1 in 0..p.edges() {
            for e2 in 0..q.edges() {
                if right(p, e1) == left(q, e2) {
                    let (c1, c2) = ((e1 / p.z) as i64, (e2 / q.z) as i64);
                    a = a.max(c1 + ff as i64 + 1 - c2);
                    b = b.max(c2 + bp as i64 + 1 - c1);
                }
            }
        }
        conditions.push((a, b));
    }
    let last = pats.last().unwrap();
    let mut output = 0i64;
    for e in 0..last.edges() {
        for e2 in 0..last.edges() {
            if right(last, e) == right(last, e2) {
                output = output.max((e2 / last.z) as i64 + ff as i64 + 1 - (e / last.z) as i64);
            }
        }
    }
    (1..)
        .find(|&p: &usize| {
            let p = p as i64;
            p >= spec.max_pass_clocks() as i64
                && p >= output
                && conditions
                    .iter()
                    .all(|&(a, b)| (-2 * p..=2 * p).any(|d| d >= a - p && -d >= b - p))
        })
        .unwrap()
}

#[test]
fn the_bound_is_the_brute_force_search_and_todays_schedule_meets_it() {
    let mut rng = SplitMix64::new(7);
    for _ in 0..300 {
        let spec = random_spec(&mut rng);
        let bound = OverlapBound::of(&spec);
        assert_eq!(bound.clocks, brute_force(&spec), "{spec:?}");
        assert!(bound.clocks >= spec.max_pass_clocks());
        // the schedule the hardware runs (every junction at clock 0, no overlap) is one of
        // those the bound covers
        assert!(bound.clocks <= spec.block_cycle_clocks(), "{spec:?}");
    }
}

#[test]
fn published_design_cannot_reach_its_longest_pass() {
    // Both passes take 32 clocks. Junction 2 (z = 32) reads all 64 neurons of layer 1 in
    // each 2-clock sweep, so some neuron finished in junction 1's last clock (31, landing
    // at 33, readable at 34) is read at clock 0 or 1: A ≥ 33. Junction 1 (z = 128, two
    // neurons a clock) needs layer 1's first delta sums at clock 0, and junction 2's last
    // sweep (clocks 30 and 31) reaches every neuron, whose contribution lands a clock later:
    // B ≥ 30 + 1 + 1. So 2P ≥ 65.
    let spec = bundled("dey-mnist");
    assert_eq!(spec.max_pass_clocks(), 32);
    let bound = OverlapBound::of(&spec);
    assert!(bound.neighbours[0] >= 65, "{bound:?}");
    assert!(bound.clocks >= 33, "{bound:?}");
}

#[test]
fn a_short_neighbour_leaves_room_for_the_longest_pass() {
    // digits: passes of 640 and 160 clocks; A ≤ 640 + 2 + 1 and B ≤ 160 + 1 + 1
    let spec = bundled("digits");
    let bound = OverlapBound::of(&spec);
    assert_eq!(spec.max_pass_clocks(), 640);
    assert_eq!(bound.clocks, 640, "{bound:?}");
    assert_eq!(spec.block_cycle_clocks(), 642);
}
