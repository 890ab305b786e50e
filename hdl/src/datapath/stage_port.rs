//! The right boundary of a stage (stage.rs): what the stage's last junction needs of the
//! layer to its right when the next junction sits on another board. On one board that
//! layer's memories live in the next junction; across a link, two of them stay here:
//!
//! - σ′ of the right layer, written by the last junction's FF (sample `t - F`) and read back
//!   by its BP `s` block cycles later (sample `t - F - s`, `s` its staleness): `s + 1`
//!   rotating copies, write copy `ptr`, read copy `ptr + 1`, rotated at every block cycle's
//!   last clock. σ′ never crosses the link.
//! - the back-propagated delta sums of the sample BP handles next, one buffer written from
//!   the link between block cycles (the stage waits for them) and read by BP during the block
//!   cycle. The link carries them saturated to the value format (the next board saturates
//!   them, as BP would); BP reads them sign-extended.
//!
//! Reads are combinational, like the junction memories they replace.

use crate::fixed::{b16, b32, s16};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct RightPort {
    pub clock: Signal<In, Clock>,
    pub last: Signal<In, Bit>,
    pub restart: Signal<In, Bit>,
    // σ′ from the last junction's FF
    pub sp_en: Vec<Signal<In, Bit>>,
    pub sp_addr: Vec<Signal<In, Bits<16>>>,
    pub sp_data: Vec<Signal<In, Bits<16>>>,
    // delta sums from the link
    pub d_we: Signal<In, Bit>,
    pub d_addr: Signal<In, Bits<16>>,
    pub d_data: Signal<In, Bits<16>>,
    // the last junction's BP reads
    pub rd_addr: Vec<Signal<In, Bits<16>>>,
    pub rd_acc: Vec<Signal<Out, Bits<32>>>,
    pub rd_sp: Vec<Signal<Out, Bits<16>>>,
    _size: usize,
    _copies: usize,
    _start: usize,
    _ptr: usize,
    _sp: Vec<i32>,
    _d: Vec<i64>,
}

impl RightPort {
    /// `size` right neurons, `ports` of them per clock, the last junction's FF offset `ff`
    /// and staleness `stale` (block cycles from its FF to its BP of one sample).
    pub fn new(size: usize, ports: usize, ff: usize, stale: usize) -> RightPort {
        let copies = stale + 1;
        let start = (-(ff as i64)).rem_euclid(copies as i64) as usize;
        RightPort {
            clock: Default::default(),
            last: Default::default(),
            restart: Default::default(),
            sp_en: crate::sigs(ports),
            sp_addr: crate::sigs(ports),
            sp_data: crate::sigs(ports),
            d_we: Default::default(),
            d_addr: Default::default(),
            d_data: Default::default(),
            rd_addr: crate::sigs(ports),
            rd_acc: crate::sigs(ports),
            rd_sp: crate::sigs(ports),
            _size: size,
            _copies: copies,
            _start: start,
            _ptr: start,
            _sp: vec![0; copies * size],
            _d: vec![0; size],
        }
    }
}

impl Logic for RightPort {
    fn update(&mut self) {
        let (n, k) = (self._size, self._copies);
        if self.clock.pos_edge() {
            for q in 0..self.sp_en.len() {
                let a = self.sp_addr[q].val().index();
                if self.sp_en[q].val() && a < n {
                    self._sp[self._ptr * n + a] = s16(self.sp_data[q].val());
                }
            }
            let a = self.d_addr.val().index();
            if self.d_we.val() && a < n {
                self._d[a] = s16(self.d_data.val()) as i64;
            }
            if self.restart.val() {
                self._ptr = self._start;
            } else if self.last.val() {
                self._ptr = (self._ptr + 1) % k;
            }
        }
        let rp = (self._ptr + 1) % k;
        for q in 0..self.rd_addr.len() {
            let a = self.rd_addr[q].val().index();
            let (acc, sp) = if a < n {
                (self._d[a], self._sp[rp * n + a])
            } else {
                (0, 0)
            };
            self.rd_acc[q].next = b32(acc);
            self.rd_sp[q].next = b16(sp);
        }
    }

    fn connect(&mut self) {
        self.rd_acc.iter_mut().for_each(|x| x.connect());
        self.rd_sp.iter_mut().for_each(|x| x.connect());
    }

    fn hdl(&self) -> Verilog {
        let (n, k, s0) = (self._size, self._copies, self._start);
        let mut v = format!(
            "reg [15:0] ptr;
reg [15:0] rp;
reg [15:0] sp_mem [0:{spm}];
reg signed [15:0] d_mem [0:{dm}];
integer i;
initial begin
    ptr = 16'd{s0};
    for (i = 0; i < {spn}; i = i + 1) sp_mem[i] = 16'd0;
    for (i = 0; i < {n}; i = i + 1) d_mem[i] = 16'sd0;
end
always @(*) begin
    rp = (ptr + 16'd1 == 16'd{k}) ? 16'd0 : ptr + 16'd1;
",
            spm = k * n - 1,
            spn = k * n,
            dm = n - 1,
        );
        for q in 0..self.rd_addr.len() {
            let _ = writeln!(
                v,
                "    rd_acc${q} = (rd_addr${q} < 16'd{n}) ? {{{{16{{d_mem[rd_addr${q}][15]}}}}, d_mem[rd_addr${q}]}} : 32'd0;
    rd_sp${q} = (rd_addr${q} < 16'd{n}) ? sp_mem[rp * 16'd{n} + rd_addr${q}] : 16'd0;"
            );
        }
        let _ = writeln!(
            v,
            "end
always @(posedge clock) begin
    if (restart) ptr <= 16'd{s0};
    else if (last) ptr <= (ptr + 16'd1 == 16'd{k}) ? 16'd0 : ptr + 16'd1;
    if (d_we && (d_addr < 16'd{n})) d_mem[d_addr] <= d_data;"
        );
        for q in 0..self.sp_en.len() {
            let _ = writeln!(
                v,
                "    if (sp_en${q} && (sp_addr${q} < 16'd{n})) sp_mem[ptr * 16'd{n} + sp_addr${q}] <= sp_data${q};"
            );
        }
        v += "end\n";
        Verilog::Custom(crate::below::with_guards(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::s32;
    use crate::testing::{settle, tick, yosys_check};

    /// σ′ written in block cycle `t` comes back `stale` block cycles later, sums written
    /// between block cycles are read as written, out-of-range addresses read 0.
    #[test]
    fn sigma_prime_comes_back_after_the_staleness_and_sums_as_written() {
        let (n, g, ff, stale) = (6, 2, 3, 4);
        let mut p = RightPort::new(n, g, ff, stale);
        p.connect_all();
        p.restart.next = true;
        tick(&mut p, |p| &mut p.clock);
        p.restart.next = false;
        let sp = |t: usize, a: usize| (t * 10 + a) as i32 - 40;
        for t in 0..12usize {
            // between block cycles: the link's sums of this block cycle
            for a in 0..n {
                p.d_we.next = true;
                p.d_addr.next = b16(a as i32);
                p.d_data.next = b16(-100 * (t as i32 + 1) + a as i32);
                tick(&mut p, |p| &mut p.clock);
            }
            p.d_we.next = false;
            // the block cycle: rows of g neurons, FF writes σ′ of sample t - ff
            let rows = n / g;
            for r in 0..rows {
                for q in 0..g {
                    let a = r * g + q;
                    p.sp_en[q].next = true;
                    p.sp_addr[q].next = b16(a as i32);
                    p.sp_data[q].next = b16(sp(t, a));
                    p.rd_addr[q].next = b16(a as i32);
                }
                settle(&mut p);
                for q in 0..g {
                    let a = r * g + q;
                    assert_eq!(s32(p.rd_acc[q].val()), -100 * (t as i64 + 1) + a as i64);
                    if t >= stale {
                        assert_eq!(s16(p.rd_sp[q].val()), sp(t - stale, a), "t={t} a={a}");
                    }
                }
                p.last.next = r + 1 == rows;
                tick(&mut p, |p| &mut p.clock);
            }
            p.last.next = false;
            for q in 0..g {
                p.sp_en[q].next = false;
            }
        }
        p.rd_addr[0].next = b16(n as i32);
        settle(&mut p);
        assert_eq!(s32(p.rd_acc[0].val()), 0);
        assert_eq!(s16(p.rd_sp[0].val()), 0);
    }

    #[test]
    fn right_port_verilog_is_clean() {
        yosys_check(&RightPort::new(6, 2, 3, 4), "right_port");
    }
}
