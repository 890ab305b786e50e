//! UART transmitter, 8N1, least significant bit first, with a valid/ready byte input.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct UartTx {
    pub clock: Signal<In, Clock>,
    /// Byte to send; taken on a clock where `valid` and `ready` are both high.
    pub data: Signal<In, Bits<8>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    /// The serial line, idle high.
    pub tx: Signal<Out, Bit>,
    clocks_per_bit: Constant<Bits<16>>,
    // Start bit, 8 data bits, stop bit: shifted out from bit 0.
    frame: DFF<Bits<10>>,
    bits_left: DFF<Bits<4>>,
    timer: DFF<Bits<16>>,
    line: DFFWithInit<Bit>,
}

impl UartTx {
    pub fn new(clocks_per_bit: u16) -> Self {
        assert!(clocks_per_bit >= 4, "UART needs at least 4 clocks per bit");
        Self {
            clock: Default::default(),
            data: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            tx: Default::default(),
            clocks_per_bit: Constant::new((clocks_per_bit as u64).into()),
            frame: DFF::default(),
            bits_left: DFF::default(),
            timer: DFF::default(),
            line: DFFWithInit::new(true),
        }
    }
}

impl Logic for UartTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, frame, bits_left, timer, line);
        self.tx.next = self.line.q.val();
        self.ready.next = self.bits_left.q.val() == 0;
        if self.bits_left.q.val() == 0 {
            self.line.d.next = true;
            if self.valid.val() {
                // {stop=1, data, start=0}
                self.frame.d.next = (bit_cast::<10, 8>(self.data.val()) << 1) | 0x200;
                self.bits_left.d.next = 10.into();
                self.timer.d.next = 0.into();
            }
        } else {
            self.line.d.next = self.frame.q.val().get_bit(0);
            self.timer.d.next = self.timer.q.val() + 1;
            if self.timer.q.val() == self.clocks_per_bit.val() - 1 {
                self.timer.d.next = 0.into();
                self.frame.d.next = self.frame.q.val() >> 1;
                self.bits_left.d.next = self.bits_left.q.val() - 1;
            }
        }
    }
}

/// Decode a line trace (one level per clock) into bytes, as a host UART would: find each
/// start edge and sample every bit in its middle.
pub fn deserialize_line(line: &[bool], clocks_per_bit: usize) -> Vec<u8> {
    let mut out = vec![];
    let mut i = 1;
    while i < line.len() {
        if line[i - 1] && !line[i] && i + 10 * clocks_per_bit <= line.len() {
            let mid = |k: usize| line[i + k * clocks_per_bit + clocks_per_bit / 2];
            assert!(!mid(0), "start bit not low in its middle at clock {i}");
            assert!(mid(9), "stop bit not high at clock {i}");
            out.push((0..8).fold(0u8, |b, k| b | ((mid(k + 1) as u8) << k)));
            i += 10 * clocks_per_bit - clocks_per_bit / 2;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim_util::tick;

    #[test]
    fn sends_bytes_back_to_back_with_exact_bit_times() {
        for cpb in [4u16, 9] {
            let mut uut = UartTx::new(cpb);
            uut.connect_all();
            let bytes = vec![0x00u8, 0xFF, 0x5A, 0x81, 0x3C];
            let mut queue = bytes.clone().into_iter().peekable();
            let mut line = vec![];
            let mut busy_from = None;
            for clk in 0..(bytes.len() * 10 * cpb as usize + 50) {
                uut.valid.next = queue.peek().is_some();
                uut.data.next = (*queue.peek().unwrap_or(&0) as u64).into();
                assert!(simulate(&mut uut, 1000));
                let take = uut.valid.val() && uut.ready.val();
                tick(&mut uut, |u| &mut u.clock);
                if take {
                    queue.next();
                    busy_from.get_or_insert(clk);
                }
                line.push(uut.tx.val());
            }
            assert_eq!(deserialize_line(&line, cpb as usize), bytes);
            // Back to back: each frame starts 10 bit times (plus the one clock the stop bit
            // is stretched while the next byte is loaded) after the previous one.
            let first_low = line.iter().position(|&b| !b).unwrap();
            let last_low = line.iter().rposition(|&b| !b).unwrap();
            assert!(
                last_low - first_low < bytes.len() * (10 * cpb as usize + 1),
                "frames not back to back"
            );
            assert!(busy_from.is_some());
        }
    }
}
