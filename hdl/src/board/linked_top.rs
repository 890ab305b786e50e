//! A board of a linked chain on its board: the shell every board top has (PLL, power-on
//! hold, UART bridge; board_top.rs) around the linked board (link/linked_board.rs), whose
//! link pins are the top's own ports, placed on the board file's `[link.pins]`. The error LED
//! lights on a UART error or a link error.

use crate::board_top::BoardShell;
use crate::ice40_pll::ClockSource;
use crate::link::linked_board::LinkedBoard;
use crate::link::linked_stage::{LinkIn, LinkOut};
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct LinkedBoardTop<const W: usize, const F: usize, const FP1: usize> {
    pub clk_osc: Signal<In, Clock>,
    pub uart_rx: Signal<In, Bit>,
    pub uart_tx: Signal<Out, Bit>,
    pub led_error: Signal<Out, Bit>,
    pub from_prev: Vec<LinkIn<W>>,
    pub to_prev: Vec<LinkOut<W>>,
    pub to_next: Vec<LinkOut<W>>,
    pub from_next: Vec<LinkIn<W>>,
    pub shell: BoardShell,
    pub net: LinkedBoard<W, F, FP1>,
    _led_active_low: bool,
}

impl<const W: usize, const F: usize, const FP1: usize> LinkedBoardTop<W, F, FP1> {
    pub fn new(
        net: LinkedBoard<W, F, FP1>,
        source: ClockSource,
        clocks_per_bit: u16,
        led_active_low: bool,
    ) -> Self {
        LinkedBoardTop {
            clk_osc: Default::default(),
            uart_rx: Default::default(),
            uart_tx: Default::default(),
            led_error: Default::default(),
            from_prev: (0..net.from_prev.len())
                .map(|_| Default::default())
                .collect(),
            to_prev: (0..net.to_prev.len()).map(|_| Default::default()).collect(),
            to_next: (0..net.to_next.len()).map(|_| Default::default()).collect(),
            from_next: (0..net.from_next.len())
                .map(|_| Default::default())
                .collect(),
            shell: BoardShell::new(source, clocks_per_bit),
            net,
            _led_active_low: led_active_low,
        }
    }

    fn wire<X: Wires<Self>>(w: &mut X, prev: bool, next: bool, led_active_low: bool) {
        w.set(to!(shell.clk_osc), at!(w, clk_osc));
        w.set(to!(shell.uart_rx), at!(w, uart_rx));
        w.set(to!(uart_tx), at!(w, shell.uart_tx));
        w.set(to!(net.clock), at!(w, shell.clock));
        w.set(to!(net.in_data), at!(w, shell.host_in.data));
        w.set(to!(net.in_valid), at!(w, shell.host_in.valid));
        w.set(to!(shell.host_in.ready), at!(w, net.in_ready));
        w.set(to!(shell.host_out.data), at!(w, net.out_data));
        w.set(to!(shell.host_out.valid), at!(w, net.out_valid));
        w.set(to!(net.out_ready), at!(w, shell.host_out.ready));
        let error = w.or(&at!(w, shell.overflow), &at!(w, net.link_error));
        let led = if led_active_low { w.not(&error) } else { error };
        w.set(to!(led_error), led);
        crate::pass_link_pins!(w, prev, next, net);
    }

    fn shape(&self) -> (bool, bool, bool) {
        (
            !self.from_prev.is_empty(),
            !self.to_next.is_empty(),
            self._led_active_low,
        )
    }
}

impl<const W: usize, const F: usize, const FP1: usize> Logic for LinkedBoardTop<W, F, FP1> {
    fn update(&mut self) {
        let (p, n, l) = self.shape();
        Self::wire(&mut Sim(self), p, n, l);
    }

    fn connect(&mut self) {
        let (p, n, l) = self.shape();
        Self::wire(&mut Connect(self), p, n, l);
    }

    fn hdl(&self) -> Verilog {
        let (p, n, l) = self.shape();
        let mut t = Text::default();
        Self::wire(&mut t, p, n, l);
        t.verilog("")
    }
}

crate::link_pins_impl!(LinkedBoardTop);

impl<const W: usize, const F: usize, const FP1: usize> crate::uart_sim_port::UartPins
    for LinkedBoardTop<W, F, FP1>
{
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

/// One board of a linked chain as the flow builds it: junctions `range` (0-based,
/// inclusive) of `spec` (as the board builds it) on the chain's schedule `ff`, `bp`, links
/// `width` data pins wide with FIFOs of `2^fifo_bits` words, a link timeout in clocks.
#[derive(Clone, Debug)]
pub struct LinkedDesign {
    pub spec: edgeflow_core::Spec,
    /// The board's place in the chain (0-based).
    pub stage: usize,
    pub range: (usize, usize),
    pub ff: Vec<usize>,
    pub bp: Vec<usize>,
    pub width: usize,
    pub fifo_bits: usize,
    pub timeout: u32,
}

impl LinkedDesign {
    pub fn has_prev(&self) -> bool {
        self.range.0 > 0
    }

    pub fn has_next(&self) -> bool {
        self.range.1 + 1 < self.spec.junctions()
    }

    /// Clocks of one of the board's block cycles.
    pub fn block_cycle_clocks(&self) -> usize {
        crate::stage::ctrl_params(&self.spec, self.range.0..=self.range.1, &self.ff, &self.bp).t
    }

    fn board<const W: usize, const F: usize, const FP1: usize>(&self) -> LinkedBoard<W, F, FP1> {
        LinkedBoard::new(
            &self.spec,
            self.range.0..=self.range.1,
            &self.ff,
            &self.bp,
            self.timeout,
        )
    }
}

/// Verilog of the linked board alone (`top`), or of its board top when `top` gives the
/// clock source, UART clocks per bit and the LED's level; an error names a link width or
/// FIFO size that does not exist.
pub fn linked_verilog(
    d: &LinkedDesign,
    top: Option<(ClockSource, u16, bool)>,
) -> Result<String, String> {
    fn build<const W: usize, const F: usize, const FP1: usize>(
        d: &LinkedDesign,
        top: Option<(ClockSource, u16, bool)>,
    ) -> String {
        match top {
            None => {
                let mut b = d.board::<W, F, FP1>();
                b.connect_all();
                generate_verilog_unchecked(&b)
            }
            Some((source, cpb, low)) => {
                let mut t = LinkedBoardTop::new(d.board::<W, F, FP1>(), source, cpb, low);
                t.connect_all();
                generate_verilog_unchecked(&t)
            }
        }
    }
    macro_rules! pick {
        ($($w:literal),*) => {
            match (d.width, d.fifo_bits) {
                $(
                    ($w, 9) => build::<$w, 9, 10>(d, top),
                    ($w, 10) => build::<$w, 10, 11>(d, top),
                    ($w, 11) => build::<$w, 11, 12>(d, top),
                    ($w, 12) => build::<$w, 12, 13>(d, top),
                )*
                (1 | 2 | 4 | 8 | 16, f) => {
                    return Err(format!("a link FIFO has 2^9 to 2^12 words, not 2^{f}"))
                }
                (w, _) => return Err(format!("a link is 1, 2, 4, 8 or 16 data pins wide, not {w}")),
            }
        };
    }
    Ok(pick!(1, 2, 4, 8, 16))
}

/// The top ports of a linked board's link pins and the board file's pin for each: towards
/// the previous board (activations in, deltas out) and the next (activations out, deltas
/// in), as the design has those neighbours. A board whose two sides share pins can only be
/// at an end of a chain.
pub fn link_port_pins(
    b: &crate::boards::BoardInfo,
    prev: bool,
    next: bool,
) -> Result<Vec<(String, String)>, String> {
    let Some(pins) = b.link else {
        return Err(format!(
            "board {} has no [link.pins] in its board file: it cannot be built as a linked stage",
            b.name
        ));
    };
    let mut out = vec![];
    let mut put = |port: &str, w: &crate::boards::LinkWires| {
        for (sig, pin) in w.pins() {
            out.push((format!("{port}$0${sig}"), pin.to_string()));
        }
    };
    if prev {
        put("from_prev", &pins.previous.activations);
        put("to_prev", &pins.previous.deltas);
    }
    if next {
        put("to_next", &pins.next.activations);
        put("from_next", &pins.next.deltas);
    }
    if prev && next {
        let p: Vec<&str> = pins.previous.pins().into_iter().map(|x| x.1).collect();
        if let Some((_, pin)) = pins.next.pins().into_iter().find(|(_, q)| p.contains(q)) {
            return Err(format!(
                "board {} faces one neighbour at a time (its previous and next link share pin \
                 {pin}): it can only be the first or the last board of a chain",
                b.name
            ));
        }
    }
    Ok(out)
}
