//! Rotating-copy memory: the left layer's activations (and σ′) of several samples in flight
//! at once, `copies × size` values. Junction pipelining reads two samples' activations in
//! the same clock (FF of sample `t - j`, UP of sample `t - (2L-1-j)`) while the previous
//! junction writes a third; each port names its copy. Reads are combinational (register
//! file), writes land at the clock edge; out-of-range reads give 0.

use crate::fixed::{b16, s16};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct CopyMemory {
    pub clock: Signal<In, Clock>,
    pub rd_copy: Vec<Signal<In, Bits<16>>>,
    pub rd_addr: Vec<Signal<In, Bits<16>>>,
    pub rd_data: Vec<Signal<Out, Bits<16>>>,
    pub wr_en: Vec<Signal<In, Bit>>,
    pub wr_copy: Vec<Signal<In, Bits<16>>>,
    pub wr_addr: Vec<Signal<In, Bits<16>>>,
    pub wr_data: Vec<Signal<In, Bits<16>>>,
    _copies: usize,
    _size: usize,
    _mem: Vec<i32>,
}

impl CopyMemory {
    pub fn new(copies: usize, size: usize, reads: usize, writes: usize) -> CopyMemory {
        CopyMemory {
            clock: Default::default(),
            rd_copy: crate::sigs(reads),
            rd_addr: crate::sigs(reads),
            rd_data: crate::sigs(reads),
            wr_en: crate::sigs(writes),
            wr_copy: crate::sigs(writes),
            wr_addr: crate::sigs(writes),
            wr_data: crate::sigs(writes),
            _copies: copies,
            _size: size,
            _mem: vec![0; copies * size],
        }
    }

    fn index(&self, copy: usize, addr: usize) -> Option<usize> {
        (copy < self._copies && addr < self._size).then_some(copy * self._size + addr)
    }
}

impl Logic for CopyMemory {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            for w in 0..self.wr_en.len() {
                if self.wr_en[w].val() {
                    if let Some(i) =
                        self.index(self.wr_copy[w].val().index(), self.wr_addr[w].val().index())
                    {
                        self._mem[i] = s16(self.wr_data[w].val());
                    }
                }
            }
        }
        for r in 0..self.rd_data.len() {
            let v = self
                .index(self.rd_copy[r].val().index(), self.rd_addr[r].val().index())
                .map(|i| self._mem[i])
                .unwrap_or(0);
            self.rd_data[r].next = b16(v);
        }
    }
    fn connect(&mut self) {
        for x in self.rd_data.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let (k, n) = (self._copies, self._size);
        let mut v = format!("reg signed [15:0] mem [0:{}];\ninteger i;\ninitial for (i = 0; i < {}; i = i + 1) mem[i] = 16'sd0;\n", k * n - 1, k * n);
        v += "always @(*) begin\n";
        for r in 0..self.rd_data.len() {
            let _ = writeln!(
                v,
                "    rd_data${r} = ((rd_copy${r} < 16'd{k}) && (rd_addr${r} < 16'd{n})) ? mem[rd_copy${r} * {n} + rd_addr${r}] : 16'sd0;"
            );
        }
        v += "end\nalways @(posedge clock) begin\n";
        for w in 0..self.wr_en.len() {
            let _ = writeln!(
                v,
                "    if (wr_en${w} && (wr_copy${w} < 16'd{k}) && (wr_addr${w} < 16'd{n})) mem[wr_copy${w} * {n} + wr_addr${w}] <= wr_data${w};"
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
    fn copies_are_independent_and_ports_name_them() {
        let mut m = CopyMemory::new(3, 4, 2, 2);
        m.connect_all();
        for c in 0..3i32 {
            for a in 0..4i32 {
                // two write ports, two addresses per clock
                let w = (a % 2) as usize;
                m.wr_en[w].next = true;
                m.wr_copy[w].next = b16(c);
                m.wr_addr[w].next = b16(a);
                m.wr_data[w].next = b16(-(10 * c + a));
                if a % 2 == 1 {
                    tick(&mut m, |m| &mut m.clock);
                }
            }
        }
        m.wr_en[0].next = false;
        m.wr_en[1].next = false;
        for c in 0..3i32 {
            for a in 0..4i32 {
                m.rd_copy[0].next = b16(c);
                m.rd_addr[0].next = b16(a);
                m.rd_copy[1].next = b16(2 - c);
                m.rd_addr[1].next = b16(3 - a);
                settle(&mut m);
                assert_eq!(s16(m.rd_data[0].val()), -(10 * c + a));
                assert_eq!(s16(m.rd_data[1].val()), -(10 * (2 - c) + 3 - a));
            }
        }
        m.rd_copy[0].next = b16(3);
        settle(&mut m);
        assert_eq!(s16(m.rd_data[0].val()), 0, "out of range reads 0");
    }

    #[test]
    fn copy_memory_verilog_is_clean() {
        yosys_check(&CopyMemory::new(3, 5, 2, 1), "copy_memory");
    }
}
