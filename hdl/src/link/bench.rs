//! Two boards in one simulation: a link's sender and receiver, each on its own clock
//! (periods in picoseconds, so oscillators a few hundred ppm apart are exact), the wires
//! between them, and faults injected on those wires. A multi-board co-simulation steps its
//! boards the same way: the next clock edge of any board, then the wires.

use super::rx::LinkRx;
use super::tx::LinkTx;
use rust_hdl::prelude::*;

/// What the receiver's pins see in one beat.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Beat {
    pub data: u64,
    pub valid: bool,
    pub start: bool,
}

/// Rewrites the `n`-th beat the sender put on the wire (counting from 0) before the
/// receiver sees it.
pub type Fault = Box<dyn FnMut(u64, &mut Beat)>;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Edge {
    TxRise,
    TxFall,
    RxRise,
    RxFall,
}

pub struct LinkBench<const W: usize, const N: usize, const NP1: usize> {
    pub tx: LinkTx<W>,
    pub rx: LinkRx<W, N, NP1>,
    tx_half: u64,
    rx_half: u64,
    next_tx: u64,
    next_rx: u64,
    tx_high: bool,
    rx_high: bool,
    /// Rising edges of each clock so far.
    pub tx_clocks: u64,
    pub rx_clocks: u64,
    /// Beats the sender has put on the wire, and the index of the one there now.
    pub beats: u64,
    on_wire: Option<u64>,
    pub fault: Option<Fault>,
    pub seen: Streamed,
}

/// What [`LinkBench::stream`] saw, over all its calls.
#[derive(Debug, Default)]
pub struct Streamed {
    /// Words the sender took.
    pub sent: usize,
    /// Every word the receiver handed out, in order (good or not).
    pub words: Vec<u16>,
    /// `good` pulses.
    pub good: usize,
    /// The receiver's `error` bits at the end.
    pub error: u64,
    /// Sender clocks from the first beat on the wire to the last.
    pub busy_tx_clocks: u64,
    first_beat: Option<u64>,
}

fn settle<B: Block>(b: &mut B) {
    assert!(simulate(b, 1000), "link circuit did not settle");
}

impl<const W: usize, const N: usize, const NP1: usize> LinkBench<W, N, NP1> {
    /// Clock periods in picoseconds (even); the receiver's first edge comes `rx_phase_ps`
    /// after the sender's.
    pub fn new(
        tx: LinkTx<W>,
        rx: LinkRx<W, N, NP1>,
        tx_period_ps: u64,
        rx_period_ps: u64,
        rx_phase_ps: u64,
    ) -> Self {
        assert!(tx_period_ps.is_multiple_of(2) && rx_period_ps.is_multiple_of(2));
        let mut b = Self {
            tx,
            rx,
            tx_half: tx_period_ps / 2,
            rx_half: rx_period_ps / 2,
            next_tx: tx_period_ps / 2,
            next_rx: tx_period_ps / 2 + rx_phase_ps,
            tx_high: false,
            rx_high: false,
            tx_clocks: 0,
            rx_clocks: 0,
            beats: 0,
            on_wire: None,
            fault: None,
            seen: Streamed::default(),
        };
        b.tx.connect_all();
        b.rx.connect_all();
        settle(&mut b.tx);
        b.wires();
        b
    }

    /// The edge [`fire`](Self::fire) will take next.
    pub fn peek(&self) -> Edge {
        match (self.next_tx <= self.next_rx, self.tx_high, self.rx_high) {
            (true, false, _) => Edge::TxRise,
            (true, true, _) => Edge::TxFall,
            (false, _, false) => Edge::RxRise,
            (false, _, true) => Edge::RxFall,
        }
    }

    /// Take the next clock edge and carry the wires across.
    pub fn fire(&mut self) {
        if self.next_tx <= self.next_rx {
            self.tx_high = !self.tx_high;
            self.next_tx += self.tx_half;
            self.tx.clock.next = self.tx_high.into();
            settle(&mut self.tx);
            if self.tx_high {
                self.tx_clocks += 1;
                self.on_wire = None;
                if self.tx.link_valid.val() {
                    self.on_wire = Some(self.beats);
                    self.beats += 1;
                }
            }
        } else {
            self.rx_high = !self.rx_high;
            self.next_rx += self.rx_half;
            self.rx.clock.next = self.rx_high.into();
            settle(&mut self.rx);
            if self.rx_high {
                self.rx_clocks += 1;
            }
        }
        self.wires();
    }

    fn wires(&mut self) {
        let mut beat = Beat {
            data: self.tx.link_data.val().index() as u64,
            valid: self.tx.link_valid.val(),
            start: self.tx.link_start.val(),
        };
        if let (Some(n), Some(f)) = (self.on_wire, self.fault.as_mut()) {
            f(n, &mut beat);
        }
        self.rx.link_clock.next = self.tx.link_clock.val();
        self.rx.link_data.next = (beat.data & ((1u64 << W) - 1)).into();
        self.rx.link_valid.next = beat.valid;
        self.rx.link_start.next = beat.start;
        settle(&mut self.rx);
        self.tx.link_credit.next = self.rx.link_credit.val();
        settle(&mut self.tx);
    }

    /// Send `vectors` (one transfer each) while the receiver's consumer takes words when
    /// `ready(receiver clock)` says so, until every transfer arrived good, an error shows, or
    /// `rx_clocks` more receiver clocks passed; a later call goes on where this one stopped.
    /// `awaiting` raises the receiver's `awaiting` while transfers are still due.
    pub fn stream(
        &mut self,
        vectors: &[Vec<u16>],
        mut ready: impl FnMut(u64) -> bool,
        awaiting: bool,
        rx_clocks: u64,
    ) -> &Streamed {
        let words: Vec<u16> = vectors.iter().flatten().copied().collect();
        let end = self.rx_clocks + rx_clocks;
        while self.rx_clocks < end && self.seen.good < vectors.len() && self.seen.error == 0 {
            match self.peek() {
                Edge::TxRise => {
                    let next = self.seen.sent;
                    self.tx.words.valid.next = next < words.len();
                    self.tx.words.data.next = (*words.get(next).unwrap_or(&0) as u64).into();
                    settle(&mut self.tx);
                    let took = self.tx.words.valid.val() && self.tx.words.ready.val();
                    self.fire();
                    self.seen.sent += took as usize;
                    if self.on_wire.is_some() {
                        let first = *self.seen.first_beat.get_or_insert(self.tx_clocks);
                        self.seen.busy_tx_clocks = self.tx_clocks - first + 1;
                    }
                }
                Edge::RxRise => {
                    self.rx.words.ready.next = ready(self.rx_clocks);
                    self.rx.awaiting.next = awaiting;
                    settle(&mut self.rx);
                    if self.rx.words.valid.val() && self.rx.words.ready.val() {
                        self.seen
                            .words
                            .push(self.rx.words.data.val().index() as u16);
                    }
                    self.seen.good += self.rx.good.val() as usize;
                    self.seen.error = self.rx.error.val().index() as u64;
                    self.fire();
                }
                _ => self.fire(),
            }
        }
        &self.seen
    }
}

/// A link's timing, measured: sender clocks per 16-bit word on the wire, and the clocks a
/// transfer takes beyond its words' (header and CRC included) from the first word offered to
/// `good` at the receiver. Board files carry these (`[link]`); the planner prices a transfer
/// of `len` words at `(len + 2) · clocks_per_word + latency_clocks` sender clocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkTiming {
    pub clocks_per_word: f64,
    pub latency_clocks: u64,
}

/// Words of a transfer beyond the vector: header and CRC.
pub const FRAME_WORDS: u64 = 2;

/// Receiver clocks from offering one `len`-word vector to an idle link (sender at 30 MHz,
/// receiver 300 ppm slower) until the receiver marks it good, with a consumer that always
/// takes.
fn transfer_clocks<const W: usize>(len: u16) -> u64 {
    let mut b: LinkBench<W, 5, 6> = LinkBench::new(
        LinkTx::new(len, 32),
        LinkRx::new(len, 1 << 20),
        33_334,
        33_344,
        33_334 / 3,
    );
    let v = vec![(0..len)
        .map(|i| i.wrapping_mul(40503))
        .collect::<Vec<u16>>()];
    let s = b.stream(&v, |_| true, false, 1_000_000);
    assert_eq!((s.good, s.error), (1, 0), "link transfer failed");
    b.rx_clocks
}

fn timing<const W: usize>() -> LinkTiming {
    let (short, long) = (16u16, 80u16);
    let (a, b) = (transfer_clocks::<W>(short), transfer_clocks::<W>(long));
    let per_word = (b - a) as f64 / (long - short) as f64;
    let wire = (short as u64 + FRAME_WORDS) as f64 * per_word;
    LinkTiming {
        clocks_per_word: per_word,
        latency_clocks: (a as f64 - wire).round() as u64,
    }
}

/// [`LinkTiming`] of a link `width` data pins wide; `None` for a width that does not divide 16.
pub fn link_timing(width: u64) -> Option<LinkTiming> {
    Some(match width {
        1 => timing::<1>(),
        2 => timing::<2>(),
        4 => timing::<4>(),
        8 => timing::<8>(),
        16 => timing::<16>(),
        _ => return None,
    })
}
