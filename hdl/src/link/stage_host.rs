//! The host's commands to one board of a linked chain (hdl/PROTOCOL.md, "Linked boards"):
//! LOAD_STATE and READ_STATE go to a weight walk over the stage's junctions (a host link of
//! the stage alone, host_link/mod.rs), TRAIN and INFER start the board's share of the stream
//! and carry the words the sequencer takes from the host (the first board's input samples,
//! the last board's labels), STATUS reports the links' error bits and the block cycles run.
//!
//! A stream ends when the sequencer is idle again, every word the board is owed has arrived
//! and every prediction has left. If a link fails, the board still takes (and drops) the
//! words the host still owes it, so the host's stream and the board stay in step, and then
//! answers LINK_FAILED: the weights are those after the last block cycle run, ready for
//! READ_STATE.

use crate::host_link::word_stream::{WordSink, WordSource};
use crate::host_link::{ACK_INFER, ACK_TRAIN, ERROR_WORD, OP_INFER, OP_LOAD, OP_READ, OP_TRAIN};
use rust_hdl::prelude::*;

/// STATUS: answers `ACK_STATUS`, the previous link's error bits in the low byte and the
/// next link's in the high byte, then the block cycles started (low, high word).
pub const OP_STATUS: u16 = 0x0008;
pub const ACK_STATUS: u16 = 0xA008;
/// A stream stopped on a link error; the STATUS words follow.
pub const LINK_FAILED: u16 = 0xEEE1;

/// Predictions waiting for the host: a block cycle is held while two or fewer places are
/// free, so none is lost however slowly the host reads.
type Preds = SynchronousFIFO<Bits<16>, 4, 5, 2>;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum HostMode {
    Idle,
    /// An unknown opcode was answered; words are dropped until a known opcode.
    Error,
    /// LOAD_STATE or READ_STATE: the walk has the host's words and answers.
    Walk,
    /// TRAIN or INFER waits for its sample count.
    Count,
    Stream,
    /// The answer queue is leaving.
    Answer,
}

#[derive(LogicBlock)]
pub struct StageHost {
    pub clock: Signal<In, Clock>,
    pub host_in: WordSink,
    pub host_out: WordSource,
    /// The weight walk's side of the host link.
    pub walk_in: WordSource,
    pub walk_out: WordSink,
    pub go: Signal<Out, Bit>,
    pub go_train: Signal<Out, Bit>,
    pub go_samples: Signal<Out, Bits<16>>,
    pub feed: WordSource,
    /// The sequencer is idle (`LinkedStage::done`), or stopped on a link error.
    pub done: Signal<In, Bit>,
    pub failed: Signal<In, Bit>,
    pub pred: Signal<In, Bits<16>>,
    pub pred_valid: Signal<In, Bit>,
    pub prev_error: Signal<In, Bits<5>>,
    pub next_error: Signal<In, Bits<5>>,
    pub started: Signal<In, Bits<32>>,
    /// The sequencer holds its next block cycle: the prediction FIFO is nearly full.
    pub hold: Signal<Out, Bit>,
    preds: Preds,
    /// The FIFO's fill, registered: a block cycle adds at most one prediction, so a clock late
    /// is early enough.
    hold_r: DFF<Bit>,
    mode: DFF<HostMode>,
    train: DFF<Bit>,
    /// Answer words still due from the walk.
    walk_left: DFF<Bits<32>>,
    /// Samples whose words the host still owes, and the word of the current one.
    owed: DFF<Bits<16>>,
    word: DFF<Bits<16>>,
    /// The last word of a sample (its word count minus one) in this stream.
    word_last: DFF<Bits<16>>,
    /// The host's next word, held: the host's `ready` depends on this register alone, and
    /// what the word is for (the walk, the feed, a command) is decided from a register.
    in_word: DFF<Bits<16>>,
    in_full: DFF<Bit>,
    /// Clocks since the stream's opcode.
    cycles: DFF<Bits<32>>,
    msg0: DFF<Bits<16>>,
    msg1: DFF<Bits<16>>,
    msg2: DFF<Bits<16>>,
    msg3: DFF<Bits<16>>,
    /// Answer words queued, and sent.
    count: DFF<Bits<3>>,
    sent: DFF<Bits<3>>,
    op_load: Constant<Bits<16>>,
    op_read: Constant<Bits<16>>,
    op_train: Constant<Bits<16>>,
    op_infer: Constant<Bits<16>>,
    op_status: Constant<Bits<16>>,
    ack_train: Constant<Bits<16>>,
    ack_infer: Constant<Bits<16>>,
    ack_status: Constant<Bits<16>>,
    link_failed: Constant<Bits<16>>,
    error_word: Constant<Bits<16>>,
    /// Answer words of READ_STATE: every weight and bias, then its acknowledgement.
    read_words: Constant<Bits<32>>,
    /// Words per sample the host sends this board when training and when inferring (inputs
    /// on the first board, a label on the last when training), as a last index; `owes_*`
    /// says whether there is any.
    train_last: Constant<Bits<16>>,
    infer_last: Constant<Bits<16>>,
    owes_train: Constant<Bit>,
    owes_infer: Constant<Bit>,
    /// What the held word is as an opcode, decoded as it is taken from the host.
    walk_op: DFF<Bit>,
    stream_op: DFF<Bit>,
    read_op: DFF<Bit>,
    train_op: DFF<Bit>,
    status_op: DFF<Bit>,
    op: Signal<Local, Bits<16>>,
    take: Signal<Local, Bit>,
    /// The held word is taken this clock.
    accept: Signal<Local, Bit>,
    owing: Signal<Local, Bit>,
    errors: Signal<Local, Bits<16>>,
}

impl StageHost {
    /// A board whose stage holds `cells` weights and biases, takes `inputs` words per sample
    /// (0 unless first) and a label when training if `last`.
    pub fn new(cells: usize, inputs: usize, last: bool) -> Self {
        let c16 = |v: u16| Constant::<Bits<16>>::new((v as u64).into());
        let train_words = inputs + usize::from(last);
        assert!(
            train_words < 1 << 16,
            "a sample's words are counted in 16 bits"
        );
        StageHost {
            clock: Default::default(),
            host_in: Default::default(),
            host_out: Default::default(),
            walk_in: Default::default(),
            walk_out: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            feed: Default::default(),
            done: Default::default(),
            failed: Default::default(),
            pred: Default::default(),
            pred_valid: Default::default(),
            prev_error: Default::default(),
            next_error: Default::default(),
            started: Default::default(),
            hold: Default::default(),
            preds: Default::default(),
            hold_r: Default::default(),
            mode: Default::default(),
            train: Default::default(),
            walk_left: Default::default(),
            owed: Default::default(),
            word: Default::default(),
            word_last: Default::default(),
            in_word: Default::default(),
            in_full: Default::default(),
            cycles: Default::default(),
            msg0: Default::default(),
            msg1: Default::default(),
            msg2: Default::default(),
            msg3: Default::default(),
            count: Default::default(),
            sent: Default::default(),
            op_load: c16(OP_LOAD),
            op_read: c16(OP_READ),
            op_train: c16(OP_TRAIN),
            op_infer: c16(OP_INFER),
            op_status: c16(OP_STATUS),
            ack_train: c16(ACK_TRAIN),
            ack_infer: c16(ACK_INFER),
            ack_status: c16(ACK_STATUS),
            link_failed: c16(LINK_FAILED),
            error_word: c16(ERROR_WORD),
            read_words: Constant::new(((cells + 1) as u64).into()),
            train_last: c16(train_words.max(1) as u16 - 1),
            infer_last: c16(inputs.max(1) as u16 - 1),
            owes_train: Constant::new(train_words > 0),
            owes_infer: Constant::new(inputs > 0),
            op: Default::default(),
            walk_op: Default::default(),
            stream_op: Default::default(),
            read_op: Default::default(),
            train_op: Default::default(),
            status_op: Default::default(),
            take: Default::default(),
            accept: Default::default(),
            owing: Default::default(),
            errors: Default::default(),
        }
    }
}

impl Logic for StageHost {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, mode, train, walk_left, owed, word, word_last, cycles, msg0, msg1, msg2,
            msg3, count, sent, hold_r, in_word, in_full, walk_op, stream_op, read_op, train_op,
            status_op
        );
        clock!(self, clock, preds);
        self.host_in.ready.next = !self.in_full.q.val();
        self.op.next = self.host_in.data.val();
        if self.host_in.valid.val() & !self.in_full.q.val() {
            self.in_word.d.next = self.host_in.data.val();
            self.in_full.d.next = true;
            self.walk_op.d.next =
                (self.op.val() == self.op_load.val()) | (self.op.val() == self.op_read.val());
            self.stream_op.d.next =
                (self.op.val() == self.op_train.val()) | (self.op.val() == self.op_infer.val());
            self.read_op.d.next = self.op.val() == self.op_read.val();
            self.train_op.d.next = self.op.val() == self.op_train.val();
            self.status_op.d.next = self.op.val() == self.op_status.val();
        }
        self.owing.next = self.owed.q.val() != 0;
        self.errors.next = bit_cast::<16, 5>(self.prev_error.val())
            | (bit_cast::<16, 5>(self.next_error.val()) << 8);
        self.cycles.d.next = self.cycles.q.val() + 1;

        self.accept.next = false;
        self.host_out.valid.next = false;
        self.host_out.data.next = self.preds.data_out.val();
        self.walk_in.valid.next = false;
        self.walk_in.data.next = self.in_word.q.val();
        self.walk_out.ready.next = false;
        self.feed.valid.next = false;
        self.feed.data.next = self.in_word.q.val();
        self.go.next = false;
        self.go_train.next = self.train.q.val();
        self.go_samples.next = self.in_word.q.val();
        self.take.next = false;
        self.preds.write.next = self.pred_valid.val();
        self.preds.data_in.next = self.pred.val();
        self.preds.read.next = false;
        self.hold_r.d.next = self.preds.almost_full.val();
        self.hold.next = self.hold_r.q.val();

        if (self.mode.q.val() == HostMode::Idle) | (self.mode.q.val() == HostMode::Error) {
            // an opcode for the walk goes to it as it is taken
            self.accept.next = true;
            if self.walk_op.q.val() {
                self.walk_in.valid.next = self.in_full.q.val();
                self.accept.next = self.walk_in.ready.val();
            }
            if self.in_full.q.val() & self.accept.val() {
                self.cycles.d.next = 0.into();
                self.train.d.next = self.train_op.q.val();
                self.sent.d.next = 0.into();
                if self.walk_op.q.val() {
                    self.mode.d.next = HostMode::Walk;
                    self.walk_left.d.next = 1.into();
                    if self.read_op.q.val() {
                        self.walk_left.d.next = self.read_words.val();
                    }
                } else if self.stream_op.q.val() {
                    self.mode.d.next = HostMode::Count;
                } else if self.status_op.q.val() {
                    self.mode.d.next = HostMode::Answer;
                    self.msg0.d.next = self.ack_status.val();
                    self.msg1.d.next = self.errors.val();
                    self.msg2.d.next = self.started.val().get_bits::<16>(0);
                    self.msg3.d.next = self.started.val().get_bits::<16>(16);
                    self.count.d.next = 4.into();
                } else if self.mode.q.val() == HostMode::Idle {
                    self.mode.d.next = HostMode::Answer;
                    self.msg0.d.next = self.error_word.val();
                    self.count.d.next = 1.into();
                }
            }
        }
        match self.mode.q.val() {
            HostMode::Walk => {
                self.walk_in.valid.next = self.in_full.q.val();
                self.accept.next = self.walk_in.ready.val();
                self.host_out.data.next = self.walk_out.data.val();
                self.host_out.valid.next = self.walk_out.valid.val();
                self.walk_out.ready.next = self.host_out.ready.val();
                if self.walk_out.valid.val() & self.host_out.ready.val() {
                    self.walk_left.d.next = self.walk_left.q.val() - 1;
                    if self.walk_left.q.val() == 1 {
                        self.mode.d.next = HostMode::Idle;
                    }
                }
            }
            HostMode::Count => {
                self.accept.next = true;
                if self.in_full.q.val() {
                    self.go.next = true;
                    self.mode.d.next = HostMode::Stream;
                    self.word.d.next = 0.into();
                    self.owed.d.next = 0.into();
                    if self.train.q.val() {
                        self.word_last.d.next = self.train_last.val();
                        if self.owes_train.val() {
                            self.owed.d.next = self.in_word.q.val();
                        }
                    } else {
                        self.word_last.d.next = self.infer_last.val();
                        if self.owes_infer.val() {
                            self.owed.d.next = self.in_word.q.val();
                        }
                    }
                }
            }
            HostMode::Stream => {
                self.host_out.valid.next = !self.preds.empty.val();
                self.preds.read.next = !self.preds.empty.val() & self.host_out.ready.val();
                if self.failed.val() {
                    // the stream's remaining words are dropped
                    self.accept.next = self.owing.val();
                } else {
                    self.feed.valid.next = self.in_full.q.val() & self.owing.val();
                    self.accept.next = self.feed.ready.val() & self.owing.val();
                }
                self.take.next = self.in_full.q.val() & self.accept.val();
                if self.take.val() {
                    self.word.d.next = self.word.q.val() + 1;
                    if self.word.q.val() == self.word_last.q.val() {
                        self.word.d.next = 0.into();
                        self.owed.d.next = self.owed.q.val() - 1;
                    }
                }
                if (self.done.val() | self.failed.val())
                    & !self.owing.val()
                    & self.preds.empty.val()
                {
                    self.mode.d.next = HostMode::Answer;
                    self.count.d.next = 3.into();
                    self.msg0.d.next = self.ack_infer.val();
                    if self.train.q.val() {
                        self.msg0.d.next = self.ack_train.val();
                    }
                    self.msg1.d.next = self.cycles.q.val().get_bits::<16>(0);
                    self.msg2.d.next = self.cycles.q.val().get_bits::<16>(16);
                    if self.failed.val() {
                        self.count.d.next = 4.into();
                        self.msg0.d.next = self.link_failed.val();
                        self.msg1.d.next = self.errors.val();
                        self.msg2.d.next = self.started.val().get_bits::<16>(0);
                        self.msg3.d.next = self.started.val().get_bits::<16>(16);
                    }
                }
            }
            HostMode::Answer => {
                self.host_out.valid.next = true;
                self.host_out.data.next = self.msg0.q.val();
                if self.sent.q.val() == 1 {
                    self.host_out.data.next = self.msg1.q.val();
                }
                if self.sent.q.val() == 2 {
                    self.host_out.data.next = self.msg2.q.val();
                }
                if self.sent.q.val() == 3 {
                    self.host_out.data.next = self.msg3.q.val();
                }
                if self.host_out.ready.val() {
                    self.sent.d.next = self.sent.q.val() + 1;
                    if self.sent.q.val() + 1 == self.count.q.val() {
                        self.mode.d.next = HostMode::Idle;
                        if self.msg0.q.val() == self.error_word.val() {
                            self.mode.d.next = HostMode::Error;
                        }
                    }
                }
            }
            _ => {}
        }
        if self.in_full.q.val() & self.accept.val() {
            self.in_full.d.next = false;
        }
    }
}
