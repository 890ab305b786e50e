//! Banked synchronous RAM: the weight memory (`z` banks of `C_j` rows, bank `l` row `c`
//! holding edge `c·z + l`) and the bias memory (one bank per right neuron finished per
//! clock). One shared read address (the next clock's row, prefetched), registered read
//! data, one write port per bank: the shape of a block RAM.
//!
//! A memory of at most 16 rows is built from flip-flops. With `with_registered_address` such
//! a memory registers its read address instead of its read data, and multiplexes the rows
//! after that register: the clock that computes the address (the sequencer's prefetch,
//! behind the controller's `adv`) then ends at a handful of address flip-flops instead of
//! passing a row multiplexer into 16 data flip-flops per bank. The data is the same except
//! when a row is read and written at one edge: the read then sees the new word (write
//! first), which no reader uses (see `hdl`).

use crate::fixed::{b16, s16};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct BankedRam {
    pub clock: Signal<In, Clock>,
    pub raddr: Signal<In, Bits<16>>,
    /// `raddr` is in range (below the depth): the reader says so, from where its address
    /// came, so the range check is not computed behind the address's multiplexer. A read
    /// with it low gives 0; the model asserts it is never high out of range.
    pub rok: Signal<In, Bit>,
    pub rdata: Vec<Signal<Out, Bits<16>>>,
    pub we: Vec<Signal<In, Bit>>,
    pub waddr: Vec<Signal<In, Bits<16>>>,
    pub wdata: Vec<Signal<In, Bits<16>>>,
    _depth: usize,
    _mem: Vec<Vec<i32>>,
    _q: Vec<i32>,
    _addr_reg: bool,
    _ra: usize,
}

impl BankedRam {
    pub fn new(banks: usize, depth: usize) -> BankedRam {
        BankedRam {
            clock: Default::default(),
            raddr: Default::default(),
            rok: Default::default(),
            rdata: crate::sigs(banks),
            we: crate::sigs(banks),
            waddr: crate::sigs(banks),
            wdata: crate::sigs(banks),
            _depth: depth,
            _mem: vec![vec![0; depth]; banks],
            _q: vec![0; banks],
            _addr_reg: false,
            _ra: 0,
        }
    }

    /// Register the read address, not the data, when the memory is built from flip-flops
    /// (at most 16 rows); a deeper memory is a block RAM and keeps its data register.
    pub fn with_registered_address(mut self, on: bool) -> BankedRam {
        self._addr_reg = on && self._depth <= 16;
        self
    }

    /// Whether the read address is registered instead of the data.
    pub fn registered_address(&self) -> bool {
        self._addr_reg
    }
}

impl Logic for BankedRam {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let rok = self.rok.val();
            let ra = self.raddr.val().index();
            assert!(
                !rok || ra < self._depth,
                "a read of row {ra} of {} said to be in range",
                self._depth
            );
            // an out-of-range row reads 0 like a read marked out of range
            let ra = if rok { ra } else { self._depth };
            self._ra = ra;
            for b in 0..self._mem.len() {
                // read first: a write in the same edge is seen one clock later (the
                // registered-address form reads after the writes, below)
                if !self._addr_reg {
                    self._q[b] = self._mem[b].get(ra).copied().unwrap_or(0);
                }
                let wa = self.waddr[b].val().index();
                if self.we[b].val() && wa < self._depth {
                    self._mem[b][wa] = s16(self.wdata[b].val());
                }
            }
        }
        for b in 0..self._q.len() {
            let q = if self._addr_reg {
                // the rows after this edge's writes, at the address of this edge
                self._mem[b].get(self._ra).copied().unwrap_or(0)
            } else {
                self._q[b]
            };
            self.rdata[b].next = b16(q);
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
        // initial blocks of their own per memory (super::zero_init): yosys 0.23 takes time
        // quadratic in the statements of one initial block
        for b in 0..self._mem.len() {
            v += &super::zero_init(&[&format!("mem_{b}")], d, "16'sd0");
            if !self._addr_reg {
                let _ = writeln!(v, "initial rdata${b} = 16'd0;");
            }
        }
        if self._addr_reg {
            // the row index in as many bits as the rows need, and the range check registered
            // with it: after the register only the row multiplexer
            let aw = crate::bits_for(d - 1);
            let _ = writeln!(
                v,
                "reg [{m}:0] ra_q;\nreg ra_ok;\ninitial begin ra_q = {aw}'d0; ra_ok = 1'b1; end",
                m = aw - 1
            );
            v += "always @(*) begin\n";
            for b in 0..self._mem.len() {
                let _ = writeln!(v, "    rdata${b} = ra_ok ? mem_{b}[ra_q] : 16'sd0;");
            }
            v += "end\nalways @(posedge clock) begin\n";
            let _ = writeln!(
                v,
                "    ra_q <= raddr[{m}:0];\n    ra_ok <= rok;",
                m = aw - 1
            );
        } else {
            v += "always @(posedge clock) begin\n";
        }
        for b in 0..self._mem.len() {
            if !self._addr_reg {
                let _ = writeln!(v, "    rdata${b} <= rok ? mem_{b}[raddr] : 16'sd0;");
            }
            let _ = writeln!(
                v,
                "    if (we${b} && (waddr${b} < 16'd{d})) mem_{b}[waddr${b}] <= wdata${b};"
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
            m.rok.next = true;
            settle(&mut m);
            tick(&mut m, |m| &mut m.clock);
            for b in 0..3 {
                assert_eq!(s16(m.rdata[b].val()), 10 * b as i32 + r - 20);
            }
        }
        // same-edge read and write of one row: the read returns the old value
        m.raddr.next = b16(2);
        m.rok.next = true;
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
    fn a_registered_address_reads_the_same_rows_and_writes_first() {
        let mut m = BankedRam::new(2, 5).with_registered_address(true);
        assert!(m.registered_address());
        m.connect_all();
        for r in 0..5 {
            m.we[1].next = true;
            m.waddr[1].next = b16(r);
            m.wdata[1].next = b16(7 * r - 9);
            tick(&mut m, |m| &mut m.clock);
        }
        m.we[1].next = false;
        for r in [3, 0, 4, 4, 1] {
            m.raddr.next = b16(r);
            m.rok.next = true;
            tick(&mut m, |m| &mut m.clock);
            assert_eq!(s16(m.rdata[1].val()), 7 * r - 9);
            assert_eq!(s16(m.rdata[0].val()), 0);
        }
        // out of range reads 0; a same-edge write of the row read is seen at once
        m.raddr.next = b16(5);
        m.rok.next = false;
        tick(&mut m, |m| &mut m.clock);
        assert_eq!(s16(m.rdata[1].val()), 0);
        m.raddr.next = b16(2);
        m.rok.next = true;
        m.we[1].next = true;
        m.waddr[1].next = b16(2);
        m.wdata[1].next = b16(99);
        tick(&mut m, |m| &mut m.clock);
        assert_eq!(s16(m.rdata[1].val()), 99);
        // a block RAM keeps its data register
        assert!(!BankedRam::new(2, 17)
            .with_registered_address(true)
            .registered_address());
    }

    /// Both read forms of the flip-flop memory and the block-RAM form against the model on a
    /// random stream: reads and writes of one row at one edge, several banks written at
    /// once, out-of-range read and write addresses. Every clock's read data must match.
    #[test]
    fn banked_ram_verilog_matches_the_model_in_icarus() {
        for (depth, reg) in [(10usize, false), (10, true), (1, true), (20, false)] {
            let banks = 3;
            let make = || BankedRam::new(banks, depth).with_registered_address(reg);
            let mut r = edgeflow_core::rng::SplitMix64::new(5 + depth as u64 + reg as u64);
            // per clock: raddr, then per bank (we, waddr, wdata)
            let mut st: Vec<(u64, Vec<(bool, u64, i32)>)> = vec![];
            for _ in 0..400 {
                let ra = r.below(depth + 2) as u64;
                let w = (0..banks)
                    .map(|_| {
                        let wa = if r.below(4) == 0 {
                            ra
                        } else {
                            r.below(depth + 2) as u64
                        };
                        (r.below(2) == 0, wa, r.below(65536) as i32 - 32768)
                    })
                    .collect();
                st.push((ra, w));
            }
            let mut m = make();
            m.connect_all();
            let mut want = vec![];
            for (ra, w) in &st {
                m.raddr.next = Bits::<16>::from(*ra);
                m.rok.next = (*ra as usize) < depth;
                for (b, &(we, wa, wd)) in w.iter().enumerate() {
                    m.we[b].next = we;
                    m.waddr[b].next = Bits::<16>::from(wa);
                    m.wdata[b].next = b16(wd);
                }
                tick(&mut m, |m| &mut m.clock);
                want.push(
                    (0..banks)
                        .map(|b| s16(m.rdata[b].val()))
                        .collect::<Vec<_>>(),
                );
            }
            let body = match make().hdl() {
                Verilog::Custom(b) => b,
                _ => unreachable!(),
            };
            let ports: String = (0..banks)
                .map(|b| format!(", output reg [15:0] rdata${b}, input we${b}, input [15:0] waddr${b}, input [15:0] wdata${b}"))
                .collect();
            let mut tb =
                format!("module br(input clock, input [15:0] raddr, input rok{ports});\n{body}\nendmodule\n");
            tb += "module tb;\nreg clock = 0; reg [15:0] ra; reg rok;\n";
            let mut conn = String::from(".clock(clock), .raddr(ra), .rok(rok)");
            for b in 0..banks {
                tb +=
                    &format!("reg we{b}; reg [15:0] wa{b}; reg [15:0] wd{b}; wire [15:0] q{b};\n");
                conn += &format!(
                    ", .rdata${b}(q{b}), .we${b}(we{b}), .waddr${b}(wa{b}), .wdata${b}(wd{b})"
                );
            }
            tb += &format!("br u({conn});\ninitial begin\n");
            for (ra, w) in &st {
                tb += &format!("    ra = {ra}; rok = {};", ((*ra as usize) < depth) as u8);
                for (b, &(we, wa, wd)) in w.iter().enumerate() {
                    tb += &format!(
                        " we{b} = {}; wa{b} = {wa}; wd{b} = {};",
                        we as u8, wd as u16
                    );
                }
                tb += " #1 clock = 1; #1 $display(\"%0d %0d %0d\", $signed(q0), $signed(q1), $signed(q2)); #1 clock = 0; #1;\n";
            }
            tb += "end\nendmodule\n";
            let tag = format!("banked-ram-{depth}-{reg}");
            let Some(out) = crate::testing::icarus_run(&tb, &tag) else {
                return;
            };
            let got = crate::testing::icarus_rows(&out, banks);
            assert_eq!(got.len(), want.len(), "{tag}: {out}");
            for (t, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{tag}, clock {t}");
            }
            assert!(
                want.iter().flatten().filter(|&&x| x != 0).count() > 300,
                "{tag}: the stream reads written rows"
            );
        }
    }

    #[test]
    fn banked_ram_verilog_is_clean() {
        yosys_check(&BankedRam::new(2, 7), "banked_ram");
        yosys_check(
            &BankedRam::new(2, 7).with_registered_address(true),
            "banked_ram_registered_address",
        );
    }
}
