//! The link's sending side, in the sending board's clock: frames each boundary vector
//! (header, words, CRC), cuts each word into `16 / W` beats and spends one credit per word.

use super::{Crc16Step, CRC_INIT};
use crate::word_stream::WordSink;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum TxPhase {
    Header,
    Payload,
    Check,
}

/// `W` data pins: 1, 2, 4, 8 or 16.
#[derive(LogicBlock)]
pub struct LinkTx<const W: usize> {
    pub clock: Signal<In, Clock>,
    /// The boundary vector, `len` words per transfer; a word is taken on a clock where
    /// `valid` and `ready` are both high. The header leaves once the first word is offered.
    pub words: WordSink,
    /// Transfers begun so far (the next header's sequence number while idle).
    pub sent: Signal<Out, Bits<16>>,
    pub link_clock: Signal<Out, Clock>,
    pub link_data: Signal<Out, Bits<W>>,
    pub link_valid: Signal<Out, Bit>,
    pub link_start: Signal<Out, Bit>,
    /// Toggles once per credit; from the receiver, so synchronized here.
    pub link_credit: Signal<In, Bit>,
    len_last: Constant<Bits<16>>,
    beats_last: Constant<Bits<5>>,
    width: Constant<Bits<5>>,
    crc_init: Constant<Bits<16>>,
    phase: DFF<TxPhase>,
    count: DFF<Bits<16>>,
    seq: DFF<Bits<16>>,
    crc: DFFWithInit<Bits<16>>,
    credits: DFFWithInit<Bits<16>>,
    /// `credits != 0`, kept beside the count so that no wide compare sits in front of the
    /// words' `ready`.
    has_credit: DFFWithInit<Bit>,
    shift: DFF<Bits<16>>,
    beats_left: DFF<Bits<5>>,
    out_data: DFF<Bits<W>>,
    out_valid: DFF<Bit>,
    out_start: DFF<Bit>,
    credit_sync1: DFF<Bit>,
    credit_sync2: DFF<Bit>,
    credit_prev: DFF<Bit>,
    crc_step: Crc16Step,
    word: Signal<Local, Bits<16>>,
    offered: Signal<Local, Bit>,
    free: Signal<Local, Bit>,
    start_word: Signal<Local, Bit>,
    credit_in: Signal<Local, Bit>,
}

impl<const W: usize> LinkTx<W> {
    /// `len` words per transfer; `credits`: the receiver's FIFO entries.
    pub fn new(len: u16, credits: u16) -> Self {
        super::check_width(W);
        assert!(len >= 1 && credits >= 1);
        Self {
            clock: Default::default(),
            words: Default::default(),
            sent: Default::default(),
            link_clock: Default::default(),
            link_data: Default::default(),
            link_valid: Default::default(),
            link_start: Default::default(),
            link_credit: Default::default(),
            len_last: Constant::new(((len - 1) as u64).into()),
            beats_last: Constant::new(((16 / W - 1) as u64).into()),
            width: Constant::new((W as u64).into()),
            crc_init: Constant::new((CRC_INIT as u64).into()),
            phase: Default::default(),
            count: Default::default(),
            seq: Default::default(),
            crc: DFFWithInit::new((CRC_INIT as u64).into()),
            credits: DFFWithInit::new((credits as u64).into()),
            has_credit: DFFWithInit::new(true),
            shift: Default::default(),
            beats_left: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_start: Default::default(),
            credit_sync1: Default::default(),
            credit_sync2: Default::default(),
            credit_prev: Default::default(),
            crc_step: Default::default(),
            word: Default::default(),
            offered: Default::default(),
            free: Default::default(),
            start_word: Default::default(),
            credit_in: Default::default(),
        }
    }
}

impl<const W: usize> Logic for LinkTx<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            phase,
            count,
            seq,
            crc,
            credits,
            has_credit,
            shift,
            beats_left,
            out_data,
            out_valid,
            out_start,
            credit_sync1,
            credit_sync2,
            credit_prev
        );
        // The receiver samples on the forwarded clock's rising edge, half a period after
        // the beat was launched.
        self.link_clock.next = !self.clock.val();
        self.link_data.next = self.out_data.q.val();
        self.link_valid.next = self.out_valid.q.val();
        self.link_start.next = self.out_start.q.val();
        self.sent.next = self.seq.q.val();
        self.credit_sync1.d.next = self.link_credit.val();
        self.credit_sync2.d.next = self.credit_sync1.q.val();
        self.credit_prev.d.next = self.credit_sync2.q.val();
        self.credit_in.next = self.credit_sync2.q.val() ^ self.credit_prev.q.val();
        // The next word: header, vector word, or CRC.
        self.word.next = self.seq.q.val();
        self.offered.next = self.words.valid.val();
        match self.phase.q.val() {
            TxPhase::Header => {}
            TxPhase::Payload => {
                self.word.next = self.words.data.val();
            }
            TxPhase::Check => {
                self.word.next = self.crc.q.val();
                self.offered.next = true;
            }
            _ => {}
        }
        // A word starts in the clock its predecessor's last beat is out, with a credit.
        self.free.next = (self.beats_left.q.val() == 0) & self.has_credit.q.val();
        self.start_word.next = self.free.val() & self.offered.val();
        self.words.ready.next = self.free.val() & (self.phase.q.val() == TxPhase::Payload);
        self.crc_step.crc.next = self.crc.q.val();
        self.crc_step.word.next = self.word.val();
        if self.beats_left.q.val() != 0 {
            self.out_data.d.next = bit_cast::<W, 16>(self.shift.q.val());
            self.shift.d.next = self.shift.q.val() >> self.width.val();
            self.beats_left.d.next = self.beats_left.q.val() - 1;
            self.out_start.d.next = false;
        } else {
            self.out_valid.d.next = false;
            self.out_start.d.next = false;
        }
        if self.start_word.val() {
            self.out_data.d.next = bit_cast::<W, 16>(self.word.val());
            self.out_valid.d.next = true;
            self.out_start.d.next = self.phase.q.val() == TxPhase::Header;
            self.shift.d.next = self.word.val() >> self.width.val();
            self.beats_left.d.next = self.beats_last.val();
            self.crc.d.next = self.crc_step.out.val();
            match self.phase.q.val() {
                TxPhase::Header => {
                    self.count.d.next = 0.into();
                    self.phase.d.next = TxPhase::Payload;
                }
                TxPhase::Payload => {
                    self.count.d.next = self.count.q.val() + 1;
                    if self.count.q.val() == self.len_last.val() {
                        self.phase.d.next = TxPhase::Check;
                    }
                }
                TxPhase::Check => {
                    self.crc.d.next = self.crc_init.val();
                    self.seq.d.next = self.seq.q.val() + 1;
                    self.phase.d.next = TxPhase::Header;
                }
                _ => {
                    self.phase.d.next = TxPhase::Header;
                }
            }
        }
        if self.start_word.val() & !self.credit_in.val() {
            self.credits.d.next = self.credits.q.val() - 1;
            self.has_credit.d.next = self.credits.q.val() != 1;
        }
        if !self.start_word.val() & self.credit_in.val() {
            self.credits.d.next = self.credits.q.val() + 1;
            self.has_credit.d.next = true;
        }
    }
}
