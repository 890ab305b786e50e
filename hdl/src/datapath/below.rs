//! Address-range guards without carry chains. The memories' Verilog guards every address
//! against its depth (`a < 16'dN`: an out-of-range read gives 0, a write is dropped, as the
//! models do). yosys builds each such comparison as a 16-stage carry chain, and the guards
//! sit in the prefetch address paths, the slowest on the iCE40: `with_guards` turns each
//! `(x < 16'dN)` of a module's text into `below_N(x)`, which tests the bits above N's width
//! for zero and the bits below it with a small table (or a comparison of those bits only).

use std::collections::BTreeSet;

/// Verilog function `below_N(a)`: `a < n` for a 16-bit unsigned `a`.
pub fn verilog_below(n: usize) -> String {
    let b = ((usize::BITS - n.max(2).saturating_sub(1).leading_zeros()) as usize).max(1);
    let high = if b >= 16 {
        "1'b1".to_string()
    } else {
        format!("(a[15:{b}] == {}'d0)", 16 - b)
    };
    let low = if n >= 1 << b {
        "1'b1".to_string()
    } else if b <= 6 {
        let mask: String = (0..1usize << b)
            .rev()
            .map(|i| if i < n { '1' } else { '0' })
            .collect();
        format!("{}'b{mask} >> a[{}:0]", 1usize << b, b - 1)
    } else if b - (n.trailing_zeros() as usize) <= 6 {
        // a multiple of 2^t: a < n exactly when a's bits from t up are below n >> t, so the
        // bits under t drop out and the rest fits one small table (80 rows: 3 bits, not 7)
        let t = n.trailing_zeros() as usize;
        let w = b - t;
        let mask: String = (0..1usize << w)
            .rev()
            .map(|i| if i < n >> t { '1' } else { '0' })
            .collect();
        format!("{}'b{mask} >> a[{}:{t}]", 1usize << w, b - 1)
    } else {
        format!("(a[{}:0] < {b}'d{n})", b - 1)
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
        for n in [
            0usize, 1, 2, 3, 7, 10, 16, 40, 64, 80, 100, 640, 1000, 40000, 49152,
        ] {
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
