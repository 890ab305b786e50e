//! Banked synchronous RAM: the weight memory (`z` banks of `C_j` rows, bank `l` row `c`
//! holding edge `c·z + l`) and the bias memory (one bank per right neuron finished per
//! clock). One shared read address (the next clock's row, prefetched), registered read
//! data, one write port per bank: the shape of a block RAM.

use crate::fixed::{b16, s16};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct BankedRam {
    pub clock: Signal<In, Clock>,
    pub raddr: Signal<In, Bits<16>>,
    pub rdata: Vec<Signal<Out, Bits<16>>>,
    pub we: Vec<Signal<In, Bit>>,
    pub waddr: Vec<Signal<In, Bits<16>>>,
    pub wdata: Vec<Signal<In, Bits<16>>>,
    _depth: usize,
    _mem: Vec<Vec<i32>>,
    _q: Vec<i32>,
}

impl BankedRam {
    pub fn new(banks: usize, depth: usize) -> BankedRam {
        BankedRam {
            clock: Default::default(),
            raddr: Default::default(),
            rdata: crate::sigs(banks),
            we: crate::sigs(banks),
            waddr: crate::sigs(banks),
            wdata: crate::sigs(banks),
            _depth: depth,
            _mem: vec![vec![0; depth]; banks],
            _q: vec![0; banks],
        }
    }
}

impl Logic for BankedRam {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let ra = self.raddr.val().index();
            for b in 0..self._mem.len() {
                // read first: a write in the same edge is seen one clock later
                self._q[b] = self._mem[b].get(ra).copied().unwrap_or(0);
                let wa = self.waddr[b].val().index();
                if self.we[b].val() && wa < self._depth {
                    self._mem[b][wa] = s16(self.wdata[b].val());
                }
            }
        }
        for b in 0..self._q.len() {
            self.rdata[b].next = b16(self._q[b]);
        }
    }
    fn connect(&mut self) {
        for x in self.rdata.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let d = self._depth;
        let mut v = String::from("integer i;\n");
        for b in 0..self._mem.len() {
            // a handful of rows (biases of a small layer) cost fewer cells as flip-flops than
            // a block RAM, which the interleaver ROMs need more
            // A read and a write of one row in the same clock happen only where the read's
            // data is not used (a host load; the idle clocks of a one-clock pass, re-read
            // before use), so yosys need not emulate read-before-write around a block RAM:
            // that emulation cost 43 flip-flops, 7 LUTs and a bypass multiplexer in the read
            // path of every bank.
            let style = if d <= 16 {
                "(* ram_style = \"logic\" *) "
            } else {
                "(* no_rw_check *) "
            };
            let _ = writeln!(v, "{style}reg signed [15:0] mem_{b} [0:{}];", d - 1);
        }
        // One initial block per memory: yosys 0.23 takes time quadratic in the statements
        // of one initial block.
        for b in 0..self._mem.len() {
            let _ = writeln!(
                v,
                "initial for (i = 0; i < {d}; i = i + 1) mem_{b}[i] = 16'sd0;\ninitial rdata${b} = 16'd0;"
            );
        }
        v += "always @(posedge clock) begin\n";
        for b in 0..self._mem.len() {
            let _ = writeln!(
                v,
                "    rdata${b} <= (raddr < 16'd{d}) ? mem_{b}[raddr] : 16'sd0;\n    if (we${b} && (waddr${b} < 16'd{d})) mem_{b}[waddr${b}] <= wdata${b};"
            );
        }
        v += "end\n";
        Verilog::Custom(crate::below::with_guards(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};

    #[test]
    fn writes_land_and_reads_are_registered_and_read_before_write() {
        let mut m = BankedRam::new(3, 5);
        m.connect_all();
        // write row r of bank b = 10·b + r
        for r in 0..5 {
            for b in 0..3 {
                m.we[b].next = true;
                m.waddr[b].next = b16(r);
                m.wdata[b].next = b16(10 * b as i32 + r - 20);
            }
            tick(&mut m, |m| &mut m.clock);
        }
        for b in 0..3 {
            m.we[b].next = false;
        }
        for r in 0..5 {
            m.raddr.next = b16(r);
            settle(&mut m);
            tick(&mut m, |m| &mut m.clock);
            for b in 0..3 {
                assert_eq!(s16(m.rdata[b].val()), 10 * b as i32 + r - 20);
            }
        }
        // same-edge read and write of one row: the read returns the old value
        m.raddr.next = b16(2);
        m.we[1].next = true;
        m.waddr[1].next = b16(2);
        m.wdata[1].next = b16(99);
        settle(&mut m);
        tick(&mut m, |m| &mut m.clock);
        assert_eq!(s16(m.rdata[1].val()), 12 - 20);
        m.we[1].next = false;
        tick(&mut m, |m| &mut m.clock);
        assert_eq!(s16(m.rdata[1].val()), 99);
    }

    #[test]
    fn banked_ram_verilog_is_clean() {
        yosys_check(&BankedRam::new(2, 7), "banked_ram");
    }
}
