//! A stage with its board-to-board links: the datapath of one board of a chain (stage.rs),
//! the links to its neighbours (tx.rs, rx.rs) and the sequencer that joins them between
//! block cycles (boundary.rs). Nothing of the host is in the loop: the first board takes
//! input samples from its feed, the last takes labels from its feed and reports
//! predictions, and every boundary vector crosses on the link's pins.
//!
//! Pins per neighbour: to the previous board, its activations come in (`from_prev`) and the
//! left layer's delta sums go back (`to_prev`); to the next board, the right layer's
//! activations go out (`to_next`) and its delta sums come in (`from_next`). A board at an
//! end of the chain has none on that side.

use super::boundary::{BoundaryParams, BoundarySequencer};
use super::inbox::Inbox;
use super::rx::LinkRx;
use super::tx::LinkTx;
use crate::params::JunctionParams;
use crate::stage::{sat_sum, Stage};
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::word_stream::WordSink;
use crate::{at, to};
use edgeflow_core::fixed::Format;
use edgeflow_core::Spec;
use rust_hdl::prelude::*;
use std::ops::RangeInclusive;

/// `log2` of the smallest link FIFO (the credits a sender starts with). A link of `d` block
/// cycles has up to `d + 2` vectors in flight between the boards' sequencers; the FIFO holds
/// them, or the boards would wait on each other for good ([`link_fifo_bits`]).
pub const LINK_FIFO_BITS: usize = 9;

/// Words in flight on the link after junction `j` (0-based) with a delay of `d` block cycles.
pub fn words_in_flight(spec: &Spec, j: usize, d: usize) -> usize {
    (d + 2) * (spec.layers[j + 1] + 2)
}

/// `log2` of the link FIFO a chain needs: every link's words in flight, at least
/// [`LINK_FIFO_BITS`]; `None` past 4096 words.
pub fn link_fifo_bits(spec: &Spec, link_delay: &[usize]) -> Option<usize> {
    let most = (0..link_delay.len())
        .map(|j| words_in_flight(spec, j, link_delay[j]))
        .max()
        .unwrap_or(0);
    (LINK_FIFO_BITS..=12).find(|&f| most <= 1 << f)
}
/// Receiver clocks without a word, while a transfer is due, before a link reports a timeout:
/// a board's default (boards are started one after another by the host, so it is long).
pub const LINK_TIMEOUT_CLOCKS: u32 = 1 << 23;

/// A link's sending pins.
#[derive(LogicInterface, Default)]
pub struct LinkOut<const W: usize> {
    pub clock: Signal<Out, Clock>,
    pub data: Signal<Out, Bits<W>>,
    pub valid: Signal<Out, Bit>,
    pub start: Signal<Out, Bit>,
    pub credit: Signal<In, Bit>,
}

/// A link's receiving pins.
#[derive(LogicInterface, Default)]
pub struct LinkIn<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub data: Signal<In, Bits<W>>,
    pub valid: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub credit: Signal<Out, Bit>,
}

/// A board with link pins towards its neighbours (a linked stage, or the board around it):
/// what a simulation of several boards carries between them.
pub trait LinkPins<const W: usize> {
    fn from_prev(&mut self) -> &mut Vec<LinkIn<W>>;
    fn to_prev(&mut self) -> &mut Vec<LinkOut<W>>;
    fn to_next(&mut self) -> &mut Vec<LinkOut<W>>;
    fn from_next(&mut self) -> &mut Vec<LinkIn<W>>;
}

/// Implements [`LinkPins`] for a block whose fields carry the link pins' names.
#[macro_export]
macro_rules! link_pins_impl {
    ($t:ident) => {
        impl<const W: usize, const F: usize, const FP1: usize>
            $crate::link::linked_stage::LinkPins<W> for $t<W, F, FP1>
        {
            fn from_prev(&mut self) -> &mut Vec<$crate::link::linked_stage::LinkIn<W>> {
                &mut self.from_prev
            }
            fn to_prev(&mut self) -> &mut Vec<$crate::link::linked_stage::LinkOut<W>> {
                &mut self.to_prev
            }
            fn to_next(&mut self) -> &mut Vec<$crate::link::linked_stage::LinkOut<W>> {
                &mut self.to_next
            }
            fn from_next(&mut self) -> &mut Vec<$crate::link::linked_stage::LinkIn<W>> {
                &mut self.from_next
            }
        }
    };
}

link_pins_impl!(LinkedStage);

type Rx<const W: usize, const F: usize, const FP1: usize> = LinkRx<W, F, FP1>;
/// A drain FIFO holds one group's share of the right boundary; it is as deep as the link's.
type Drain<const F: usize, const FP1: usize> = SynchronousFIFO<Bits<16>, F, FP1, 1>;
/// The delta sums' FIFO: `almost_full` four words early, so that its registered room covers
/// the words already on their way in.
type Sums<const F: usize, const FP1: usize> = SynchronousFIFO<Bits<16>, F, FP1, 4>;

/// `W` data pins per link direction, link FIFOs of `2^F` words (`FP1 = F + 1`).
#[derive(LogicBlock)]
pub struct LinkedStage<const W: usize, const F: usize, const FP1: usize> {
    pub clock: Signal<In, Clock>,
    pub go: Signal<In, Bit>,
    pub go_train: Signal<In, Bit>,
    pub go_samples: Signal<In, Bits<16>>,
    /// Input samples (first board), labels (last board), in the order the sequencer takes
    /// them: per block cycle the sample's inputs, then the label.
    pub feed: WordSink,
    pub done: Signal<Out, Bit>,
    pub failed: Signal<Out, Bit>,
    /// Block cycles the stage has started in this stream.
    pub started: Signal<Out, Bits<32>>,
    /// The output layer's first largest activation (last board), valid with `pred_valid`.
    pub pred: Signal<Out, Bits<16>>,
    pub pred_valid: Signal<Out, Bit>,
    /// Hold the next block cycle (a host that has not taken enough predictions yet).
    pub hold: Signal<In, Bit>,
    /// The receivers' sticky error bits (link/mod.rs `ERR_*`): from the previous board and
    /// from the next.
    pub prev_error: Signal<Out, Bits<5>>,
    pub next_error: Signal<Out, Bits<5>>,
    // weights and biases, as the stage's
    pub h_sel: Vec<Signal<In, Bit>>,
    pub h_bias: Signal<In, Bit>,
    pub h_we: Signal<In, Bit>,
    pub h_addr: Signal<In, Bits<16>>,
    pub h_bank: Signal<In, Bits<16>>,
    pub h_wdata: Signal<In, Bits<16>>,
    pub h_rdata: Vec<Signal<Out, Bits<16>>>,
    pub from_prev: Vec<LinkIn<W>>,
    pub to_prev: Vec<LinkOut<W>>,
    pub to_next: Vec<LinkOut<W>>,
    pub from_next: Vec<LinkIn<W>>,
    pub stage: Stage,
    pub seq: BoundarySequencer,
    drain: Vec<Drain<F, FP1>>,
    /// The left layer's delta sums on their way to the previous board, and the sum read
    /// this clock, saturated and written into the FIFO in the next (the read and the
    /// saturation each take a clock).
    sums: Vec<Sums<F, FP1>>,
    sum_word: Vec<DFF<Bits<32>>>,
    sum_write: Vec<DFF<Bit>>,
    sum_room: Vec<DFF<Bit>>,
    /// Words in the sums' FIFO, and whether it has room for a whole vector more.
    sums_held: Vec<DFF<Bits<16>>>,
    sums_vector_room: Vec<DFF<Bit>>,
    fwd_rx: Vec<Rx<W, F, FP1>>,
    /// The activations for the first junction's FF, copied in from `fwd_rx`.
    fwd_inbox: Vec<Inbox>,
    /// The delta sums for the last junction's BP, copied in from `bwd_rx`.
    bwd_inbox: Vec<Inbox>,
    bwd_tx: Vec<LinkTx<W>>,
    fwd_tx: Vec<LinkTx<W>>,
    bwd_rx: Vec<Rx<W, F, FP1>>,
    _left_groups: usize,
    /// Neurons of the left boundary layer (0 without a previous board).
    _left_len: usize,
    _right_groups: usize,
    _junctions: usize,
    _format: Format,
}

/// The sequencer's view of a stage of `spec` on the schedule `ff`, `bp`.
pub fn boundary_params(
    spec: &Spec,
    range: &RangeInclusive<usize>,
    ff: &[usize],
    bp: &[usize],
) -> BoundaryParams {
    let l = spec.junctions();
    let (first, last) = (*range.start(), *range.end());
    let ps: Vec<JunctionParams> = (0..l)
        .map(|j| JunctionParams::with_schedule(spec, j, ff, bp))
        .collect();
    BoundaryParams {
        ff_first: ff[first],
        ff_last: ff[last],
        bp_first: bp[first],
        bp_last: bp[last],
        inputs: spec.layers[0],
        left: spec.layers[first],
        right: spec.layers[last + 1],
        left_groups: if first > 0 { ps[first - 1].groups } else { 1 },
        right_groups: ps[last].groups,
        in_copies: ps[first].act_copies,
        lab_copies: bp[0] - ff[0] + 3,
        has_left: first > 0,
        has_right: last + 1 < l,
        block_clocks: crate::stage::ctrl_params(spec, range.clone(), ff, bp).t,
        drain_vectors: 1,
    }
}

impl<const W: usize, const F: usize, const FP1: usize> LinkedStage<W, F, FP1> {
    /// `timeout`: receiver clocks without a word, while a vector is due, before a link
    /// reports `ERR_TIMEOUT` (a transfer lost when nothing follows it).
    pub fn new(
        spec: &Spec,
        range: RangeInclusive<usize>,
        ff: &[usize],
        bp: &[usize],
        timeout: u32,
    ) -> Self {
        let mut p = boundary_params(spec, &range, ff, bp);
        let stage = Stage::linked(spec, range.clone(), ff, bp);
        let depth = 1usize << F;
        let per_group = p.right.div_ceil(p.right_groups);
        assert!(
            !p.has_right || per_group <= depth,
            "a drain FIFO holds {depth} words; the right boundary needs {per_group} per group"
        );
        // a block cycle may write the next vector while the last is still leaving
        p.drain_vectors = if 2 * per_group <= depth { 2 } else { 1 };
        let (first, last) = (*range.start(), *range.end());
        let fifo = 1usize << F;
        for (on, len, d) in [
            (
                p.has_left,
                p.left,
                ff.get(first)
                    .zip(first.checked_sub(1).and_then(|j| ff.get(j))),
            ),
            (p.has_right, p.right, ff.get(last + 1).zip(ff.get(last))),
        ] {
            if let (true, Some((b, a))) = (on, d) {
                let in_flight = (b - a + 1) * (len + 2);
                assert!(
                    in_flight <= fifo,
                    "a link of {} block cycles carries {in_flight} words in flight; its FIFO holds {fifo}",
                    b - a - 1
                );
            }
        }
        let n = stage.junctions.len();
        let credits = Rx::<W, F, FP1>::depth();
        let side = |on: bool| usize::from(on);
        LinkedStage {
            clock: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            feed: Default::default(),
            done: Default::default(),
            failed: Default::default(),
            started: Default::default(),
            pred: Default::default(),
            pred_valid: Default::default(),
            hold: Default::default(),
            prev_error: Default::default(),
            next_error: Default::default(),
            h_sel: crate::sigs(n),
            h_bias: Default::default(),
            h_we: Default::default(),
            h_addr: Default::default(),
            h_bank: Default::default(),
            h_wdata: Default::default(),
            h_rdata: crate::sigs(n),
            from_prev: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            to_prev: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            to_next: (0..side(p.has_right)).map(|_| Default::default()).collect(),
            from_next: (0..side(p.has_right)).map(|_| Default::default()).collect(),
            stage,
            seq: BoundarySequencer::new(&p),
            drain: if p.has_right {
                (0..p.right_groups).map(|_| Default::default()).collect()
            } else {
                vec![]
            },
            sums: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            sum_word: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            sum_write: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            sum_room: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            sums_held: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            sums_vector_room: (0..side(p.has_left)).map(|_| Default::default()).collect(),
            fwd_rx: (0..side(p.has_left))
                .map(|_| Rx::new(p.left as u16, timeout))
                .collect(),
            fwd_inbox: (0..side(p.has_left))
                // the first junction's FF reads copy 0 in its first block cycle
                .map(|_| Inbox::new(p.ff_first, p.left, p.left_groups, p.in_copies, 0))
                .collect(),
            bwd_inbox: (0..side(p.has_right))
                .map(|_| Inbox::new(p.bp_last, p.right, 1, 2, p.bp_last % 2))
                .collect(),
            bwd_tx: (0..side(p.has_left))
                .map(|_| LinkTx::new(p.left as u16, credits))
                .collect(),
            fwd_tx: (0..side(p.has_right))
                .map(|_| LinkTx::new(p.right as u16, credits))
                .collect(),
            bwd_rx: (0..side(p.has_right))
                .map(|_| Rx::new(p.right as u16, timeout))
                .collect(),
            _left_groups: if p.has_left { p.left_groups } else { 0 },
            _left_len: if p.has_left { p.left } else { 0 },
            _right_groups: if p.has_right { p.right_groups } else { 0 },
            _junctions: n,
            _format: spec.format(),
        }
    }

    fn shape(&self) -> (usize, usize, usize, Format, usize) {
        (
            self._left_groups,
            self._right_groups,
            self._junctions,
            self._format,
            self._left_len,
        )
    }

    /// Clocks of one block cycle of the stage.
    pub fn block_cycle_clocks(&self) -> usize {
        self.stage.block_cycle_clocks()
    }

    fn wire<X: Wires<Self>>(
        w: &mut X,
        lefts: usize,
        rights: usize,
        junctions: usize,
        format: Format,
        lefts_len: usize,
    ) {
        let bit0 = w.lit(0, "1'b0");
        let bit1 = w.lit(1, "1'b1");
        let word0 = w.lit(0, "16'd0");
        // the stage and its sequencer
        w.set(to!(stage.clock), at!(w, clock));
        w.set(to!(stage.go), at!(w, go));
        w.set(to!(stage.go_train), at!(w, go_train));
        w.set(to!(stage.go_samples), at!(w, go_samples));
        w.set(to!(seq.clock), at!(w, clock));
        w.set(to!(seq.go), at!(w, go));
        w.set(to!(seq.go_train), at!(w, go_train));
        w.set(to!(seq.go_samples), at!(w, go_samples));
        w.set(to!(seq.hold), at!(w, hold));
        // the stage starts on `permit`; `allow` is the unlinked stages' port
        w.set(to!(stage.allow), w.lit(0, "32'd0"));
        w.set(to!(stage.permit[0]), at!(w, seq.permit));
        w.set(to!(seq.starting), at!(w, stage.starting));
        let end = w.and(&at!(w, stage.adv), &at!(w, stage.last));
        w.set(to!(seq.block_end), end);
        w.set(to!(done), at!(w, seq.done));
        w.set(to!(failed), at!(w, seq.failed));
        w.set(to!(started), at!(w, stage.started));
        // only the output layer's first largest is a prediction: elsewhere it is left out, and
        // synthesis removes the comparisons behind it
        if rights == 0 {
            w.set(to!(pred), at!(w, stage.pred));
        } else {
            w.set(to!(pred), word0.clone());
        }
        w.set(to!(pred_valid), at!(w, seq.pred_valid));
        // the feed
        w.set(to!(seq.feed_data), at!(w, feed.data));
        w.set(to!(seq.feed_valid), at!(w, feed.valid));
        w.set(to!(feed.ready), at!(w, seq.feed_ready));
        w.set(to!(stage.in_we), at!(w, seq.in_we));
        // the input copy (first board) or the copy the link's activations go to
        let in_copy = if lefts > 0 {
            at!(w, fwd_inbox[0].copy)
        } else {
            at!(w, seq.in_copy)
        };
        w.set(to!(stage.in_copy), in_copy);
        w.set(to!(stage.in_addr), at!(w, seq.in_addr));
        w.set(to!(stage.in_data), at!(w, feed.data));
        w.set(to!(stage.lab_we), at!(w, seq.lab_we));
        w.set(to!(stage.lab_copy), at!(w, seq.lab_copy));
        w.set(to!(stage.lab_data), at!(w, feed.data));
        // weights
        w.set(to!(stage.h_bias), at!(w, h_bias));
        w.set(to!(stage.h_we), at!(w, h_we));
        w.set(to!(stage.h_addr), at!(w, h_addr));
        w.set(to!(stage.h_bank), at!(w, h_bank));
        w.set(to!(stage.h_wdata), at!(w, h_wdata));
        for j in 0..junctions {
            w.set(to!(stage.h_sel[j]), at!(w, h_sel[j]));
            w.set(to!(h_rdata[j]), at!(w, stage.h_rdata[j]));
        }
        // the previous board: activations in, delta sums out
        let mut errors = w.lit(0, "1'b0");
        if lefts > 0 {
            w.set(to!(fwd_rx[0].clock), at!(w, clock));
            w.set(to!(fwd_rx[0].link_clock), at!(w, from_prev[0].clock));
            w.set(to!(fwd_rx[0].link_data), at!(w, from_prev[0].data));
            w.set(to!(fwd_rx[0].link_valid), at!(w, from_prev[0].valid));
            w.set(to!(fwd_rx[0].link_start), at!(w, from_prev[0].start));
            w.set(to!(from_prev[0].credit), at!(w, fwd_rx[0].link_credit));
            w.set(to!(fwd_inbox[0].clock), at!(w, clock));
            w.set(to!(fwd_inbox[0].go), at!(w, go));
            w.set(to!(fwd_inbox[0].go_vectors), at!(w, go_samples));
            w.set(to!(fwd_inbox[0].step), at!(w, seq.stepped));
            w.set(to!(fwd_inbox[0].stop), at!(w, seq.failed));
            w.set(to!(fwd_inbox[0].valid), at!(w, fwd_rx[0].words.valid));
            w.set(to!(fwd_inbox[0].good), at!(w, fwd_rx[0].good));
            w.set(to!(fwd_rx[0].words.ready), at!(w, fwd_inbox[0].ready));
            w.set(to!(fwd_rx[0].awaiting), at!(w, fwd_inbox[0].awaiting));
            w.set(to!(seq.left_in), at!(w, fwd_inbox[0].has_t));
            w.set(to!(prev_error), at!(w, fwd_rx[0].error));
            errors = w.not(&w.eq16(&at!(w, fwd_rx[0].error), 0));
            w.set(to!(bwd_tx[0].clock), at!(w, clock));
            w.set(to!(to_prev[0].clock), at!(w, bwd_tx[0].link_clock));
            w.set(to!(to_prev[0].data), at!(w, bwd_tx[0].link_data));
            w.set(to!(to_prev[0].valid), at!(w, bwd_tx[0].link_valid));
            w.set(to!(to_prev[0].start), at!(w, bwd_tx[0].link_start));
            w.set(to!(bwd_tx[0].link_credit), at!(w, to_prev[0].credit));
            // the sums leave through a FIFO: the sequencer reads one a clock, the link
            // sends them at its own pace while the board goes on
            w.set(to!(sums[0].clock), at!(w, clock));
            w.set(to!(sum_word[0].clock), at!(w, clock));
            w.set(to!(sum_write[0].clock), at!(w, clock));
            // room for this word and those on their way in, a clock late
            w.set(to!(sum_room[0].clock), at!(w, clock));
            w.set(to!(sum_room[0].d), w.not(&at!(w, sums[0].almost_full)));
            let room = at!(w, sum_room[0].q);
            w.set(to!(seq.bout_ready), room.clone());
            w.set(to!(sum_write[0].d), w.and(&at!(w, seq.bout_valid), &room));
            let heads = (0..lefts).map(|q| at!(w, stage.left[q].q_acc)).collect();
            w.case(
                to!(sum_word[0].d),
                at!(w, seq.lq_q),
                heads,
                w.lit(0, "32'd0"),
            );
            w.set(to!(sums[0].write), at!(w, sum_write[0].q));
            let sum = sat_sum(w, &at!(w, sum_word[0].q), format);
            w.set(to!(sums[0].data_in), sum);
            let ready = w.not(&at!(w, sums[0].empty));
            w.set(to!(bwd_tx[0].words.valid), ready.clone());
            w.set(to!(bwd_tx[0].words.data), at!(w, sums[0].data_out));
            // in parentheses: `not` of it below must negate the whole
            let read = w.paren(&w.and(&ready, &at!(w, bwd_tx[0].words.ready)));
            w.set(to!(sums[0].read), read.clone());
            // the words it holds, and room for a whole vector besides them and the two on
            // their way in (the sequencer then sends the next vector beside a block cycle)
            let write = at!(w, sum_write[0].q);
            let held = at!(w, sums_held[0].q);
            let more = w.mux(
                &w.and(&write, &w.not(&read)),
                &w.plus16(&held, 1),
                &w.mux(&w.and(&read, &w.not(&write)), &w.minus16(&held, 1), &held),
            );
            w.set(to!(sums_held[0].clock), at!(w, clock));
            w.set(to!(sums_held[0].d), more);
            let limit = (1usize << F).saturating_sub(lefts_len + 2);
            w.set(to!(sums_vector_room[0].clock), at!(w, clock));
            w.set(
                to!(sums_vector_room[0].d),
                w.gt(
                    &w.lit(limit as u64 + 1, &format!("16'd{}", limit + 1)),
                    &held,
                ),
            );
            w.set(to!(seq.bout_room), at!(w, sums_vector_room[0].q));
            for q in 0..lefts {
                let mine = w.eq16(&at!(w, seq.lq_q), q);
                let mine_w = w.eq16(&at!(w, fwd_inbox[0].group), q);
                w.set(
                    to!(stage.left[q].w_en),
                    w.and(&at!(w, fwd_inbox[0].we), &mine_w),
                );
                w.set(to!(stage.left[q].w_addr), at!(w, fwd_inbox[0].addr));
                w.set(to!(stage.left[q].w_a), at!(w, fwd_rx[0].words.data));
                w.set(to!(stage.left[q].q_addr), at!(w, seq.lq_addr));
                w.set(
                    to!(stage.left[q].q_clear),
                    w.and(&at!(w, seq.lq_clear), &mine),
                );
            }
        } else {
            w.set(to!(seq.left_in), bit0.clone());
            w.set(to!(seq.bout_ready), bit0.clone());
            w.set(to!(seq.bout_room), bit0.clone());
            w.set(to!(prev_error), w.lit(0, "5'd0"));
        }
        // the next board: activations out through the drain FIFOs, delta sums in
        if rights > 0 {
            for q in 0..rights {
                w.set(to!(drain[q].clock), at!(w, clock));
                w.set(to!(drain[q].write), at!(w, stage.right[q].w_en));
                w.set(to!(drain[q].data_in), at!(w, stage.right[q].w_a));
                let mine = w.eq16(&at!(w, seq.rd_q), q);
                w.set(to!(drain[q].read), w.and(&at!(w, seq.rd_take), &mine));
            }
            let empties = (0..rights).map(|q| at!(w, drain[q].empty)).collect();
            w.case(to!(seq.rd_empty), at!(w, seq.rd_q), empties, bit1.clone());
            let heads = (0..rights).map(|q| at!(w, drain[q].data_out)).collect();
            w.case(
                to!(fwd_tx[0].words.data),
                at!(w, seq.rd_q),
                heads,
                word0.clone(),
            );
            w.set(to!(fwd_tx[0].clock), at!(w, clock));
            w.set(to!(fwd_tx[0].words.valid), at!(w, seq.fout_valid));
            w.set(to!(seq.fout_ready), at!(w, fwd_tx[0].words.ready));
            w.set(to!(to_next[0].clock), at!(w, fwd_tx[0].link_clock));
            w.set(to!(to_next[0].data), at!(w, fwd_tx[0].link_data));
            w.set(to!(to_next[0].valid), at!(w, fwd_tx[0].link_valid));
            w.set(to!(to_next[0].start), at!(w, fwd_tx[0].link_start));
            w.set(to!(fwd_tx[0].link_credit), at!(w, to_next[0].credit));
            w.set(to!(bwd_rx[0].clock), at!(w, clock));
            w.set(to!(bwd_rx[0].link_clock), at!(w, from_next[0].clock));
            w.set(to!(bwd_rx[0].link_data), at!(w, from_next[0].data));
            w.set(to!(bwd_rx[0].link_valid), at!(w, from_next[0].valid));
            w.set(to!(bwd_rx[0].link_start), at!(w, from_next[0].start));
            w.set(to!(from_next[0].credit), at!(w, bwd_rx[0].link_credit));
            w.set(to!(bwd_inbox[0].clock), at!(w, clock));
            // delta sums come back only when training
            w.set(to!(bwd_inbox[0].go), at!(w, go));
            let vectors = w.mux(&at!(w, go_train), &at!(w, go_samples), &word0);
            w.set(to!(bwd_inbox[0].go_vectors), vectors);
            w.set(to!(bwd_inbox[0].step), at!(w, seq.stepped));
            w.set(to!(bwd_inbox[0].stop), at!(w, seq.failed));
            w.set(to!(bwd_inbox[0].valid), at!(w, bwd_rx[0].words.valid));
            w.set(to!(bwd_inbox[0].good), at!(w, bwd_rx[0].good));
            w.set(to!(bwd_rx[0].words.ready), at!(w, bwd_inbox[0].ready));
            w.set(to!(bwd_rx[0].awaiting), at!(w, bwd_inbox[0].awaiting));
            w.set(to!(seq.right_in), at!(w, bwd_inbox[0].has_t));
            w.set(to!(stage.d_we), at!(w, bwd_inbox[0].we));
            w.set(to!(stage.d_addr), at!(w, bwd_inbox[0].addr));
            w.set(to!(stage.d_copy), at!(w, bwd_inbox[0].copy));
            w.set(to!(stage.d_data), at!(w, bwd_rx[0].words.data));
            w.set(to!(next_error), at!(w, bwd_rx[0].error));
            let next = w.not(&w.eq16(&at!(w, bwd_rx[0].error), 0));
            errors = w.or(&errors, &next);
        } else {
            w.set(to!(seq.rd_empty), bit1.clone());
            w.set(to!(seq.fout_ready), bit0.clone());
            w.set(to!(seq.right_in), bit0.clone());
            w.set(to!(stage.d_we), bit0.clone());
            w.set(to!(stage.d_copy), word0.clone());
            w.set(to!(stage.d_addr), word0.clone());
            w.set(to!(stage.d_data), word0.clone());
            w.set(to!(next_error), w.lit(0, "5'd0"));
        }
        w.set(to!(seq.link_error), errors);
    }
}

impl<const W: usize, const F: usize, const FP1: usize> Logic for LinkedStage<W, F, FP1> {
    fn update(&mut self) {
        let (l, r, j, f, n) = self.shape();
        Self::wire(&mut Sim(self), l, r, j, f, n);
    }

    fn connect(&mut self) {
        let (l, r, j, f, n) = self.shape();
        Self::wire(&mut Connect(self), l, r, j, f, n);
    }

    fn hdl(&self) -> Verilog {
        let (l, r, j, f, n) = self.shape();
        let mut t = Text::default();
        Self::wire(&mut t, l, r, j, f, n);
        t.verilog(&crate::fixed::verilog_functions(f, 0))
    }
}

/// The Verilog of a linked stage (top module `top`).
pub fn verilog<const W: usize, const F: usize, const FP1: usize>(
    spec: &Spec,
    range: RangeInclusive<usize>,
    ff: &[usize],
    bp: &[usize],
    timeout: u32,
) -> String {
    let mut s = LinkedStage::<W, F, FP1>::new(spec, range, ff, bp, timeout);
    s.connect_all();
    generate_verilog_unchecked(&s)
}

/// [`verilog`] for a link `width` data pins wide and FIFOs of `2^fifo_bits` words, chosen at
/// run time; an error names a width or FIFO that does not exist.
pub fn verilog_for(
    spec: &Spec,
    range: RangeInclusive<usize>,
    ff: &[usize],
    bp: &[usize],
    timeout: u32,
    width: usize,
    fifo_bits: usize,
) -> Result<String, String> {
    macro_rules! pick {
        ($($w:literal),*) => {
            match (width, fifo_bits) {
                $(
                    ($w, 9) => verilog::<$w, 9, 10>(spec, range, ff, bp, timeout),
                    ($w, 10) => verilog::<$w, 10, 11>(spec, range, ff, bp, timeout),
                    ($w, 11) => verilog::<$w, 11, 12>(spec, range, ff, bp, timeout),
                    ($w, 12) => verilog::<$w, 12, 13>(spec, range, ff, bp, timeout),
                )*
                (1 | 2 | 4 | 8 | 16, f) => {
                    return Err(format!("a link FIFO has 2^9 to 2^12 words, not 2^{f}"))
                }
                _ => return Err(format!("a link is 1, 2, 4, 8 or 16 data pins wide, not {width}")),
            }
        };
    }
    Ok(pick!(1, 2, 4, 8, 16))
}
