//! A bank of pipeline registers: every input appears on its output one clock later. The
//! junction puts one between BP's delta and the BP contribution / UP update (junction/),
//! so the path from a memory read on the falling edge ends at this register.

use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use rust_hdl::core::prelude::*;
use rust_hdl::widgets::prelude::DFF;

#[derive(LogicBlock)]
pub struct PipeRegs {
    pub clock: Signal<In, Clock>,
    pub bit_in: Vec<Signal<In, Bit>>,
    pub word_in: Vec<Signal<In, Bits<16>>>,
    pub bit: Vec<Signal<Out, Bit>>,
    pub word: Vec<Signal<Out, Bits<16>>>,
    /// A flip-flop per bit and per word: rust-hdl's own, which starts at zero.
    pub bit_reg: Vec<DFF<Bit>>,
    pub word_reg: Vec<DFF<Bits<16>>>,
}

impl PipeRegs {
    pub fn new(bits: usize, words: usize) -> PipeRegs {
        PipeRegs {
            clock: Default::default(),
            bit_in: crate::sigs(bits),
            word_in: crate::sigs(words),
            bit: crate::sigs(bits),
            word: crate::sigs(words),
            bit_reg: (0..bits).map(|_| DFF::default()).collect(),
            word_reg: (0..words).map(|_| DFF::default()).collect(),
        }
    }

    /// Every input into its flip-flop, every flip-flop to its output.
    fn wire<W: Wires<Self>>(bits: usize, words: usize, w: &mut W) {
        let clock = at!(w, clock);
        for i in 0..bits {
            w.set(to!(bit_reg[i].clock), clock.clone());
            w.set(to!(bit_reg[i].d), at!(w, bit_in[i]));
            w.set(to!(bit[i]), at!(w, bit_reg[i].q));
        }
        for i in 0..words {
            w.set(to!(word_reg[i].clock), clock.clone());
            w.set(to!(word_reg[i].d), at!(w, word_in[i]));
            w.set(to!(word[i]), at!(w, word_reg[i].q));
        }
    }
}

impl Logic for PipeRegs {
    fn update(&mut self) {
        let (b, n) = (self.bit.len(), self.word.len());
        Self::wire(b, n, &mut Sim(self));
    }
    fn connect(&mut self) {
        let (b, n) = (self.bit.len(), self.word.len());
        Self::wire(b, n, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(self.bit.len(), self.word.len(), &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{b16, s16};
    use crate::testing::{settle, tick, yosys_check};

    #[test]
    fn every_input_one_clock_later() {
        let mut p = PipeRegs::new(2, 3);
        p.connect_all();
        let mut prev: Option<(Vec<bool>, Vec<i32>)> = None;
        for c in 0..5i32 {
            let bits = vec![c % 2 == 0, c % 3 == 0];
            let words: Vec<i32> = (0..3).map(|i| 1000 * c - 7 * i).collect();
            for i in 0..2 {
                p.bit_in[i].next = bits[i];
            }
            for i in 0..3 {
                p.word_in[i].next = b16(words[i]);
            }
            settle(&mut p);
            if let Some((b, w)) = &prev {
                assert_eq!(&p.bit.iter().map(|x| x.val()).collect::<Vec<_>>(), b);
                assert_eq!(&p.word.iter().map(|x| s16(x.val())).collect::<Vec<_>>(), w);
            }
            tick(&mut p, |p| &mut p.clock);
            prev = Some((bits, words));
        }
    }

    #[test]
    fn pipe_regs_verilog_is_clean() {
        yosys_check(&PipeRegs::new(2, 2), "pipe_regs");
    }
}
