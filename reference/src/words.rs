//! The stochastic-rounding words of one update pass, generated ahead of the arithmetic and laid
//! out in edge order, so the update loop reads them like the weights.
//!
//! The streams are `edgeflow_core::rounding`'s: edge `e` of a junction draws the next word of
//! lane `e mod z`. They do not depend on the data, so a pass's words can be made in one go.
//! With many lanes the lanes themselves step side by side in vector registers. With few lanes
//! (one or two) a lane's steps of one pass are cut into segments whose starts are found by
//! jumping ahead: xorshift32 is linear over GF(2), so `k` steps are one 32×32 bit matrix,
//! applied here as four byte-indexed tables. Segments then step side by side as lanes do.

use edgeflow_core::rounding::LaneRng;
use multiversion::multiversion;

/// Independent chains wanted side by side: enough for two vector registers of `u32`.
const CHAINS: usize = 16;

/// `k` steps of xorshift32 as a linear map: the image of each byte of the state.
#[derive(Clone, Debug)]
struct Jump {
    tables: Box<[[u32; 256]; 4]>,
}

impl Jump {
    fn new(steps: usize) -> Jump {
        let column: Vec<u32> = (0..32)
            .map(|b| {
                let mut g = LaneRng(1 << b);
                (0..steps).for_each(|_| {
                    g.next_word();
                });
                g.0
            })
            .collect();
        let mut tables = Box::new([[0u32; 256]; 4]);
        for (k, t) in tables.iter_mut().enumerate() {
            for (v, out) in t.iter_mut().enumerate() {
                *out = (0..8)
                    .filter(|i| v >> i & 1 == 1)
                    .fold(0, |acc, i| acc ^ column[8 * k + i]);
            }
        }
        Jump { tables }
    }

    #[inline(always)]
    fn apply(&self, x: u32) -> u32 {
        let t = &self.tables;
        t[0][(x & 255) as usize]
            ^ t[1][(x >> 8 & 255) as usize]
            ^ t[2][(x >> 16 & 255) as usize]
            ^ t[3][(x >> 24) as usize]
    }
}

#[inline(always)]
fn step(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}

/// Word maker of one junction: `z` lanes, `edges` edges per pass.
#[derive(Clone, Debug)]
pub struct WordStream {
    z: usize,
    /// Segments per lane and steps per segment.
    parts: usize,
    seg: usize,
    jump: Option<Jump>,
    chains: Vec<u32>,
    /// Words chain-major per step when segments need reordering into edge order.
    staged: Vec<u32>,
}

impl WordStream {
    pub fn new(z: usize, edges: usize) -> WordStream {
        assert!(
            z > 0 && edges.is_multiple_of(z),
            "every lane draws as often"
        );
        let steps = edges / z;
        let want = CHAINS.div_ceil(z).min(steps.max(1));
        let parts = (1..=want)
            .rev()
            .find(|&p| steps.is_multiple_of(p))
            .unwrap_or(1);
        let seg = steps / parts;
        WordStream {
            z,
            parts,
            seg,
            jump: (parts > 1).then(|| Jump::new(seg)),
            chains: vec![0; parts * z],
            staged: if parts > 1 { vec![0; edges] } else { vec![] },
        }
    }

    /// The words of one pass, `words[e]` for edge `e`; `lanes` step past them.
    pub fn fill(&mut self, lanes: &mut [LaneRng], words: &mut [u32]) {
        let z = self.z;
        debug_assert_eq!(lanes.len(), z);
        debug_assert_eq!(words.len(), z * self.parts * self.seg);
        for (c, l) in self.chains.iter_mut().zip(lanes.iter()) {
            *c = l.0;
        }
        let Some(jump) = &self.jump else {
            run_chains(&mut self.chains, words);
            for (l, &c) in lanes.iter_mut().zip(&self.chains) {
                l.0 = c;
            }
            return;
        };
        for i in 1..self.parts {
            let (done, next) = self.chains.split_at_mut(i * z);
            for (n, &p) in next[..z].iter_mut().zip(&done[(i - 1) * z..]) {
                *n = jump.apply(p);
            }
        }
        run_chains(&mut self.chains, &mut self.staged);
        // staged[t][i][l] holds the word of step i·seg + t of lane l: edge (i·seg + t)·z + l
        match z {
            1 => reorder::<1>(&self.staged, self.parts, words),
            2 => reorder::<2>(&self.staged, self.parts, words),
            4 => reorder::<4>(&self.staged, self.parts, words),
            _ => reorder_any(&self.staged, z, self.parts, self.seg, words),
        }
        for (l, &c) in lanes.iter_mut().zip(&self.chains[(self.parts - 1) * z..]) {
            l.0 = c;
        }
    }
}

/// Word maker of one share of a junction's pass: edges `first .. first + len` (whole lane
/// steps), as the thread that owns those rows makes them. The share keeps its own copy of the
/// lanes where its words start (put there once by [`ShareStream::start`]); after a pass's words
/// it jumps them over the rest of the pass to where its words of the next pass start.
#[derive(Clone, Debug)]
pub struct ShareStream {
    before: Option<Jump>,
    rest: Option<Jump>,
    stream: WordStream,
}

impl ShareStream {
    pub fn new(z: usize, edges: usize, first: usize, len: usize) -> ShareStream {
        assert!(
            first.is_multiple_of(z) && len.is_multiple_of(z) && first + len <= edges,
            "a share is whole lane steps of the pass"
        );
        let jump = |steps: usize| (steps > 0).then(|| Jump::new(steps));
        ShareStream {
            before: jump(first / z),
            rest: jump((edges - len) / z),
            stream: WordStream::new(z, len),
        }
    }

    /// Lanes at a pass's start to where the share's words of that pass start.
    pub fn start(&self, lanes: &mut [LaneRng]) {
        jump(&self.before, lanes);
    }

    /// The share's words of one pass, `words[e - first]`; `lanes` go from where they start
    /// in this pass to where they start in the next. The share that starts the pass
    /// (`first = 0`) holds the whole junction's lanes between passes.
    pub fn fill(&mut self, lanes: &mut [LaneRng], words: &mut [u32]) {
        self.stream.fill(lanes, words);
        jump(&self.rest, lanes);
    }
}

fn jump(j: &Option<Jump>, lanes: &mut [LaneRng]) {
    if let Some(j) = j {
        lanes.iter_mut().for_each(|l| l.0 = j.apply(l.0));
    }
}

/// Segment-major to edge order for `Z` lanes: runs of `Z` words, `parts` runs per step.
#[multiversion(targets("x86_64+avx512f+avx512bw+avx512vl", "x86_64+avx2"))]
fn reorder<const Z: usize>(staged: &[u32], parts: usize, words: &mut [u32]) {
    let (src, _) = staged.as_chunks::<Z>();
    let (dst, _) = words.as_chunks_mut::<Z>();
    let seg = dst.len() / parts;
    for (i, out) in dst.chunks_exact_mut(seg).enumerate() {
        for (t, o) in out.iter_mut().enumerate() {
            *o = src[t * parts + i];
        }
    }
}

fn reorder_any(staged: &[u32], z: usize, parts: usize, seg: usize, words: &mut [u32]) {
    for (t, row) in staged.chunks_exact(parts * z).enumerate() {
        for (i, run) in row.chunks_exact(z).enumerate() {
            let at = (i * seg + t) * z;
            words[at..at + z].copy_from_slice(run);
        }
    }
}

/// Step every chain once per row of `out` (as wide as `chains`), writing the new states.
/// Sixteen chains at a time stay in registers for a whole column of rows.
#[multiversion(targets("x86_64+avx512f+avx512bw+avx512vl", "x86_64+avx2"))]
fn run_chains(chains: &mut [u32], out: &mut [u32]) {
    let width = chains.len();
    let (blocks, tail) = chains.as_chunks_mut::<CHAINS>();
    for (b, c) in blocks.iter_mut().enumerate() {
        let mut s = *c;
        for row in out.chunks_exact_mut(width) {
            for x in s.iter_mut() {
                *x = step(*x);
            }
            row[b * CHAINS..(b + 1) * CHAINS].copy_from_slice(&s);
        }
        *c = s;
    }
    let at = width - tail.len();
    for row in out.chunks_exact_mut(width) {
        for (o, c) in row[at..].iter_mut().zip(tail.iter_mut()) {
            *c = step(*c);
            *o = *c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lane/edge count against the plain definition: edge `e` takes the next word of
    /// lane `e mod z`, over several passes.
    #[test]
    fn words_are_the_lane_streams_in_edge_order() {
        for (z, edges) in [
            (1, 160),
            (2, 1280),
            (1, 7),
            (3, 96),
            (128, 4096),
            (4, 4),
            (2, 22),
        ] {
            let start: Vec<LaneRng> = (0..z).map(|l| LaneRng::seeded(5, 1, l)).collect();
            let mut plain = start.clone();
            let mut fast = start;
            let mut ws = WordStream::new(z, edges);
            let mut words = vec![0; edges];
            for pass in 0..3 {
                ws.fill(&mut fast, &mut words);
                for (e, &w) in words.iter().enumerate() {
                    assert_eq!(w, plain[e % z].next_word(), "z {z} pass {pass} edge {e}");
                }
                assert_eq!(fast, plain, "z {z} pass {pass}: lanes after the pass");
            }
        }
    }

    /// Each share's words are the pass's words at its edges, and the first share's lanes
    /// are the junction's between passes.
    #[test]
    fn shares_make_the_words_of_their_edges() {
        for (z, edges, cuts) in [
            (128, 4096, vec![0, 1024, 2816, 4096]),
            (2, 1280, vec![0, 2, 640, 1280]),
            (1, 160, vec![0, 48, 160]),
            (4, 64, vec![0, 64]),
        ] {
            let start: Vec<LaneRng> = (0..z).map(|l| LaneRng::seeded(9, 0, l)).collect();
            let mut whole = start.clone();
            let mut all = vec![0; edges];
            let mut ws = WordStream::new(z, edges);
            let mut shares: Vec<_> = cuts
                .windows(2)
                .map(|c| {
                    let share = ShareStream::new(z, edges, c[0], c[1] - c[0]);
                    let mut lanes = start.clone();
                    share.start(&mut lanes);
                    (c[0], share, lanes)
                })
                .collect();
            for pass in 0..3 {
                ws.fill(&mut whole, &mut all);
                for (first, share, lanes) in shares.iter_mut() {
                    let mut words = vec![0; share.stream.z * share.stream.parts * share.stream.seg];
                    share.fill(lanes, &mut words);
                    let at = *first;
                    assert_eq!(
                        words[..],
                        all[at..at + words.len()],
                        "z {z} share {at} pass {pass}"
                    );
                    if at == 0 {
                        assert_eq!(*lanes, whole, "z {z} pass {pass}: lanes");
                    }
                }
            }
        }
    }

    #[test]
    fn a_jump_is_that_many_steps() {
        let j = Jump::new(80);
        let mut g = LaneRng(0xdead_beef);
        let x = g.0;
        (0..80).for_each(|_| {
            g.next_word();
        });
        assert_eq!(j.apply(x), g.0);
    }
}
