//! Sparse float baseline written for speed: the spec's sparse network and pattern (the same
//! index tables as the reference model), `f32`, ordinary SGD with batch 1 on one core (or
//! Hogwild! on several, [`SparseF32::with_threads`]), with every buffer allocated once. It
//! computes what [`crate::FloatReference`] computes (same initial weights, same order of
//! updates) in single precision, and is what `edgeflow bench` holds the accelerators against
//! on the same sparse network.

use edgeflow_core::{Activation, Encoded, JunctionPattern, Spec, State};
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

#[derive(Clone, Debug)]
pub struct SparseF32 {
    net: Net,
    pub weights: Vec<Vec<f32>>,
    pub biases: Vec<Vec<f32>>,
    buffers: Buffers,
    threads: usize,
}

/// What a step reads and never writes: the network's shape and learning rule.
#[derive(Clone, Debug)]
struct Net {
    /// Per junction: left neuron of every edge, `fan_in` consecutive edges per right neuron.
    idx: Vec<Vec<u32>>,
    fan_in: Vec<usize>,
    eta: f32,
    input_scale: f32,
    /// Per layer 1 … L (index `j` for junction `j`'s right layer), its activation.
    acts: Vec<Activation>,
    hidden: Activation,
}

/// A step's own values: activations and deltas of every layer.
#[derive(Clone, Debug)]
struct Buffers {
    a: Vec<Vec<f32>>,
    delta: Vec<Vec<f32>>,
}

/// A weight or bias as a step reads and writes it: a cell of one thread's network, or an
/// atomic that Hogwild! threads share.
trait Param {
    fn get(&self) -> f32;
    fn set(&self, v: f32);
}

impl Param for Cell<f32> {
    #[inline(always)]
    fn get(&self) -> f32 {
        Cell::get(self)
    }
    #[inline(always)]
    fn set(&self, v: f32) {
        Cell::set(self, v)
    }
}

impl Param for AtomicU32 {
    #[inline(always)]
    fn get(&self) -> f32 {
        f32::from_bits(self.load(Relaxed))
    }
    #[inline(always)]
    fn set(&self, v: f32) {
        self.store(v.to_bits(), Relaxed)
    }
}

/// Every junction's values as cells, for the steps of one thread.
fn cells(v: &mut [Vec<f32>]) -> Vec<&[Cell<f32>]> {
    v.iter_mut()
        .map(|x| Cell::from_mut(&mut x[..]).as_slice_of_cells())
        .collect()
}

impl Net {
    fn forward<P: Param, V: AsRef<[P]>>(
        &self,
        w: &[V],
        b: &[V],
        a: &mut [Vec<f32>],
        input: &[i32],
    ) {
        let s = self.input_scale;
        for (x, &v) in a[0].iter_mut().zip(input) {
            *x = v as f32 * s;
        }
        for j in 0..w.len() {
            let fi = self.fan_in[j];
            let act = self.acts[j];
            let (lo, hi) = a.split_at_mut(j + 1);
            let (a_in, a_out) = (&lo[j], &mut hi[0]);
            let rows = w[j]
                .as_ref()
                .chunks_exact(fi)
                .zip(self.idx[j].chunks_exact(fi));
            for ((o, (wr, ir)), bias) in a_out.iter_mut().zip(rows).zip(b[j].as_ref()) {
                let mut h = bias.get();
                for (w, &k) in wr.iter().zip(ir) {
                    h += w.get() * a_in[k as usize];
                }
                *o = act.value_f32(h);
            }
        }
    }

    /// One SGD step on one sample (sigmoid + cross-entropy output, one-hot label).
    fn step<P: Param, V: AsRef<[P]>>(
        &self,
        w: &[V],
        b: &[V],
        buf: &mut Buffers,
        input: &[i32],
        label: usize,
    ) {
        self.forward(w, b, &mut buf.a, input);
        let l = w.len();
        for (k, (d, &a)) in buf.delta[l].iter_mut().zip(&buf.a[l]).enumerate() {
            *d = a - if k == label { 1.0 } else { 0.0 };
        }
        let eta = self.eta;
        for j in (0..l).rev() {
            let fi = self.fan_in[j];
            let (dlo, dhi) = buf.delta.split_at_mut(j + 1);
            let (d_left, d) = (&mut dlo[j], &dhi[0]);
            let a_left = &buf.a[j];
            let rows = w[j]
                .as_ref()
                .chunks_exact(fi)
                .zip(self.idx[j].chunks_exact(fi));
            let rows = rows.zip(d.iter()).zip(b[j].as_ref());
            if j > 0 {
                d_left.fill(0.0);
                for (((wr, ir), &dr), bias) in rows {
                    let g = eta * dr;
                    for (w, &k) in wr.iter().zip(ir) {
                        let k = k as usize;
                        let v = w.get();
                        d_left[k] += v * dr;
                        w.set(v - g * a_left[k]);
                    }
                    bias.set(bias.get() - g);
                }
                let hidden = self.hidden;
                for (dl, &a) in d_left.iter_mut().zip(a_left) {
                    *dl *= hidden.slope_of_value_f32(a);
                }
            } else {
                for (((wr, ir), &dr), bias) in rows {
                    let g = eta * dr;
                    for (w, &k) in wr.iter().zip(ir) {
                        w.set(w.get() - g * a_left[k as usize]);
                    }
                    bias.set(bias.get() - g);
                }
            }
        }
    }
}

impl SparseF32 {
    /// The spec's initial fixed-point weights as floats, like `FloatReference::new`; one
    /// thread.
    pub fn new(spec: &Spec) -> SparseF32 {
        let s = State::initial(spec);
        let f = spec.format();
        let pats = JunctionPattern::all(spec);
        let real = |v: &Vec<Vec<i32>>| -> Vec<Vec<f32>> {
            v.iter()
                .map(|x| x.iter().map(|&v| f.to_f64(v) as f32).collect())
                .collect()
        };
        SparseF32 {
            net: Net {
                fan_in: pats.iter().map(|p| p.fan_in).collect(),
                idx: pats.into_iter().map(|p| p.left_of_edge).collect(),
                eta: 0.5f32.powi(spec.learning_rate_shift as i32),
                input_scale: 1.0 / (1u64 << spec.fixed.frac_bits) as f32,
                acts: (1..=spec.junctions())
                    .map(|l| spec.activation_of_layer(l))
                    .collect(),
                hidden: spec.activation,
            },
            weights: real(&s.weights),
            biases: real(&s.biases),
            buffers: Buffers {
                a: spec.layers.iter().map(|&n| vec![0.0; n]).collect(),
                delta: spec.layers.iter().map(|&n| vec![0.0; n]).collect(),
            },
            threads: 1,
        }
    }

    /// Train on `threads` threads ([`SparseF32::train`] then runs Hogwild! SGD: every thread
    /// takes every `threads`-th sample and updates the shared weights without locks, so
    /// updates may overwrite each other and the result depends on timing). One thread is
    /// plain SGD, sample by sample.
    pub fn with_threads(mut self, threads: usize) -> SparseF32 {
        self.threads = threads.max(1);
        self
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn train(&mut self, data: &Encoded) {
        if self.threads > 1 && data.len() > 1 {
            return self.train_hogwild(data);
        }
        let (w, b) = (cells(&mut self.weights), cells(&mut self.biases));
        for n in 0..data.len() {
            let input = data.input(n);
            self.net
                .step(&w, &b, &mut self.buffers, input, data.labels[n]);
        }
    }

    /// [`SparseF32::train`] on [`SparseF32::threads`] threads, the weights shared as the bits
    /// of `f32`s in atomics that every thread loads and stores without ordering.
    fn train_hogwild(&mut self, data: &Encoded) {
        let shared = |v: &[Vec<f32>]| -> Vec<Vec<AtomicU32>> {
            v.iter()
                .map(|x| x.iter().map(|&f| AtomicU32::new(f.to_bits())).collect())
                .collect()
        };
        let (w, b) = (shared(&self.weights), shared(&self.biases));
        let threads = self.threads.min(data.len());
        let (net, start) = (&self.net, &self.buffers);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (w, b, mut buffers) = (&w, &b, start.clone());
                s.spawn(move || {
                    for n in (t..data.len()).step_by(threads) {
                        net.step(w, b, &mut buffers, data.input(n), data.labels[n]);
                    }
                });
            }
        });
        let back = |v: Vec<Vec<AtomicU32>>| -> Vec<Vec<f32>> {
            v.into_iter()
                .map(|x| {
                    x.into_iter()
                        .map(|a| f32::from_bits(a.into_inner()))
                        .collect()
                })
                .collect()
        };
        (self.weights, self.biases) = (back(w), back(b));
    }

    /// Predicted class of every sample: the first largest output.
    pub fn infer(&mut self, data: &Encoded) -> Vec<usize> {
        let (w, b) = (cells(&mut self.weights), cells(&mut self.biases));
        let a = &mut self.buffers.a;
        (0..data.len())
            .map(|n| {
                self.net.forward(&w, &b, a, data.input(n));
                crate::argmax(a.last().expect("a network has layers"))
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

    /// Hogwild! on several threads trains the bundled digits nearly as well as one thread
    /// does (its lost updates cost little), and a single sample takes the one-thread path.
    #[test]
    fn hogwild_threads_learn_the_digits() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/digits.toml");
        let spec = Spec::load(&p).unwrap();
        let d = edgeflow_core::Dataset::digits().unwrap();
        let (train, test) = d.split(1);
        let (train, test) = (
            d.encode(&spec, &train).unwrap(),
            d.encode(&spec, &test).unwrap(),
        );
        let accuracy = |threads: usize| {
            let mut s = SparseF32::new(&spec).with_threads(threads);
            for _ in 0..10 {
                s.train(&train);
            }
            crate::accuracy(&s.infer(&test), &test.labels)
        };
        let (one, three) = (accuracy(1), accuracy(3));
        assert!(one > 0.9, "one thread: {one}");
        assert!(three > 0.9, "three threads {three}, one {one}");
        let one_sample = Encoded {
            inputs_per_sample: train.inputs_per_sample,
            inputs: train.input(0).to_vec(),
            labels: vec![train.labels[0]],
        };
        let (mut a, mut b) = (SparseF32::new(&spec), SparseF32::new(&spec).with_threads(3));
        a.train(&one_sample);
        b.train(&one_sample);
        assert_eq!(a.weights, b.weights);
    }
}
