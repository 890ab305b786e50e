//! The clock-domain crossing of the link: a FIFO written in the sender's (forwarded) clock
//! and read in the receiver's. Its pointers cross as Gray code through two flip-flops each,
//! so a pointer sampled mid-change is either its old or its new value, and each side sees
//! the other's progress two or three of its own clocks late. The write side also reports
//! how many words it has seen read (`read_count`): the receiver returns credits from it, so
//! a credit never promises an entry the write side still thinks is full.
//!
//! rust-hdl's `AsynchronousFIFO` hands its pointers over with a request/acknowledge
//! handshake, which shows the write side the read pointer up to about twenty clocks late;
//! credits would then have to hold back that many entries, so the link has its own.

use rust_hdl::prelude::*;

/// `N` address bits (`2^N` entries, at most 4096), `NP1 = N + 1` pointer bits.
#[derive(LogicBlock)]
pub struct CdcFifo<D: Synth, const N: usize, const NP1: usize> {
    pub write_clock: Signal<In, Clock>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, D>,
    pub full: Signal<Out, Bit>,
    /// Sticky: a write arrived while full (the word is dropped).
    pub overflow: Signal<Out, Bit>,
    /// Words read so far, modulo `2^NP1`, as the write side has seen them.
    pub read_count: Signal<Out, Bits<NP1>>,
    pub read_clock: Signal<In, Clock>,
    pub read: Signal<In, Bit>,
    /// The oldest word, valid while `empty` is low.
    pub data_out: Signal<Out, D>,
    pub empty: Signal<Out, Bit>,
    ram: RAM<D, N>,
    wr_bin: DFF<Bits<NP1>>,
    wr_gray: DFF<Bits<NP1>>,
    rd_sync1: DFF<Bits<NP1>>,
    rd_sync2: DFF<Bits<NP1>>,
    overflow_q: DFF<Bit>,
    rd_bin: DFF<Bits<NP1>>,
    rd_gray: DFF<Bits<NP1>>,
    wr_sync1: DFF<Bits<NP1>>,
    wr_sync2: DFF<Bits<NP1>>,
    // Gray code of a full FIFO's write pointer differs from the read pointer's in the top
    // two bits.
    full_mask: Constant<Bits<NP1>>,
    is_full: Signal<Local, Bit>,
    is_empty: Signal<Local, Bit>,
    wr_next: Signal<Local, Bits<NP1>>,
    rd_next: Signal<Local, Bits<NP1>>,
    g1: Signal<Local, Bits<NP1>>,
    g2: Signal<Local, Bits<NP1>>,
    g3: Signal<Local, Bits<NP1>>,
}

impl<D: Synth, const N: usize, const NP1: usize> Default for CdcFifo<D, N, NP1> {
    fn default() -> Self {
        assert!(
            N + 1 == NP1 && (1..=12).contains(&N),
            "CdcFifo: N in 1..=12, NP1 = N + 1"
        );
        Self {
            write_clock: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            full: Default::default(),
            overflow: Default::default(),
            read_count: Default::default(),
            read_clock: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            empty: Default::default(),
            ram: Default::default(),
            wr_bin: Default::default(),
            wr_gray: Default::default(),
            rd_sync1: Default::default(),
            rd_sync2: Default::default(),
            overflow_q: Default::default(),
            rd_bin: Default::default(),
            rd_gray: Default::default(),
            wr_sync1: Default::default(),
            wr_sync2: Default::default(),
            full_mask: Constant::new((3u64 << (NP1 - 2)).into()),
            is_full: Default::default(),
            is_empty: Default::default(),
            wr_next: Default::default(),
            rd_next: Default::default(),
            g1: Default::default(),
            g2: Default::default(),
            g3: Default::default(),
        }
    }
}

impl<D: Synth, const N: usize, const NP1: usize> Logic for CdcFifo<D, N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            write_clock,
            wr_bin,
            wr_gray,
            rd_sync1,
            rd_sync2,
            overflow_q
        );
        dff_setup!(self, read_clock, rd_bin, rd_gray, wr_sync1, wr_sync2);
        self.ram.write_clock.next = self.write_clock.val();
        self.ram.read_clock.next = self.read_clock.val();
        // Write side.
        self.rd_sync1.d.next = self.rd_gray.q.val();
        self.rd_sync2.d.next = self.rd_sync1.q.val();
        self.is_full.next = self.wr_gray.q.val() == (self.rd_sync2.q.val() ^ self.full_mask.val());
        self.full.next = self.is_full.val();
        self.wr_next.next = self.wr_bin.q.val() + 1;
        self.ram.write_address.next = bit_cast::<N, NP1>(self.wr_bin.q.val());
        self.ram.write_data.next = self.data_in.val();
        self.ram.write_enable.next = self.write.val() & !self.is_full.val();
        if self.write.val() & !self.is_full.val() {
            self.wr_bin.d.next = self.wr_next.val();
            self.wr_gray.d.next = self.wr_next.val() ^ (self.wr_next.val() >> 1);
        }
        if self.write.val() & self.is_full.val() {
            self.overflow_q.d.next = true;
        }
        self.overflow.next = self.overflow_q.q.val();
        // Gray to binary: each bit is the xor of itself and all above it (NP1 <= 16).
        self.g1.next = self.rd_sync2.q.val() ^ (self.rd_sync2.q.val() >> 1);
        self.g2.next = self.g1.val() ^ (self.g1.val() >> 2);
        self.g3.next = self.g2.val() ^ (self.g2.val() >> 4);
        self.read_count.next = self.g3.val() ^ (self.g3.val() >> 8);
        // Read side: the RAM reads the entry after the one taken, so `data_out` always
        // shows the oldest word.
        self.wr_sync1.d.next = self.wr_gray.q.val();
        self.wr_sync2.d.next = self.wr_sync1.q.val();
        self.is_empty.next = self.rd_gray.q.val() == self.wr_sync2.q.val();
        self.empty.next = self.is_empty.val();
        self.rd_next.next = self.rd_bin.q.val() + 1;
        self.ram.read_address.next = bit_cast::<N, NP1>(self.rd_bin.q.val());
        if self.read.val() & !self.is_empty.val() {
            self.rd_bin.d.next = self.rd_next.val();
            self.rd_gray.d.next = self.rd_next.val() ^ (self.rd_next.val() >> 1);
            self.ram.read_address.next = bit_cast::<N, NP1>(self.rd_next.val());
        }
        self.data_out.next = self.ram.read_data.val();
    }
}
