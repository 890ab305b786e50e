//! The bit-exact reference model: the single source of truth for every bit.
//!
//! Training is junction-pipelined exactly as docs/design.md, "Schedule and staleness",
//! defines it. With junctions
//! numbered `j = 0 … L-1` here (junction `j+1` in the docs), block cycle `t` runs
//! `FF_j(t - F_j)` with `F_j = j`, and `BP_j(t - B_j)` together with `UP_j(t - B_j)` with
//! `B_j = F_j + s_j`. Every read of `W_j` in a block cycle sees the updates of all earlier block
//! cycles and none of the current one, so `FF_j(n)` misses the updates of the last `s_j`
//! samples. A run depends on the schedule only through the staleness vector `s`; the single
//! board has `s_j = 2(L - j) - 1`, a multi-board plan passes its own.
//!
//! Each call to [`Reference::train`] is one stream: the pipeline fills with the first sample
//! and drains after the last, `S + max_j B_j` block cycles in all (`S + 2L - 1` on one board).
//!
//! Arithmetic is exactly `edgeflow_core::fixed` (see its module docs for the order of every
//! rounding and saturation). Within one edge, BP reads the weight before UP writes it.

use edgeflow_core::fixed::{
    activate, hidden_delta, output_delta, output_delta_ends, Activation, ActivationTable, Format,
};
use edgeflow_core::rounding::{
    bias_update_stochastic, weight_update_stochastic, LaneRng, Rounding,
};
use edgeflow_core::{Encoded, JunctionPattern, Spec, State};

/// Per-sample values in flight, kept until the sample's last update.
#[derive(Clone)]
struct Slot {
    /// `a[k]`: activations of layer `k` (`a[0]` = inputs).
    a: Vec<Vec<i32>>,
    /// `sp[k]`: σ′ (sigmoid) or the gate (ReLU) of layer `k` (used for hidden layers).
    sp: Vec<Vec<i32>>,
    /// `delta[k]`: final deltas of layer `k` (`k ≥ 1`).
    delta: Vec<Vec<i32>>,
    label: usize,
}

/// Counts of edge operations (one FF, BP or UP on one edge) a run performed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    pub samples: u64,
    pub block_cycles: u64,
    pub edge_ops: u64,
}

#[derive(Clone, Debug)]
pub struct Reference {
    pub spec: Spec,
    pub format: Format,
    pub table: ActivationTable,
    pub patterns: Vec<JunctionPattern>,
    pub state: State,
    staleness: Vec<usize>,
    scratch: Vec<i32>,
    /// The stochastic-rounding stream of every lane, `lanes[j][l]` (see `edgeflow_core::rounding`):
    /// started from the spec's seed with the weights, running for the model's lifetime.
    lanes: Vec<Vec<LaneRng>>,
    /// The word each right neuron's last edge drew in the current update (its bias's bits).
    last_words: Vec<u32>,
}

/// When each junction runs, in block cycles: `FF_j(n)` in `ff[j] + n`, `BP_j(n)`/`UP_j(n)` in
/// `bp[j] + n`. On one board `ff[j] = j`, `bp[j] = 2L - 1 - j`. A link of `d` block cycles
/// between junctions `j` and `j+1` (boards in a chain) delays the activations forward and the
/// deltas backward by `d` each: `ff[j+1] = ff[j] + 1 + d`, `bp[j] = bp[j+1] + 1 + d`.
/// Staleness is `bp[j] - ff[j]`; the results depend on nothing else.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Schedule {
    pub ff: Vec<usize>,
    pub bp: Vec<usize>,
}

impl Schedule {
    pub fn single_board(junctions: usize) -> Schedule {
        Self::with_links(&vec![0; junctions.saturating_sub(1)])
    }

    /// `link_delay[j]`: block cycles added by a link between junction `j` and `j+1`
    /// (0 where both sit on one board).
    pub fn with_links(link_delay: &[usize]) -> Schedule {
        let l = link_delay.len() + 1;
        let mut ff = vec![0; l];
        for j in 1..l {
            ff[j] = ff[j - 1] + 1 + link_delay[j - 1];
        }
        let mut bp = vec![0; l];
        bp[l - 1] = ff[l - 1] + 1;
        for j in (0..l - 1).rev() {
            bp[j] = bp[j + 1] + 1 + link_delay[j];
        }
        Schedule { ff, bp }
    }

    pub fn staleness(&self) -> Vec<usize> {
        self.ff.iter().zip(&self.bp).map(|(f, b)| b - f).collect()
    }

    /// Block cycles to train `samples` samples (fill and drain).
    pub fn block_cycles(&self, samples: usize) -> usize {
        samples + self.bp[0]
    }
}

/// Why a staleness vector cannot come from any schedule.
pub fn check_staleness(s: &[usize], junctions: usize) -> Result<(), String> {
    if s.len() != junctions {
        return Err(format!(
            "staleness has {} entries, the network has {junctions} junctions",
            s.len()
        ));
    }
    if s[junctions - 1] < 1 {
        return Err(
            "the last junction's staleness must be at least 1 (its BP follows its FF)".into(),
        );
    }
    for j in 0..junctions - 1 {
        if s[j] < s[j + 1] + 2 {
            return Err(format!(
                "staleness of junction {} ({}) must exceed junction {}'s ({}) by at least 2: its FF is one block cycle earlier and its BP one later",
                j + 1,
                s[j],
                j + 2,
                s[j + 1]
            ));
        }
    }
    Ok(())
}

/// The contract's product, learning-rate shift and saturation (`edgeflow_core::fixed`) in
/// `i32`, for the hot loops. Bit-identical to `Format::mul`/`eta`/`saturate`: operands are
/// saturated values of at most 16 bits, so `|a·b| ≤ 2^30` and adding the rounding half
/// (`≤ 2^14`) cannot overflow; `i32` lets the compiler keep everything in 32-bit lanes.
#[derive(Clone, Copy)]
struct Fast {
    half: i32,
    frac: u32,
    lo: i32,
    hi: i32,
}

impl Fast {
    #[inline(always)]
    fn new(f: Format) -> Fast {
        Fast {
            half: if f.frac_bits == 0 {
                0
            } else {
                1 << (f.frac_bits - 1)
            },
            frac: f.frac_bits,
            lo: f.min(),
            hi: f.max(),
        }
    }

    #[inline(always)]
    fn saturate(self, x: i32) -> i32 {
        x.clamp(self.lo, self.hi)
    }

    #[inline(always)]
    fn mul(self, a: i32, b: i32) -> i32 {
        self.saturate((a * b + self.half) >> self.frac)
    }

    #[inline(always)]
    fn eta(self, x: i32, shift: u32) -> i32 {
        if shift == 0 {
            x
        } else {
            (x + (1 << (shift - 1))) >> shift
        }
    }
}

impl Reference {
    /// A model with the spec's initial weights and the single-board schedule.
    pub fn new(spec: &Spec) -> Reference {
        Self::with_state(spec, State::initial(spec), spec.default_staleness())
            .expect("default schedule is valid")
    }

    pub fn with_state(
        spec: &Spec,
        state: State,
        staleness: Vec<usize>,
    ) -> Result<Reference, String> {
        state.check_shape(spec)?;
        check_staleness(&staleness, spec.junctions())?;
        let format = spec.format();
        let widest = *spec.layers.iter().max().unwrap();
        Ok(Reference {
            spec: spec.clone(),
            format,
            table: spec.activation_table(),
            patterns: JunctionPattern::all(spec),
            state,
            staleness,
            scratch: vec![0; widest],
            lanes: LaneRng::all_seeded(spec.seed, &spec.z),
            last_words: vec![0; widest],
        })
    }

    /// The stochastic-rounding streams where they stand now, `[j][l]`.
    pub fn lanes(&self) -> &[Vec<LaneRng>] {
        &self.lanes
    }

    pub fn staleness(&self) -> &[usize] {
        &self.staleness
    }

    fn activation_of(&self, layer: usize) -> Activation {
        if layer == self.spec.junctions() {
            Activation::Sigmoid
        } else {
            self.spec.activation
        }
    }

    /// Feed-forward of junction `j`: `a_out`/`sp_out` of the right layer from `a_in`.
    /// Public so the criterion benches can time one pass alone.
    pub fn ff(&self, j: usize, a_in: &[i32], a_out: &mut [i32], sp_out: &mut [i32]) {
        let q = Fast::new(self.format);
        let fi = self.patterns[j].fan_in;
        let idx = &self.patterns[j].left_of_edge;
        let w = &self.state.weights[j];
        let act = self.activation_of(j + 1);
        let rows = w.chunks_exact(fi).zip(idx.chunks_exact(fi));
        let outs = a_out.iter_mut().zip(sp_out.iter_mut());
        for (((a, sp), (wr, ir)), &bias) in outs.zip(rows).zip(&self.state.biases[j]) {
            let mut acc = bias;
            for (&we, &k) in wr.iter().zip(ir) {
                acc += q.mul(we, a_in[k as usize]);
            }
            let (av, spv) = activate(act, &self.table, q.saturate(acc));
            *a = av;
            *sp = spv;
        }
    }

    /// Back-propagation (for `j > 0`) and update of junction `j` with right deltas `d`,
    /// left activations `a_left` and left σ′ `sp_left`; returns the left deltas in `d_left`.
    /// Public so the criterion benches can time one pass alone.
    pub fn bp_up(
        &mut self,
        j: usize,
        d: &[i32],
        a_left: &[i32],
        sp_left: &[i32],
        d_left: Option<&mut [i32]>,
    ) {
        let f = self.format;
        let q = Fast::new(f);
        let shift = self.spec.learning_rate_shift;
        let fi = self.patterns[j].fan_in;
        let idx = &self.patterns[j].left_of_edge;
        let w = &mut self.state.weights[j];
        if self.spec.rounding() == Rounding::Stochastic {
            // Edge e is in lane e mod z and each lane draws its words in increasing e.
            let lanes = &mut self.lanes[j];
            let z = lanes.len();
            let last = &mut self.last_words[..d.len()];
            let acc = &mut self.scratch[..a_left.len()];
            acc.fill(0);
            let mut lane = 0;
            for (i, ((wr, ir), &dr)) in w
                .chunks_exact_mut(fi)
                .zip(idx.chunks_exact(fi))
                .zip(d)
                .enumerate()
            {
                for (c, (we, &k)) in wr.iter_mut().zip(ir).enumerate() {
                    let k = k as usize;
                    acc[k] += q.mul(*we, dr);
                    let word = lanes[lane].next_word();
                    if c + 1 == fi {
                        last[i] = word;
                    }
                    *we = weight_update_stochastic(f, *we, dr, a_left[k], shift, word);
                    lane = if lane + 1 == z { 0 } else { lane + 1 };
                }
            }
            if let Some(d_left) = d_left {
                let act = self.spec.activation;
                for ((dl, &s), &sp) in d_left.iter_mut().zip(acc.iter()).zip(sp_left) {
                    *dl = hidden_delta(act, f, sp, q.saturate(s));
                }
            }
            for ((b, &dr), &word) in self.state.biases[j].iter_mut().zip(d).zip(last.iter()) {
                *b = bias_update_stochastic(f, *b, dr, shift, word);
            }
            return;
        }
        let rows = w.chunks_exact_mut(fi).zip(idx.chunks_exact(fi)).zip(d);
        match d_left {
            None => {
                for ((wr, ir), &dr) in rows {
                    for (we, &k) in wr.iter_mut().zip(ir) {
                        *we = q.saturate(*we - q.eta(q.mul(dr, a_left[k as usize]), shift));
                    }
                }
            }
            Some(d_left) => {
                // BP reads each weight before UP writes it.
                let acc = &mut self.scratch[..a_left.len()];
                acc.fill(0);
                for ((wr, ir), &dr) in rows {
                    for (we, &k) in wr.iter_mut().zip(ir) {
                        let k = k as usize;
                        acc[k] += q.mul(*we, dr);
                        *we = q.saturate(*we - q.eta(q.mul(dr, a_left[k]), shift));
                    }
                }
                let act = self.spec.activation;
                for ((dl, &s), &sp) in d_left.iter_mut().zip(acc.iter()).zip(sp_left) {
                    *dl = hidden_delta(act, f, sp, q.saturate(s));
                }
            }
        }
        for (b, &dr) in self.state.biases[j].iter_mut().zip(d) {
            *b = f.saturate(*b as i64 - f.eta(dr, shift) as i64);
        }
    }

    /// Train on one stream of samples (pipeline filled, then drained).
    pub fn train(&mut self, data: &Encoded) -> Work {
        let l = self.spec.junctions();
        let s_count = data.len();
        let b: Vec<usize> = (0..l).map(|j| j + self.staleness[j]).collect();
        let depth = b[0] + 1;
        let layers = self.spec.layers.clone();
        let mut ring: Vec<Slot> = (0..depth.min(s_count.max(1)))
            .map(|_| Slot {
                a: layers.iter().map(|&n| vec![0; n]).collect(),
                sp: layers.iter().map(|&n| vec![0; n]).collect(),
                delta: layers.iter().map(|&n| vec![0; n]).collect(),
                label: 0,
            })
            .collect();
        let depth = ring.len();
        let cycles = s_count + b[0];
        let f = self.format;
        let ends = output_delta_ends(self.spec.output_delta, &self.table);
        let mut work = Work::default();
        for t in 0..cycles {
            for j in 0..l {
                if t >= j && t - j < s_count {
                    let n = t - j;
                    let slot = &mut ring[n % depth];
                    if j == 0 {
                        slot.a[0].copy_from_slice(data.input(n));
                        slot.label = data.labels[n];
                    }
                    let (lo, hi) = slot.a.split_at_mut(j + 1);
                    self.ff(j, &lo[j], &mut hi[0], &mut slot.sp[j + 1]);
                    if j == l - 1 {
                        for (k, (d, &a)) in slot.delta[l].iter_mut().zip(&slot.a[l]).enumerate() {
                            *d = output_delta(f, ends, a, k == slot.label);
                        }
                    }
                    work.edge_ops += self.patterns[j].edges() as u64;
                }
                if t >= b[j] && t - b[j] < s_count {
                    let n = t - b[j];
                    let slot = &mut ring[n % depth];
                    let (dlo, dhi) = slot.delta.split_at_mut(j + 1);
                    let d_left = if j > 0 { Some(&mut dlo[j][..]) } else { None };
                    self.bp_up(j, &dhi[0], &slot.a[j], &slot.sp[j], d_left);
                    let passes = if j > 0 { 2 } else { 1 };
                    work.edge_ops += passes * self.patterns[j].edges() as u64;
                }
            }
        }
        work.samples = s_count as u64;
        work.block_cycles = cycles as u64;
        work
    }

    /// Output activations of one input (inference: FF alone, current weights).
    pub fn forward(&self, input: &[i32]) -> Vec<i32> {
        let mut a = input.to_vec();
        for j in 0..self.spec.junctions() {
            let n = self.spec.layers[j + 1];
            let mut out = vec![0; n];
            let mut sp = vec![0; n];
            self.ff(j, &a, &mut out, &mut sp);
            a = out;
        }
        a
    }

    /// Predicted class of every sample: the first output with the largest activation.
    pub fn infer(&self, data: &Encoded) -> Vec<usize> {
        (0..data.len())
            .map(|n| argmax(&self.forward(data.input(n))))
            .collect()
    }
}

/// Index of the first largest value: the tie rule every backend (and the float models) uses.
pub fn argmax<T: PartialOrd>(v: &[T]) -> usize {
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best
}

pub fn accuracy(pred: &[usize], labels: &[usize]) -> f64 {
    if labels.is_empty() {
        return 0.0;
    }
    pred.iter().zip(labels).filter(|(p, l)| p == l).count() as f64 / labels.len() as f64
}

#[cfg(test)]
#[path = "reference_tests.rs"]
mod tests;
