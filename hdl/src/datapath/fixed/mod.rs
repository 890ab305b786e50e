//! Fixed-point multiply-round-saturate: the one arithmetic primitive of every lane.
//!
//! The Rust functions here are what the blocks' simulation models execute; the Verilog
//! functions are what their generated modules contain. Both follow `edgeflow_core::fixed`
//! step by step (exact 32-bit product, add `2^(frac-1)`, arithmetic shift, saturate).

use edgeflow_core::fixed::Format;
use rust_hdl::core::prelude::*;

#[inline(always)]
pub fn s16(b: Bits<16>) -> i32 {
    b.to_u16() as i16 as i32
}

#[inline(always)]
pub fn b16(x: i32) -> Bits<16> {
    Bits::<16>::from((x as u16) as u64)
}

#[inline(always)]
pub fn s32(b: Bits<32>) -> i64 {
    b.to_u32() as i32 as i64
}

#[inline(always)]
pub fn b32(x: i64) -> Bits<32> {
    Bits::<32>::from((x as i32 as u32) as u64)
}

#[inline(always)]
pub fn sat(f: Format, x: i64) -> i32 {
    x.clamp(f.min() as i64, f.max() as i64) as i32
}

#[inline(always)]
pub fn round_shift(x: i64, s: u32) -> i64 {
    if s == 0 {
        x
    } else {
        (x + (1i64 << (s - 1))) >> s
    }
}

#[inline(always)]
pub fn mul(f: Format, a: i32, b: i32) -> i32 {
    sat(f, round_shift(a as i64 * b as i64, f.frac_bits))
}

/// Verilog functions shared by every module that computes: `mul_rs` (multiply, round,
/// saturate), `mul_r` (FF's product rounded but not saturated: `Format::product_bits` bits,
/// sign-extended to 32; its activation operand is non-negative or at least -1.0), `sat32` (saturate a
/// 32-bit sum), `eta` (learning-rate shift with rounding), `sx` (a value's `width` bits,
/// sign-extended to the 16-bit bus). With registered products the multiply and what follows
/// are split at the product register: `mul_raw` (product plus rounding constant, what the
/// register holds) then `sat_rs` is `mul_rs` and `rs` is `mul_r`; `mul_eta_raw` then
/// `eta_rs` is `eta(mul_rs(..))`.
///
/// Every value is a format value held sign-extended in 16 bits (`edgeflow_core::fixed`), so
/// the operands are taken at the format's width and results are built at that width and
/// sign-extended: a 10-bit format multiplies 10×10 bits instead of 16×16, and the synthesis
/// sees the upper bus bits as copies of the sign, so the adders behind stay narrow too. The
/// values are the same as with 16-bit operands.
/// A signed 32-bit Verilog literal.
fn lit32(x: i64) -> String {
    if x < 0 {
        format!("-32'sd{}", x.unsigned_abs())
    } else {
        format!("32'sd{x}")
    }
}

pub fn verilog_functions(f: Format, shift: u32) -> String {
    let w = f.width;
    let round = if f.frac_bits == 0 {
        "0".to_string()
    } else {
        format!("(32'sd1 <<< {})", f.frac_bits - 1)
    };
    let eround = if shift == 0 {
        "0".to_string()
    } else {
        format!("(32'sd1 <<< {})", shift - 1)
    };
    // `mul_eta_raw` and `eta_rs` are `eta(mul_rs(a, b))` with the two roundings as one:
    // ⌊(⌊(p + 2^(F-1)) / 2^F⌋ + 2^(s-1)) / 2^s⌋ = ⌊(p + 2^(F-1) + 2^(F+s-1)) / 2^(F+s)⌋
    // (⌊⌊x⌋/n⌋ = ⌊x/n⌋ for whole n), and since `eta` is monotone the saturation between them
    // becomes a clamp to [eta(min), eta(max)] after it. The constant then sits in the MAC16's
    // adder with the product, and one carry chain less follows the multiplier.
    let k2 = format!(
        "{}'sd{}",
        32,
        (if f.frac_bits > 0 {
            1i64 << (f.frac_bits - 1)
        } else {
            0
        }) + (if shift > 0 {
            1i64 << (f.frac_bits + shift - 1)
        } else {
            0
        })
    );
    let (emax, eneg) = (
        round_shift(f.max() as i64, shift),
        -round_shift(f.min() as i64, shift),
    );
    // eta's range is [-2^m, 2^m - 1] (s = 0) or [-2^m, 2^m] (s > 0): "in range" as a
    // sign-bit reduction over q[31:m] (and at most two equalities for other ranges), not two
    // comparisons' carry chains right behind the multiplier
    let mut m = 0u32;
    while m < 31 && (1i64 << (m + 1)) <= eneg && (1i64 << (m + 1)) - 1 <= emax {
        m += 1;
    }
    // (a value at either bound needs no equality: the clamp gives it back)
    let extra: Vec<i64> = (-eneg..-(1i64 << m))
        .chain((1i64 << m)..=emax)
        .filter(|&v| v != emax && v != -eneg)
        .take(3)
        .collect();
    let eta_in = if eneg >= 1 && extra.len() <= 2 {
        let mut c = format!("(&q[31:{m}]) || !(|q[31:{m}])");
        for v in extra {
            c += &format!(" || (q == {})", lit32(v));
        }
        c
    } else {
        format!("(q <= {emax}) && (q >= -{eneg})")
    };
    format!(
        "
function signed [15:0] sx;
    input signed [{wm}:0] x;
    sx = x;
endfunction

function signed [15:0] sat32;
    input signed [31:0] x;
    reg signed [{wm}:0] y;
    begin
        // in range exactly when the bits from the format's sign bit up are all equal: a
        // reduction, not the carry chains of two comparisons
        if ((&x[31:{wm}]) || !(|x[31:{wm}])) y = x[{wm}:0];
        else if (x[31]) y = -{neg};
        else y = {max};
        sat32 = y;
    end
endfunction

function signed [15:0] mul_rs;
    input signed [{wm}:0] a;
    input signed [{wm}:0] b;
    reg signed [{pm}:0] p;
    reg signed [{qm}:0] q;
    reg signed [{wm}:0] y;
    begin
        p = a * b;
        q = ($signed({{p[{pm}], p}}) + {round}) >>> {frac};
        if ((&q[{qm}:{wm}]) || !(|q[{qm}:{wm}])) y = q[{wm}:0];
        else if (q[{qm}]) y = -{neg};
        else y = {max};
        mul_rs = y;
    end
endfunction

function signed [31:0] mul_raw;
    input signed [{wm}:0] a;
    input signed [{wm}:0] b;
    mul_raw = a * b + {round};
endfunction

function signed [15:0] sat_rs;
    input signed [31:0] pr;
    reg signed [31:0] q;
    reg signed [{wm}:0] y;
    begin
        q = pr >>> {frac};
        if ((&q[31:{wm}]) || !(|q[31:{wm}])) y = q[{wm}:0];
        else if (q[31]) y = -{neg};
        else y = {max};
        sat_rs = y;
    end
endfunction

function signed [31:0] mul_r;
    input signed [{wm}:0] a;
    input signed [{wm}:0] b;
    reg signed [{pm}:0] p;
    reg signed [{qm}:0] q;
    reg signed [{prm}:0] y;
    begin
        p = a * b;
        q = ($signed({{p[{pm}], p}}) + {round}) >>> {frac};
        y = q[{prm}:0];
        mul_r = y;
    end
endfunction

function signed [31:0] rs;
    input signed [31:0] pr;
    reg signed [31:0] q;
    reg signed [{prm}:0] y;
    begin
        q = pr >>> {frac};
        y = q[{prm}:0];
        rs = y;
    end
endfunction

function signed [31:0] mul_eta_raw;
    input signed [{wm}:0] a;
    input signed [{wm}:0] b;
    mul_eta_raw = a * b + {k2};
endfunction

function signed [15:0] eta_rs;
    input signed [31:0] pr;
    reg signed [31:0] q;
    reg signed [{wm}:0] y;
    begin
        q = pr >>> {fs};
        if ({eta_in}) y = q[{wm}:0];
        else if (q[31]) y = -{eneg};
        else y = {emax};
        eta_rs = y;
    end
endfunction

function signed [15:0] eta;
    input signed [{wm}:0] x;
    reg signed [31:0] q;
    reg signed [{wm}:0] y;
    begin
        q = ($signed(x) + {eround}) >>> {shift};
        y = q[{wm}:0];
        eta = y;
    end
endfunction
",
        wm = w - 1,
        pm = 2 * w - 1,
        qm = 2 * w,
        prm = f.product_bits() - 1,
        max = f.max(),
        neg = -(f.min() as i64),
        round = round,
        frac = f.frac_bits,
        eround = eround,
        shift = shift,
        k2 = k2,
        fs = f.frac_bits + shift,
        emax = emax,
        eneg = eneg,
        eta_in = eta_in,
    )
}

mod leaves;
pub use leaves::{LaneProduct, NeuronAccumulator, RightDelta};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::settle;
    use edgeflow_core::fixed::FfProducts;

    #[test]
    fn mul_round_sat_matches_the_contract() {
        for f in [
            Format::new(2, 7),
            Format::new(3, 12),
            Format::new(0, 5),
            Format::new(1, 0),
        ] {
            let mut m = LaneProduct::new(f, FfProducts::Saturated);
            m.connect_all();
            let mut r = edgeflow_core::rng::SplitMix64::new(5);
            for i in 0..4000 {
                let (a, b) = if i < 16 {
                    (
                        [f.min(), f.max(), 0, -1][i % 4],
                        [f.min(), f.max(), 1, -1][i / 4],
                    )
                } else {
                    let span = (f.max() - f.min() + 1) as usize;
                    (
                        f.min() + r.below(span) as i32,
                        f.min() + r.below(span) as i32,
                    )
                };
                m.w.next = b16(a);
                m.a.next = b16(b);
                settle(&mut m);
                assert_eq!(s32(m.p.val()), f.mul(a, b) as i64, "{a} * {b} in {f:?}");
            }
        }
    }

    #[test]
    fn mul_round_sat_verilog_is_clean() {
        crate::testing::yosys_check(
            &LaneProduct::new(Format::new(2, 7), FfProducts::Saturated),
            "mul_round_sat",
        );
    }

    /// The Verilog `mul_rs`, its registered-product form `sat_rs(mul_raw(..))`, and UP's
    /// `eta_rs(mul_eta_raw(..))` against the contract's `Format::mul` and `Format::eta`, in
    /// Icarus, at the edges of every format's range and at random.
    #[test]
    fn verilog_mul_rs_matches_the_contract_in_icarus() {
        // (int bits, frac bits): digits' Q3.12, a 10-bit format, no fraction, no integer part
        // with a learning-rate shift each, for the registered-product forms
        for (ib, fb, shift) in [(3, 12, 2), (2, 7, 0), (7, 0, 3), (0, 7, 5), (1, 14, 1)] {
            let f = Format::new(ib, fb);
            let mut r = edgeflow_core::rng::SplitMix64::new(9);
            let span = (f.max() - f.min() + 1) as usize;
            let mut pairs = vec![];
            for a in [f.min(), f.min() + 1, -1, 0, 1, f.max() - 1, f.max()] {
                for b in [f.min(), f.min() + 1, -1, 0, 1, f.max() - 1, f.max()] {
                    pairs.push((a, b));
                }
            }
            for _ in 0..3000 {
                pairs.push((
                    f.min() + r.below(span) as i32,
                    f.min() + r.below(span) as i32,
                ));
            }
            let w = f.width;
            let mut v = format!(
                "module tb;\n{}\ninitial begin\n",
                verilog_functions(f, shift)
            );
            let lit = |x: i32| {
                if x < 0 {
                    format!("-{w}'sd{}", -x)
                } else {
                    format!("{w}'sd{x}")
                }
            };
            for (a, b) in &pairs {
                let (a, b) = (lit(*a), lit(*b));
                v += &format!(
                    "    $display(\"%0d %0d %0d\", mul_rs({a}, {b}), sat_rs(mul_raw({a}, {b})), eta_rs(mul_eta_raw({a}, {b})));\n"
                );
            }
            // sat32 at the range's edges, beyond them, at the 32-bit extremes and at random
            let mut sums: Vec<i64> = vec![i32::MIN as i64, i32::MAX as i64, -1, 0, 1];
            for e in [f.min() as i64, f.max() as i64] {
                sums.extend([e - 2, e - 1, e, e + 1, e + 2]);
            }
            for _ in 0..500 {
                let x = r.below(1 << 32) as i64 - (1 << 31);
                sums.extend([x, x >> r.below(24)]);
            }
            for x in &sums {
                v += &format!("    $display(\"s %0d\", sat32({}));\n", lit32(*x));
            }
            // eta_rs's clamp at and around both ends of eta's range, where the reduction meets
            // the clamp (random products rarely land there)
            let fs = f.frac_bits + shift;
            let (emax, emin) = (f.eta(f.max(), shift) as i64, f.eta(f.min(), shift) as i64);
            let mut raws: Vec<i64> = vec![];
            for e in [emin, emax] {
                for d in -2..=2 {
                    for lo in [0, 1, (1i64 << fs) - 1] {
                        raws.push((((e + d) << fs) + lo).clamp(i32::MIN as i64, i32::MAX as i64));
                    }
                }
            }
            for x in &raws {
                v += &format!("    $display(\"e %0d\", eta_rs({}));\n", lit32(*x));
            }
            // FF's rounded products, whose activation operand is non-negative or at least -1.0
            // (`Format::product_bits`)
            let ff_pairs: Vec<(i32, i32)> =
                pairs.iter().filter(|p| p.1 >= -f.one()).copied().collect();
            for (a, b) in &ff_pairs {
                let (a, b) = (lit(*a), lit(*b));
                v += &format!("    $display(\"r %0d\", mul_r({a}, {b}));\n");
                v += &format!("    $display(\"q %0d\", rs(mul_raw({a}, {b})));\n");
            }
            v += "end\nendmodule\n";
            let Some(out) = crate::testing::icarus_run(&v, &format!("mul-rs-{ib}-{fb}")) else {
                return;
            };
            let got = crate::testing::icarus_rows(&out, 3);
            assert_eq!(got.len(), pairs.len(), "{f:?}");
            for ((a, b), y) in pairs.iter().zip(&got) {
                let m = f.mul(*a, *b);
                assert_eq!(y[0], m, "mul_rs({a}, {b}) in {f:?}");
                assert_eq!(y[1], m, "sat_rs(mul_raw({a}, {b})) in {f:?}");
                assert_eq!(
                    y[2],
                    f.eta(m, shift),
                    "eta_rs(mul_eta_raw({a}, {b})) in {f:?}, shift {shift}"
                );
            }
            // the values printed after a tag
            let tagged = |tag: &str| -> Vec<i64> {
                out.lines()
                    .filter_map(|l| l.strip_prefix(tag))
                    .map(|x| x.trim().parse().unwrap())
                    .collect()
            };
            let sat = tagged("s ");
            assert_eq!(sat.len(), sums.len(), "{f:?}");
            for (x, y) in sums.iter().zip(&sat) {
                assert_eq!(*y, f.saturate(*x) as i64, "sat32({x}) in {f:?}");
            }
            for tag in ["r ", "q "] {
                let got = tagged(tag);
                assert_eq!(got.len(), ff_pairs.len(), "{f:?}");
                for ((a, b), y) in ff_pairs.iter().zip(&got) {
                    assert_eq!(*y, f.mul_rounded(*a, *b) as i64, "{tag}({a}, {b}) in {f:?}");
                }
            }
            let eta = tagged("e ");
            assert_eq!(eta.len(), raws.len(), "{f:?}");
            for (x, y) in raws.iter().zip(&eta) {
                assert_eq!(
                    *y,
                    (x >> fs).clamp(emin, emax),
                    "eta_rs({x}) in {f:?}, shift {shift}"
                );
            }
        }
    }
}
