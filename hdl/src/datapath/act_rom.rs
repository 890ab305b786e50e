//! Activation look-up ROM: σ and σ′ of a saturated pre-activation, contents generated from
//! `edgeflow_core::fixed::ActivationTable` (the only place an activation function is
//! evaluated); ReLU is a comparison and σ′ its gate.

use crate::fixed::{b16, s16};
use edgeflow_core::fixed::{activate, ActivationTable, ReluGate};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

/// Verilog functions for the ROM in three parts: `act_<name>_idx(h)` (the table index: for
/// a table activation `{neg, u}`, the sign and the mirrored offset into the upper half; for
/// ReLU `h`), `act_<name>_tab(idx)` (65 bits: the table lookup, for a table `{neg, s, p, K − cs, cp}`
/// of the mirrored half table) and `act_<name>_fin(raw) -> {σ, σ′}` (the mirror's
/// subtraction), so registers can sit between them; `act_<name>_raw(h)` is the first two,
/// `act_<name>(h)` all three (32 bits: σ in the high half). `act_<name>_iw` is the index's
/// width.
pub fn verilog_function(name: &str, t: &ActivationTable) -> String {
    let parts = if !t.activation.is_table() {
        format!(
            "
localparam act_{name}_iw = 16;
// σ′ is the gate: open for h > 0, shut at the format's maximum under the clipped rule
function [15:0] act_{name}_idx;
    input signed [15:0] h;
    begin
        act_{name}_idx = h;
    end
endfunction
function [64:0] act_{name}_tab;
    input signed [15:0] h;
    begin
        if (h > 0) act_{name}_tab = {{33'd0, h, {gate}}};
        else act_{name}_tab = 65'd0;
    end
endfunction
function [31:0] act_{name}_fin;
    input [64:0] raw;
    begin
        act_{name}_fin = raw[31:0];
    end
endfunction
",
            gate = match t.relu_gate {
                ReluGate::Clipped => format!("((h == 16'sd{}) ? 16'd0 : 16'd1)", t.format.max()),
                ReluGate::Plain => "16'd1".into(),
            }
        )
    } else {
        let m = Mirror::of(t);
        let drop = t.drop_bits();
        let hb = t.index_bits - 1;
        let mut upper = String::new();
        for u in 0..m.half {
            let i = m.half + u;
            let _ = writeln!(
                upper,
                "        {hb}'d{u}: begin s = 16'h{:04x}; p = 16'h{:04x}; end",
                t.sigma[i] as u16, t.sigma_prime[i] as u16
            );
        }
        let mut fix = String::new();
        // the lower half's constant K − cs in the table, so the mirror after the
        // register is one subtraction (the argmax compare and the activation memory's
        // write sit behind it), not two
        for &(u, cs, cp) in &m.fixes {
            let _ = writeln!(
                fix,
                "            {hb}'d{u}: begin kc = 16'h{:04x}; cp = 16'h{:04x}; end",
                (m.k - cs) as u16,
                cp as u16
            );
        }
        format!(
            "
localparam act_{name}_iw = {iw};
function [{hb}:0] act_{name}_idx;
    input signed [15:0] h;
    reg signed [15:0] hs;
    reg neg;
    begin
        hs = h >>> {drop};
        neg = hs[{hb}];
        act_{name}_idx = {{neg, hs[{ub}:0] ^ {{{hb}{{neg}}}}}};
    end
endfunction
function [64:0] act_{name}_tab;
    input [{hb}:0] iu;
    reg neg;
    reg [{ub}:0] u;
    reg [15:0] s;
    reg [15:0] p;
    reg [15:0] kc;
    reg [15:0] cp;
    begin
        neg = iu[{hb}];
        u = iu[{ub}:0];
        // logic, not block RAM: every EBR is taken, and yosys maps a registered table to one
        (* rom_style = \"logic\" *) case (u)
{upper}        default: begin s = 16'd0; p = 16'd0; end
        endcase
        kc = 16'd0;
        cp = 16'd0;
        if (neg) begin
            (* rom_style = \"logic\" *) case (u)
{fix}            default: begin kc = 16'h{k:04x}; cp = 16'd0; end
            endcase
        end
        act_{name}_tab = {{neg, s, p, kc, cp}};
    end
endfunction
function [31:0] act_{name}_fin;
    input [64:0] raw;
    begin
        if (raw[64]) act_{name}_fin = {{raw[31:16] - raw[63:48], raw[47:32] + raw[15:0]}};
        else act_{name}_fin = raw[63:32];
    end
endfunction
",
            ub = hb.max(1) - 1,
            k = m.k as u16,
            iw = hb + 1,
        )
    };
    format!(
        "{parts}
function [64:0] act_{name}_raw;
    input signed [15:0] h;
    begin
        act_{name}_raw = act_{name}_tab(act_{name}_idx(h));
    end
endfunction
function [31:0] act_{name};
    input signed [15:0] h;
    begin
        act_{name} = act_{name}_fin(act_{name}_raw(h));
    end
endfunction
"
    )
}

/// A table as its upper half (non-negative pre-activations) plus the mirror
/// `σ(i) = K − σ(n−1−i) − cs`, `σ′(i) = σ′(n−1−i) + cp` for the lower half, with `K` the most
/// common `σ(i) + σ(n−1−i)` (the sigmoid's 1.0, an odd function's 0): rounding and the
/// buckets' midpoints (which are not symmetric about zero) make the table only nearly
/// symmetric, so the entries where the plain mirror misses get corrections `cs`, `cp`.
/// Half the ROM, the same bits as the full table for every index.
pub struct Mirror {
    pub half: usize,
    pub k: i32,
    /// (upper-half offset u, cs, cp) where a correction is needed.
    pub fixes: Vec<(usize, i32, i32)>,
}

impl Mirror {
    pub fn of(t: &ActivationTable) -> Mirror {
        let n = t.sigma.len();
        let half = n / 2;
        let mut counts = std::collections::BTreeMap::new();
        for u in 0..half {
            *counts
                .entry(t.sigma[half + u] + t.sigma[half - 1 - u])
                .or_insert(0usize) += 1;
        }
        let k = counts
            .iter()
            .max_by_key(|(_, &c)| c)
            .map(|(&k, _)| k)
            .unwrap_or(0);
        let fixes = (0..half)
            .filter_map(|u| {
                let (hi, lo) = (half + u, half - 1 - u);
                let cs = k - t.sigma[hi] - t.sigma[lo];
                let cp = t.sigma_prime[lo] - t.sigma_prime[hi];
                (cs != 0 || cp != 0).then_some((u, cs, cp))
            })
            .collect();
        Mirror { half, k, fixes }
    }

    /// `(σ, σ′)` of table index `i` through the mirror (what the Verilog computes).
    pub fn lookup(&self, t: &ActivationTable, i: usize) -> (i32, i32) {
        if i >= self.half {
            (t.sigma[i], t.sigma_prime[i])
        } else {
            let u = self.half - 1 - i;
            let (cs, cp) = self
                .fixes
                .iter()
                .find(|f| f.0 == u)
                .map(|f| (f.1, f.2))
                .unwrap_or((0, 0));
            let hi = self.half + u;
            (self.k - t.sigma[hi] - cs, t.sigma_prime[hi] + cp)
        }
    }
}

/// The ROM as a block with a registered read, like a block RAM: `a`, `sp` are σ and σ′ of
/// the `h` of the previous clock. The register sits after the table lookup, before the
/// mirror's subtraction (the FF pipeline's second stage, ff_unit.rs).
#[derive(LogicBlock)]
pub struct ActivationRom {
    pub clock: Signal<In, Clock>,
    pub h: Signal<In, Bits<16>>,
    pub a: Signal<Out, Bits<16>>,
    pub sp: Signal<Out, Bits<16>>,
    _table: ActivationTable,
    _q: (i32, i32),
    /// With a registered input: the `h` of the clock before.
    _hin: Option<i32>,
}

impl ActivationRom {
    pub fn new(table: ActivationTable) -> Self {
        ActivationRom {
            clock: Default::default(),
            h: Default::default(),
            a: Default::default(),
            sp: Default::default(),
            _table: table,
            _q: (0, 0),
            _hin: None,
        }
    }

    /// Register the input as its table index (for sigmoid the sign and the mirrored offset)
    /// a clock before the lookup: `a`, `sp` then come two clocks after `h`. The deep
    /// pipeline's register between the saturated sum and the lookup is this one, after the
    /// mirror's XOR, so the lookup starts at the index flip-flops.
    pub fn with_registered_input(mut self, on: bool) -> Self {
        self._hin = on.then_some(0);
        self
    }
}

impl Logic for ActivationRom {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let h = s16(self.h.val());
            self._q = activate(&self._table, self._hin.unwrap_or(h));
            if self._hin.is_some() {
                self._hin = Some(h);
            }
        }
        self.a.next = b16(self._q.0);
        self.sp.next = b16(self._q.1);
    }
    fn connect(&mut self) {
        self.a.connect();
        self.sp.connect();
    }
    fn hdl(&self) -> Verilog {
        // raw = 0 reads as (0, 0), the model's initial output; the index register starts at
        // h = 0's index, 0
        let lookup = if self._hin.is_some() {
            "reg [act_rom_iw-1:0] iq;\ninitial iq = 0;\nalways @(posedge clock) iq <= act_rom_idx(h);\nalways @(posedge clock) raw <= act_rom_tab(iq);"
        } else {
            "always @(posedge clock) raw <= act_rom_raw(h);"
        };
        Verilog::Custom(format!(
            "{}\nreg [64:0] raw;\ninitial raw = 65'd0;\n{lookup}\nalways @(*) begin\n    a = act_rom_fin(raw) >> 16;\n    sp = act_rom_fin(raw);\nend\n",
            verilog_function("rom", &self._table)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{tick, yosys_check};
    use edgeflow_core::fixed::{Activation, Format};

    fn table_activations() -> impl Iterator<Item = Activation> {
        Activation::ALL.into_iter().filter(|a| a.is_table())
    }

    #[test]
    fn rom_matches_the_table_for_every_input_one_clock_later() {
        for act in Activation::ALL {
            for f in [Format::new(2, 7), Format::new(3, 4)] {
                let t = ActivationTable::new(act, f);
                let mut rom = ActivationRom::new(t.clone());
                rom.connect_all();
                for h in f.min()..=f.max() {
                    rom.h.next = b16(h);
                    tick(&mut rom, |r| &mut r.clock);
                    assert_eq!(
                        (s16(rom.a.val()), s16(rom.sp.val())),
                        activate(&t, h),
                        "{act:?}, h = {h}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_registered_input_answers_two_clocks_later() {
        for act in Activation::ALL {
            let f = Format::new(3, 4);
            let t = ActivationTable::new(act, f);
            let mut rom = ActivationRom::new(t.clone()).with_registered_input(true);
            rom.connect_all();
            let hs: Vec<i32> = (f.min()..=f.max()).rev().step_by(3).collect();
            for (i, &h) in hs.iter().enumerate() {
                rom.h.next = b16(h);
                tick(&mut rom, |r| &mut r.clock);
                // the first clock looks up the index register's initial h = 0
                let want = if i == 0 { 0 } else { hs[i - 1] };
                assert_eq!(
                    (s16(rom.a.val()), s16(rom.sp.val())),
                    activate(&t, want),
                    "{act:?}, clock {i}"
                );
            }
        }
    }

    #[test]
    fn mirror_reproduces_every_table_entry() {
        for act in table_activations() {
            for (i, fr) in [(2, 7), (3, 12), (3, 4), (0, 9), (7, 8), (2, 13), (1, 1)] {
                let t = ActivationTable::new(act, Format::new(i, fr));
                let m = Mirror::of(&t);
                for idx in 0..t.sigma.len() {
                    assert_eq!(
                        m.lookup(&t, idx),
                        (t.sigma[idx], t.sigma_prime[idx]),
                        "{act:?}, format ({i}, {fr}), index {idx}"
                    );
                }
                if act == Activation::Sigmoid {
                    assert!(m.fixes.len() < m.half, "the mirror should save entries");
                }
            }
        }
    }

    /// Icarus evaluates the Verilog function for every 16-bit pre-activation of the format.
    #[test]
    fn rom_verilog_matches_the_table_under_icarus() {
        for act in Activation::ALL {
            for (i, fr) in [(3, 12), (2, 7), (3, 4)] {
                let f = Format::new(i, fr);
                let t = ActivationTable::new(act, f).with_relu_gate(ReluGate::Clipped);
                let tb = format!(
                    "module tb;\n{}\ninteger x;\nreg [31:0] r;\ninitial begin\n    for (x = {}; x <= {}; x = x + 1) begin\n        r = act_rom(x[15:0]);\n        $display(\"%0d %0d\", r[31:16], r[15:0]);\n    end\nend\nendmodule\n",
                    verilog_function("rom", &t),
                    f.min(),
                    f.max()
                );
                let name = format!("act-rom-{}-{i}-{fr}", act.name());
                let Some(text) = crate::testing::icarus_run(&tb, &name) else {
                    return;
                };
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len() as i32, f.max() - f.min() + 1);
                for (h, line) in (f.min()..=f.max()).zip(lines) {
                    let (a, sp) = activate(&t, h);
                    assert_eq!(
                        line,
                        format!("{} {}", a as u16, sp as u16),
                        "{act:?}, format ({i}, {fr}), h = {h}"
                    );
                }
            }
        }
    }

    #[test]
    fn rom_verilog_is_clean() {
        let f = Format::new(2, 7);
        for act in Activation::ALL {
            for registered in [false, true] {
                yosys_check(
                    &ActivationRom::new(ActivationTable::new(act, f))
                        .with_registered_input(registered),
                    &format!("act_rom_{}_{registered}", act.name()),
                );
            }
        }
    }
}
