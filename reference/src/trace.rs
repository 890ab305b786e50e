//! Where a fixed-point network loses what float keeps, per junction: FF products outside the
//! format's range (what `ff_products = "saturated"` would clip), pre-activations that
//! saturate, and weight updates smaller than half a step of the format (nearest rounding
//! drops them; stochastic rounding keeps them only on average). Measured by a plain
//! forward and backward pass over a few samples with a state's weights, nothing updated;
//! `edgeflow train --trace` prints it after every epoch.

use edgeflow_core::fixed::{activate, hidden_delta, output_delta};
use edgeflow_core::{Encoded, JunctionPattern, Spec, State};
use serde::Serialize;

/// One junction's measurements, each a fraction of its kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct JunctionTrace {
    /// 1-based junction number.
    pub junction: usize,
    /// FF products `w·a` (rounded) outside the format's range.
    pub ff_products_outside: f64,
    /// Right neurons whose pre-activation sum saturated.
    pub sums_saturated: f64,
    /// Edges with a nonzero `δ·a` whose exact update `δ·a·η` is below half a step.
    pub updates_below_half_step: f64,
    /// Weights at either end of the format's range.
    pub weights_at_range_ends: f64,
}

/// The measurements of `state` on the first `samples` samples of `data`.
pub fn trace(spec: &Spec, state: &State, data: &Encoded, samples: usize) -> Vec<JunctionTrace> {
    let f = spec.format();
    let patterns = JunctionPattern::all(spec);
    let l = spec.junctions();
    let ends = spec.output_delta_ends();
    // counts per junction: products outside, sums saturated, small updates, nonzero updates
    let mut counts = vec![[0u64; 4]; l];
    let n = samples.min(data.len());
    // an update below half a step: |δ·a| · 2^-(frac + shift) < 1/2
    let half_step = 1i64 << (f.frac_bits + spec.learning_rate_shift).saturating_sub(1);
    for s in 0..n {
        let mut a: Vec<Vec<i32>> = vec![data.input(s).to_vec()];
        let mut sp: Vec<Vec<i32>> = vec![vec![]];
        for (j, p) in patterns.iter().enumerate() {
            let table = spec.activation_table(j + 1);
            let (mut out, mut sps) = (Vec::new(), Vec::new());
            for r in 0..p.right {
                let mut acc = state.biases[j][r] as i64;
                for e in r * p.fan_in..(r + 1) * p.fan_in {
                    let x = a[j][p.left_of_edge[e] as usize];
                    let prod = f.mul_rounded(state.weights[j][e], x);
                    counts[j][0] += (prod < f.min() || prod > f.max()) as u64;
                    acc += f.ff_product(spec.ff_products, state.weights[j][e], x) as i64;
                }
                let h = f.saturate(acc);
                counts[j][1] += (h as i64 != acc) as u64;
                let (av, spv) = activate(&table, h);
                out.push(av);
                sps.push(spv);
            }
            a.push(out);
            sp.push(sps);
        }
        let label = data.labels[s];
        let mut d: Vec<i32> = a[l]
            .iter()
            .enumerate()
            .map(|(k, &x)| output_delta(f, ends, x, k == label))
            .collect();
        for j in (0..l).rev() {
            let p = &patterns[j];
            let mut sums = vec![0i64; p.left];
            for e in 0..p.edges() {
                let (r, k) = (e / p.fan_in, p.left_of_edge[e] as usize);
                let exact = d[r] as i64 * a[j][k] as i64;
                if exact != 0 {
                    counts[j][3] += 1;
                    counts[j][2] += (exact.abs() < half_step) as u64;
                }
                sums[k] += f.mul(state.weights[j][e], d[r]) as i64;
            }
            if j > 0 {
                d = sums
                    .iter()
                    .zip(&sp[j])
                    .map(|(&s, &g)| hidden_delta(spec.activation, f, g, f.saturate(s)))
                    .collect();
            }
        }
    }
    let frac = |x: u64, of: u64| if of == 0 { 0.0 } else { x as f64 / of as f64 };
    (0..l)
        .map(|j| {
            let p = &patterns[j];
            let w = &state.weights[j];
            let at_ends = w.iter().filter(|&&x| x == f.min() || x == f.max()).count();
            JunctionTrace {
                junction: j + 1,
                ff_products_outside: frac(counts[j][0], (n * p.edges()) as u64),
                sums_saturated: frac(counts[j][1], (n * p.right) as u64),
                updates_below_half_step: frac(counts[j][2], counts[j][3]),
                weights_at_range_ends: frac(at_ends as u64, w.len() as u64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ReLU junctions at Q2.7 (±4) with every weight set by hand.
    fn spec() -> Spec {
        Spec::from_toml_str(
            "name='t'\nlayers=[2,2,2]\nfan_out=[2,2]\nz=[2,2]\nactivation='relu'\nlearning_rate_shift=2\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type1'\n",
            "t",
        )
        .unwrap()
    }

    #[test]
    fn counts_what_leaves_the_range_by_hand() {
        let sp = spec();
        let mut st = State::initial(&sp);
        // junction 1: w = 3.0, inputs 1.0: products 3.0 (inside ±4), sums 6.0 (saturate to
        // 511/128); junction 2: w = 2.0 times 511/128: products 1022 raw (outside), sums too
        st.weights[0].fill(384);
        st.weights[1].fill(256);
        st.biases[0].fill(0);
        st.biases[1].fill(0);
        let data = Encoded {
            inputs_per_sample: 2,
            inputs: vec![128, 128],
            labels: vec![0],
        };
        let t = trace(&sp, &st, &data, 10);
        assert_eq!(t[0].ff_products_outside, 0.0);
        assert_eq!(t[0].sums_saturated, 1.0);
        assert_eq!(t[1].ff_products_outside, 1.0);
        assert_eq!(t[1].sums_saturated, 1.0);
        assert_eq!(t[0].weights_at_range_ends, 0.0);
        // outputs sit at σ(max) for both classes: class 0 (the label) is clipped there, class
        // 1 gets δ = σ(max) ≈ 1: δ·a = 127·511 raw is far above half a step (2^8)
        assert_eq!(t[1].updates_below_half_step, 0.0);
        // the ReLU gate is shut at the saturated hidden sums: no delta reaches junction 1
        assert_eq!(t[0].updates_below_half_step, 0.0);
    }

    #[test]
    fn small_updates_are_counted() {
        let sp = spec();
        let mut st = State::initial(&sp);
        st.weights[0].fill(0);
        st.biases[0].fill(1); // hidden activations 1/128, tiny
        st.weights[1].fill(0);
        st.biases[1].fill(0);
        let data = Encoded {
            inputs_per_sample: 2,
            inputs: vec![0, 0],
            labels: vec![0],
        };
        // outputs σ(0) = 1/2: δ = ±64 raw; δ·a = ±64 < 2^(7+2−1) = 256 on all 4 edges
        let t = trace(&sp, &st, &data, 1);
        assert_eq!(t[1].updates_below_half_step, 1.0);
        st.biases[0].fill(4); // a = 4 raw: |δ·a| = 256, exactly half a step, not below
        let t = trace(&sp, &st, &data, 1);
        assert_eq!(t[1].updates_below_half_step, 0.0);
    }
}
