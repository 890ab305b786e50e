//! Mini-batch float baseline: the fully connected network of the spec's layer sizes (the spec's
//! hidden activation, sigmoid + cross-entropy output, `f32`), trained with mini-batch SGD whose
//! matrix products run on `matrixmultiply`'s sgemm, on up to as many threads as asked (a pass too small to share stays on one). It is the
//! trainer a user who knows CPUs would hold an accelerator against; it starts from the same
//! weights as [`crate::DenseReference`] and shares nothing with the fixed-point model.
//!
//! Activations and deltas of a batch are row-major `batch × neurons` matrices, weights are
//! row-major `right × left` per junction as in the dense baseline. One step: every thread
//! takes a slice of the batch's rows through feed-forward and back-propagation (rows are
//! independent, and back-propagation reads the weights before the update), then every thread
//! updates a slice of each junction's right neurons (`W -= lr·Δᵀ·A` is one sgemm with
//! `beta = 1`). Each output element is summed over the same operands in the same order
//! whatever the split, so the thread count does not change the result.

use crate::dense::{dense_edge_ops, DenseReference};
use edgeflow_core::{Activation, Encoded, Spec};
use rayon::prelude::*;

#[derive(Debug)]
pub struct DenseMiniBatch {
    pub layers: Vec<usize>,
    /// `weights[j][r * left + k]`.
    pub weights: Vec<Vec<f32>>,
    pub biases: Vec<Vec<f32>>,
    /// Step size applied to the batch's mean gradient.
    pub lr: f32,
    pub batch: usize,
    pub threads: usize,
    /// Multiply-accumulates a thread must get in a pass before the pass is split: below it
    /// handing out the work costs more than it saves.
    pub min_work_per_thread: usize,
    hidden: Activation,
    input_scale: f32,
    /// `a[l]`: `batch × layers[l]` activations of the batch in flight.
    a: Vec<Vec<f32>>,
    /// `delta[l]`: the loss gradient at layer `l`'s sums (index 0 unused).
    delta: Vec<Vec<f32>>,
    pool: Option<rayon::ThreadPool>,
}

impl DenseMiniBatch {
    /// The dense baseline's initial weights; the step size on the batch mean is the spec's
    /// per-sample `2^-learning_rate_shift` times `√batch`: batch 1 is the dense baseline's
    /// SGD, and a larger batch takes larger steps on its less noisy gradient.
    pub fn new(spec: &Spec, batch: usize, threads: usize) -> DenseMiniBatch {
        let (batch, threads) = (batch.max(1), threads.max(1));
        let d = DenseReference::new(spec);
        DenseMiniBatch {
            layers: d.layers,
            weights: d.weights,
            biases: d.biases,
            lr: d.eta * (batch as f32).sqrt(),
            batch,
            threads,
            min_work_per_thread: 1 << 18,
            hidden: spec.activation,
            input_scale: 1.0 / (1u64 << spec.fixed.frac_bits) as f32,
            a: spec.layers.iter().map(|&n| vec![0.0; n * batch]).collect(),
            delta: spec.layers.iter().map(|&n| vec![0.0; n * batch]).collect(),
            pool: (threads > 1).then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("a thread pool for the mini-batch baseline")
            }),
        }
    }

    /// Multiply-accumulates per training sample, as for the dense baseline.
    pub fn edge_ops_per_sample(&self) -> u64 {
        dense_edge_ops(&self.layers)
    }

    /// Threads worth using on a pass over `b` samples.
    fn parts(&self, b: usize) -> usize {
        let work: usize = self.layers.windows(2).map(|w| w[0] * w[1] * b).sum();
        (work / self.min_work_per_thread.max(1)).clamp(1, self.threads)
    }

    /// Feed-forward of `labels.len()` samples (at most `batch`) and, with `train`, one SGD step
    /// on their mean gradient.
    fn pass(&mut self, inputs: &[i32], labels: &[usize], train: bool) {
        let b = labels.len();
        debug_assert!(b <= self.batch && inputs.len() == b * self.layers[0]);
        let parts = self.parts(b).min(b);
        let bounds: Vec<usize> = (0..=parts).map(|t| t * b / parts).collect();
        // per part: its rows of every layer's activations and deltas
        let mut a_parts: Vec<Vec<&mut [f32]>> = (0..parts).map(|_| Vec::new()).collect();
        let mut d_parts: Vec<Vec<&mut [f32]>> = (0..parts).map(|_| Vec::new()).collect();
        for (l, (a, d)) in self.a.iter_mut().zip(self.delta.iter_mut()).enumerate() {
            let n = self.layers[l];
            for (t, s) in split_rows(&mut a[..b * n], n, &bounds)
                .into_iter()
                .enumerate()
            {
                a_parts[t].push(s);
            }
            for (t, s) in split_rows(&mut d[..b * n], n, &bounds)
                .into_iter()
                .enumerate()
            {
                d_parts[t].push(s);
            }
        }
        let net = Net {
            layers: &self.layers,
            weights: &self.weights,
            biases: &self.biases,
            hidden: self.hidden,
            input_scale: self.input_scale,
        };
        let rows = |(t, (a, d)): (usize, RowSlices)| {
            let (s0, s1) = (bounds[t], bounds[t + 1]);
            let n0 = net.layers[0];
            net.rows(&inputs[s0 * n0..s1 * n0], &labels[s0..s1], a, d, train);
        };
        let work = a_parts.into_iter().zip(d_parts).enumerate();
        match &self.pool {
            Some(p) if parts > 1 => {
                p.install(|| work.collect::<Vec<_>>().into_par_iter().for_each(rows))
            }
            _ => work.for_each(rows),
        }
        if train {
            self.update(b);
        }
    }

    /// `W -= lr/b · Δᵀ·A` and `bias -= lr/b · Σ Δ`, each junction's right neurons split over
    /// the threads.
    fn update(&mut self, b: usize) {
        let step = self.lr / b as f32;
        let parts = self.parts(b);
        let mut tasks = Vec::new();
        for (j, (w, bias)) in self
            .weights
            .iter_mut()
            .zip(self.biases.iter_mut())
            .enumerate()
        {
            let (left, right) = (self.layers[j], self.layers[j + 1]);
            let per = right.div_ceil(parts);
            for (c, (wc, bc)) in w
                .chunks_mut(per * left)
                .zip(bias.chunks_mut(per))
                .enumerate()
            {
                tasks.push((j, c * per, wc, bc));
            }
        }
        let (layers, a, delta) = (&self.layers, &self.a, &self.delta);
        let run = |(j, r0, w, bias): (usize, usize, &mut [f32], &mut [f32])| {
            let (left, right) = (layers[j], layers[j + 1]);
            let (d, x) = (&delta[j + 1][..b * right], &a[j][..b * left]);
            let rows = bias.len();
            // SAFETY: Δᵀ rows r0..r0+rows are Δ's columns (stride 1 between neurons, `right`
            // between samples), all inside the b·right deltas; A is b×left and the weight
            // block rows×left, both row-major and in bounds.
            unsafe {
                matrixmultiply::sgemm(
                    rows,
                    b,
                    left,
                    -step,
                    d.as_ptr().add(r0),
                    1,
                    right as isize,
                    x.as_ptr(),
                    left as isize,
                    1,
                    1.0,
                    w.as_mut_ptr(),
                    left as isize,
                    1,
                );
            }
            for (r, g) in bias.iter_mut().enumerate() {
                let sum: f32 = d.chunks_exact(right).map(|row| row[r0 + r]).sum();
                *g -= step * sum;
            }
        };
        match &self.pool {
            Some(p) if parts > 1 => p.install(|| tasks.into_par_iter().for_each(run)),
            _ => tasks.into_iter().for_each(run),
        }
    }

    /// One epoch over the samples in order, `batch` consecutive samples per step (the last
    /// step takes what is left).
    pub fn train(&mut self, data: &Encoded) {
        let n0 = data.inputs_per_sample;
        for s in (0..data.len()).step_by(self.batch) {
            let e = (s + self.batch).min(data.len());
            self.pass(&data.inputs[s * n0..e * n0], &data.labels[s..e], true);
        }
    }

    /// Predicted class of every sample: the first largest output.
    pub fn infer(&mut self, data: &Encoded) -> Vec<usize> {
        let (n0, l) = (data.inputs_per_sample, self.layers.len() - 1);
        let mut out = Vec::with_capacity(data.len());
        for s in (0..data.len()).step_by(self.batch) {
            let e = (s + self.batch).min(data.len());
            self.pass(&data.inputs[s * n0..e * n0], &data.labels[s..e], false);
            let n = self.layers[l];
            out.extend(self.a[l][..(e - s) * n].chunks_exact(n).map(crate::argmax));
        }
        out
    }
}

/// One part's rows of every layer's activations and of every layer's deltas.
type RowSlices<'a> = (Vec<&'a mut [f32]>, Vec<&'a mut [f32]>);

/// What the row passes read: the network as it stands before the batch's update.
struct Net<'a> {
    layers: &'a [usize],
    weights: &'a [Vec<f32>],
    biases: &'a [Vec<f32>],
    hidden: Activation,
    input_scale: f32,
}

impl Net<'_> {
    /// Feed-forward of some rows of the batch and, with `train`, their deltas at every layer.
    fn rows(
        &self,
        inputs: &[i32],
        labels: &[usize],
        mut a: Vec<&mut [f32]>,
        mut d: Vec<&mut [f32]>,
        train: bool,
    ) {
        let (m, l) = (labels.len(), self.weights.len());
        for (x, &v) in a[0].iter_mut().zip(inputs) {
            *x = v as f32 * self.input_scale;
        }
        for j in 0..l {
            let (left, right) = (self.layers[j], self.layers[j + 1]);
            let (lo, hi) = a.split_at_mut(j + 1);
            let (x, y) = (&*lo[j], &mut *hi[0]);
            // SAFETY: x is m×left and y m×right, row-major; Wᵀ(k, r) = w[r·left + k] reads the
            // right×left weights.
            unsafe {
                matrixmultiply::sgemm(
                    m,
                    left,
                    right,
                    1.0,
                    x.as_ptr(),
                    left as isize,
                    1,
                    self.weights[j].as_ptr(),
                    1,
                    left as isize,
                    0.0,
                    y.as_mut_ptr(),
                    right as isize,
                    1,
                );
            }
            let act = if j + 1 < l {
                self.hidden
            } else {
                Activation::Sigmoid
            };
            for row in y.chunks_exact_mut(right) {
                for (h, &bias) in row.iter_mut().zip(&self.biases[j]) {
                    *h = act.value_f32(*h + bias);
                }
            }
        }
        if !train {
            return;
        }
        let out = self.layers[l];
        for ((drow, arow), &label) in d[l]
            .chunks_exact_mut(out)
            .zip(a[l].chunks_exact(out))
            .zip(labels)
        {
            for (k, (dv, &av)) in drow.iter_mut().zip(arow).enumerate() {
                *dv = av - if k == label { 1.0 } else { 0.0 };
            }
        }
        for j in (1..l).rev() {
            let (left, right) = (self.layers[j], self.layers[j + 1]);
            let (lo, hi) = d.split_at_mut(j + 1);
            let (back, dr) = (&mut *lo[j], &*hi[0]);
            // SAFETY: Δ_right is m×right, W right×left, Δ_left m×left, all row-major.
            unsafe {
                matrixmultiply::sgemm(
                    m,
                    right,
                    left,
                    1.0,
                    dr.as_ptr(),
                    right as isize,
                    1,
                    self.weights[j].as_ptr(),
                    left as isize,
                    1,
                    0.0,
                    back.as_mut_ptr(),
                    left as isize,
                    1,
                );
            }
            for (dv, &av) in back.iter_mut().zip(a[j].iter()) {
                *dv *= self.hidden.slope_of_value_f32(av);
            }
        }
    }
}

/// `buf` (rows of `width`) cut at the row `bounds`.
fn split_rows<'a>(mut buf: &'a mut [f32], width: usize, bounds: &[usize]) -> Vec<&'a mut [f32]> {
    let mut out = Vec::with_capacity(bounds.len() - 1);
    for w in bounds.windows(2) {
        let (head, tail) = std::mem::take(&mut buf).split_at_mut((w[1] - w[0]) * width);
        out.push(head);
        buf = tail;
    }
    out
}

#[cfg(test)]
#[path = "minibatch_tests.rs"]
mod tests;
