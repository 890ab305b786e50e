//! The host link's state machine (`#[hdl_gen]`: rust-hdl writes its Verilog from the
//! `update` the simulation runs). The link (mod.rs) wires it to the junctions: which
//! junction the walk selects, the walk's last bank and row for the next position, the value
//! read back, and the input lanes' write enables.
//!
//! Counters are held in wide signals masked with a constant of their exact width (yosys
//! removes the constant-zero bits). What the stream's handshake depends on is kept in
//! registers (`lead`, `more`, `at_label`, `last_beat`), so no counter comparison sits in
//! front of a take.

use super::word_stream::{WordSink, WordSource};
use super::{ACK_INFER, ACK_LOAD, ACK_READ, ACK_TRAIN, ERROR_WORD};
use super::{OP_INFER, OP_LOAD, OP_READ, OP_TRAIN};
use rust_hdl::core::prelude::*;
use rust_hdl::widgets::dff_setup;
use rust_hdl::widgets::prelude::DFF;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum Mode {
    Idle,
    /// An unknown opcode was answered; junk is ignored until a known opcode.
    Error,
    Load,
    /// A TRAIN or INFER opcode waits for its sample count.
    Count,
    Stream,
    Read,
}

#[derive(LogicBlock)]
pub struct LinkCore {
    pub clock: Signal<In, Clock>,
    /// The host's words.
    pub host_in: WordSink,
    /// The answers.
    pub host_out: WordSource,
    pub go: Signal<Out, Bit>,
    pub go_train: Signal<Out, Bit>,
    pub sample_ready: Signal<Out, Bit>,
    pub lab_we: Signal<Out, Bit>,
    pub out_busy: Signal<Out, Bit>,
    pub starting: Signal<In, Bit>,
    pub done: Signal<In, Bit>,
    pub pred_valid: Signal<In, Bit>,
    pub pred: Signal<In, Bits<16>>,
    /// The walk's position: junction, weights or biases, row, bank.
    pub junction: Signal<Out, Bits<16>>,
    pub bias: Signal<Out, Bit>,
    pub row: Signal<Out, Bits<16>>,
    pub bank: Signal<Out, Bits<16>>,
    /// LOAD or READ: the walk's junction is selected.
    pub walking: Signal<Out, Bit>,
    pub h_we: Signal<Out, Bit>,
    /// The walk's next junction and kind, and (from the link's table) their last bank and row.
    pub next_junction: Signal<Out, Bits<16>>,
    pub next_bias: Signal<Out, Bit>,
    pub next_last_bank: Signal<In, Bits<16>>,
    pub next_last_row: Signal<In, Bits<16>>,
    /// The value the walk's junction reads back.
    pub rdata: Signal<In, Bits<16>>,
    /// A sample's input word (or beat) is taken now: it is written at `word`.
    pub stream_take: Signal<Out, Bit>,
    pub in_we: Signal<Out, Bit>,
    pub in_copy: Signal<Out, Bits<16>>,
    pub word: Signal<Out, Bits<16>>,
    mode: DFF<Mode>,
    /// The mode is LOAD or READ, kept with the mode: the junctions' host selects (and behind
    /// them the weight memories' addresses) start at a register.
    walking_r: DFF<Bit>,
    train: DFF<Bit>,
    /// The answer queue: `count` words, `sent` of them gone.
    msg0: DFF<Bits<16>>,
    msg1: DFF<Bits<16>>,
    msg2: DFF<Bits<16>>,
    count: DFF<Bits<2>>,
    sent: DFF<Bits<2>>,
    /// Clocks since the command's opcode.
    cycles: DFF<Bits<32>>,
    bias_r: DFF<Bit>,
    bank_r: DFF<Bits<16>>,
    row_r: DFF<Bits<16>>,
    junction_r: DFF<Bits<16>>,
    /// READ asks the memory in one clock and sends its value in the next.
    read_phase: DFF<Bit>,
    /// The walk's position is at its last bank, row, junction (XOR their values at an
    /// opcode, so that the flip-flops start at zero).
    bank_end_x: DFF<Bit>,
    row_end_x: DFF<Bit>,
    junction_end_x: DFF<Bit>,
    /// Samples of the stream not loaded yet, counted down from its sample count.
    left: DFF<Bits<16>>,
    /// The next word is the label (training) / past the inputs.
    at_label: DFF<Bit>,
    /// This beat is the sample's last input beat, XOR its value at a sample's start.
    last_beat_x: DFF<Bit>,
    /// `started + 2 - loaded`, counted with the controller's starts and the loaded samples,
    /// XOR its start value 2. It never falls below 0 (a sample is taken only while it is
    /// at least 1) nor rises above the stream's extra block cycles plus 2 (a block cycle
    /// that takes a sample starts only while it is at most 1), so it is that narrow.
    lead_x: DFF<Bits<16>>,
    /// More samples of the stream are to come.
    more: DFF<Bit>,
    word_r: DFF<Bits<16>>,
    in_copy_r: DFF<Bits<16>>,
    op_load: Constant<Bits<16>>,
    op_train: Constant<Bits<16>>,
    op_infer: Constant<Bits<16>>,
    op_read: Constant<Bits<16>>,
    ack_load: Constant<Bits<16>>,
    ack_train: Constant<Bits<16>>,
    ack_infer: Constant<Bits<16>>,
    ack_read: Constant<Bits<16>>,
    error_word: Constant<Bits<16>>,
    lead_start: Constant<Bits<16>>,
    lead_bits: Constant<Bits<16>>,
    lanes: Constant<Bits<16>>,
    inputs: Constant<Bits<32>>,
    /// A sample of at most `lanes` inputs ends at its first beat.
    first_beat_last: Constant<Bit>,
    /// The walk's end flags at its start (junction 0, weights, row 0, bank 0).
    start_bank_end: Constant<Bit>,
    start_row_end: Constant<Bit>,
    start_junction_end: Constant<Bit>,
    last_junction: Constant<Bits<16>>,
    last_copy: Constant<Bits<16>>,
    bank_bits: Constant<Bits<16>>,
    row_bits: Constant<Bits<16>>,
    junction_bits: Constant<Bits<16>>,
    copy_bits: Constant<Bits<16>>,
    word_bits: Constant<Bits<16>>,
    pending: Signal<Local, Bit>,
    ready: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    wrap: Signal<Local, Bit>,
    lead: Signal<Local, Bits<16>>,
    bank_end: Signal<Local, Bit>,
    row_end: Signal<Local, Bit>,
    junction_end: Signal<Local, Bit>,
    last_beat: Signal<Local, Bit>,
    next_bank: Signal<Local, Bits<16>>,
    next_row: Signal<Local, Bits<16>>,
    next_junction_now: Signal<Local, Bits<16>>,
    next_bias_now: Signal<Local, Bit>,
    walk_done: Signal<Local, Bit>,
    cycles_next: Signal<Local, Bits<32>>,
    /// A word taken while no command runs, and whether it is a known opcode.
    command: Signal<Local, Bit>,
    known: Signal<Local, Bit>,
    step_walk: Signal<Local, Bit>,
}

/// The link's sizes: sample `inputs` arriving `lanes` a beat, `copies` input copies, the
/// walk's `junctions`, its largest bank and row counts, and its end flags at the start.
pub struct CoreSizes {
    pub inputs: usize,
    pub lanes: usize,
    pub copies: usize,
    pub junctions: usize,
    pub max_banks: usize,
    pub max_rows: usize,
    pub start_ends: [bool; 3],
    /// The most block cycles a stream adds to its samples.
    pub max_extra: usize,
}

impl LinkCore {
    pub fn new(z: &CoreSizes) -> LinkCore {
        let c16 = |v: u64| Constant::<Bits<16>>::new(v.into());
        let word_max = z.inputs + 2 * z.lanes;
        assert!(
            word_max < 1 << 16,
            "a sample's words are counted in 16 bits"
        );
        LinkCore {
            clock: Default::default(),
            host_in: Default::default(),
            host_out: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            sample_ready: Default::default(),
            lab_we: Default::default(),
            out_busy: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            pred_valid: Default::default(),
            pred: Default::default(),
            junction: Default::default(),
            bias: Default::default(),
            row: Default::default(),
            bank: Default::default(),
            walking: Default::default(),
            h_we: Default::default(),
            next_junction: Default::default(),
            next_bias: Default::default(),
            next_last_bank: Default::default(),
            next_last_row: Default::default(),
            rdata: Default::default(),
            stream_take: Default::default(),
            in_we: Default::default(),
            in_copy: Default::default(),
            word: Default::default(),
            mode: Default::default(),
            walking_r: Default::default(),
            train: Default::default(),
            msg0: Default::default(),
            msg1: Default::default(),
            msg2: Default::default(),
            count: Default::default(),
            sent: Default::default(),
            cycles: Default::default(),
            bias_r: Default::default(),
            bank_r: Default::default(),
            row_r: Default::default(),
            junction_r: Default::default(),
            read_phase: Default::default(),
            bank_end_x: Default::default(),
            row_end_x: Default::default(),
            junction_end_x: Default::default(),
            left: Default::default(),
            at_label: Default::default(),
            last_beat_x: Default::default(),
            lead_x: Default::default(),
            more: Default::default(),
            word_r: Default::default(),
            in_copy_r: Default::default(),
            op_load: c16(OP_LOAD as u64),
            op_train: c16(OP_TRAIN as u64),
            op_infer: c16(OP_INFER as u64),
            op_read: c16(OP_READ as u64),
            ack_load: c16(ACK_LOAD as u64),
            ack_train: c16(ACK_TRAIN as u64),
            ack_infer: c16(ACK_INFER as u64),
            ack_read: c16(ACK_READ as u64),
            error_word: c16(ERROR_WORD as u64),
            lead_start: c16(2),
            lead_bits: c16(crate::mask_for(z.max_extra + 2)),
            lanes: c16(z.lanes as u64),
            inputs: Constant::new((z.inputs as u64).into()),
            first_beat_last: Constant::new(z.lanes >= z.inputs),
            start_bank_end: Constant::new(z.start_ends[0]),
            start_row_end: Constant::new(z.start_ends[1]),
            start_junction_end: Constant::new(z.start_ends[2]),
            last_junction: c16(z.junctions as u64 - 1),
            last_copy: c16(z.copies as u64 - 1),
            bank_bits: c16(crate::mask_for(z.max_banks - 1)),
            row_bits: c16(crate::mask_for(z.max_rows - 1)),
            junction_bits: c16(crate::mask_for(z.junctions - 1)),
            copy_bits: c16(crate::mask_for(z.copies - 1)),
            word_bits: c16(crate::mask_for(word_max)),
            pending: Default::default(),
            ready: Default::default(),
            take: Default::default(),
            wrap: Default::default(),
            lead: Default::default(),
            bank_end: Default::default(),
            row_end: Default::default(),
            junction_end: Default::default(),
            last_beat: Default::default(),
            next_bank: Default::default(),
            next_row: Default::default(),
            next_junction_now: Default::default(),
            next_bias_now: Default::default(),
            walk_done: Default::default(),
            cycles_next: Default::default(),
            command: Default::default(),
            known: Default::default(),
            step_walk: Default::default(),
        }
    }
}

impl Logic for LinkCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mode,
            walking_r,
            train,
            msg0,
            msg1,
            msg2,
            count,
            sent,
            cycles,
            bias_r,
            bank_r,
            row_r,
            junction_r,
            read_phase,
            bank_end_x,
            row_end_x,
            junction_end_x,
            left,
            at_label,
            last_beat_x,
            lead_x,
            more,
            word_r,
            in_copy_r
        );
        self.pending.next = self.sent.q.val() < self.count.q.val();
        self.lead.next = self.lead_x.q.val() ^ self.lead_start.val();
        self.ready.next = false;
        match self.mode.q.val() {
            Mode::Idle => {
                self.ready.next = !self.pending.val();
            }
            Mode::Error => {
                self.ready.next = !self.pending.val();
            }
            Mode::Load => {
                self.ready.next = true;
            }
            Mode::Count => {
                self.ready.next = true;
            }
            Mode::Stream => {
                self.ready.next = self.more.q.val() & (self.lead.val() != 0);
            }
            Mode::Read => {
                self.ready.next = false;
            }
        }
        self.take.next = self.ready.val() & self.host_in.valid.val();
        self.bank_end.next = self.bank_end_x.q.val() ^ self.start_bank_end.val();
        self.row_end.next = self.row_end_x.q.val() ^ self.start_row_end.val();
        self.junction_end.next = self.junction_end_x.q.val() ^ self.start_junction_end.val();
        self.last_beat.next = self.last_beat_x.q.val() ^ self.first_beat_last.val();
        // the walk's next position: bank fastest, then row, then junction, weights then biases
        self.next_bank.next = (self.bank_r.q.val() + 1) & self.bank_bits.val();
        self.next_row.next = self.row_r.q.val();
        self.next_junction_now.next = self.junction_r.q.val();
        self.next_bias_now.next = self.bias_r.q.val();
        if self.bank_end.val() {
            self.next_bank.next = 0.into();
            self.next_row.next = (self.row_r.q.val() + 1) & self.row_bits.val();
            if self.row_end.val() {
                self.next_row.next = 0.into();
                self.next_junction_now.next =
                    (self.junction_r.q.val() + 1) & self.junction_bits.val();
                if self.junction_end.val() {
                    self.next_junction_now.next = 0.into();
                    self.next_bias_now.next = !self.bias_r.q.val();
                }
            }
        }
        self.walk_done.next = self.bank_end.val()
            & self.row_end.val()
            & self.junction_end.val()
            & self.bias_r.q.val();
        self.cycles_next.next = self.cycles.q.val() + 1;
        self.wrap.next = (self.mode.q.val() == Mode::Stream)
            & self.take.val()
            & (self.at_label.q.val() | (!self.train.q.val() & self.last_beat.val()));
        self.host_in.ready.next = self.ready.val();
        self.host_out.valid.next = self.pending.val();
        self.out_busy.next = self.pending.val();
        self.host_out.data.next = 0.into();
        if self.pending.val() {
            self.host_out.data.next = self.msg2.q.val();
            if self.sent.q.val() == 0 {
                self.host_out.data.next = self.msg0.q.val();
            }
            if self.sent.q.val() == 1 {
                self.host_out.data.next = self.msg1.q.val();
            }
        }
        self.go.next = (self.mode.q.val() == Mode::Count) & self.take.val();
        self.go_train.next = self.train.q.val();
        self.sample_ready.next = self.lead.val() <= 1;
        self.stream_take.next = (self.mode.q.val() == Mode::Stream) & self.take.val();
        self.lab_we.next = self.stream_take.val() & self.at_label.q.val();
        self.in_we.next = self.stream_take.val() & !self.at_label.q.val();
        self.in_copy.next = self.in_copy_r.q.val();
        self.word.next = self.word_r.q.val();
        self.junction.next = self.junction_r.q.val();
        self.bias.next = self.bias_r.q.val();
        self.row.next = self.row_r.q.val();
        self.bank.next = self.bank_r.q.val();
        self.walking.next = self.walking_r.q.val();
        self.h_we.next = (self.mode.q.val() == Mode::Load) & self.host_in.valid.val();
        self.next_junction.next = self.next_junction_now.val();
        self.next_bias.next = self.next_bias_now.val();
        // the stream's readiness, the controller's `starting` choosing last
        if (self.mode.q.val() == Mode::Count) & self.take.val() {
            self.lead_x.d.next = 0.into();
            self.more.d.next = self.host_in.data.val() != 0;
        } else {
            if self.starting.val() & !self.wrap.val() {
                self.lead_x.d.next =
                    ((self.lead.val() + 1) & self.lead_bits.val()) ^ self.lead_start.val();
            } else if self.wrap.val() & !self.starting.val() {
                self.lead_x.d.next =
                    ((self.lead.val() - 1) & self.lead_bits.val()) ^ self.lead_start.val();
            }
            if self.wrap.val() {
                self.more.d.next = self.left.q.val() != 1;
            }
        }
        if self.pending.val() & self.host_out.ready.val() {
            self.sent.d.next = self.sent.q.val() + 1;
        }
        self.cycles.d.next = self.cycles_next.val();
        self.command.next = false;
        self.known.next = (self.host_in.data.val() >= self.op_load.val())
            & (self.host_in.data.val() <= self.op_read.val());
        self.step_walk.next = false;
        match self.mode.q.val() {
            Mode::Idle => {
                self.command.next = self.take.val();
            }
            Mode::Error => {
                self.command.next = self.take.val();
            }
            Mode::Load => {
                if self.take.val() {
                    self.step_walk.next = true;
                    if self.walk_done.val() {
                        self.walking_r.d.next = false;
                        self.msg0.d.next = self.ack_load.val();
                        self.count.d.next = 1.into();
                        self.sent.d.next = 0.into();
                        self.mode.d.next = Mode::Idle;
                    }
                }
            }
            Mode::Count => {
                if self.take.val() {
                    self.left.d.next = self.host_in.data.val();
                    self.word_r.d.next = 0.into();
                    self.in_copy_r.d.next = 0.into();
                    self.at_label.d.next = false;
                    self.last_beat_x.d.next = false;
                    self.mode.d.next = Mode::Stream;
                }
            }
            Mode::Stream => {
                if self.take.val() {
                    if self.at_label.q.val() | (!self.train.q.val() & self.last_beat.val()) {
                        self.word_r.d.next = 0.into();
                        self.at_label.d.next = false;
                        self.last_beat_x.d.next = false;
                        self.left.d.next = self.left.q.val() - 1;
                        self.in_copy_r.d.next = (self.in_copy_r.q.val() + 1) & self.copy_bits.val();
                        if self.in_copy_r.q.val() == self.last_copy.val() {
                            self.in_copy_r.d.next = 0.into();
                        }
                    } else {
                        self.word_r.d.next =
                            (self.word_r.q.val() + self.lanes.val()) & self.word_bits.val();
                        self.at_label.d.next = self.last_beat.val();
                        self.last_beat_x.d.next = ((bit_cast::<32, 16>(self.word_r.q.val())
                            + bit_cast::<32, 16>(self.lanes.val())
                            + bit_cast::<32, 16>(self.lanes.val()))
                            >= self.inputs.val())
                            ^ self.first_beat_last.val();
                    }
                }
                if self.pred_valid.val() {
                    self.msg0.d.next = self.pred.val();
                    self.count.d.next = 1.into();
                    self.sent.d.next = 0.into();
                } else if self.done.val() & !self.pending.val() {
                    self.msg0.d.next = self.ack_infer.val();
                    if self.train.q.val() {
                        self.msg0.d.next = self.ack_train.val();
                    }
                    self.msg1.d.next = self.cycles_next.val().get_bits::<16>(0);
                    self.msg2.d.next = self.cycles_next.val().get_bits::<16>(16);
                    self.count.d.next = 3.into();
                    self.sent.d.next = 0.into();
                    self.mode.d.next = Mode::Idle;
                }
            }
            Mode::Read => {
                if !self.read_phase.q.val() {
                    self.read_phase.d.next = true;
                } else if !self.pending.val() {
                    self.msg0.d.next = self.rdata.val();
                    self.count.d.next = 1.into();
                    self.sent.d.next = 0.into();
                    self.read_phase.d.next = false;
                    self.step_walk.next = true;
                    if self.walk_done.val() {
                        self.walking_r.d.next = false;
                        self.mode.d.next = Mode::Idle;
                        // the acknowledgement follows the last value
                        self.msg1.d.next = self.ack_read.val();
                        self.count.d.next = 2.into();
                    }
                }
            }
        }
        if self.step_walk.val() {
            self.bank_r.d.next = self.next_bank.val();
            self.row_r.d.next = self.next_row.val();
            self.junction_r.d.next = self.next_junction_now.val();
            self.bias_r.d.next = self.next_bias_now.val();
            self.bank_end_x.d.next =
                (self.next_bank.val() == self.next_last_bank.val()) ^ self.start_bank_end.val();
            self.row_end_x.d.next =
                (self.next_row.val() == self.next_last_row.val()) ^ self.start_row_end.val();
            self.junction_end_x.d.next = (self.next_junction_now.val() == self.last_junction.val())
                ^ self.start_junction_end.val();
        }
        // A word taken while no command runs: the walk and the clock count restart on any
        // (outside LOAD, READ and a stream nothing reads them, and every command restarts
        // them), so only the mode and the answer wait on decoding the word.
        if self.command.val() {
            self.cycles.d.next = 0.into();
            self.junction_r.d.next = 0.into();
            self.bias_r.d.next = false;
            self.bank_r.d.next = 0.into();
            self.row_r.d.next = 0.into();
            self.read_phase.d.next = false;
            self.bank_end_x.d.next = false;
            self.row_end_x.d.next = false;
            self.junction_end_x.d.next = false;
            self.train.d.next = self.host_in.data.val() == self.op_train.val();
            if self.known.val() {
                self.walking_r.d.next = (self.host_in.data.val() == self.op_load.val())
                    | (self.host_in.data.val() == self.op_read.val());
                self.mode.d.next = Mode::Read;
                if self.host_in.data.val() == self.op_load.val() {
                    self.mode.d.next = Mode::Load;
                }
                if (self.host_in.data.val() == self.op_train.val())
                    | (self.host_in.data.val() == self.op_infer.val())
                {
                    self.mode.d.next = Mode::Count;
                }
            } else if self.mode.q.val() == Mode::Idle {
                // an unknown opcode is answered once; junk after it is ignored
                self.mode.d.next = Mode::Error;
                self.msg0.d.next = self.error_word.val();
                self.count.d.next = 1.into();
                self.sent.d.next = 0.into();
            }
        }
    }
}
