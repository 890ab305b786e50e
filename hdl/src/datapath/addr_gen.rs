//! Interleaver address generator: the left neuron each lane reaches in the current clock,
//! from the pattern's generating state (docs/design.md, "Edge order and clash-free patterns"),
//! not from an index table. Counters: sweep `s` and in-sweep clock `r`, advanced once per
//! active clock and cleared at the end of a block cycle.
//!
//! Every lane's address leaves a register: it is computed a clock ahead, from the state the
//! counters enter on the next advance, so the memory read behind it has the whole path from
//! a register. Type 1 keeps a row table per lane (`verilog_rom`, a ROM read at the advanced
//! address); types 2 and 3 keep a start and a bank per sweep and lane (type 3: one start for
//! all sweeps; dither: a bank permutation per sweep) and compute
//! `z·((start + r) mod rows) + bank` as `base + r·z − [r ≥ rows − start]·rows·z`, with
//! `base = z·start + bank` and the wrap point from [`SweepTable`], `r` and `r·z` from
//! [`SweepCounter`], and the sum in the connection table ([`AddrGen::wire`]).

use crate::fixed::b16;
use crate::params::JunctionParams;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::PatternKind;
use rust_hdl::core::prelude::*;
use rust_hdl::widgets::dff_setup;
use rust_hdl::widgets::prelude::{DFFWithInit, DFF};

/// Type 1 as block RAM: one ROM per lane of `fan_out · rows` entries (sweep-major), read at
/// the rising edge with the counters' next state, so the registered output is the left
/// neuron of the state the counters enter at that edge: the same value, every clock, as the
/// combinational table of the behavioural model (0 past the end of the pass).
fn verilog_rom(p: &JunctionParams) -> String {
    let (rows, fo) = (p.rows_per_bank, p.pattern.fan_out);
    let depth = rows * fo;
    // Exact widths: the sweep counter stops at `fo` (past the pass every lane reads 0 either
    // way), so no counter, address or table entry is wider than its largest value.
    let bits = crate::bits_for;
    let (sw, rw, aw, dw) = (bits(fo), bits(rows - 1), bits(depth - 1), bits(p.left - 1));
    let pad = |w: u32, e: String| {
        if w >= 16 {
            e
        } else {
            format!("{{{}'d0, {e}}}", 16 - w)
        }
    };
    // The table address s·rows + r is also kept as a counter of its own, `lin`, stopped at
    // `depth` past the pass: its increment and range test are on registers, and the table is
    // read at the advanced address only (`ra`, from registers): the controller's `adv` and
    // `last` choose behind the table between that entry, entry 0 and the entry held (a held
    // `q` is the entry at `lin` already).
    let lw = bits(depth);
    let mut v = format!(
        "reg [{}:0] cs;\nreg [{}:0] cr;\nreg [{}:0] ns;\nreg [{}:0] nr;\nreg n_ok;\nreg q_ok;\nreg [{}:0] ra;\nreg [{lwm}:0] lin;\nreg [{lwm}:0] nlin;\nreg [{lwm}:0] inc;\nreg inc_ok;\nreg cur_ok;\n",
        sw - 1,
        rw - 1,
        sw - 1,
        rw - 1,
        aw - 1,
        lwm = lw - 1
    );
    for l in 0..p.z {
        v += &format!(
            "reg [{}:0] rom_{l} [0:{}];\nreg [{}:0] q_{l};\n",
            dw - 1,
            depth - 1,
            dw - 1
        );
    }
    v += &format!("initial begin\n    cs = {sw}'d0;\n    cr = {rw}'d0;\n    q_ok = 1'b1;\n    lin = {lw}'d0;\n");
    for l in 0..p.z {
        v += &format!("    q_{l} = {dw}'d{};\n", p.left_of(0, l, 0));
        for s in 0..fo {
            for r in 0..rows {
                v += &format!(
                    "    rom_{l}[{}] = {dw}'d{};\n",
                    s * rows + r,
                    p.left_of(s, l, r)
                );
            }
        }
    }
    v += &format!(
        "end
always @(*) begin
    ns = cs;
    nr = cr;
    if (last) begin
        ns = {sw}'d0;
        nr = {rw}'d0;
    end else if (adv) begin
        if (cr == {rw}'d{rl}) begin
            nr = {rw}'d0;
            ns = (cs == {sw}'d{fo}) ? cs : cs + {sw}'d1;
        end else nr = cr + {rw}'d1;
    end
    inc = (lin == {lw}'d{depth}) ? lin : lin + {lw}'d1;
    inc_ok = inc != {lw}'d{depth};
    cur_ok = lin != {lw}'d{depth};
    nlin = last ? {lw}'d0 : (adv ? inc : lin);
    n_ok = last || (adv ? inc_ok : cur_ok);
    ra = inc_ok ? inc[{awm}:0] : {aw}'d0;
end
always @(posedge clock) begin
    cs <= ns;
    cr <= nr;
    lin <= nlin;
    q_ok <= n_ok;
end
",
        rl = rows - 1,
        awm = aw - 1,
    );
    for l in 0..p.z {
        v += &format!(
            "always @(posedge clock) q_{l} <= last ? {dw}'d{} : (adv ? rom_{l}[ra] : q_{l});\n",
            p.left_of(0, l, 0)
        );
    }
    v += "always @(*) begin\n";
    for l in 0..p.z {
        v += &format!(
            "    left${l} = q_ok ? {} : 16'd0;\n",
            pad(dw, format!("q_{l}"))
        );
    }
    v += "end\n";
    v
}

/// The counters of a type-1 interleaver, as its simulation model.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub s: usize,
    pub r: usize,
}

impl Counters {
    pub fn step(&mut self, p: &JunctionParams, adv: bool, last: bool) {
        if last {
            *self = Counters::default();
        } else if adv {
            if self.r + 1 == p.rows_per_bank {
                self.r = 0;
                self.s += 1;
            } else {
                self.r += 1;
            }
        }
    }

    /// Left neuron of lane `l` now (0 past the end of the pass, as the Verilog default).
    pub fn left(&self, p: &JunctionParams, l: usize) -> usize {
        if self.s < p.pattern.fan_out {
            p.left_of(self.s, l, self.r)
        } else {
            0
        }
    }
}

/// The sweep counters of types 2 and 3, and the state they enter on the next advance: sweep
/// `next_s` (standing at the fan-out past the pass), row `next_r`, `next_rz = next_r·z` (kept
/// as a running sum, not a product) and whether that state is within the pass. All come from
/// registers, so the lanes' sums after them have a whole clock.
#[derive(LogicBlock)]
pub struct SweepCounter {
    pub clock: Signal<In, Clock>,
    pub adv: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub next_s: Signal<Out, Bits<16>>,
    pub next_r: Signal<Out, Bits<16>>,
    pub next_rz: Signal<Out, Bits<16>>,
    pub next_ok: Signal<Out, Bit>,
    /// rows − 1: the sweep's last row.
    last_row: Constant<Bits<16>>,
    /// The fan-out: the sweep past the pass.
    sweeps: Constant<Bits<16>>,
    z: Constant<Bits<16>>,
    /// Masks of the counters' exact widths, so yosys drops the constant-zero bits above.
    s_bits: Constant<Bits<16>>,
    r_bits: Constant<Bits<16>>,
    rz_bits: Constant<Bits<16>>,
    s: DFF<Bits<16>>,
    r: DFF<Bits<16>>,
    rz: DFF<Bits<16>>,
    ns: Signal<Local, Bits<16>>,
    nr: Signal<Local, Bits<16>>,
    nrz: Signal<Local, Bits<16>>,
}

impl SweepCounter {
    pub fn new(p: &JunctionParams) -> Self {
        let (rows, fo) = (p.rows_per_bank, p.pattern.fan_out);
        let k = |v: usize| Constant::new(Bits::<16>::from(v as u64));
        let m = |max: usize| Constant::new(Bits::<16>::from(crate::mask_for(max)));
        SweepCounter {
            clock: Default::default(),
            adv: Default::default(),
            last: Default::default(),
            next_s: Default::default(),
            next_r: Default::default(),
            next_rz: Default::default(),
            next_ok: Default::default(),
            last_row: k(rows - 1),
            sweeps: k(fo),
            z: k(p.z),
            s_bits: m(fo),
            r_bits: m(rows - 1),
            rz_bits: m((rows - 1) * p.z),
            s: Default::default(),
            r: Default::default(),
            rz: Default::default(),
            ns: Default::default(),
            nr: Default::default(),
            nrz: Default::default(),
        }
    }
}

impl Logic for SweepCounter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s, r, rz);
        self.ns.next = self.s.q.val();
        self.nr.next = (self.r.q.val() + 1) & self.r_bits.val();
        self.nrz.next = (self.rz.q.val() + self.z.val()) & self.rz_bits.val();
        if self.r.q.val() == self.last_row.val() {
            self.nr.next = 0.into();
            self.nrz.next = 0.into();
            if self.s.q.val() != self.sweeps.val() {
                self.ns.next = (self.s.q.val() + 1) & self.s_bits.val();
            }
        }
        self.next_s.next = self.ns.val();
        self.next_r.next = self.nr.val();
        self.next_rz.next = self.nrz.val();
        self.next_ok.next = self.ns.val() != self.sweeps.val();
        if self.last.val() {
            self.s.d.next = 0.into();
            self.r.d.next = 0.into();
            self.rz.d.next = 0.into();
        } else if self.adv.val() {
            self.s.d.next = self.ns.val();
            self.r.d.next = self.nr.val();
            self.rz.d.next = self.nrz.val();
        }
    }
}

/// Types 2 and 3: per lane, `base = z·start + bank` and the wrap point `rows − start` of sweep
/// `s` (0 past the pass). A constant table, kept as rust-hdl keeps its own ROM: a `case`.
#[derive(LogicBlock)]
pub struct SweepTable {
    pub s: Signal<In, Bits<16>>,
    pub base: Vec<Signal<Out, Bits<16>>>,
    pub wrap_at: Vec<Signal<Out, Bits<16>>>,
    /// `[sweep][lane]`: (base, wrap point).
    _entries: Vec<Vec<(usize, usize)>>,
}

impl SweepTable {
    pub fn new(p: &JunctionParams) -> Self {
        let (pat, rows) = (&p.pattern, p.rows_per_bank);
        let entries = (0..pat.fan_out)
            .map(|s| {
                (0..p.z)
                    .map(|l| (p.left_of(s, l, 0), rows - pat.start[s][l]))
                    .collect()
            })
            .collect();
        SweepTable {
            s: Default::default(),
            base: crate::sigs(p.z),
            wrap_at: crate::sigs(p.z),
            _entries: entries,
        }
    }
}

impl Logic for SweepTable {
    fn update(&mut self) {
        let row = self._entries.get(self.s.val().index());
        for l in 0..self.base.len() {
            let (b, w) = row.map_or((0, 0), |r| r[l]);
            self.base[l].next = b16(b as i32);
            self.wrap_at[l].next = b16(w as i32);
        }
    }
    fn connect(&mut self) {
        for x in self.base.iter_mut().chain(self.wrap_at.iter_mut()) {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let z = self.base.len();
        let set = |l: usize, (b, w): (usize, usize)| {
            format!(" base${l} = 16'd{b}; wrap_at${l} = 16'd{w};")
        };
        let mut v = String::from("always @(*) begin\n    case (s)\n");
        for (s, row) in self._entries.iter().enumerate() {
            let arms: String = (0..z).map(|l| set(l, row[l])).collect();
            v += &format!("        16'd{s}: begin{arms} end\n");
        }
        let zeros: String = (0..z).map(|l| set(l, (0, 0))).collect();
        v += &format!("        default: begin{zeros} end\n    endcase\nend\n");
        Verilog::Custom(v)
    }
}

/// The address generator as a block: `left[l]` is lane `l`'s left neuron this clock, from a
/// register.
#[derive(LogicBlock)]
pub struct AddrGen {
    pub clock: Signal<In, Clock>,
    pub adv: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub left: Vec<Signal<Out, Bits<16>>>,
    /// Types 2 and 3 (empty for type 1): the counters, the table, a register per lane that
    /// starts at the first clock's address.
    pub sweep: Vec<SweepCounter>,
    pub table: Vec<SweepTable>,
    pub addr: Vec<DFFWithInit<Bits<16>>>,
    _p: std::sync::Arc<JunctionParams>,
    _c: Counters,
}

impl AddrGen {
    pub fn new(p: &JunctionParams) -> Self {
        let computed = p.pattern.kind != PatternKind::Type1;
        let n = |k: usize| if computed { k } else { 0 };
        AddrGen {
            clock: Default::default(),
            adv: Default::default(),
            last: Default::default(),
            left: crate::sigs(p.z),
            sweep: (0..n(1)).map(|_| SweepCounter::new(p)).collect(),
            table: (0..n(1)).map(|_| SweepTable::new(p)).collect(),
            addr: (0..n(p.z))
                .map(|l| DFFWithInit::new(b16(p.left_of(0, l, 0) as i32)))
                .collect(),
            _p: std::sync::Arc::new(p.clone()),
            _c: Counters::default(),
        }
    }

    /// Types 2 and 3: lane `l`'s next address `base + r·z`, less `rows·z` from its wrap point
    /// on, 0 past the pass; taken on `adv`, the first clock's on `last`.
    fn wire<W: Wires<Self>>(p: &JunctionParams, w: &mut W) {
        let clock = at!(w, clock);
        let (adv, last) = (at!(w, adv), at!(w, last));
        w.set(to!(sweep[0].clock), clock.clone());
        w.set(to!(sweep[0].adv), adv.clone());
        w.set(to!(sweep[0].last), last.clone());
        w.set(to!(table[0].s), at!(w, sweep[0].next_s));
        let (r, rz, ok) = (
            at!(w, sweep[0].next_r),
            at!(w, sweep[0].next_rz),
            at!(w, sweep[0].next_ok),
        );
        let wrap = (p.rows_per_bank * p.z) & 0xffff;
        let width = crate::mask_for(p.left - 1);
        let zero = w.lit(0, "16'd0");
        for l in 0..p.z {
            w.set(to!(addr[l].clock), clock.clone());
            let sum = w.add16(&at!(w, table[0].base[l]), &rz);
            let wraps = w.not(&w.gt(&at!(w, table[0].wrap_at[l]), &r));
            let next = w.paren(&w.mux(&wraps, &w.minus16(&sum, wrap), &sum));
            // an address is below the left layer's size: the register's bits above are 0
            let next = w.paren(&w.mux(&ok, &w.mask16(&next, width), &zero));
            let taken = w.paren(&w.mux(&adv, &next, &at!(w, addr[l].q)));
            let first = p.left_of(0, l, 0);
            let d = w.mux(
                &last,
                &w.make(|| first as u64, || format!("16'd{first}")),
                &taken,
            );
            w.set(to!(addr[l].d), d);
            w.set(to!(left[l]), at!(w, addr[l].q));
        }
    }
}

impl Logic for AddrGen {
    fn update(&mut self) {
        if self._p.pattern.kind != PatternKind::Type1 {
            let p = self._p.clone();
            return Self::wire(&p, &mut Sim(self));
        }
        if self.clock.pos_edge() {
            self._c.step(&self._p, self.adv.val(), self.last.val());
        }
        for l in 0..self._p.z {
            self.left[l].next = b16(self._c.left(&self._p, l) as i32);
        }
    }
    fn connect(&mut self) {
        if self._p.pattern.kind != PatternKind::Type1 {
            let p = self._p.clone();
            return Self::wire(&p, &mut Connect(self));
        }
        for x in &mut self.left {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        if self._p.pattern.kind == PatternKind::Type1 {
            return Verilog::Custom(verilog_rom(&self._p));
        }
        let mut t = Text::default();
        Self::wire(&self._p, &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{icarus_rows, icarus_run, settle, tick, yosys_check};
    use edgeflow_core::Spec;

    fn spec(kind: &str, dither: bool) -> Spec {
        let t = format!(
            "name='a'\nlayers=[24,12,6]\nfan_out=[3,2]\nz=[3,4]\nactivation='sigmoid'\nlearning_rate_shift=2\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='{kind}'\ndither={dither}\nseed=7\n"
        );
        Spec::from_toml_str(&t, "a").unwrap()
    }

    #[test]
    fn generator_reproduces_the_index_table_for_every_pattern_type() {
        for kind in ["type1", "type2", "type3"] {
            for dither in [false, true] {
                let sp = spec(kind, dither);
                for j in 0..2 {
                    let p = JunctionParams::new(&sp, j);
                    let mut g = AddrGen::new(&p);
                    g.connect_all();
                    for pass in 0..2 {
                        for c in 0..p.clocks {
                            g.adv.next = true;
                            g.last.next = c + 1 == p.clocks;
                            settle(&mut g);
                            for l in 0..p.z {
                                let want = p.pattern.left_of_edge[c * p.z + l] as usize;
                                assert_eq!(
                                    g.left[l].val().index(),
                                    want,
                                    "{kind} dither={dither} j={j} pass {pass} clock {c} lane {l}"
                                );
                            }
                            tick(&mut g, |g| &mut g.clock);
                        }
                    }
                }
            }
        }
    }

    /// The block and its Verilog (Icarus) give the index table's left neuron on every clock,
    /// with advances skipped, passes run past their end and cut short by `last`.
    #[test]
    fn generator_verilog_reproduces_the_index_table_in_icarus() {
        for kind in ["type1", "type2", "type3"] {
            for dither in [false, true] {
                let sp = spec(kind, dither);
                let p = JunctionParams::new(&sp, 0);
                let mut g = AddrGen::new(&p);
                g.connect_all();
                let mut rng = edgeflow_core::rng::SplitMix64::new(5);
                let (mut c, mut want, mut stim) = (0usize, vec![], String::new());
                for _ in 0..3 * p.clocks + 10 {
                    let adv = rng.below(4) != 0;
                    let last = c + 1 >= p.clocks + 2 || rng.below(40) == 0;
                    let row: Vec<i32> = (0..p.z)
                        .map(|l| match c < p.clocks {
                            true => p.pattern.left_of_edge[c * p.z + l] as i32,
                            false => 0,
                        })
                        .collect();
                    g.adv.next = adv;
                    g.last.next = last;
                    settle(&mut g);
                    let got: Vec<i32> = g.left.iter().map(|x| x.val().index() as i32).collect();
                    assert_eq!(got, row, "{kind} dither={dither}, model");
                    want.push(row);
                    let show: Vec<String> = (0..p.z).map(|l| format!("left_{l}")).collect();
                    stim += &format!(
                        "  adv = {}; last = {}; #1 $display(\"{}\", {}); clock = 1; #1 clock = 0;\n",
                        adv as u8,
                        last as u8,
                        vec!["%0d"; p.z].join(" "),
                        show.join(", ")
                    );
                    tick(&mut g, |g| &mut g.clock);
                    c = if last { 0 } else { c + adv as usize };
                }
                let wires: String = (0..p.z)
                    .map(|l| format!("wire [15:0] left_{l};\n"))
                    .collect();
                let ports: String = (0..p.z).map(|l| format!(", .left${l}(left_{l})")).collect();
                let tb = format!(
                    "{}\nmodule tb;\nreg clock = 0; reg adv = 0; reg last = 0;\n{wires}top d(.clock(clock), .adv(adv), .last(last){ports});\ninitial begin\n{stim}  $finish;\nend\nendmodule\n",
                    generate_verilog_unchecked(&g)
                );
                let Some(out) = icarus_run(&tb, &format!("addr-gen-{kind}-{dither}")) else {
                    return;
                };
                assert_eq!(
                    icarus_rows(&out, p.z),
                    want,
                    "{kind} dither={dither}, Verilog"
                );
            }
        }
    }

    #[test]
    fn generator_verilog_is_clean() {
        for kind in ["type1", "type2", "type3"] {
            yosys_check(
                &AddrGen::new(&JunctionParams::new(&spec(kind, true), 0)),
                &format!("addr_gen_{kind}"),
            );
        }
    }
}
