//! Board tops: the oscillator through the PLL (or directly), a power-on hold until the PLL
//! locks, the UART host link ([`BoardShell`]), and any inner block with the host-link ports.
//! `board_top!` declares a top for a given inner block type, so the same wrapper serves the
//! network and the stand-ins; a linked board's top (board/linked_top.rs) adds its link pins.

use crate::boards::BoardInfo;
use crate::ecp5_pll::ecp5_pll_params;
use crate::ice40_pll::{pll_params, ClockSource};
use crate::word_stream::{WordSink, WordSource};
use rust_hdl::prelude::*;

/// Why a board cannot make a clock, or a UART cannot run at a clock.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    #[error("board {board}: the MMCM cannot make {want_mhz} MHz from {osc_mhz} MHz")]
    Mmcm {
        board: String,
        want_mhz: f64,
        osc_mhz: f64,
    },
    #[error("board {board}: the ECP5 PLL cannot make {want_mhz} MHz from {osc_mhz} MHz (range 10–400 MHz)")]
    Ecp5Pll {
        board: String,
        want_mhz: f64,
        osc_mhz: f64,
    },
    #[error("board {board}: only its {osc_mhz} MHz oscillator clock is supported")]
    OscillatorOnly { board: String, osc_mhz: f64 },
    #[error("board {board}: no clock at or below {want_mhz} MHz from its {osc_mhz} MHz oscillator, directly or through the PLL, divided by 2 to 16")]
    Divided {
        board: String,
        want_mhz: f64,
        osc_mhz: f64,
    },
    #[error("board {board}: the iCE40 PLL cannot make {want_mhz} MHz from {osc_mhz} MHz (range 16–275 MHz)")]
    Ice40Pll {
        board: String,
        want_mhz: f64,
        osc_mhz: f64,
    },
    #[error("{baud} baud at {mhz} MHz gives {cpb} clocks per bit; need 4..65535")]
    BitClocks { baud: u32, mhz: f64, cpb: f64 },
    #[error("{baud} baud at {mhz} MHz is off by {percent:.1}% (more than 2%)")]
    BaudError { baud: u32, mhz: f64, percent: f64 },
}

/// Clock plan of a board top: where the clock comes from and the frequency the design runs.
pub fn clock_source(b: &BoardInfo, want_mhz: f64) -> Result<(ClockSource, f64), ClockError> {
    let (board, osc_mhz) = (b.name.to_string(), b.osc_mhz);
    if (want_mhz - b.osc_mhz).abs() < 1e-9 {
        return Ok((ClockSource::Direct, b.osc_mhz));
    }
    if b.target == "xc7a100t" {
        let (m, d, o, f) =
            crate::ice40_pll::mmcm_params(b.osc_mhz, want_mhz).ok_or(ClockError::Mmcm {
                board,
                want_mhz,
                osc_mhz,
            })?;
        return Ok((ClockSource::Mmcm(m, d, o), f));
    }
    if b.target.starts_with("ecp5") {
        let p = ecp5_pll_params(b.osc_mhz, want_mhz).ok_or(ClockError::Ecp5Pll {
            board,
            want_mhz,
            osc_mhz,
        })?;
        return Ok((ClockSource::Ecp5Pll(p), p.achieved_mhz));
    }
    if !b.target.starts_with("ice40") {
        return Err(ClockError::OscillatorOnly { board, osc_mhz });
    }
    if want_mhz < 16.0 {
        return divided_source(b, want_mhz).ok_or(ClockError::Divided {
            board,
            want_mhz,
            osc_mhz,
        });
    }
    let p = pll_params(b.osc_mhz, want_mhz).ok_or(ClockError::Ice40Pll {
        board,
        want_mhz,
        osc_mhz,
    })?;
    Ok((pll_source(b, p), p.achieved_mhz))
}

fn pll_source(b: &BoardInfo, p: crate::ice40_pll::PllParams) -> ClockSource {
    if b.pll_pad {
        ClockSource::PllPad(p)
    } else {
        ClockSource::PllCore(p)
    }
}

/// Below the iCE40 PLL's 16 MHz: the oscillator or a PLL output divided by an even number in
/// the fabric, the fastest such clock at or below `want_mhz`.
fn divided_source(b: &BoardInfo, want_mhz: f64) -> Option<(ClockSource, f64)> {
    let mut best: Option<(ClockSource, f64)> = None;
    for n in (2..=16u32).step_by(2) {
        let osc = b.osc_mhz / n as f64;
        let mut cands = vec![];
        if osc <= want_mhz + 1e-9 {
            cands.push((ClockSource::Direct, osc));
        }
        if let Some(p) = pll_params(b.osc_mhz, want_mhz * n as f64) {
            cands.push((pll_source(b, p), p.achieved_mhz / n as f64));
        }
        for (src, f) in cands {
            if best.as_ref().map_or(true, |x| f > x.1 + 1e-9) {
                best = Some((ClockSource::Divided(Box::new(src), n), f));
            }
        }
    }
    best
}

/// The fastest clock board `b` can make at or below `mhz` (for a design whose Fmax is `mhz`):
/// the oscillator, a PLL output, or either divided in the fabric (iCE40).
pub fn fastest_clock_at_most(b: &BoardInfo, mhz: f64) -> Option<f64> {
    let mut best = (b.osc_mhz <= mhz + 1e-9).then_some(b.osc_mhz);
    if b.target.starts_with("ecp5") {
        if let Some(p) = ecp5_pll_params(b.osc_mhz, mhz) {
            best = Some(best.map_or(p.achieved_mhz, |x: f64| x.max(p.achieved_mhz)));
        }
    }
    if b.target.starts_with("ice40") {
        let pll = pll_params(b.osc_mhz, mhz).map(|p| p.achieved_mhz);
        let div = divided_source(b, mhz).map(|d| d.1);
        for f in [pll, div].into_iter().flatten() {
            if best.map_or(true, |x| f > x) {
                best = Some(f);
            }
        }
    }
    best
}

/// UART bit time in clocks at a clock frequency and baud rate.
pub fn clocks_per_bit(mhz: f64, baud: u32) -> Result<u16, ClockError> {
    let cpb = (mhz * 1e6 / baud as f64).round();
    if cpb < 4.0 || cpb > 65535.0 {
        return Err(ClockError::BitClocks { baud, mhz, cpb });
    }
    let err = (mhz * 1e6 / cpb / baud as f64 - 1.0).abs();
    if err > 0.02 {
        return Err(ClockError::BaudError {
            baud,
            mhz,
            percent: err * 100.0,
        });
    }
    Ok(cpb as u16)
}

/// What every board top has around its design: the oscillator through the PLL (or directly),
/// a power-on hold until the PLL locks, and the UART bridge to the host's word streams. The
/// design runs on `clock`; `host_in` and `host_out` pass words only once the board is live.
#[derive(LogicBlock)]
pub struct BoardShell {
    pub clk_osc: Signal<In, Clock>,
    pub uart_rx: Signal<In, Bit>,
    pub uart_tx: Signal<Out, Bit>,
    /// The design clock, from the PLL.
    pub clock: Signal<Out, Clock>,
    /// The host's words to the design, and the design's answers.
    pub host_in: WordSource,
    pub host_out: WordSink,
    /// The UART bridge saw a framing error or a frame that failed its sums (sticky).
    pub overflow: Signal<Out, Bit>,
    pub pll: crate::ice40_pll::Ice40Pll,
    pub link: crate::uart_link::UartLink,
    // Counts clocks after PLL lock; the link opens once it saturates.
    por: DFF<Bits<4>>,
    live: DFF<Bit>,
}

impl BoardShell {
    pub fn new(source: ClockSource, clocks_per_bit: u16) -> Self {
        Self {
            clk_osc: Default::default(),
            uart_rx: Default::default(),
            uart_tx: Default::default(),
            clock: Default::default(),
            host_in: Default::default(),
            host_out: Default::default(),
            overflow: Default::default(),
            pll: crate::ice40_pll::Ice40Pll::new(source),
            link: crate::uart_link::UartLink::new(clocks_per_bit),
            por: Default::default(),
            live: Default::default(),
        }
    }
}

impl Logic for BoardShell {
    #[hdl_gen]
    fn update(&mut self) {
        self.pll.clock_in.next = self.clk_osc.val();
        self.clock.next = self.pll.clock_out.val();
        self.link.clock.next = self.pll.clock_out.val();
        self.por.clock.next = self.pll.clock_out.val();
        self.live.clock.next = self.pll.clock_out.val();
        self.por.d.next = self.por.q.val();
        self.live.d.next = self.live.q.val();
        if !self.pll.locked.val() {
            self.por.d.next = 0.into();
            self.live.d.next = false;
        } else if self.por.q.val() == 15 {
            self.live.d.next = true;
        } else {
            self.por.d.next = self.por.q.val() + 1;
        }
        self.link.rx.next = self.uart_rx.val() | !self.live.q.val();
        self.uart_tx.next = self.link.tx.val() | !self.live.q.val();
        self.host_in.data.next = self.link.host_in.data.val();
        self.host_in.valid.next = self.link.host_in.valid.val() & self.live.q.val();
        self.link.host_in.ready.next = self.host_in.ready.val() & self.live.q.val();
        self.link.host_out.data.next = self.host_out.data.val();
        self.link.host_out.valid.next = self.host_out.valid.val() & self.live.q.val();
        self.host_out.ready.next = self.link.host_out.ready.val() & self.live.q.val();
        self.overflow.next = self.link.overflow.val();
    }
}

/// Declare a board top `$name` around inner block type `$inner` (which must have the
/// PROTOCOL.md host-link ports and `clock`). Construct it with `$name::new(inner, source,
/// clocks_per_bit, led_active_low)`. The caller needs `rust_hdl::prelude::*` in scope.
#[macro_export]
macro_rules! board_top {
    ($name:ident, $inner:ty) => {
        #[derive(LogicBlock)]
        pub struct $name {
            pub clk_osc: Signal<In, Clock>,
            pub uart_rx: Signal<In, Bit>,
            pub uart_tx: Signal<Out, Bit>,
            pub led_error: Signal<Out, Bit>,
            pub shell: $crate::board_top::BoardShell,
            pub net: $inner,
            led_low: Constant<Bit>,
        }

        impl $name {
            pub fn new(
                net: $inner,
                source: $crate::ice40_pll::ClockSource,
                clocks_per_bit: u16,
                led_active_low: bool,
            ) -> Self {
                Self {
                    clk_osc: Default::default(),
                    uart_rx: Default::default(),
                    uart_tx: Default::default(),
                    led_error: Default::default(),
                    shell: $crate::board_top::BoardShell::new(source, clocks_per_bit),
                    net,
                    led_low: Constant::new(led_active_low),
                }
            }
        }

        impl Logic for $name {
            #[hdl_gen]
            fn update(&mut self) {
                self.shell.clk_osc.next = self.clk_osc.val();
                self.shell.uart_rx.next = self.uart_rx.val();
                self.uart_tx.next = self.shell.uart_tx.val();
                self.net.clock.next = self.shell.clock.val();
                self.net.in_data.next = self.shell.host_in.data.val();
                self.net.in_valid.next = self.shell.host_in.valid.val();
                self.shell.host_in.ready.next = self.net.in_ready.val();
                self.shell.host_out.data.next = self.net.out_data.val();
                self.shell.host_out.valid.next = self.net.out_valid.val();
                self.net.out_ready.next = self.shell.host_out.ready.val();
                self.led_error.next = self.shell.overflow.val() ^ self.led_low.val();
            }
        }

        impl $crate::uart_sim_port::UartPins for $name {
            fn osc_pin(&mut self) -> &mut Signal<In, Clock> {
                &mut self.clk_osc
            }
            fn rx_pin(&mut self) -> &mut Signal<In, Bit> {
                &mut self.uart_rx
            }
            fn tx_pin(&mut self) -> &mut Signal<Out, Bit> {
                &mut self.uart_tx
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boards::board;

    #[test]
    fn icebreaker_gets_a_pll_and_cu_runs_from_its_oscillator() {
        let (src, mhz) = clock_source(board("icebreaker").unwrap(), 30.0).unwrap();
        assert!(matches!(src, ClockSource::PllPad(_)));
        assert_eq!(mhz, 30.0);
        let (src, mhz) = clock_source(board("alchitry-cu").unwrap(), 100.0).unwrap();
        assert_eq!((src, mhz), (ClockSource::Direct, 100.0));
        // below the PLL's 16 MHz: a PLL output halved (12 MHz · 49 / 32 = 18.375 MHz, the
        // fastest PLL output ≤ 18.4), the oscillator halved is slower
        let (src, mhz) = clock_source(board("icebreaker").unwrap(), 9.2).unwrap();
        assert_eq!(mhz, 18.375 / 2.0);
        assert!(
            matches!(&src, ClockSource::Divided(s, 2) if matches!(**s, ClockSource::PllPad(_)))
        );
        let (src, mhz) = clock_source(board("icebreaker").unwrap(), 6.0).unwrap();
        assert_eq!(mhz, 6.0);
        assert!(matches!(&src, ClockSource::Divided(s, 2) if matches!(**s, ClockSource::Direct)));
        // the PLL at 12 · 87 / 8 = 130.5 MHz divided by 14: 9.3214 MHz, just under 9.35
        assert_eq!(
            fastest_clock_at_most(board("icebreaker").unwrap(), 9.35),
            Some(12.0 * 87.0 / 8.0 / 14.0)
        );
        assert_eq!(
            fastest_clock_at_most(board("icebreaker").unwrap(), 23.14).map(|f| f <= 23.14),
            Some(true)
        );
        assert!(clock_source(board("icebreaker").unwrap(), 0.5).is_err());
        let (src, mhz) = clock_source(board("nexys4-ddr").unwrap(), 15.0).unwrap();
        assert!(matches!(src, ClockSource::Mmcm(..)));
        assert_eq!(mhz, 15.0);
        // the ULX3S: its 25 MHz oscillator through the EHXPLLL
        let (src, mhz) = clock_source(board("ulx3s-85f").unwrap(), 50.0).unwrap();
        assert!(matches!(src, ClockSource::Ecp5Pll(_)));
        assert_eq!(mhz, 50.0);
        let (src, _) = clock_source(board("ulx3s-85f").unwrap(), 25.0).unwrap();
        assert_eq!(src, ClockSource::Direct);
        assert!(clock_source(board("ulx3s-85f").unwrap(), 5.0).is_err());
        assert_eq!(
            fastest_clock_at_most(board("ulx3s-85f").unwrap(), 47.3),
            Some(25.0 * 15.0 / 8.0)
        );
        assert_eq!(clocks_per_bit(30.0, 115_200).unwrap(), 260);
        assert!(clocks_per_bit(12.0, 4_000_000).is_err());
    }
}
