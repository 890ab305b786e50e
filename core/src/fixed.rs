//! Fixed-point arithmetic: the contract every backend matches bit for bit.
//!
//! A value is signed, `width = 1 + int_bits + frac_bits` bits (≤ 16), held sign-extended
//! in an `i32` here (an `i16` in memories, a `Signed<16>` in the RTL).
//!
//! The exact order of every rounding and saturation, in one place:
//!
//! 1. **Product** `mul(a, b)`: the exact 32-bit product `a·b`, plus `2^(frac-1)` (round half
//!    up; nothing when `frac = 0`), arithmetic shift right by `frac`, then saturate to the
//!    value range. Never wraps.
//! 2. **Sum**: the rounded products of one neuron (and its bias, or the partial deltas of one
//!    left neuron) are added exactly in a wide (`i32`) accumulator and saturated once, when the
//!    sum is written back (`saturate`). FF's products are under [`FfProducts::Rounded`] (the
//!    default) rounded but not saturated ([`Format::mul_rounded`], at most
//!    [`Format::product_bits`] bits): a product of two large ReLU activations and weights can
//!    exceed the format's range, and saturating it before the sum discards how far it is out
//!    of range, where the other products of the neuron may bring the sum back. Under
//!    [`FfProducts::Saturated`] they are `mul` as in step 1. Back-propagated products are
//!    always `mul`. The accumulator cannot overflow: validation keeps layer sizes ≤ 32768, so
//!    `fan-in · 2^15 + 2^15 < 2^31`, and with rounded FF products
//!    `fan-in · 2^(product_bits − 1) + 2^15 < 2^31` (`Spec::validate`).
//! 3. **Learning-rate shift** `eta(x, shift)`: `x + 2^(shift-1)` (nothing when `shift = 0`),
//!    arithmetic shift right by `shift`. The result is in range by construction.
//! 4. **Update** under `rounding = "nearest"`: `w' = saturate(w − eta(mul(δ, a), shift))`,
//!    `b' = saturate(b − eta(δ, shift))`. Under `rounding = "stochastic"` one rounding of the
//!    exact product with random bits from the lane's stream: see [`crate::rounding`].
//! 5. **Activation** of a saturated pre-activation `h` (`crate::activation`): a table
//!    activation (the sigmoid) from its [`ActivationTable`] (σ and σ′ both from the table,
//!    indexed by the top `index_bits` of `h`), or ReLU
//!    `max(h, 0)` with σ′ a gate (`h > 0`) rather than a multiplication by 1, which the format
//!    may not even represent when `int_bits = 0`. Under [`ReluGate::Clipped`] (the default)
//!    the gate is also shut where `h` is the format's maximum: the activation is clipped
//!    there, so pushing it higher changes nothing, and an open gate let saturated neurons keep
//!    growing their weights (deep ReLU networks stopped learning).
//! 6. **Output delta** `δ_L = saturate(a_L − y)` with `y = saturate(1.0)` for the label's class,
//!    `0` elsewhere; under [`OutputDelta::Clipped`] (the default) it is `0` instead where the
//!    output already sits at the sigmoid table's end on its target's side (`a_L` equals the
//!    table's last entry and the class is the label's, or its first entry and it is not).
//!    The output's pre-activation saturates at the format's range, so such an output cannot
//!    move any closer to its target, and the plain `a − y` would keep pushing its weights
//!    and bias to the edge of their range for nothing.
//! 7. **Hidden delta** `δ = mul(σ′(h), saturate(Σ mul(w, δ_right)))` for a table activation, and
//!    `δ = h > 0 ? saturate(Σ mul(w, δ_right)) : 0` for ReLU.
//!
//! Before all of these, an **input** `x ∈ [0, 1]` becomes a value once, on the host, by
//! [`Format::quantize_input`] at the spec's `input_bits` (`Spec::input_bits`).

pub use crate::activation::{
    activate, hidden_delta, Activation, ActivationTable, ReluGate, MAX_TABLE_INDEX_BITS,
};
use serde::{Deserialize, Serialize};

/// A signed fixed-point format: 1 sign bit, `int_bits` integer bits, `frac_bits` fraction bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Format {
    pub width: u32,
    pub int_bits: u32,
    pub frac_bits: u32,
}

impl Format {
    pub const fn new(int_bits: u32, frac_bits: u32) -> Self {
        Format {
            width: 1 + int_bits + frac_bits,
            int_bits,
            frac_bits,
        }
    }

    /// Largest representable raw value, `2^(width-1) - 1`.
    #[inline(always)]
    pub const fn max(&self) -> i32 {
        (1i32 << (self.width - 1)) - 1
    }

    /// Smallest (most negative) representable raw value, `-2^(width-1)`.
    #[inline(always)]
    pub const fn min(&self) -> i32 {
        -(1i32 << (self.width - 1))
    }

    /// The raw value of 1.0, saturated (1.0 is not representable when `int_bits = 0`).
    pub fn one(&self) -> i32 {
        self.saturate(1i64 << self.frac_bits)
    }

    #[inline(always)]
    pub fn saturate(&self, x: i64) -> i32 {
        x.clamp(self.min() as i64, self.max() as i64) as i32
    }

    /// Step 1 of the contract: exact product, round half up, shift, saturate.
    #[inline(always)]
    pub fn mul(&self, a: i32, b: i32) -> i32 {
        let p = a as i64 * b as i64;
        self.saturate(round_shift(p, self.frac_bits))
    }

    /// Bits of an FF product rounded but not saturated (step 2): FF's activation operand is
    /// never negative (inputs, ReLU) or at most 1.0 in magnitude (a table activation's values
    /// are a bounded function's), so `|w·a| < 2^(2·width − 2)` and after the shift by
    /// `frac_bits` the product fits `width + int_bits` bits with its sign.
    pub const fn product_bits(&self) -> u32 {
        self.width + self.int_bits
    }

    /// Step 2's FF product under [`FfProducts::Rounded`]: exact product, round half up,
    /// shift; not saturated.
    #[inline(always)]
    pub fn mul_rounded(&self, a: i32, b: i32) -> i32 {
        round_shift(a as i64 * b as i64, self.frac_bits) as i32
    }

    /// FF's product under `rule` (step 2).
    #[inline(always)]
    pub fn ff_product(&self, rule: FfProducts, a: i32, b: i32) -> i32 {
        match rule {
            FfProducts::Rounded => self.mul_rounded(a, b),
            FfProducts::Saturated => self.mul(a, b),
        }
    }

    /// Step 3 of the contract: multiply by `η = 2^-shift` with the same rounding.
    #[inline(always)]
    pub fn eta(&self, x: i32, shift: u32) -> i32 {
        round_shift(x as i64, shift) as i32
    }

    /// Quantize a real number: round half up, saturate.
    pub fn quantize(&self, x: f64) -> i32 {
        let scaled = (x * (1u64 << self.frac_bits) as f64 + 0.5).floor();
        if scaled.is_nan() {
            return 0;
        }
        self.saturate(scaled.clamp(i64::MIN as f64 / 2.0, i64::MAX as f64 / 2.0) as i64)
    }

    /// An input `x` (scaled to `[0, 1]`; clipped there) at `bits` bits of precision: the code
    /// `q = min(⌊x·2^(bits−1) + 1/2⌋, 2^(bits−1))`, i.e. the value `q·2^−(bits−1)` (1.0 is
    /// exact, and one bit gives {0, 1.0}), brought to this format: shifted left when the
    /// format has the fraction bits for it, else shifted right rounding half up as in
    /// [`round_shift`]; then saturated (1.0 saturates when `int_bits = 0`). Every data path
    /// encodes its inputs here, so every backend receives the same raw inputs.
    pub fn quantize_input(&self, x: f64, bits: u32) -> i32 {
        assert!((1..=16).contains(&bits), "input_bits {bits} outside 1..=16");
        let steps = 1i64 << (bits - 1);
        let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        let q = ((x * steps as f64 + 0.5).floor() as i64).min(steps);
        let raw = if bits - 1 <= self.frac_bits {
            q << (self.frac_bits - (bits - 1))
        } else {
            round_shift(q, bits - 1 - self.frac_bits)
        };
        self.saturate(raw)
    }

    pub fn to_f64(&self, raw: i32) -> f64 {
        raw as f64 / (1u64 << self.frac_bits) as f64
    }
}

/// `(x + 2^(s-1)) >> s` (arithmetic), and `x` itself when `s = 0`.
#[inline(always)]
pub fn round_shift(x: i64, s: u32) -> i64 {
    if s == 0 {
        x
    } else {
        (x + (1i64 << (s - 1))) >> s
    }
}

/// FF's products before they are summed (step 2 of the contract).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FfProducts {
    /// Rounded and not saturated; only the neuron's sum saturates.
    #[default]
    Rounded,
    /// Each product saturated to the format before the sum, as back-propagation does.
    Saturated,
}

/// The output layer's delta where an output has reached the end of the sigmoid table on its
/// target's side (step 6 of the contract).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputDelta {
    /// `0`: the clipped output cannot get closer to its target, so it asks for no change.
    #[default]
    Clipped,
    /// `a − y` everywhere, as if the output were not clipped.
    Plain,
}

/// The table entries at which an output's delta stops under [`OutputDelta::Clipped`]:
/// `(first, last)` entry of the sigmoid table; `None` under [`OutputDelta::Plain`].
pub fn output_delta_ends(rule: OutputDelta, table: &ActivationTable) -> Option<(i32, i32)> {
    match rule {
        OutputDelta::Clipped => Some((table.sigma[0], *table.sigma.last().unwrap())),
        OutputDelta::Plain => None,
    }
}

/// Step 6 of the contract: the delta of an output with activation `a`, `target` when its class
/// is the label's; `ends` from [`output_delta_ends`].
#[inline(always)]
pub fn output_delta(format: Format, ends: Option<(i32, i32)>, a: i32, target: bool) -> i32 {
    if let Some((first, last)) = ends {
        if (target && a == last) || (!target && a == first) {
            return 0;
        }
    }
    let y = if target { format.one() } else { 0 };
    format.saturate(a as i64 - y as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact rational reference: floor(p / 2^f + 1/2) computed with integer division on
    /// non-negative numerators only, so it does not share the shift-based code path.
    fn rational_round(p: i64, f: u32) -> i64 {
        if f == 0 {
            return p;
        }
        let d = 1i64 << f;
        let num = 2 * p + d; // (p/d + 1/2) = (2p + d) / (2d)
        num.div_euclid(2 * d)
    }

    #[test]
    fn mul_matches_rational_rounding_for_all_8bit_pairs() {
        let f = Format::new(2, 5);
        for a in f.min()..=f.max() {
            for b in f.min()..=f.max() {
                let want =
                    rational_round(a as i64 * b as i64, 5).clamp(f.min() as i64, f.max() as i64);
                assert_eq!(f.mul(a, b) as i64, want, "{a} * {b}");
            }
        }
    }

    #[test]
    fn rounded_products_keep_what_saturated_ones_lose() {
        // 2.7: 3.0·3.0 = 9.0 and −3.0·2.0 = −6.0, both outside ±4
        let f = Format::new(2, 7);
        assert_eq!(f.product_bits(), 12);
        assert_eq!(f.mul_rounded(384, 384), 9 * 128);
        assert_eq!(f.mul_rounded(-384, 256), -6 * 128);
        assert_eq!(f.ff_product(FfProducts::Saturated, 384, 384), 511);
        assert_eq!(f.ff_product(FfProducts::Saturated, -384, 256), -512);
        assert_eq!(f.ff_product(FfProducts::Rounded, 384, 384), 1152);
        // rounded half up like mul: 1·1 = 2^-14 rounds to 0, 64·1 = 2^-8 rounds to 2^-7
        assert_eq!(f.mul_rounded(1, 1), 0);
        assert_eq!(f.mul_rounded(64, 1), 1);
        assert_eq!(f.mul_rounded(-64, 1), 0);
        // FF's activations are never negative, so the extremes are −512·511 and 511·511,
        // which fit product_bits with its sign: −2044 and 2040 of ±2048
        assert_eq!(f.mul_rounded(-512, 511), -2044);
        assert_eq!(f.mul_rounded(511, 511), 2040);
    }

    #[test]
    fn mul_saturates_both_ways_and_at_most_negative() {
        let f = Format::new(2, 7); // 10 bits, the published format
        assert_eq!((f.min(), f.max()), (-512, 511));
        // (-4) * (-4) = 16, far above 3.99: saturates to max, never wraps.
        assert_eq!(f.mul(f.min(), f.min()), f.max());
        assert_eq!(f.mul(f.max(), f.min()), f.min());
        assert_eq!(f.mul(f.max(), f.max()), f.max());
        // 16-bit extremes fit the 32-bit product.
        let w = Format::new(0, 15);
        assert_eq!(w.mul(-32768, -32768), 32767);
        assert_eq!(w.mul(-32768, 32767), -32767);
    }

    #[test]
    fn ties_round_half_up_including_negative_ties() {
        let f = Format::new(3, 4);
        // 0.5 ulp ties: 1 * 8 = 8 = 0.5 ulp → rounds up to 1; -8 → rounds up to 0.
        assert_eq!(f.mul(1, 8), 1);
        assert_eq!(f.mul(-1, 8), 0);
        assert_eq!(f.mul(-3, 8), -1); // -1.5 ulp → -1
        assert_eq!(f.eta(3, 1), 2); // 1.5 → 2
        assert_eq!(f.eta(-3, 1), -1); // -1.5 → -1
        assert_eq!(f.eta(-1, 3), 0); // -0.125 → 0
        assert_eq!(f.eta(7, 0), 7);
    }

    #[test]
    fn eta_matches_rational_rounding() {
        for x in -1000..1000 {
            for s in 0..6 {
                assert_eq!(round_shift(x, s), rational_round(x, s), "{x} >> {s}");
            }
        }
    }

    #[test]
    fn one_saturates_when_not_representable() {
        assert_eq!(Format::new(0, 7).one(), 127);
        assert_eq!(Format::new(2, 7).one(), 128);
    }

    #[test]
    fn quantize_rounds_half_up_and_saturates() {
        let f = Format::new(2, 7);
        assert_eq!(f.quantize(0.5 / 128.0), 1);
        assert_eq!(f.quantize(-0.5 / 128.0), 0);
        assert_eq!(f.quantize(100.0), 511);
        assert_eq!(f.quantize(-100.0), -512);
    }

    #[test]
    fn inputs_are_codes_of_input_bits_shifted_into_the_format() {
        let f = Format::new(2, 7);
        // one bit: {0, 1.0}, the boundary at 1/2 rounding up
        assert_eq!(f.quantize_input(0.49, 1), 0);
        assert_eq!(f.quantize_input(0.5, 1), 128);
        assert_eq!(f.quantize_input(1.0, 1), 128);
        // three bits: quarters; 0.3·4 + 1/2 = 1.7 → code 1 → 1/4 = 32 raw
        assert_eq!(f.quantize_input(0.3, 3), 32);
        assert_eq!(f.quantize_input(0.375, 3), 64);
        // ten bits at seven fraction bits: code ⌊0.3·512 + 1/2⌋ = 154, then 154/4 rounded half
        // up = 39 (one rounding directly to the format would give 38)
        assert_eq!(f.quantize_input(0.3, 10), 39);
        assert_eq!(f.quantize(0.3), 38);
        assert_eq!(f.quantize_input(1.0, 16), 128);
        // clipped into [0, 1] first
        assert_eq!(f.quantize_input(-0.2, 4), 0);
        assert_eq!(f.quantize_input(7.0, 4), 128);
        // 1.0 saturates without an integer bit, at any precision
        let g = Format::new(0, 7);
        for bits in 1..=16 {
            assert_eq!(g.quantize_input(1.0, bits), 127, "{bits}");
        }
        assert_eq!(g.quantize_input(0.25, 2), 64);
        assert_eq!(g.quantize_input(0.24, 2), 0);
        assert_eq!(g.quantize_input(0.25, 3), 32);
        // frac_bits = 0: the inputs are 0 and 1 whatever the precision
        let h = Format::new(3, 0);
        assert_eq!(h.quantize_input(0.5, 8), 1);
        assert_eq!(h.quantize_input(0.49, 8), 0);
    }

    #[test]
    fn clipped_output_delta_stops_only_at_the_tables_end_on_the_targets_side() {
        let f = Format::new(2, 7);
        let t = ActivationTable::sigmoid(f);
        // σ(±4) at 7 fraction bits: 126 and 2 (0.982 and 0.018)
        assert_eq!((t.sigma[0], *t.sigma.last().unwrap()), (2, 126));
        let ends = output_delta_ends(OutputDelta::Clipped, &t);
        assert_eq!(output_delta(f, ends, 126, true), 0);
        assert_eq!(output_delta(f, ends, 2, false), 0);
        // at the end on the other side, or short of the end: a − y
        assert_eq!(output_delta(f, ends, 126, false), 126);
        assert_eq!(output_delta(f, ends, 2, true), 2 - 128);
        assert_eq!(output_delta(f, ends, 125, true), -3);
        assert_eq!(output_delta(f, ends, 3, false), 3);
        let plain = output_delta_ends(OutputDelta::Plain, &t);
        assert_eq!(output_delta(f, plain, 126, true), -2);
        assert_eq!(output_delta(f, plain, 2, false), 2);
    }
}
