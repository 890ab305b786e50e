//! The resident block's control: the commands of its own and the feed of records into the
//! network (mod.rs), as one state machine.

use crate::record_walker::RecordWalker;
use edgeflow_core::Spec;
use rust_hdl::prelude::*;

// The opcodes and answers as the host sees them; `update` spells the numbers out because
// hdl_gen translates only literals.
pub const OP_UPLOAD: u16 = 0x0005;
pub const OP_TRAIN_RESIDENT: u16 = 0x0006;
pub const OP_INFER_RESIDENT: u16 = 0x0007;
pub const ACK_UPLOAD: u16 = 0xA005;
pub const ACK_TRAIN_RESIDENT: u16 = 0xA006;
pub const ACK_INFER_RESIDENT: u16 = 0xA007;
/// An UPLOAD frame whose checksum or address range is wrong: the data set is marked corrupt.
pub const ERROR_FRAME: u16 = 0xEEE5;
/// TRAIN_RESIDENT or INFER_RESIDENT refused: corrupt data, or no samples or epochs.
pub const ERROR_REFUSED: u16 = 0xEEE6;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum Mode {
    Idle,
    PassLoad,
    PassCount,
    PassStream,
    UploadHead,
    UploadData,
    UploadSum,
    TrainHead,
    InferHead,
    /// Resident run: the network's opcode, its sample count, then the samples.
    RunOpcode,
    RunCount,
    SampleNext,
    SampleInputs,
    SampleLabel,
    /// All samples sent: waiting for the network's acknowledgement (3 words).
    RunDrain,
}

#[derive(LogicBlock)]
pub struct ResidentFeeder {
    pub clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// The data memory's port (memory/data_memory.rs): a request (`mem_we` or `mem_re`) at
    /// `mem_addr` is taken on a clock with `mem_ready`; read words come back in order, each
    /// on a clock with `mem_rvalid`, one clock later at the earliest.
    pub mem_addr: Signal<Out, Bits<20>>,
    pub mem_we: Signal<Out, Bit>,
    pub mem_wdata: Signal<Out, Bits<16>>,
    pub mem_re: Signal<Out, Bit>,
    pub mem_rdata: Signal<In, Bits<16>>,
    pub mem_ready: Signal<In, Bit>,
    pub mem_rvalid: Signal<In, Bit>,
    /// The network's host link (its `in_data` is lane 0 of a beat) and, for lanes 1 … W-1,
    /// the buffer whose low bits hold the beat's codes, code `k` at bits `k·b …`.
    pub net_in_data: Signal<Out, Bits<16>>,
    pub net_in_valid: Signal<Out, Bit>,
    pub net_in_ready: Signal<In, Bit>,
    pub net_out_data: Signal<In, Bits<16>>,
    pub net_out_valid: Signal<In, Bit>,
    pub net_out_ready: Signal<Out, Bit>,
    pub beat: Signal<Out, Bits<32>>,
    pub walker: RecordWalker,
    inputs: Constant<Bits<16>>,
    state_words: Constant<Bits<32>>,
    code_mask: Constant<Bits<48>>,
    code_shift: Constant<Bits<5>>,
    /// Input lanes `W`, the bits of a full beat (`W·b`) and of the last beat of a record, and
    /// the first input of that last beat.
    lanes: Constant<Bits<16>>,
    beat_bits: Constant<Bits<6>>,
    last_bits: Constant<Bits<6>>,
    last_at: Constant<Bits<16>>,
    /// One lane: the host's TRAIN and INFER pass through (with more, a host word is not a beat).
    pass_through: Constant<Bit>,
    packed_words: Constant<Bits<16>>,
    record_words: Constant<Bits<20>>,
    capacity: Constant<Bits<21>>,
    mode: DFF<Mode>,
    /// After an unknown opcode: words are dropped until a known opcode.
    dropping: DFF<Bit>,
    /// Index of the next header or checksum word.
    head: DFF<Bits<3>>,
    /// Words still to pass through (LOAD_STATE) or to write (UPLOAD).
    remaining: DFF<Bits<32>>,
    /// TRAIN/INFER passed through, or a resident run: samples still to send.
    samples: DFF<Bits<16>>,
    /// Word of the sample being passed through.
    sample_word: DFF<Bits<16>>,
    train: DFF<Bit>,
    /// A TRAIN or INFER the network cannot take as sent (W > 1): its words are dropped and
    /// the command answers ERROR_REFUSED.
    refusing: DFF<Bit>,
    /// Resident run: samples per epoch (TRAIN) or in all (INFER); epochs still to run.
    run_samples: DFF<Bits<16>>,
    epochs: DFF<Bits<16>>,
    seed_low: DFF<Bits<16>>,
    half_bits: DFF<Bits<4>>,
    write_addr: DFF<Bits<21>>,
    /// Fletcher-style sums of an UPLOAD frame: `sum1 += w`, `sum2 += sum1`.
    sum1: DFF<Bits<16>>,
    sum2: DFF<Bits<16>>,
    frame_bad: DFF<Bit>,
    /// Sticky until an UPLOAD to address 0 starts a new set: some frame was bad.
    corrupt: DFF<Bit>,
    cycles: DFF<Bits<48>>,
    msg0: DFF<Bits<16>>,
    msg1: DFF<Bits<16>>,
    msg2: DFF<Bits<16>>,
    msg3: DFF<Bits<16>>,
    msg_len: DFF<Bits<3>>,
    msg_at: DFF<Bits<3>>,
    /// The record being streamed and the next one of an INFER run.
    base: DFF<Bits<20>>,
    next_base: DFF<Bits<20>>,
    /// Record words requested so far; a read is in flight (its word arrives with `mem_rvalid`).
    word_at: DFF<Bits<16>>,
    pending: DFF<Bit>,
    /// Unpacking: the low `bit_count` bits of `bit_buf` are the next codes. Room for a beat,
    /// a word arriving and a word asked for, so that a beat of up to 16 bits leaves every
    /// clock however the beats fall into words.
    bit_buf: DFF<Bits<48>>,
    bit_count: DFF<Bits<6>>,
    input_at: DFF<Bits<16>>,
    label_step: DFF<Bits<2>>,
    label: DFF<Bits<16>>,
    /// Network answers of a resident run: predictions passed on, acknowledgement words eaten.
    passed: DFF<Bits<16>>,
    eaten: DFF<Bits<2>>,
    msg_pending: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    pass_ready: Signal<Local, Bit>,
    feed_valid: Signal<Local, Bit>,
    feed_data: Signal<Local, Bits<16>>,
    feed_take: Signal<Local, Bit>,
    last_beat: Signal<Local, Bit>,
    beat_used: Signal<Local, Bits<6>>,
    emitted_count: Signal<Local, Bits<6>>,
    emitted_buf: Signal<Local, Bits<48>>,
    next_count: Signal<Local, Bits<6>>,
    resident_run: Signal<Local, Bit>,
    sum1_next: Signal<Local, Bits<16>>,
}

impl ResidentFeeder {
    /// The feed of a network built with `lanes` input lanes (`lanes · b ≤ 16` for `b`-bit
    /// codes) over a data memory of `words` 16-bit words.
    pub fn new(spec: &Spec, lanes: usize, words: usize) -> ResidentFeeder {
        let bits = spec.input_code_bits();
        let n0 = spec.layers[0];
        assert!(bits <= 16 && n0 < 1 << 16);
        assert!(lanes >= 1 && lanes * bits as usize <= 16);
        let last = n0 - (n0 - 1) / lanes * lanes;
        ResidentFeeder {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            mem_addr: Default::default(),
            mem_we: Default::default(),
            mem_wdata: Default::default(),
            mem_re: Default::default(),
            mem_rdata: Default::default(),
            mem_ready: Default::default(),
            mem_rvalid: Default::default(),
            net_in_data: Default::default(),
            net_in_valid: Default::default(),
            net_in_ready: Default::default(),
            net_out_data: Default::default(),
            net_out_valid: Default::default(),
            net_out_ready: Default::default(),
            beat: Default::default(),
            walker: RecordWalker::new(spec.record_words()),
            inputs: Constant::new((spec.layers[0] as u64).into()),
            state_words: Constant::new((spec.state_words() as u64).into()),
            code_mask: Constant::new(((1u64 << bits) - 1).into()),
            code_shift: Constant::new((spec.input_code_shift() as u64).into()),
            lanes: Constant::new((lanes as u64).into()),
            beat_bits: Constant::new(((lanes * bits as usize) as u64).into()),
            last_bits: Constant::new(((last * bits as usize) as u64).into()),
            last_at: Constant::new((((n0 - 1) / lanes * lanes) as u64).into()),
            pass_through: Constant::new(lanes == 1),
            packed_words: Constant::new((spec.packed_input_words() as u64).into()),
            record_words: Constant::new((spec.record_words() as u64).into()),
            capacity: Constant::new((words as u64).into()),
            mode: Default::default(),
            dropping: Default::default(),
            head: Default::default(),
            remaining: Default::default(),
            samples: Default::default(),
            sample_word: Default::default(),
            train: Default::default(),
            refusing: Default::default(),
            run_samples: Default::default(),
            epochs: Default::default(),
            seed_low: Default::default(),
            half_bits: Default::default(),
            write_addr: Default::default(),
            sum1: Default::default(),
            sum2: Default::default(),
            frame_bad: Default::default(),
            corrupt: Default::default(),
            cycles: Default::default(),
            msg0: Default::default(),
            msg1: Default::default(),
            msg2: Default::default(),
            msg3: Default::default(),
            msg_len: Default::default(),
            msg_at: Default::default(),
            base: Default::default(),
            next_base: Default::default(),
            word_at: Default::default(),
            pending: Default::default(),
            bit_buf: Default::default(),
            bit_count: Default::default(),
            input_at: Default::default(),
            label_step: Default::default(),
            label: Default::default(),
            passed: Default::default(),
            eaten: Default::default(),
            msg_pending: Default::default(),
            take: Default::default(),
            pass_ready: Default::default(),
            feed_valid: Default::default(),
            feed_data: Default::default(),
            feed_take: Default::default(),
            last_beat: Default::default(),
            beat_used: Default::default(),
            emitted_count: Default::default(),
            emitted_buf: Default::default(),
            next_count: Default::default(),
            resident_run: Default::default(),
            sum1_next: Default::default(),
        }
    }
}

impl Logic for ResidentFeeder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mode,
            dropping,
            head,
            remaining,
            samples,
            sample_word,
            train,
            refusing,
            run_samples,
            epochs,
            seed_low,
            half_bits,
            write_addr,
            sum1,
            sum2,
            frame_bad,
            corrupt,
            cycles,
            msg0,
            msg1,
            msg2,
            msg3,
            msg_len,
            msg_at,
            base,
            next_base,
            word_at,
            pending,
            bit_buf,
            bit_count,
            input_at,
            label_step,
            label,
            passed,
            eaten
        );
        clock!(self, clock, walker);
        self.cycles.d.next = self.cycles.q.val() + 1;
        self.msg_pending.next = self.msg_at.q.val() < self.msg_len.q.val();
        self.resident_run.next = (self.mode.q.val() == Mode::RunOpcode)
            | (self.mode.q.val() == Mode::RunCount)
            | (self.mode.q.val() == Mode::SampleNext)
            | (self.mode.q.val() == Mode::SampleInputs)
            | (self.mode.q.val() == Mode::SampleLabel)
            | (self.mode.q.val() == Mode::RunDrain);
        // defaults: nothing moves
        self.in_ready.next = false;
        self.take.next = false;
        self.pass_ready.next = self.net_in_ready.val() | self.refusing.q.val();
        self.net_in_data.next = self.in_data.val();
        self.net_in_valid.next = false;
        self.mem_addr.next = bit_cast::<20, 21>(self.write_addr.q.val());
        self.mem_we.next = false;
        self.mem_re.next = false;
        self.mem_wdata.next = self.in_data.val();
        self.walker.seed_load.next = false;
        self.walker.seed.next = bit_cast::<32, 16>(self.in_data.val()) << 16
            | bit_cast::<32, 16>(self.seed_low.q.val());
        self.walker.start.next = false;
        self.walker.n.next = self.run_samples.q.val();
        self.walker.h.next = self.half_bits.q.val();
        self.walker.take.next = false;
        self.feed_valid.next = false;
        self.feed_data.next = 0.into();
        self.sum1_next.next = self.sum1.q.val() + self.in_data.val();

        // unpacking (used in SampleInputs): a beat of W codes (fewer in a record's last beat)
        // leaves when the buffer holds them and the network takes it; a word read the clock
        // before arrives; the next word is read when the buffer will have room for it
        self.emitted_count.next = self.bit_count.q.val();
        self.emitted_buf.next = self.bit_buf.q.val();
        self.beat.next = bit_cast::<32, 48>(self.bit_buf.q.val());
        self.last_beat.next = self.input_at.q.val() == self.last_at.val();
        self.beat_used.next = self.beat_bits.val();
        if self.last_beat.val() {
            self.beat_used.next = self.last_bits.val();
        }
        if self.mode.q.val() == Mode::SampleInputs {
            self.feed_valid.next = self.bit_count.q.val() >= self.beat_used.val();
        }
        if self.mode.q.val() == Mode::RunOpcode {
            self.feed_valid.next = true;
            self.feed_data.next = 3.into();
            if self.train.q.val() {
                self.feed_data.next = 2.into();
            }
        }
        if self.mode.q.val() == Mode::RunCount {
            self.feed_valid.next = true;
            self.feed_data.next = self.run_samples.q.val();
        }
        if self.mode.q.val() == Mode::SampleInputs {
            self.feed_data.next = bit_cast::<16, 48>(
                (self.bit_buf.q.val() & self.code_mask.val()) << self.code_shift.val(),
            );
        }
        if self.mode.q.val() == Mode::SampleLabel {
            self.feed_valid.next = self.label_step.q.val() == 2;
            self.feed_data.next = self.label.q.val();
        }
        self.feed_take.next = self.feed_valid.val() & self.net_in_ready.val();
        if self.resident_run.val() {
            self.net_in_data.next = self.feed_data.val();
            self.net_in_valid.next = self.feed_valid.val();
        }
        if (self.mode.q.val() == Mode::SampleInputs) & self.feed_take.val() {
            self.emitted_count.next = self.bit_count.q.val() - self.beat_used.val();
            self.emitted_buf.next = self.bit_buf.q.val() >> self.beat_used.val();
        }
        self.next_count.next = self.emitted_count.val();
        if self.pending.q.val() & self.mem_rvalid.val() {
            self.next_count.next = self.emitted_count.val() + 16;
        }

        // answers: our own message first, else the network's words (passed on, or eaten
        // during a resident run except the predictions of INFER_RESIDENT)
        self.out_valid.next = false;
        self.out_data.next = self.net_out_data.val();
        self.net_out_ready.next = false;
        if self.msg_pending.val() {
            self.out_valid.next = true;
            self.out_data.next = self.msg0.q.val();
            if self.msg_at.q.val() == 1 {
                self.out_data.next = self.msg1.q.val();
            }
            if self.msg_at.q.val() == 2 {
                self.out_data.next = self.msg2.q.val();
            }
            if self.msg_at.q.val() == 3 {
                self.out_data.next = self.msg3.q.val();
            }
            if self.out_ready.val() {
                self.msg_at.d.next = self.msg_at.q.val() + 1;
            }
        } else if self.resident_run.val() {
            if !self.train.q.val() & (self.passed.q.val() < self.run_samples.q.val()) {
                self.out_valid.next = self.net_out_valid.val();
                self.net_out_ready.next = self.out_ready.val();
                if self.net_out_valid.val() & self.out_ready.val() {
                    self.passed.d.next = self.passed.q.val() + 1;
                }
            } else {
                self.net_out_ready.next = true;
                if self.net_out_valid.val() {
                    self.eaten.d.next = self.eaten.q.val() + 1;
                }
            }
        } else {
            self.out_valid.next = self.net_out_valid.val();
            self.net_out_ready.next = self.out_ready.val();
        }

        match self.mode.q.val() {
            Mode::Idle => {
                // an opcode moves only when the network could take it too
                self.in_ready.next = !self.msg_pending.val() & self.net_in_ready.val();
                self.take.next = self.in_valid.val() & self.in_ready.val();
                self.net_in_valid.next = self.take.val()
                    & (self.in_data.val() >= 1)
                    & (self.in_data.val() <= 4)
                    & (self.pass_through.val()
                        | (self.in_data.val() == 1)
                        | (self.in_data.val() == 4));
                if self.take.val() {
                    self.cycles.d.next = 1.into();
                    self.head.d.next = 0.into();
                    if self.in_data.val() == 1 {
                        self.remaining.d.next = self.state_words.val();
                        self.mode.d.next = Mode::PassLoad;
                    } else if (self.in_data.val() == 2) | (self.in_data.val() == 3) {
                        self.train.d.next = self.in_data.val() == 2;
                        self.refusing.d.next = !self.pass_through.val();
                        self.mode.d.next = Mode::PassCount;
                    } else if self.in_data.val() == 4 {
                        self.mode.d.next = Mode::Idle;
                    } else if self.in_data.val() == 5 {
                        self.sum1.d.next = 0.into();
                        self.sum2.d.next = 0.into();
                        self.frame_bad.d.next = false;
                        self.mode.d.next = Mode::UploadHead;
                    } else if self.in_data.val() == 6 {
                        self.mode.d.next = Mode::TrainHead;
                    } else if self.in_data.val() == 7 {
                        self.mode.d.next = Mode::InferHead;
                    } else if !self.dropping.q.val() {
                        // unknown: answered once, then words are dropped until a known opcode
                        self.msg0.d.next = 0xEEEE.into();
                        self.msg_len.d.next = 1.into();
                        self.msg_at.d.next = 0.into();
                    }
                    self.dropping.d.next = (self.in_data.val() == 0) | (self.in_data.val() > 7);
                }
            }
            Mode::PassLoad => {
                self.in_ready.next = self.net_in_ready.val();
                self.net_in_valid.next = self.in_valid.val();
                if self.in_valid.val() & self.net_in_ready.val() {
                    self.remaining.d.next = self.remaining.q.val() - 1;
                    if self.remaining.q.val() == 1 {
                        self.mode.d.next = Mode::Idle;
                    }
                }
            }
            Mode::PassCount => {
                self.in_ready.next = self.pass_ready.val();
                self.net_in_valid.next = self.in_valid.val() & !self.refusing.q.val();
                if self.in_valid.val() & self.pass_ready.val() {
                    self.samples.d.next = self.in_data.val();
                    self.sample_word.d.next = 0.into();
                    self.mode.d.next = Mode::PassStream;
                    if self.in_data.val() == 0 {
                        self.mode.d.next = Mode::Idle;
                        if self.refusing.q.val() {
                            self.msg0.d.next = 0xEEE6.into();
                            self.msg_len.d.next = 1.into();
                            self.msg_at.d.next = 0.into();
                        }
                    }
                }
            }
            Mode::PassStream => {
                self.in_ready.next = self.pass_ready.val();
                self.net_in_valid.next = self.in_valid.val() & !self.refusing.q.val();
                if self.in_valid.val() & self.pass_ready.val() {
                    self.sample_word.d.next = self.sample_word.q.val() + 1;
                    // a training sample is its inputs and a label; an inference sample its inputs
                    if (self.train.q.val() & (self.sample_word.q.val() == self.inputs.val()))
                        | (!self.train.q.val()
                            & (self.sample_word.q.val() + 1 == self.inputs.val()))
                    {
                        self.sample_word.d.next = 0.into();
                        self.samples.d.next = self.samples.q.val() - 1;
                        if self.samples.q.val() == 1 {
                            self.mode.d.next = Mode::Idle;
                            if self.refusing.q.val() {
                                self.msg0.d.next = 0xEEE6.into();
                                self.msg_len.d.next = 1.into();
                                self.msg_at.d.next = 0.into();
                            }
                        }
                    }
                }
            }
            Mode::UploadHead => {
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.sum1.d.next = self.sum1_next.val();
                    self.sum2.d.next = self.sum2.q.val() + self.sum1_next.val();
                    self.head.d.next = self.head.q.val() + 1;
                    if self.head.q.val() == 0 {
                        self.write_addr.d.next = bit_cast::<21, 16>(self.in_data.val());
                    }
                    if self.head.q.val() == 1 {
                        self.write_addr.d.next = (bit_cast::<21, 16>(self.in_data.val()) << 16)
                            | self.write_addr.q.val();
                    }
                    if self.head.q.val() == 2 {
                        self.remaining.d.next = bit_cast::<32, 16>(self.in_data.val());
                        // a new set starts at address 0: what was corrupt before is gone
                        if self.write_addr.q.val() == 0 {
                            self.corrupt.d.next = false;
                        }
                        self.head.d.next = 0.into();
                        self.mode.d.next = Mode::UploadData;
                        if self.in_data.val() == 0 {
                            self.mode.d.next = Mode::UploadSum;
                        }
                    }
                }
            }
            Mode::UploadData => {
                // a word moves when the memory takes its write (words past the capacity are
                // dropped, and the frame is bad)
                self.mem_we.next =
                    self.in_valid.val() & (self.write_addr.q.val() < self.capacity.val());
                self.in_ready.next =
                    self.mem_ready.val() | (self.write_addr.q.val() >= self.capacity.val());
                if self.in_valid.val() & self.in_ready.val() {
                    self.sum1.d.next = self.sum1_next.val();
                    self.sum2.d.next = self.sum2.q.val() + self.sum1_next.val();
                    if self.write_addr.q.val() >= self.capacity.val() {
                        self.frame_bad.d.next = true;
                    }
                    self.write_addr.d.next = self.write_addr.q.val() + 1;
                    self.remaining.d.next = self.remaining.q.val() - 1;
                    if self.remaining.q.val() == 1 {
                        self.mode.d.next = Mode::UploadSum;
                    }
                }
            }
            Mode::UploadSum => {
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.head.d.next = self.head.q.val() + 1;
                    if (self.head.q.val() == 0) & (self.in_data.val() != self.sum1.q.val()) {
                        self.frame_bad.d.next = true;
                    }
                    if self.head.q.val() == 1 {
                        self.msg_at.d.next = 0.into();
                        self.mode.d.next = Mode::Idle;
                        if self.frame_bad.q.val() | (self.in_data.val() != self.sum2.q.val()) {
                            self.corrupt.d.next = true;
                            self.msg0.d.next = 0xEEE5.into();
                            self.msg_len.d.next = 1.into();
                        } else {
                            self.msg0.d.next = 0xA005.into();
                            self.msg1.d.next = bit_cast::<16, 48>(self.cycles.q.val());
                            self.msg2.d.next = bit_cast::<16, 48>(self.cycles.q.val() >> 16);
                            self.msg_len.d.next = 3.into();
                        }
                    }
                }
            }
            Mode::TrainHead => {
                // samples, epochs, seed (low, high), half bits
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.head.d.next = self.head.q.val() + 1;
                    if self.head.q.val() == 0 {
                        self.run_samples.d.next = self.in_data.val();
                    }
                    if self.head.q.val() == 1 {
                        self.epochs.d.next = self.in_data.val();
                    }
                    if self.head.q.val() == 2 {
                        self.seed_low.d.next = self.in_data.val();
                    }
                    if self.head.q.val() == 3 {
                        self.walker.seed_load.next = true;
                    }
                    if self.head.q.val() == 4 {
                        self.half_bits.d.next = bit_cast::<4, 16>(self.in_data.val());
                        self.train.d.next = true;
                        if self.corrupt.q.val()
                            | (self.run_samples.q.val() == 0)
                            | (self.epochs.q.val() == 0)
                        {
                            self.msg0.d.next = 0xEEE6.into();
                            self.msg_len.d.next = 1.into();
                            self.msg_at.d.next = 0.into();
                            self.mode.d.next = Mode::Idle;
                        } else {
                            self.mode.d.next = Mode::RunOpcode;
                        }
                    }
                }
            }
            Mode::InferHead => {
                // first record's word address (low, high), samples
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.head.d.next = self.head.q.val() + 1;
                    if self.head.q.val() == 0 {
                        self.next_base.d.next = bit_cast::<20, 16>(self.in_data.val());
                    }
                    if self.head.q.val() == 1 {
                        self.next_base.d.next =
                            (bit_cast::<20, 16>(self.in_data.val()) << 16) | self.next_base.q.val();
                    }
                    if self.head.q.val() == 2 {
                        self.run_samples.d.next = self.in_data.val();
                        self.epochs.d.next = 1.into();
                        self.train.d.next = false;
                        if self.corrupt.q.val() | (self.in_data.val() == 0) {
                            self.msg0.d.next = 0xEEE6.into();
                            self.msg_len.d.next = 1.into();
                            self.msg_at.d.next = 0.into();
                            self.mode.d.next = Mode::Idle;
                        } else {
                            self.mode.d.next = Mode::RunOpcode;
                        }
                    }
                }
            }
            Mode::RunOpcode => {
                if self.feed_take.val() {
                    // each epoch's keys are drawn as its stream starts
                    self.walker.start.next = self.train.q.val();
                    self.mode.d.next = Mode::RunCount;
                }
            }
            Mode::RunCount => {
                if self.feed_take.val() {
                    self.samples.d.next = self.run_samples.q.val();
                    self.passed.d.next = 0.into();
                    self.eaten.d.next = 0.into();
                    self.mode.d.next = Mode::SampleNext;
                }
            }
            Mode::SampleNext => {
                self.word_at.d.next = 0.into();
                self.pending.d.next = false;
                self.bit_buf.d.next = 0.into();
                self.bit_count.d.next = 0.into();
                self.input_at.d.next = 0.into();
                self.label_step.d.next = 0.into();
                if self.train.q.val() {
                    if self.walker.valid.val() {
                        self.walker.take.next = true;
                        self.base.d.next = self.walker.base.val();
                        self.mode.d.next = Mode::SampleInputs;
                    }
                } else {
                    self.base.d.next = self.next_base.q.val();
                    self.next_base.d.next = self.next_base.q.val() + self.record_words.val();
                    self.mode.d.next = Mode::SampleInputs;
                }
            }
            Mode::SampleInputs => {
                // one read in flight at a time: the next is asked for on the clock the last
                // one's word arrives (every clock from a memory of one clock's latency), when
                // the buffer has room for it
                self.mem_addr.next = self.base.q.val() + bit_cast::<20, 16>(self.word_at.q.val());
                self.bit_count.d.next = self.next_count.val();
                self.bit_buf.d.next = self.emitted_buf.val();
                if self.pending.q.val() & self.mem_rvalid.val() {
                    self.bit_buf.d.next = self.emitted_buf.val()
                        | (bit_cast::<48, 16>(self.mem_rdata.val()) << self.emitted_count.val());
                    self.pending.d.next = false;
                }
                // the request stays up until the memory takes it
                self.mem_re.next = (self.word_at.q.val() < self.packed_words.val())
                    & (self.next_count.val() <= 32)
                    & (!self.pending.q.val() | self.mem_rvalid.val());
                if self.mem_re.val() & self.mem_ready.val() {
                    self.pending.d.next = true;
                    self.word_at.d.next = self.word_at.q.val() + 1;
                }
                if self.feed_take.val() {
                    self.input_at.d.next = self.input_at.q.val() + self.lanes.val();
                    if self.last_beat.val() {
                        if self.train.q.val() {
                            self.mode.d.next = Mode::SampleLabel;
                        } else {
                            self.samples.d.next = self.samples.q.val() - 1;
                            self.mode.d.next = Mode::SampleNext;
                            if self.samples.q.val() == 1 {
                                self.mode.d.next = Mode::RunDrain;
                            }
                        }
                    }
                }
            }
            Mode::SampleLabel => {
                // step 0: ask for the label word; 1: it arrives; 2: offered to the network
                self.mem_addr.next =
                    self.base.q.val() + bit_cast::<20, 16>(self.packed_words.val());
                self.mem_re.next = self.label_step.q.val() == 0;
                if self.mem_re.val() & self.mem_ready.val() {
                    self.label_step.d.next = 1.into();
                }
                if (self.label_step.q.val() == 1) & self.mem_rvalid.val() {
                    self.label.d.next = self.mem_rdata.val();
                    self.label_step.d.next = 2.into();
                }
                if self.feed_take.val() {
                    self.samples.d.next = self.samples.q.val() - 1;
                    self.mode.d.next = Mode::SampleNext;
                    if self.samples.q.val() == 1 {
                        self.mode.d.next = Mode::RunDrain;
                    }
                }
            }
            Mode::RunDrain => {
                if self.eaten.q.val() == 3 {
                    self.eaten.d.next = 0.into();
                    self.epochs.d.next = self.epochs.q.val() - 1;
                    if self.epochs.q.val() == 1 {
                        self.msg0.d.next = 0xA007.into();
                        if self.train.q.val() {
                            self.msg0.d.next = 0xA006.into();
                        }
                        self.msg1.d.next = bit_cast::<16, 48>(self.cycles.q.val());
                        self.msg2.d.next = bit_cast::<16, 48>(self.cycles.q.val() >> 16);
                        self.msg3.d.next = bit_cast::<16, 48>(self.cycles.q.val() >> 32);
                        self.msg_len.d.next = 4.into();
                        self.msg_at.d.next = 0.into();
                        self.mode.d.next = Mode::Idle;
                    } else {
                        self.mode.d.next = Mode::RunOpcode;
                    }
                }
            }
        }
    }
}
