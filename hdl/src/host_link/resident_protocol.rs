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

/// Clocks the resident block takes to stream one record into the network, in beats of
/// `W = resident::feed_lanes` codes, from a data memory that answers the next clock
/// (`read_clocks = 1`: on chip) or fills a line of `sdram_memory::LINE_WORDS` words every
/// `read_clocks` clocks (the SDRAM). On chip: one clock per beat and
/// `resident::RECORD_OVERHEAD_CLOCKS`. From the SDRAM: that, or the fills of the lines the
/// record touches, when they take longer (on average over the records of a set: record `k`
/// starts `k·R mod LINE_WORDS` words into a line).
pub fn record_feed_clocks(spec: &edgeflow_core::Spec, read_clocks: u64) -> u64 {
    let beats = spec.layers[0].div_ceil(crate::resident::feed_lanes(spec, read_clocks)) as u64;
    let on_chip = beats + crate::resident::RECORD_OVERHEAD_CLOCKS as u64;
    match read_clocks {
        0 | 1 => on_chip,
        r => {
            let (line, words) = (crate::sdram_memory::LINE_WORDS, spec.record_words());
            let touched: usize = (0..line)
                .map(|k| (k * words % line + words).div_ceil(line))
                .sum();
            on_chip.max((touched as u64 * r).div_ceil(line as u64))
        }
    }
}

/// What TRAIN_RESIDENT's clock count comes to for `n` samples and `epochs` epochs on a
/// network built as `spec` (the board's pipeline options applied), over a data memory of
/// `read_clocks` (as [`record_feed_clocks`]), without simulating it: per epoch, the
/// walker's start, then one sample per block cycle or per record feed, whichever is longer
/// (the first record's feed is not hidden), and the pipeline's drain. An estimate: the
/// unpacker's stalls depend on how the codes fall into words, the SDRAM's refreshes and the
/// walker's search are left out; tests/tests/resident_rtl.rs holds it to the RTL's count.
pub fn train_resident_clocks_estimate(
    spec: &edgeflow_core::Spec,
    n: usize,
    epochs: usize,
    read_clocks: u64,
) -> u64 {
    let t = spec.block_cycle_clocks() as u64;
    let feed = record_feed_clocks(spec, read_clocks);
    let n = n as u64;
    let samples = (feed + n * t).max(n * feed);
    let drain = (2 * spec.junctions() as u64 - 1) * t;
    epochs as u64 * (EPOCH_START_CLOCKS + samples + drain)
}
