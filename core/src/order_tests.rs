//! The sample order against its definition: permutations, an independent bit-by-bit model,
//! and values worked out on paper.

use super::*;

#[test]
fn half_bits_follows_the_smallest_power_of_two() {
    // (n, m, h): 2^m is the first power of two ≥ n, h = max(1, ⌈m/2⌉).
    for (n, h) in [
        (1, 1),     // m = 0
        (2, 1),     // m = 1
        (3, 1),     // m = 2
        (4, 1),     // m = 2
        (5, 2),     // m = 3
        (16, 2),    // m = 4
        (17, 3),    // m = 5
        (1437, 6),  // m = 11
        (4096, 6),  // m = 12
        (4097, 7),  // m = 13
        (40000, 8), // m = 16
    ] {
        assert_eq!(half_bits(n), h, "n = {n}");
    }
}

#[test]
fn every_epoch_is_a_permutation() {
    for n in [1, 2, 3, 4, 5, 15, 16, 17, 1437, 4096, 4097, 40000] {
        let mut order = SampleOrder::new(n);
        for e in 0..3 {
            let mut o = order.next_epoch();
            assert_eq!(o, epoch_order(n, e), "n = {n}, epoch {e}");
            o.sort_unstable();
            assert_eq!(o, (0..n).collect::<Vec<_>>(), "n = {n}, epoch {e}");
        }
    }
}

#[test]
fn epochs_differ_and_shuffle() {
    let first = epoch_order(1437, 0);
    let second = epoch_order(1437, 1);
    assert_ne!(first, second);
    let identity: Vec<usize> = (0..1437).collect();
    assert_ne!(first, identity);
    assert_ne!(second, identity);
}

/// Rounds worked on paper. h = 1 (M = 1): `F(x, k) = x ^ k`; keys (1, 0, 1, 1) take
/// counters 0, 1, 2, 3 to 3, 0, 2, 1.
#[test]
fn permute_matches_hand_worked_values_for_h_1() {
    let keys = [1, 0, 1, 1];
    let got: Vec<u64> = (0..4).map(|c| permute(c, 1, &keys)).collect();
    assert_eq!(got, [3, 0, 2, 1]);
    assert_eq!(order_with_keys(4, &keys), [3, 0, 2, 1]);
    assert_eq!(order_with_keys(3, &keys), [0, 2, 1]);
}

/// h = 2 (M = 3): `F` maps `t = (x + k) & 3` = 0, 1, 2, 3 to 0, 3, 2, 1; keys (1, 2, 3, 0).
/// E.g. c = 0: (L, R) = (0, 0) → (0, 3) → (3, 3) → (3, 1) → (1, 0), v = 4.
#[test]
fn permute_matches_hand_worked_values_for_h_2() {
    let keys = [1, 2, 3, 0];
    for (c, v) in [(0, 4), (1, 11), (6, 7), (9, 9), (15, 10)] {
        assert_eq!(permute(c, 2, &keys), v, "c = {c}");
    }
}

/// h = 3 (M = 7), where the AND term of `F` shows: `F` maps t = 0 … 7 to 0, 3, 6, 5, 4, 7,
/// 3, 0; keys (5, 2, 7, 4). c = 45: (5, 5) → (5, 3) → (3, 2) → (2, 0) → (0, 6), v = 6.
#[test]
fn permute_matches_hand_worked_values_for_h_3() {
    let f: Vec<u64> = (0..8).map(|t| round(t, 0, 7)).collect();
    assert_eq!(f, [0, 3, 6, 5, 4, 7, 3, 0]);
    let keys = [5, 2, 7, 4];
    assert_eq!(permute(45, 3, &keys), 6);
    assert_eq!(permute(6, 3, &keys), 21);
}

/// The definition once more, written over vectors of bits (least significant first), sharing
/// no arithmetic with the module: ripple-carry adds, shifts and XORs bit by bit.
mod bitwise {
    pub type Bits = Vec<bool>;

    pub fn bits(v: u64, width: usize) -> Bits {
        (0..width).map(|i| (v >> i) & 1 == 1).collect()
    }

    pub fn value(b: &[bool]) -> u64 {
        b.iter().rev().fold(0, |acc, &bit| acc * 2 + bit as u64)
    }

    fn xor(a: &[bool], b: &[bool]) -> Bits {
        a.iter().zip(b).map(|(x, y)| x != y).collect()
    }

    fn and(a: &[bool], b: &[bool]) -> Bits {
        a.iter().zip(b).map(|(x, y)| *x && *y).collect()
    }

    /// Towards the top; bits leaving the width are dropped.
    fn up(a: &[bool], s: usize) -> Bits {
        (0..a.len()).map(|i| i >= s && a[i - s]).collect()
    }

    fn down(a: &[bool], s: usize) -> Bits {
        (0..a.len()).map(|i| i + s < a.len() && a[i + s]).collect()
    }

    fn add(a: &[bool], b: &[bool]) -> Bits {
        let mut carry = false;
        a.iter()
            .zip(b)
            .map(|(&x, &y)| {
                let s = x ^ y ^ carry;
                carry = (x && y) || (carry && (x ^ y));
                s
            })
            .collect()
    }

    pub fn xorshift(x: &[bool]) -> Bits {
        let x = xor(x, &up(x, 13));
        let x = xor(&x, &down(&x, 17));
        xor(&x, &up(&x, 5))
    }

    fn f(x: &[bool], k: &[bool]) -> Bits {
        let t = add(x, k);
        xor(&xor(&t, &up(&t, 1)), &and(&down(&t, 1), &down(&t, 2)))
    }

    /// The order of epoch `epoch` over `n` samples.
    pub fn order(n: usize, epoch: usize) -> Vec<usize> {
        let mut m = 0;
        while (1u64 << m) < n as u64 {
            m += 1;
        }
        // the least h ≥ 1 with 2h ≥ m
        let mut h = 1;
        while 2 * h < m {
            h += 1;
        }
        let seed = edgeflow_core_seed();
        let mut x = if seed.iter().any(|&b| b) {
            seed
        } else {
            bits(1, 32)
        };
        for _ in 0..4 * epoch {
            x = xorshift(&x);
        }
        let keys: Vec<Bits> = (0..4)
            .map(|_| {
                x = xorshift(&x);
                x[..h].to_vec()
            })
            .collect();
        let mut out = Vec::new();
        for c in 0..1u64 << (2 * h) {
            let cb = bits(c, 2 * h);
            let (mut l, mut r) = (cb[h..].to_vec(), cb[..h].to_vec());
            for k in &keys {
                let next = xor(&l, &f(&r, k));
                l = r;
                r = next;
            }
            let v = value(&[r, l].concat());
            if v < n as u64 {
                out.push(v as usize);
            }
        }
        out
    }

    /// The low 32 bits of the first word of the "sample order" SplitMix64 stream on seed 2024.
    fn edgeflow_core_seed() -> Bits {
        let word = crate::rng::SplitMix64::derive(2024, "sample order", 0).next_u64();
        bits(word, 32)
    }
}

#[test]
fn matches_a_bitwise_model_of_the_definition() {
    for n in [1, 2, 3, 5, 17, 100, 1437] {
        for e in [0, 1, 2, 7] {
            assert_eq!(
                epoch_order(n, e),
                bitwise::order(n, e),
                "n = {n}, epoch {e}"
            );
        }
    }
}

#[test]
fn the_stream_is_xorshift32_from_the_order_seed() {
    let mut order = SampleOrder::new(1 << 20);
    let mut x = bitwise::bits(order_seed() as u64, 32);
    for _ in 0..3 {
        let keys = order.next_keys();
        for k in keys {
            x = bitwise::xorshift(&x);
            // h = 10 for 2^20 samples: the key is the output's low 10 bits.
            assert_eq!(k as u64, bitwise::value(&x[..10]));
        }
    }
}

/// Values from a separate implementation of the whole definition in another language
/// (SplitMix64 included), which design.md quotes as check values for the hardware.
#[test]
fn matches_check_values_from_another_implementation() {
    assert_eq!(order_seed(), 0x55f3_ea54);
    let mut order = SampleOrder::new(1438);
    assert_eq!(order.clone().next_keys(), [8, 19, 33, 48]);
    assert_eq!(order.next_epoch()[..6], [800, 623, 86, 1417, 910, 465]);
    assert_eq!(order.clone().next_keys(), [28, 24, 17, 7]);
    assert_eq!(order.next_epoch()[..4], [474, 6, 1258, 278]);
    assert_eq!(epoch_order(4, 0), [1, 2, 0, 3]);
    assert_eq!(
        epoch_order(17, 3),
        [9, 10, 15, 14, 11, 7, 6, 8, 2, 16, 1, 0, 5, 4, 3, 13, 12]
    );
}
