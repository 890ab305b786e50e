//! UART receiver, 8N1, least significant bit first. The bit time is a run-time constant so one
//! block serves every board clock and baud rate.

use rust_hdl::prelude::*;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum RxState {
    Idle,
    Start,
    Data,
    Stop,
}

#[derive(LogicBlock)]
pub struct UartRx {
    pub clock: Signal<In, Clock>,
    /// The serial line (idle high). Asynchronous to `clock`; synchronized inside.
    pub rx: Signal<In, Bit>,
    /// The received byte, valid for the one clock where `valid` is high.
    pub data: Signal<Out, Bits<8>>,
    pub valid: Signal<Out, Bit>,
    /// High for one clock when a frame ended without its stop bit (the byte is dropped).
    pub frame_error: Signal<Out, Bit>,
    /// High for one clock per bit time of idle line (the bit timer runs while idle too).
    pub idle_bit: Signal<Out, Bit>,
    clocks_per_bit: Constant<Bits<16>>,
    half_bit: Constant<Bits<16>>,
    // Two flops against metastability: the line comes from another clock domain.
    sync1: DFF<Bit>,
    sync2: DFF<Bit>,
    state: DFF<RxState>,
    timer: DFF<Bits<16>>,
    bit_index: DFF<Bits<4>>,
    // the byte, shifted in from the top; it is `data` until the next start bit
    shift: DFF<Bits<8>>,
    out_valid: DFF<Bit>,
    out_error: DFF<Bit>,
}

impl UartRx {
    /// `clocks_per_bit` = clock frequency / baud rate, at least 4 so the mid-bit sample exists.
    pub fn new(clocks_per_bit: u16) -> Self {
        assert!(clocks_per_bit >= 4, "UART needs at least 4 clocks per bit");
        Self {
            clock: Default::default(),
            rx: Default::default(),
            data: Default::default(),
            valid: Default::default(),
            frame_error: Default::default(),
            idle_bit: Default::default(),
            clocks_per_bit: Constant::new((clocks_per_bit as u64).into()),
            half_bit: Constant::new(((clocks_per_bit / 2) as u64).into()),
            sync1: DFF::default(),
            sync2: DFF::default(),
            state: DFF::default(),
            timer: DFF::default(),
            bit_index: DFF::default(),
            shift: DFF::default(),
            out_valid: DFF::default(),
            out_error: DFF::default(),
        }
    }
}

impl Logic for UartRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sync1, sync2, state, timer, bit_index, shift, out_valid, out_error);
        self.sync1.d.next = self.rx.val();
        self.sync2.d.next = self.sync1.q.val();
        self.out_valid.d.next = false;
        self.out_error.d.next = false;
        self.data.next = self.shift.q.val();
        self.valid.next = self.out_valid.q.val();
        self.frame_error.next = self.out_error.q.val();
        self.idle_bit.next = false;
        match self.state.q.val() {
            RxState::Idle => {
                self.timer.d.next = self.timer.q.val() + 1;
                if self.timer.q.val() == self.clocks_per_bit.val() {
                    self.timer.d.next = 1.into();
                    self.idle_bit.next = true;
                }
                if !self.sync2.q.val() {
                    self.timer.d.next = 1.into();
                    self.state.d.next = RxState::Start;
                }
            }
            RxState::Start => {
                self.timer.d.next = self.timer.q.val() + 1;
                // Mid start bit: a glitch shorter than half a bit is not a frame.
                if self.timer.q.val() == self.half_bit.val() {
                    if self.sync2.q.val() {
                        self.state.d.next = RxState::Idle;
                    } else {
                        self.timer.d.next = 1.into();
                        self.bit_index.d.next = 0.into();
                        self.state.d.next = RxState::Data;
                    }
                }
            }
            RxState::Data => {
                self.timer.d.next = self.timer.q.val() + 1;
                if self.timer.q.val() == self.clocks_per_bit.val() {
                    self.timer.d.next = 1.into();
                    self.shift.d.next = self.shift.q.val() >> 1;
                    if self.sync2.q.val() {
                        self.shift.d.next = (self.shift.q.val() >> 1) | 0x80;
                    }
                    self.bit_index.d.next = self.bit_index.q.val() + 1;
                    if self.bit_index.q.val() == 7 {
                        self.state.d.next = RxState::Stop;
                    }
                }
            }
            RxState::Stop => {
                self.timer.d.next = self.timer.q.val() + 1;
                if self.timer.q.val() == self.clocks_per_bit.val() {
                    if self.sync2.q.val() {
                        self.out_valid.d.next = true;
                    } else {
                        self.out_error.d.next = true;
                    }
                    // Back to idle at mid stop bit so the next start edge is never missed.
                    self.state.d.next = RxState::Idle;
                    self.timer.d.next = 1.into();
                }
            }
            _ => {
                self.state.d.next = RxState::Idle;
            }
        }
    }
}

/// Bit-level model of a host's UART transmitter: the line level for each clock.
pub fn serialize_bytes(bytes: &[u8], clocks_per_bit: usize) -> Vec<bool> {
    let mut line = Vec::with_capacity(bytes.len() * 10 * clocks_per_bit);
    for &b in bytes {
        let mut bits = vec![false];
        bits.extend((0..8).map(|i| (b >> i) & 1 == 1));
        bits.push(true);
        for bit in bits {
            line.extend(std::iter::repeat(bit).take(clocks_per_bit));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim_util::tick;

    #[test]
    fn receives_bytes_at_several_bit_times() {
        for cpb in [4u16, 7, 13] {
            let mut uut = UartRx::new(cpb);
            uut.connect_all();
            let bytes: Vec<u8> = vec![0x00, 0xFF, 0x55, 0xA3, 0x01, 0x80, 0x7E];
            // Idle line first, then the frames back to back, then idle.
            let mut line = vec![true; 20];
            line.extend(serialize_bytes(&bytes, cpb as usize));
            line.extend(vec![true; 40]);
            let mut got = vec![];
            for level in line {
                uut.rx.next = level;
                tick(&mut uut, |u| &mut u.clock);
                if uut.valid.val() {
                    got.push(uut.data.val().index() as u8);
                }
                assert!(!uut.frame_error.val());
            }
            assert_eq!(got, bytes, "clocks per bit {cpb}");
        }
    }

    #[test]
    fn missing_stop_bit_is_a_frame_error() {
        let mut uut = UartRx::new(8);
        uut.connect_all();
        let mut line = vec![true; 10];
        let mut frame = serialize_bytes(&[0x3C], 8);
        let n = frame.len();
        for v in &mut frame[n - 8..] {
            *v = false;
        }
        line.extend(frame);
        line.extend(vec![true; 30]);
        let (mut errors, mut bytes) = (0, 0);
        for level in line {
            uut.rx.next = level;
            tick(&mut uut, |u| &mut u.clock);
            errors += uut.frame_error.val() as u32;
            bytes += uut.valid.val() as u32;
        }
        assert_eq!((errors, bytes), (1, 0));
    }

    #[test]
    fn idle_bit_times_are_counted_only_while_the_line_is_idle() {
        let cpb = 5;
        let mut uut = UartRx::new(cpb);
        uut.connect_all();
        // 100 bit times idle, one byte (10 bit times), 50 bit times idle
        let mut line = vec![true; 100 * cpb as usize];
        line.extend(serialize_bytes(&[0x5A], cpb as usize));
        line.extend(vec![true; 50 * cpb as usize]);
        let mut ticks = vec![];
        for (clk, level) in line.into_iter().enumerate() {
            uut.rx.next = level;
            tick(&mut uut, |u| &mut u.clock);
            if uut.idle_bit.val() {
                ticks.push(clk);
            }
        }
        let byte = 100 * cpb as usize..110 * cpb as usize;
        let during = ticks.iter().filter(|c| byte.contains(c)).count();
        // none from the start bit to the middle of the stop bit
        assert!(during <= 1, "{during} idle bits while a byte arrived");
        assert!(ticks.windows(2).all(|w| w[1] - w[0] >= cpb as usize));
        // the rest: one per bit time (the two synchronizing flops and half a stop bit aside)
        assert!(
            (146..=150).contains(&ticks.len()),
            "{} idle bits",
            ticks.len()
        );
    }

    #[test]
    fn verilog_is_generated() {
        let mut uut = UartRx::new(10);
        uut.connect_all();
        let v = generate_verilog(&uut);
        assert!(v.contains("module top"));
    }
}
