//! Address-range guards without carry chains. The memories' Verilog guards every address
//! against its depth (`a < 16'dN`: an out-of-range read gives 0, a write is dropped, as the
//! models do). yosys builds each such comparison as a 16-stage carry chain, and the guards
//! sit in the prefetch address paths, the slowest on the iCE40. A guard instead tests the
//! bits above N's width for zero and the bits below it with a small table (or a comparison
//! of those bits only): [`Below`] is that guard as a block, and `with_guards` turns each
//! `(x < 16'dN)` of a module's text into the same test as a Verilog function `below_N(x)`.

use rust_hdl::core::prelude::*;
use std::collections::BTreeSet;

/// How `a < n` is tested: `a`'s bits from `width` up must be zero, and the bits below, from
/// `shift` up, index a table of at most 64 entries; or, when no small table does, they are
/// compared with `n`.
struct Plan {
    width: usize,
    low: Low,
}

enum Low {
    /// `n` is `2^width`: every value of the low bits is below it.
    All,
    Table {
        shift: usize,
        table: u64,
    },
    Compare,
}

fn plan(n: usize) -> Plan {
    let width = crate::bits_for(n.max(2) - 1) as usize;
    let table = |shift: usize| {
        let entries = 1usize << (width - shift);
        let table = (0..entries)
            .filter(|&i| i < n >> shift)
            .fold(0u64, |t, i| t | 1 << i);
        Low::Table { shift, table }
    };
    let low = if n >= 1 << width {
        Low::All
    } else if width <= 6 {
        table(0)
    } else if width - (n.trailing_zeros() as usize) <= 6 {
        // a multiple of 2^t: a < n exactly when a's bits from t up are below n >> t, so the
        // bits under t drop out and the rest fits one small table (80 rows: 3 bits, not 7)
        table(n.trailing_zeros() as usize)
    } else {
        Low::Compare
    };
    Plan { width, low }
}

/// `ok = a < n` for a 16-bit `a` and a constant `n`, built as the plan says.
#[derive(LogicBlock)]
pub struct Below {
    pub a: Signal<In, Bits<16>>,
    pub ok: Signal<Out, Bit>,
    /// `a`'s bits from the plan's width up.
    high: Constant<Bits<16>>,
    /// `a`'s bits below the plan's width.
    low: Constant<Bits<16>>,
    shift: Constant<Bits<16>>,
    /// Entry `i` is set when `i << shift` is below `n`.
    below_table: Constant<Bits<64>>,
    use_table: Constant<Bit>,
    n: Constant<Bits<16>>,
    entry: Signal<Local, Bits<64>>,
}

impl Below {
    pub fn new(n: usize) -> Below {
        // past 16 bits every address is below n
        let p = if n > 0xffff {
            Plan {
                width: 16,
                low: Low::All,
            }
        } else {
            plan(n)
        };
        let low_mask = (1u64 << p.width.min(16)) - 1;
        let (shift, table, use_table) = match p.low {
            Low::All => (0, 1, true),
            Low::Table { shift, table } => (shift, table, true),
            Low::Compare => (0, 0, false),
        };
        Below {
            a: Default::default(),
            ok: Default::default(),
            high: Constant::new((0xffff & !low_mask).into()),
            low: Constant::new(
                if matches!(p.low, Low::All) {
                    0
                } else {
                    low_mask
                }
                .into(),
            ),
            shift: Constant::new((shift as u64).into()),
            below_table: Constant::new(table.into()),
            use_table: Constant::new(use_table),
            n: Constant::new((n.min(0xffff) as u64).into()),
            entry: Default::default(),
        }
    }
}

impl Logic for Below {
    #[hdl_gen]
    fn update(&mut self) {
        self.entry.next =
            self.below_table.val() >> ((self.a.val() & self.low.val()) >> self.shift.val());
        if self.use_table.val() {
            self.ok.next = ((self.a.val() & self.high.val()) == 0) & self.entry.val().get_bit(0);
        } else {
            self.ok.next = ((self.a.val() & self.high.val()) == 0)
                & ((self.a.val() & self.low.val()) < self.n.val());
        }
    }
}

/// Verilog function `below_N(a)`: `a < n` for a 16-bit unsigned `a`.
pub fn verilog_below(n: usize) -> String {
    let p = plan(n);
    let b = p.width;
    let high = if b >= 16 {
        "1'b1".to_string()
    } else {
        format!("(a[15:{b}] == {}'d0)", 16 - b)
    };
    let low = match p.low {
        Low::All => "1'b1".to_string(),
        Low::Table { shift, table } => {
            let entries = 1usize << (b - shift);
            let mask: String = (0..entries)
                .rev()
                .map(|i| if table >> i & 1 == 1 { '1' } else { '0' })
                .collect();
            format!("{entries}'b{mask} >> a[{}:{shift}]", b - 1)
        }
        Low::Compare => format!("(a[{}:0] < {b}'d{n})", b - 1),
    };
    format!(
        "function below_{n};\n    input [15:0] a;\n    reg [63:0] m;\n    begin\n        m = {low};\n        below_{n} = {high} && m[0];\n    end\nendfunction\n"
    )
}

/// `text` with every `(x < 16'dN)`, `x` a plain signal name, written as `below_N(x)`, and the
/// functions it then needs in front.
pub fn with_guards(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut used = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find(" < 16'd") {
        // the signal name before, the number after, and the parentheses around both
        let before = &rest[..i];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .map_or(0, |p| p + 1);
        let digits: String = rest[i + 7..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let end = i + 7 + digits.len();
        let wrapped = start > 0
            && before.as_bytes()[start - 1] == b'('
            && start < i
            && rest[end..].starts_with(')')
            && !digits.is_empty();
        if !wrapped {
            out += &rest[..i + 7];
            rest = &rest[i + 7..];
            continue;
        }
        let n: usize = digits.parse().unwrap();
        used.insert(n);
        out += &rest[..start - 1];
        out += &format!("below_{n}({})", &rest[start..i]);
        rest = &rest[end + 1..];
    }
    out += rest;
    let mut f: String = used.into_iter().map(verilog_below).collect();
    f += &out;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `below_N` against a plain comparison, in Icarus, for every 16-bit address.
    #[test]
    fn verilog_below_is_the_comparison_for_every_address() {
        for n in LIMITS {
            let tb = format!(
                "module tb;\n{}integer a;\ninteger bad;\ninitial begin\n    bad = 0;\n    for (a = 0; a < 65536; a = a + 1)\n        if (below_{n}(a[15:0]) != (a < {n})) bad = bad + 1;\n    $display(\"bad %0d\", bad);\nend\nendmodule\n",
                verilog_below(n)
            );
            let Some(out) = crate::testing::icarus_run(&tb, &format!("below-{n}")) else {
                return;
            };
            assert!(out.contains("bad 0"), "n = {n}: {out}");
        }
    }

    const LIMITS: [usize; 17] = [
        0, 1, 2, 3, 7, 10, 16, 40, 64, 80, 100, 640, 1000, 40000, 49152, 65535, 70000,
    ];

    /// The block's model and its Verilog (in Icarus), against a plain comparison for every
    /// 16-bit address.
    #[test]
    fn below_is_the_comparison_for_every_address() {
        for n in LIMITS {
            let mut b = Below::new(n);
            b.connect_all();
            for a in 0..=0xffffu64 {
                b.a.next = a.into();
                crate::testing::settle(&mut b);
                assert_eq!(b.ok.val(), (a as usize) < n, "{a} < {n}");
            }
            let tb = format!(
                "{}\nmodule tb;\nreg [15:0] a;\nwire ok;\ntop d(.a(a), .ok(ok));\ninteger i;\ninteger bad;\ninitial begin\n    bad = 0;\n    for (i = 0; i < 65536; i = i + 1) begin\n        a = i; #1;\n        if (ok != (i < {n})) bad = bad + 1;\n    end\n    $display(\"bad %0d\", bad);\nend\nendmodule\n",
                generate_verilog_unchecked(&b)
            );
            let Some(out) = crate::testing::icarus_run(&tb, &format!("below-block-{n}")) else {
                return;
            };
            assert!(out.contains("bad 0"), "n = {n}: {out}");
        }
        crate::testing::yosys_check(&Below::new(640), "below");
    }

    #[test]
    fn guards_are_rewritten_and_other_comparisons_kept() {
        let t = "x = (rd_addr$0 < 16'd10) && (k < 16'd7) ? a : (b + 1 < 16'd3);";
        let g = with_guards(t);
        assert!(
            g.contains("x = below_10(rd_addr$0) && below_7(k) ? a : (b + 1 < 16'd3);"),
            "{g}"
        );
        assert!(g.contains("function below_10;") && g.contains("function below_7;"));
        assert!(!g.contains("function below_3;"));
    }
}
