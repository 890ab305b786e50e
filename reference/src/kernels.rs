//! The reference model's passes over one junction, written so they vectorize: the left
//! activations of every edge are gathered once per sample in edge order (FF gathers them, UP
//! reuses them), the stochastic-rounding words arrive in edge order too ([`crate::words`]),
//! and every inner loop is then straight-line arithmetic over all the junction's edges at once
//! (a row's delta spread over its edges), with saturation as min/max. Each hot loop is
//! compiled twice, plain and for AVX2, and runs the version the CPU has.
//!
//! Bit-identical to the contract (`edgeflow_core::fixed`, `edgeflow_core::rounding`) and to
//! [`crate::reference::UpdateRule::bp_up`], which states it edge by edge. A row whose delta is
//! 0 passes nothing back (`mul(w, 0) = 0`), so back-propagation skips it.

use edgeflow_core::fixed::{FfProducts, Format};
use edgeflow_core::rounding::Rounding;
use multiversion::multiversion;

/// `i32` lanes of one AVX2 register.
const LANES: usize = 8;

/// The contract's product, learning-rate shift and saturation in `i32`: operands are
/// saturated values of at most 16 bits, so `|a·b| ≤ 2^30` and adding a rounding half or the
/// random bits (`< 2^30`) cannot overflow.
#[derive(Clone, Copy, Debug)]
pub struct Fast {
    half: i32,
    frac: u32,
    lo: i32,
    hi: i32,
    /// Learning-rate shift and its rounding half.
    /// The range of FF's products: the format's under [`FfProducts::Saturated`], else the
    /// whole `i32` (a rounded product never reaches its ends).
    ff_lo: i32,
    ff_hi: i32,
    shift: u32,
    eta_half: i32,
    /// Stochastic rounding: `n = frac + shift` and the random bits `(word >> 1) >> (31 − n)`
    /// (the top `n` bits, none when `n = 0`); the bias takes the low `shift` bits.
    n: u32,
    r_shift: u32,
    bias_mask: u32,
    pub rounding: Rounding,
}

impl Fast {
    pub fn new(f: Format, shift: u32, rounding: Rounding) -> Fast {
        let n = f.frac_bits + shift;
        assert!(n <= 30, "frac_bits + learning_rate_shift ≤ 30");
        let half_of = |s: u32| if s == 0 { 0 } else { 1 << (s - 1) };
        Fast {
            half: half_of(f.frac_bits),
            frac: f.frac_bits,
            lo: f.min(),
            hi: f.max(),
            ff_lo: f.min(),
            ff_hi: f.max(),
            shift,
            eta_half: half_of(shift),
            n,
            r_shift: 31 - n,
            bias_mask: (1u32 << shift) - 1,
            rounding,
        }
    }

    /// FF's products under `rule` (`fixed` step 2).
    pub fn with_ff_products(mut self, rule: FfProducts) -> Fast {
        (self.ff_lo, self.ff_hi) = match rule {
            FfProducts::Saturated => (self.lo, self.hi),
            FfProducts::Rounded => (i32::MIN, i32::MAX),
        };
        self
    }

    /// FF's product: rounded, saturated only under [`FfProducts::Saturated`].
    #[inline(always)]
    pub fn ff_mul(self, a: i32, b: i32) -> i32 {
        ((a * b + self.half) >> self.frac)
            .max(self.ff_lo)
            .min(self.ff_hi)
    }

    #[inline(always)]
    pub fn saturate(self, x: i32) -> i32 {
        x.max(self.lo).min(self.hi)
    }

    #[inline(always)]
    pub fn mul(self, a: i32, b: i32) -> i32 {
        self.saturate((a * b + self.half) >> self.frac)
    }

    #[inline(always)]
    pub fn eta(self, x: i32) -> i32 {
        (x + self.eta_half) >> self.shift
    }

    /// The updated weight: nearest or stochastic with the edge's `word`.
    #[inline(always)]
    fn weight(self, w: i32, d: i32, x: i32, word: u32, stochastic: bool) -> i32 {
        let u = if stochastic {
            let r = ((word >> 1) >> self.r_shift) as i32;
            self.saturate((d * x + r) >> self.n)
        } else {
            self.eta(self.mul(d, x))
        };
        self.saturate(w - u)
    }

    /// The updated bias; `word` is the one of the neuron's last edge.
    #[inline(always)]
    fn bias(self, b: i32, d: i32, word: u32) -> i32 {
        match self.rounding {
            Rounding::Stochastic => {
                self.saturate(b - ((d + (word & self.bias_mask) as i32) >> self.shift))
            }
            Rounding::Nearest => self.saturate(b - self.eta(d)),
        }
    }
}

/// Reads one value per cache line of `row` in order: the hardware then streams the row into
/// the cache while the current sample's work runs, instead of the next sample's gather
/// missing on lines in random order.
pub fn warm(row: &[i32]) {
    std::hint::black_box(row.iter().step_by(16).fold(0, |acc, &v| acc ^ v));
}

/// `x[e] = a[left_of_edge[e]]`: the left activation of every edge. Every index is below
/// `a.len()`, so where that is a power of two the index can be masked into a fixed-size array
/// instead of checked, and the loop vectorizes (AVX2 gathers).
pub fn gather(left_of_edge: &[u32], a: &[i32], x: &mut [i32]) {
    macro_rules! sized {
        ($($n:literal)*) => {
            match a.len() {
                $($n => gather_masked::<$n>(left_of_edge, a.try_into().unwrap(), x),)*
                _ => {
                    for (x, &k) in x.iter_mut().zip(left_of_edge) {
                        *x = a[k as usize];
                    }
                }
            }
        };
    }
    sized!(16 32 64 128 256 512 1024 2048 4096 8192 16384 32768);
}

#[multiversion(targets("x86_64+avx512f+avx512bw+avx512vl", "x86_64+avx2"))]
fn gather_masked<const N: usize>(left_of_edge: &[u32], a: &[i32; N], x: &mut [i32]) {
    for (x, &k) in x.iter_mut().zip(left_of_edge) {
        *x = a[k as usize & (N - 1)];
    }
}

/// Saturated pre-activations of one junction's right neurons: `h[r] = sat(b[r] + Σ ff_mul(w, x))`
/// over the row's edges (the sum is exact, so its order does not matter). Where the fan-in is
/// a multiple of a vector's lanes each row is whole vectors, summed in registers; otherwise
/// the products are made in one loop over every edge into `t` (scratch of one value per
/// edge), long enough to vectorize whatever the fan-in, then summed row by row.
#[multiversion(targets("x86_64+avx512f+avx512bw+avx512vl", "x86_64+avx2"))]
#[allow(clippy::too_many_arguments)]
pub fn ff_sums(
    q: Fast,
    fan_in: usize,
    w: &[i32],
    x: &[i32],
    b: &[i32],
    t: &mut [i32],
    h: &mut [i32],
) {
    if fan_in.is_multiple_of(16) {
        return ff_rows::<16>(q, fan_in, w, x, b, h);
    }
    if fan_in.is_multiple_of(LANES) {
        return ff_rows::<LANES>(q, fan_in, w, x, b, h);
    }
    for ((t, &w), &x) in t.iter_mut().zip(w).zip(x) {
        *t = q.ff_mul(w, x);
    }
    for ((hr, tr), &bias) in h.iter_mut().zip(t.chunks_exact(fan_in)).zip(b) {
        *hr = q.saturate(bias + row_sum(tr));
    }
}

/// [`ff_sums`] for a fan-in that is a multiple of `N`: one loop over every vector of the
/// junction, a row's sum leaving the registers after its last.
#[inline(always)]
fn ff_rows<const N: usize>(q: Fast, fan_in: usize, w: &[i32], x: &[i32], b: &[i32], h: &mut [i32]) {
    let per_row = fan_in / N;
    let mut rows = h.iter_mut().zip(b);
    let mut acc = [0i32; N];
    let mut left = per_row;
    for (wc, xc) in w.as_chunks::<N>().0.iter().zip(x.as_chunks::<N>().0) {
        for i in 0..N {
            acc[i] += q.ff_mul(wc[i], xc[i]);
        }
        left -= 1;
        if left == 0 {
            let Some((hr, &bias)) = rows.next() else {
                return;
            };
            *hr = q.saturate(bias + acc.iter().sum::<i32>());
            acc = [0; N];
            left = per_row;
        }
    }
}

/// The exact sum of one row, eight lanes at a time.
#[inline(always)]
fn row_sum(t: &[i32]) -> i32 {
    let (t8, tail) = t.as_chunks::<LANES>();
    let acc = t8
        .iter()
        .fold([0i32; LANES], |a, c| std::array::from_fn(|i| a[i] + c[i]));
    acc.iter().sum::<i32>() + tail.iter().sum::<i32>()
}

/// `spread[e] = d[e / fan_in]`: each row's delta on every edge of the row.
fn spread_rows(fan_in: usize, d: &[i32], spread: &mut [i32]) {
    for (row, &dr) in spread.chunks_exact_mut(fan_in).zip(d) {
        row.fill(dr);
    }
}

/// UP of one junction (and BP into `products` when given, every weight read before its
/// update): weights `w`, gathered inputs `x`, words `words` (any values under nearest
/// rounding), right deltas `d`, biases `b`. Where the fan-in is a multiple of a vector's
/// lanes each row runs as whole vectors with its delta in a register; otherwise the deltas
/// are first spread over their rows' edges in `spread` and every edge runs in one loop.
#[multiversion(targets("x86_64+avx512f+avx512bw+avx512vl", "x86_64+avx2"))]
#[allow(clippy::too_many_arguments)]
pub fn update(
    q: Fast,
    fan_in: usize,
    w: &mut [i32],
    x: &[i32],
    words: &[u32],
    d: &[i32],
    spread: &mut [i32],
    b: &mut [i32],
    products: Option<&mut [i32]>,
) {
    let stochastic = q.rounding == Rounding::Stochastic;
    macro_rules! rows {
        ($n:literal) => {
            match (stochastic, products) {
                (true, Some(p)) => update_rows::<$n, true, true>(q, fan_in, w, x, words, d, p),
                (true, None) => update_rows::<$n, true, false>(q, fan_in, w, x, words, d, &mut []),
                (false, Some(p)) => update_rows::<$n, false, true>(q, fan_in, w, x, words, d, p),
                (false, None) => {
                    update_rows::<$n, false, false>(q, fan_in, w, x, words, d, &mut [])
                }
            }
        };
    }
    if fan_in.is_multiple_of(16) {
        rows!(16);
    } else if fan_in.is_multiple_of(LANES) {
        rows!(8);
    } else {
        spread_rows(fan_in, d, spread);
        if let Some(p) = products {
            edge_products(q, w, spread, p);
        }
        match q.rounding {
            Rounding::Stochastic => edge_updates::<true>(q, w, x, words, spread),
            Rounding::Nearest => edge_updates::<false>(q, w, x, words, spread),
        }
    }
    let last_words = words.chunks_exact(fan_in).map(|row| row[fan_in - 1]);
    for ((bias, &dr), word) in b.iter_mut().zip(d).zip(last_words) {
        *bias = q.bias(*bias, dr, word);
    }
}

#[inline(always)]
fn edge_products(q: Fast, w: &[i32], spread: &[i32], p: &mut [i32]) {
    for ((p, &w), &d) in p.iter_mut().zip(w).zip(spread) {
        *p = q.mul(w, d);
    }
}

#[inline(always)]
fn edge_updates<const S: bool>(q: Fast, w: &mut [i32], x: &[i32], words: &[u32], spread: &[i32]) {
    for (((w, &x), &word), &d) in w.iter_mut().zip(x).zip(words).zip(spread) {
        *w = q.weight(*w, d, x, word, S);
    }
}

/// [`update`]'s edges for a fan-in that is a multiple of `N`, in one loop over every vector
/// of the junction, each row's delta in a register: stochastic rounding `S`, the products
/// `mul(w, δ)` into `p` when `BP`.
#[inline(always)]
fn update_rows<const N: usize, const S: bool, const BP: bool>(
    q: Fast,
    fan_in: usize,
    w: &mut [i32],
    x: &[i32],
    words: &[u32],
    d: &[i32],
    p: &mut [i32],
) {
    let per_row = fan_in / N;
    let mut deltas = d.iter();
    let (mut dr, mut left) = (0, 0);
    let mut pc = p.as_chunks_mut::<N>().0.iter_mut();
    let edges = w
        .as_chunks_mut::<N>()
        .0
        .iter_mut()
        .zip(x.as_chunks::<N>().0);
    for ((wv, xv), ov) in edges.zip(words.as_chunks::<N>().0) {
        if left == 0 {
            let Some(&next) = deltas.next() else {
                return;
            };
            (dr, left) = (next, per_row);
        }
        left -= 1;
        if BP {
            let Some(pv) = pc.next() else {
                return;
            };
            for i in 0..N {
                pv[i] = q.mul(wv[i], dr);
            }
        }
        for i in 0..N {
            wv[i] = q.weight(wv[i], dr, xv[i], ov[i], S);
        }
    }
}

/// BP and UP of one junction: as [`update`], and the saturated back-propagated sums of the
/// left layer in `sums` (`left_of_edge` says where each edge's `mul(w, δ)` goes).
/// `products` is scratch of one value per edge.
#[allow(clippy::too_many_arguments)]
pub fn back_and_update(
    q: Fast,
    fan_in: usize,
    left_of_edge: &[u32],
    w: &mut [i32],
    x: &[i32],
    words: &[u32],
    d: &[i32],
    spread: &mut [i32],
    b: &mut [i32],
    products: &mut [i32],
    sums: &mut [i32],
) {
    update(q, fan_in, w, x, words, d, spread, b, Some(&mut *products));
    back_sums(fan_in, left_of_edge, products, d, sums);
    sums.iter_mut().for_each(|s| *s = q.saturate(*s));
}

/// The exact, unsaturated back-propagated sums of the left layer from the edges' products
/// (rows with delta 0 add nothing). Integer sums of rows in any order and any split agree.
pub fn back_sums(
    fan_in: usize,
    left_of_edge: &[u32],
    products: &[i32],
    d: &[i32],
    sums: &mut [i32],
) {
    sums.fill(0);
    let rows = products
        .chunks_exact(fan_in)
        .zip(left_of_edge.chunks_exact(fan_in));
    for ((pr, ir), &dr) in rows.zip(d) {
        if dr == 0 {
            continue;
        }
        for (&p, &k) in pr.iter().zip(ir) {
            sums[k as usize] += p;
        }
    }
}
