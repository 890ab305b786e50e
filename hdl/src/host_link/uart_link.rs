//! The host link over a UART: bytes from the serial line become 16-bit words (low byte first)
//! and words leave as two bytes, low byte first (hdl/PROTOCOL.md), carried in checked frames
//! both ways ("Serial framing" there, `uart_frames.rs` the host's side). A UART has no flow
//! control, so a frame from the host waits whole in a block RAM while its sums are computed
//! byte pair by byte pair: a good frame then passes to the network word by word and is
//! acknowledged once it has all been taken, a bad one is dropped before any of it reaches
//! the network. Each word from the network leaves in a frame of its own (`1, w, w+1, w+2`),
//! so the transmit side needs no buffer and no sum registers: the network waits on
//! `host_out.ready` while a frame is on the line. The word offered to the network is the buffer's
//! registered read, so the network's input handshake starts at registers.

use crate::uart_frames::{FRAME_BAD, FRAME_OK, FRAME_WORDS};
use crate::uart_rx::UartRx;
use crate::uart_tx::UartTx;
use crate::word_stream::{WordSink, WordSource};
use rust_hdl::prelude::*;

/// Bit times of idle line after which a frame still incomplete is dropped (and answered
/// `FRAME_BAD`), and after which a bad frame's last words are taken to have passed: the
/// largest count of the link's 12-bit quiet counter.
pub const QUIET_BITS: u32 = 4095;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum RxFrame {
    /// Waiting for a frame's length word.
    Head,
    Body,
    Sum1,
    Sum2,
    /// A bad frame: its words are ignored until the line has been quiet.
    Drop,
    /// A good frame: its words go to the network.
    Pass,
}

#[derive(LogicBlock)]
pub struct UartLink {
    pub clock: Signal<In, Clock>,
    pub rx: Signal<In, Bit>,
    pub tx: Signal<Out, Bit>,
    /// Words towards the network (`host_in` of PROTOCOL.md).
    /// The host's words, decoded from the UART, to the host link.
    pub host_in: WordSource,
    /// The host link's answers, to the UART.
    pub host_out: WordSink,
    /// Sticky: a byte arrived without its stop bit, a frame was bad, or a word came while a
    /// frame was still being passed on.
    pub overflow: Signal<Out, Bit>,
    urx: UartRx,
    utx: UartTx,
    /// The frame from the host, held until its sums are checked.
    frame_buf: RAM<Bits<16>, 6>,
    ok_word: Constant<Bits<16>>,
    bad_word: Constant<Bits<16>>,
    max_words: Constant<Bits<16>>,
    quiet_bits: Constant<Bits<12>>,
    quiet_last: Constant<Bits<12>>,
    // the word whose high byte arrives in this clock, and whether one does
    rword: Signal<Local, Bits<16>>,
    rvalid: Signal<Local, Bit>,
    fell_quiet: Signal<Local, Bit>,
    low: DFF<Bits<8>>,
    have_low: DFF<Bit>,
    sticky: DFF<Bit>,
    // idle bit times since the last byte, saturating at `quiet_bits`
    quiet: DFF<Bits<12>>,
    rstate: DFF<RxFrame>,
    rlen: DFF<Bits<7>>,
    // the buffer's address: written while a frame arrives, read while it passes on
    idx: DFF<Bits<7>>,
    sum1: DFF<Bits<16>>,
    sum2: DFF<Bits<16>>,
    // `sum2 += sum1` one clock after `sum1 += w`: two adders of two inputs, not three
    sum2_due: DFF<Bit>,
    sum1_ok: DFF<Bit>,
    reading: DFF<Bit>,
    ack_due: DFF<Bit>,
    nak_due: DFF<Bit>,
    // the buffer's read data is word `idx` of the frame and not yet taken
    held_valid: DFF<Bit>,
    // the word on the line: a network word, then its two sums; or an answer
    word: DFF<Bits<16>>,
    // byte of the unit on the line: 0-1 the length word, 2-3 the word, 4-5 sum1, 6-7 sum2;
    // an answer is sent as bytes 6-7
    tbyte: DFF<Bits<3>>,
    tbusy: DFF<Bit>,
}

impl UartLink {
    pub fn new(clocks_per_bit: u16) -> Self {
        Self {
            clock: Default::default(),
            rx: Default::default(),
            tx: Default::default(),
            host_in: Default::default(),
            host_out: Default::default(),
            overflow: Default::default(),
            urx: UartRx::new(clocks_per_bit),
            utx: UartTx::new(clocks_per_bit),
            frame_buf: Default::default(),
            ok_word: Constant::new((FRAME_OK as u64).into()),
            bad_word: Constant::new((FRAME_BAD as u64).into()),
            max_words: Constant::new((FRAME_WORDS as u64).into()),
            quiet_bits: Constant::new((QUIET_BITS as u64).into()),
            quiet_last: Constant::new((QUIET_BITS as u64 - 1).into()),
            rword: Default::default(),
            rvalid: Default::default(),
            fell_quiet: Default::default(),
            low: DFF::default(),
            have_low: DFF::default(),
            sticky: DFF::default(),
            quiet: DFF::default(),
            rstate: DFF::default(),
            rlen: DFF::default(),
            idx: DFF::default(),
            sum1: DFF::default(),
            sum2: DFF::default(),
            sum2_due: DFF::default(),
            sum1_ok: DFF::default(),
            reading: DFF::default(),
            ack_due: DFF::default(),
            nak_due: DFF::default(),
            held_valid: DFF::default(),
            word: DFF::default(),
            tbyte: DFF::default(),
            tbusy: DFF::default(),
        }
    }
}

impl Logic for UartLink {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, low, have_low, sticky, quiet, rstate, rlen, idx, sum1, sum2, sum2_due,
            sum1_ok, reading, ack_due, nak_due, held_valid, word, tbyte, tbusy
        );
        clock!(self, clock, urx, utx);
        self.frame_buf.read_clock.next = self.clock.val();
        self.frame_buf.write_clock.next = self.clock.val();
        // Receive: pair bytes into words; a word is whole in the clock its high byte arrives.
        self.urx.rx.next = self.rx.val();
        self.rword.next =
            bit_cast::<16, 8>(self.urx.data.val()) << 8 | bit_cast::<16, 8>(self.low.q.val());
        self.rvalid.next = self.urx.valid.val() & self.have_low.q.val();
        if self.urx.idle_bit.val() & (self.quiet.q.val() != self.quiet_bits.val()) {
            self.quiet.d.next = self.quiet.q.val() + 1;
        }
        self.fell_quiet.next =
            self.urx.idle_bit.val() & (self.quiet.q.val() == self.quiet_last.val());
        if self.urx.valid.val() {
            self.quiet.d.next = 0.into();
            if self.have_low.q.val() {
                self.have_low.d.next = false;
            } else {
                self.low.d.next = self.urx.data.val();
                self.have_low.d.next = true;
            }
        }
        if self.urx.frame_error.val() {
            self.sticky.d.next = true;
        }
        // Check the host's frames: length (1 to FRAME_WORDS), payload, sum1, sum2.
        self.frame_buf.write_address.next = self.idx.q.val().get_bits::<6>(0);
        self.frame_buf.write_data.next = self.rword.val();
        self.frame_buf.write_enable.next = false;
        self.frame_buf.read_address.next = self.idx.q.val().get_bits::<6>(0);
        self.reading.d.next = false;
        self.sum2_due.d.next = false;
        if self.sum2_due.q.val() {
            self.sum2.d.next = self.sum2.q.val() + self.sum1.q.val();
        }
        match self.rstate.q.val() {
            RxFrame::Head => {
                if self.rvalid.val() {
                    self.rlen.d.next = self.rword.val().get_bits::<7>(0);
                    self.sum1.d.next = self.sum1.q.val() + self.rword.val();
                    self.sum2_due.d.next = true;
                    self.idx.d.next = 0.into();
                    if (self.rword.val() == 0) | (self.rword.val() > self.max_words.val()) {
                        self.rstate.d.next = RxFrame::Drop;
                    } else {
                        self.rstate.d.next = RxFrame::Body;
                    }
                }
            }
            RxFrame::Body => {
                if self.rvalid.val() {
                    self.frame_buf.write_enable.next = true;
                    self.idx.d.next = self.idx.q.val() + 1;
                    self.sum1.d.next = self.sum1.q.val() + self.rword.val();
                    self.sum2_due.d.next = true;
                    if self.idx.q.val() + 1 == self.rlen.q.val() {
                        self.rstate.d.next = RxFrame::Sum1;
                    }
                }
            }
            RxFrame::Sum1 => {
                if self.rvalid.val() {
                    self.sum1_ok.d.next = self.rword.val() == self.sum1.q.val();
                    self.rstate.d.next = RxFrame::Sum2;
                }
            }
            RxFrame::Sum2 => {
                if self.rvalid.val() {
                    // the sums start from 0 for the next frame
                    self.sum1.d.next = 0.into();
                    self.sum2.d.next = 0.into();
                    self.idx.d.next = 0.into();
                    self.reading.d.next = true;
                    if self.sum1_ok.q.val() & (self.rword.val() == self.sum2.q.val()) {
                        self.rstate.d.next = RxFrame::Pass;
                    } else {
                        self.rstate.d.next = RxFrame::Drop;
                    }
                }
            }
            RxFrame::Drop => {}
            RxFrame::Pass => {
                // word `idx` is offered once its read has had a clock since `idx` moved
                if self.rvalid.val() {
                    self.sticky.d.next = true;
                }
                if !self.held_valid.q.val() & !self.reading.q.val() {
                    if self.idx.q.val() == self.rlen.q.val() {
                        self.ack_due.d.next = true;
                        self.rstate.d.next = RxFrame::Head;
                    } else {
                        self.held_valid.d.next = true;
                    }
                }
            }
            _ => {
                self.rstate.d.next = RxFrame::Head;
            }
        }
        // A frame cut short, or a bad frame's last words past: drop it, answer FRAME_BAD; a
        // lone byte of a broken word is dropped too, so words pair up again.
        if self.fell_quiet.val() {
            self.have_low.d.next = false;
            match self.rstate.q.val() {
                RxFrame::Head => {}
                RxFrame::Pass => {}
                _ => {
                    self.nak_due.d.next = true;
                    self.sticky.d.next = true;
                    self.sum1.d.next = 0.into();
                    self.sum2.d.next = 0.into();
                    self.rstate.d.next = RxFrame::Head;
                }
            }
        }
        self.overflow.next = self.sticky.q.val();
        self.host_in.data.next = self.frame_buf.read_data.val();
        self.host_in.valid.next = self.held_valid.q.val();
        if self.held_valid.q.val() & self.host_in.ready.val() {
            self.held_valid.d.next = false;
            self.idx.d.next = self.idx.q.val() + 1;
            self.reading.d.next = true;
        }
        // Transmit, a byte at a time: an answer to the host's last frame if one is due, else
        // a frame of the network's next word, whose sums are the word plus 1 and plus 2.
        self.utx.valid.next = self.tbusy.q.val();
        self.utx.data.next = self.word.q.val().get_bits::<8>(0);
        if self.tbyte.q.val().get_bit(0) {
            self.utx.data.next = self.word.q.val().get_bits::<8>(8);
        }
        if self.tbyte.q.val().get_bits::<2>(1) == 0 {
            // the length word, 1
            self.utx.data.next = 0.into();
            if !self.tbyte.q.val().get_bit(0) {
                self.utx.data.next = 1.into();
            }
        }
        self.host_out.ready.next =
            !self.tbusy.q.val() & !self.ack_due.q.val() & !self.nak_due.q.val();
        if !self.tbusy.q.val() {
            if self.nak_due.q.val() {
                self.nak_due.d.next = false;
                self.word.d.next = self.bad_word.val();
                self.tbyte.d.next = 6.into();
                self.tbusy.d.next = true;
            } else if self.ack_due.q.val() {
                self.ack_due.d.next = false;
                self.word.d.next = self.ok_word.val();
                self.tbyte.d.next = 6.into();
                self.tbusy.d.next = true;
            } else if self.host_out.valid.val() {
                self.word.d.next = self.host_out.data.val();
                self.tbyte.d.next = 0.into();
                self.tbusy.d.next = true;
            }
        } else if self.utx.ready.val() {
            self.tbyte.d.next = self.tbyte.q.val() + 1;
            if self.tbyte.q.val() == 7 {
                self.tbusy.d.next = false;
            }
            // after the word's high byte and after sum1's: the next sum is one more
            if (self.tbyte.q.val() == 3) | (self.tbyte.q.val() == 5) {
                self.word.d.next = self.word.q.val() + 1;
            }
        }
        self.tx.next = self.utx.tx.val();
    }
}

/// Host words as UART bytes, low byte first.
pub fn words_to_bytes(words: &[u16]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn bytes_to_words(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim_util::tick;
    use crate::uart_frames::frame;
    use crate::uart_rx::serialize_bytes;
    use crate::uart_tx::deserialize_line;

    /// Send each segment's words (bit `flip` of its byte stream inverted, if any) and then
    /// `idle` clocks of idle line, while the network takes a word every third clock and
    /// offers `back`; returns the words the network took, the words on the TX line, and the
    /// sticky error.
    fn exchange(
        segments: &[(&[u16], Option<usize>, usize)],
        back: &[u16],
    ) -> (Vec<u16>, Vec<u16>, bool) {
        let cpb = 4;
        let mut uut = UartLink::new(cpb);
        uut.connect_all();
        let mut line = vec![true; 8];
        for &(words, flip, idle) in segments {
            let mut bytes = words_to_bytes(words);
            if let Some(b) = flip {
                bytes[b / 8] ^= 1 << (b % 8);
            }
            line.extend(serialize_bytes(&bytes, cpb as usize));
            line.extend(vec![true; idle]);
        }
        let mut to_send = back.iter().copied().peekable();
        let (mut got, mut tx_line) = (vec![], vec![]);
        for (clk, level) in line.into_iter().enumerate() {
            uut.rx.next = level;
            // The network takes a word only every third clock: stalls must not lose words.
            uut.host_in.ready.next = clk % 3 == 0;
            uut.host_out.valid.next = clk > 20 && to_send.peek().is_some();
            uut.host_out.data.next = (*to_send.peek().unwrap_or(&0) as u64).into();
            assert!(simulate(&mut uut, 1000));
            let took = uut.host_in.valid.val() && uut.host_in.ready.val();
            let word = uut.host_in.data.val().index() as u16;
            let sent_out = uut.host_out.valid.val() && uut.host_out.ready.val();
            tick(&mut uut, |u| &mut u.clock);
            if took {
                got.push(word);
            }
            if sent_out {
                to_send.next();
            }
            tx_line.push(uut.tx.val());
        }
        let tx = bytes_to_words(&deserialize_line(&tx_line, cpb as usize));
        (got, tx, uut.overflow.val())
    }

    #[test]
    fn checked_frames_cross_the_uart_both_ways_with_network_stalls() {
        let sent: Vec<u16> = vec![0x0001, 0xA5C3, 0xFFFF, 0x0000, 0x1234, 0x8001, 0x7F80];
        let back: Vec<u16> = vec![0xBEEF, 0x00FF, 0xFF00];
        let (got, tx, sticky) = exchange(&[(&frame(&sent), None, 400)], &back);
        assert_eq!(got, sent);
        // each of the network's words leaves in a frame of its own; the acknowledgement goes
        // between frames
        let want: Vec<u16> = back.iter().flat_map(|&w| frame(&[w])).collect();
        assert_eq!(frame(&[0xBEEF]), vec![1, 0xBEEF, 0xBEF0, 0xBEF1]);
        let ok = tx.iter().position(|&w| w == FRAME_OK).expect("no FRAME_OK");
        let mut data = tx.clone();
        data.remove(ok);
        assert_eq!(data, want, "{tx:04x?}");
        assert!(!sticky);
    }

    #[test]
    fn a_flipped_bit_drops_the_frame_and_answers_frame_bad() {
        let sent: Vec<u16> = vec![0x0002, 1, 2, 3];
        let f = frame(&sent);
        let quiet = QUIET_BITS as usize * 4 + 200;
        // a payload bit, a sum bit, a length bit (the frame then looks longer: cut short)
        for bit in [16 * 3 + 5, 16 * 6 + 15, 2] {
            let (got, tx, sticky) = exchange(&[(&f, Some(bit), quiet)], &[]);
            assert_eq!(
                got,
                Vec::<u16>::new(),
                "bit {bit}: words of a bad frame passed on"
            );
            assert_eq!(tx, vec![FRAME_BAD], "bit {bit}");
            assert!(sticky, "bit {bit}");
        }
        // the same frame sent again after FRAME_BAD passes whole
        let (got, tx, _) = exchange(&[(&f, Some(20), quiet), (&f, None, 400)], &[]);
        assert_eq!((got, tx), (sent, vec![FRAME_BAD, FRAME_OK]));
    }
}
