//! Rotating-copy memory: the left layer's activations (and σ′) of several samples in flight
//! at once, `copies × size` values. Junction pipelining reads two samples' activations in
//! the same clock (FF of sample `t - j`, UP of sample `t - (2L-1-j)`) while the previous
//! junction writes a third; each port names its copy. Reads are combinational (register
//! file) in this behavioural model, writes land at the clock edge; out-of-range reads give 0.
//! The Verilog is block RAM: a bank per write port, replicated per read port, read on the
//! falling edge (see `hdl`), which gives the same value at every rising edge.

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
    /// `(z, banks[r])`: read port `r` only ever addresses neurons `n` with `n mod z` in
    /// `banks[r]` (see [`CopyMemory::with_read_banks`]).
    _read_banks: Option<(usize, Vec<Vec<usize>>)>,
    /// Bits a word keeps in the read-bank Verilog: the values' format width (16 unless set).
    _width: u32,
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
            _read_banks: None,
            _width: 16,
        }
    }

    /// Declare that read port `r` only addresses neurons whose bank (`n mod z`) is in
    /// `banks[r]`, as a junction's lanes do without dither (one bank each). With one write
    /// port (or `W` dividing `z`, bank `b` written by port `b mod W`) the Verilog then keeps
    /// in replica `r` only those banks: `copies·size/z·|banks[r]|`
    /// words instead of `copies·size` (dey-mnist junction 1: 48 instead of 6144 words in
    /// each of 256 replicas). The behavioural model is unchanged; a read outside the declared
    /// banks is the caller's error and would read another neuron in the Verilog.
    pub fn with_read_banks(mut self, z: usize, banks: Vec<Vec<usize>>) -> CopyMemory {
        assert!(z > 0 && self._size % z == 0 && banks.len() == self.rd_data.len());
        self._read_banks = Some((z, banks));
        self
    }

    /// The values are `width`-bit format values held sign-extended (`edgeflow_core::fixed`):
    /// the read-bank Verilog stores `width` bits a word and sign-extends on read (a 10-bit
    /// format needs 10/16 of the distributed RAM). The behavioural model is unchanged.
    pub fn with_width(mut self, width: u32) -> CopyMemory {
        assert!((1..=16).contains(&width));
        self._width = width;
        self
    }

    /// The memory's Verilog text, for tests that look at its shape.
    #[cfg(test)]
    pub fn verilog_text(&self) -> String {
        match self.hdl() {
            Verilog::Custom(v) => v,
            _ => unreachable!("the memory writes its own Verilog"),
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
                    // the Verilog keeps one RAM bank per write port
                    assert!(self.wr_addr[w].val().index() % self.wr_en.len() == w);
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
        // Block-RAM shape: one bank per write port (port `w` only ever writes neurons
        // `≡ w (mod W)`, the rows the previous junction finishes together), each bank
        // replicated once per read port, so every RAM has one write and one read port. The
        // read is registered on the falling edge: addresses and contents only change at the
        // rising edge, so by the next rising edge the data equals a combinational read.
        let (k, n) = (self._copies, self._size);
        let (nw, nr) = (self.wr_en.len().max(1), self.rd_data.len());
        let nb = n.div_ceil(nw);
        let depth = k * nb;
        let aw = addr_bits(n);
        let idx = |c: String, a: String| {
            if nw == 1 {
                format!("{} + {a}", times(&c, nb))
            } else {
                format!("{} + {}", times(&c, nb), narrow(&a, aw, "/", nw))
            }
        };
        if let Some((z, banks)) = &self._read_banks {
            // with every bank on every port (dither) the plain replicas are the same thing;
            // with W write ports dividing z, bank b is written by port b mod W alone
            if *z % nw == 0
                && banks.iter().any(|b| {
                    let mut b = b.clone();
                    b.sort_unstable();
                    b.dedup();
                    b.len() < *z
                })
            {
                return Verilog::Custom(crate::below::with_guards(&self.hdl_read_banks(*z, banks)));
            }
        }
        let mut v = String::from("integer i;\n");
        for b in 0..nw {
            for r in 0..nr {
                let _ = writeln!(
                    v,
                    "reg signed [15:0] mem_{b}_{r} [0:{}];\nreg signed [15:0] q_{b}_{r};",
                    depth - 1
                );
            }
        }
        // initial blocks of their own per memory (super::zero_init): yosys 0.23 takes time
        // quadratic in the statements of one initial block
        for b in 0..nw {
            for r in 0..nr {
                v += &super::zero_init(&[&format!("mem_{b}_{r}")], depth, "16'sd0");
            }
        }
        for b in 0..self.wr_en.len() {
            let wi = idx(format!("wr_copy${b}"), format!("wr_addr${b}"));
            for r in 0..nr {
                let _ = writeln!(
                    v,
                    "always @(posedge clock) if (wr_en${b} && (wr_copy${b} < 16'd{k}) && (wr_addr${b} < 16'd{n})) mem_{b}_{r}[{wi}] <= wr_data${b};"
                );
            }
        }
        for b in 0..nw {
            for r in 0..nr {
                let ri = idx(format!("rd_copy${r}"), format!("rd_addr${r}"));
                let _ = writeln!(v, "always @(negedge clock) q_{b}_{r} <= mem_{b}_{r}[{ri}];");
            }
        }
        v += "always @(*) begin\n";
        for r in 0..nr {
            let sel = if nw == 1 {
                format!("q_0_{r}")
            } else {
                let mut e = String::from("16'sd0");
                for b in (0..nw).rev() {
                    let bank = narrow(&format!("rd_addr${r}"), aw, "%", nw);
                    e = format!("({bank} == {b}) ? q_{b}_{r} : ({e})");
                }
                e
            };
            let _ = writeln!(
                v,
                "    rd_data${r} = ((rd_copy${r} < 16'd{k}) && (rd_addr${r} < 16'd{n})) ? ({sel}) : 16'sd0;"
            );
        }
        v += "end\n";
        Verilog::Custom(crate::below::with_guards(&v))
    }
}

/// Bits that hold every address below `size` and `size` itself. Bank and row are taken from
/// this slice of the 16-bit address: the out-of-range guard already discards larger ones, and
/// a 16-bit divider by a lane count that is not a power of two (z = 6) costs thousands of
/// LUTs where a divider of the exact width costs tens.
fn addr_bits(size: usize) -> usize {
    (usize::BITS - size.leading_zeros()) as usize
}

/// `a[aw-1:0] op d` at `aw` bits: the braces make it self-determined, so the divider is not
/// widened to the 32 bits of the surrounding index arithmetic.
fn narrow(a: &str, aw: usize, op: &str, d: usize) -> String {
    format!("{{{a}[{}:0] {op} {aw}'d{d}}}", aw - 1)
}

/// `a · k` for a constant `k` as a sum of shifts: synthesis maps a `*` into a DSP multiplier
/// (yosys' `synth_ecp5` does, even by a constant), and a copy's offset is no reason to spend
/// one.
fn times(a: &str, k: usize) -> String {
    if k == 0 {
        return "0".into();
    }
    let terms: Vec<String> = (0..usize::BITS)
        .filter(|b| k >> b & 1 == 1)
        .map(|b| {
            if b == 0 {
                a.to_string()
            } else {
                format!("({a} << {b})")
            }
        })
        .collect();
    format!("({})", terms.join(" + "))
}

impl CopyMemory {
    /// The Verilog with replica `r` holding only the banks read port `r` reads, split by the
    /// write port that writes them (bank `b` by port `b mod W`, `W` dividing `z`): memory
    /// `(w, r)` holds the banks `S` of port `r`'s sorted list with `b mod W = w`, neuron `n`
    /// at word `copy·|S|·rows + pos_S(n mod z)·rows + n / z`, `rows = size / z`.
    fn hdl_read_banks(&self, z: usize, banks: &[Vec<usize>]) -> String {
        let (k, n) = (self._copies, self._size);
        let nw = self.wr_en.len();
        let rows = n / z;
        let bm = self._width - 1;
        let aw = addr_bits(n);
        let mut v = String::from("integer i;\n");
        let mut sel = Vec::new();
        for (r, set) in banks.iter().enumerate() {
            let mut set = set.clone();
            set.sort_unstable();
            set.dedup();
            let mut parts = Vec::new();
            for w in 0..nw {
                let sub: Vec<usize> = set.iter().copied().filter(|b| b % nw == w).collect();
                if sub.is_empty() {
                    continue;
                }
                let m = sub.len();
                let depth = k * m * rows;
                let word = |c: String, a: String| {
                    let mut pos = String::from("0");
                    for (i, b) in sub.iter().enumerate().skip(1).rev() {
                        pos = format!("({} == {b}) ? {i} : ({pos})", narrow(&a, aw, "%", z));
                    }
                    format!(
                        "{} + {} + {}",
                        times(&c, m * rows),
                        times(&format!("({pos})"), rows),
                        narrow(&a, aw, "/", z)
                    )
                };
                let member = sub
                    .iter()
                    .map(|b| format!("({} == {b})", narrow(&format!("wr_addr${w}"), aw, "%", z)))
                    .collect::<Vec<_>>()
                    .join(" || ");
                let _ = writeln!(
                    v,
                    "reg signed [{bm}:0] mem_{w}_{r} [0:{}];\nreg signed [{bm}:0] q_{w}_{r};",
                    depth - 1
                );
                v += &super::zero_init(&[&format!("mem_{w}_{r}")], depth, "0");
                let _ = writeln!(
                    v,
                    "always @(posedge clock) if (wr_en${w} && (wr_copy${w} < 16'd{k}) && (wr_addr${w} < 16'd{n}) && ({member})) mem_{w}_{r}[{}] <= wr_data${w}[{bm}:0];",
                    word(format!("wr_copy${w}"), format!("wr_addr${w}"))
                );
                let _ = writeln!(
                    v,
                    // an out-of-range read gives 0: the register's synchronous reset, no mux
                    "always @(negedge clock) q_{w}_{r} <= ((rd_copy${r} < 16'd{k}) && (rd_addr${r} < 16'd{n})) ? mem_{w}_{r}[{}] : {}'sd0;",
                    word(format!("rd_copy${r}"), format!("rd_addr${r}")),
                    bm + 1
                );
                parts.push(w);
            }
            let e = if parts.len() == 1 {
                format!("q_{}_{r}", parts[0])
            } else {
                let mut e = String::from("16'sd0");
                for w in parts.iter().rev() {
                    e = format!(
                        "({} == {w}) ? q_{w}_{r} : ({e})",
                        narrow(&format!("rd_addr${r}"), aw, "%", nw)
                    );
                }
                e
            };
            sel.push(e);
        }
        v += "always @(*) begin\n";
        for (r, e) in sel.iter().enumerate() {
            let _ = writeln!(v, "    rd_data${r} = {e};");
        }
        v += "end\n";
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check, yosys_stat};

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
        // replicas holding one bank, and two banks
        yosys_check(
            &CopyMemory::new(3, 8, 2, 1).with_read_banks(4, vec![vec![1], vec![2, 0]]),
            "copy_memory_banks",
        );
        // two write ports: each replica split by the port that writes its banks
        yosys_check(
            &CopyMemory::new(3, 8, 2, 2).with_read_banks(4, vec![vec![1], vec![2, 1]]),
            "copy_memory_banks_two_writers",
        );
    }

    /// A copy's offset `copy × rows`, with rows not a power of two (80; 7 banks of 7 rows in
    /// a replica), is shifts and adds: `synth_ecp5` maps even a `*` by a constant into a
    /// MULT18X18D, which the network's products need.
    #[test]
    fn copy_offsets_take_no_multiplier() {
        let plain = CopyMemory::new(3, 80, 2, 1);
        let banks =
            CopyMemory::new(3, 56, 2, 1).with_read_banks(8, vec![(0..7).collect(), vec![1]]);
        for (stat, name) in [
            (
                yosys_stat(&plain, "copy_offsets_plain", "synth_ecp5 -top top"),
                "plain",
            ),
            (
                yosys_stat(&banks, "copy_offsets_banks", "synth_ecp5 -top top"),
                "banks",
            ),
        ] {
            let Some(stat) = stat else { return };
            assert!(!stat.contains("MULT18X18D"), "{name}: {stat}");
            assert!(
                stat.contains("DP16KD") || stat.contains("TRELLIS_DPR16X4"),
                "{stat}"
            );
        }
    }
}
