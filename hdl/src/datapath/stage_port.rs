//! The right boundary of a stage (stage.rs): what the stage's last junction needs of the
//! layer to its right when the next junction sits on another board. On one board that
//! layer's memories live in the next junction; across a link, two of them stay here:
//!
//! - σ′ of the right layer, written by the last junction's FF (sample `t - F`) and read back
//!   by its BP `s` block cycles later (sample `t - F - s`, `s` its staleness): `s + 1`
//!   rotating copies, write copy `ptr`, read copy `ptr + 1`, rotated at every block cycle's
//!   last clock. σ′ never crosses the link.
//! - the back-propagated delta sums BP reads, two buffers: block cycle `t` reads the copy of
//!   `t`'s parity while the link's sums for `t + 1` are written into the other. The link
//!   carries them saturated to the value format (the next board saturates them, as BP
//!   would); BP reads them sign-extended.
//!
//! Both are rotating-copy memories (copy_memory.rs; the sums in one copy) on a copy pointer
//! (copy_pointer.rs), wired here once. Reads are combinational in the model, like the
//! junction memories they replace.

use crate::copy_memory::CopyMemory;
use crate::copy_pointer::CopyPointer;
use crate::junction::ports::groups;
use crate::junction::LeftGroup;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use rust_hdl::core::prelude::*;

/// A stage's left boundary, one group: the previous board's activations arriving over the
/// link (`w_*`: the first junction's left layer) and the delta sums its BP reads and clears
/// there, saturated to the value format for the link (`q_*`).
#[derive(LogicInterface, Default)]
pub struct BoundaryLeft {
    pub w_en: Signal<In, Bit>,
    pub w_addr: Signal<In, Bits<16>>,
    pub w_a: Signal<In, Bits<16>>,
    pub q_addr: Signal<In, Bits<16>>,
    pub q_clear: Signal<In, Bit>,
    pub q_sum: Signal<Out, Bits<16>>,
    /// The same sum before saturation (for a reader that saturates it a clock later).
    pub q_acc: Signal<Out, Bits<32>>,
}

/// A stage's right boundary, one group: the activations its last junction's FF finishes, for
/// the link to the next board (σ′ stays in [`RightPort`]).
#[derive(LogicInterface, Default)]
pub struct BoundaryRight {
    pub w_en: Signal<Out, Bit>,
    pub w_addr: Signal<Out, Bits<16>>,
    pub w_a: Signal<Out, Bits<16>>,
}

#[derive(LogicBlock)]
pub struct RightPort {
    pub clock: Signal<In, Clock>,
    pub last: Signal<In, Bit>,
    pub restart: Signal<In, Bit>,
    /// Per group, the last junction's right port as the next junction would see it: σ′ from
    /// its FF (`w_sp`; the activation `w_a` crosses the link instead), the delta sums and σ′
    /// its BP reads (`q_acc`, `q_sp`; the sums are cleared by the link's next write, so
    /// `q_clear` is not used).
    pub left: Vec<LeftGroup>,
    // delta sums from the link, for a block cycle of parity `d_copy`
    pub d_we: Signal<In, Bit>,
    pub d_copy: Signal<In, Bits<16>>,
    pub d_addr: Signal<In, Bits<16>>,
    pub d_data: Signal<In, Bits<16>>,
    /// σ′: `stale + 1` copies, one write port per FF port (port `q` writes the neurons
    /// `≡ q` modulo the ports, as FF finishes them).
    pub sp_mem: CopyMemory,
    /// The delta sums: a copy per block-cycle parity.
    pub sum_mem: CopyMemory,
    /// The parity of the block cycle running (0 at block cycle 0).
    pub parity: CopyPointer,
    /// σ′ is written to `copy` and read from `next_copy`, `stale` block cycles later.
    pub pointer: CopyPointer,
}

impl RightPort {
    /// `size` right neurons, `ports` of them per clock, the last junction's FF offset `ff`
    /// and staleness `stale` (block cycles from its FF to its BP of one sample).
    pub fn new(size: usize, ports: usize, ff: usize, stale: usize) -> RightPort {
        let copies = stale + 1;
        let start = (-(ff as i64)).rem_euclid(copies as i64) as usize;
        RightPort {
            clock: Default::default(),
            last: Default::default(),
            restart: Default::default(),
            left: groups(ports),
            d_we: Default::default(),
            d_copy: Default::default(),
            d_addr: Default::default(),
            d_data: Default::default(),
            sp_mem: CopyMemory::new(copies, size, ports, ports),
            sum_mem: CopyMemory::new(2, size, ports, 1),
            parity: CopyPointer::new(2, 0),
            pointer: CopyPointer::new(copies, start),
        }
    }

    fn wire<W: Wires<Self>>(ports: usize, w: &mut W) {
        let clock = at!(w, clock);
        w.set(to!(sp_mem.clock), clock.clone());
        w.set(to!(sum_mem.clock), clock.clone());
        w.set(to!(pointer.clock), clock.clone());
        w.set(to!(parity.clock), clock);
        w.set(to!(parity.rotate), at!(w, last));
        w.set(to!(parity.restart), at!(w, restart));
        w.set(to!(pointer.rotate), at!(w, last));
        w.set(to!(pointer.restart), at!(w, restart));
        w.set(to!(sum_mem.wr_en[0]), at!(w, d_we));
        w.set(to!(sum_mem.wr_copy[0]), at!(w, d_copy));
        w.set(to!(sum_mem.wr_addr[0]), at!(w, d_addr));
        w.set(to!(sum_mem.wr_data[0]), at!(w, d_data));
        for q in 0..ports {
            w.set(to!(sp_mem.wr_en[q]), at!(w, left[q].w_en));
            w.set(to!(sp_mem.wr_copy[q]), at!(w, pointer.copy));
            w.set(to!(sp_mem.wr_addr[q]), at!(w, left[q].w_addr));
            w.set(to!(sp_mem.wr_data[q]), at!(w, left[q].w_sp));
            w.set(to!(sp_mem.rd_copy[q]), at!(w, pointer.next_copy));
            w.set(to!(sp_mem.rd_addr[q]), at!(w, left[q].q_addr));
            w.set(to!(left[q].q_sp), at!(w, sp_mem.rd_data[q]));
            w.set(to!(sum_mem.rd_copy[q]), at!(w, parity.copy));
            w.set(to!(sum_mem.rd_addr[q]), at!(w, left[q].q_addr));
            // BP reads the sums sign-extended
            let sum = at!(w, sum_mem.rd_data[q]);
            let wide = w.concat16(&w.sign_fill16(&sum), &sum);
            w.set(to!(left[q].q_acc), wide);
        }
    }
}

impl Logic for RightPort {
    fn update(&mut self) {
        let ports = self.left.len();
        Self::wire(ports, &mut Sim(self));
    }
    fn connect(&mut self) {
        let ports = self.left.len();
        Self::wire(ports, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(self.left.len(), &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{b16, s16, s32};
    use crate::testing::{settle, tick, yosys_check};

    /// σ′ written in block cycle `t` comes back `stale` block cycles later; the sums for
    /// `t + 1`, written in the middle of block cycle `t`, leave `t`'s reads alone and are read
    /// as written in `t + 1`; out-of-range addresses read 0.
    #[test]
    fn sigma_prime_comes_back_after_the_staleness_and_sums_as_written() {
        let (n, g, ff, stale) = (6, 2, 3, 4);
        let mut p = RightPort::new(n, g, ff, stale);
        p.connect_all();
        p.restart.next = true;
        tick(&mut p, |p| &mut p.clock);
        p.restart.next = false;
        let sp = |t: usize, a: usize| (t * 10 + a) as i32 - 40;
        let write_sums = |p: &mut RightPort, t: usize| {
            for a in 0..n {
                p.d_we.next = true;
                p.d_copy.next = b16((t % 2) as i32);
                p.d_addr.next = b16(a as i32);
                p.d_data.next = b16(-100 * (t as i32 + 1) + a as i32);
                tick(p, |p| &mut p.clock);
            }
            p.d_we.next = false;
        };
        write_sums(&mut p, 0);
        for t in 0..12usize {
            // the block cycle: rows of g neurons, FF writes σ′ of sample t - ff
            let rows = n / g;
            for r in 0..rows {
                if r == 1 {
                    // the link's sums for the next block cycle arrive meanwhile
                    for q in 0..g {
                        p.left[q].w_en.next = false;
                    }
                    write_sums(&mut p, t + 1);
                }
                for q in 0..g {
                    let a = r * g + q;
                    p.left[q].w_en.next = true;
                    p.left[q].w_addr.next = b16(a as i32);
                    p.left[q].w_sp.next = b16(sp(t, a));
                    p.left[q].q_addr.next = b16(a as i32);
                }
                settle(&mut p);
                for q in 0..g {
                    let a = r * g + q;
                    assert_eq!(s32(p.left[q].q_acc.val()), -100 * (t as i64 + 1) + a as i64);
                    if t >= stale {
                        assert_eq!(s16(p.left[q].q_sp.val()), sp(t - stale, a), "t={t} a={a}");
                    }
                }
                p.last.next = r + 1 == rows;
                tick(&mut p, |p| &mut p.clock);
            }
            p.last.next = false;
            for q in 0..g {
                p.left[q].w_en.next = false;
            }
        }
        p.left[0].q_addr.next = b16(n as i32);
        settle(&mut p);
        assert_eq!(s32(p.left[0].q_acc.val()), 0);
        assert_eq!(s16(p.left[0].q_sp.val()), 0);
    }

    #[test]
    fn right_port_verilog_is_clean() {
        yosys_check(&RightPort::new(6, 2, 3, 4), "right_port");
    }
}
