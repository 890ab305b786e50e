//! Pipeline registers of FF after the neuron sum: a neuron's "done" flag and row index,
//! delayed by two clocks. A neuron finished in clock `k` has its exact sum in the accumulator
//! during clock `k+1` (neuron_sum.rs), where it is saturated and looked up in the activation
//! ROM, whose read is registered (act_rom.rs); its σ, σ′ come out in clock `k+2`, together
//! with the flag and the row from here: the right-layer write, the output delta and the
//! prediction happen in clock `k+2` (`params::FF_LATENCY`). The registers shift every clock:
//! a block cycle never pauses before its last clock, so every neuron of a pass lands within
//! the block cycle of `C + 2` clocks.

use crate::pipe_regs::PipeRegs;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use rust_hdl::core::prelude::*;

#[derive(LogicBlock)]
pub struct FfPipe {
    pub clock: Signal<In, Clock>,
    /// A group's neuron completes this clock.
    pub done_in: Signal<In, Bit>,
    /// Row index of each group's neuron.
    pub r_in: Vec<Signal<In, Bits<16>>>,
    /// Two clocks later.
    pub done: Signal<Out, Bit>,
    pub r: Vec<Signal<Out, Bits<16>>>,
    /// One register stage per clock of delay: the flag and the rows.
    pub stage: Vec<PipeRegs>,
}

impl FfPipe {
    pub fn new(groups: usize) -> FfPipe {
        FfPipe {
            clock: Default::default(),
            done_in: Default::default(),
            r_in: crate::sigs(groups),
            done: Default::default(),
            r: crate::sigs(groups),
            stage: (0..2).map(|_| PipeRegs::new(1, groups)).collect(),
        }
    }

    /// `depth` clocks instead of two (the deep pipeline registers the sum once more).
    pub fn with_depth(mut self, depth: usize) -> FfPipe {
        let g = self.r.len();
        self.stage = (0..depth).map(|_| PipeRegs::new(1, g)).collect();
        self
    }

    /// The stages in a chain: the input into the first, each into the next, the last out.
    fn wire<W: Wires<Self>>(groups: usize, depth: usize, w: &mut W) {
        let clock = at!(w, clock);
        for s in 0..depth {
            w.set(to!(stage[s].clock), clock.clone());
            if s == 0 {
                w.set(to!(stage[s].bit_in[0]), at!(w, done_in));
            } else {
                w.set(to!(stage[s].bit_in[0]), at!(w, stage[s - 1].bit[0]));
            }
            for q in 0..groups {
                let v = if s == 0 {
                    at!(w, r_in[q])
                } else {
                    at!(w, stage[s - 1].word[q])
                };
                w.set(to!(stage[s].word_in[q]), v);
            }
        }
        w.set(to!(done), at!(w, stage[depth - 1].bit[0]));
        for q in 0..groups {
            w.set(to!(r[q]), at!(w, stage[depth - 1].word[q]));
        }
    }
}

impl Logic for FfPipe {
    fn update(&mut self) {
        let (g, d) = (self.r.len(), self.stage.len());
        Self::wire(g, d, &mut Sim(self));
    }
    fn connect(&mut self) {
        let (g, d) = (self.r.len(), self.stage.len());
        Self::wire(g, d, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(self.r.len(), self.stage.len(), &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::b16;
    use crate::testing::{settle, tick, yosys_check};

    #[test]
    fn done_and_row_take_two_clocks() {
        let mut p = FfPipe::new(2);
        p.connect_all();
        // clock c: done on odd clocks, rows 10c + q
        let mut seen = vec![];
        for c in 0..6usize {
            p.done_in.next = c % 2 == 1;
            for q in 0..2 {
                p.r_in[q].next = b16((10 * c + q) as i32);
            }
            settle(&mut p);
            seen.push((p.done.val(), p.r[0].val().index(), p.r[1].val().index()));
            tick(&mut p, |p| &mut p.clock);
        }
        assert_eq!(seen[..2], [(false, 0, 0), (false, 0, 0)]);
        for c in 2..6usize {
            let i = c - 2;
            assert_eq!(seen[c], (i % 2 == 1, 10 * i, 10 * i + 1), "clock {c}");
        }
    }

    #[test]
    fn a_deeper_pipe_takes_its_depth() {
        let mut p = FfPipe::new(1).with_depth(3);
        p.connect_all();
        let mut seen = vec![];
        for c in 0..7usize {
            p.done_in.next = c == 1;
            p.r_in[0].next = b16(c as i32);
            settle(&mut p);
            seen.push((p.done.val(), p.r[0].val().index()));
            tick(&mut p, |p| &mut p.clock);
        }
        assert_eq!(seen[4], (true, 1));
        assert!(
            seen.iter().enumerate().all(|(c, s)| s.0 == (c == 4)),
            "{seen:?}"
        );
        assert_eq!(seen[6].1, 3);
    }

    #[test]
    fn ff_pipe_verilog_is_clean() {
        yosys_check(&FfPipe::new(2), "ff_pipe");
        yosys_check(&FfPipe::new(2).with_depth(3), "ff_pipe_deep");
    }
}
