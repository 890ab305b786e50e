//! The host link over a UART: bytes from the serial line become 16-bit words (low byte first)
//! on the `in` stream, and words of the `out` stream leave as two bytes, low byte first
//! (hdl/PROTOCOL.md). A UART has no flow control, so received words wait in a FIFO while the
//! network stalls `in_ready`; the host never has more than one command in flight, and the
//! network consumes words far faster than a UART delivers them, so the FIFO only bridges
//! short stalls. The word offered to the network sits in a register of its own (`held`),
//! refilled from the FIFO in the clock after it is taken, so the network's input handshake
//! starts at flip-flops and the FIFO's read logic does not wait on the network's `in_ready`.

use crate::uart_rx::UartRx;
use crate::uart_tx::UartTx;
use rust_hdl::prelude::*;

declare_sync_fifo!(WordFifo, Bits<16>, 32, 1);

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
    /// Sticky: a word arrived while the FIFO was full, or a frame was broken.
    pub overflow: Signal<Out, Bit>,
    urx: UartRx,
    utx: UartTx,
    fifo: WordFifo,
    low: DFF<Bits<8>>,
    have_low: DFF<Bit>,
    sticky: DFF<Bit>,
    word: DFF<Bits<16>>,
    held: DFF<Bits<16>>,
    held_valid: DFF<Bit>,
    // 0: empty, 1: low byte pending, 2: high byte pending.
    tx_phase: DFF<Bits<2>>,
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
            fifo: Default::default(),
            low: DFF::default(),
            have_low: DFF::default(),
            sticky: DFF::default(),
            word: DFF::default(),
            held: DFF::default(),
            held_valid: DFF::default(),
            tx_phase: DFF::default(),
        }
    }
}

impl Logic for UartLink {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, low, have_low, sticky, word, held, held_valid, tx_phase);
        clock!(self, clock, urx, utx, fifo);
        // Receive: pair bytes into words.
        self.urx.rx.next = self.rx.val();
        self.fifo.write.next = false;
        self.fifo.data_in.next =
            bit_cast::<16, 8>(self.urx.data.val()) << 8 | bit_cast::<16, 8>(self.low.q.val());
        if self.urx.valid.val() {
            if self.have_low.q.val() {
                self.fifo.write.next = true;
                self.have_low.d.next = false;
                if self.fifo.full.val() {
                    self.sticky.d.next = true;
                }
            } else {
                self.low.d.next = self.urx.data.val();
                self.have_low.d.next = true;
            }
        }
        if self.urx.frame_error.val() {
            self.sticky.d.next = true;
        }
        self.overflow.next = self.sticky.q.val();
        self.in_data.next = self.held.q.val();
        self.in_valid.next = self.held_valid.q.val();
        // refill the held word in the clock after it is taken, not in the same clock: the
        // FIFO's read then waits on flip-flops only, not on the network's `in_ready` (a
        // word per two clocks is still thousands of times what the UART delivers)
        self.fifo.read.next = !self.fifo.empty.val() & !self.held_valid.q.val();
        if self.held_valid.q.val() & self.in_ready.val() {
            self.held_valid.d.next = false;
        }
        if !self.fifo.empty.val() & !self.held_valid.q.val() {
            self.held.d.next = self.fifo.data_out.val();
            self.held_valid.d.next = true;
        }
        // Transmit: one word, low byte then high byte.
        self.out_ready.next = self.tx_phase.q.val() == 0;
        self.utx.valid.next = self.tx_phase.q.val() != 0;
        self.utx.data.next = self.word.q.val().get_bits::<8>(0);
        if self.tx_phase.q.val() == 2 {
            self.utx.data.next = self.word.q.val().get_bits::<8>(8);
        }
        if self.tx_phase.q.val() == 0 {
            if self.out_valid.val() {
                self.word.d.next = self.out_data.val();
                self.tx_phase.d.next = 1.into();
            }
        } else if self.utx.ready.val() {
            if self.tx_phase.q.val() == 1 {
                self.tx_phase.d.next = 2.into();
            } else {
                self.tx_phase.d.next = 0.into();
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
    use crate::uart_rx::serialize_bytes;
    use crate::uart_tx::deserialize_line;

    #[test]
    fn words_cross_the_uart_both_ways_with_network_stalls() {
        let cpb = 4;
        let mut uut = UartLink::new(cpb);
        uut.connect_all();
        let sent: Vec<u16> = vec![0x0001, 0xA5C3, 0xFFFF, 0x0000, 0x1234, 0x8001, 0x7F80];
        let mut line = vec![true; 8];
        line.extend(serialize_bytes(&words_to_bytes(&sent), cpb as usize));
        line.extend(vec![true; 400]);
        let back: Vec<u16> = vec![0xBEEF, 0x00FF, 0xFF00];
        let mut to_send = back.iter().copied().peekable();
        let mut got = vec![];
        let mut tx_line = vec![];
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
        assert_eq!(got, sent);
        assert_eq!(
            bytes_to_words(&deserialize_line(&tx_line, cpb as usize)),
            back
        );
        assert!(!uut.overflow.val());
    }
}
