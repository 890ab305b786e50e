//! The link's receiving side. In the forwarded clock (`link_clock`) it gathers beats into
//! words, writes them to the clock-domain-crossing FIFO and returns credits; in the
//! receiving board's clock it checks each transfer's header, length and CRC while passing
//! the vector's words on.

use super::cdc::CdcFifo;
use super::{
    Crc16Step, CRC_INIT, ERR_CHECKSUM, ERR_FRAMING, ERR_OVERRUN, ERR_SEQUENCE, ERR_TIMEOUT,
};
use crate::word_stream::WordSource;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum RxState {
    Header,
    Payload,
    Check,
    Failed,
}

/// `W` data pins (as the sender's), a FIFO of `2^N` words (`NP1 = N + 1`); the sender must
/// start with `2^N` credits.
#[derive(LogicBlock)]
pub struct LinkRx<const W: usize, const N: usize, const NP1: usize> {
    /// The receiving board's clock.
    pub clock: Signal<In, Clock>,
    pub link_clock: Signal<In, Clock>,
    pub link_data: Signal<In, Bits<W>>,
    pub link_valid: Signal<In, Bit>,
    pub link_start: Signal<In, Bit>,
    pub link_credit: Signal<Out, Bit>,
    /// The vector's words in order, taken on a clock where `valid` and `ready` are high.
    /// They are provisional until `good`.
    pub words: WordSource,
    /// High for one clock after the last word of a transfer whose CRC matched.
    pub good: Signal<Out, Bit>,
    /// High while the consumer waits for a transfer: the timeout then runs between
    /// transfers too (a transfer lost at the end of a run).
    pub awaiting: Signal<In, Bit>,
    /// Sticky `ERR_*` bits; any of them stops delivery.
    pub error: Signal<Out, Bits<5>>,
    /// Transfers that arrived good.
    pub received: Signal<Out, Bits<16>>,
    fifo: CdcFifo<Bits<17>, N, NP1>,
    len_last: Constant<Bits<16>>,
    beats_last: Constant<Bits<5>>,
    width: Constant<Bits<5>>,
    up: Constant<Bits<5>>,
    start_flag: Constant<Bits<17>>,
    timeout: Constant<Bits<24>>,
    crc_init: Constant<Bits<16>>,
    err_checksum: Constant<Bits<5>>,
    err_sequence: Constant<Bits<5>>,
    err_framing: Constant<Bits<5>>,
    err_timeout: Constant<Bits<5>>,
    err_overrun: Constant<Bits<5>>,
    // Forwarded-clock domain.
    beat: DFF<Bits<5>>,
    gather: DFF<Bits<16>>,
    first_start: DFF<Bit>,
    cut_short: DFF<Bit>,
    credited: DFF<Bits<NP1>>,
    credit_out: DFF<Bit>,
    cooling: DFF<Bit>,
    assembled: Signal<Local, Bits<16>>,
    started: Signal<Local, Bit>,
    // Receiving-clock domain.
    cut_sync1: DFF<Bit>,
    cut_sync2: DFF<Bit>,
    over_sync1: DFF<Bit>,
    over_sync2: DFF<Bit>,
    state: DFF<RxState>,
    count: DFF<Bits<16>>,
    expected: DFF<Bits<16>>,
    crc: DFFWithInit<Bits<16>>,
    idle: DFF<Bits<24>>,
    flags: DFF<Bits<5>>,
    /// This clock's faults, acted on in the next (the error bits, the failed state): the
    /// faults' many sources then do not sit in front of every register they stop. A faulting
    /// step never advances itself, and a vector whose CRC matched is good whatever else
    /// failed in the same clock.
    fault_q: DFF<Bits<5>>,
    good_q: DFF<Bit>,
    good_count: DFF<Bits<16>>,
    /// The word at the FIFO's head, held in flip-flops for the checks (`held` says one is):
    /// the header, CRC and state logic then start at a register, not at the FIFO's empty
    /// flag and block RAM, and still take a word every clock.
    held: DFF<Bit>,
    held_word: DFF<Bits<17>>,
    /// The checks take the held word this clock.
    take: Signal<Local, Bit>,
    crc_step: Crc16Step,
    word: Signal<Local, Bits<16>>,
    is_start: Signal<Local, Bit>,
    have: Signal<Local, Bit>,
    fault: Signal<Local, Bits<5>>,
}

impl<const W: usize, const N: usize, const NP1: usize> LinkRx<W, N, NP1> {
    /// `len` words per transfer; `timeout`: receiving clocks without a word, mid-transfer
    /// or while `awaiting` is high, before `ERR_TIMEOUT`.
    pub fn new(len: u16, timeout: u32) -> Self {
        super::check_width(W);
        assert!(len >= 1 && (1..(1 << 24)).contains(&timeout));
        Self {
            clock: Default::default(),
            link_clock: Default::default(),
            link_data: Default::default(),
            link_valid: Default::default(),
            link_start: Default::default(),
            link_credit: Default::default(),
            words: Default::default(),
            good: Default::default(),
            awaiting: Default::default(),
            error: Default::default(),
            received: Default::default(),
            fifo: Default::default(),
            len_last: Constant::new(((len - 1) as u64).into()),
            beats_last: Constant::new(((16 / W - 1) as u64).into()),
            width: Constant::new((W as u64).into()),
            up: Constant::new(((16 - W) as u64).into()),
            start_flag: Constant::new((1u64 << 16).into()),
            timeout: Constant::new((timeout as u64).into()),
            crc_init: Constant::new((CRC_INIT as u64).into()),
            err_checksum: Constant::new(ERR_CHECKSUM.into()),
            err_sequence: Constant::new(ERR_SEQUENCE.into()),
            err_framing: Constant::new(ERR_FRAMING.into()),
            err_timeout: Constant::new(ERR_TIMEOUT.into()),
            err_overrun: Constant::new(ERR_OVERRUN.into()),
            beat: Default::default(),
            gather: Default::default(),
            first_start: Default::default(),
            cut_short: Default::default(),
            credited: Default::default(),
            credit_out: Default::default(),
            cooling: Default::default(),
            assembled: Default::default(),
            started: Default::default(),
            cut_sync1: Default::default(),
            cut_sync2: Default::default(),
            over_sync1: Default::default(),
            over_sync2: Default::default(),
            state: Default::default(),
            count: Default::default(),
            expected: Default::default(),
            crc: DFFWithInit::new((CRC_INIT as u64).into()),
            idle: Default::default(),
            flags: Default::default(),
            fault_q: Default::default(),
            good_q: Default::default(),
            good_count: Default::default(),
            held: Default::default(),
            held_word: Default::default(),
            take: Default::default(),
            crc_step: Default::default(),
            word: Default::default(),
            is_start: Default::default(),
            have: Default::default(),
            fault: Default::default(),
        }
    }

    /// FIFO entries, the credits the sender starts with.
    pub const fn depth() -> u16 {
        1 << N
    }
}

impl<const W: usize, const N: usize, const NP1: usize> Logic for LinkRx<W, N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            link_clock,
            beat,
            gather,
            first_start,
            cut_short,
            credited,
            credit_out,
            cooling
        );
        dff_setup!(
            self, clock, cut_sync1, cut_sync2, over_sync1, over_sync2, state, count, expected, crc,
            idle, flags, fault_q, good_q, good_count, held, held_word
        );
        self.fifo.write_clock.next = self.link_clock.val();
        self.fifo.read_clock.next = self.clock.val();
        // Beats to words, least significant beat first.
        self.assembled.next = (self.gather.q.val() >> self.width.val())
            | (bit_cast::<16, W>(self.link_data.val()) << self.up.val());
        self.started.next = self.first_start.q.val();
        if self.beat.q.val() == 0 {
            self.started.next = self.link_start.val();
        }
        self.fifo.write.next = false;
        self.fifo.data_in.next = bit_cast::<17, 16>(self.assembled.val());
        if self.started.val() {
            self.fifo.data_in.next =
                bit_cast::<17, 16>(self.assembled.val()) | self.start_flag.val();
        }
        if self.link_valid.val() {
            self.gather.d.next = self.assembled.val();
            self.beat.d.next = self.beat.q.val() + 1;
            if self.beat.q.val() == 0 {
                self.first_start.d.next = self.link_start.val();
            }
            if self.beat.q.val() == self.beats_last.val() {
                self.beat.d.next = 0.into();
                self.fifo.write.next = true;
            }
        } else {
            // The sender sends a word's beats back to back: a gap inside one is a fault.
            if self.beat.q.val() != 0 {
                self.cut_short.d.next = true;
            }
            self.beat.d.next = 0.into();
        }
        // One credit per entry the write side has seen freed, at most one toggle every
        // second clock so the sender's synchronizer sees each level.
        self.cooling.d.next = false;
        if (self.credited.q.val() != self.fifo.read_count.val()) & !self.cooling.q.val() {
            self.credit_out.d.next = !self.credit_out.q.val();
            self.credited.d.next = self.credited.q.val() + 1;
            self.cooling.d.next = true;
        }
        self.link_credit.next = self.credit_out.q.val();
        // Receiving clock: the forwarded-clock faults cross as sticky levels.
        self.cut_sync1.d.next = self.cut_short.q.val();
        self.cut_sync2.d.next = self.cut_sync1.q.val();
        self.over_sync1.d.next = self.fifo.overflow.val();
        self.over_sync2.d.next = self.over_sync1.q.val();
        self.word.next = bit_cast::<16, 17>(self.held_word.q.val());
        self.is_start.next = self.held_word.q.val().get_bit(16);
        self.have.next = self.held.q.val();
        self.crc_step.crc.next = self.crc.q.val();
        self.crc_step.word.next = self.word.val();
        // written once, not defaulted and then set: an always block that reads back a value it
        // set twice in one pass re-runs itself in Icarus
        self.take.next = (self.state.q.val() == RxState::Failed)
            | (self.have.val()
                & ((self.state.q.val() == RxState::Header)
                    | (self.state.q.val() == RxState::Check)
                    | ((self.state.q.val() == RxState::Payload)
                        & !self.is_start.val()
                        & self.words.ready.val())));
        self.words.valid.next = false;
        self.words.data.next = self.word.val();
        self.good_q.d.next = false;
        self.fault.next = 0.into();
        if self.cut_sync2.q.val() {
            self.fault.next = self.err_framing.val();
        }
        if self.over_sync2.q.val() {
            self.fault.next = self.err_overrun.val();
        }
        // Idle clocks: mid-transfer, or between transfers while a transfer is expected.
        self.idle.d.next = 0.into();
        if !self.have.val()
            & ((self.state.q.val() == RxState::Payload)
                | (self.state.q.val() == RxState::Check)
                | ((self.state.q.val() == RxState::Header) & self.awaiting.val()))
        {
            self.idle.d.next = self.idle.q.val() + 1;
            if self.idle.q.val() == self.timeout.val() {
                self.fault.next = self.err_timeout.val();
            }
        }
        match self.state.q.val() {
            RxState::Header => {
                if self.have.val() {
                    if !self.is_start.val() {
                        self.fault.next = self.err_framing.val();
                    } else if self.word.val() != self.expected.q.val() {
                        self.fault.next = self.err_sequence.val();
                    } else {
                        self.crc.d.next = self.crc_step.out.val();
                        self.count.d.next = 0.into();
                        self.state.d.next = RxState::Payload;
                    }
                }
            }
            RxState::Payload => {
                if self.have.val() {
                    if self.is_start.val() {
                        self.fault.next = self.err_framing.val();
                    } else {
                        self.words.valid.next = true;
                        if self.words.ready.val() {
                            self.crc.d.next = self.crc_step.out.val();
                            self.count.d.next = self.count.q.val() + 1;
                            if self.count.q.val() == self.len_last.val() {
                                self.state.d.next = RxState::Check;
                            }
                        }
                    }
                }
            }
            RxState::Check => {
                if self.have.val() {
                    if self.is_start.val() {
                        self.fault.next = self.err_framing.val();
                    } else if self.word.val() != self.crc.q.val() {
                        self.fault.next = self.err_checksum.val();
                    } else {
                        self.good_q.d.next = true;
                        self.good_count.d.next = self.good_count.q.val() + 1;
                        self.expected.d.next = self.expected.q.val() + 1;
                        self.crc.d.next = self.crc_init.val();
                        self.state.d.next = RxState::Header;
                    }
                }
            }
            RxState::Failed => {
                // Drain, so the sender is not left holding words; deliver nothing.
            }
            _ => {
                self.state.d.next = RxState::Failed;
            }
        }
        // refill the held word from the FIFO when it is free or taken now
        self.fifo.read.next = false;
        if !self.fifo.empty.val() & (!self.held.q.val() | self.take.val()) {
            self.fifo.read.next = true;
            self.held.d.next = true;
            self.held_word.d.next = self.fifo.data_out.val();
        } else if self.take.val() {
            self.held.d.next = false;
        }
        self.fault_q.d.next = self.fault.val();
        if self.fault_q.q.val() != 0 {
            self.flags.d.next = self.flags.q.val() | self.fault_q.q.val();
            self.state.d.next = RxState::Failed;
            self.good_q.d.next = false;
        }
        self.good.next = self.good_q.q.val();
        self.error.next = self.flags.q.val();
        self.received.next = self.good_count.q.val();
    }
}
