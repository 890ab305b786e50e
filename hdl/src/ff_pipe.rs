//! Pipeline registers of FF after the neuron sum: a neuron's "done" flag and row index,
//! delayed by two clocks. A neuron finished in clock `k` has its exact sum in the accumulator
//! during clock `k+1` (neuron_sum.rs), where it is saturated and looked up in the activation
//! ROM, whose read is registered (act_rom.rs); its σ, σ′ come out in clock `k+2`, together
//! with the flag and the row from here: the right-layer write, the output delta and the
//! prediction happen in clock `k+2` (`params::FF_LATENCY`). The registers shift every clock:
//! a block cycle never pauses before its last clock, so every neuron of a pass lands within
//! the block cycle of `C + 2` clocks.

use crate::fixed::b16;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

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
    /// (done, r) one and two clocks after the input.
    _s: Box<[(bool, Vec<u64>); 2]>,
}

impl FfPipe {
    pub fn new(groups: usize) -> FfPipe {
        FfPipe {
            clock: Default::default(),
            done_in: Default::default(),
            r_in: crate::sigs(groups),
            done: Default::default(),
            r: crate::sigs(groups),
            _s: Box::new([(false, vec![0; groups]), (false, vec![0; groups])]),
        }
    }
}

impl Logic for FfPipe {
    fn update(&mut self) {
        let g = self.r.len();
        if self.clock.pos_edge() {
            let s = &mut *self._s;
            s[1] = s[0].clone();
            s[0] = (
                self.done_in.val(),
                (0..g).map(|q| self.r_in[q].val().to_u64()).collect(),
            );
        }
        let s = &*self._s;
        self.done.next = s[1].0;
        for q in 0..g {
            self.r[q].next = b16(s[1].1[q] as i32);
        }
    }
    fn connect(&mut self) {
        self.done.connect();
        self.r.iter_mut().for_each(|x| x.connect());
    }
    fn hdl(&self) -> Verilog {
        let g = self.r.len();
        let mut v = String::from("reg done1;\nreg done2;\n");
        for q in 0..g {
            let _ = writeln!(v, "reg [15:0] r1_{q};\nreg [15:0] r2_{q};");
        }
        v += "initial begin\n    done1 = 1'b0;\n    done2 = 1'b0;\n";
        for q in 0..g {
            let _ = writeln!(v, "    r1_{q} = 16'd0;\n    r2_{q} = 16'd0;");
        }
        v += "end\nalways @(posedge clock) begin\n    done1 <= done_in;\n    done2 <= done1;\n";
        for q in 0..g {
            let _ = writeln!(v, "    r1_{q} <= r_in${q};\n    r2_{q} <= r1_{q};");
        }
        v += "end\nalways @(*) begin\n    done = done2;\n";
        for q in 0..g {
            let _ = writeln!(v, "    r${q} = r2_{q};");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn ff_pipe_verilog_is_clean() {
        yosys_check(&FfPipe::new(2), "ff_pipe");
    }
}
