//! One junction: a composite, with no state of its own, of the sequencer, the interleaver
//! (address generator), the weight and bias memories, the left layer's memories (rotating
//! activation and σ′ copies, double-buffered delta sums), the output-delta memory of the last
//! junction, and the FF, BP and UP units. It runs one FF pass and one BP/UP pass per block
//! cycle, both over the edges in edge order: clock `k` handles edges `k·z … k·z+z-1`.
//!
//! Timing (clock `k` of a block cycle, `C_j` clocks per pass, `C = max C_j`):
//! - weights and biases are synchronous-read RAMs whose address for clock `k` is presented in
//!   clock `k-1` (prefetch), so FF, BP and UP of clock `k` share one read of `w_e`;
//! - FF multiplies and sums in clock `k`; a finished neuron's sum is saturated and looked up
//!   in the activation ROM (registered read) in `k+1`, and its σ, σ′, output delta and the
//!   prediction update land at the end of `k+2` (ff_unit.rs, `params::FF_LATENCY`);
//! - BP computes the deltas in clock `k`; they and the weights, activations and addresses of
//!   clock `k` are registered (`bpp`), and the contributions `w·δ` (into the left delta sums)
//!   and UP's new weights and biases are computed and written in `k+1`. The next read of a
//!   weight or bias is in the next block cycle, so the delay needs no forwarding;
//! - a block cycle is `T = C + FF_LATENCY` clocks: the last right-layer write of a pass lands
//!   at the end of its last clock, before the next junction reads it in block cycle `t+1`;
//! - the left layer's memories are read combinationally, so a delta sum read in clock `k+1`
//!   already holds what was added at the end of clock `k`: the read-modify-write hazard
//!   across a sweep boundary cannot occur and needs no forwarding;
//! - with registered reads (`Spec::registered_reads`) every memory read of clock `k` and that
//!   clock's control pass the read registers `rdp` first, and everything above happens one
//!   clock later: `T = C + FF_LATENCY + 1`, the same bits;
//! - with the deep pipeline (`Spec::deep_pipeline`) every product is held a clock in its
//!   unit (the MAC16's output register in the Verilog) and each finished sum is saturated into
//!   a register before its activation lookup: FF's results land two clocks later
//!   (`params::DEEP_FF_CLOCKS`; `FfUnit::ffd` delays the control to the products), BP's delta
//!   comes out of BP's register a clock later and feeds the contributions and UP directly
//!   (not through `bpp`), and the weight write-backs and contributions land a clock after
//!   that, with the weight, its row and left neuron held in `upp`; host writes (`hwp`),
//!   bias writes (`bwp`) and weight writes (`wwp`) pass a register of their own. FF's last
//!   write of a pass lands at the end of clock `C + FF_LATENCY + rr + 1` (rr = 1 with
//!   registered reads), so
//!   `T = C + FF_LATENCY + rr + DEEP_FF_CLOCKS`, the same bits.
//!
//! In the Verilog those memories are block RAMs read on the falling edge (addresses and
//! contents only change at the rising edge, so the next rising edge sees exactly the
//! combinational read of the behavioural model), the type-1 interleaver tables are ROMs read
//! at the rising edge with the counters' next state. Without registered reads a falling-edge
//! read feeds a multiplier in the same clock, which gets half a clock: on the iCE40 UP5K,
//! whose SB_MAC16 multiplies combinationally in up to 9 ns, that sets the clock (static
//! timing with the multiplies, flow/sta.rs). With registered reads the read gets its own half
//! clock and the multiply a whole one, and the BP/UP write-backs (multiply, round, saturate,
//! subtract into the weight memory) set it instead. The deep pipeline lifts that limit too,
//! together with the delta sums read on the rising edge (delta_memory.rs), the memory writes
//! through registers (`wwp`, `bwp`), a flip-flop bias memory's address registered
//! (banked_ram.rs), the read range checks from the sequencer and the prefetch addresses on
//! the controller's `step`.
//!
//! All state lives in leaf blocks: rust-hdl's simulator hands the clock edge down one
//! hierarchy level per settling pass, which is exact only when composites hold no registers.

use crate::addr_gen::AddrGen;
use crate::banked_ram::BankedRam;
use crate::bp_unit::BpUnit;
use crate::copy_memory::CopyMemory;
use crate::delta_memory::DeltaMemory;
use crate::ff_unit::FfUnit;
use crate::fixed::{b16, b32, s16};
use crate::lane_rng::LaneStreams;
use crate::params::JunctionParams;
use crate::pipe_regs::PipeRegs;
use crate::sequencer::Sequencer;
use crate::up_unit::UpUnit;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct Junction {
    pub clock: Signal<In, Clock>,
    // controller
    pub adv: Signal<In, Bit>,
    pub k: Signal<In, Bits<16>>,
    pub last: Signal<In, Bit>,
    /// `adv && !last`, from the controller (its `step`)
    pub step: Signal<In, Bit>,
    pub ff_en: Signal<In, Bit>,
    pub bp_en: Signal<In, Bit>,
    pub parity: Signal<In, Bit>,
    pub restart: Signal<In, Bit>,
    pub label: Signal<In, Bits<16>>,
    // host access to weights and biases
    pub h_sel: Signal<In, Bit>,
    pub h_bias: Signal<In, Bit>,
    pub h_we: Signal<In, Bit>,
    pub h_addr: Signal<In, Bits<16>>,
    pub h_bank: Signal<In, Bits<16>>,
    pub h_wdata: Signal<In, Bits<16>>,
    pub h_rdata: Signal<Out, Bits<16>>,
    // input samples (first junction)
    pub in_we: Signal<In, Bit>,
    pub in_copy: Signal<In, Bits<16>>,
    pub in_addr: Signal<In, Bits<16>>,
    pub in_data: Signal<In, Bits<16>>,
    /// Input lanes 1 … W-1 (first junction): inputs `in_addr + 1 …` of the same beat.
    pub in_lane_we: Vec<Signal<In, Bit>>,
    pub in_lane_data: Vec<Signal<In, Bits<16>>>,
    // left layer, written by the previous junction's FF
    pub lw_en: Vec<Signal<In, Bit>>,
    pub lw_addr: Vec<Signal<In, Bits<16>>>,
    pub lw_a: Vec<Signal<In, Bits<16>>>,
    pub lw_sp: Vec<Signal<In, Bits<16>>>,
    // left layer deltas, read (and cleared) by the previous junction's BP
    pub lq_addr: Vec<Signal<In, Bits<16>>>,
    pub lq_clear: Vec<Signal<In, Bit>>,
    pub lq_acc: Vec<Signal<Out, Bits<32>>>,
    pub lq_sp: Vec<Signal<Out, Bits<16>>>,
    // right layer (to the next junction)
    pub rw_en: Vec<Signal<Out, Bit>>,
    pub rw_addr: Vec<Signal<Out, Bits<16>>>,
    pub rw_a: Vec<Signal<Out, Bits<16>>>,
    pub rw_sp: Vec<Signal<Out, Bits<16>>>,
    pub rq_addr: Vec<Signal<Out, Bits<16>>>,
    pub rq_clear: Vec<Signal<Out, Bit>>,
    pub rq_acc: Vec<Signal<In, Bits<32>>>,
    pub rq_sp: Vec<Signal<In, Bits<16>>>,
    /// Index of the first largest output so far (last junction): the prediction.
    pub pred: Signal<Out, Bits<16>>,
    // blocks
    pub seq: Sequencer,
    pub agen: AddrGen,
    pub wmem: BankedRam,
    pub bmem: BankedRam,
    pub amem: CopyMemory,
    pub smem: Vec<CopyMemory>,
    pub dmem: Vec<DeltaMemory>,
    pub omem: Vec<CopyMemory>,
    pub ff: FfUnit,
    pub bp: BpUnit,
    pub up: UpUnit,
    /// The lanes' stochastic-rounding streams (no lanes under nearest rounding).
    pub rng: LaneStreams,
    /// BP/UP pipeline registers (see [`BpWord`]): deltas and the operands of their clock.
    pub bpp: PipeRegs,
    /// Read registers (see [`RdWord`]), with `registered_reads`: every memory read and the
    /// control of its clock, one clock before the arithmetic uses them. Empty otherwise.
    pub rdp: PipeRegs,
    /// Write-back registers (see [`UpWord`]), with `deep_pipeline`: the weight, its row
    /// and left neuron held one clock more, to meet the registered UP products and
    /// contributions. Empty otherwise.
    pub upp: PipeRegs,
    /// Host write registers, with `deep_pipeline`: a host write (select, write, bias; bank,
    /// row, word) reaches the weight and bias memories a clock after the host link gives it,
    /// so the link's input handshake is not in front of every entry's write enable.
    pub hwp: PipeRegs,
    /// Bias write registers, with `deep_pipeline`: a bias write (per bank its enable; the
    /// row, then per bank the word) lands a clock later, so the update's arithmetic and the
    /// host's bank select do not sit in front of the bias memory's write port. The row is
    /// read again a block cycle later.
    pub bwp: PipeRegs,
    /// Weight write registers, with `deep_pipeline`: a weight write (per bank its enable;
    /// the row, then per bank the word) lands a clock later, so UP's clamp, subtraction and
    /// saturation end at flip-flops and not at the block RAM's data input. The row is read
    /// again a block cycle later.
    pub wwp: PipeRegs,
    _p: Box<JunctionParams>,
}

/// Words of the write-back registers: the weight row `k`, then per lane the weight and the
/// left neuron. Bit: BP/UP runs.
struct UpWord {
    z: usize,
}

impl UpWord {
    const K: usize = 0;
    fn w(&self, l: usize) -> usize {
        1 + l
    }
    fn left(&self, l: usize) -> usize {
        1 + self.z + l
    }
    fn count(&self) -> usize {
        1 + 2 * self.z
    }
}

/// Words of the BP/UP pipeline registers: the weight row `k`, the bias row, then per group
/// the delta and the bias, per lane the weight, UP's activation and the left neuron.
struct BpWord {
    z: usize,
    g: usize,
}

impl BpWord {
    const K: usize = 0;
    const ROW: usize = 1;
    fn d(&self, q: usize) -> usize {
        2 + q
    }
    fn bias(&self, q: usize) -> usize {
        2 + self.g + q
    }
    fn w(&self, l: usize) -> usize {
        2 + 2 * self.g + l
    }
    fn a(&self, l: usize) -> usize {
        2 + 2 * self.g + self.z + l
    }
    fn left(&self, l: usize) -> usize {
        2 + 2 * self.g + 2 * self.z + l
    }
    fn count(&self) -> usize {
        2 + 2 * self.g + 3 * self.z
    }
}

/// Words of the read registers: per lane the weight, FF's and UP's activations and the left
/// neuron, then the edge clock `k`, the row, and per group the bias, the low and high half of
/// the delta sum BP reads, and σ′. Bits: FF runs, first and last clock of a neuron, BP runs,
/// BP finishes a row.
struct RdWord {
    z: usize,
    g: usize,
}

impl RdWord {
    const RUN_FF: usize = 0;
    const FIRST: usize = 1;
    const LAST_SUB: usize = 2;
    const RUN_BP: usize = 3;
    const ROW_DONE: usize = 4;
    const BITS: usize = 5;
    fn w(&self, l: usize) -> usize {
        l
    }
    fn a(&self, l: usize) -> usize {
        self.z + l
    }
    fn u(&self, l: usize) -> usize {
        2 * self.z + l
    }
    fn left(&self, l: usize) -> usize {
        3 * self.z + l
    }
    fn k(&self) -> usize {
        4 * self.z
    }
    fn row(&self) -> usize {
        4 * self.z + 1
    }
    fn bias(&self, q: usize) -> usize {
        4 * self.z + 2 + q
    }
    fn acc_lo(&self, q: usize) -> usize {
        4 * self.z + 2 + self.g + q
    }
    fn acc_hi(&self, q: usize) -> usize {
        4 * self.z + 2 + 2 * self.g + q
    }
    fn sp(&self, q: usize) -> usize {
        4 * self.z + 2 + 3 * self.g + q
    }
    fn count(&self) -> usize {
        4 * self.z + 2 + 4 * self.g
    }
}

impl Junction {
    /// Mark every input as driven by the parent: the network and a stage both drive all of
    /// them (unused lane and port vectors are empty).
    pub fn connect_inputs(&mut self) {
        for x in [
            &mut self.adv,
            &mut self.last,
            &mut self.step,
            &mut self.ff_en,
            &mut self.bp_en,
            &mut self.parity,
            &mut self.restart,
            &mut self.h_sel,
            &mut self.h_bias,
            &mut self.h_we,
            &mut self.in_we,
        ] {
            x.connect();
        }
        for x in [
            &mut self.k,
            &mut self.label,
            &mut self.h_addr,
            &mut self.h_bank,
            &mut self.h_wdata,
            &mut self.in_copy,
            &mut self.in_addr,
            &mut self.in_data,
        ] {
            x.connect();
        }
        self.clock.connect();
        for v in [
            &mut self.lw_addr,
            &mut self.lw_a,
            &mut self.lw_sp,
            &mut self.lq_addr,
            &mut self.rq_sp,
            &mut self.in_lane_data,
        ] {
            v.iter_mut().for_each(|s| s.connect());
        }
        for v in [&mut self.lw_en, &mut self.lq_clear, &mut self.in_lane_we] {
            v.iter_mut().for_each(|s| s.connect());
        }
        self.rq_acc.iter_mut().for_each(|s| s.connect());
    }

    /// Junction `p.j`; `prev_groups`: right neurons the previous junction finishes per clock.
    pub fn new(p: &JunctionParams, prev_groups: usize) -> Junction {
        let (z, g) = (p.z, p.groups);
        let next = if p.is_last() { 0 } else { g };
        let prev = if p.is_first() { 0 } else { prev_groups };
        let hidden_left = !p.is_first();
        Junction {
            clock: Default::default(),
            adv: Default::default(),
            k: Default::default(),
            last: Default::default(),
            step: Default::default(),
            ff_en: Default::default(),
            bp_en: Default::default(),
            parity: Default::default(),
            restart: Default::default(),
            label: Default::default(),
            h_sel: Default::default(),
            h_bias: Default::default(),
            h_we: Default::default(),
            h_addr: Default::default(),
            h_bank: Default::default(),
            h_wdata: Default::default(),
            h_rdata: Default::default(),
            in_we: Default::default(),
            in_copy: Default::default(),
            in_addr: Default::default(),
            in_data: Default::default(),
            in_lane_we: vec![],
            in_lane_data: vec![],
            lw_en: crate::sigs(prev),
            lw_addr: crate::sigs(prev),
            lw_a: crate::sigs(prev),
            lw_sp: crate::sigs(prev),
            lq_addr: crate::sigs(prev),
            lq_clear: crate::sigs(prev),
            lq_acc: crate::sigs(prev),
            lq_sp: crate::sigs(prev),
            rw_en: crate::sigs(next),
            rw_addr: crate::sigs(next),
            rw_a: crate::sigs(next),
            rw_sp: crate::sigs(next),
            rq_addr: crate::sigs(next),
            rq_clear: crate::sigs(next),
            rq_acc: crate::sigs(next),
            rq_sp: crate::sigs(next),
            pred: Default::default(),
            seq: Sequencer::new(p),
            agen: AddrGen::new(p),
            wmem: BankedRam::new(z, p.clocks),
            // with registered reads a flip-flop bias memory's row multiplexer sits before
            // `rdp`, off the prefetch address path (which starts at the controller's `adv`)
            bmem: BankedRam::new(g, p.bias_rows()).with_registered_address(p.registered_reads),
            // FF reads port l, UP port z + l, both at lane l's neuron: only lane l's banks
            amem: CopyMemory::new(
                p.act_copies,
                p.left,
                2 * z,
                if p.is_first() { 1 } else { prev },
            )
            .with_read_banks(
                z,
                (0..2 * z)
                    .map(|r| p.pattern.bank.iter().map(|b| b[r % z]).collect())
                    .collect(),
            )
            .with_width(p.format.width),
            smem: if hidden_left {
                vec![CopyMemory::new(p.sp_copies, p.left, prev, prev)]
            } else {
                vec![]
            },
            dmem: if hidden_left {
                // BP lane l accumulates into lane l's neuron: only lane l's banks
                vec![DeltaMemory::new(p.left, z, prev)
                    .with_lane_banks(
                        z,
                        (0..z)
                            .map(|l| p.pattern.bank.iter().map(|b| b[l]).collect())
                            .collect(),
                    )
                    // a left neuron's fan-out: one contribution per edge
                    .with_sum_terms(p.format.width, p.clocks * z / p.left)
                    .with_registered_reads(p.registered_sums_left)]
            } else {
                vec![]
            },
            omem: if p.is_last() {
                vec![CopyMemory::new(2, p.right, g, g)]
            } else {
                vec![]
            },
            ff: FfUnit::new(p),
            bp: BpUnit::new(z, g, p.lanes_per_group, p.format, p.right_act, p.is_last())
                .with_registered(p.deep_pipeline),
            up: UpUnit::new(z, g, p.lanes_per_group, p.format, p.shift)
                .with_rounding(p.rounding)
                .with_registered(p.deep_pipeline),
            rng: LaneStreams::new(p.seed, p.j, if p.stochastic() { z } else { 0 }),
            // bits: BP/UP runs, and it finishes a right neuron (bias write)
            bpp: PipeRegs::new(2, BpWord { z, g }.count()),
            rdp: if p.registered_reads {
                PipeRegs::new(RdWord::BITS, RdWord { z, g }.count())
            } else {
                PipeRegs::new(0, 0)
            },
            upp: if p.deep_pipeline {
                PipeRegs::new(1, UpWord { z }.count())
            } else {
                PipeRegs::new(0, 0)
            },
            hwp: if p.deep_pipeline {
                PipeRegs::new(3, 3)
            } else {
                PipeRegs::new(0, 0)
            },
            // bits: per bank the enable, then the host's select; words: the row, per bank
            // the host's word or the bias, per bank the bias's delta
            // (and per bank the bias's word, with stochastic rounding)
            bwp: if p.deep_pipeline {
                PipeRegs::new(g + 1, 1 + (2 + p.stochastic() as usize) * g)
            } else {
                PipeRegs::new(0, 0)
            },
            wwp: if p.deep_pipeline {
                PipeRegs::new(z, 1 + z)
            } else {
                PipeRegs::new(0, 0)
            },
            _p: Box::new(p.clone()),
        }
    }

    /// The first junction taking `w` consecutive inputs per clock: one write port of its
    /// input memory per lane (port `l` writes inputs `≡ l mod w`, so a beat never clashes).
    pub fn with_input_lanes(mut self, w: usize) -> Junction {
        let p = &self._p;
        assert!(p.is_first() && w >= 1);
        // the same memory as `new` builds, with `w` write ports instead of one
        let reads = self.amem.rd_data.len();
        self.amem = CopyMemory::new(p.act_copies, p.left, reads, w);
        self.in_lane_we = crate::sigs(w - 1);
        self.in_lane_data = crate::sigs(w - 1);
        self
    }

    pub fn params(&self) -> &JunctionParams {
        &self._p
    }
}

impl Logic for Junction {
    fn update(&mut self) {
        let (z, g) = (self._p.z, self._p.groups);
        let (is_first, is_last) = (self._p.is_first(), self._p.is_last());
        let clock = self.clock.val();
        // sequencer and interleaver
        let s = &mut self.seq;
        s.clock.next = clock;
        s.adv.next = self.adv.val();
        s.last.next = self.last.val();
        s.step.next = self.step.val();
        s.k.next = self.k.val();
        s.restart.next = self.restart.val();
        s.ff_en.next = self.ff_en.val();
        s.bp_en.next = self.bp_en.val();
        s.h_sel.next = self.h_sel.val();
        s.h_addr.next = self.h_addr.val();
        self.agen.clock.next = clock;
        self.agen.adv.next = self.adv.val();
        self.agen.last.next = self.last.val();
        let (run_ff, run_bp) = (self.seq.run_ff.val(), self.seq.run_bp.val());
        let (first, last_sub) = (self.seq.first.val(), self.seq.last_sub.val());
        let row = self.seq.row.val().index();
        let r: Vec<Bits<16>> = (0..g).map(|q| b16((row * g + q) as i32)).collect();
        let (h_sel, h_we, h_bias, h_bank) = (
            self.h_sel.val(),
            self.h_we.val(),
            self.h_bias.val(),
            self.h_bank.val().index(),
        );
        // the host's writes: through `hwp` with the deep pipeline
        self.hwp.clock.next = clock;
        let (w_sel, w_we, w_bias, w_bank, w_addr, w_data) = if self._p.deep_pipeline {
            for (i, b) in [h_sel, h_we, h_bias].into_iter().enumerate() {
                self.hwp.bit_in[i].next = b;
            }
            for (i, w) in [self.h_bank.val(), self.h_addr.val(), self.h_wdata.val()]
                .into_iter()
                .enumerate()
            {
                self.hwp.word_in[i].next = w;
            }
            let h = &self.hwp;
            (
                h.bit[0].val(),
                h.bit[1].val(),
                h.bit[2].val(),
                h.word[0].val().index(),
                h.word[1].val(),
                h.word[2].val(),
            )
        } else {
            (
                h_sel,
                h_we,
                h_bias,
                h_bank,
                self.h_addr.val(),
                self.h_wdata.val(),
            )
        };
        let host_w = w_sel && w_we && !w_bias;
        let host_b = w_sel && w_we && w_bias;
        // Read stage: what the memories give for clock k and that clock's control; with
        // registered reads it passes `rdp` and the arithmetic below runs at k + 1
        let rd = RdWord { z, g };
        let mut src_w = vec![Bits::<16>::default(); rd.count()];
        for l in 0..z {
            src_w[rd.w(l)] = self.wmem.rdata[l].val();
            src_w[rd.a(l)] = self.amem.rd_data[l].val();
            src_w[rd.u(l)] = self.amem.rd_data[z + l].val();
            src_w[rd.left(l)] = self.agen.left[l].val();
        }
        src_w[rd.k()] = self.k.val();
        src_w[rd.row()] = self.seq.row.val();
        for q in 0..g {
            src_w[rd.bias(q)] = self.bmem.rdata[q].val();
            let (acc, sp) = if is_last {
                (b32(s16(self.omem[0].rd_data[q].val()) as i64), b16(0))
            } else {
                (self.rq_acc[q].val(), self.rq_sp[q].val())
            };
            src_w[rd.acc_lo(q)] = acc.get_bits::<16>(0);
            src_w[rd.acc_hi(q)] = acc.get_bits::<16>(16);
            src_w[rd.sp(q)] = sp;
        }
        let src_b = [run_ff, first, last_sub, run_bp, run_bp && last_sub];
        let rr = self._p.registered_reads;
        self.rdp.clock.next = clock;
        let (dw, db): (Vec<Bits<16>>, Vec<bool>) = if rr {
            for (i, &b) in src_b.iter().enumerate() {
                self.rdp.bit_in[i].next = b;
            }
            for (i, &w) in src_w.iter().enumerate() {
                self.rdp.word_in[i].next = w;
            }
            (
                self.rdp.word.iter().map(|x| x.val()).collect(),
                self.rdp.bit.iter().map(|x| x.val()).collect(),
            )
        } else {
            (src_w, src_b.to_vec())
        };
        // sums from a delta memory that reads on the clock edge are already a clock late
        let mut dw = dw;
        if self._p.registered_sums_right {
            for q in 0..g {
                let acc = self.rq_acc[q].val();
                dw[rd.acc_lo(q)] = acc.get_bits::<16>(0);
                dw[rd.acc_hi(q)] = acc.get_bits::<16>(16);
            }
        }
        let d_row = dw[rd.row()].index();
        let d_r: Vec<Bits<16>> = (0..g).map(|q| b16((d_row * g + q) as i32)).collect();
        // BP/UP pipeline registers: BP's deltas at clock k, the contributions and updates
        // of clock k's edges at k + 1 (a clock later with registered reads)
        let bw = BpWord { z, g };
        self.bpp.clock.next = clock;
        self.bpp.bit_in[0].next = db[RdWord::RUN_BP];
        self.bpp.bit_in[1].next = db[RdWord::ROW_DONE];
        self.bpp.word_in[BpWord::K].next = dw[rd.k()];
        self.bpp.word_in[BpWord::ROW].next = dw[rd.row()];
        for q in 0..g {
            self.bpp.word_in[bw.d(q)].next = self.bp.delta[q].val();
            self.bpp.word_in[bw.bias(q)].next = dw[rd.bias(q)];
        }
        for l in 0..z {
            self.bpp.word_in[bw.w(l)].next = dw[rd.w(l)];
            self.bpp.word_in[bw.a(l)].next = dw[rd.u(l)];
            self.bpp.word_in[bw.left(l)].next = dw[rd.left(l)];
        }
        let (bp_run, bp_row_done) = (self.bpp.bit[0].val(), self.bpp.bit[1].val());
        // write-back stage of the weights and contributions: with the deep pipeline a
        // clock after `bpp`, through `upp`
        let rp = self._p.deep_pipeline;
        let uw = UpWord { z };
        self.upp.clock.next = clock;
        self.bp.clock.next = clock;
        self.up.clock.next = clock;
        // the address the write-back's left neuron takes next (the delta memory reads ahead)
        let wb_left_next: Vec<Bits<16>> = (0..z)
            .map(|l| {
                if rp {
                    self.bpp.word[bw.left(l)].val()
                } else {
                    dw[rd.left(l)]
                }
            })
            .collect();
        let (wb_run, wb_k, wb_w, wb_left): (bool, Bits<16>, Vec<Bits<16>>, Vec<Bits<16>>) = if rp {
            self.upp.bit_in[0].next = bp_run;
            self.upp.word_in[UpWord::K].next = self.bpp.word[BpWord::K].val();
            for l in 0..z {
                self.upp.word_in[uw.w(l)].next = self.bpp.word[bw.w(l)].val();
                self.upp.word_in[uw.left(l)].next = self.bpp.word[bw.left(l)].val();
            }
            (
                self.upp.bit[0].val(),
                self.upp.word[UpWord::K].val(),
                (0..z).map(|l| self.upp.word[uw.w(l)].val()).collect(),
                (0..z).map(|l| self.upp.word[uw.left(l)].val()).collect(),
            )
        } else {
            (
                bp_run,
                self.bpp.word[BpWord::K].val(),
                (0..z).map(|l| self.bpp.word[bw.w(l)].val()).collect(),
                (0..z).map(|l| self.bpp.word[bw.left(l)].val()).collect(),
            )
        };
        // weight and bias memories: one write port per bank, UP's value or the host's
        self.wmem.clock.next = clock;
        self.wmem.raddr.next = self.seq.waddr.val();
        self.wmem.rok.next = self.seq.w_ok.val();
        self.wwp.clock.next = clock;
        let w_row = if w_sel { w_addr } else { wb_k };
        if self._p.deep_pipeline {
            self.wwp.word_in[0].next = w_row;
        }
        for l in 0..z {
            let we = wb_run || (host_w && w_bank == l);
            let data = if w_sel {
                w_data
            } else {
                self.up.new_w[l].val()
            };
            if self._p.deep_pipeline {
                self.wwp.bit_in[l].next = we;
                self.wwp.word_in[1 + l].next = data;
                self.wmem.we[l].next = self.wwp.bit[l].val();
                self.wmem.waddr[l].next = self.wwp.word[0].val();
                self.wmem.wdata[l].next = self.wwp.word[1 + l].val();
            } else {
                self.wmem.we[l].next = we;
                self.wmem.waddr[l].next = w_row;
                self.wmem.wdata[l].next = data;
            }
        }
        self.bmem.clock.next = clock;
        self.bmem.raddr.next = self.seq.baddr.val();
        self.bmem.rok.next = self.seq.b_ok.val();
        let b_addr = if w_sel {
            w_addr
        } else {
            self.bpp.word[BpWord::ROW].val()
        };
        self.bwp.clock.next = clock;
        if self._p.deep_pipeline {
            self.bwp.word_in[0].next = b_addr;
            self.bwp.bit_in[g].next = w_sel;
        }
        for q in 0..g {
            let we = bp_row_done || (host_b && w_bank == q);
            if self._p.deep_pipeline {
                // the update's operands wait in `bwp`, the arithmetic comes after it
                let bias = self.bpp.word[bw.bias(q)].val();
                self.bwp.bit_in[q].next = we;
                self.bwp.word_in[1 + q].next = if w_sel { w_data } else { bias };
                self.bwp.word_in[1 + g + q].next = self.bp.delta[q].val();
                self.bmem.we[q].next = self.bwp.bit[q].val();
                self.bmem.waddr[q].next = self.bwp.word[0].val();
                self.bmem.wdata[q].next = if self.bwp.bit[g].val() {
                    self.bwp.word[1 + q].val()
                } else {
                    self.up.new_b[q].val()
                };
            } else {
                self.bmem.we[q].next = we;
                self.bmem.waddr[q].next = b_addr;
                self.bmem.wdata[q].next = if w_sel {
                    w_data
                } else {
                    self.up.new_b[q].val()
                };
            }
        }
        // left activations: FF reads copy a_ff, UP copy a_up, at the interleaver's neurons
        self.amem.clock.next = clock;
        for l in 0..z {
            self.amem.rd_copy[l].next = self.seq.a_ff.val();
            self.amem.rd_addr[l].next = self.agen.left[l].val();
            self.amem.rd_copy[z + l].next = self.seq.a_up.val();
            self.amem.rd_addr[z + l].next = self.agen.left[l].val();
        }
        if is_first {
            self.amem.wr_en[0].next = self.in_we.val();
            self.amem.wr_copy[0].next = self.in_copy.val();
            self.amem.wr_addr[0].next = self.in_addr.val();
            self.amem.wr_data[0].next = self.in_data.val();
            for k in 1..=self.in_lane_we.len() {
                self.amem.wr_en[k].next = self.in_lane_we[k - 1].val();
                self.amem.wr_copy[k].next = self.in_copy.val();
                self.amem.wr_addr[k].next = self.in_addr.val() + k as u64;
                self.amem.wr_data[k].next = self.in_lane_data[k - 1].val();
            }
        } else {
            for q in 0..self.lw_en.len() {
                self.amem.wr_en[q].next = self.lw_en[q].val();
                self.amem.wr_copy[q].next = self.seq.a_w.val();
                self.amem.wr_addr[q].next = self.lw_addr[q].val();
                self.amem.wr_data[q].next = self.lw_a[q].val();
                let sm = &mut self.smem[0];
                sm.clock.next = clock;
                sm.rd_copy[q].next = self.seq.s_r.val();
                sm.rd_addr[q].next = self.lq_addr[q].val();
                sm.wr_en[q].next = self.lw_en[q].val();
                sm.wr_copy[q].next = self.seq.s_w.val();
                sm.wr_addr[q].next = self.lw_addr[q].val();
                sm.wr_data[q].next = self.lw_sp[q].val();
                self.lq_sp[q].next = sm.rd_data[q].val();
                let dm = &mut self.dmem[0];
                dm.clock.next = clock;
                dm.parity.next = self.parity.val();
                dm.rd_addr[q].next = self.lq_addr[q].val();
                dm.rd_clear[q].next = self.lq_clear[q].val();
                self.lq_acc[q].next = dm.rd_data[q].val();
            }
            let dm = &mut self.dmem[0];
            for l in 0..z {
                dm.acc_en[l].next = wb_run;
                dm.acc_addr[l].next = wb_left[l];
                dm.acc_next[l].next = wb_left_next[l];
                dm.acc_add[l].next = self.bp.contrib[l].val();
            }
        }
        // FF
        let f = &mut self.ff;
        f.clock.next = clock;
        f.run.next = db[RdWord::RUN_FF];
        f.first.next = db[RdWord::FIRST];
        f.last_sub.next = db[RdWord::LAST_SUB];
        f.label.next = self.label.val();
        for l in 0..z {
            f.w[l].next = dw[rd.w(l)];
            f.a[l].next = dw[rd.a(l)];
        }
        for q in 0..g {
            f.bias[q].next = dw[rd.bias(q)];
            f.r[q].next = d_r[q];
        }
        // output deltas (last junction): FF writes buffer `parity`, BP reads the other
        if is_last {
            let om = &mut self.omem[0];
            om.clock.next = clock;
            for q in 0..g {
                om.rd_copy[q].next = b16(!self.parity.val() as i32);
                om.rd_addr[q].next = r[q];
                om.wr_en[q].next = self.ff.done.val();
                om.wr_copy[q].next = b16(self.parity.val() as i32);
                om.wr_addr[q].next = self.ff.r_out[q].val();
                om.wr_data[q].next = self.ff.out_delta[q].val();
            }
        }
        for q in 0..g {
            let (lo, hi) = (
                dw[rd.acc_lo(q)].index() as u64,
                dw[rd.acc_hi(q)].index() as u64,
            );
            self.bp.acc[q].next = Bits::<32>::from(hi << 16 | lo);
            self.bp.sp[q].next = dw[rd.sp(q)];
        }
        // BP and UP share the weight read with FF
        // the contributions and the updates take the registered operands
        for l in 0..z {
            self.bp.w[l].next = self.bpp.word[bw.w(l)].val();
            self.up.w[l].next = wb_w[l];
            self.up.a[l].next = self.bpp.word[bw.a(l)].val();
        }
        // with the deep pipeline the deltas come out of BP's own register
        for q in 0..g {
            let dq = if rp {
                self.bp.delta[q].val()
            } else {
                self.bpp.word[bw.d(q)].val()
            };
            self.bp.dq[q].next = dq;
            self.up.d[q].next = dq;
            if rp {
                self.up.bias[q].next = self.bwp.word[1 + q].val();
                self.up.bd[q].next = self.bwp.word[1 + g + q].val();
            } else {
                self.up.bias[q].next = self.bpp.word[bw.bias(q)].val();
                self.up.bd[q].next = dq;
            }
        }
        // stochastic rounding: the lanes step with every update clock and restart when the
        // host writes the weights; a bias takes the word of its neuron's last lane
        self.rng.clock.next = clock;
        self.rng.advance.next = bp_run;
        self.rng.restart.next = w_sel && w_we;
        let lpg = self._p.lanes_per_group;
        for l in 0..self.up.word.len() {
            self.up.word[l].next = self.rng.word[l].val();
        }
        for q in 0..self.up.bias_word.len() {
            let word = self.rng.word[q * lpg + lpg - 1].val().get_bits::<16>(0);
            if rp {
                self.bwp.word_in[1 + 2 * g + q].next = word;
                self.up.bias_word[q].next = self.bwp.word[1 + 2 * g + q].val();
            } else {
                self.up.bias_word[q].next = word;
            }
        }
        // outputs
        self.h_rdata.next = if h_bias {
            self.bmem
                .rdata
                .get(h_bank)
                .map(|x| x.val())
                .unwrap_or_default()
        } else {
            self.wmem
                .rdata
                .get(h_bank)
                .map(|x| x.val())
                .unwrap_or_default()
        };
        self.pred.next = self.ff.pred.val();
        for q in 0..self.rw_en.len() {
            self.rw_en[q].next = self.ff.done.val();
            self.rw_addr[q].next = self.ff.r_out[q].val();
            self.rw_a[q].next = self.ff.act[q].val();
            self.rw_sp[q].next = self.ff.sp[q].val();
            self.rq_addr[q].next = r[q];
            self.rq_clear[q].next = run_bp && last_sub;
        }
    }

    fn connect(&mut self) {
        self.h_rdata.connect();
        self.pred.connect();
        for v in [
            &mut self.lq_sp,
            &mut self.rw_addr,
            &mut self.rw_a,
            &mut self.rw_sp,
            &mut self.rq_addr,
        ] {
            v.iter_mut().for_each(|x| x.connect());
        }
        self.lq_acc.iter_mut().for_each(|x| x.connect());
        self.rw_en.iter_mut().for_each(|x| x.connect());
        self.rq_clear.iter_mut().for_each(|x| x.connect());
        let s = &mut self.seq;
        for x in [
            &mut s.adv,
            &mut s.last,
            &mut s.step,
            &mut s.restart,
            &mut s.ff_en,
            &mut s.bp_en,
            &mut s.h_sel,
        ] {
            x.connect();
        }
        s.clock.connect();
        s.k.connect();
        s.h_addr.connect();
        self.agen.clock.connect();
        self.agen.adv.connect();
        self.agen.last.connect();
        for m in [&mut self.wmem, &mut self.bmem] {
            m.clock.connect();
            m.raddr.connect();
            m.rok.connect();
            m.we.iter_mut().for_each(|x| x.connect());
            m.waddr.iter_mut().for_each(|x| x.connect());
            m.wdata.iter_mut().for_each(|x| x.connect());
        }
        for m in std::iter::once(&mut self.amem)
            .chain(self.smem.iter_mut())
            .chain(self.omem.iter_mut())
        {
            m.clock.connect();
            m.rd_copy.iter_mut().for_each(|x| x.connect());
            m.rd_addr.iter_mut().for_each(|x| x.connect());
            m.wr_en.iter_mut().for_each(|x| x.connect());
            m.wr_copy.iter_mut().for_each(|x| x.connect());
            m.wr_addr.iter_mut().for_each(|x| x.connect());
            m.wr_data.iter_mut().for_each(|x| x.connect());
        }
        for m in self.dmem.iter_mut() {
            m.clock.connect();
            m.parity.connect();
            m.acc_en.iter_mut().for_each(|x| x.connect());
            m.acc_addr.iter_mut().for_each(|x| x.connect());
            m.acc_add.iter_mut().for_each(|x| x.connect());
            m.rd_addr.iter_mut().for_each(|x| x.connect());
            m.rd_clear.iter_mut().for_each(|x| x.connect());
        }
        let f = &mut self.ff;
        for x in [&mut f.run, &mut f.first, &mut f.last_sub] {
            x.connect();
        }
        f.clock.connect();
        f.label.connect();
        for v in [&mut f.w, &mut f.a, &mut f.bias, &mut f.r] {
            v.iter_mut().for_each(|x| x.connect());
        }
        self.bp.w.iter_mut().for_each(|x| x.connect());
        self.bp.acc.iter_mut().for_each(|x| x.connect());
        self.bp.sp.iter_mut().for_each(|x| x.connect());
        self.bp.dq.iter_mut().for_each(|x| x.connect());
        self.bp.clock.connect();
        self.up.clock.connect();
        for pr in [&mut self.bpp, &mut self.rdp, &mut self.upp] {
            pr.clock.connect();
            pr.bit_in.iter_mut().for_each(|x| x.connect());
            pr.word_in.iter_mut().for_each(|x| x.connect());
        }
        for v in [
            &mut self.up.w,
            &mut self.up.a,
            &mut self.up.d,
            &mut self.up.bias,
            &mut self.up.bd,
        ] {
            v.iter_mut().for_each(|x| x.connect());
        }
        self.up.word.iter_mut().for_each(|x| x.connect());
        self.up.bias_word.iter_mut().for_each(|x| x.connect());
        self.rng.clock.connect();
        self.rng.advance.connect();
        self.rng.restart.connect();
    }

    fn hdl(&self) -> Verilog {
        let p = &self._p;
        let (z, g) = (p.z, p.groups);
        let mut v = String::from("always @(*) begin\n");
        let mut a = |l: String, r: String| {
            let _ = writeln!(v, "    {l} = {r};");
        };
        for s in [
            "clock", "adv", "last", "step", "k", "restart", "ff_en", "bp_en", "h_sel", "h_addr",
        ] {
            a(format!("seq${s}"), s.into());
        }
        for s in ["clock", "adv", "last"] {
            a(format!("agen${s}"), s.into());
        }
        // the read stage, as in `update`
        let rd = RdWord { z, g };
        let mut src_w = vec![String::new(); rd.count()];
        for l in 0..z {
            src_w[rd.w(l)] = format!("wmem$rdata${l}");
            src_w[rd.a(l)] = format!("amem$rd_data${l}");
            src_w[rd.u(l)] = format!("amem$rd_data${}", z + l);
            src_w[rd.left(l)] = format!("agen$left${l}");
        }
        src_w[rd.k()] = "k".into();
        src_w[rd.row()] = "seq$row".into();
        for q in 0..g {
            src_w[rd.bias(q)] = format!("bmem$rdata${q}");
            if p.is_last() {
                src_w[rd.acc_lo(q)] = format!("omem$0$rd_data${q}");
                src_w[rd.acc_hi(q)] = format!("{{16{{omem$0$rd_data${q}[15]}}}}");
                src_w[rd.sp(q)] = "16'd0".into();
            } else {
                src_w[rd.acc_lo(q)] = format!("rq_acc${q}[15:0]");
                src_w[rd.acc_hi(q)] = format!("rq_acc${q}[31:16]");
                src_w[rd.sp(q)] = format!("rq_sp${q}");
            }
        }
        let src_b = [
            "seq$run_ff",
            "seq$first",
            "seq$last_sub",
            "seq$run_bp",
            "seq$run_bp && seq$last_sub",
        ];
        a("rdp$clock".into(), "clock".into());
        let (dw, db): (Vec<String>, Vec<String>) = if p.registered_reads {
            for (i, b) in src_b.iter().enumerate() {
                a(format!("rdp$bit_in${i}"), b.to_string());
            }
            for (i, w) in src_w.iter().enumerate() {
                a(format!("rdp$word_in${i}"), w.clone());
            }
            (
                (0..rd.count()).map(|i| format!("rdp$word${i}")).collect(),
                (0..RdWord::BITS).map(|i| format!("rdp$bit${i}")).collect(),
            )
        } else {
            (src_w, src_b.iter().map(|b| format!("({b})")).collect())
        };
        let mut dw = dw;
        if p.registered_sums_right {
            for q in 0..g {
                dw[rd.acc_lo(q)] = format!("rq_acc${q}[15:0]");
                dw[rd.acc_hi(q)] = format!("rq_acc${q}[31:16]");
            }
        }
        let bw = BpWord { z, g };
        a("bpp$clock".into(), "clock".into());
        a("bpp$bit_in$0".into(), db[RdWord::RUN_BP].clone());
        a("bpp$bit_in$1".into(), db[RdWord::ROW_DONE].clone());
        a(format!("bpp$word_in${}", BpWord::K), dw[rd.k()].clone());
        a(format!("bpp$word_in${}", BpWord::ROW), dw[rd.row()].clone());
        for q in 0..g {
            a(format!("bpp$word_in${}", bw.d(q)), format!("bp$delta${q}"));
            a(
                format!("bpp$word_in${}", bw.bias(q)),
                dw[rd.bias(q)].clone(),
            );
        }
        // with the deep pipeline the deltas come out of BP's own register
        let dq = |q: usize| {
            if p.deep_pipeline {
                format!("bp$delta${q}")
            } else {
                format!("bpp$word${}", bw.d(q))
            }
        };
        for q in 0..g {
            a(format!("bp$dq${q}"), dq(q));
        }
        for l in 0..z {
            a(format!("bpp$word_in${}", bw.w(l)), dw[rd.w(l)].clone());
            a(format!("bpp$word_in${}", bw.a(l)), dw[rd.u(l)].clone());
            a(
                format!("bpp$word_in${}", bw.left(l)),
                dw[rd.left(l)].clone(),
            );
        }
        // the write-back stage: a clock after `bpp` through `upp` with the deep pipeline
        let uw = UpWord { z };
        for s in ["upp", "bp", "up"] {
            a(format!("{s}$clock"), "clock".into());
        }
        let (wb_run, wb_k, wb_w, wb_left): (String, String, Vec<String>, Vec<String>) =
            if p.deep_pipeline {
                a("upp$bit_in$0".into(), "bpp$bit$0".into());
                a(
                    format!("upp$word_in${}", UpWord::K),
                    format!("bpp$word${}", BpWord::K),
                );
                for l in 0..z {
                    a(
                        format!("upp$word_in${}", uw.w(l)),
                        format!("bpp$word${}", bw.w(l)),
                    );
                    a(
                        format!("upp$word_in${}", uw.left(l)),
                        format!("bpp$word${}", bw.left(l)),
                    );
                }
                (
                    "upp$bit$0".into(),
                    format!("upp$word${}", UpWord::K),
                    (0..z).map(|l| format!("upp$word${}", uw.w(l))).collect(),
                    (0..z).map(|l| format!("upp$word${}", uw.left(l))).collect(),
                )
            } else {
                (
                    "bpp$bit$0".into(),
                    format!("bpp$word${}", BpWord::K),
                    (0..z).map(|l| format!("bpp$word${}", bw.w(l))).collect(),
                    (0..z).map(|l| format!("bpp$word${}", bw.left(l))).collect(),
                )
            };
        a("hwp$clock".into(), "clock".into());
        let [w_sel, w_we, w_bias, w_bank, w_addr, w_data] = if p.deep_pipeline {
            for (i, x) in ["h_sel", "h_we", "h_bias"].into_iter().enumerate() {
                a(format!("hwp$bit_in${i}"), x.into());
            }
            for (i, x) in ["h_bank", "h_addr", "h_wdata"].into_iter().enumerate() {
                a(format!("hwp$word_in${i}"), x.into());
            }
            [
                "hwp$bit$0",
                "hwp$bit$1",
                "hwp$bit$2",
                "hwp$word$0",
                "hwp$word$1",
                "hwp$word$2",
            ]
        } else {
            ["h_sel", "h_we", "h_bias", "h_bank", "h_addr", "h_wdata"]
        };
        a("wmem$clock".into(), "clock".into());
        a("wmem$raddr".into(), "seq$waddr".into());
        a("wmem$rok".into(), "seq$w_ok".into());
        a("wwp$clock".into(), "clock".into());
        let w_row = format!("{w_sel} ? {w_addr} : {wb_k}");
        if p.deep_pipeline {
            a("wwp$word_in$0".into(), w_row.clone());
        }
        for l in 0..z {
            let we =
                format!("{wb_run} || ({w_sel} && {w_we} && !{w_bias} && ({w_bank} == 16'd{l}))");
            let data = format!("{w_sel} ? {w_data} : up$new_w${l}");
            if p.deep_pipeline {
                a(format!("wwp$bit_in${l}"), we);
                a(format!("wwp$word_in${}", 1 + l), data);
                a(format!("wmem$we${l}"), format!("wwp$bit${l}"));
                a(format!("wmem$waddr${l}"), "wwp$word$0".into());
                a(format!("wmem$wdata${l}"), format!("wwp$word${}", 1 + l));
            } else {
                a(format!("wmem$we${l}"), we);
                a(format!("wmem$waddr${l}"), w_row.clone());
                a(format!("wmem$wdata${l}"), data);
            }
        }
        a("bmem$clock".into(), "clock".into());
        a("bmem$raddr".into(), "seq$baddr".into());
        a("bmem$rok".into(), "seq$b_ok".into());
        let r = |q: usize| format!("(seq$row * 16'd{g} + 16'd{q})");
        a("bwp$clock".into(), "clock".into());
        let addr = format!("{w_sel} ? {w_addr} : bpp$word${}", BpWord::ROW);
        if p.deep_pipeline {
            a("bwp$word_in$0".into(), addr.clone());
            a(format!("bwp$bit_in${g}"), w_sel.into());
        }
        for q in 0..g {
            let we =
                format!("bpp$bit$1 || ({w_sel} && {w_we} && {w_bias} && ({w_bank} == 16'd{q}))");
            if p.deep_pipeline {
                a(format!("bwp$bit_in${q}"), we);
                a(
                    format!("bwp$word_in${}", 1 + q),
                    format!("{w_sel} ? {w_data} : bpp$word${}", bw.bias(q)),
                );
                a(
                    format!("bwp$word_in${}", 1 + g + q),
                    format!("bp$delta${q}"),
                );
                a(format!("bmem$we${q}"), format!("bwp$bit${q}"));
                a(format!("bmem$waddr${q}"), "bwp$word$0".into());
                a(
                    format!("bmem$wdata${q}"),
                    format!("bwp$bit${g} ? bwp$word${} : up$new_b${q}", 1 + q),
                );
            } else {
                a(format!("bmem$we${q}"), we);
                a(format!("bmem$waddr${q}"), addr.clone());
                a(
                    format!("bmem$wdata${q}"),
                    format!("{w_sel} ? {w_data} : up$new_b${q}"),
                );
            }
        }
        a("amem$clock".into(), "clock".into());
        for l in 0..z {
            a(format!("amem$rd_copy${l}"), "seq$a_ff".into());
            a(format!("amem$rd_addr${l}"), format!("agen$left${l}"));
            a(format!("amem$rd_copy${}", z + l), "seq$a_up".into());
            a(format!("amem$rd_addr${}", z + l), format!("agen$left${l}"));
        }
        if p.is_first() {
            for (m, s) in [
                ("wr_en", "in_we"),
                ("wr_copy", "in_copy"),
                ("wr_addr", "in_addr"),
                ("wr_data", "in_data"),
            ] {
                a(format!("amem${m}$0"), s.into());
            }
            for k in 1..=self.in_lane_we.len() {
                a(format!("amem$wr_en${k}"), format!("in_lane_we${}", k - 1));
                a(format!("amem$wr_copy${k}"), "in_copy".into());
                a(format!("amem$wr_addr${k}"), format!("in_addr + 16'd{k}"));
                a(
                    format!("amem$wr_data${k}"),
                    format!("in_lane_data${}", k - 1),
                );
            }
        } else {
            a("smem$0$clock".into(), "clock".into());
            a("dmem$0$clock".into(), "clock".into());
            a("dmem$0$parity".into(), "parity".into());
            for q in 0..self.lw_en.len() {
                a(format!("amem$wr_en${q}"), format!("lw_en${q}"));
                a(format!("amem$wr_copy${q}"), "seq$a_w".into());
                a(format!("amem$wr_addr${q}"), format!("lw_addr${q}"));
                a(format!("amem$wr_data${q}"), format!("lw_a${q}"));
                a(format!("smem$0$rd_copy${q}"), "seq$s_r".into());
                a(format!("smem$0$rd_addr${q}"), format!("lq_addr${q}"));
                a(format!("smem$0$wr_en${q}"), format!("lw_en${q}"));
                a(format!("smem$0$wr_copy${q}"), "seq$s_w".into());
                a(format!("smem$0$wr_addr${q}"), format!("lw_addr${q}"));
                a(format!("smem$0$wr_data${q}"), format!("lw_sp${q}"));
                a(format!("lq_sp${q}"), format!("smem$0$rd_data${q}"));
                a(format!("dmem$0$rd_addr${q}"), format!("lq_addr${q}"));
                a(format!("dmem$0$rd_clear${q}"), format!("lq_clear${q}"));
                a(format!("lq_acc${q}"), format!("dmem$0$rd_data${q}"));
            }
            for l in 0..z {
                a(format!("dmem$0$acc_en${l}"), wb_run.clone());
                a(format!("dmem$0$acc_addr${l}"), wb_left[l].clone());
                a(
                    format!("dmem$0$acc_next${l}"),
                    if p.deep_pipeline {
                        format!("bpp$word${}", bw.left(l))
                    } else {
                        dw[rd.left(l)].clone()
                    },
                );
                a(format!("dmem$0$acc_add${l}"), format!("bp$contrib${l}"));
            }
        }
        for s in ["clock", "label"] {
            a(format!("ff${s}"), s.into());
        }
        a("ff$run".into(), db[RdWord::RUN_FF].clone());
        a("ff$first".into(), db[RdWord::FIRST].clone());
        a("ff$last_sub".into(), db[RdWord::LAST_SUB].clone());
        for l in 0..z {
            a(format!("ff$w${l}"), dw[rd.w(l)].clone());
            a(format!("ff$a${l}"), dw[rd.a(l)].clone());
            a(format!("bp$w${l}"), format!("bpp$word${}", bw.w(l)));
            a(format!("up$w${l}"), wb_w[l].clone());
            a(format!("up$a${l}"), format!("bpp$word${}", bw.a(l)));
        }
        for q in 0..g {
            a(format!("ff$bias${q}"), dw[rd.bias(q)].clone());
            a(
                format!("ff$r${q}"),
                format!("({} * 16'd{g} + 16'd{q})", dw[rd.row()]),
            );
            a(
                format!("bp$acc${q}"),
                format!("{{{}, {}}}", dw[rd.acc_hi(q)], dw[rd.acc_lo(q)]),
            );
            a(format!("bp$sp${q}"), dw[rd.sp(q)].clone());
            a(format!("up$d${q}"), dq(q));
            if p.deep_pipeline {
                a(format!("up$bias${q}"), format!("bwp$word${}", 1 + q));
                a(format!("up$bd${q}"), format!("bwp$word${}", 1 + g + q));
            } else {
                a(format!("up$bias${q}"), format!("bpp$word${}", bw.bias(q)));
                a(format!("up$bd${q}"), dq(q));
            }
        }
        // stochastic rounding, as in `update`
        if p.stochastic() {
            a("rng$clock".into(), "clock".into());
            a("rng$advance".into(), "bpp$bit$0".into());
            a("rng$restart".into(), format!("{w_sel} && {w_we}"));
            for l in 0..z {
                a(format!("up$word${l}"), format!("rng$word${l}"));
            }
            let lpg = p.lanes_per_group;
            for q in 0..g {
                let word = format!("rng$word${}[15:0]", q * lpg + lpg - 1);
                if p.deep_pipeline {
                    a(format!("bwp$word_in${}", 1 + 2 * g + q), word);
                    a(
                        format!("up$bias_word${q}"),
                        format!("bwp$word${}", 1 + 2 * g + q),
                    );
                } else {
                    a(format!("up$bias_word${q}"), word);
                }
            }
        } else {
            a("rng$clock".into(), "clock".into());
            a("rng$advance".into(), "1'b0".into());
            a("rng$restart".into(), "1'b0".into());
        }
        if p.is_last() {
            a("omem$0$clock".into(), "clock".into());
            for q in 0..g {
                a(
                    format!("omem$0$rd_copy${q}"),
                    "parity ? 16'd0 : 16'd1".into(),
                );
                a(format!("omem$0$rd_addr${q}"), r(q));
                a(format!("omem$0$wr_en${q}"), "ff$done".into());
                a(
                    format!("omem$0$wr_copy${q}"),
                    "parity ? 16'd1 : 16'd0".into(),
                );
                a(format!("omem$0$wr_addr${q}"), format!("ff$r_out${q}"));
                a(format!("omem$0$wr_data${q}"), format!("ff$out_delta${q}"));
            }
        } else {
            for q in 0..g {
                a(format!("rw_en${q}"), "ff$done".into());
                a(format!("rw_addr${q}"), format!("ff$r_out${q}"));
                a(format!("rw_a${q}"), format!("ff$act${q}"));
                a(format!("rw_sp${q}"), format!("ff$sp${q}"));
                a(format!("rq_addr${q}"), r(q));
                a(format!("rq_clear${q}"), "seq$run_bp && seq$last_sub".into());
            }
        }
        a("pred".into(), "ff$pred".into());
        v += "    case (h_bank)\n";
        for b in 0..z.max(g) {
            let wv = if b < z {
                format!("wmem$rdata${b}")
            } else {
                "16'd0".into()
            };
            let bv = if b < g {
                format!("bmem$rdata${b}")
            } else {
                "16'd0".into()
            };
            let _ = writeln!(v, "        16'd{b}: h_rdata = h_bias ? {bv} : {wv};");
        }
        v += "        default: h_rdata = 16'd0;\n    endcase\nend\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};
    use edgeflow_core::fixed::activate;
    use edgeflow_core::{Spec, State};

    fn spec() -> Spec {
        Spec::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"))
            .unwrap()
    }

    #[test]
    fn one_ff_pass_computes_the_right_layer() {
        let sp = spec();
        let p = JunctionParams::new(&sp, 0); // 8 → 8, z = 4 > fi = 2: two neurons per clock
        let st = State::initial(&sp);
        let f = p.format;
        let mut jn = Junction::new(&p, 0);
        jn.connect_all();
        // weights through the host port: edge e in bank e mod z, row e / z
        jn.h_sel.next = true;
        jn.h_we.next = true;
        for (e, &w) in st.weights[0].iter().enumerate() {
            jn.h_bank.next = b16((e % p.z) as i32);
            jn.h_addr.next = b16((e / p.z) as i32);
            jn.h_wdata.next = b16(w);
            tick(&mut jn, |j| &mut j.clock);
        }
        jn.h_sel.next = false;
        jn.h_we.next = false;
        // one input sample into copy 0
        let x: Vec<i32> = (0..p.left).map(|i| (i as i32 * 37) % 129 - 20).collect();
        jn.in_we.next = true;
        for (i, &v) in x.iter().enumerate() {
            jn.in_copy.next = b16(0);
            jn.in_addr.next = b16(i as i32);
            jn.in_data.next = b16(v);
            tick(&mut jn, |j| &mut j.clock);
        }
        jn.in_we.next = false;
        jn.restart.next = true;
        tick(&mut jn, |j| &mut j.clock);
        jn.restart.next = false;
        // one block cycle of FF alone
        let mut got = vec![None; p.right];
        jn.ff_en.next = true;
        // the pass, then the FF pipeline's last writes
        for k in 0..p.clocks + crate::params::FF_LATENCY {
            jn.adv.next = k < p.clocks;
            jn.k.next = b16(k as i32);
            jn.last.next = k + 1 == p.clocks;
            jn.step.next = k + 1 < p.clocks;
            settle(&mut jn);
            for q in 0..p.groups {
                if jn.rw_en[q].val() {
                    got[jn.rw_addr[q].val().index()] =
                        Some((s16(jn.rw_a[q].val()), s16(jn.rw_sp[q].val())));
                }
            }
            tick(&mut jn, |j| &mut j.clock);
        }
        for r in 0..p.right {
            let mut h = st.biases[0][r] as i64;
            for e in r * p.fan_in..(r + 1) * p.fan_in {
                h += f.mul(st.weights[0][e], x[p.pattern.left_of_edge[e] as usize]) as i64;
            }
            assert_eq!(
                got[r],
                Some(activate(p.right_act, &p.table, f.saturate(h))),
                "right neuron {r}"
            );
        }
    }

    #[test]
    fn junction_verilog_is_clean() {
        let sp = spec();
        let p = JunctionParams::new(&sp, 1);
        yosys_check(
            &Junction::new(&p, JunctionParams::new(&sp, 0).groups),
            "junction",
        );
    }
}

#[cfg(test)]
mod input_lanes_tests {
    use super::*;
    use crate::testing::yosys_check;

    #[test]
    fn first_junction_with_input_lanes_verilog_is_clean() {
        // the lanes' writes are checked bit for bit through the whole network (tests/rtl.rs,
        // rtl_verilog.rs, cosim_verilator.rs); here the block's Verilog alone
        let sp = edgeflow_core::Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
        )
        .unwrap();
        let p = JunctionParams::new(&sp, 0);
        let j = Junction::new(&p, 0).with_input_lanes(3);
        assert_eq!(j.amem.wr_en.len(), 3);
        yosys_check(&j, "junction_lanes");
    }
}
