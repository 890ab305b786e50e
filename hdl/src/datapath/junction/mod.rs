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
//!   (`spec::DEEP_PIPELINE_CLOCKS`; `FfUnit::ffd` delays the control to the products), BP's delta
//!   comes out of BP's register a clock later and feeds the contributions and UP directly
//!   (not through `bpp`), and the weight write-backs and contributions land a clock after
//!   that, with the weight, its row and left neuron held in `upp`; host writes (`hwp`),
//!   bias writes (`bwp`) and weight writes (`wwp`) pass a register of their own. FF's last
//!   write of a pass lands at the end of clock `C + FF_LATENCY + rr + 1` (rr = 1 with
//!   registered reads), so
//!   `T = C + FF_LATENCY + rr + DEEP_PIPELINE_CLOCKS`, the same bits.
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

pub mod ports;
mod wires;
mod words;

pub use ports::{LeftGroup, RightGroup};

use crate::addr_gen::AddrGen;
use crate::banked_ram::BankedRam;
use crate::bp_unit::BpUnit;
use crate::copy_memory::CopyMemory;
use crate::delta_memory::DeltaMemory;
use crate::ff_unit::FfUnit;
use crate::lane_rng::LaneStreams;
use crate::params::JunctionParams;
use crate::pipe_regs::PipeRegs;
use crate::sequencer::Sequencer;
use crate::up_unit::UpUnit;
use crate::wiring::{Connect, Sim, Text};
use rust_hdl::core::prelude::*;
use std::rc::Rc;

use words::{BpWord, RdWord, UpWord};

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
    /// The left layer, per group: written by the previous junction's FF, its delta sums read
    /// (and cleared) by the previous junction's BP.
    pub left: Vec<LeftGroup>,
    /// The right layer, per group (to the next junction).
    pub right: Vec<RightGroup>,
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
    _p: Rc<JunctionParams>,
}

impl Junction {
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
            left: ports::groups(prev),
            right: ports::groups(next),
            pred: Default::default(),
            seq: Sequencer::new(p),
            agen: AddrGen::new(p),
            wmem: BankedRam::new(z, p.clocks),
            // with registered reads a flip-flop bias memory's row multiplexer sits before
            // `rdp`, off the prefetch address path (which starts at the controller's `adv`)
            bmem: BankedRam::new(g, p.bias_rows()).with_registered_address(p.registered_reads),
            amem: activation_memory(p, if p.is_first() { 1 } else { prev }),
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
            bp: BpUnit::new(
                z,
                g,
                p.lanes_per_group,
                p.format,
                p.table.activation,
                p.is_last(),
            )
            .with_registered(p.deep_pipeline),
            up: UpUnit::new(z, g, p.lanes_per_group, p.format, p.shift)
                .with_rounding(p.rounding)
                .with_registered(p.deep_pipeline)
                .with_selects(p.input_selects),
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
            _p: Rc::new(p.clone()),
        }
    }

    /// The first junction taking `w` consecutive inputs per clock: one write port of its
    /// input memory per lane (port `l` writes inputs `≡ l mod w`, so a beat never clashes).
    pub fn with_input_lanes(mut self, w: usize) -> Junction {
        let p = &self._p;
        assert!(p.is_first() && w >= 1);
        self.amem = activation_memory(p, w);
        self.in_lane_we = crate::sigs(w - 1);
        self.in_lane_data = crate::sigs(w - 1);
        self
    }

    pub fn params(&self) -> &JunctionParams {
        &self._p
    }
}

/// The left layer's activations with `writes` write ports. FF reads port `l`, UP port `z + l`,
/// both at lane `l`'s neuron: each replica keeps only lane `l`'s banks, `width` bits a word.
fn activation_memory(p: &JunctionParams, writes: usize) -> CopyMemory {
    let z = p.z;
    CopyMemory::new(p.act_copies, p.left, 2 * z, writes)
        .with_read_banks(
            z,
            (0..2 * z)
                .map(|r| p.pattern.bank.iter().map(|b| b[r % z]).collect())
                .collect(),
        )
        .with_width(p.format.width)
}

/// A network's or a stage's junction `j`: its clock and the controller's block-cycle signals.
#[macro_export]
macro_rules! wire_junction_control {
    ($w:expr, $j:expr) => {{
        let j = $j;
        $w.set($crate::to!(junctions[j].clock), $crate::at!($w, clock));
        $w.set($crate::to!(junctions[j].adv), $crate::at!($w, ctrl.adv));
        $w.set($crate::to!(junctions[j].k), $crate::at!($w, ctrl.k));
        $w.set($crate::to!(junctions[j].last), $crate::at!($w, ctrl.last));
        $w.set($crate::to!(junctions[j].step), $crate::at!($w, ctrl.step));
        $w.set(
            $crate::to!(junctions[j].parity),
            $crate::at!($w, ctrl.parity),
        );
        $w.set($crate::to!(junctions[j].label), $crate::at!($w, ctrl.label));
    }};
}

/// A network's or a stage's junction `j` (> 0) and its left neighbour: the neighbour's FF
/// writes `j`'s left layer, its BP reads (and clears) `j`'s delta sums, per group.
#[macro_export]
macro_rules! wire_junction_pair {
    ($w:expr, $j:expr, $groups:expr) => {{
        let (j, i) = ($j, $j - 1);
        for q in 0..$groups {
            $crate::wire_group_pair!($w, [junctions[i].right[q]], [junctions[j].left[q]]);
        }
    }};
}

impl Logic for Junction {
    fn update(&mut self) {
        let (p, lanes, left) = (self._p.clone(), self.in_lane_we.len(), self.left.len());
        Self::wire(&p, lanes, left, &mut Sim(self));
    }

    fn connect(&mut self) {
        let (p, lanes, left) = (self._p.clone(), self.in_lane_we.len(), self.left.len());
        Self::wire(&p, lanes, left, &mut Connect(self));
    }

    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(&self._p, self.in_lane_we.len(), self.left.len(), &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{b16, s16};
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
                if jn.right[q].w_en.val() {
                    got[jn.right[q].w_addr.val().index()] =
                        Some((s16(jn.right[q].w_a.val()), s16(jn.right[q].w_sp.val())));
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
                Some(activate(&p.table, f.saturate(h))),
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

    #[test]
    fn input_lanes_keep_the_activation_memory_narrow() {
        // without dither each read port reads one bank: with input lanes too, its replica
        // holds that bank alone at the format's width, not every input of every copy
        let mut sp = edgeflow_core::Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
        )
        .unwrap();
        sp.pattern.dither = false;
        let p = JunctionParams::new(&sp, 0);
        let words = |j: &Junction| -> Vec<String> {
            j.amem
                .verilog_text()
                .lines()
                .filter(|l| l.starts_with("reg signed") && l.contains(" mem_"))
                .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .collect()
        };
        let one = words(&Junction::new(&p, 0));
        let two = words(&Junction::new(&p, 0).with_input_lanes(2));
        // tiny's first junction: z = 4, 8 read ports, 10-bit values
        assert_eq!(one.len(), 8);
        assert_eq!(two.len(), 8);
        assert!(
            two.iter().all(|l| l.starts_with("reg signed [9:0]")),
            "{two:?}"
        );
    }
}
