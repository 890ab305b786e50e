//! Training on several threads, bit for bit the schedule of [`Reference::train`] on one.
//!
//! Within a block cycle the passes are independent: FF_j and BP/UP_j of different junctions
//! work on different samples, and each reads only what earlier block cycles wrote. So the
//! junctions' rows (right neurons) are cut into shares, each with its own weights, biases,
//! gathered inputs and rounding words, and the shares are grouped into parts, a few per
//! thread. In every block cycle each thread runs its own parts, then any part no thread has
//! taken yet (so a thread the operating system holds back delays the others by one part, not
//! a whole share of the work), and all meet before the next. What crosses shares goes through
//! a mailbox per sample in flight: a layer's activations (written by the shares that make
//! them, read by every share of the next junction) and each share's back-propagated sums,
//! unsaturated; the reader adds them and saturates. Integer sums agree in any order, so the
//! bits depend neither on the cut nor on which thread ran a part.
//!
//! A junction's rows are cut only at whole lane steps (`lcm(fan-in, z)` edges), so a share's
//! rounding words are its edges' words of the lanes' pass ([`ShareStream`]).

use std::ops::Range;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Barrier, Mutex, TryLockError};

use edgeflow_core::fixed::{activate, hidden_delta, output_delta, Activation};
use edgeflow_core::rounding::{LaneRng, Rounding};
use edgeflow_core::{Encoded, JunctionPattern};

use crate::kernels;
use crate::reference::{Reference, Work};
use crate::words::ShareStream;
use meeting::{FailGuard, Meeting, Tuner, SPINS};

/// Rows `rows` of junction `junction`, trained on one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    pub junction: usize,
    pub rows: Range<usize>,
}

/// Edge operations of one sample per row of junction `j`: FF and UP, and BP after the first.
fn ops_per_row(p: &JunctionPattern, j: usize) -> usize {
    p.fan_in * if j > 0 { 3 } else { 2 }
}

/// Rows of the smallest share of a junction: a whole number of lane steps.
fn granule(p: &JunctionPattern) -> usize {
    let g = gcd(p.fan_in, p.z);
    p.z / g
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Every junction's rows cut into shares grouped in up to `parts` parts, the edge operations
/// of a sample balanced between the parts (each a contiguous run of rows over the junctions).
/// Fewer parts come back when a network has fewer granules.
pub fn split(patterns: &[JunctionPattern], parts: usize) -> Vec<Vec<Share>> {
    let total: usize = patterns
        .iter()
        .enumerate()
        .map(|(j, p)| p.right * ops_per_row(p, j))
        .sum();
    let parts = parts.max(1);
    let mut out: Vec<Vec<Share>> = vec![vec![]; parts];
    let mut done = 0;
    for (j, p) in patterns.iter().enumerate() {
        let g = granule(p);
        for first in (0..p.right).step_by(g) {
            let cost = g * ops_per_row(p, j);
            let t = ((2 * done + cost) * parts / (2 * total)).min(parts - 1);
            done += cost;
            match out[t].last_mut() {
                Some(s) if s.junction == j && s.rows.end == first => s.rows.end = first + g,
                _ => out[t].push(Share {
                    junction: j,
                    rows: first..first + g,
                }),
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// `n` values that cross threads, padded so that no cache line holds two shares' values.
fn atomics(n: usize) -> Vec<AtomicI32> {
    (0..n + 32).map(|_| AtomicI32::new(0)).collect()
}

/// Values that cross shares, per sample in flight (`slot = sample mod depth`).
struct Mailbox {
    /// `acts[slot][k - 1][i]`: the activations of hidden layer `k` that the `i`-th share of
    /// junction `k - 1` makes (its rows).
    acts: Vec<Vec<Vec<Vec<AtomicI32>>>>,
    /// `sums[slot][j - 1][i]`: the unsaturated back-propagated sums into layer `j` of the
    /// `i`-th share of junction `j`.
    sums: Vec<Vec<Vec<Vec<AtomicI32>>>>,
}

/// What every thread reads and nothing writes during a run.
struct Context<'a> {
    data: &'a Encoded,
    patterns: &'a [JunctionPattern],
    q: kernels::Fast,
    format: edgeflow_core::fixed::Format,
    /// Per junction, its right layer's activation data.
    tables: &'a [edgeflow_core::fixed::ActivationTable],
    hidden: Activation,
    ends: Option<(i32, i32)>,
    /// BP/UP of junction `j` on sample `n` runs in block cycle `bp[j] + n` (FF in `j + n`).
    bp: Vec<usize>,
    depth: usize,
    /// `rows[j][i]`: the rows of the `i`-th share of junction `j`.
    rows: Vec<Vec<Range<usize>>>,
    mailbox: Mailbox,
    meeting: Meeting,
}

/// One share's state.
struct ShareWork {
    j: usize,
    /// Its place among junction `j`'s shares (its sums' mailbox).
    index: usize,
    rows: Range<usize>,
    edges: Range<usize>,
    /// The share's weights and biases, its own copy for the run (see [`ShareWork::allocate`]).
    w: Vec<i32>,
    b: Vec<i32>,
    lanes: Vec<LaneRng>,
    stream: ShareStream,
    words: Vec<u32>,
    /// Per sample in flight: the share's gathered inputs, σ′ of its rows and (last junction)
    /// the output deltas of its rows.
    x: Vec<Vec<i32>>,
    sp: Vec<Vec<i32>>,
    out_delta: Vec<Vec<i32>>,
    a_left: Vec<i32>,
    h: Vec<i32>,
    d: Vec<i32>,
    t: Vec<i32>,
    spread: Vec<i32>,
    products: Vec<i32>,
    sums: Vec<i32>,
    /// Block cycles whose FF this share has run: junction 1's FF may run a block cycle
    /// early (see [`ShareWork::ff_ahead`]).
    ff_done: usize,
}

impl ShareWork {
    /// The share's buffers, made on the thread that will use them: the allocator then keeps
    /// them in that thread's own memory, and no cache line holds two threads' buffers.
    fn allocate(&mut self, c: &Context) {
        (self.w, self.b) = (self.w.clone(), self.b.clone());
        let (rows, edges) = (self.rows.len(), self.edges.len());
        let left = c.patterns[self.j].left;
        let last = self.j + 1 == c.patterns.len();
        self.words = vec![0; edges];
        self.x = vec![vec![0; edges]; c.depth];
        self.sp = vec![vec![0; rows]; c.depth];
        self.out_delta = vec![vec![0; if last { rows } else { 0 }]; c.depth];
        self.a_left = vec![0; left];
        self.h = vec![0; rows];
        self.d = vec![0; rows];
        self.t = vec![0; edges];
        self.spread = vec![0; edges];
        self.products = vec![0; edges];
        self.sums = vec![0; left];
    }

    /// FF of `cycle`, unless it ran ahead.
    fn ff_once(&mut self, c: &Context, cycle: usize) {
        if self.ff_done <= cycle {
            self.ff(c, cycle);
            self.ff_done = cycle + 1;
        }
    }

    /// Junction 1's FF of block cycle `cycle + 1`, run while the other parts finish `cycle`:
    /// it reads only the inputs and its own weights (its share's UP of `cycle` is done), and
    /// writes its own buffers and a mailbox slot no one reads in `cycle` (the ring holds at
    /// least four samples when a junction follows), so waiting for the others is not idle.
    fn ff_ahead(&mut self, c: &Context, cycle: usize) {
        if self.j == 0 && self.ff_done == cycle + 1 {
            self.ff_once(c, cycle + 1);
        }
    }

    fn ff(&mut self, c: &Context, cycle: usize) {
        let (j, s_count) = (self.j, c.data.len());
        if cycle < j || cycle - j >= s_count {
            return;
        }
        let n = cycle - j;
        let (slot, p) = (n % c.depth, &c.patterns[j]);
        let a_left: &[i32] = if j == 0 {
            if n + 1 < s_count {
                kernels::warm(c.data.input(n + 1));
            }
            c.data.input(n)
        } else {
            let made = c.mailbox.acts[slot][j - 1].iter();
            for (rows, made) in c.rows[j - 1].iter().zip(made) {
                for (a, m) in self.a_left[rows.clone()].iter_mut().zip(made) {
                    *a = m.load(Ordering::Relaxed);
                }
            }
            &self.a_left
        };
        let x = &mut self.x[slot];
        kernels::gather(&p.left_of_edge[self.edges.clone()], a_left, x);
        kernels::ff_sums(c.q, p.fan_in, &self.w, x, &self.b, &mut self.t, &mut self.h);
        let table = &c.tables[j];
        let made = self.h.iter().zip(self.sp[slot].iter_mut());
        if j + 1 == c.patterns.len() {
            let label = c.data.labels[n];
            let rows = self.rows.clone();
            for ((&h, sp), (r, out)) in made.zip(rows.zip(self.out_delta[slot].iter_mut())) {
                let (a, s) = activate(table, h);
                *sp = s;
                *out = output_delta(c.format, c.ends, a, r == label);
            }
        } else {
            for ((&h, sp), to) in made.zip(&c.mailbox.acts[slot][j][self.index]) {
                let (a, s) = activate(table, h);
                *sp = s;
                to.store(a, Ordering::Relaxed);
            }
        }
    }

    fn bp_up(&mut self, c: &Context, cycle: usize) {
        let (j, s_count) = (self.j, c.data.len());
        if cycle < c.bp[j] || cycle - c.bp[j] >= s_count {
            return;
        }
        let slot = (cycle - c.bp[j]) % c.depth;
        let p = &c.patterns[j];
        if j + 1 == c.patterns.len() {
            self.d.copy_from_slice(&self.out_delta[slot]);
        } else {
            let from = &c.mailbox.sums[slot][j];
            let rows = self.rows.clone();
            for ((d, &sp), r) in self.d.iter_mut().zip(&self.sp[slot]).zip(rows) {
                let s: i32 = from.iter().map(|f| f[r].load(Ordering::Relaxed)).sum();
                *d = hidden_delta(c.hidden, c.format, sp, c.q.saturate(s));
            }
        }
        if c.q.rounding == Rounding::Stochastic {
            self.stream.fill(&mut self.lanes, &mut self.words);
        }
        let products = (j > 0).then_some(&mut self.products[..]);
        let (x, words) = (&self.x[slot], &self.words);
        let (w, b, d) = (&mut self.w, &mut self.b, &self.d);
        kernels::update(c.q, p.fan_in, w, x, words, d, &mut self.spread, b, products);
        if j > 0 {
            let left = &p.left_of_edge[self.edges.clone()];
            kernels::back_sums(p.fan_in, left, &self.products, &self.d, &mut self.sums);
            let to = &c.mailbox.sums[slot][j - 1][self.index];
            for (m, &s) in to.iter().zip(&self.sums) {
                m.store(s, Ordering::Relaxed);
            }
        }
    }
}

/// A part's shares, alone in their cache lines: the threads lock parts every block cycle.
#[repr(align(128))]
struct Part(Mutex<Vec<ShareWork>>);

/// Parts a thread takes as its own: one, since every share adds a jump of its lanes per pass.
pub const PARTS_PER_THREAD: usize = 1;

/// [`Reference::train`] on `threads` threads with the junctions' rows in `parts` (from
/// [`split`]).
pub(crate) fn train(
    r: &mut Reference,
    data: &Encoded,
    threads: usize,
    parts: &[Vec<Share>],
) -> Work {
    let l = r.spec.junctions();
    let s_count = data.len();
    let bp: Vec<usize> = (0..l).map(|j| j + r.staleness[j]).collect();
    let depth = bp[0] + 1;
    let layers = &r.spec.layers;
    // Shares of each junction in row order, with their part.
    let mut shares_of: Vec<Vec<(usize, Range<usize>)>> = vec![vec![]; l];
    for (part, shares) in parts.iter().enumerate() {
        for s in shares {
            shares_of[s.junction].push((part, s.rows.clone()));
        }
    }
    shares_of
        .iter_mut()
        .for_each(|s| s.sort_by_key(|(_, rows)| rows.start));
    let mailbox = Mailbox {
        acts: (0..depth)
            .map(|_| {
                (0..l - 1)
                    .map(|j| shares_of[j].iter().map(|(_, r)| atomics(r.len())).collect())
                    .collect()
            })
            .collect(),
        sums: (0..depth)
            .map(|_| {
                (1..l)
                    .map(|j| shares_of[j].iter().map(|_| atomics(layers[j])).collect())
                    .collect()
            })
            .collect(),
    };
    let Reference {
        spec,
        format,
        tables,
        patterns,
        state,
        fast,
        lanes,
        ..
    } = r;
    let c = Context {
        data,
        patterns,
        q: *fast,
        format: *format,
        tables,
        hidden: spec.activation,
        ends: spec.output_delta_ends(),
        bp,
        depth,
        rows: shares_of
            .iter()
            .map(|s| s.iter().map(|(_, r)| r.clone()).collect())
            .collect(),
        mailbox,
        meeting: Meeting::new(parts.len(), threads),
    };
    // Each share with a copy of its rows' weights and biases.
    let mut works: Vec<Vec<ShareWork>> = parts.iter().map(|_| vec![]).collect();
    for (j, p) in c.patterns.iter().enumerate() {
        for (index, (part, rows)) in shares_of[j].iter().enumerate() {
            let edges = rows.start * p.fan_in..rows.end * p.fan_in;
            let n_edges = edges.len();
            let stream = ShareStream::new(p.z, p.edges(), edges.start, n_edges);
            let mut share_lanes = lanes[j].clone();
            stream.start(&mut share_lanes);
            works[*part].push(ShareWork {
                j,
                index,
                rows: rows.clone(),
                stream,
                edges: edges.clone(),
                w: state.weights[j][edges.clone()].to_vec(),
                b: state.biases[j][rows.clone()].to_vec(),
                lanes: share_lanes,
                // made by the thread that owns the share (ShareWork::allocate)
                words: vec![],
                x: vec![],
                sp: vec![],
                out_delta: vec![],
                a_left: vec![],
                h: vec![],
                d: vec![],
                t: vec![],
                spread: vec![],
                products: vec![],
                sums: vec![],
                ff_done: 0,
            });
        }
    }
    let parts: Vec<Part> = works.into_iter().map(|w| Part(Mutex::new(w))).collect();
    let cycles = s_count + c.bp[0];
    let allocated = Barrier::new(threads);
    let run = |me: usize| {
        let _guard = FailGuard(&c.meeting);
        let mut tuner = Tuner::new(threads);
        let own: Vec<usize> = (0..parts.len())
            .filter(|&i| i * threads / parts.len() == me)
            .collect();
        let all: Vec<usize> = (0..parts.len()).collect();
        for &i in &own {
            let mut part = parts[i].0.lock().expect("no thread has failed yet");
            part.iter_mut().for_each(|s| s.allocate(&c));
        }
        allocated.wait();
        let mut cycle = 0;
        while cycle < cycles {
            c.meeting.wait(cycle);
            if me == 0 {
                if let Some(n) = tuner.at(cycle) {
                    c.meeting.set_active(n);
                }
            } else if me >= c.meeting.active() {
                c.meeting.idle(me);
                cycle = c.meeting.current();
                continue;
            }
            // Each thread runs its own parts (a part that changes thread brings its weights
            // and buffers through the caches), thread 0 alone runs them all, and a part still
            // untaken after a while (its thread held back by the operating system) goes to
            // whoever is waiting.
            let alone = me == 0 && c.meeting.active() == 1;
            let mut spins = 0u32;
            let mut ahead = false;
            loop {
                let order = if alone || spins >= SPINS { &all } else { &own };
                for &i in order {
                    if c.meeting.finished(i) > cycle {
                        continue;
                    }
                    let mut part = match parts[i].0.try_lock() {
                        Ok(part) => part,
                        Err(TryLockError::WouldBlock) => continue,
                        Err(TryLockError::Poisoned(_)) => panic!("another training thread failed"),
                    };
                    // another thread may have run it between the look and the lock
                    if c.meeting.finished(i) > cycle {
                        continue;
                    }
                    for s in part.iter_mut() {
                        s.ff_once(&c, cycle);
                        s.bp_up(&c, cycle);
                    }
                    c.meeting.finish(i, cycle);
                }
                if (0..parts.len()).all(|i| c.meeting.finished(i) > cycle) {
                    break;
                }
                if !ahead {
                    // the thread's own parts are done: the next block cycle's independent
                    // work instead of waiting
                    ahead = true;
                    for &i in order {
                        if c.meeting.finished(i) <= cycle {
                            continue;
                        }
                        if let Ok(mut part) = parts[i].0.try_lock() {
                            part.iter_mut().for_each(|s| s.ff_ahead(&c, cycle));
                        }
                    }
                    continue;
                }
                spins += 1;
                if spins < SPINS {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            cycle += 1;
        }
        if me == 0 {
            c.meeting.end();
        }
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads).map(|t| scope.spawn(move || run(t))).collect();
        run(0);
        for h in others {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    // The weights and biases back, and the lanes of the share that starts each junction's
    // pass: it holds the junction's lanes between passes.
    for s in parts
        .into_iter()
        .flat_map(|p| p.0.into_inner().expect("every part finished"))
    {
        state.weights[s.j][s.edges.clone()].copy_from_slice(&s.w);
        state.biases[s.j][s.rows.clone()].copy_from_slice(&s.b);
        if s.edges.start == 0 {
            lanes[s.j] = s.lanes;
        }
    }
    Work {
        samples: s_count as u64,
        block_cycles: cycles as u64,
        edge_ops: (s_count * spec.edge_ops_per_sample()) as u64,
    }
}

#[path = "reference_meeting.rs"]
mod meeting;
