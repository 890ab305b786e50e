//! The host link over a UART: bytes from the serial line become 16-bit words (low byte first)
//! and words leave as two bytes, low byte first (hdl/PROTOCOL.md), carried in checked frames
//! both ways ("Serial framing" there, `uart_frames.rs` the host's side). A UART has no flow
//! control, so a frame from the host waits whole in a buffer until its sums are checked: a
//! good frame then passes to the network word by word and is acknowledged once it has all
//! been taken, a bad one is dropped before any of it reaches the network. Words from the
//! network wait in a FIFO and leave in frames of what has gathered there. The word offered
//! to the network sits in a register of its own (`held`), so the network's input handshake
//! starts at flip-flops.

use crate::uart_frames::{FRAME_BAD, FRAME_OK, FRAME_WORDS};
use crate::uart_rx::UartRx;
use crate::uart_tx::UartTx;
use rust_hdl::prelude::*;

declare_sync_fifo!(OutFifo, Bits<16>, 64, 1);

/// Bit times of silence after which a frame still incomplete is dropped (and answered
/// `FRAME_BAD`), and after which a bad frame's last words are taken to have passed.
pub const QUIET_BITS: u32 = 4096;

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

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum TxFrame {
    /// Between frames: an answer to a host frame, or the header of a new frame.
    Idle,
    Body,
    Sum1,
    Sum2,
}

#[derive(LogicBlock)]
pub struct UartLink {
    pub clock: Signal<In, Clock>,
    pub rx: Signal<In, Bit>,
    pub tx: Signal<Out, Bit>,
    /// Words towards the network (`host_in` of PROTOCOL.md).
    pub in_data: Signal<Out, Bits<16>>,
    pub in_valid: Signal<Out, Bit>,
    pub in_ready: Signal<In, Bit>,
    /// Words from the network (`host_out`).
    pub out_data: Signal<In, Bits<16>>,
    pub out_valid: Signal<In, Bit>,
    pub out_ready: Signal<Out, Bit>,
    /// Sticky: a byte arrived without its stop bit, a frame was bad, or a word came while a
    /// frame was still being passed on.
    pub overflow: Signal<Out, Bit>,
    urx: UartRx,
    utx: UartTx,
    /// The frame from the host, held until its sums are checked.
    frame_buf: RAM<Bits<16>, 6>,
    ofifo: OutFifo,
    ok_word: Constant<Bits<16>>,
    bad_word: Constant<Bits<16>>,
    max_words: Constant<Bits<16>>,
    quiet_clocks: Constant<Bits<32>>,
    low: DFF<Bits<8>>,
    have_low: DFF<Bit>,
    sticky: DFF<Bit>,
    // a received word, one clock after its high byte
    rword: DFF<Bits<16>>,
    rvalid: DFF<Bit>,
    // clocks since the last byte, saturating at `quiet_clocks`
    quiet: DFF<Bits<32>>,
    rstate: DFF<RxFrame>,
    rlen: DFF<Bits<7>>,
    widx: DFF<Bits<7>>,
    ridx: DFF<Bits<7>>,
    rsum1: DFF<Bits<16>>,
    rsum2: DFF<Bits<16>>,
    sum1_ok: DFF<Bit>,
    reading: DFF<Bit>,
    ack_due: DFF<Bit>,
    nak_due: DFF<Bit>,
    held: DFF<Bits<16>>,
    held_valid: DFF<Bit>,
    word: DFF<Bits<16>>,
    // 0: empty, 1: low byte pending, 2: high byte pending.
    tx_phase: DFF<Bits<2>>,
    tstate: DFF<TxFrame>,
    ocount: DFF<Bits<7>>,
    tleft: DFF<Bits<7>>,
    tsum1: DFF<Bits<16>>,
    tsum2: DFF<Bits<16>>,
}

impl UartLink {
    pub fn new(clocks_per_bit: u16) -> Self {
        Self {
            clock: Default::default(),
            rx: Default::default(),
            tx: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            overflow: Default::default(),
            urx: UartRx::new(clocks_per_bit),
            utx: UartTx::new(clocks_per_bit),
            frame_buf: Default::default(),
            ofifo: Default::default(),
            ok_word: Constant::new((FRAME_OK as u64).into()),
            bad_word: Constant::new((FRAME_BAD as u64).into()),
            max_words: Constant::new((FRAME_WORDS as u64).into()),
            quiet_clocks: Constant::new((QUIET_BITS as u64 * clocks_per_bit as u64).into()),
            low: DFF::default(),
            have_low: DFF::default(),
            sticky: DFF::default(),
            rword: DFF::default(),
            rvalid: DFF::default(),
            quiet: DFF::default(),
            rstate: DFF::default(),
            rlen: DFF::default(),
            widx: DFF::default(),
            ridx: DFF::default(),
            rsum1: DFF::default(),
            rsum2: DFF::default(),
            sum1_ok: DFF::default(),
            reading: DFF::default(),
            ack_due: DFF::default(),
            nak_due: DFF::default(),
            held: DFF::default(),
            held_valid: DFF::default(),
            word: DFF::default(),
            tx_phase: DFF::default(),
            tstate: DFF::default(),
            ocount: DFF::default(),
            tleft: DFF::default(),
            tsum1: DFF::default(),
            tsum2: DFF::default(),
        }
    }
}

impl Logic for UartLink {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, low, have_low, sticky, rword, rvalid, quiet, rstate, rlen, widx, ridx,
            rsum1, rsum2, sum1_ok, reading, ack_due, nak_due, held, held_valid, word, tx_phase,
            tstate, ocount, tleft, tsum1, tsum2
        );
        clock!(self, clock, urx, utx, ofifo);
        self.frame_buf.read_clock.next = self.clock.val();
        self.frame_buf.write_clock.next = self.clock.val();
        // Receive: pair bytes into words.
        self.urx.rx.next = self.rx.val();
        self.rvalid.d.next = false;
        self.rword.d.next =
            bit_cast::<16, 8>(self.urx.data.val()) << 8 | bit_cast::<16, 8>(self.low.q.val());
        if self.quiet.q.val() != self.quiet_clocks.val() {
            self.quiet.d.next = self.quiet.q.val() + 1;
        }
        if self.urx.valid.val() {
            self.quiet.d.next = 0.into();
            if self.have_low.q.val() {
                self.rvalid.d.next = true;
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
        self.frame_buf.write_address.next = self.widx.q.val().get_bits::<6>(0);
        self.frame_buf.write_data.next = self.rword.q.val();
        self.frame_buf.write_enable.next = false;
        self.frame_buf.read_address.next = self.ridx.q.val().get_bits::<6>(0);
        self.reading.d.next = false;
        match self.rstate.q.val() {
            RxFrame::Head => {
                if self.rvalid.q.val() {
                    self.rlen.d.next = self.rword.q.val().get_bits::<7>(0);
                    self.rsum1.d.next = self.rword.q.val();
                    self.rsum2.d.next = self.rword.q.val();
                    self.widx.d.next = 0.into();
                    if (self.rword.q.val() == 0) | (self.rword.q.val() > self.max_words.val()) {
                        self.rstate.d.next = RxFrame::Drop;
                    } else {
                        self.rstate.d.next = RxFrame::Body;
                    }
                }
            }
            RxFrame::Body => {
                if self.rvalid.q.val() {
                    self.frame_buf.write_enable.next = true;
                    self.widx.d.next = self.widx.q.val() + 1;
                    self.rsum1.d.next = self.rsum1.q.val() + self.rword.q.val();
                    self.rsum2.d.next =
                        self.rsum2.q.val() + self.rsum1.q.val() + self.rword.q.val();
                    if self.widx.q.val() + 1 == self.rlen.q.val() {
                        self.rstate.d.next = RxFrame::Sum1;
                    }
                }
            }
            RxFrame::Sum1 => {
                if self.rvalid.q.val() {
                    self.sum1_ok.d.next = self.rword.q.val() == self.rsum1.q.val();
                    self.rstate.d.next = RxFrame::Sum2;
                }
            }
            RxFrame::Sum2 => {
                if self.rvalid.q.val() {
                    if self.sum1_ok.q.val() & (self.rword.q.val() == self.rsum2.q.val()) {
                        self.ridx.d.next = 0.into();
                        self.rstate.d.next = RxFrame::Pass;
                    } else {
                        self.rstate.d.next = RxFrame::Drop;
                    }
                }
            }
            RxFrame::Drop => {}
            RxFrame::Pass => {
                // one word read from the buffer per free `held`, the read's data a clock later
                if self.rvalid.q.val() {
                    self.sticky.d.next = true;
                }
                if !self.held_valid.q.val() & !self.reading.q.val() {
                    if self.ridx.q.val() == self.rlen.q.val() {
                        self.ack_due.d.next = true;
                        self.rstate.d.next = RxFrame::Head;
                    } else {
                        self.reading.d.next = true;
                        self.ridx.d.next = self.ridx.q.val() + 1;
                    }
                }
            }
            _ => {
                self.rstate.d.next = RxFrame::Head;
            }
        }
        // A frame cut short, or a bad frame's last words past: drop it, answer FRAME_BAD.
        if self.quiet.q.val() + 1 == self.quiet_clocks.val() {
            match self.rstate.q.val() {
                RxFrame::Head => {}
                RxFrame::Pass => {}
                _ => {
                    self.nak_due.d.next = true;
                    self.sticky.d.next = true;
                    self.rstate.d.next = RxFrame::Head;
                }
            }
        }
        // a lone byte of a broken word is dropped when the line falls quiet: words pair up again
        if self.quiet.q.val() + 1 == self.quiet_clocks.val() {
            self.have_low.d.next = false;
        }
        self.overflow.next = self.sticky.q.val();
        self.in_data.next = self.held.q.val();
        self.in_valid.next = self.held_valid.q.val();
        if self.held_valid.q.val() & self.in_ready.val() {
            self.held_valid.d.next = false;
        }
        if self.reading.q.val() {
            self.held.d.next = self.frame_buf.read_data.val();
            self.held_valid.d.next = true;
        }
        // Words from the network gather in the FIFO.
        self.ofifo.data_in.next = self.out_data.val();
        self.ofifo.write.next = self.out_valid.val() & !self.ofifo.full.val();
        self.out_ready.next = !self.ofifo.full.val();
        self.ofifo.read.next = false;
        // Transmit: one word, low byte then high byte; between frames an answer to the
        // host's last frame, else a frame of every word the FIFO holds (at most 64).
        self.utx.valid.next = self.tx_phase.q.val() != 0;
        self.utx.data.next = self.word.q.val().get_bits::<8>(0);
        if self.tx_phase.q.val() == 2 {
            self.utx.data.next = self.word.q.val().get_bits::<8>(8);
        }
        if self.tx_phase.q.val() == 0 {
            match self.tstate.q.val() {
                TxFrame::Idle => {
                    if self.nak_due.q.val() {
                        self.nak_due.d.next = false;
                        self.word.d.next = self.bad_word.val();
                        self.tx_phase.d.next = 1.into();
                    } else if self.ack_due.q.val() {
                        self.ack_due.d.next = false;
                        self.word.d.next = self.ok_word.val();
                        self.tx_phase.d.next = 1.into();
                    } else if self.ocount.q.val() != 0 {
                        self.word.d.next = bit_cast::<16, 7>(self.ocount.q.val());
                        self.tleft.d.next = self.ocount.q.val();
                        self.tsum1.d.next = bit_cast::<16, 7>(self.ocount.q.val());
                        self.tsum2.d.next = bit_cast::<16, 7>(self.ocount.q.val());
                        self.tx_phase.d.next = 1.into();
                        self.tstate.d.next = TxFrame::Body;
                    }
                }
                TxFrame::Body => {
                    self.ofifo.read.next = true;
                    self.word.d.next = self.ofifo.data_out.val();
                    self.tsum1.d.next = self.tsum1.q.val() + self.ofifo.data_out.val();
                    self.tsum2.d.next =
                        self.tsum2.q.val() + self.tsum1.q.val() + self.ofifo.data_out.val();
                    self.tleft.d.next = self.tleft.q.val() - 1;
                    self.tx_phase.d.next = 1.into();
                    if self.tleft.q.val() == 1 {
                        self.tstate.d.next = TxFrame::Sum1;
                    }
                }
                TxFrame::Sum1 => {
                    self.word.d.next = self.tsum1.q.val();
                    self.tx_phase.d.next = 1.into();
                    self.tstate.d.next = TxFrame::Sum2;
                }
                TxFrame::Sum2 => {
                    self.word.d.next = self.tsum2.q.val();
                    self.tx_phase.d.next = 1.into();
                    self.tstate.d.next = TxFrame::Idle;
                }
                _ => {
                    self.tstate.d.next = TxFrame::Idle;
                }
            }
        } else if self.utx.ready.val() {
            if self.tx_phase.q.val() == 1 {
                self.tx_phase.d.next = 2.into();
            } else {
                self.tx_phase.d.next = 0.into();
            }
        }
        // the FIFO's count: one in with each write, one out with each read
        if self.out_valid.val() & !self.ofifo.full.val() {
            if !((self.tx_phase.q.val() == 0) & (self.tstate.q.val() == TxFrame::Body)) {
                self.ocount.d.next = self.ocount.q.val() + 1;
            }
        } else if (self.tx_phase.q.val() == 0) & (self.tstate.q.val() == TxFrame::Body) {
            self.ocount.d.next = self.ocount.q.val() - 1;
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
            uut.in_ready.next = clk % 3 == 0;
            uut.out_valid.next = clk > 20 && to_send.peek().is_some();
            uut.out_data.next = (*to_send.peek().unwrap_or(&0) as u64).into();
            assert!(simulate(&mut uut, 1000));
            let took = uut.in_valid.val() && uut.in_ready.val();
            let word = uut.in_data.val().index() as u16;
            let sent_out = uut.out_valid.val() && uut.out_ready.val();
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
        // the network's words leave in frames of what has gathered (the first word alone,
        // the other two while it was on the line); the acknowledgement goes between frames
        let mut want = frame(&back[..1]);
        want.extend(frame(&back[1..]));
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
