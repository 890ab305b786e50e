//! The host's side of the resident commands (hdl/PROTOCOL.md, "Resident data"): the words
//! of UPLOAD frames, TRAIN_RESIDENT and INFER_RESIDENT, and the answers they expect. Every
//! transport (rust-hdl simulation, Verilator, a serial port) sends exactly these words.

use crate::resident::{OP_INFER_RESIDENT, OP_TRAIN_RESIDENT, OP_UPLOAD};
use edgeflow_core::order::{half_bits, order_seed};
use edgeflow_core::LaneRng;

/// Words of one UPLOAD frame's payload at most: frames are acknowledged one by one, so a
/// bad frame is found before the next is sent, and a frame stays short next to a run.
pub const FRAME_WORDS: usize = 4096;

/// The frame checksum: `sum1 += w; sum2 += sum1` (16-bit, wrapping) over the header and the
/// payload; the frame ends with `sum1, sum2`.
pub fn checksum(words: &[u16]) -> (u16, u16) {
    let (mut s1, mut s2) = (0u16, 0u16);
    for &w in words {
        s1 = s1.wrapping_add(w);
        s2 = s2.wrapping_add(s1);
    }
    (s1, s2)
}

/// One UPLOAD frame: `payload` written from word address `addr`.
pub fn upload_frame(addr: usize, payload: &[u16]) -> Vec<u16> {
    assert!(addr < 1 << 21 && payload.len() < 1 << 16);
    let mut f = vec![
        OP_UPLOAD,
        addr as u16,
        (addr >> 16) as u16,
        payload.len() as u16,
    ];
    f.extend_from_slice(payload);
    let (s1, s2) = checksum(&f[1..]);
    f.extend([s1, s2]);
    f
}

/// The frames that upload `words` from address `addr` on.
pub fn upload_frames(addr: usize, words: &[u16]) -> Vec<Vec<u16>> {
    words
        .chunks(FRAME_WORDS)
        .enumerate()
        .map(|(i, c)| upload_frame(addr + i * FRAME_WORDS, c))
        .collect()
}

/// The xorshift32 state of the sample order at the start of epoch `epoch` (four keys an
/// epoch, `edgeflow_core::order`).
pub fn order_state(epoch: usize) -> u32 {
    let mut rng = LaneRng(order_seed());
    for _ in 0..4 * epoch {
        rng.next_word();
    }
    rng.0
}

/// TRAIN_RESIDENT: `epochs` epochs over the `n` records from address 0, starting at epoch
/// `first_epoch` of the reference's order.
pub fn train_resident(n: usize, epochs: usize, first_epoch: usize) -> Vec<u16> {
    assert!((1..1 << 16).contains(&n) && (1..1 << 16).contains(&epochs));
    let s = order_state(first_epoch);
    vec![
        OP_TRAIN_RESIDENT,
        n as u16,
        epochs as u16,
        s as u16,
        (s >> 16) as u16,
        half_bits(n) as u16,
    ]
}

/// INFER_RESIDENT: the `n` consecutive records from word address `addr`.
pub fn infer_resident(addr: usize, n: usize) -> Vec<u16> {
    assert!(addr < 1 << 21 && (1..1 << 16).contains(&n));
    vec![
        OP_INFER_RESIDENT,
        addr as u16,
        (addr >> 16) as u16,
        n as u16,
    ]
}

/// A clock count from its answer words, low first.
pub fn clocks(words: &[u16]) -> u64 {
    words
        .iter()
        .rev()
        .fold(0u64, |acc, &w| acc << 16 | w as u64)
}

/// Clocks at the start of each epoch before the first record streams (the record walker's
/// four round keys and its first search), as the RTL counts them.
pub const EPOCH_START_CLOCKS: u64 = 26;

/// Clocks the resident block takes to stream one record of a set of `n` into the network,
/// on average over the walk, from a data memory that answers the next clock
/// (`read_clocks = 1`: on chip) or fills a line of `sdram_memory::LINE_WORDS` words every
/// `read_clocks` clocks (the SDRAM); see [`record_feeds`].
pub fn record_feed_clocks(spec: &edgeflow_core::Spec, read_clocks: u64, n: usize) -> u64 {
    mean_clocks(&record_feeds(spec, read_clocks, n), 0).ceil() as u64
}

/// The mean over records of `feeds` of their clocks, each at least `floor`.
fn mean_clocks(feeds: &[(f64, u64, u64)], floor: u64) -> f64 {
    let total: f64 = feeds
        .iter()
        .map(|f| f.0 * f.1.max(floor) as f64 + (1.0 - f.0) * f.2.max(floor) as f64)
        .sum();
    total / feeds.len().max(1) as f64
}

/// For each record of a set of `n`, in beats of `W = resident::feed_lanes` codes: the chance
/// that its first line is already buffered, and its feed's clocks then and otherwise. On
/// chip: one clock per beat and `resident::RECORD_OVERHEAD_CLOCKS`, never buffered. From the
/// SDRAM: that, or the fills of the lines the record touches, when they take longer. Record
/// `k` lies at word `k·R`, and its first line needs no fill when the record before it in the
/// walk (any other record, equally likely) ended in that line, which the buffer still holds.
fn record_feeds(spec: &edgeflow_core::Spec, read_clocks: u64, n: usize) -> Vec<(f64, u64, u64)> {
    let beats = spec.layers[0].div_ceil(crate::resident::feed_lanes(spec, read_clocks)) as u64;
    let on_chip = beats + crate::resident::RECORD_OVERHEAD_CLOCKS as u64;
    if read_clocks <= 1 || n == 0 {
        return vec![(0.0, on_chip, on_chip)];
    }
    let (line, words) = (crate::sdram_memory::LINE_WORDS, spec.record_words());
    let first = |k: usize| k * words / line;
    let last = |k: usize| (k * words + words - 1) / line;
    let mut ending = vec![0usize; last(n - 1) + 1];
    for k in 0..n {
        ending[last(k)] += 1;
    }
    let feed = |fills: usize| on_chip.max(fills as u64 * read_clocks);
    (0..n)
        .map(|k| {
            let others = ending[first(k)] - (first(k) == last(k)) as usize;
            let buffered = if n > 1 {
                others as f64 / (n - 1) as f64
            } else {
                0.0
            };
            let touched = last(k) - first(k) + 1;
            (buffered, feed(touched - 1), feed(touched))
        })
        .collect()
}

/// What TRAIN_RESIDENT's clock count comes to for `n` samples and `epochs` epochs on a
/// network built as `spec` (the board's pipeline options applied), over a data memory of
/// `read_clocks` (as [`record_feed_clocks`]), without simulating it: per epoch, the
/// walker's start, then one sample per block cycle or per record feed, whichever is longer
/// for that record (the first record's feed is not hidden), and the pipeline's drain. An
/// estimate: the unpacker's stalls depend on how the codes fall into words, the SDRAM's
/// refreshes and the walker's search are left out; tests/tests/resident_rtl.rs holds it to
/// the RTL's count.
pub fn train_resident_clocks_estimate(
    spec: &edgeflow_core::Spec,
    n: usize,
    epochs: usize,
    read_clocks: u64,
) -> u64 {
    let t = spec.block_cycle_clocks() as u64;
    let feeds = record_feeds(spec, read_clocks, n);
    // a sample takes the block cycle or its record's feed, whichever is longer
    let per_sample = mean_clocks(&feeds, t);
    let first = mean_clocks(&feeds, 0).ceil() as u64;
    let samples = (first + n as u64 * t).max((n as f64 * per_sample).round() as u64);
    let drain = (2 * spec.junctions() as u64 - 1) * t;
    epochs as u64 * (EPOCH_START_CLOCKS + samples + drain)
}
