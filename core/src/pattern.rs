//! Clash-free connection patterns (docs/design.md, "Edge order and clash-free patterns"),
//! generated in this one place.
//!
//! Edges of a junction are in right-neuron-major order; they split into `fan_out` sweeps of
//! `left` consecutive edges, each reaching every left neuron once. In sweep `s`, position
//! `j` has lane `l = j mod z` and in-sweep clock `r = j / z`, and reaches left neuron
//! `z·row_s(l, r) + bank_s(l)`: the `z` lanes of a clock always hit `z` different banks.

use crate::rng::SplitMix64;
use crate::spec::{PatternKind, Spec};
use serde::Serialize;

/// The pattern of one junction: its generating state (what the RTL's address generators
/// hold) and the resulting index table (what the reference model and kernels read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JunctionPattern {
    pub left: usize,
    pub right: usize,
    pub fan_out: usize,
    pub fan_in: usize,
    pub z: usize,
    pub kind: PatternKind,
    pub dither: bool,
    /// `bank[s][l]`: the bank lane `l` reads in sweep `s` (the same for all sweeps without dither).
    pub bank: Vec<Vec<usize>>,
    /// `start[s][l]` for types 2 and 3 (type 3: every sweep the same); empty for type 1.
    pub start: Vec<Vec<usize>>,
    /// `rows[s][l][r]` for type 1; empty for types 2 and 3.
    pub rows: Vec<Vec<Vec<usize>>>,
    /// Left neuron of every edge, in edge order: the index table.
    pub left_of_edge: Vec<u32>,
}

/// Everything about one edge, as `edgeflow pattern` prints it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct EdgeInfo {
    pub edge: usize,
    pub right: usize,
    pub left: usize,
    pub sweep: usize,
    pub clock: usize,
    pub lane: usize,
    pub bank: usize,
    pub row: usize,
}

impl JunctionPattern {
    /// Pattern of junction `j` (0-based) of a validated spec.
    pub fn generate(spec: &Spec, j: usize) -> JunctionPattern {
        let left = spec.layers[j];
        let right = spec.layers[j + 1];
        let fan_out = spec.fan_out[j];
        let z = spec.z[j];
        let kind = spec.pattern.kind;
        let dither = spec.pattern.dither;
        let rows_per_bank = left / z;
        let mut rng = SplitMix64::derive(spec.pattern.seed, "pattern", j as u64);
        let first_bank = rng.permutation(z);
        let bank: Vec<Vec<usize>> = (0..fan_out)
            .map(|s| {
                if dither && s > 0 {
                    rng.permutation(z)
                } else {
                    first_bank.clone()
                }
            })
            .collect();
        let (start, rows) = match kind {
            PatternKind::Type1 => {
                let rows = (0..fan_out)
                    .map(|_| (0..z).map(|_| rng.permutation(rows_per_bank)).collect())
                    .collect();
                (Vec::new(), rows)
            }
            PatternKind::Type2 => {
                let start = (0..fan_out)
                    .map(|_| (0..z).map(|_| rng.below(rows_per_bank)).collect())
                    .collect();
                (start, Vec::new())
            }
            PatternKind::Type3 => {
                let one: Vec<usize> = (0..z).map(|_| rng.below(rows_per_bank)).collect();
                (vec![one; fan_out], Vec::new())
            }
        };
        let mut p = JunctionPattern {
            left,
            right,
            fan_out,
            fan_in: left * fan_out / right,
            z,
            kind,
            dither,
            bank,
            start,
            rows,
            left_of_edge: Vec::new(),
        };
        p.left_of_edge = (0..left * fan_out).map(|e| p.edge(e).left as u32).collect();
        p
    }

    /// All junctions of a spec.
    pub fn all(spec: &Spec) -> Vec<JunctionPattern> {
        (0..spec.junctions())
            .map(|j| JunctionPattern::generate(spec, j))
            .collect()
    }

    pub fn edges(&self) -> usize {
        self.left * self.fan_out
    }

    /// Clocks of one pass over the edges.
    pub fn clocks(&self) -> usize {
        self.edges() / self.z
    }

    /// Row schedule `row_s(l, r)`.
    pub fn row(&self, s: usize, l: usize, r: usize) -> usize {
        match self.kind {
            PatternKind::Type1 => self.rows[s][l][r],
            PatternKind::Type2 | PatternKind::Type3 => {
                (self.start[s][l] + r) % (self.left / self.z)
            }
        }
    }

    pub fn edge(&self, e: usize) -> EdgeInfo {
        let s = e / self.left;
        let j = e % self.left;
        let lane = j % self.z;
        let r = j / self.z;
        let row = self.row(s, lane, r);
        let bank = self.bank[s][lane];
        EdgeInfo {
            edge: e,
            right: e / self.fan_in,
            left: self.z * row + bank,
            sweep: s,
            clock: e / self.z,
            lane,
            bank,
            row,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::Activation;
    use crate::spec::{FixedSpec, PatternSpec};
    use proptest::prelude::*;

    fn divisors(n: usize) -> Vec<usize> {
        (1..=n).filter(|d| n % d == 0).collect()
    }

    /// A random valid one-junction spec: picks left, a fan-in dividing it, a right size
    /// compatible with them, and a z nesting with the fan-in.
    fn arb_spec() -> impl Strategy<Value = Spec> {
        (
            1usize..=48,
            any::<u64>(),
            0usize..3,
            any::<bool>(),
            any::<u64>(),
        )
            .prop_map(|(left, pick, kind, dither, seed)| {
                let fis = divisors(left);
                let fi = fis[(pick % fis.len() as u64) as usize];
                // right * fi = left * fo with 1 ≤ fo ≤ right: choose fo from divisors-friendly set
                let fos: Vec<usize> = (1..=64)
                    .filter(|&fo| (left * fo) % fi == 0 && left * fo / fi >= fo)
                    .collect();
                let fo = fos[((pick >> 16) % fos.len() as u64) as usize];
                let right = left * fo / fi;
                let zs: Vec<usize> = divisors(left)
                    .into_iter()
                    .filter(|&d| fi % d == 0 || d % fi == 0)
                    .collect();
                let z = zs[((pick >> 32) % zs.len() as u64) as usize];
                Spec {
                    name: "p".into(),
                    layers: vec![left, right],
                    fan_out: vec![fo],
                    z: vec![z],
                    fixed: FixedSpec {
                        width: 10,
                        int_bits: 2,
                        frac_bits: 7,
                    },
                    activation: Activation::Sigmoid,
                    learning_rate_shift: 3,
                    output_delta: Default::default(),
                    relu_gate: Default::default(),
                    ff_products: Default::default(),
                    rounding: None,
                    input_bits: None,
                    pattern: PatternSpec {
                        kind: [PatternKind::Type1, PatternKind::Type2, PatternKind::Type3][kind],
                        dither,
                        seed,
                    },
                    seed: 0,
                    registered_reads: false,
                    deep_pipeline: false,
                    dsp_multipliers: None,
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]
        #[test]
        fn patterns_are_regular_and_clash_free(spec in arb_spec()) {
            spec.validate("random").unwrap();
            let p = JunctionPattern::generate(&spec, 0);
            let (left, right, fo, fi, z) = (p.left, p.right, p.fan_out, p.fan_in, p.z);
            prop_assert_eq!(p.edges(), right * fi);
            let mut out_degree = vec![0usize; left];
            for e in 0..p.edges() {
                out_degree[p.left_of_edge[e] as usize] += 1;
            }
            prop_assert!(out_degree.iter().all(|&d| d == fo), "every left neuron has fo edges");
            for n in 0..right {
                let mut ls: Vec<u32> = p.left_of_edge[n * fi..(n + 1) * fi].to_vec();
                ls.sort();
                ls.dedup();
                prop_assert_eq!(ls.len(), fi, "right neuron {} has fi distinct left neurons", n);
            }
            for c in 0..p.clocks() {
                let mut banks: Vec<usize> = (0..z).map(|l| p.left_of_edge[c * z + l] as usize % z).collect();
                banks.sort();
                banks.dedup();
                prop_assert_eq!(banks.len(), z, "clock {} reaches z distinct banks", c);
            }
            for e in 0..p.edges() {
                let info = p.edge(e);
                prop_assert_eq!(info.left as u32, p.left_of_edge[e]);
                prop_assert_eq!(info.bank, info.left % z);
                prop_assert_eq!(info.row, info.left / z);
            }
        }
    }

    #[test]
    fn type3_without_dither_repeats_each_sweep_rotation() {
        let mut spec = arb_spec_fixed();
        spec.pattern.kind = PatternKind::Type3;
        spec.pattern.dither = false;
        let p = JunctionPattern::generate(&spec, 0);
        assert!(p.start.windows(2).all(|w| w[0] == w[1]));
        assert!(p.bank.windows(2).all(|w| w[0] == w[1]));
        spec.pattern.dither = true;
        let p = JunctionPattern::generate(&spec, 0);
        assert!(p.bank.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn seed_changes_pattern_and_is_deterministic() {
        let spec = arb_spec_fixed();
        let a = JunctionPattern::generate(&spec, 0);
        assert_eq!(a, JunctionPattern::generate(&spec, 0));
        let mut s2 = spec.clone();
        s2.pattern.seed += 1;
        assert_ne!(
            a.left_of_edge,
            JunctionPattern::generate(&s2, 0).left_of_edge
        );
    }

    fn arb_spec_fixed() -> Spec {
        Spec {
            name: "f".into(),
            layers: vec![64, 32],
            fan_out: vec![8],
            z: vec![8],
            fixed: FixedSpec {
                width: 10,
                int_bits: 2,
                frac_bits: 7,
            },
            activation: Activation::Sigmoid,
            learning_rate_shift: 3,
            output_delta: Default::default(),
            relu_gate: Default::default(),
            ff_products: Default::default(),
            rounding: None,
            input_bits: None,
            pattern: PatternSpec {
                kind: PatternKind::Type2,
                dither: true,
                seed: 3,
            },
            seed: 0,
            registered_reads: false,
            deep_pipeline: false,
            dsp_multipliers: None,
        }
    }
}
