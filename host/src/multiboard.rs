//! Training across several boards in a chain, as a plan (`edgeflow plan`) lays it out: one
//! thread per board runs its stage (a range of junctions) block cycle by block cycle, and
//! the stages exchange, per sample, the boundary layer's activations forward and its
//! back-propagated partial sums backward. The schedule is `Schedule::with_links` of the
//! plan's link delays, so the run is bit-identical to the reference model with the plan's
//! staleness vector; a stage with a link of `d` block cycles on each side runs up to `d + 1`
//! block cycles ahead of its neighbours before it has to wait for them.
//!
//! The arithmetic of a junction is the reference model's own (`junction_ff`,
//! `UpdateRule::bp_up`); each stage keeps the stochastic-rounding lane streams of its
//! junctions, which are those of the whole network (seeded by the global junction index), so
//! where a junction sits changes no bit. The tests hold this runner to the reference model.

use crate::board::Board;
use anyhow::{anyhow, bail, Result};
use edgeflow_core::fixed::{
    hidden_delta, output_delta, Activation, ActivationTable, FfProducts, Format,
};
use edgeflow_core::{Encoded, JunctionPattern, LaneRng, Spec, State};
use edgeflow_reference::reference::{junction_ff, UpdateRule};
use edgeflow_reference::{Reference, Schedule};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Measured figures of one stage over one training stream.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StageTiming {
    /// Time spent computing (FF, BP, UP of the stage's junctions).
    pub compute_seconds: f64,
    /// Time spent waiting for a neighbour's activations or partial sums.
    pub wait_seconds: f64,
    pub block_cycles: u64,
    /// The stage's block cycle in clocks, where a cycle-accurate simulation counted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clocks_per_block_cycle: Option<u64>,
}

/// Values of one sample kept by a stage until its last update there.
struct Slot {
    a: Vec<Vec<i32>>,
    sp: Vec<Vec<i32>>,
    delta: Vec<Vec<i32>>,
    label: usize,
}

/// One board's share: junctions `first..=last` (0-based) and their weights.
pub(crate) struct Stage {
    pub(crate) first: usize,
    pub(crate) last: usize,
    l: usize,
    format: Format,
    ff_products: FfProducts,
    /// Per junction of the stage, its right layer's activation data.
    tables: Vec<ActivationTable>,
    /// Step 6's table ends (`fixed::output_delta_ends`).
    output_ends: Option<(i32, i32)>,
    act: Activation,
    rule: UpdateRule,
    patterns: Vec<JunctionPattern>,
    pub(crate) weights: Vec<Vec<i32>>,
    pub(crate) biases: Vec<Vec<i32>>,
    /// The lane streams of the stage's junctions (`edgeflow_core::rounding`).
    pub(crate) lanes: Vec<Vec<LaneRng>>,
    layers: Vec<usize>,
}

/// Where a stage's boundary vectors come from and go to: channels between the threads of
/// one process here, MPI messages between ranks in `multiboard_mpi`. `n` is the sample.
pub(crate) trait StageLinks {
    /// The left neighbour's activations of the stage's first layer.
    fn recv_left(&mut self, n: usize) -> Result<Vec<i32>>;
    fn send_right(&mut self, n: usize, a: &[i32]) -> Result<()>;
    /// The right neighbour's back-propagated sums of the stage's last layer.
    fn recv_right(&mut self, n: usize) -> Result<Vec<i32>>;
    fn send_left(&mut self, n: usize, sums: &[i32]) -> Result<()>;
}

struct Ports {
    from_left: Option<Receiver<Vec<i32>>>,
    to_left: Option<Sender<Vec<i32>>>,
    from_right: Option<Receiver<Vec<i32>>>,
    to_right: Option<Sender<Vec<i32>>>,
}

fn port<'a, T>(p: &'a Option<T>, side: &str) -> Result<&'a T> {
    p.as_ref()
        .ok_or_else(|| anyhow!("the stage has no {side} neighbour"))
}

impl StageLinks for Ports {
    fn recv_left(&mut self, _: usize) -> Result<Vec<i32>> {
        port(&self.from_left, "left")?
            .recv()
            .map_err(|_| anyhow!("the left stage stopped early"))
    }
    fn send_right(&mut self, _: usize, a: &[i32]) -> Result<()> {
        port(&self.to_right, "right")?
            .send(a.to_vec())
            .map_err(|_| anyhow!("the right stage stopped early"))
    }
    fn recv_right(&mut self, _: usize) -> Result<Vec<i32>> {
        port(&self.from_right, "right")?
            .recv()
            .map_err(|_| anyhow!("the right stage stopped early"))
    }
    fn send_left(&mut self, _: usize, sums: &[i32]) -> Result<()> {
        port(&self.to_left, "left")?
            .send(sums.to_vec())
            .map_err(|_| anyhow!("the left stage stopped early"))
    }
}

impl Stage {
    /// Junctions `a..=b` of `spec` with their weights from `state` and lane streams from
    /// `lanes` (every junction's).
    pub(crate) fn new(
        spec: &Spec,
        state: &State,
        lanes: &[Vec<LaneRng>],
        (a, b): (usize, usize),
    ) -> Stage {
        Stage {
            first: a,
            last: b,
            l: spec.junctions(),
            format: spec.format(),
            ff_products: spec.ff_products,
            tables: (a..=b).map(|j| spec.activation_table(j + 1)).collect(),
            output_ends: spec.output_delta_ends(),
            act: spec.activation,
            rule: UpdateRule::of(spec),
            patterns: JunctionPattern::all(spec)[a..=b].to_vec(),
            weights: state.weights[a..=b].to_vec(),
            biases: state.biases[a..=b].to_vec(),
            lanes: lanes[a..=b].to_vec(),
            layers: spec.layers.clone(),
        }
    }

    /// FF alone through the stage for `count` samples (sample-major): the first layer's
    /// activations in, the last layer's out.
    #[cfg(feature = "mpi")]
    pub(crate) fn infer(&self, a_in: &[i32]) -> Vec<i32> {
        let n_in = self.layers[self.first];
        let mut out = Vec::with_capacity(a_in.len() / n_in * self.layers[self.last + 1]);
        let mut a: Vec<Vec<i32>> = self.layers.iter().map(|&n| vec![0; n]).collect();
        let mut sp = a.clone();
        for x in a_in.chunks(n_in) {
            a[self.first].copy_from_slice(x);
            for j in self.first..=self.last {
                let (lo, hi) = a.split_at_mut(j + 1);
                self.ff(j, &lo[j], &mut hi[0], &mut sp[j + 1]);
            }
            out.extend_from_slice(&a[self.last + 1]);
        }
        out
    }

    fn local(&self, j: usize) -> usize {
        j - self.first
    }

    fn ff(&self, j: usize, a_in: &[i32], a_out: &mut [i32], sp_out: &mut [i32]) {
        let k = self.local(j);
        let table = &self.tables[k];
        let (p, w, b) = (&self.patterns[k], &self.weights[k], &self.biases[k]);
        let (f, rule) = (self.format, self.ff_products);
        junction_ff(f, rule, table, p, w, b, a_in, a_out, sp_out);
    }

    /// BP (when `sums` is given) and UP of junction `j`; `sums` receives the saturated
    /// back-propagated sums of the left layer.
    fn bp_up(&mut self, j: usize, d: &[i32], a_left: &[i32], sums: Option<&mut Vec<i32>>) {
        let k = self.local(j);
        let sums = sums.map(|v| {
            v.resize(a_left.len(), 0);
            &mut v[..]
        });
        self.rule.bp_up(
            &self.patterns[k],
            &mut self.weights[k],
            &mut self.biases[k],
            &mut self.lanes[k],
            d,
            a_left,
            sums,
        );
    }

    /// Train the stage on a stream of `s_count` samples on the schedule (`ff`, `bp` offsets of
    /// every junction). Only the stage holding the first junction reads `inputs` (sample-major)
    /// and only the one holding the last reads `labels`; the others may pass empty slices.
    pub(crate) fn run(
        &mut self,
        s_count: usize,
        inputs: &[i32],
        labels: &[usize],
        sched: &Schedule,
        links: &mut dyn StageLinks,
    ) -> Result<StageTiming> {
        let (first, last, l) = (self.first, self.last, self.l);
        let begin = sched.ff[first];
        let end = sched.bp[first] + s_count; // exclusive
        let depth = sched.bp[first] - sched.ff[first] + 1;
        let mut ring: Vec<Slot> = (0..depth.min(s_count.max(1)))
            .map(|_| Slot {
                a: self.layers.iter().map(|&n| vec![0; n]).collect(),
                sp: self.layers.iter().map(|&n| vec![0; n]).collect(),
                delta: self.layers.iter().map(|&n| vec![0; n]).collect(),
                label: 0,
            })
            .collect();
        let depth = ring.len();
        let f = self.format;
        let mut wait = Duration::ZERO;
        let mut sums = Vec::new();
        let t_start = Instant::now();
        for t in begin..end {
            for j in first..=last {
                if t >= sched.ff[j] && t - sched.ff[j] < s_count {
                    let n = t - sched.ff[j];
                    let slot = &mut ring[n % depth];
                    if j == first {
                        if j == 0 {
                            let n0 = slot.a[0].len();
                            slot.a[0].copy_from_slice(&inputs[n * n0..(n + 1) * n0]);
                        } else {
                            let t0 = Instant::now();
                            let v = links.recv_left(n)?;
                            wait += t0.elapsed();
                            slot.a[j].copy_from_slice(&v);
                        }
                    }
                    if j == l - 1 {
                        slot.label = labels[n];
                    }
                    let (lo, hi) = slot.a.split_at_mut(j + 1);
                    self.ff(j, &lo[j], &mut hi[0], &mut slot.sp[j + 1]);
                    if j == l - 1 {
                        let label = slot.label;
                        for (k, (d, &a)) in slot.delta[l].iter_mut().zip(&slot.a[l]).enumerate() {
                            *d = output_delta(f, self.output_ends, a, k == label);
                        }
                    }
                    if j == last && j + 1 < l {
                        links.send_right(n, &slot.a[j + 1])?;
                    }
                }
                if t >= sched.bp[j] && t - sched.bp[j] < s_count {
                    let n = t - sched.bp[j];
                    let slot = &mut ring[n % depth];
                    if j == last && j + 1 < l {
                        // The right board's partial sums become this layer's deltas here,
                        // where σ′ was kept.
                        let t0 = Instant::now();
                        let v = links.recv_right(n)?;
                        wait += t0.elapsed();
                        for ((d, &s), &sp) in
                            slot.delta[j + 1].iter_mut().zip(&v).zip(&slot.sp[j + 1])
                        {
                            *d = hidden_delta(self.act, f, sp, s);
                        }
                    }
                    let back = j > 0;
                    let d = std::mem::take(&mut slot.delta[j + 1]);
                    self.bp_up(j, &d, &slot.a[j], if back { Some(&mut sums) } else { None });
                    slot.delta[j + 1] = d;
                    if back {
                        if j == first {
                            links.send_left(n, &sums)?;
                        } else {
                            for ((d, &s), &sp) in
                                slot.delta[j].iter_mut().zip(&sums).zip(&slot.sp[j])
                            {
                                *d = hidden_delta(self.act, f, sp, s);
                            }
                        }
                    }
                }
            }
        }
        let total = t_start.elapsed();
        Ok(StageTiming {
            compute_seconds: (total - wait).as_secs_f64(),
            wait_seconds: wait.as_secs_f64(),
            block_cycles: (end - begin) as u64,
            clocks_per_block_cycle: None,
        })
    }
}

/// Train `state` on `data` with the junctions split into `stages` (0-based, inclusive ranges
/// covering every junction in order) and `link_delay[j]` block cycles between junction `j`
/// and `j+1`. `lanes` (every junction's, `LaneRng::all_seeded` at the start of a training
/// run) advance with the updates. Returns the new state and each stage's timing.
pub fn train_pipeline(
    spec: &Spec,
    state: &State,
    lanes: &mut [Vec<LaneRng>],
    stages: &[(usize, usize)],
    link_delay: &[usize],
    data: &Encoded,
) -> Result<(State, Vec<StageTiming>)> {
    let l = spec.junctions();
    if link_delay.len() + 1 != l {
        bail!(
            "link delays: {} entries for {l} junctions (need {})",
            link_delay.len(),
            l - 1
        );
    }
    let mut next = 0;
    for &(a, b) in stages {
        if a != next || b < a || b >= l {
            bail!("stages {stages:?} do not cover junctions 1..{l} in order");
        }
        next = b + 1;
    }
    if next != l {
        bail!("stages {stages:?} do not cover all {l} junctions");
    }
    state.check_shape(spec)?;
    if lanes.len() != l || lanes.iter().zip(&spec.z).any(|(v, &z)| v.len() != z) {
        bail!("lane streams do not match the spec's lanes {:?}", spec.z);
    }
    let sched = Schedule::with_links(link_delay);
    let mut workers: Vec<(Stage, Ports)> = stages
        .iter()
        .map(|&r| {
            (
                Stage::new(spec, state, lanes, r),
                Ports {
                    from_left: None,
                    to_left: None,
                    from_right: None,
                    to_right: None,
                },
            )
        })
        .collect();
    for i in 0..workers.len().saturating_sub(1) {
        let (fwd_tx, fwd_rx) = channel();
        let (bwd_tx, bwd_rx) = channel();
        workers[i].1.to_right = Some(fwd_tx);
        workers[i].1.from_right = Some(bwd_rx);
        workers[i + 1].1.from_left = Some(fwd_rx);
        workers[i + 1].1.to_left = Some(bwd_tx);
    }
    let results: Vec<(Stage, Result<StageTiming>)> = std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|(mut st, mut ports)| {
                let sched = &sched;
                s.spawn(move || {
                    let t = st.run(data.len(), &data.inputs, &data.labels, sched, &mut ports);
                    (st, t)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a stage thread panicked"))
            .collect()
    });
    let mut out = state.clone();
    let mut timings = Vec::new();
    for (st, t) in results {
        let t = t?;
        for (k, j) in (st.first..=st.last).enumerate() {
            out.weights[j] = st.weights[k].clone();
            out.biases[j] = st.biases[k].clone();
            lanes[j] = st.lanes[k].clone();
        }
        timings.push(t);
    }
    Ok((out, timings))
}

/// Several boards joined in a chain, each running its stage on its own thread with the
/// reference arithmetic: the `reference` backend of `edgeflow train --plan`.
pub struct PipelineBoard {
    pub spec: Spec,
    pub state: State,
    /// Every junction's lane streams, restarted whenever the weights are set.
    pub lanes: Vec<Vec<LaneRng>>,
    pub stages: Vec<(usize, usize)>,
    pub link_delay: Vec<usize>,
    /// Timings of every training stream so far, per stage (summed); shared so a caller keeps
    /// a handle after boxing the board.
    pub timings: Arc<Mutex<Vec<StageTiming>>>,
    pub samples: u64,
}

impl PipelineBoard {
    pub fn new(spec: &Spec, stages: Vec<(usize, usize)>, link_delay: Vec<usize>) -> PipelineBoard {
        PipelineBoard {
            spec: spec.clone(),
            state: State::initial(spec),
            lanes: LaneRng::all_seeded(spec.seed, &spec.z),
            timings: Arc::new(Mutex::new(vec![StageTiming::default(); stages.len()])),
            stages,
            link_delay,
            samples: 0,
        }
    }

    pub fn staleness(&self) -> Vec<usize> {
        Schedule::with_links(&self.link_delay).staleness()
    }
}

impl Board for PipelineBoard {
    fn name(&self) -> String {
        format!("reference x{} boards", self.stages.len())
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        state.check_shape(&self.spec)?;
        self.state = state.clone();
        self.lanes = LaneRng::all_seeded(self.spec.seed, &self.spec.z);
        Ok(())
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        let (s, t) = train_pipeline(
            &self.spec,
            &self.state,
            &mut self.lanes,
            &self.stages,
            &self.link_delay,
            data,
        )?;
        self.state = s;
        for (acc, t) in self.timings.lock().unwrap().iter_mut().zip(t) {
            acc.compute_seconds += t.compute_seconds;
            acc.wait_seconds += t.wait_seconds;
            acc.block_cycles += t.block_cycles;
        }
        self.samples += data.len() as u64;
        Ok(())
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        let r = Reference::with_state(&self.spec, self.state.clone(), self.staleness())?;
        Ok(r.infer(data))
    }
    fn read_state(&mut self) -> Result<State> {
        Ok(self.state.clone())
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.spec.edge_ops_per_sample() as u64
    }
}

#[cfg(test)]
#[path = "multiboard_tests.rs"]
mod tests;
