//! Rounding of the updates (step 4 of the contract in [`crate::fixed`]): to nearest, or
//! stochastic with random bits from one reproducible stream per lane.
//!
//! Stochastic rounding keeps the expected update equal to the exact `η·δ·a`: an update
//! smaller than one step of the format is applied with a probability proportional to its
//! size instead of vanishing, so narrow formats keep learning where nearest rounding stalls
//! (sigmoid networks at 8–12 bits).
//!
//! The streams, exactly, so that every backend draws the same bits:
//! - junction `j` has one xorshift32 generator per lane `l < z_j` ([`LaneRng`]), started at
//!   [`LaneRng::seeded`] from the spec's `seed` when the weights are set (a training run's
//!   start) and kept running across epochs and streams of that run;
//! - edge `e` of junction `j` (right-neuron-major, the weights' order) belongs to lane
//!   `e mod z_j`; within a sample a lane updates its edges in increasing `e`, and before each
//!   update it steps its generator once and uses the new word. Only updates step the streams
//!   (no inference, no pipeline fill or drain);
//! - a right neuron's bias uses the word drawn for the neuron's last edge
//!   (`e = (i+1)·fan_in − 1`): the hardware writes the bias in that edge's clock.

use crate::fixed::Format;
use crate::rng::SplitMix64;
use serde::{Deserialize, Serialize};

/// How an update is rounded to the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rounding {
    /// `w − eta(mul(δ, a), shift)`: the product rounded to nearest, then the learning-rate
    /// shift rounded to nearest.
    Nearest,
    /// `w − ⌊(δ·a + r) / 2^(frac+shift)⌋` with `r` random in `[0, 2^(frac+shift))`: one
    /// rounding of the exact product, unbiased.
    Stochastic,
}

/// One lane's random stream: xorshift32 with shifts (13, 17, 5), period `2^32 − 1`; three
/// shifts and XORs in hardware, so each lane carries 32 flip-flops and a few XOR gates. The
/// sample order's keys come from the same generator ([`crate::order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneRng(pub u32);

impl LaneRng {
    /// The start of lane `lane` of junction `junction` for a spec seed (never 0, the one
    /// state xorshift cannot leave).
    pub fn seeded(seed: u64, junction: usize, lane: usize) -> LaneRng {
        let index = ((junction as u64) << 32) | lane as u64;
        let word = SplitMix64::derive(seed, "stochastic rounding", index).next_u64() as u32;
        LaneRng(if word == 0 { 1 } else { word })
    }

    /// The starts of every lane of every junction: `lanes[j][l]`.
    pub fn all_seeded(seed: u64, z: &[usize]) -> Vec<Vec<LaneRng>> {
        z.iter()
            .enumerate()
            .map(|(j, &zj)| (0..zj).map(|l| LaneRng::seeded(seed, j, l)).collect())
            .collect()
    }

    /// Step once and return the new word.
    #[inline(always)]
    pub fn next_word(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// The weight update under [`Rounding::Nearest`]: `sat(w − eta(mul(δ, a), shift))`.
#[inline(always)]
pub fn weight_update_nearest(f: Format, w: i32, d: i32, a: i32, shift: u32) -> i32 {
    f.saturate(w as i64 - f.eta(f.mul(d, a), shift) as i64)
}

/// The bias update under [`Rounding::Nearest`]: `sat(b − eta(δ, shift))`.
#[inline(always)]
pub fn bias_update_nearest(f: Format, b: i32, d: i32, shift: u32) -> i32 {
    f.saturate(b as i64 - f.eta(d, shift) as i64)
}

/// The weight update under [`Rounding::Stochastic`] with the lane's new `word`: with
/// `n = frac + shift` and `r` the top `n` bits of the word (0 when `n = 0`),
/// `u = sat((δ·a + r) >> n)` (arithmetic shift), `w' = sat(w − u)`. `|δ·a| ≤ 2^30` and
/// `r < 2^30`, so the sum fits 32 bits.
#[inline(always)]
pub fn weight_update_stochastic(f: Format, w: i32, d: i32, a: i32, shift: u32, word: u32) -> i32 {
    let n = f.frac_bits + shift;
    let r = if n == 0 { 0 } else { (word >> (32 - n)) as i64 };
    let u = f.saturate((d as i64 * a as i64 + r) >> n);
    f.saturate(w as i64 - u as i64)
}

/// The bias update under [`Rounding::Stochastic`] with the word of the neuron's last edge:
/// `r` the low `shift` bits of the word, `b' = sat(b − ((δ + r) >> shift))`.
#[inline(always)]
pub fn bias_update_stochastic(f: Format, b: i32, d: i32, shift: u32, word: u32) -> i32 {
    let r = (word as u64 & ((1u64 << shift) - 1)) as i64;
    f.saturate(b as i64 - ((d as i64 + r) >> shift))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift32_matches_its_definition_and_published_start() {
        // Marsaglia's xorshift32 from state 1 gives 270369 on its first step: 1 ^ 1<<13 =
        // 8193; ^ 8193>>17 (= 0) = 8193; ^ 8193<<5 = 8193 ^ 262176 = 270369.
        let mut g = LaneRng(1);
        assert_eq!(g.next_word(), 270369);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            assert!(seen.insert(g.next_word()), "a repeat within 10 000 steps");
        }
    }

    #[test]
    fn lanes_start_apart_and_never_at_zero() {
        let all = LaneRng::all_seeded(7, &[4, 3]);
        let flat: Vec<u32> = all.iter().flatten().map(|g| g.0).collect();
        assert_eq!(flat.len(), 7);
        assert!(flat.iter().all(|&x| x != 0));
        let set: std::collections::HashSet<_> = flat.iter().collect();
        assert_eq!(set.len(), 7, "two lanes share a start");
        assert_ne!(LaneRng::seeded(7, 0, 0), LaneRng::seeded(8, 0, 0));
    }

    /// Over all words the stochastic update averages to the exact `δ·a·2^-(frac+shift)`:
    /// checked by summing the floor over every value of the top `n` bits.
    #[test]
    fn stochastic_update_is_unbiased_over_all_random_bits() {
        let f = Format::new(2, 5);
        let shift = 2;
        let n = f.frac_bits + shift;
        for (d, a) in [(3, 5), (-3, 5), (1, 1), (-1, 1), (17, -9), (100, 100)] {
            let mut total: i64 = 0;
            for r in 0..(1u32 << n) {
                let word = r << (32 - n);
                total += weight_update_stochastic(f, 0, d, a, shift, word) as i64;
            }
            // Σ_r −⌊(p + r)/2^n⌋ over every r in [0, 2^n) is exactly −p (no saturation here).
            assert_eq!(total, -(d as i64 * a as i64), "d={d} a={a}");
        }
    }

    #[test]
    fn stochastic_update_reaches_updates_nearest_rounding_loses() {
        let f = Format::new(2, 7);
        let shift = 2;
        // δ·a = 1·1: nearest gives mul = 0, no update at all.
        assert_eq!(weight_update_nearest(f, 10, 1, 1, shift), 10);
        // Stochastic: the update happens when r ≥ 2^9 − 1, i.e. only for the top word.
        assert_eq!(weight_update_stochastic(f, 10, 1, 1, shift, u32::MAX), 9);
        assert_eq!(
            weight_update_stochastic(f, 10, 1, 1, shift, 0xff00_0000),
            10
        );
    }

    #[test]
    fn stochastic_updates_saturate() {
        let f = Format::new(2, 5);
        assert_eq!(
            weight_update_stochastic(f, f.min(), f.max(), f.max(), 0, 0),
            f.min()
        );
        assert_eq!(
            weight_update_stochastic(f, f.max(), f.min(), f.max(), 0, 0),
            f.max()
        );
        assert_eq!(bias_update_stochastic(f, f.min(), f.max(), 0, 0), f.min());
        assert_eq!(bias_update_stochastic(f, 0, 5, 2, 0b11), -2);
        assert_eq!(bias_update_stochastic(f, 0, 5, 2, 0b00), -1);
    }
}
