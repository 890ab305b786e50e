//! Sparse float baseline written for speed: the spec's sparse network and pattern (the same
//! index tables as the reference model), `f32`, ordinary SGD with batch 1 on one core, with
//! every buffer allocated once. It computes what [`crate::FloatReference`] computes (same
//! initial weights, same order of updates) in single precision, and is what `edgeflow bench`
//! holds the accelerators against on the same sparse network.

use edgeflow_core::{Activation, Encoded, JunctionPattern, Spec, State};

#[derive(Clone, Debug)]
pub struct SparseF32 {
    /// Per junction: left neuron of every edge, `fan_in` consecutive edges per right neuron.
    idx: Vec<Vec<u32>>,
    fan_in: Vec<usize>,
    pub weights: Vec<Vec<f32>>,
    pub biases: Vec<Vec<f32>>,
    pub eta: f32,
    a: Vec<Vec<f32>>,
    delta: Vec<Vec<f32>>,
    input_scale: f32,
    /// Per layer 1 … L (index `j` for junction `j`'s right layer), its activation.
    acts: Vec<Activation>,
    hidden: Activation,
}

impl SparseF32 {
    /// The spec's initial fixed-point weights as floats, like `FloatReference::new`.
    pub fn new(spec: &Spec) -> SparseF32 {
        let s = State::initial(spec);
        let f = spec.format();
        let pats = JunctionPattern::all(spec);
        SparseF32 {
            fan_in: pats.iter().map(|p| p.fan_in).collect(),
            idx: pats.into_iter().map(|p| p.left_of_edge).collect(),
            weights: s
                .weights
                .iter()
                .map(|w| w.iter().map(|&v| f.to_f64(v) as f32).collect())
                .collect(),
            biases: s
                .biases
                .iter()
                .map(|b| b.iter().map(|&v| f.to_f64(v) as f32).collect())
                .collect(),
            eta: 0.5f32.powi(spec.learning_rate_shift as i32),
            a: spec.layers.iter().map(|&n| vec![0.0; n]).collect(),
            delta: spec.layers.iter().map(|&n| vec![0.0; n]).collect(),
            input_scale: 1.0 / (1u64 << spec.fixed.frac_bits) as f32,
            acts: (1..=spec.junctions())
                .map(|l| spec.activation_of_layer(l))
                .collect(),
            hidden: spec.activation,
        }
    }

    fn forward(&mut self, input: &[i32]) {
        let s = self.input_scale;
        for (x, &v) in self.a[0].iter_mut().zip(input) {
            *x = v as f32 * s;
        }
        let l = self.weights.len();
        for j in 0..l {
            let fi = self.fan_in[j];
            let act = self.acts[j];
            let (lo, hi) = self.a.split_at_mut(j + 1);
            let (a_in, a_out) = (&lo[j], &mut hi[0]);
            let rows = self.weights[j]
                .chunks_exact(fi)
                .zip(self.idx[j].chunks_exact(fi));
            for ((o, (wr, ir)), &b) in a_out.iter_mut().zip(rows).zip(&self.biases[j]) {
                let mut h = b;
                for (&w, &k) in wr.iter().zip(ir) {
                    h += w * a_in[k as usize];
                }
                *o = act.value_f32(h);
            }
        }
    }

    /// One SGD step on one sample (sigmoid + cross-entropy output, one-hot label).
    pub fn step(&mut self, input: &[i32], label: usize) {
        self.forward(input);
        let l = self.weights.len();
        for (k, (d, &a)) in self.delta[l].iter_mut().zip(&self.a[l]).enumerate() {
            *d = a - if k == label { 1.0 } else { 0.0 };
        }
        let eta = self.eta;
        for j in (0..l).rev() {
            let fi = self.fan_in[j];
            let (dlo, dhi) = self.delta.split_at_mut(j + 1);
            let (d_left, d) = (&mut dlo[j], &dhi[0]);
            let a_left = &self.a[j];
            let rows = self.weights[j]
                .chunks_exact_mut(fi)
                .zip(self.idx[j].chunks_exact(fi));
            if j > 0 {
                d_left.fill(0.0);
                for (((wr, ir), &dr), b) in rows.zip(d.iter()).zip(self.biases[j].iter_mut()) {
                    let g = eta * dr;
                    for (w, &k) in wr.iter_mut().zip(ir) {
                        let k = k as usize;
                        d_left[k] += *w * dr;
                        *w -= g * a_left[k];
                    }
                    *b -= g;
                }
                let hidden = self.hidden;
                for (dl, &a) in d_left.iter_mut().zip(a_left) {
                    *dl *= hidden.slope_of_value_f32(a);
                }
            } else {
                for (((wr, ir), &dr), b) in rows.zip(d.iter()).zip(self.biases[j].iter_mut()) {
                    let g = eta * dr;
                    for (w, &k) in wr.iter_mut().zip(ir) {
                        *w -= g * a_left[k as usize];
                    }
                    *b -= g;
                }
            }
        }
    }

    pub fn train(&mut self, data: &Encoded) {
        for n in 0..data.len() {
            self.step(data.input(n), data.labels[n]);
        }
    }

    /// Predicted class of every sample: the first largest output.
    pub fn infer(&mut self, data: &Encoded) -> Vec<usize> {
        let l = self.weights.len();
        (0..data.len())
            .map(|n| {
                self.forward(data.input(n));
                let out = &self.a[l];
                let mut best = 0;
                for (i, &x) in out.iter().enumerate() {
                    if x > out[best] {
                        best = i;
                    }
                }
                best
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FloatReference;

    #[test]
    fn tracks_the_f64_float_reference() {
        for act in ["sigmoid", "relu"] {
            let t = format!("name='s'\nlayers=[16,8,4]\nfan_out=[2,2]\nz=[4,4]\nactivation='{act}'\nlearning_rate_shift=2\nseed=5\n[fixed]\nwidth=16\nint_bits=3\nfrac_bits=12\n[pattern]\nkind='type1'\ndither=true\nseed=6\n");
            let spec = Spec::from_toml_str(&t, "s").unwrap();
            let mut r = edgeflow_core::rng::SplitMix64::new(11);
            let n = 50;
            let data = Encoded {
                inputs_per_sample: 16,
                inputs: (0..16 * n).map(|_| r.below(4097) as i32).collect(),
                labels: (0..n).map(|_| r.below(4)).collect(),
            };
            let mut f = FloatReference::new(&spec);
            let mut s = SparseF32::new(&spec);
            f.train(&data);
            s.train(&data);
            let mut moved = 0.0f64;
            for j in 0..2 {
                for (e, (&a, &b)) in f.weights[j].iter().zip(&s.weights[j]).enumerate() {
                    assert!(
                        (a - b as f64).abs() < 1e-4,
                        "{act} junction {j} edge {e}: f64 {a}, f32 {b}"
                    );
                    moved += (a - FloatReference::new(&spec).weights[j][e]).abs();
                }
                for (&a, &b) in f.biases[j].iter().zip(&s.biases[j]) {
                    assert!((a - b as f64).abs() < 1e-4, "{act} bias: {a} vs {b}");
                }
            }
            assert!(moved > 0.1, "{act}: training moved the weights ({moved})");
            assert_eq!(f.infer(&data), s.infer(&data));
        }
    }
}
