//! Dense float baseline: a fully connected network of the spec's layer sizes (sigmoid,
//! sigmoid + cross-entropy output, ordinary SGD with batch 1, `f32`, one core), written for
//! speed. It answers "how fast is the CPU I already have on the dense network", the baseline
//! a sparse accelerator is measured against; it shares nothing with the fixed-point model.
//!
//! Weights are row-major per junction (`w[r·left + k]`: right neuron `r`, left neuron `k`), so
//! feed-forward is one dot product per right neuron and back-propagation plus update is one
//! pass of two `axpy`s per right neuron over contiguous memory, which the compiler vectorizes.

use edgeflow_core::rng::SplitMix64;
use edgeflow_core::{Encoded, Spec};

#[derive(Clone, Debug)]
pub struct DenseReference {
    pub layers: Vec<usize>,
    /// `weights[j][r * left + k]`.
    pub weights: Vec<Vec<f32>>,
    pub biases: Vec<Vec<f32>>,
    pub eta: f32,
    /// Activations of every layer of the sample in flight.
    a: Vec<Vec<f32>>,
    /// Deltas of every layer (index 0 unused).
    delta: Vec<Vec<f32>>,
    /// Input scale: raw fixed-point inputs times this are the real inputs.
    input_scale: f32,
}

#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Dot product with 8 independent partial sums, so the additions vectorize.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = [0f32; 8];
    let (ac, ar) = a.split_at(a.len() / 8 * 8);
    let (bc, br) = b.split_at(ac.len());
    for (x, y) in ac.chunks_exact(8).zip(bc.chunks_exact(8)) {
        for i in 0..8 {
            s[i] += x[i] * y[i];
        }
    }
    let mut t: f32 = s.iter().sum();
    for (x, y) in ar.iter().zip(br) {
        t += x * y;
    }
    t
}

/// Multiply-accumulates per training sample of the fully connected network of these layer
/// sizes: FF and UP on every weight, BP on the weights of every junction but the first.
pub fn dense_edge_ops(layers: &[usize]) -> u64 {
    layers
        .windows(2)
        .enumerate()
        .map(|(j, w)| (w[0] * w[1]) as u64 * if j > 0 { 3 } else { 2 })
        .sum()
}

impl DenseReference {
    /// Glorot-uniform initial weights from the spec's weight seed, zero biases; the learning
    /// rate is the spec's `2^-learning_rate_shift`.
    pub fn new(spec: &Spec) -> DenseReference {
        let l = spec.junctions();
        let mut weights = Vec::with_capacity(l);
        for j in 0..l {
            let (left, right) = (spec.layers[j], spec.layers[j + 1]);
            let limit = (6.0 / (left + right) as f64).sqrt();
            let mut rng = SplitMix64::derive(spec.seed, "dense-weights", j as u64);
            weights.push(
                (0..left * right)
                    .map(|_| ((rng.next_f64() * 2.0 - 1.0) * limit) as f32)
                    .collect(),
            );
        }
        DenseReference {
            layers: spec.layers.clone(),
            weights,
            biases: spec.layers[1..].iter().map(|&n| vec![0.0; n]).collect(),
            eta: 0.5f32.powi(spec.learning_rate_shift as i32),
            a: spec.layers.iter().map(|&n| vec![0.0; n]).collect(),
            delta: spec.layers.iter().map(|&n| vec![0.0; n]).collect(),
            input_scale: 1.0 / (1u64 << spec.fixed.frac_bits) as f32,
        }
    }

    /// Multiply-accumulates per training sample: FF, BP (not into the inputs) and UP over
    /// every weight; the dense counterpart of the sparse edge-op count.
    pub fn edge_ops_per_sample(&self) -> u64 {
        dense_edge_ops(&self.layers)
    }

    fn load_input(&mut self, input: &[i32]) {
        let s = self.input_scale;
        for (x, &v) in self.a[0].iter_mut().zip(input) {
            *x = v as f32 * s;
        }
    }

    fn forward(&mut self) {
        for j in 0..self.weights.len() {
            let left = self.layers[j];
            let (lo, hi) = self.a.split_at_mut(j + 1);
            let (a_in, a_out) = (&lo[j], &mut hi[0]);
            for ((o, row), &b) in a_out
                .iter_mut()
                .zip(self.weights[j].chunks_exact(left))
                .zip(&self.biases[j])
            {
                *o = sigmoid(b + dot(row, a_in));
            }
        }
    }

    /// One SGD step on one sample (cross-entropy loss on sigmoid outputs, one-hot label).
    pub fn step(&mut self, input: &[i32], label: usize) {
        self.load_input(input);
        self.forward();
        let l = self.weights.len();
        for (k, (d, &a)) in self.delta[l].iter_mut().zip(&self.a[l]).enumerate() {
            *d = a - if k == label { 1.0 } else { 0.0 };
        }
        let eta = self.eta;
        for j in (0..l).rev() {
            let left = self.layers[j];
            let (dlo, dhi) = self.delta.split_at_mut(j + 1);
            let (d_left, d) = (&mut dlo[j], &dhi[0]);
            let a_left = &self.a[j];
            let back = j > 0;
            if back {
                d_left.fill(0.0);
            }
            for ((row, &dr), b) in self.weights[j]
                .chunks_exact_mut(left)
                .zip(d.iter())
                .zip(self.biases[j].iter_mut())
            {
                let g = eta * dr;
                if back {
                    // the back-propagated sum reads the weights before this step's update
                    for ((dl, w), &a) in d_left.iter_mut().zip(row.iter_mut()).zip(a_left) {
                        *dl += *w * dr;
                        *w -= g * a;
                    }
                } else {
                    for (w, &a) in row.iter_mut().zip(a_left) {
                        *w -= g * a;
                    }
                }
                *b -= g;
            }
            if back {
                for (dl, &a) in d_left.iter_mut().zip(a_left) {
                    *dl *= a * (1.0 - a);
                }
            }
        }
    }

    /// One epoch of SGD over the samples in order.
    pub fn train(&mut self, data: &Encoded) {
        for n in 0..data.len() {
            self.step(data.input(n), data.labels[n]);
        }
    }

    /// Output activations of one input.
    pub fn outputs(&mut self, input: &[i32]) -> Vec<f32> {
        self.load_input(input);
        self.forward();
        self.a[self.weights.len()].clone()
    }

    /// Predicted class of every sample: the first largest output.
    pub fn infer(&mut self, data: &Encoded) -> Vec<usize> {
        let l = self.weights.len();
        (0..data.len())
            .map(|n| {
                self.load_input(data.input(n));
                self.forward();
                crate::argmax(&self.a[l])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Spec {
        let t = "name='d'\nlayers=[5,3,2]\nfan_out=[3,2]\nz=[5,3]\nactivation='sigmoid'\nlearning_rate_shift=4\nseed=7\n[fixed]\nwidth=16\nint_bits=3\nfrac_bits=12\n[pattern]\nkind='type2'\n";
        Spec::from_toml_str(t, "d").unwrap()
    }

    /// Cross-entropy of one sample, computed independently in f64 straight from the weights.
    fn loss(m: &DenseReference, x: &[f64], label: usize) -> f64 {
        let mut a: Vec<f64> = x.to_vec();
        for j in 0..m.weights.len() {
            let (left, right) = (m.layers[j], m.layers[j + 1]);
            a = (0..right)
                .map(|r| {
                    let h: f64 = m.biases[j][r] as f64
                        + (0..left)
                            .map(|k| m.weights[j][r * left + k] as f64 * a[k])
                            .sum::<f64>();
                    1.0 / (1.0 + (-h).exp())
                })
                .collect();
        }
        a.iter()
            .enumerate()
            .map(|(k, &p)| if k == label { -p.ln() } else { -(1.0 - p).ln() })
            .sum()
    }

    #[test]
    fn sgd_step_follows_the_finite_difference_gradient() {
        let spec = tiny();
        let m0 = DenseReference::new(&spec);
        let raw = [4096, 1024, 0, 2048, 3072];
        let x: Vec<f64> = raw.iter().map(|&v| v as f64 / 4096.0).collect();
        let label = 1;
        let mut m1 = m0.clone();
        m1.step(&raw, label);
        let eta = m0.eta as f64;
        let h = 1e-3;
        let mut checked = 0;
        for j in 0..m0.weights.len() {
            for i in 0..m0.weights[j].len() {
                let mut p = m0.clone();
                let mut q = m0.clone();
                p.weights[j][i] += h as f32;
                q.weights[j][i] -= h as f32;
                let numeric = (loss(&p, &x, label) - loss(&q, &x, label)) / (2.0 * h);
                let stepped = (m0.weights[j][i] - m1.weights[j][i]) as f64 / eta;
                assert!(
                    (numeric - stepped).abs() < 1e-4,
                    "junction {j} weight {i}: finite difference {numeric}, SGD step {stepped}"
                );
                checked += (numeric.abs() > 1e-3) as usize;
            }
            for r in 0..m0.biases[j].len() {
                let mut p = m0.clone();
                let mut q = m0.clone();
                p.biases[j][r] += h as f32;
                q.biases[j][r] -= h as f32;
                let numeric = (loss(&p, &x, label) - loss(&q, &x, label)) / (2.0 * h);
                let stepped = (m0.biases[j][r] - m1.biases[j][r]) as f64 / eta;
                assert!(
                    (numeric - stepped).abs() < 1e-4,
                    "junction {j} bias {r}: {numeric} vs {stepped}"
                );
            }
        }
        assert!(
            checked > 10,
            "the check saw non-trivial gradients ({checked})"
        );
    }

    #[test]
    fn learns_a_separable_problem() {
        // inputs 0/1 patterns; class = first input; a few hundred steps must fit it
        let spec = tiny();
        let mut m = DenseReference::new(&spec);
        m.eta = 0.5;
        let mut r = SplitMix64::new(3);
        let mut inputs = Vec::new();
        let mut labels = Vec::new();
        for _ in 0..400 {
            let bits: Vec<i32> = (0..5).map(|_| r.below(2) as i32 * 4096).collect();
            labels.push((bits[0] > 0) as usize);
            inputs.extend(bits);
        }
        let data = Encoded {
            inputs_per_sample: 5,
            inputs,
            labels,
        };
        for _ in 0..5 {
            m.train(&data);
        }
        let pred = m.infer(&data);
        let right = pred
            .iter()
            .zip(&data.labels)
            .filter(|(p, l)| p == l)
            .count();
        assert_eq!(right, data.len());
    }
}
