//! Pipeline registers of FF after the neuron sum. A neuron finished in clock `k` has its exact
//! sum in the accumulator during clock `k+1` (neuron_sum.rs), where it is saturated and
//! looked up in the activation ROM; this block registers the ROM's σ and σ′ at the end of
//! `k+1`, together with the neuron's "done" flag and row index delayed by two clocks, so the
//! right-layer write, the output delta and the prediction happen in clock `k+2`
//! (`params::FF_LATENCY`). The registers shift every clock: a block cycle never pauses before
//! its last clock, so every neuron of a pass lands within the block cycle of `C + 2` clocks.

use crate::fixed::b16;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct FfPipe {
    pub clock: Signal<In, Clock>,
    /// A group's neuron completes this clock (stage 1).
    pub done_in: Signal<In, Bit>,
    /// Row index of each group's neuron (stage 1).
    pub r_in: Vec<Signal<In, Bits<16>>>,
    /// ROM output of the neurons finished one clock earlier (stage 2).
    pub a_in: Vec<Signal<In, Bits<16>>>,
    pub sp_in: Vec<Signal<In, Bits<16>>>,
    /// Stage 3: the neurons finished two clocks earlier.
    pub done: Signal<Out, Bit>,
    pub r: Vec<Signal<Out, Bits<16>>>,
    pub a: Vec<Signal<Out, Bits<16>>>,
    pub sp: Vec<Signal<Out, Bits<16>>>,
    /// (done, r) entering stage 2 and stage 3, and (a, sp) of stage 3.
    _s: Box<([(bool, Vec<u64>); 2], Vec<(u64, u64)>)>,
}

impl FfPipe {
    pub fn new(groups: usize) -> FfPipe {
        FfPipe {
            clock: Default::default(),
            done_in: Default::default(),
            r_in: crate::sigs(groups),
            a_in: crate::sigs(groups),
            sp_in: crate::sigs(groups),
            done: Default::default(),
            r: crate::sigs(groups),
            a: crate::sigs(groups),
            sp: crate::sigs(groups),
            _s: Box::new((
                [(false, vec![0; groups]), (false, vec![0; groups])],
                vec![(0, 0); groups],
            )),
        }
    }
}

impl Logic for FfPipe {
    fn update(&mut self) {
        let g = self.r.len();
        if self.clock.pos_edge() {
            let s = &mut *self._s;
            s.0[1] = s.0[0].clone();
            s.0[0] = (
                self.done_in.val(),
                (0..g).map(|q| self.r_in[q].val().to_u64()).collect(),
            );
            s.1 = (0..g)
                .map(|q| (self.a_in[q].val().to_u64(), self.sp_in[q].val().to_u64()))
                .collect();
        }
        let s = &*self._s;
        self.done.next = s.0[1].0;
        for q in 0..g {
            self.r[q].next = b16(s.0[1].1[q] as i32);
            self.a[q].next = b16(s.1[q].0 as i32);
            self.sp[q].next = b16(s.1[q].1 as i32);
        }
    }
    fn connect(&mut self) {
        self.done.connect();
        for v in [&mut self.r, &mut self.a, &mut self.sp] {
            v.iter_mut().for_each(|x| x.connect());
        }
    }
    fn hdl(&self) -> Verilog {
        let g = self.r.len();
        let mut v = String::from("reg done1;\nreg done2;\n");
        for q in 0..g {
            let _ = writeln!(
                v,
                "reg [15:0] r1_{q};\nreg [15:0] r2_{q};\nreg [15:0] a2_{q};\nreg [15:0] sp2_{q};"
            );
        }
        v += "initial begin\n    done1 = 1'b0;\n    done2 = 1'b0;\n";
        for q in 0..g {
            let _ = writeln!(
                v,
                "    r1_{q} = 16'd0;\n    r2_{q} = 16'd0;\n    a2_{q} = 16'd0;\n    sp2_{q} = 16'd0;"
            );
        }
        v += "end\nalways @(posedge clock) begin\n    done1 <= done_in;\n    done2 <= done1;\n";
        for q in 0..g {
            let _ = writeln!(
                v,
                "    r1_{q} <= r_in${q};\n    r2_{q} <= r1_{q};\n    a2_{q} <= a_in${q};\n    sp2_{q} <= sp_in${q};"
            );
        }
        v += "end\nalways @(*) begin\n    done = done2;\n";
        for q in 0..g {
            let _ = writeln!(
                v,
                "    r${q} = r2_{q};\n    a${q} = a2_{q};\n    sp${q} = sp2_{q};"
            );
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
    fn done_and_row_take_two_clocks_and_the_rom_output_one() {
        let mut p = FfPipe::new(2);
        p.connect_all();
        // clock c: done on odd clocks, rows 10c + q, ROM output 100c + q
        let mut seen = vec![];
        for c in 0..6i32 {
            p.done_in.next = c % 2 == 1;
            for q in 0..2 {
                p.r_in[q].next = b16(10 * c + q as i32);
                p.a_in[q].next = b16(100 * c + q as i32);
                p.sp_in[q].next = b16(-(100 * c + q as i32));
            }
            settle(&mut p);
            seen.push((
                p.done.val(),
                p.r[1].val().index(),
                crate::fixed::s16(p.a[1].val()),
                crate::fixed::s16(p.sp[0].val()),
            ));
            tick(&mut p, |p| &mut p.clock);
        }
        for c in 2..6usize {
            let ci = c as i32;
            assert_eq!(
                seen[c],
                (
                    (c - 2) % 2 == 1,
                    10 * (c - 2) + 1,
                    100 * (ci - 1) + 1,
                    -100 * (ci - 1)
                ),
                "clock {c}"
            );
        }
    }

    #[test]
    fn ff_pipe_verilog_is_clean() {
        yosys_check(&FfPipe::new(2), "ff_pipe");
    }
}
