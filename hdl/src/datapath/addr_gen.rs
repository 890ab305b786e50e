//! Interleaver address generator: the left neuron each lane reaches in the current clock,
//! from the pattern's generating state (docs/design.md, "Edge order and clash-free patterns"),
//! not from an index table:
//! type 1 holds a row table per lane and sweep, types 2 and 3 a start vector (one per sweep,
//! or one for all), dither a bank permutation per sweep. Counters: sweep `s` and in-sweep
//! clock `r`, advanced once per active clock and cleared at the end of a block cycle.

use crate::fixed::b16;
use crate::params::JunctionParams;
use edgeflow_core::PatternKind;
use rust_hdl::core::prelude::*;

/// Verilog function `left_of_<l>(s, r)` for every lane `l`: `z·row_s(l, r) + bank_s(l)`.
pub fn verilog_functions(p: &JunctionParams) -> String {
    let pat = &p.pattern;
    let rows = p.rows_per_bank;
    let mut out = String::new();
    for l in 0..p.z {
        let mut body = String::new();
        match pat.kind {
            PatternKind::Type1 => {
                body += "        case ({s[15:0], r[15:0]})\n";
                for s in 0..pat.fan_out {
                    for r in 0..rows {
                        body += &format!(
                            "            32'd{}: left_of_{l} = 16'd{};\n",
                            (s << 16) | r,
                            p.left_of(s, l, r)
                        );
                    }
                }
                body += "            default: left_of_{l} = 16'd0;\n        endcase\n"
                    .replace("{l}", &l.to_string())
                    .as_str();
            }
            PatternKind::Type2 | PatternKind::Type3 => {
                body += "        case (s)\n";
                for s in 0..pat.fan_out {
                    body += &format!(
                        "            16'd{s}: begin st = 16'd{}; bk = 16'd{}; end\n",
                        pat.start[s][l], pat.bank[s][l]
                    );
                }
                body += "            default: begin st = 16'd0; bk = 16'd0; end\n        endcase\n";
                body += &format!(
                    "        row = st + r;\n        if (row >= 16'd{rows}) row = row - 16'd{rows};\n        left_of_{l} = row * 16'd{z} + bk;\n",
                    z = p.z
                );
            }
        }
        out += &format!(
            "
function [15:0] left_of_{l};
    input [15:0] s;
    input [15:0] r;
    reg [15:0] st;
    reg [15:0] bk;
    reg [15:0] row;
    begin
        st = 16'd0; bk = 16'd0; row = 16'd0;
{body}    end
endfunction
"
        );
    }
    out
}

/// Verilog for the sweep/in-sweep counters (`ag_s`, `ag_r`), advanced by `adv`, cleared by `last`.
pub fn verilog_counters(p: &JunctionParams) -> String {
    format!(
        "
always @(posedge clock) begin
    if (last) begin
        ag_s <= 16'd0;
        ag_r <= 16'd0;
    end else if (adv) begin
        if (ag_r == 16'd{}) begin
            ag_r <= 16'd0;
            ag_s <= ag_s + 16'd1;
        end else ag_r <= ag_r + 16'd1;
    end
end
",
        p.rows_per_bank - 1
    )
}

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
    ag_s = {ags};
    ag_r = {agr};
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
        ags = pad(sw, "cs".into()),
        agr = pad(rw, "cr".into()),
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

/// The counters of the interleaver, shared by the generator block and the junction.
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

/// The address generator as a block: `left[l]` is lane `l`'s left neuron this clock.
#[derive(LogicBlock)]
pub struct AddrGen {
    pub clock: Signal<In, Clock>,
    pub adv: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub left: Vec<Signal<Out, Bits<16>>>,
    ag_s: Signal<Local, Bits<16>>,
    ag_r: Signal<Local, Bits<16>>,
    _p: Box<JunctionParams>,
    _c: Counters,
}

impl AddrGen {
    pub fn new(p: &JunctionParams) -> Self {
        AddrGen {
            clock: Default::default(),
            adv: Default::default(),
            last: Default::default(),
            left: (0..p.z).map(|_| Default::default()).collect(),
            ag_s: Default::default(),
            ag_r: Default::default(),
            _p: Box::new(p.clone()),
            _c: Counters::default(),
        }
    }
}

impl Logic for AddrGen {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._c.step(&self._p, self.adv.val(), self.last.val());
        }
        self.ag_s.next = b16(self._c.s as i32);
        self.ag_r.next = b16(self._c.r as i32);
        for l in 0..self._p.z {
            self.left[l].next = b16(self._c.left(&self._p, l) as i32);
        }
    }
    fn connect(&mut self) {
        for x in &mut self.left {
            x.connect();
        }
        self.ag_s.connect();
        self.ag_r.connect();
    }
    fn hdl(&self) -> Verilog {
        if self._p.pattern.kind == PatternKind::Type1 {
            return Verilog::Custom(verilog_rom(&self._p));
        }
        let mut v = verilog_functions(&self._p);
        v += "initial begin\n    ag_s = 16'd0;\n    ag_r = 16'd0;\nend\n";
        v += &verilog_counters(&self._p);
        v += "\nalways @(*) begin\n";
        for l in 0..self._p.z {
            v += &format!("    left${l} = left_of_{l}(ag_s, ag_r);\n");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};
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

    #[test]
    fn generator_verilog_is_clean() {
        for kind in ["type1", "type2"] {
            yosys_check(
                &AddrGen::new(&JunctionParams::new(&spec(kind, true), 0)),
                &format!("addr_gen_{kind}"),
            );
        }
    }
}
