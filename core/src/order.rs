//! The order in which training visits its samples: a fresh permutation of the training set
//! every epoch, defined so that a chip walking a resident data set can make it with a
//! counter, four adders and some XORs (no multiplier, no table of indices).
//!
//! The definition, exactly (every backend and every board follows it bit for bit):
//! - `n` training samples; `m` the smallest integer with `2^m ≥ n` (0 for `n = 1`), the half
//!   width `h = max(1, ⌈m/2⌉)` ([`half_bits`]), the domain `0 … 4^h − 1` and the mask
//!   `M = 2^h − 1`.
//! - One random stream: xorshift32 with shifts (13, 17, 5) ([`LaneRng::next_word`], the
//!   stochastic rounding's generator), started at [`order_seed`] and running across epochs.
//!   Epoch `e` (from 0) takes the stream's outputs number `4e … 4e+3` as its keys (output 0
//!   is the word after the first step), `k_r = output & M` for `r = 0 … 3`.
//! - The round function on `h`-bit values: `t = (x + k) & M`,
//!   `F(x, k) = t ^ ((t << 1) & M) ^ ((t >> 1) & (t >> 2))`.
//! - A counter `c` in the domain is permuted by a four-round Feistel network
//!   ([`permute`]): `L = c >> h`, `R = c & M`; for `r = 0 … 3`, `(L, R) = (R, L ^ F(R, k_r))`;
//!   the result is `v = (L << h) | R`.
//! - Epoch `e` visits, for `c = 0, 1, …, 4^h − 1` in increasing order, every `v < n`. A
//!   Feistel network is a bijection of the domain whatever `F` is, so this is a permutation
//!   of `0 … n − 1`: exactly `n` samples, each once. The domain holds at most `4n` values,
//!   so an epoch takes at most `4n` counter steps.

use crate::rng::SplitMix64;
use crate::rounding::LaneRng;

/// Seed of the train/test split ([`crate::Dataset::split`]) and of the sample order: fixed,
/// so every backend and every run sees the same samples in the same order.
pub const DATA_SEED: u64 = 2024;

/// The start of the order's xorshift32 stream: the low 32 bits of the first word of
/// `SplitMix64::derive(DATA_SEED, "sample order", 0)`, or 1 if they are 0 (the one state
/// xorshift cannot leave).
pub fn order_seed() -> u32 {
    let word = SplitMix64::derive(DATA_SEED, "sample order", 0).next_u64() as u32;
    if word == 0 {
        1
    } else {
        word
    }
}

/// The half width `h` of the permuted counter for `n` samples: `max(1, ⌈m/2⌉)` with `m` the
/// smallest integer such that `2^m ≥ n`.
pub fn half_bits(n: usize) -> u32 {
    let m = if n <= 1 {
        0
    } else {
        usize::BITS - (n - 1).leading_zeros()
    };
    m.div_ceil(2).max(1)
}

/// The Feistel round function on `h`-bit values (mask `mask = 2^h − 1`).
#[inline(always)]
fn round(x: u64, key: u32, mask: u64) -> u64 {
    let t = (x + key as u64) & mask;
    t ^ ((t << 1) & mask) ^ ((t >> 1) & (t >> 2))
}

/// Counter `c` (in `0 … 4^h − 1`) through the four Feistel rounds with `keys` (only their low
/// `h` bits matter).
pub fn permute(c: u64, h: u32, keys: &[u32; 4]) -> u64 {
    let mask = (1u64 << h) - 1;
    let (mut l, mut r) = (c >> h, c & mask);
    for &k in keys {
        (l, r) = (r, l ^ round(r, k, mask));
    }
    (l << h) | r
}

/// The samples `0 … n − 1` in the order the keys give: every `permute(c) < n` for increasing
/// `c`.
pub fn order_with_keys(n: usize, keys: &[u32; 4]) -> Vec<usize> {
    let h = half_bits(n);
    (0..1u64 << (2 * h))
        .map(|c| permute(c, h, keys))
        .filter(|&v| v < n as u64)
        .map(|v| v as usize)
        .collect()
}

/// The orders of successive epochs over `n` samples, from epoch 0 on.
#[derive(Clone, Debug)]
pub struct SampleOrder {
    rng: LaneRng,
    n: usize,
    h: u32,
}

impl SampleOrder {
    pub fn new(n: usize) -> SampleOrder {
        let h = half_bits(n);
        // The counter runs through 4^h values in a u64.
        assert!(h < 32, "{n} samples are more than a sample order can count");
        SampleOrder {
            rng: LaneRng(order_seed()),
            n,
            h,
        }
    }

    /// The next epoch's four keys, `k_r = output & M`, stepping the stream four times.
    pub fn next_keys(&mut self) -> [u32; 4] {
        let mask = ((1u64 << self.h) - 1) as u32;
        [(); 4].map(|_| self.rng.next_word() & mask)
    }

    /// The next epoch's order.
    pub fn next_epoch(&mut self) -> Vec<usize> {
        let keys = self.next_keys();
        order_with_keys(self.n, &keys)
    }
}

/// The order of the `n` training samples in epoch `epoch` (from 0): the stream stepped
/// `4·epoch` times from [`order_seed`], then one epoch of [`SampleOrder`].
pub fn epoch_order(n: usize, epoch: usize) -> Vec<usize> {
    let mut order = SampleOrder::new(n);
    for _ in 0..epoch {
        order.next_keys();
    }
    order.next_epoch()
}

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;
