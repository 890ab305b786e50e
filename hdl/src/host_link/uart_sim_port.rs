//! A board top's UART pins in simulation as a byte stream (`Read + Write`): the host's
//! serial transport talks to the RTL simulation exactly as it talks to a tty, so the whole
//! real-board path (bytes, UART frames, word bridge, board top, inner design) is exercised
//! without a board. Reads step the simulation until bytes come back.

use crate::sim_util::tick;
use crate::uart_rx::serialize_bytes;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// The pins of a board top. `board_top!` implements it.
pub trait UartPins: Block {
    fn osc_pin(&mut self) -> &mut Signal<In, Clock>;
    fn rx_pin(&mut self) -> &mut Signal<In, Bit>;
    fn tx_pin(&mut self) -> &mut Signal<Out, Bit>;
}

pub struct SimUartPort<B: UartPins> {
    pub top: Box<B>,
    clocks_per_bit: usize,
    /// Line levels still to drive onto the FPGA's RX pin.
    to_fpga: VecDeque<bool>,
    from_fpga: VecDeque<u8>,
    // Receiver of the FPGA's TX line: clocks since the start edge, or None when idle.
    rx_timer: Option<usize>,
    rx_byte: u8,
    pub clocks: u64,
    /// Bit errors on the line: `(byte, mask)` inverts the `mask` bits of the `byte`-th byte
    /// (from 0) towards the FPGA, counted over the port's life.
    pub flips_to_fpga: Vec<(u64, u8)>,
    /// The same for the bytes from the FPGA.
    pub flips_from_fpga: Vec<(u64, u8)>,
    pub bytes_to_fpga: u64,
    pub bytes_from_fpga: u64,
    /// Clocks a read may step without receiving a byte before it returns 0 bytes.
    pub read_window: u64,
}

impl<B: UartPins> SimUartPort<B> {
    pub fn new(mut top: Box<B>, clocks_per_bit: usize) -> Self {
        top.connect_all();
        let mut p = SimUartPort {
            top,
            clocks_per_bit,
            to_fpga: VecDeque::new(),
            from_fpga: VecDeque::new(),
            rx_timer: None,
            rx_byte: 0,
            clocks: 0,
            flips_to_fpga: vec![],
            flips_from_fpga: vec![],
            bytes_to_fpga: 0,
            bytes_from_fpga: 0,
            read_window: 200 * clocks_per_bit as u64,
        };
        // Idle line while the power-on hold runs.
        for _ in 0..64 {
            p.step();
        }
        p
    }

    fn step(&mut self) {
        let level = self.to_fpga.pop_front().unwrap_or(true);
        self.top.rx_pin().next = level;
        tick(&mut *self.top, |t| t.osc_pin());
        self.clocks += 1;
        let line = self.top.tx_pin().val();
        let cpb = self.clocks_per_bit;
        match self.rx_timer {
            None => {
                if !line {
                    self.rx_timer = Some(0);
                    self.rx_byte = 0;
                }
            }
            Some(t) => {
                let t = t + 1;
                self.rx_timer = Some(t);
                // Sample each bit in its middle: start at cpb/2, data k at cpb/2 + k·cpb.
                if t >= cpb / 2 && (t - cpb / 2) % cpb == 0 {
                    let k = (t - cpb / 2) / cpb;
                    match k {
                        0 if line => self.rx_timer = None, // glitch, not a start bit
                        1..=8 => self.rx_byte |= (line as u8) << (k - 1),
                        9 => {
                            if line {
                                let b = flipped(&self.flips_from_fpga, self.bytes_from_fpga);
                                self.from_fpga.push_back(self.rx_byte ^ b);
                                self.bytes_from_fpga += 1;
                            }
                            self.rx_timer = None;
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// The bits to invert in byte `k` of a direction.
fn flipped(flips: &[(u64, u8)], k: u64) -> u8 {
    flips.iter().filter(|f| f.0 == k).fold(0, |m, f| m | f.1)
}

impl<B: UartPins> std::io::Write for SimUartPort<B> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            let b = b ^ flipped(&self.flips_to_fpga, self.bytes_to_fpga);
            self.bytes_to_fpga += 1;
            self.to_fpga
                .extend(serialize_bytes(&[b], self.clocks_per_bit));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<B: UartPins> std::io::Read for SimUartPort<B> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut idle = 0;
        while self.from_fpga.is_empty() && idle < self.read_window {
            self.step();
            idle += 1;
        }
        let n = buf.len().min(self.from_fpga.len());
        for b in buf.iter_mut().take(n) {
            *b = self.from_fpga.pop_front().unwrap();
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::echo_standin::EchoStandIn;
    use crate::echo_top::EchoBoardTop;
    use crate::ice40_pll::ClockSource;
    use crate::uart_frames::{frame, payload, units};
    use crate::uart_link::{bytes_to_words, words_to_bytes};
    use std::io::{Read, Write};

    #[test]
    fn bytes_round_trip_through_the_echo_board_top() {
        let top = EchoBoardTop::new(EchoStandIn::default(), ClockSource::Direct, 5, true);
        let mut port = SimUartPort::new(Box::new(top), 5);
        port.write_all(&words_to_bytes(&frame(&[0x2010, 0xFFFF])))
            .unwrap();
        // the acknowledgement and the echo (each word + 1) in two frames, in either order
        let mut b = [0u8; 2 * 9];
        port.read_exact(&mut b).unwrap();
        let u = units(&bytes_to_words(&b)).unwrap();
        assert_eq!(payload(&u), (vec![0x2011, 0x0000], 1, 0));
    }
}
