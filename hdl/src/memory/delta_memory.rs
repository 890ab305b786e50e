//! Double-buffered delta memory of a hidden layer: BP of the junction to its right
//! accumulates `Σ w·δ` per left neuron into buffer `parity` (read-modify-write, one port per
//! lane; the lanes of a clock reach distinct neurons), while BP of the junction to its left
//! reads the previous sample's sums from the other buffer and clears each entry on its last
//! read, so the buffer is zero when its turn to accumulate comes. Reads are combinational,
//! so a sum written at the end of one clock is read back in the next: the sweep-boundary
//! read-modify-write hazard needs no forwarding. With one lane and one reader (digits) the
//! Verilog is two block RAMs read on the falling edge; otherwise a register file.
//!
//! With registered reads (`with_registered_reads`, one lane and one reader) both RAMs are
//! read on the rising edge instead, so the read-add-write gets a whole clock, not half: the
//! reader's sum comes a clock after its address (it stands in for the reader's own read
//! register), and the accumulating lane's entry is read a clock ahead at `acc_next`, the
//! address its `acc_addr` register takes next; the sum written in the clock before is
//! forwarded when the lane adds to the same neuron twice in a row. A clear is written a
//! clock after its read (a read and a write of one entry at one edge give no defined data
//! in a block RAM), and a read of the entry being cleared gives 0.

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
    /// The address `acc_addr` holds in the next clock (read by the registered-read Verilog).
    pub acc_next: Vec<Signal<In, Bits<16>>>,
    pub rd_addr: Vec<Signal<In, Bits<16>>>,
    pub rd_clear: Vec<Signal<In, Bit>>,
    pub rd_data: Vec<Signal<Out, Bits<32>>>,
    _size: usize,
    _mem: Vec<i64>,
    /// `(z, banks[l])`: lane `l` only ever accumulates into neurons `n` with `n mod z` in
    /// `banks[l]` (see [`DeltaMemory::with_lane_banks`]).
    _lane_banks: Option<(usize, Vec<Vec<usize>>)>,
    /// Bits an entry keeps in the Verilog (32 unless the sums are known narrower).
    _bits: u32,
    /// Reads on the clock edge: `rd_data` is the sum at the previous clock's `rd_addr`.
    _registered: bool,
    _rd_q: Vec<i64>,
    /// The parity of the previous clock: an accumulate right after a buffer swap would have
    /// been read ahead from the wrong buffer, and a clear read just before it would land in
    /// the wrong buffer.
    _last_parity: bool,
    _clear_pending: bool,
}

impl DeltaMemory {
    pub fn new(size: usize, lanes: usize, reads: usize) -> DeltaMemory {
        DeltaMemory {
            clock: Default::default(),
            parity: Default::default(),
            acc_en: crate::sigs(lanes),
            acc_addr: crate::sigs(lanes),
            acc_add: crate::sigs(lanes),
            acc_next: crate::sigs(lanes),
            rd_addr: crate::sigs(reads),
            rd_clear: crate::sigs(reads),
            rd_data: crate::sigs(reads),
            _size: size,
            _mem: vec![0; 2 * size],
            _lane_banks: None,
            _bits: 32,
            _registered: false,
            _rd_q: vec![0; reads],
            _last_parity: false,
            _clear_pending: false,
        }
    }

    /// Read on the clock edge (one lane and one reader only): `rd_data` follows `rd_addr` a
    /// clock later, and `acc_next` must give the address `acc_addr` takes in the next clock.
    pub fn with_registered_reads(mut self, on: bool) -> DeltaMemory {
        assert!(
            !on || (self.acc_en.len() == 1 && self.rd_data.len() == 1),
            "registered delta-sum reads need one lane and one reader"
        );
        self._registered = on;
        self
    }

    /// A neuron's sum has at most `terms` contributions of `width`-bit format values, so
    /// `width + bits(terms)` bits hold it exactly: the lane-bank Verilog keeps that many per
    /// entry (one spare bit kept) and sign-extends on read.
    pub fn with_sum_terms(mut self, width: u32, terms: usize) -> DeltaMemory {
        let bits = usize::BITS - terms.leading_zeros();
        self._bits = (width + 1 + bits).min(32);
        self
    }

    /// Declare that lane `l` only accumulates into neurons whose bank (`n mod z`) is in
    /// `banks[l]`, as a junction's BP lanes do without dither (one bank each). The Verilog
    /// then gives each lane one adder on a read of its own banks' entries and lets each entry
    /// take only the lanes that can reach it, instead of a memory with a read-modify-write
    /// port per lane reaching every entry (dey-mnist junction 1: 32 lanes, 128 entries). The
    /// behavioural model is unchanged; a lane outside its declared banks is the caller's
    /// error and would be dropped in the Verilog.
    pub fn with_lane_banks(mut self, z: usize, banks: Vec<Vec<usize>>) -> DeltaMemory {
        assert!(z > 0 && banks.len() == self.acc_en.len());
        self._lane_banks = Some((z, banks));
        self
    }
}

impl Logic for DeltaMemory {
    fn update(&mut self) {
        let n = self._size;
        let par = self.parity.val() as usize;
        if self.clock.pos_edge() {
            if self._registered {
                for r in 0..self.rd_data.len() {
                    let a = self.rd_addr[r].val().index();
                    self._rd_q[r] = if a < n {
                        self._mem[(1 - par) * n + a]
                    } else {
                        0
                    };
                }
                let swapped = (par == 1) != self._last_parity;
                assert!(
                    !(swapped && self.acc_en.iter().any(|e| e.val())),
                    "delta memory: an accumulate in the clock after a buffer swap, which the \
                     registered-read Verilog would have read ahead from the other buffer"
                );
                assert!(
                    !(swapped && self._clear_pending),
                    "delta memory: a clear in the clock before a buffer swap, which the \
                     registered-read Verilog would write after the swap"
                );
                self._last_parity = par == 1;
                self._clear_pending = self.rd_clear.iter().any(|c| c.val());
            }
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
            if self._registered {
                self.rd_data[r].next = b32(self._rd_q[r]);
                continue;
            }
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
        if self._registered {
            return self.hdl_bram_registered();
        }
        if self.acc_en.len() == 1 && self.rd_data.len() == 1 {
            return self.hdl_bram();
        }
        if let Some((z, banks)) = &self._lane_banks {
            return Verilog::Custom(crate::below::with_guards(&self.hdl_lane_banks(*z, banks)));
        }
        let n = self._size;
        let mut v = format!("reg signed [31:0] mem [0:{}];\ninteger i;\n", 2 * n - 1);
        v += &super::zero_init(&["mem"], 2 * n, "32'sd0");
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
        Verilog::Custom(crate::below::with_guards(&v))
    }
}

impl DeltaMemory {
    /// A register per entry (`m_{b·size + n}`, buffer `b`, neuron `n`); lane `l` adds to the
    /// entry it addresses in the accumulating buffer, read through a mux over the neurons of
    /// its own banks only, and an entry is written only by the lanes that can reach it (at
    /// most one per clock: the lanes of a clock reach distinct neurons) or cleared by a
    /// reader of the other buffer.
    fn hdl_lane_banks(&self, z: usize, banks: &[Vec<usize>]) -> String {
        let n = self._size;
        let reach = |l: usize, x: usize| banks[l].contains(&(x % z));
        let bm = self._bits - 1;
        let mut v = String::new();
        for e in 0..2 * n {
            let _ = writeln!(v, "reg signed [{bm}:0] m_{e};\ninitial m_{e} = 0;");
        }
        for l in 0..banks.len() {
            let _ = writeln!(
                v,
                "reg signed [{bm}:0] cur_{l};\nreg signed [{bm}:0] sum_{l};"
            );
        }
        v += "always @(*) begin\n";
        for l in 0..banks.len() {
            let _ = writeln!(v, "    case (acc_addr${l})");
            for x in (0..n).filter(|&x| reach(l, x)) {
                let _ = writeln!(
                    v,
                    "        16'd{x}: cur_{l} = parity ? m_{} : m_{x};",
                    n + x
                );
            }
            let _ = writeln!(
                v,
                "        default: cur_{l} = 0;\n    endcase\n    sum_{l} = cur_{l} + $signed(acc_add${l});"
            );
        }
        for r in 0..self.rd_data.len() {
            let _ = writeln!(v, "    case (rd_addr${r})");
            for x in 0..n {
                let _ = writeln!(
                    v,
                    "        16'd{x}: rd_data${r} = parity ? m_{x} : m_{};",
                    n + x
                );
            }
            let _ = writeln!(v, "        default: rd_data${r} = 32'sd0;\n    endcase");
        }
        v += "end\nalways @(posedge clock) begin\n";
        for e in 0..2 * n {
            // buffer 1 accumulates when parity is set, buffer 0 otherwise
            let (b, x) = (e / n, e % n);
            let acc = if b == 1 { "parity" } else { "!parity" };
            let rd = if b == 1 { "!parity" } else { "parity" };
            for l in (0..banks.len()).filter(|&l| reach(l, x)) {
                let _ = writeln!(
                    v,
                    "    if ({acc} && acc_en${l} && (acc_addr${l} == 16'd{x})) m_{e} <= sum_{l};"
                );
            }
            for r in 0..self.rd_clear.len() {
                let _ = writeln!(
                    v,
                    "    if ({rd} && rd_clear${r} && (rd_addr${r} == 16'd{x})) m_{e} <= 0;"
                );
            }
        }
        v += "end\n";
        v
    }

    /// Registered reads: both RAMs read on the rising edge. RAM `b` is the accumulating
    /// buffer in a clock where `parity == b`; its read port then reads `acc_next` for the
    /// next clock, otherwise `rd_addr` for the reader's next clock. The RAMs never need a
    /// read and a write of one entry at one edge to agree (`no_rw_check`, no emulation
    /// logic): the lane's forwarding and the reader's `rd_zero` stand in for those reads.
    fn hdl_bram_registered(&self) -> Verilog {
        let n = self._size;
        let (b, bm) = (self._bits, self._bits - 1);
        // sign-extend the kept bits to the 32-bit port
        let ext = if b == 32 {
            "rq".to_string()
        } else {
            format!("{{{{{}{{rq[{bm}]}}}}, rq}}", 32 - b)
        };
        let v = format!(
            "integer i;
(* no_rw_check *)
reg signed [{bm}:0] m0 [0:{nm}];
(* no_rw_check *)
reg signed [{bm}:0] m1 [0:{nm}];
reg signed [{bm}:0] q0;
reg signed [{bm}:0] q1;
initial begin
    for (i = 0; i < {n}; i = i + 1) begin m0[i] = {b}'sd0; m1[i] = {b}'sd0; end
    q0 = {b}'sd0; q1 = {b}'sd0;
end
// the reader's buffer and range of the clock its address was given in
reg rd_par;
reg rd_ok;
// the lane added to the entry it adds to now in the clock before: take that sum, not the read
reg fwd;
reg signed [{bm}:0] sum_q;
// a clear is written a clock after its read; the reader's read of that entry then gives 0
reg clr_q;
reg [15:0] clr_a;
reg rd_zero;
initial begin rd_par = 1'b0; rd_ok = 1'b0; fwd = 1'b0; sum_q = {b}'sd0; clr_q = 1'b0; clr_a = 16'd0; rd_zero = 1'b0; end
reg [15:0] ra0;
reg [15:0] ra1;
reg [15:0] wa0;
reg [15:0] wa1;
reg we0;
reg we1;
reg signed [{bm}:0] base;
reg signed [{bm}:0] sum;
reg signed [{bm}:0] rq;
always @(*) begin
    ra0 = parity ? rd_addr$0 : acc_next$0;
    ra1 = parity ? acc_next$0 : rd_addr$0;
    wa0 = parity ? clr_a : acc_addr$0;
    wa1 = parity ? acc_addr$0 : clr_a;
    base = fwd ? sum_q : (parity ? q1 : q0);
    sum = base + $signed(acc_add$0[{bm}:0]);
    we0 = parity ? clr_q : (acc_en$0 && (acc_addr$0 < 16'd{n}));
    we1 = parity ? (acc_en$0 && (acc_addr$0 < 16'd{n})) : clr_q;
    rq = rd_par ? q0 : q1;
    rd_data$0 = (rd_ok && !rd_zero) ? {ext} : 32'sd0;
end
always @(posedge clock) q0 <= m0[ra0];
always @(posedge clock) q1 <= m1[ra1];
always @(posedge clock) if (we0) m0[wa0] <= parity ? {b}'sd0 : sum;
always @(posedge clock) if (we1) m1[wa1] <= parity ? sum : {b}'sd0;
always @(posedge clock) begin
    rd_par <= parity;
    rd_ok <= rd_addr$0 < 16'd{n};
    fwd <= acc_en$0 && (acc_addr$0 == acc_next$0);
    sum_q <= sum;
    clr_q <= rd_clear$0 && (rd_addr$0 < 16'd{n});
    clr_a <= rd_addr$0;
    rd_zero <= clr_q && (clr_a == rd_addr$0);
end
",
            nm = n - 1,
        );
        Verilog::Custom(crate::below::with_guards(&v))
    }

    /// One accumulating lane and one reader: each buffer is its own RAM with one read and
    /// one write port (accumulate when `parity` names it, read-and-clear otherwise). Reads
    /// are registered on the falling edge, after the rising edge that changed addresses and
    /// contents, so the rising edge sees what a combinational read would give.
    fn hdl_bram(&self) -> Verilog {
        let n = self._size;
        // an entry keeps the sum's exact width (`with_sum_terms`) and is sign-extended on
        // read: the accumulate's carry chain is no longer than the sum
        let bm = self._bits - 1;
        let mut v = String::from("integer i;\n");
        v += &format!(
            "reg signed [{bm}:0] m0 [0:{}];\nreg signed [{bm}:0] m1 [0:{}];\n",
            n - 1,
            n - 1
        );
        v += &format!("reg signed [{bm}:0] q0;\nreg signed [{bm}:0] q1;\n");
        v += &format!("reg [15:0] ra0;\nreg [15:0] ra1;\nreg we0;\nreg we1;\nreg signed [{bm}:0] wd0;\nreg signed [{bm}:0] wd1;\n");
        v += &super::zero_init(&["m0", "m1"], n, "0");
        v += &format!(
            "always @(*) begin
    ra0 = parity ? rd_addr$0 : acc_addr$0;
    ra1 = parity ? acc_addr$0 : rd_addr$0;
    we0 = parity ? (rd_clear$0 && (rd_addr$0 < 16'd{n})) : (acc_en$0 && (acc_addr$0 < 16'd{n}));
    we1 = parity ? (acc_en$0 && (acc_addr$0 < 16'd{n})) : (rd_clear$0 && (rd_addr$0 < 16'd{n}));
    wd0 = parity ? 0 : q0 + $signed(acc_add$0[{bm}:0]);
    wd1 = parity ? q1 + $signed(acc_add$0[{bm}:0]) : 0;
    rd_data$0 = (rd_addr$0 < 16'd{n}) ? (parity ? q0 : q1) : 32'sd0;
end
always @(negedge clock) q0 <= m0[ra0];
always @(negedge clock) q1 <= m1[ra1];
always @(posedge clock) if (we0) m0[ra0] <= wd0;
always @(posedge clock) if (we1) m1[ra1] <= wd1;
"
        );
        Verilog::Custom(crate::below::with_guards(&v))
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

    /// The block-RAM Verilog (falling-edge and registered reads) against the model on a
    /// random stream that keeps the contract: `acc_next` is the next clock's `acc_addr`, no
    /// accumulate comes in the clock after a buffer swap and no clear in the clock before. Repeated neurons (forwarding),
    /// clears read at their own edge and out-of-range addresses all occur. Every clock's
    /// `rd_data` must match.
    #[test]
    fn block_ram_verilog_matches_the_model_in_icarus() {
        let n = 6u64;
        for registered in [false, true] {
            let make = || {
                DeltaMemory::new(n as usize, 1, 1)
                    .with_sum_terms(16, 1000)
                    .with_registered_reads(registered)
            };
            let mut r = edgeflow_core::rng::SplitMix64::new(11 + registered as u64);
            // per clock: parity, acc_en, acc_addr, acc_add, rd_addr, rd_clear
            let mut st: Vec<(bool, bool, u64, i64, u64, bool)> = vec![];
            let mut par = false;
            for t in 0..600 {
                let swap = t % 37 == 36;
                let before_swap = t % 37 == 35;
                par ^= swap;
                let addr = if r.below(4) == 0 {
                    st.last().map_or(0, |x| x.2)
                } else {
                    r.below(n as usize + 1) as u64
                };
                st.push((
                    par,
                    !swap && r.below(3) != 0,
                    addr,
                    r.below(6001) as i64 - 3000,
                    r.below(n as usize + 1) as u64,
                    !before_swap && r.below(3) == 0,
                ));
            }
            let mut m = make();
            m.connect_all();
            let mut want = vec![];
            for t in 0..st.len() {
                let (par, en, addr, add, ra, clr) = st[t];
                m.parity.next = par;
                m.acc_en[0].next = en;
                m.acc_addr[0].next = Bits::<16>::from(addr);
                m.acc_next[0].next = Bits::<16>::from(st.get(t + 1).map_or(0, |x| x.2));
                m.acc_add[0].next = b32(add);
                m.rd_addr[0].next = Bits::<16>::from(ra);
                m.rd_clear[0].next = clr;
                settle(&mut m);
                want.push(s32(m.rd_data[0].val()));
                tick(&mut m, |m| &mut m.clock);
            }
            let body = match make().hdl() {
                Verilog::Custom(b) => b,
                _ => unreachable!(),
            };
            let mut tb = format!(
                "module dm(input clock, input parity, input acc_en$0, input [15:0] acc_addr$0, input [31:0] acc_add$0, input [15:0] acc_next$0, input [15:0] rd_addr$0, input rd_clear$0, output reg [31:0] rd_data$0);\n{body}\nendmodule\n"
            );
            // a clock is: inputs, falling edge (the plain RAMs read), output, rising edge
            tb += "module tb;\nreg clock = 1; reg parity; reg en; reg [15:0] addr; reg [31:0] add; reg [15:0] nxt; reg [15:0] ra; reg clr; wire [31:0] rd;\n";
            tb += "dm u(.clock(clock), .parity(parity), .acc_en$0(en), .acc_addr$0(addr), .acc_add$0(add), .acc_next$0(nxt), .rd_addr$0(ra), .rd_clear$0(clr), .rd_data$0(rd));\ninitial begin\n";
            for t in 0..st.len() {
                let (par, en, addr, add, ra, clr) = st[t];
                let nxt = st.get(t + 1).map_or(0, |x| x.2);
                tb += &format!(
                    "    parity = {}; en = {}; addr = {addr}; add = {}; nxt = {nxt}; ra = {ra}; clr = {}; #2 clock = 0; #2 $display(\"%0d\", $signed(rd)); #1 clock = 1; #1;\n",
                    par as u8, en as u8, add as u32, clr as u8
                );
            }
            tb += "end\nendmodule\n";
            let Some(out) = crate::testing::icarus_run(&tb, &format!("delta-memory-{registered}"))
            else {
                return;
            };
            let got: Vec<i64> = out.lines().filter_map(|l| l.trim().parse().ok()).collect();
            assert_eq!(got.len(), want.len(), "registered {registered}: {out}");
            for (t, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "registered {registered}, clock {t}");
            }
            assert!(
                want.iter().filter(|&&w| w != 0).count() > 100,
                "the stream reads sums"
            );
        }
    }

    #[test]
    fn delta_memory_verilog_is_clean() {
        yosys_check(&DeltaMemory::new(6, 2, 2), "delta_memory");
        yosys_check(&DeltaMemory::new(6, 1, 1), "delta_memory_bram");
        yosys_check(
            &DeltaMemory::new(6, 1, 1)
                .with_sum_terms(16, 2)
                .with_registered_reads(true),
            "delta_memory_bram_registered",
        );
        yosys_check(
            &DeltaMemory::new(8, 2, 2)
                .with_lane_banks(4, vec![vec![1], vec![2, 3]])
                .with_sum_terms(10, 4),
            "delta_memory_lane_banks",
        );
    }
}
