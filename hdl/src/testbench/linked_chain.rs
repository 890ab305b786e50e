//! Several boards joined by their own links, in one simulation: each board a linked stage
//! (link/linked_stage.rs) on its own clock, periods in picoseconds so oscillators a few
//! hundred ppm apart are exact. The host only feeds the first board its inputs and the last
//! its labels, and reads predictions from the last; every boundary vector crosses on the
//! link pins, bit by bit, as on the boards. Faults can be injected on any link's wires.

use super::error::SimError;
use crate::fixed::{b16, s16};
use crate::link::bench::Beat;
use crate::link::boundary::BoundaryParams;
use crate::link::linked_stage::{boundary_params, LinkPins, LinkedStage, LINK_TIMEOUT_CLOCKS};
use crate::params::JunctionParams;
use crate::testing::settle;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_reference::Schedule;
use rust_hdl::prelude::*;

/// Which wires of which link a fault rewrites: link `k` joins board `k` and `k + 1`;
/// `forward` the activations, else the delta sums.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaultSite {
    pub link: usize,
    pub forward: bool,
}

/// Rewrites the `n`-th beat (counting from 0) its sender put on the wire.
pub type LinkFault = Box<dyn FnMut(u64, &mut Beat)>;

/// Per board, what the run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BoardRun {
    /// Rising edges of the board's clock over the stream.
    pub clocks: u64,
    /// Clocks inside block cycles.
    pub block_clocks: u64,
    pub block_cycles: u64,
    pub clock_period_ps: u64,
}

/// The linked stage with the smallest link FIFO (`LINK_FIFO_BITS`).
pub type Stage9<const W: usize> = LinkedStage<W, 9, 10>;

pub struct LinkedChain<const W: usize> {
    pub spec: Spec,
    pub ranges: Vec<(usize, usize)>,
    pub schedule: Schedule,
    pub boards: Vec<Box<Stage9<W>>>,
    params: Vec<BoundaryParams>,
    half_ps: Vec<u64>,
    next_ps: Vec<u64>,
    high: Vec<bool>,
    /// Simulated time, picoseconds.
    pub now_ps: u64,
    pub runs: Vec<BoardRun>,
    fault: Option<(FaultSite, LinkFault)>,
    /// Beats put on each faultable wire so far, and the one there now.
    beats: u64,
    on_wire: Option<u64>,
}

impl<const W: usize> LinkedChain<W> {
    /// `stages`: 0-based inclusive junction ranges covering the network; `link_delay[j]`:
    /// block cycles between junction `j` and `j + 1` (0 inside a stage); `periods_ps[i]`:
    /// board `i`'s clock period (even).
    pub fn new(
        spec: &Spec,
        stages: &[(usize, usize)],
        link_delay: &[usize],
        periods_ps: &[u64],
    ) -> Self {
        assert_eq!(stages.len(), periods_ps.len());
        assert_eq!(link_delay.len() + 1, spec.junctions());
        let schedule = Schedule::with_links(link_delay);
        let mut boards = Vec::new();
        let mut params = Vec::new();
        for &(a, b) in stages {
            let mut s = Box::new(Stage9::<W>::new(
                spec,
                a..=b,
                &schedule.ff,
                &schedule.bp,
                LINK_TIMEOUT_CLOCKS,
            ));
            s.connect_all();
            settle(s.as_mut());
            boards.push(s);
            params.push(boundary_params(spec, &(a..=b), &schedule.ff, &schedule.bp));
        }
        let k = stages.len();
        let mut c = LinkedChain {
            spec: spec.clone(),
            ranges: stages.to_vec(),
            schedule,
            boards,
            params,
            half_ps: periods_ps
                .iter()
                .map(|&p| {
                    assert!(p % 2 == 0, "clock periods are even picoseconds");
                    p / 2
                })
                .collect(),
            // staggered first edges: the boards do not start in phase
            next_ps: (0..k as u64).map(|i| 1000 + 7919 * i).collect(),
            high: vec![false; k],
            now_ps: 0,
            runs: periods_ps
                .iter()
                .map(|&p| BoardRun {
                    clock_period_ps: p,
                    ..Default::default()
                })
                .collect(),
            fault: None,
            beats: 0,
            on_wire: None,
        };
        for i in 0..k {
            c.carry(i);
        }
        c
    }

    /// Rewrite beats on one link's wires from now on.
    pub fn inject(&mut self, site: FaultSite, fault: LinkFault) {
        assert!(site.link + 1 < self.boards.len(), "no link {}", site.link);
        self.fault = Some((site, fault));
        self.beats = 0;
        self.on_wire = None;
    }

    /// One clock of board `i` alone (weights in and out; no link carries anything then).
    fn tick_alone(&mut self, i: usize) {
        let b = self.boards[i].as_mut();
        settle(b);
        b.clock.next = true.into();
        settle(b);
        b.clock.next = false.into();
        settle(b);
    }

    /// Write every weight and bias of each board's junctions from `state`.
    pub fn load_state(&mut self, state: &State) -> Result<(), SimError> {
        state.check_shape(&self.spec)?;
        for (i, &range) in self.ranges.clone().iter().enumerate() {
            for c in weight_cells(&self.spec, &self.schedule, range) {
                let s = self.boards[i].as_mut();
                s.h_sel[c.junction].next = true;
                s.h_we.next = true;
                s.h_bias.next = c.bias;
                s.h_bank.next = b16(c.bank as i32);
                s.h_addr.next = b16(c.addr as i32);
                s.h_wdata.next = b16(c.get(state));
                self.tick_alone(i);
                let s = self.boards[i].as_mut();
                s.h_we.next = false;
                s.h_sel[c.junction].next = false;
            }
        }
        Ok(())
    }

    /// Read every weight and bias back.
    pub fn read_state(&mut self) -> State {
        let mut st = State::initial(&self.spec);
        for (i, &range) in self.ranges.clone().iter().enumerate() {
            for c in weight_cells(&self.spec, &self.schedule, range) {
                let s = self.boards[i].as_mut();
                s.h_sel[c.junction].next = true;
                s.h_bias.next = c.bias;
                s.h_bank.next = b16(c.bank as i32);
                s.h_addr.next = b16(c.addr as i32);
                // synchronous-read RAM: the address is taken at this edge
                self.tick_alone(i);
                c.set(&mut st, s16(self.boards[i].h_rdata[c.junction].val()));
                self.boards[i].h_sel[c.junction].next = false;
            }
        }
        st
    }

    /// Carry the wires between board `i` and its neighbours after `i` changed.
    fn carry(&mut self, i: usize) {
        let k = self.boards.len();
        if i + 1 < k {
            self.carry_link(i, true);
            self.carry_link(i, false);
        }
        if i > 0 {
            self.carry_link(i - 1, true);
            self.carry_link(i - 1, false);
        }
    }

    /// Link `l` (boards `l`, `l + 1`), one direction: sender pins to receiver, credit back.
    fn carry_link(&mut self, l: usize, forward: bool) {
        let (left, right) = self.boards.split_at_mut(l + 1);
        let on_wire = self.on_wire;
        let fault = self
            .fault
            .as_mut()
            .filter(|(site, _)| site.link == l && site.forward == forward);
        carry_wires::<W, _>(left[l].as_mut(), right[0].as_mut(), forward, |beat| {
            if let (Some(n), Some((_, f))) = (on_wire, fault) {
                f(n, beat);
            }
        });
    }

    /// Train (FF, BP, UP) or infer one stream over `data`, every board on its own clock, until
    /// every board is done; predictions of the inference. Fails when a board reports a link
    /// error, or nothing finishes within `max_clocks` clocks of the first board.
    pub fn run(
        &mut self,
        data: &Encoded,
        train: bool,
        max_clocks: u64,
    ) -> Result<Vec<usize>, SimError> {
        let k = self.boards.len();
        let samples = data.len();
        if samples == 0 || samples > 65535 {
            return Err(SimError::StreamSamples { samples });
        }
        let feeds: Vec<Vec<u16>> = (0..k).map(|i| feed(&self.params[i], data, train)).collect();
        let mut fed = vec![0usize; k];
        let mut pending_go = vec![true; k];
        let mut started = vec![false; k];
        let mut pred = Vec::new();
        let start_clocks: Vec<u64> = self.runs.iter().map(|r| r.clocks).collect();
        loop {
            let i = (0..k).min_by_key(|&i| self.next_ps[i]).unwrap();
            self.now_ps = self.next_ps[i];
            self.next_ps[i] += self.half_ps[i];
            let rising = !self.high[i];
            self.high[i] = rising;
            if rising {
                let b = self.boards[i].as_mut();
                b.go.next = pending_go[i];
                b.go_train.next = train;
                b.go_samples.next = b16(samples as i32);
                b.feed.valid.next = fed[i] < feeds[i].len();
                b.feed.data.next = (*feeds[i].get(fed[i]).unwrap_or(&0) as u64).into();
                settle(b);
                if b.feed.valid.val() && b.feed.ready.val() {
                    fed[i] += 1;
                }
                if b.pred_valid.val() {
                    pred.push(b.pred.val().index());
                }
                let run = &mut self.runs[i];
                run.clocks += 1;
                if b.stage.adv.val() {
                    run.block_clocks += 1;
                    run.block_cycles += b.stage.last.val() as u64;
                }
                if b.failed.val() {
                    return Err(SimError::LinkFailed {
                        board: i + 1,
                        prev_error: b.prev_error.val().index() as u64,
                        next_error: b.next_error.val().index() as u64,
                    });
                }
                started[i] |= pending_go[i];
                let finished = started[i] && !pending_go[i] && b.done.val();
                pending_go[i] = false;
                b.clock.next = true.into();
                settle(b);
                if self.fault.as_ref().is_some_and(|(s, _)| {
                    (s.forward && s.link == i) || (!s.forward && s.link + 1 == i)
                }) {
                    let b = &self.boards[i];
                    let valid = if self.fault.as_ref().unwrap().0.forward {
                        b.to_next[0].valid.val()
                    } else {
                        b.to_prev[0].valid.val()
                    };
                    self.on_wire = None;
                    if valid {
                        self.on_wire = Some(self.beats);
                        self.beats += 1;
                    }
                }
                if finished && (0..k).all(|j| started[j] && self.boards[j].done.val()) {
                    break;
                }
            } else {
                let b = self.boards[i].as_mut();
                b.clock.next = false.into();
                settle(b);
            }
            self.carry(i);
            if self.runs[0].clocks - start_clocks[0] > max_clocks {
                return Err(SimError::LinkedStopped {
                    clocks: max_clocks,
                    done: (0..k).map(|j| self.boards[j].done.val()).collect(),
                });
            }
        }
        Ok(pred)
    }
}

/// One direction of the link between neighbours `a` (left) and `b` (right): the sender's
/// pins, rewritten by `fault`, reach the receiver, and the receiver's credit wire goes back.
pub fn carry_wires<const W: usize, B: LinkPins<W> + Block>(
    a: &mut B,
    b: &mut B,
    forward: bool,
    fault: impl FnOnce(&mut Beat),
) {
    let (tx, rx) = if forward {
        (&a.to_next()[0], &mut b.from_prev()[0])
    } else {
        (&b.to_prev()[0], &mut a.from_next()[0])
    };
    let mut beat = Beat {
        data: tx.data.val().index() as u64,
        valid: tx.valid.val(),
        start: tx.start.val(),
    };
    fault(&mut beat);
    rx.clock.next = tx.clock.val();
    rx.data.next = (beat.data & ((1u64 << W) - 1)).into();
    rx.valid.next = beat.valid;
    rx.start.next = beat.start;
    let (sender, receiver) = if forward { (a, b) } else { (b, a) };
    settle(receiver);
    let credit = if forward {
        receiver.from_prev()[0].credit.val()
    } else {
        receiver.from_next()[0].credit.val()
    };
    if forward {
        sender.to_next()[0].credit.next = credit;
    } else {
        sender.to_prev()[0].credit.next = credit;
    }
    settle(sender);
}

/// One weight or bias of a board, as its host ports address it.
#[derive(Clone, Copy, Debug)]
pub struct WeightCell {
    /// The junction's place on the board (its `h_sel`), the network's junction and the
    /// value's index in the state.
    pub junction: usize,
    pub network_junction: usize,
    pub index: usize,
    pub bias: bool,
    pub bank: usize,
    pub addr: usize,
}

impl WeightCell {
    pub fn get(&self, st: &State) -> i32 {
        let v = if self.bias { &st.biases } else { &st.weights };
        v[self.network_junction][self.index]
    }

    pub fn set(&self, st: &mut State, v: i32) {
        let vals = if self.bias {
            &mut st.biases
        } else {
            &mut st.weights
        };
        vals[self.network_junction][self.index] = v;
    }
}

/// Every weight and bias of the board with junctions `range` (0-based, inclusive): weights
/// in `z` banks, biases in one bank per group, as a junction's memories hold them.
pub fn weight_cells(spec: &Spec, sched: &Schedule, range: (usize, usize)) -> Vec<WeightCell> {
    let shape = State::initial(spec);
    let mut out = vec![];
    for (k, j) in (range.0..=range.1).enumerate() {
        let p = JunctionParams::with_schedule(spec, j, &sched.ff, &sched.bp);
        for (bias, n, banks) in [
            (false, shape.weights[j].len(), p.z),
            (true, shape.biases[j].len(), p.groups),
        ] {
            for m in 0..n {
                out.push(WeightCell {
                    junction: k,
                    network_junction: j,
                    index: m,
                    bias,
                    bank: m % banks,
                    addr: m / banks,
                });
            }
        }
    }
    out
}

/// The words board `p` takes from its feed over a stream, in its sequencer's order: per
/// block cycle the input sample (first board), then the label (last board, training).
pub fn feed(p: &BoundaryParams, data: &Encoded, train: bool) -> Vec<u16> {
    let s = data.len();
    let total = s + if train { p.bp_first } else { p.ff_last };
    let mut out = Vec::new();
    for t in 0..total {
        if !p.has_left && t < s {
            out.extend(data.input(t).iter().map(|&v| v as u16));
        }
        if train && !p.has_right && t >= p.ff_last && t - p.ff_last < s {
            out.push(data.labels[t - p.ff_last] as u16);
        }
    }
    out
}

/// Result of [`check_linked_chain`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct LinkedReport {
    pub stages: Vec<(usize, usize)>,
    pub link_delay: Vec<usize>,
    pub staleness: Vec<usize>,
    pub samples: usize,
    /// `None` when every weight, bias and prediction matches the reference.
    pub first_difference: Option<String>,
    pub state_sha256: String,
    pub reference_sha256: String,
    /// Simulated seconds of the training stream, from the first board's go to the last
    /// board's end.
    pub train_seconds: f64,
    pub train_samples_per_second: f64,
    /// Samples/s in the middle half of the stream, past the pipeline's fill and before its
    /// drain (the last board's block cycles), where measured.
    pub steady_samples_per_second: Option<f64>,
    pub boards: Vec<BoardRun>,
}

/// Load `init`, train one stream on `data` and infer on it with every board on its own clock
/// (`periods_ps`), read everything back and compare with the reference model run with the
/// chain's staleness.
pub fn check_linked_chain<const W: usize>(
    spec: &Spec,
    init: &State,
    stages: &[(usize, usize)],
    link_delay: &[usize],
    periods_ps: &[u64],
    data: &Encoded,
) -> Result<LinkedReport, SimError> {
    let mut chain = LinkedChain::<W>::new(spec, stages, link_delay, periods_ps);
    chain.load_state(init)?;
    let staleness = chain.schedule.staleness();
    let mut reference =
        edgeflow_reference::Reference::with_state(spec, init.clone(), staleness.clone())?;
    let budget = 64 * (chain.schedule.block_cycles(data.len()) as u64 + 8) * 256;
    let t0 = chain.now_ps;
    let before: Vec<u64> = chain.runs.iter().map(|r| r.clocks).collect();
    chain.run(data, true, budget)?;
    let train_seconds = (chain.now_ps - t0) as f64 * 1e-12;
    let mut boards = chain.runs.clone();
    for (r, b) in boards.iter_mut().zip(&before) {
        r.clocks -= b;
    }
    reference.train(data);
    let got = chain.read_state();
    let mut first_difference = reference
        .state
        .first_difference(&got, Some(&reference.patterns));
    let pred = chain.run(data, false, budget)?;
    if first_difference.is_none() {
        first_difference =
            crate::testbench::rtl::first_prediction_difference(&reference.infer(data), &pred);
    }
    Ok(LinkedReport {
        stages: stages.to_vec(),
        link_delay: link_delay.to_vec(),
        staleness,
        samples: data.len(),
        first_difference,
        state_sha256: got.sha256(),
        reference_sha256: reference.state.sha256(),
        train_seconds,
        train_samples_per_second: data.len() as f64 / train_seconds,
        steady_samples_per_second: None,
        boards,
    })
}

#[cfg(test)]
#[path = "linked_chain/tests.rs"]
mod tests;
