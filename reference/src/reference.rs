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

use crate::error::{ModelError, StalenessError};
use edgeflow_core::fixed::{
    activate, hidden_delta, output_delta, ActivationTable, FfProducts, Format,
};
use edgeflow_core::rounding::{
    bias_update_stochastic, weight_update_stochastic, LaneRng, Rounding,
};
use edgeflow_core::{Encoded, JunctionPattern, Spec, State};

use crate::kernels::{self, Fast};
use crate::words::WordStream;

/// Per-sample values in flight, kept until the sample's last update.
#[derive(Clone)]
struct Slot {
    /// `a[k]`: activations of layer `k` (`a[0]` = inputs).
    a: Vec<Vec<i32>>,
    /// `sp[k]`: σ′ (sigmoid) or the gate (ReLU) of layer `k` (used for hidden layers).
    sp: Vec<Vec<i32>>,
    /// `delta[k]`: final deltas of layer `k` (`k ≥ 1`).
    delta: Vec<Vec<i32>>,
    /// `x[j]`: the left activation of every edge of junction `j`, gathered by FF for UP.
    x: Vec<Vec<i32>>,
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
    /// `tables[j]`: the activation data of junction `j`'s right layer.
    pub tables: Vec<ActivationTable>,
    pub patterns: Vec<JunctionPattern>,
    pub state: State,
    staleness: Vec<usize>,
    fast: Fast,
    /// Back-propagated sums of a left layer; products and spread deltas of every edge.
    sums: Vec<i32>,
    products: Vec<i32>,
    spread: Vec<i32>,
    /// The stochastic-rounding stream of every lane, `lanes[j][l]` (see `edgeflow_core::rounding`):
    /// started from the spec's seed with the weights, running for the model's lifetime.
    lanes: Vec<Vec<LaneRng>>,
    /// Per junction: what makes a pass's words from its lanes, and the words in edge order.
    streams: Vec<WordStream>,
    words: Vec<Vec<u32>>,
    /// Threads [`Reference::train`] uses: as many as asked, or (`None`) every core the
    /// network is big enough for. The bits never depend on it.
    threads: Option<usize>,
    /// The fewest edge operations per sample worth a thread of their own when the thread
    /// count is not given: below it the threads' meeting every block cycle costs more than
    /// they share.
    pub min_edge_ops_per_thread: usize,
}

/// How [`Reference::train`] runs: on `threads` threads, the junctions' rows in `parts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    pub threads: usize,
    pub parts: Vec<Vec<threads::Share>>,
}

/// The default of [`Reference::min_edge_ops_per_thread`].
pub const MIN_EDGE_OPS_PER_THREAD: usize = 4096;

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
pub fn check_staleness(s: &[usize], junctions: usize) -> Result<(), StalenessError> {
    if s.len() != junctions {
        return Err(StalenessError::Entries {
            entries: s.len(),
            junctions,
        });
    }
    if s[junctions - 1] < 1 {
        return Err(StalenessError::LastBelowOne);
    }
    for j in 0..junctions - 1 {
        if s[j] < s[j + 1] + 2 {
            return Err(StalenessError::TooClose {
                junction: j + 1,
                staleness: s[j],
                next: j + 2,
                next_staleness: s[j + 1],
            });
        }
    }
    Ok(())
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
    ) -> Result<Reference, ModelError> {
        state.check_shape(spec)?;
        check_staleness(&staleness, spec.junctions())?;
        let format = spec.format();
        let widest = *spec.layers.iter().max().unwrap();
        let patterns = JunctionPattern::all(spec);
        let widest_junction = patterns.iter().map(|p| p.edges()).max().unwrap();
        Ok(Reference {
            spec: spec.clone(),
            format,
            tables: (1..=spec.junctions())
                .map(|l| spec.activation_table(l))
                .collect(),
            state,
            staleness,
            fast: Fast::new(format, spec.learning_rate_shift, spec.rounding())
                .with_ff_products(spec.ff_products),
            sums: vec![0; widest],
            products: vec![0; widest_junction],
            spread: vec![0; widest_junction],
            lanes: LaneRng::all_seeded(spec.seed, &spec.z),
            streams: patterns
                .iter()
                .map(|p| WordStream::new(p.z, p.edges()))
                .collect(),
            words: patterns.iter().map(|p| vec![0; p.edges()]).collect(),
            patterns,
            threads: None,
            min_edge_ops_per_thread: MIN_EDGE_OPS_PER_THREAD,
        })
    }

    /// Train on `threads` threads (at least one; fewer only where the network has fewer
    /// whole lane steps to share).
    pub fn with_threads(mut self, threads: usize) -> Reference {
        self.set_threads(threads);
        self
    }

    pub fn set_threads(&mut self, threads: usize) {
        self.threads = Some(threads.max(1));
    }

    /// How [`Reference::train`] shares the work out: the threads it runs (one: it trains on
    /// this thread alone) and the parts the junctions' rows are cut into.
    pub fn thread_plan(&self) -> ThreadPlan {
        let threads = self.threads.unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let worth = self.spec.edge_ops_per_sample() / self.min_edge_ops_per_thread.max(1);
            cores.min(worth.max(1))
        });
        let parts = threads::split(&self.patterns, threads * threads::PARTS_PER_THREAD);
        ThreadPlan {
            threads: threads.min(parts.len()),
            parts,
        }
    }

    /// The stochastic-rounding streams where they stand now, `[j][l]`.
    pub fn lanes(&self) -> &[Vec<LaneRng>] {
        &self.lanes
    }

    pub fn staleness(&self) -> &[usize] {
        &self.staleness
    }

    /// Feed-forward of junction `j`: `a_out`/`sp_out` of the right layer from `a_in`.
    /// Public so the criterion benches can time one pass alone.
    pub fn ff(&self, j: usize, a_in: &[i32], a_out: &mut [i32], sp_out: &mut [i32]) {
        let mut x = vec![0; self.patterns[j].edges()];
        kernels::gather(&self.patterns[j].left_of_edge, a_in, &mut x);
        self.ff_gathered(j, &x, &mut vec![0; x.len()], a_out, sp_out);
    }

    /// FF of junction `j` from its edges' left activations `x`.
    /// `t`: scratch of one value per edge.
    fn ff_gathered(
        &self,
        j: usize,
        x: &[i32],
        t: &mut [i32],
        a_out: &mut [i32],
        sp_out: &mut [i32],
    ) {
        let (w, b) = (&self.state.weights[j], &self.state.biases[j]);
        let t = &mut t[..x.len()];
        kernels::ff_sums(self.fast, self.patterns[j].fan_in, w, x, b, t, a_out);
        let table = &self.tables[j];
        for (a, sp) in a_out.iter_mut().zip(sp_out.iter_mut()) {
            (*a, *sp) = activate(table, *a);
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
        let mut x = vec![0; self.patterns[j].edges()];
        kernels::gather(&self.patterns[j].left_of_edge, a_left, &mut x);
        self.bp_up_gathered(j, d, &x, sp_left, d_left);
    }

    /// BP and UP of junction `j` from its edges' left activations `x`.
    fn bp_up_gathered(
        &mut self,
        j: usize,
        d: &[i32],
        x: &[i32],
        sp_left: &[i32],
        d_left: Option<&mut [i32]>,
    ) {
        let (q, p) = (self.fast, &self.patterns[j]);
        let words = &mut self.words[j];
        if q.rounding == Rounding::Stochastic {
            self.streams[j].fill(&mut self.lanes[j], words);
        }
        let (w, b) = (&mut self.state.weights[j], &mut self.state.biases[j]);
        let spread = &mut self.spread[..p.edges()];
        let Some(d_left) = d_left else {
            kernels::update(q, p.fan_in, w, x, words, d, spread, b, None);
            return;
        };
        let sums = &mut self.sums[..p.left];
        kernels::back_and_update(
            q,
            p.fan_in,
            &p.left_of_edge,
            w,
            x,
            words,
            d,
            spread,
            b,
            &mut self.products[..p.edges()],
            sums,
        );
        let (act, f) = (self.spec.activation, self.format);
        for ((dl, &s), &sp) in d_left.iter_mut().zip(sums.iter()).zip(sp_left) {
            *dl = hidden_delta(act, f, sp, s);
        }
    }

    /// Train on one stream of samples (pipeline filled, then drained), as
    /// [`Reference::thread_plan`] says.
    pub fn train(&mut self, data: &Encoded) -> Work {
        let plan = self.thread_plan();
        if plan.threads > 1 && data.len() > 1 {
            return threads::train(self, data, plan.threads, &plan.parts);
        }
        self.train_here(data)
    }

    /// [`Reference::train`] on this thread.
    fn train_here(&mut self, data: &Encoded) -> Work {
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
                x: self.patterns.iter().map(|p| vec![0; p.edges()]).collect(),
                label: 0,
            })
            .collect();
        let depth = ring.len();
        let cycles = s_count + b[0];
        let f = self.format;
        let ends = self.spec.output_delta_ends();
        let mut work = Work::default();
        let mut t = vec![0; self.products.len()];
        for cycle in 0..cycles {
            for j in 0..l {
                if cycle >= j && cycle - j < s_count {
                    let n = cycle - j;
                    let slot = &mut ring[n % depth];
                    if j == 0 {
                        slot.a[0].copy_from_slice(data.input(n));
                        slot.label = data.labels[n];
                    }
                    let (lo, hi) = slot.a.split_at_mut(j + 1);
                    let x = &mut slot.x[j];
                    kernels::gather(&self.patterns[j].left_of_edge, &lo[j], x);
                    self.ff_gathered(j, x, &mut t, &mut hi[0], &mut slot.sp[j + 1]);
                    if j == l - 1 {
                        for (k, (d, &a)) in slot.delta[l].iter_mut().zip(&slot.a[l]).enumerate() {
                            *d = output_delta(f, ends, a, k == slot.label);
                        }
                    }
                    work.edge_ops += self.patterns[j].edges() as u64;
                }
                if cycle >= b[j] && cycle - b[j] < s_count {
                    let n = cycle - b[j];
                    let slot = &mut ring[n % depth];
                    let (dlo, dhi) = slot.delta.split_at_mut(j + 1);
                    let d_left = if j > 0 { Some(&mut dlo[j][..]) } else { None };
                    self.bp_up_gathered(j, &dhi[0], &slot.x[j], &slot.sp[j], d_left);
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
        let mut f = Forward::new(self);
        f.run(self, input).to_vec()
    }

    /// Predicted class of every sample: the first output with the largest activation. On
    /// every core ([`Reference::infer_threads`]).
    pub fn infer(&self, data: &Encoded) -> Vec<usize> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.infer_threads(data, cores)
    }

    /// [`Reference::infer`] on up to `threads` threads, each over a contiguous share of the
    /// samples: inference changes no state, so the predictions do not depend on the split.
    /// Shares are at least [`MIN_SAMPLES_PER_THREAD`] samples, below which a thread costs
    /// more than it saves.
    pub fn infer_threads(&self, data: &Encoded, threads: usize) -> Vec<usize> {
        let n = data.len();
        let threads = threads.clamp(1, n.div_ceil(MIN_SAMPLES_PER_THREAD).max(1));
        let predict = |range: std::ops::Range<usize>| -> Vec<usize> {
            let mut f = Forward::new(self);
            range.map(|k| argmax(f.run(self, data.input(k)))).collect()
        };
        if threads == 1 {
            return predict(0..n);
        }
        let share = n.div_ceil(threads);
        std::thread::scope(|s| {
            let parts: Vec<_> = (0..n)
                .step_by(share)
                .map(|start| s.spawn(move || predict(start..(start + share).min(n))))
                .collect();
            parts
                .into_iter()
                .flat_map(|h| h.join().expect("an inference thread panicked"))
                .collect()
        })
    }
}

/// The fewest samples [`Reference::infer_threads`] gives one thread.
pub const MIN_SAMPLES_PER_THREAD: usize = 64;

/// Buffers of inference, allocated once for many samples.
struct Forward {
    x: Vec<Vec<i32>>,
    t: Vec<i32>,
    a: Vec<Vec<i32>>,
    sp: Vec<i32>,
}

impl Forward {
    fn new(r: &Reference) -> Forward {
        Forward {
            x: r.patterns.iter().map(|p| vec![0; p.edges()]).collect(),
            t: vec![0; r.products.len()],
            a: r.spec.layers.iter().map(|&n| vec![0; n]).collect(),
            sp: vec![0; *r.spec.layers.iter().max().unwrap()],
        }
    }

    /// The output activations of one input.
    fn run(&mut self, r: &Reference, input: &[i32]) -> &[i32] {
        self.a[0].copy_from_slice(input);
        for (j, p) in r.patterns.iter().enumerate() {
            let (lo, hi) = self.a.split_at_mut(j + 1);
            kernels::gather(&p.left_of_edge, &lo[j], &mut self.x[j]);
            let sp = &mut self.sp[..hi[0].len()];
            r.ff_gathered(j, &self.x[j], &mut self.t, &mut hi[0], sp);
        }
        self.a.last().unwrap()
    }
}

/// FF of one junction (pattern `p`, weights `w`, biases `b`, FF products under `products`,
/// its right layer's activation `table`):
/// the right layer's activations `a_out` and σ′ `sp_out` from the left activations `a_in`,
/// edge by edge in the contract's own terms (`Format::ff_product`), apart from the
/// vectorized kernels the model runs. Every runtime that computes a stage of a chain in
/// software calls this.
#[allow(clippy::too_many_arguments)]
pub fn junction_ff(
    f: Format,
    products: FfProducts,
    table: &ActivationTable,
    p: &JunctionPattern,
    w: &[i32],
    b: &[i32],
    a_in: &[i32],
    a_out: &mut [i32],
    sp_out: &mut [i32],
) {
    let fi = p.fan_in;
    let rows = w.chunks_exact(fi).zip(p.left_of_edge.chunks_exact(fi));
    let outs = a_out.iter_mut().zip(sp_out.iter_mut());
    for (((a, sp), (wr, ir)), &bias) in outs.zip(rows).zip(b) {
        let mut acc = bias as i64;
        for (&we, &k) in wr.iter().zip(ir) {
            acc += f.ff_product(products, we, a_in[k as usize]) as i64;
        }
        let (av, spv) = activate(table, f.saturate(acc));
        *a = av;
        *sp = spv;
    }
}

/// How a spec updates its weights and biases: format, learning-rate shift and rounding.
#[derive(Clone, Copy, Debug)]
pub struct UpdateRule {
    pub format: Format,
    pub shift: u32,
    pub rounding: Rounding,
}

impl UpdateRule {
    pub fn of(spec: &Spec) -> UpdateRule {
        UpdateRule {
            format: spec.format(),
            shift: spec.learning_rate_shift,
            rounding: spec.rounding(),
        }
    }

    /// BP (when `sums` is given) and UP of one junction (pattern `p`, weights `w`, biases `b`,
    /// the junction's lane streams `lanes`) for right deltas `d` and left activations
    /// `a_left`. `sums` receives the saturated back-propagated sums of the left layer (before
    /// σ′, which whoever holds the left layer applies). BP reads each weight before UP writes
    /// it. Under stochastic rounding edge `e` draws from lane `e mod z`, each lane in
    /// increasing `e`, and a neuron's bias takes its last edge's word
    /// (`edgeflow_core::rounding`).
    #[allow(clippy::too_many_arguments)]
    pub fn bp_up(
        self,
        p: &JunctionPattern,
        w: &mut [i32],
        b: &mut [i32],
        lanes: &mut [LaneRng],
        d: &[i32],
        a_left: &[i32],
        sums: Option<&mut [i32]>,
    ) {
        let (f, shift) = (self.format, self.shift);
        let q = Fast::new(f, shift, Rounding::Nearest);
        let fi = p.fan_in;
        let rows = w
            .chunks_exact_mut(fi)
            .zip(p.left_of_edge.chunks_exact(fi))
            .zip(d.iter().zip(b.iter_mut()));
        match (self.rounding, sums) {
            (Rounding::Stochastic, mut sums) => {
                if let Some(acc) = sums.as_deref_mut() {
                    acc.fill(0);
                }
                let z = lanes.len();
                let mut lane = 0;
                for ((wr, ir), (&dr, bias)) in rows {
                    for (c, (we, &k)) in wr.iter_mut().zip(ir).enumerate() {
                        let k = k as usize;
                        if let Some(acc) = sums.as_deref_mut() {
                            acc[k] += q.mul(*we, dr);
                        }
                        let word = lanes[lane].next_word();
                        if c + 1 == fi {
                            *bias = bias_update_stochastic(f, *bias, dr, shift, word);
                        }
                        *we = weight_update_stochastic(f, *we, dr, a_left[k], shift, word);
                        lane = if lane + 1 == z { 0 } else { lane + 1 };
                    }
                }
                if let Some(acc) = sums {
                    acc.iter_mut().for_each(|s| *s = q.saturate(*s));
                }
            }
            (Rounding::Nearest, None) => {
                for ((wr, ir), (&dr, bias)) in rows {
                    for (we, &k) in wr.iter_mut().zip(ir) {
                        *we = q.saturate(*we - q.eta(q.mul(dr, a_left[k as usize])));
                    }
                    *bias = q.saturate(*bias - q.eta(dr));
                }
            }
            (Rounding::Nearest, Some(acc)) => {
                acc.fill(0);
                for ((wr, ir), (&dr, bias)) in rows {
                    for (we, &k) in wr.iter_mut().zip(ir) {
                        let k = k as usize;
                        acc[k] += q.mul(*we, dr);
                        *we = q.saturate(*we - q.eta(q.mul(dr, a_left[k])));
                    }
                    *bias = q.saturate(*bias - q.eta(dr));
                }
                acc.iter_mut().for_each(|s| *s = q.saturate(*s));
            }
        }
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

#[path = "reference_threads.rs"]
pub mod threads;

#[cfg(test)]
#[path = "reference_tests.rs"]
mod tests;
