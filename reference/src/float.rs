//! Float reference: the same sparse network and pattern in `f64`, trained with ordinary
//! sequential SGD (no pipelining, no staleness), from the same initial weights. It tells how
//! much accuracy the fixed-point, junction-pipelined hardware gives up.

use edgeflow_core::{Encoded, JunctionPattern, Spec, State};

#[derive(Clone, Debug)]
pub struct FloatReference {
    pub spec: Spec,
    pub patterns: Vec<JunctionPattern>,
    pub weights: Vec<Vec<f64>>,
    pub biases: Vec<Vec<f64>>,
    pub eta: f64,
}

impl FloatReference {
    pub fn new(spec: &Spec) -> FloatReference {
        let s = State::initial(spec);
        let f = spec.format();
        FloatReference {
            spec: spec.clone(),
            patterns: JunctionPattern::all(spec),
            weights: s
                .weights
                .iter()
                .map(|w| w.iter().map(|&v| f.to_f64(v)).collect())
                .collect(),
            biases: s
                .biases
                .iter()
                .map(|b| b.iter().map(|&v| f.to_f64(v)).collect())
                .collect(),
            eta: (0.5f64).powi(spec.learning_rate_shift as i32),
        }
    }

    fn act(&self, layer: usize, h: f64) -> (f64, f64) {
        self.spec.activation_of_layer(layer).real(h)
    }

    /// Activations and derivatives of every layer for one input.
    fn forward_all(&self, input: &[f64]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let mut a = vec![input.to_vec()];
        let mut d = vec![vec![0.0; input.len()]];
        for j in 0..self.spec.junctions() {
            let p = &self.patterns[j];
            let (mut out, mut der) = (Vec::new(), Vec::new());
            for r in 0..p.right {
                let mut h = self.biases[j][r];
                for e in r * p.fan_in..(r + 1) * p.fan_in {
                    h += self.weights[j][e] * a[j][p.left_of_edge[e] as usize];
                }
                let (x, dx) = self.act(j + 1, h);
                out.push(x);
                der.push(dx);
            }
            a.push(out);
            d.push(der);
        }
        (a, d)
    }

    fn input(&self, data: &Encoded, n: usize) -> Vec<f64> {
        let f = self.spec.format();
        data.input(n).iter().map(|&v| f.to_f64(v)).collect()
    }

    /// One epoch of sequential SGD over the samples in order (sigmoid + cross-entropy output).
    pub fn train(&mut self, data: &Encoded) {
        let l = self.spec.junctions();
        for n in 0..data.len() {
            let (a, der) = self.forward_all(&self.input(data, n));
            let mut delta: Vec<f64> = a[l]
                .iter()
                .enumerate()
                .map(|(k, &x)| x - if k == data.labels[n] { 1.0 } else { 0.0 })
                .collect();
            for j in (0..l).rev() {
                let p = &self.patterns[j];
                let mut back = vec![0.0; p.left];
                for r in 0..p.right {
                    for e in r * p.fan_in..(r + 1) * p.fan_in {
                        let k = p.left_of_edge[e] as usize;
                        back[k] += self.weights[j][e] * delta[r];
                        self.weights[j][e] -= self.eta * delta[r] * a[j][k];
                    }
                    self.biases[j][r] -= self.eta * delta[r];
                }
                delta = back.iter().zip(&der[j]).map(|(b, d)| b * d).collect();
            }
        }
    }

    pub fn infer(&self, data: &Encoded) -> Vec<usize> {
        let l = self.spec.junctions();
        (0..data.len())
            .map(|n| {
                let (a, _) = self.forward_all(&self.input(data, n));
                crate::argmax(&a[l])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn sigmoid(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    #[test]
    fn one_step_matches_hand_derived_gradient() {
        // One junction, 2 inputs → 1 output, fan-out 1: y = σ(w0 x0 + w1 x1 + b).
        let t = "name='f'\nlayers=[2,1]\nfan_out=[1]\nz=[1]\nactivation='sigmoid'\nlearning_rate_shift=1\n[fixed]\nwidth=16\nint_bits=3\nfrac_bits=12\n[pattern]\nkind='type2'\n";
        let spec = Spec::from_toml_str(t, "f").unwrap();
        let mut m = FloatReference::new(&spec);
        m.weights[0] = vec![0.5, -0.25];
        let data = Encoded {
            inputs_per_sample: 2,
            inputs: vec![4096, 2048],
            labels: vec![0],
        };
        let l0 = m.patterns[0].left_of_edge.clone();
        let x = [1.0, 0.5];
        let h = 0.5 * x[l0[0] as usize] - 0.25 * x[l0[1] as usize];
        let a = sigmoid(h);
        m.train(&data);
        assert_relative_eq!(m.biases[0][0], -0.5 * (a - 1.0), epsilon = 1e-12);
        assert_relative_eq!(
            m.weights[0][0],
            0.5 - 0.5 * (a - 1.0) * x[l0[0] as usize],
            epsilon = 1e-12
        );
    }
}
