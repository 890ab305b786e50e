//! What a linked stage does around its block cycles: the hardware form of the chain runtime
//! (testbench/rtl_stage/chain.rs), one board's share of it. For block cycle `t`, each step
//! only when the schedule has a sample for it:
//!
//! 1. send the delta sums its first junction's BP accumulated in `t - 1` back (left link):
//!    beside block cycle `t` when the sums' FIFO has room for the whole vector and the vector
//!    is [`SEND_SLACK_CLOCKS`] shorter than the block cycle, else before it;
//! 2. take the input sample `t` from the feed (a first board takes it ahead, while block
//!    cycle `t - 1` runs);
//! 3. take the label of the sample its last junction's FF runs in `t` (last stage, when
//!    training);
//! 4. wait, in one gate, until the inboxes (inbox.rs) hold the delta sums its last
//!    junction's BP needs in `t` and the activations its first junction's FF needs in `t`
//!    (each copied in while block cycle `t - 1` ran), and, when its last junction's FF writes
//!    the right boundary in `t`, until the drain has room for that vector;
//!
//! then run block cycle `t`. When nothing is late that takes `LINKED_STAGE_CLOCKS` clocks
//! (core/src/spec.rs) between block cycles. After the stream's last block cycle, step 1 runs
//! once more. A received vector is used only after the link marked it good, so a corrupt or
//! lost transfer stops the stage before any block cycle uses it: the weights stay those after
//! the last block cycle run. The link's own order and the schedule's sample numbers make the
//! hand-over exact whatever the boards' clocks: every step waits for its data, none guesses a
//! time.
//!
//! The right boundary's activations leave during the block cycle that writes them: the
//! drain takes them from one FIFO per group in neuron order (group `q` holds neurons
//! `≡ q (mod g)`), word by word into the forward link.

use rust_hdl::prelude::*;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum Phase {
    Idle,
    /// `t` or the stream just changed: the registered decisions of block cycle `t` settle.
    Settle,
    /// Decide the first step of block cycle `t` (or the end of the stream).
    Next,
    /// Wait until the delta sums of `t - 1` have left (when they cannot leave beside `t`).
    SendLeft,
    /// The inputs of sample `t` from the feed (a first board without a next one).
    Input,
    /// Wait until block cycle `t` has all it needs: the delta sums for its last junction's BP
    /// and the activations for its first junction's FF (from the inboxes), its input sample
    /// (taken ahead), and room in the drain for the right boundary it writes.
    Gate,
    Run,
    /// An inference block cycle of the last junction ended: its registered first largest
    /// output is complete two clocks later.
    Predict,
    /// A link reported an error: nothing more runs until the next `go`.
    Failed,
}

/// The schedule facts one stage needs (0-based junctions, block cycles of sample 0).
#[derive(Clone, Debug)]
pub struct BoundaryParams {
    /// Block cycle of FF and BP/UP of sample 0 at the stage's first and last junctions.
    pub ff_first: usize,
    pub ff_last: usize,
    pub bp_first: usize,
    pub bp_last: usize,
    /// Inputs of the network (first stage), neurons of the left and right boundary layers.
    pub inputs: usize,
    pub left: usize,
    pub right: usize,
    /// Groups on the left and right boundary ports.
    pub left_groups: usize,
    pub right_groups: usize,
    /// Rotating copies of the input samples and the labels.
    pub in_copies: usize,
    pub lab_copies: usize,
    pub has_left: bool,
    pub has_right: bool,
    /// Clocks of the stage's block cycle.
    pub block_clocks: usize,
    /// Right boundary vectors the drain FIFOs hold at once (1 or 2).
    pub drain_vectors: usize,
}

/// Clocks the delta sums' sending takes beyond one a word (the read and the saturation are
/// each a clock), and one to spare: a send this much shorter than the block cycle runs beside
/// it.
pub const SEND_SLACK_CLOCKS: usize = 4;

#[derive(LogicBlock)]
pub struct BoundarySequencer {
    pub clock: Signal<In, Clock>,
    pub go: Signal<In, Bit>,
    pub go_train: Signal<In, Bit>,
    pub go_samples: Signal<In, Bits<16>>,
    /// The stage's block cycle ends at this clock edge.
    pub block_end: Signal<In, Bit>,
    /// Hold the next block cycle (the host has not taken enough predictions yet).
    pub hold: Signal<In, Bit>,
    /// The stage may start block cycle `t` now (the stage's `permit`), and it started one
    /// this clock (its controller's `starting`).
    pub permit: Signal<Out, Bit>,
    pub starting: Signal<In, Bit>,
    pub done: Signal<Out, Bit>,
    pub failed: Signal<Out, Bit>,
    /// A link's sticky error bits (either direction), any of which fails the stream.
    pub link_error: Signal<In, Bit>,
    /// An inference block cycle of the last junction ends now: the stage's `pred` is its
    /// sample's prediction.
    pub pred_valid: Signal<Out, Bit>,
    // the host feed: input samples (first stage), labels (last stage)
    pub feed_data: Signal<In, Bits<16>>,
    pub feed_valid: Signal<In, Bit>,
    pub feed_ready: Signal<Out, Bit>,
    pub in_we: Signal<Out, Bit>,
    pub in_copy: Signal<Out, Bits<16>>,
    pub in_addr: Signal<Out, Bits<16>>,
    pub lab_we: Signal<Out, Bit>,
    pub lab_copy: Signal<Out, Bits<16>>,
    /// `t`, the block cycle the stage runs next, moves on (for the inboxes).
    pub stepped: Signal<Out, Bit>,
    /// The inboxes (inbox.rs) hold the vector for `t`: activations from the previous board,
    /// delta sums from the next.
    pub left_in: Signal<In, Bit>,
    pub right_in: Signal<In, Bit>,
    // left link, backward out: delta sum `lq_addr` of group `lq_q`, cleared as it is taken
    pub lq_addr: Signal<Out, Bits<16>>,
    pub lq_q: Signal<Out, Bits<16>>,
    pub lq_clear: Signal<Out, Bit>,
    pub bout_valid: Signal<Out, Bit>,
    pub bout_ready: Signal<In, Bit>,
    /// The sums' FIFO has room for a whole vector (registered).
    pub bout_room: Signal<In, Bit>,
    // right link, forward out: the drain FIFOs, read in neuron order
    pub rd_q: Signal<Out, Bits<16>>,
    pub rd_empty: Signal<In, Bit>,
    pub fout_valid: Signal<Out, Bit>,
    pub fout_ready: Signal<In, Bit>,
    pub rd_take: Signal<Out, Bit>,
    pub phase: DFF<Phase>,
    /// The block cycle the stage runs next.
    pub t: DFF<Bits<32>>,
    samples: DFF<Bits<32>>,
    train: DFF<Bit>,
    /// Word of the vector in the current step, and its group.
    count: DFF<Bits<16>>,
    group: DFF<Bits<16>>,
    in_copy_q: DFF<Bits<16>>,
    /// First board of a chain: input samples not written yet.
    unloaded: DFF<Bits<32>>,
    /// `t + 2 - loaded`: how many more samples may be loaded ahead of block cycle `t` (kept
    /// as a count, so no comparison of wide counters sits in front of the feed's `ready`).
    room: DFF<Bits<8>>,
    /// The word of the next input sample.
    in_word: DFF<Bits<16>>,
    lab_copy_q: DFF<Bits<16>>,
    drain_q: DFF<Bits<16>>,
    /// Words of the right boundary vector leaving now, and vectors written but not gone.
    drain_words: DFF<Bits<16>>,
    pending: DFF<Bits<8>>,
    /// A block cycle writing the right boundary may start while fewer vectors are pending.
    pending_limit: Constant<Bits<8>>,
    right_last: Constant<Bits<16>>,
    /// The delta sums of block cycle `t - 1` are being sent (word `count` of group `group`;
    /// only a first board takes inputs on them, and it sends no sums): beside block cycle `t`
    /// when the FIFO has room for all of them, else before it.
    sending: DFF<Bit>,
    send_in_run: Constant<Bit>,
    ff_first: Constant<Bits<32>>,
    ff_last: Constant<Bits<32>>,
    bp_first: Constant<Bits<32>>,
    bp_last: Constant<Bits<32>>,
    inputs_last: Constant<Bits<16>>,
    left_last: Constant<Bits<16>>,
    left_group_last: Constant<Bits<16>>,
    right_group_last: Constant<Bits<16>>,
    in_copy_last: Constant<Bits<16>>,
    lab_copy_last: Constant<Bits<16>>,
    has_left: Constant<Bit>,
    has_right: Constant<Bit>,
    total: Signal<Local, Bits<32>>,
    t_prev: Signal<Local, Bits<32>>,
    /// `t + 1`, kept with `t`.
    t_next: DFF<Bits<32>>,
    /// Which steps block cycle `t` has, registered from `t` and the stream (the chain
    /// runtime's *_sample tests); read only after `Settle` or `Predict`.
    need_send_left: DFF<Bit>,
    need_recv_right: DFF<Bit>,
    need_input: DFF<Bit>,
    need_recv_left: DFF<Bit>,
    need_label: DFF<Bit>,
    /// The label of block cycle `t` is taken (last board, training), or is due now.
    labelled: DFF<Bit>,
    label_due: Signal<Local, Bit>,
    writes_right: DFF<Bit>,
    /// `t` is the stream's last block cycle plus one.
    at_end: DFF<Bit>,
    /// Block cycle `t` has started.
    started_t: DFF<Bit>,
    ahead: Signal<Local, Bit>,
    last_word: Signal<Local, Bit>,
    took: Signal<Local, Bit>,
    /// A sample's last input word is loaded this clock; block cycle `t` ends this clock.
    load_done: Signal<Local, Bit>,
    t_step: Signal<Local, Bit>,
    after_send_left: Signal<Local, Phase>,
    /// Every wait of block cycle `t` is over.
    ready: Signal<Local, Bit>,
    /// A block cycle that writes the right boundary is let start; a vector's last word left.
    writing: Signal<Local, Bit>,
    last_drained: Signal<Local, Bit>,
}

fn c32(v: usize) -> Constant<Bits<32>> {
    Constant::new((v as u64).into())
}

fn c16(v: usize) -> Constant<Bits<16>> {
    assert!(v < 1 << 16);
    Constant::new((v as u64).into())
}

impl BoundarySequencer {
    pub fn new(p: &BoundaryParams) -> Self {
        assert!(p.left_groups >= 1 && p.right_groups >= 1);
        assert!(p.in_copies >= 1 && p.lab_copies >= 1);
        Self {
            clock: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            block_end: Default::default(),
            hold: Default::default(),
            permit: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            failed: Default::default(),
            link_error: Default::default(),
            pred_valid: Default::default(),
            feed_data: Default::default(),
            feed_valid: Default::default(),
            feed_ready: Default::default(),
            in_we: Default::default(),
            in_copy: Default::default(),
            in_addr: Default::default(),
            lab_we: Default::default(),
            lab_copy: Default::default(),
            lq_addr: Default::default(),
            lq_q: Default::default(),
            lq_clear: Default::default(),
            bout_valid: Default::default(),
            bout_ready: Default::default(),
            bout_room: Default::default(),
            rd_q: Default::default(),
            rd_empty: Default::default(),
            fout_valid: Default::default(),
            stepped: Default::default(),
            left_in: Default::default(),
            right_in: Default::default(),
            fout_ready: Default::default(),
            rd_take: Default::default(),
            phase: Default::default(),
            t: Default::default(),
            samples: Default::default(),
            train: Default::default(),
            count: Default::default(),
            group: Default::default(),
            in_copy_q: Default::default(),
            unloaded: Default::default(),
            room: Default::default(),
            in_word: Default::default(),
            lab_copy_q: Default::default(),
            drain_q: Default::default(),
            drain_words: Default::default(),
            pending: Default::default(),
            pending_limit: Constant::new((p.drain_vectors as u64).into()),
            right_last: c16(p.right.max(1) - 1),
            sending: Default::default(),
            send_in_run: Constant::new(p.left + SEND_SLACK_CLOCKS <= p.block_clocks),
            ff_first: c32(p.ff_first),
            ff_last: c32(p.ff_last),
            bp_first: c32(p.bp_first),
            bp_last: c32(p.bp_last),
            inputs_last: c16(p.inputs.max(1) - 1),
            left_last: c16(p.left.max(1) - 1),
            left_group_last: c16(p.left_groups - 1),
            right_group_last: c16(p.right_groups - 1),
            in_copy_last: c16(p.in_copies - 1),
            lab_copy_last: c16(p.lab_copies - 1),
            has_left: Constant::new(p.has_left),
            has_right: Constant::new(p.has_right),
            total: Default::default(),
            t_prev: Default::default(),
            t_next: Default::default(),
            need_send_left: Default::default(),
            need_recv_right: Default::default(),
            need_input: Default::default(),
            need_recv_left: Default::default(),
            need_label: Default::default(),
            labelled: Default::default(),
            label_due: Default::default(),
            writes_right: Default::default(),
            at_end: Default::default(),
            started_t: Default::default(),
            ahead: Default::default(),
            last_word: Default::default(),
            took: Default::default(),
            load_done: Default::default(),
            t_step: Default::default(),
            after_send_left: Default::default(),
            ready: Default::default(),
            writing: Default::default(),
            last_drained: Default::default(),
        }
    }
}

impl Logic for BoundarySequencer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            phase,
            t,
            samples,
            train,
            count,
            group,
            in_copy_q,
            unloaded,
            room,
            in_word,
            lab_copy_q,
            drain_q,
            drain_words,
            pending,
            sending,
            t_next,
            need_send_left,
            need_recv_right,
            need_input,
            need_recv_left,
            need_label,
            labelled,
            writes_right,
            at_end,
            started_t
        );
        self.total.next = self.samples.q.val() + self.ff_last.val();
        if self.train.q.val() {
            self.total.next = self.samples.q.val() + self.bp_first.val();
        }
        self.t_prev.next = self.t.q.val() - 1;
        // Which steps block cycle t has (the chain runtime's *_sample tests), registered.
        self.need_send_left.d.next = self.has_left.val()
            & self.train.q.val()
            & (self.t.q.val() > self.bp_first.val())
            & ((self.t_prev.val() - self.bp_first.val()) < self.samples.q.val());
        self.need_recv_right.d.next = self.has_right.val()
            & self.train.q.val()
            & (self.t.q.val() >= self.bp_last.val())
            & ((self.t.q.val() - self.bp_last.val()) < self.samples.q.val());
        self.need_input.d.next = !self.has_left.val() & (self.t.q.val() < self.samples.q.val());
        self.need_recv_left.d.next = self.has_left.val()
            & (self.t.q.val() >= self.ff_first.val())
            & ((self.t.q.val() - self.ff_first.val()) < self.samples.q.val());
        self.writes_right.d.next = (self.t.q.val() >= self.ff_last.val())
            & ((self.t.q.val() - self.ff_last.val()) < self.samples.q.val());
        self.need_label.d.next = !self.has_right.val()
            & self.train.q.val()
            & (self.t.q.val() >= self.ff_last.val())
            & ((self.t.q.val() - self.ff_last.val()) < self.samples.q.val());
        self.at_end.d.next = self.t.q.val() == self.total.val();
        // A first board without a next one takes its inputs; then the gate waits for
        // everything else at once: the inboxes' vectors, the input taken ahead, the drain.
        self.after_send_left.next = Phase::Gate;
        if self.need_input.q.val() & !self.has_right.val() {
            self.after_send_left.next = Phase::Input;
        }
        self.ready.next = (!self.need_recv_right.q.val() | self.right_in.val())
            & (!self.need_recv_left.q.val() | self.left_in.val())
            & (!(self.need_input.q.val() & self.has_right.val()) | (self.room.q.val() < 2))
            & (!(self.has_right.val() & self.writes_right.q.val())
                | (self.pending.q.val() < self.pending_limit.val()));

        self.permit.next = false;
        self.label_due.next = false;
        self.writing.next = false;
        if self.starting.val() {
            self.started_t.d.next = true;
        }
        self.done.next = false;
        self.failed.next = false;
        self.pred_valid.next = false;
        self.feed_ready.next = false;
        self.in_we.next = false;
        self.in_copy.next = self.in_copy_q.q.val();
        self.in_addr.next = self.count.q.val();
        self.lab_we.next = false;
        self.lab_copy.next = self.lab_copy_q.q.val();
        self.lq_addr.next = self.count.q.val();
        self.lq_q.next = self.group.q.val();
        self.lq_clear.next = false;
        self.bout_valid.next = false;
        self.took.next = false;
        self.load_done.next = false;
        self.t_step.next = false;
        self.last_word.next = false;

        // The drain runs in every phase: a word leaves whenever its group's FIFO has it.
        self.rd_q.next = self.drain_q.q.val();
        self.fout_valid.next = !self.rd_empty.val();
        self.rd_take.next = !self.rd_empty.val() & self.fout_ready.val();
        self.last_drained.next = false;
        if self.rd_take.val() {
            self.drain_q.d.next = self.drain_q.q.val() + 1;
            if self.drain_q.q.val() == self.right_group_last.val() {
                self.drain_q.d.next = 0.into();
            }
            self.drain_words.d.next = self.drain_words.q.val() + 1;
            if self.drain_words.q.val() == self.right_last.val() {
                self.drain_words.d.next = 0.into();
                self.last_drained.next = true;
            }
        }

        // The first board of a chain takes the next sample's inputs while it runs a block
        // cycle: sample t + 1's copy is not one that block cycle t reads.
        self.ahead.next = !self.has_left.val()
            & self.has_right.val()
            & (self.phase.q.val() != Phase::Idle)
            & (self.phase.q.val() != Phase::Failed)
            & (self.unloaded.q.val() != 0)
            & (self.room.q.val() != 0);
        if self.ahead.val() {
            self.feed_ready.next = true;
            self.in_addr.next = self.in_word.q.val();
            if self.feed_valid.val() {
                self.in_we.next = true;
                self.in_word.d.next = self.in_word.q.val() + 1;
                if self.in_word.q.val() == self.inputs_last.val() {
                    self.in_word.d.next = 0.into();
                    self.unloaded.d.next = self.unloaded.q.val() - 1;
                    self.load_done.next = true;
                    self.in_copy_q.d.next = self.in_copy_q.q.val() + 1;
                    if self.in_copy_q.q.val() == self.in_copy_last.val() {
                        self.in_copy_q.d.next = 0.into();
                    }
                }
            }
        }

        match self.phase.q.val() {
            Phase::Idle => {
                self.done.next = true;
            }
            Phase::Settle => {
                self.phase.d.next = Phase::Next;
            }
            Phase::Next => {
                if self.sending.q.val() {
                    // the previous block cycle's sums are still leaving
                } else if self.need_send_left.q.val() {
                    self.sending.d.next = true;
                    self.phase.d.next = Phase::SendLeft;
                    // the last readout follows the stream's last block cycle
                    if self.send_in_run.val()
                        & self.bout_room.val()
                        & !self.at_end.q.val()
                        & !self.hold.val()
                    {
                        self.phase.d.next = self.after_send_left.val();
                    }
                } else if self.at_end.q.val() {
                    self.phase.d.next = Phase::Idle;
                } else if !self.hold.val() {
                    self.phase.d.next = self.after_send_left.val();
                }
            }
            Phase::SendLeft => {
                if !self.sending.q.val() {
                    self.phase.d.next = self.after_send_left.val();
                    if self.at_end.q.val() {
                        self.phase.d.next = Phase::Idle;
                    }
                }
            }
            Phase::Input => {
                self.feed_ready.next = true;
                self.took.next = self.feed_valid.val();
                self.in_we.next = self.took.val();
                self.last_word.next = self.count.q.val() == self.inputs_last.val();
                if self.took.val() & self.last_word.val() {
                    self.phase.d.next = Phase::Gate;
                    self.in_copy_q.d.next = self.in_copy_q.q.val() + 1;
                    if self.in_copy_q.q.val() == self.in_copy_last.val() {
                        self.in_copy_q.d.next = 0.into();
                    }
                }
            }
            Phase::Gate => {
                // the label is taken here, in the clock the gate opens at the latest
                self.label_due.next = self.need_label.q.val() & !self.labelled.q.val();
                if self.label_due.val() {
                    self.feed_ready.next = true;
                    if self.feed_valid.val() {
                        self.lab_we.next = true;
                        self.labelled.d.next = true;
                        self.lab_copy_q.d.next = self.lab_copy_q.q.val() + 1;
                        if self.lab_copy_q.q.val() == self.lab_copy_last.val() {
                            self.lab_copy_q.d.next = 0.into();
                        }
                    }
                }
                if self.ready.val() & (!self.label_due.val() | self.feed_valid.val()) {
                    self.writing.next = self.has_right.val() & self.writes_right.q.val();
                    // the stage may start at once; `Run` holds the permit until it does
                    self.permit.next = true;
                    self.phase.d.next = Phase::Run;
                }
            }
            Phase::Run => {
                self.permit.next = !self.started_t.q.val();
                if self.block_end.val() {
                    self.started_t.d.next = false;
                    self.labelled.d.next = false;
                    self.t.d.next = self.t_next.q.val();
                    self.t_next.d.next = self.t_next.q.val() + 1;
                    self.t_step.next = true;
                    self.phase.d.next = Phase::Settle;
                    if !self.has_right.val() & !self.train.q.val() & self.writes_right.q.val() {
                        self.phase.d.next = Phase::Predict;
                        self.count.d.next = 0.into();
                    }
                }
            }
            Phase::Predict => {
                self.count.d.next = 1.into();
                if self.count.q.val() == 1 {
                    self.pred_valid.next = true;
                    self.count.d.next = 0.into();
                    self.phase.d.next = Phase::Next;
                }
            }
            Phase::Failed => {
                self.failed.next = true;
            }
            _ => {
                self.phase.d.next = Phase::Idle;
            }
        }
        // The sums leave a word a clock while the FIFO takes them.
        if self.sending.q.val() {
            self.bout_valid.next = true;
            self.lq_clear.next = self.bout_ready.val();
            if self.bout_ready.val() {
                self.count.d.next = self.count.q.val() + 1;
                self.group.d.next = self.group.q.val() + 1;
                if self.group.q.val() == self.left_group_last.val() {
                    self.group.d.next = 0.into();
                }
                if self.count.q.val() == self.left_last.val() {
                    self.count.d.next = 0.into();
                    self.group.d.next = 0.into();
                    self.sending.d.next = false;
                }
            }
        }
        // A word of a vector taken: the next word, and its group (word mod groups).
        if self.took.val() {
            self.count.d.next = self.count.q.val() + 1;
            self.group.d.next = self.group.q.val() + 1;
            if self.group.q.val() == self.left_group_last.val() {
                self.group.d.next = 0.into();
            }
            if self.last_word.val() {
                self.count.d.next = 0.into();
                self.group.d.next = 0.into();
            }
        }
        if self.writing.val() & !self.last_drained.val() {
            self.pending.d.next = self.pending.q.val() + 1;
        }
        if self.last_drained.val() & !self.writing.val() {
            self.pending.d.next = self.pending.q.val() - 1;
        }
        self.stepped.next = self.t_step.val();
        if self.load_done.val() & !self.t_step.val() {
            self.room.d.next = self.room.q.val() - 1;
        }
        if self.t_step.val() & !self.load_done.val() {
            self.room.d.next = self.room.q.val() + 1;
        }
        if self.link_error.val() & (self.phase.q.val() != Phase::Idle) {
            self.phase.d.next = Phase::Failed;
            self.sending.d.next = false;
        }
        if self.go.val() {
            self.phase.d.next = Phase::Settle;
            self.t.d.next = 0.into();
            self.t_next.d.next = 1.into();
            self.started_t.d.next = false;
            self.labelled.d.next = false;
            self.samples.d.next = bit_cast::<32, 16>(self.go_samples.val());
            self.train.d.next = self.go_train.val();
            self.in_copy_q.d.next = 0.into();
            self.unloaded.d.next = bit_cast::<32, 16>(self.go_samples.val());
            self.room.d.next = 2.into();
            self.in_word.d.next = 0.into();
            self.lab_copy_q.d.next = 0.into();
            self.drain_q.d.next = 0.into();
            self.drain_words.d.next = 0.into();
            self.pending.d.next = 0.into();
            self.sending.d.next = false;
            self.count.d.next = 0.into();
            self.group.d.next = 0.into();
        }
    }
}
