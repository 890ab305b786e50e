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
    /// (done, r) one, two, … clocks after the input.
    _s: Box<Vec<(bool, Vec<u64>)>>,
}

impl FfPipe {
    pub fn new(groups: usize) -> FfPipe {
        FfPipe {
            clock: Default::default(),
            done_in: Default::default(),
            r_in: crate::sigs(groups),
            done: Default::default(),
            r: crate::sigs(groups),
            _s: Box::new(vec![(false, vec![0; groups]); 2]),
        }
    }

    /// `depth` clocks instead of two (the deep pipeline registers the sum once more).
    pub fn with_depth(mut self, depth: usize) -> FfPipe {
        let g = self.r.len();
        self._s = Box::new(vec![(false, vec![0; g]); depth]);
        self
    }
}

impl Logic for FfPipe {
    fn update(&mut self) {
        let g = self.r.len();
        if self.clock.pos_edge() {
            let s = &mut *self._s;
            s.rotate_right(1);
            s[0] = (
                self.done_in.val(),
                (0..g).map(|q| self.r_in[q].val().to_u64()).collect(),
            );
        }
        let last = self._s.last().unwrap();
        self.done.next = last.0;
        for q in 0..g {
            self.r[q].next = b16(last.1[q] as i32);
        }
    }
    fn connect(&mut self) {
        self.done.connect();
        self.r.iter_mut().for_each(|x| x.connect());
    }
    fn hdl(&self) -> Verilog {
        let (g, d) = (self.r.len(), self._s.len());
        let mut v = String::new();
        for s in 1..=d {
            let _ = writeln!(v, "reg done{s};\ninitial done{s} = 1'b0;");
            for q in 0..g {
                let _ = writeln!(v, "reg [15:0] r{s}_{q};\ninitial r{s}_{q} = 16'd0;");
            }
        }
        v += "always @(posedge clock) begin\n    done1 <= done_in;\n";
        for q in 0..g {
            let _ = writeln!(v, "    r1_{q} <= r_in${q};");
        }
        for s in 2..=d {
            let _ = writeln!(v, "    done{s} <= done{};", s - 1);
            for q in 0..g {
                let _ = writeln!(v, "    r{s}_{q} <= r{}_{q};", s - 1);
            }
        }
        let _ = writeln!(v, "end\nalways @(*) begin\n    done = done{d};");
        for q in 0..g {
            let _ = writeln!(v, "    r${q} = r{d}_{q};");
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
