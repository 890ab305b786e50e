//! Double-buffered delta memory of a hidden layer: BP of the junction to its right
//! accumulates `Σ w·δ` per left neuron into buffer `parity` (read-modify-write, one port per
//! lane; the lanes of a clock reach distinct neurons), while BP of the junction to its left
//! reads the previous sample's sums from the other buffer and clears each entry on its last
//! read, so the buffer is zero when its turn to accumulate comes. Reads are combinational,
//! so a sum written at the end of one clock is read back in the next: the sweep-boundary
//! read-modify-write hazard needs no forwarding. With one lane and one reader (digits) the
//! Verilog is two block RAMs read on the falling edge; otherwise a register file.

use crate::fixed::{b32, s32};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct DeltaMemory {
    pub clock: Signal<In, Clock>,
    pub parity: Signal<In, Bit>,
    pub acc_en: Vec<Signal<In, Bit>>,
    pub acc_addr: Vec<Signal<In, Bits<16>>>,
    pub acc_add: Vec<Signal<In, Bits<32>>>,
    pub rd_addr: Vec<Signal<In, Bits<16>>>,
    pub rd_clear: Vec<Signal<In, Bit>>,
    pub rd_data: Vec<Signal<Out, Bits<32>>>,
    _size: usize,
    _mem: Vec<i64>,
}

impl DeltaMemory {
    pub fn new(size: usize, lanes: usize, reads: usize) -> DeltaMemory {
        DeltaMemory {
            clock: Default::default(),
            parity: Default::default(),
            acc_en: crate::sigs(lanes),
            acc_addr: crate::sigs(lanes),
            acc_add: crate::sigs(lanes),
            rd_addr: crate::sigs(reads),
            rd_clear: crate::sigs(reads),
            rd_data: crate::sigs(reads),
            _size: size,
            _mem: vec![0; 2 * size],
        }
    }
}

impl Logic for DeltaMemory {
    fn update(&mut self) {
        let n = self._size;
        let par = self.parity.val() as usize;
        if self.clock.pos_edge() {
            for l in 0..self.acc_en.len() {
                let a = self.acc_addr[l].val().index();
                if self.acc_en[l].val() && a < n {
                    self._mem[par * n + a] += s32(self.acc_add[l].val());
                }
            }
            for r in 0..self.rd_clear.len() {
                let a = self.rd_addr[r].val().index();
                if self.rd_clear[r].val() && a < n {
                    self._mem[(1 - par) * n + a] = 0;
                }
            }
        }
        for r in 0..self.rd_data.len() {
            let a = self.rd_addr[r].val().index();
            self.rd_data[r].next = b32(if a < n {
                self._mem[(1 - par) * n + a]
            } else {
                0
            });
        }
    }
    fn connect(&mut self) {
        for x in self.rd_data.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        if self.acc_en.len() == 1 && self.rd_data.len() == 1 {
            return self.hdl_bram();
        }
        let n = self._size;
        let mut v = format!("reg signed [31:0] mem [0:{}];\ninteger i;\ninitial for (i = 0; i < {}; i = i + 1) mem[i] = 32'sd0;\n", 2 * n - 1, 2 * n);
        v += "always @(*) begin\n";
        for r in 0..self.rd_data.len() {
            let _ = writeln!(v, "    rd_data${r} = (rd_addr${r} < 16'd{n}) ? mem[(parity ? 0 : {n}) + rd_addr${r}] : 32'sd0;");
        }
        v += "end\nalways @(posedge clock) begin\n";
        for l in 0..self.acc_en.len() {
            let _ = writeln!(
                v,
                "    if (acc_en${l} && (acc_addr${l} < 16'd{n})) mem[(parity ? {n} : 0) + acc_addr${l}] <= mem[(parity ? {n} : 0) + acc_addr${l}] + $signed(acc_add${l});"
            );
        }
        for r in 0..self.rd_clear.len() {
            let _ = writeln!(v, "    if (rd_clear${r} && (rd_addr${r} < 16'd{n})) mem[(parity ? 0 : {n}) + rd_addr${r}] <= 32'sd0;");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

impl DeltaMemory {
    /// One accumulating lane and one reader: each buffer is its own RAM with one read and
    /// one write port (accumulate when `parity` names it, read-and-clear otherwise). Reads
    /// are registered on the falling edge, after the rising edge that changed addresses and
    /// contents, so the rising edge sees what a combinational read would give.
    fn hdl_bram(&self) -> Verilog {
        let n = self._size;
        let mut v = String::from("integer i;\n");
        v += &format!(
            "reg signed [31:0] m0 [0:{}];\nreg signed [31:0] m1 [0:{}];\n",
            n - 1,
            n - 1
        );
        v += "reg signed [31:0] q0;\nreg signed [31:0] q1;\n";
        v += "reg [15:0] ra0;\nreg [15:0] ra1;\nreg we0;\nreg we1;\nreg signed [31:0] wd0;\nreg signed [31:0] wd1;\n";
        v += &format!(
            "initial for (i = 0; i < {n}; i = i + 1) begin m0[i] = 32'sd0; m1[i] = 32'sd0; end\n"
        );
        v += &format!(
            "always @(*) begin
    ra0 = parity ? rd_addr$0 : acc_addr$0;
    ra1 = parity ? acc_addr$0 : rd_addr$0;
    we0 = parity ? (rd_clear$0 && (rd_addr$0 < 16'd{n})) : (acc_en$0 && (acc_addr$0 < 16'd{n}));
    we1 = parity ? (acc_en$0 && (acc_addr$0 < 16'd{n})) : (rd_clear$0 && (rd_addr$0 < 16'd{n}));
    wd0 = parity ? 32'sd0 : q0 + $signed(acc_add$0);
    wd1 = parity ? q1 + $signed(acc_add$0) : 32'sd0;
    rd_data$0 = (rd_addr$0 < 16'd{n}) ? (parity ? q0 : q1) : 32'sd0;
end
always @(negedge clock) q0 <= m0[ra0];
always @(negedge clock) q1 <= m1[ra1];
always @(posedge clock) if (we0) m0[ra0] <= wd0;
always @(posedge clock) if (we1) m1[ra1] <= wd1;
"
        );
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};

    #[test]
    fn accumulates_into_one_buffer_reads_and_clears_the_other() {
        let mut m = DeltaMemory::new(4, 2, 1);
        m.connect_all();
        // parity 0: accumulate neuron 1 twice in consecutive clocks (the sweep-boundary case)
        for (a0, v0, a1, v1) in [(1, 5, 2, -3), (3, 7, 1, -20)] {
            m.acc_en[0].next = true;
            m.acc_addr[0].next = Bits::<16>::from(a0 as u64);
            m.acc_add[0].next = b32(v0);
            m.acc_en[1].next = true;
            m.acc_addr[1].next = Bits::<16>::from(a1 as u64);
            m.acc_add[1].next = b32(v1);
            tick(&mut m, |m| &mut m.clock);
        }
        m.acc_en[0].next = false;
        m.acc_en[1].next = false;
        m.parity.next = true;
        for (a, want) in [(0u64, 0i64), (1, -15), (2, -3), (3, 7)] {
            m.rd_addr[0].next = Bits::<16>::from(a);
            settle(&mut m);
            assert_eq!(s32(m.rd_data[0].val()), want, "neuron {a}");
        }
        m.rd_addr[0].next = Bits::<16>::from(1u64);
        m.rd_clear[0].next = true;
        tick(&mut m, |m| &mut m.clock);
        m.rd_clear[0].next = false;
        settle(&mut m);
        assert_eq!(s32(m.rd_data[0].val()), 0, "cleared on its last read");
    }

    #[test]
    fn delta_memory_verilog_is_clean() {
        yosys_check(&DeltaMemory::new(6, 2, 2), "delta_memory");
        yosys_check(&DeltaMemory::new(6, 1, 1), "delta_memory_bram");
    }
}
