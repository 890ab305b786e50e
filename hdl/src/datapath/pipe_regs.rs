//! A bank of pipeline registers: every input appears on its output one clock later. The
//! junction puts one between BP's delta and the BP contribution / UP update (junction/),
//! so the path from a memory read on the falling edge ends at this register.

use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct PipeRegs {
    pub clock: Signal<In, Clock>,
    pub bit_in: Vec<Signal<In, Bit>>,
    pub word_in: Vec<Signal<In, Bits<16>>>,
    pub bit: Vec<Signal<Out, Bit>>,
    pub word: Vec<Signal<Out, Bits<16>>>,
    _s: Box<(Vec<bool>, Vec<Bits<16>>)>,
}

impl PipeRegs {
    pub fn new(bits: usize, words: usize) -> PipeRegs {
        PipeRegs {
            clock: Default::default(),
            bit_in: crate::sigs(bits),
            word_in: crate::sigs(words),
            bit: crate::sigs(bits),
            word: crate::sigs(words),
            _s: Box::new((vec![false; bits], vec![Bits::<16>::default(); words])),
        }
    }
}

impl Logic for PipeRegs {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s.0 = self.bit_in.iter().map(|x| x.val()).collect();
            self._s.1 = self.word_in.iter().map(|x| x.val()).collect();
        }
        for (o, &v) in self.bit.iter_mut().zip(self._s.0.iter()) {
            o.next = v;
        }
        for (o, &v) in self.word.iter_mut().zip(self._s.1.iter()) {
            o.next = v;
        }
    }
    fn connect(&mut self) {
        self.bit.iter_mut().for_each(|x| x.connect());
        self.word.iter_mut().for_each(|x| x.connect());
    }
    fn hdl(&self) -> Verilog {
        let (nb, nw) = (self.bit.len(), self.word.len());
        let mut v = String::new();
        for i in 0..nb {
            let _ = writeln!(v, "reg b_{i};");
        }
        for i in 0..nw {
            let _ = writeln!(v, "reg [15:0] w_{i};");
        }
        v += "initial begin\n";
        for i in 0..nb {
            let _ = writeln!(v, "    b_{i} = 1'b0;");
        }
        for i in 0..nw {
            let _ = writeln!(v, "    w_{i} = 16'd0;");
        }
        v += "end\nalways @(posedge clock) begin\n";
        for i in 0..nb {
            let _ = writeln!(v, "    b_{i} <= bit_in${i};");
        }
        for i in 0..nw {
            let _ = writeln!(v, "    w_{i} <= word_in${i};");
        }
        v += "end\nalways @(*) begin\n";
        for i in 0..nb {
            let _ = writeln!(v, "    bit${i} = b_{i};");
        }
        for i in 0..nw {
            let _ = writeln!(v, "    word${i} = w_{i};");
        }
        v += "end\n";
        Verilog::Custom(v)
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
