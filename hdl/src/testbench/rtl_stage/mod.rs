//! Several RTL-simulated boards trained as one pipeline: each board is an `hdl::stage::Stage`
//! (a junction range on the chain's schedule, with boundary ports) clocked in rust-hdl's
//! signal-level simulation, and this runtime carries the links between them.
//!
//! Every block cycle `t` of the chain, in this order:
//! 1. each stage with a left port reads out (and clears) the delta sums its first junction
//!    accumulated in block cycle `t - 1`; they enter the backward link;
//! 2. stage by stage, upstream first: between block cycles it receives the delta sums its
//!    last junction's BP needs in `t` (from the backward link), the activations its first
//!    junction's FF needs in `t + 1` (from the forward link), the input sample and label of
//!    block cycle `t`; then it runs block cycle `t`, and the activations its last junction
//!    produced enter the forward link.
//!
//! A link of `d` block cycles hands a vector over exactly `d` block cycles after it entered
//! (checked for every vector), which is `sim::Schedule::with_links`: the run is bit-identical
//! to the reference model with the chain's staleness vector. With `d = 0` the upstream-first
//! order of step 2 and the readout of step 1 make the hand-over happen within the block
//! cycle, as the wires of one board would.

use crate::fixed::{b16, s16, s32};
use crate::params::JunctionParams;
use crate::stage::Stage;
use crate::testbench::error::SimError;
use crate::testing::settle;
use edgeflow_core::{Spec, State};
use edgeflow_reference::Schedule;
use rust_hdl::core::prelude::*;
use std::time::Instant;

mod chain;
mod replay;
mod stream;
pub use chain::{check_chain, check_chain_from, ChainReport, RtlChain};
pub use replay::{iverilog_replay, ports};
pub use stream::StageIo;

/// What one simulated stage measured over a stream.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StageStats {
    /// Block cycles the stage ran.
    pub block_cycles: u64,
    /// Clocks inside block cycles (the datapath working).
    pub block_clocks: u64,
    /// Clocks spent between block cycles on the boundary ports and loading samples.
    pub port_clocks: u64,
    /// The stage's block cycle, in clocks, as its controller ran it (largest seen).
    pub clocks_per_block_cycle: u64,
    /// Wall-clock seconds simulating this stage.
    pub seconds: f64,
    /// Delta sums the left port saturated on their way onto the link.
    pub saturated_sums: u64,
}

/// One board of the chain: a stage in simulation.
pub struct StageSim {
    pub stage: Box<Stage>,
    pub first: usize,
    pub last: usize,
    ff: Vec<usize>,
    bp: Vec<usize>,
    ps: Vec<JunctionParams>,
    layers: Vec<usize>,
    in_copies: usize,
    lab_copies: usize,
    pub stats: StageStats,
    /// Clock edges simulated so far.
    pub clocks: u64,
    /// With [`StageSim::record`]: every clock's input and output ports just before its rising
    /// edge, to replay on the stage's Verilog.
    pub trace: Option<Vec<(Vec<u64>, Vec<u64>)>>,
}

impl StageSim {
    pub fn new(spec: &Spec, first: usize, last: usize, sched: &Schedule) -> StageSim {
        let mut stage = Box::new(Stage::new(spec, first..=last, &sched.ff, &sched.bp));
        stage.connect_all();
        settle(stage.as_mut());
        let ps: Vec<JunctionParams> = (first..=last)
            .map(|j| JunctionParams::with_schedule(spec, j, &sched.ff, &sched.bp))
            .collect();
        StageSim {
            first,
            last,
            ff: sched.ff.clone(),
            bp: sched.bp.clone(),
            in_copies: ps[0].act_copies,
            lab_copies: sched.bp[0] - sched.ff[0] + 3,
            ps,
            layers: spec.layers.clone(),
            stage,
            stats: StageStats::default(),
            clocks: 0,
            trace: None,
        }
    }

    /// Record every clock from now on (`trace`).
    pub fn record(&mut self) {
        self.trace = Some(Vec::new());
    }

    fn tick(&mut self) {
        if let Some(tr) = self.trace.as_mut() {
            let (i, o) = ports(&self.stage);
            tr.push((
                i.iter().map(|p| p.2).collect(),
                o.iter().map(|p| p.2).collect(),
            ));
        }
        let s = self.stage.as_mut();
        s.clock.next = Clock { clk: true };
        settle(s);
        s.clock.next = Clock { clk: false };
        // nothing happens on a falling edge; it settles together with the next inputs
        self.clocks += 1;
    }

    /// A clock between block cycles (the ports' work).
    fn port_tick(&mut self) {
        settle(self.stage.as_mut());
        self.tick();
        self.stats.port_clocks += 1;
    }

    /// Write every weight and bias of the stage's junctions from `state`.
    pub fn load_state(&mut self, state: &State) {
        let t0 = Instant::now();
        for (k, j) in (self.first..=self.last).enumerate() {
            let p = self.ps[k].clone();
            self.stage.h_sel[k].next = true;
            self.stage.h_we.next = true;
            for (bias, vals, banks) in [
                (false, &state.weights[j], p.z),
                (true, &state.biases[j], p.groups),
            ] {
                for (i, &v) in vals.iter().enumerate() {
                    let s = self.stage.as_mut();
                    s.h_bias.next = bias;
                    s.h_bank.next = b16((i % banks) as i32);
                    s.h_addr.next = b16((i / banks) as i32);
                    s.h_wdata.next = b16(v);
                    self.port_tick();
                }
            }
            self.stage.h_we.next = false;
            self.stage.h_sel[k].next = false;
        }
        settle(self.stage.as_mut());
        self.stats.seconds += t0.elapsed().as_secs_f64();
    }

    /// Read every weight and bias of the stage's junctions into `state`.
    pub fn read_state(&mut self, state: &mut State) {
        let t0 = Instant::now();
        for (k, j) in (self.first..=self.last).enumerate() {
            let p = self.ps[k].clone();
            self.stage.h_sel[k].next = true;
            for (bias, banks) in [(false, p.z), (true, p.groups)] {
                let vals = if bias {
                    &mut state.biases[j]
                } else {
                    &mut state.weights[j]
                };
                for (i, v) in vals.iter_mut().enumerate() {
                    let s = self.stage.as_mut();
                    s.h_bias.next = bias;
                    s.h_bank.next = b16((i % banks) as i32);
                    s.h_addr.next = b16((i / banks) as i32);
                    // synchronous-read RAM: the address is taken at this edge
                    self.port_tick();
                    settle(self.stage.as_mut());
                    *v = s16(self.stage.h_rdata[k].val());
                }
            }
            self.stage.h_sel[k].next = false;
        }
        settle(self.stage.as_mut());
        self.stats.seconds += t0.elapsed().as_secs_f64();
    }

    /// Start a stream of `samples` (train or infer): the stage waits before block cycle 0.
    pub fn begin(&mut self, samples: usize, train: bool) {
        let s = self.stage.as_mut();
        s.allow.next = Bits::<32>::from(0u64);
        s.go.next = true;
        s.go_train.next = train;
        s.go_samples.next = b16(samples as i32);
        self.port_tick();
        self.stage.go.next = false;
        settle(self.stage.as_mut());
    }

    /// Input sample `n` into the first junction's copy for it.
    fn write_input(&mut self, n: usize, x: &[i32]) {
        let c = n % self.in_copies;
        for (i, &v) in x.iter().enumerate() {
            let s = self.stage.as_mut();
            s.in_we.next = true;
            s.in_copy.next = b16(c as i32);
            s.in_addr.next = b16(i as i32);
            s.in_data.next = b16(v);
            self.port_tick();
        }
        self.stage.in_we.next = false;
    }

    fn write_label(&mut self, n: usize, label: usize) {
        let s = self.stage.as_mut();
        s.lab_we.next = true;
        s.lab_copy.next = b16((n % self.lab_copies) as i32);
        s.lab_data.next = b16(label as i32);
        self.port_tick();
        self.stage.lab_we.next = false;
    }

    /// Left port: activations of the sample the first junction's FF runs next block cycle,
    /// `g` neurons per clock as the previous junction's FF would write them.
    fn write_left(&mut self, a: &[i32]) {
        let g = self.stage.left.len();
        for row in 0..a.len() / g {
            for q in 0..g {
                let s = self.stage.as_mut();
                s.left[q].w_en.next = true;
                s.left[q].w_addr.next = b16((row * g + q) as i32);
                s.left[q].w_a.next = b16(a[row * g + q]);
            }
            self.port_tick();
        }
        for q in 0..g {
            self.stage.left[q].w_en.next = false;
        }
    }

    /// Left port: the delta sums the first junction's BP accumulated in the last block cycle,
    /// read and cleared.
    fn read_left(&mut self) -> Vec<i32> {
        let g = self.stage.left.len();
        let n = self.layers[self.first];
        let mut out = vec![0; n];
        for row in 0..n / g {
            for q in 0..g {
                let s = self.stage.as_mut();
                s.left[q].q_addr.next = b16((row * g + q) as i32);
                s.left[q].q_clear.next = true;
            }
            settle(self.stage.as_mut());
            for q in 0..g {
                out[row * g + q] = s16(self.stage.left[q].q_sum.val());
                let wide = s32(self.stage.junctions[0].left[q].q_acc.val());
                self.stats.saturated_sums += (wide != out[row * g + q] as i64) as u64;
            }
            self.port_tick();
        }
        for q in 0..g {
            self.stage.left[q].q_clear.next = false;
        }
        out
    }

    /// Right port: the delta sums of the sample the last junction's BP runs in block cycle
    /// `t`, into the copy of `t`'s parity.
    fn write_right(&mut self, t: usize, d: &[i32]) {
        for (i, &v) in d.iter().enumerate() {
            let s = self.stage.as_mut();
            s.d_we.next = true;
            s.d_copy.next = b16((t % 2) as i32);
            s.d_addr.next = b16(i as i32);
            s.d_data.next = b16(v);
            self.port_tick();
        }
        self.stage.d_we.next = false;
    }

    /// Run block cycle `t`; returns the activations the last junction's FF wrote to the right
    /// port (if it ran and the stage has one) and the prediction at the block cycle's end
    /// (the output layer's first largest activation, when this stage holds it).
    fn run_block(&mut self, t: usize) -> Result<(Option<Vec<i32>>, usize), SimError> {
        let s = self.stage.as_mut();
        s.allow.next = Bits::<32>::from((t + 1) as u64);
        settle(s);
        let n_right = self.layers[self.last + 1];
        let g = self.stage.right.len();
        let mut out = vec![0; n_right];
        let mut wrote = 0;
        let mut clocks = 0u64;
        let limit = 4 + 2 * self.stage.block_cycle_clocks() as u64;
        let mut waited = 0;
        loop {
            settle(self.stage.as_mut());
            let s = &*self.stage;
            if s.adv.val() {
                clocks += 1;
                for q in 0..g {
                    if s.right[q].w_en.val() {
                        out[s.right[q].w_addr.val().index()] = s16(s.right[q].w_a.val());
                        wrote += 1;
                    }
                }
                if s.last.val() {
                    let pred = s.pred.val().index();
                    self.tick();
                    self.stats.block_clocks += clocks;
                    self.stats.block_cycles += 1;
                    self.stats.clocks_per_block_cycle =
                        self.stats.clocks_per_block_cycle.max(clocks);
                    let out = if wrote == 0 {
                        None
                    } else if wrote == n_right {
                        Some(out)
                    } else {
                        return Err(SimError::PartialWrite {
                            first: self.first + 1,
                            last: self.last + 1,
                            t,
                            wrote,
                            right: n_right,
                        });
                    };
                    return Ok((out, pred));
                }
                self.tick();
            } else {
                waited += 1;
                if waited > limit || clocks > 0 {
                    return Err(SimError::NotRun {
                        first: self.first + 1,
                        last: self.last + 1,
                        t,
                        started: s.started.val().to_u32(),
                    });
                }
                self.port_tick();
            }
        }
    }

    /// Sample whose FF junction `j` runs in block cycle `t`, if any.
    fn ff_sample(&self, j: usize, t: usize, samples: usize) -> Option<usize> {
        (t >= self.ff[j] && t - self.ff[j] < samples).then(|| t - self.ff[j])
    }

    fn bp_sample(&self, j: usize, t: usize, samples: usize) -> Option<usize> {
        (t >= self.bp[j] && t - self.bp[j] < samples).then(|| t - self.bp[j])
    }
}

type Port = (String, usize, u64);

#[cfg(test)]
mod tests;
