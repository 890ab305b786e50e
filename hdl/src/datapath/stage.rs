//! A stage: the junctions `first..=last` of a network that a chain of boards splits, on the
//! chain's schedule (`ff`, `bp` offsets of every junction with the links' delays, as
//! `sim::Schedule::with_links` gives them). The controller counts the chain's block cycles
//! from 0, so every junction here runs FF and BP/UP in exactly the block cycles the reference
//! model runs them with the chain's staleness, and the left layers' copies cover that
//! staleness (params.rs).
//!
//! Boundary ports, driven by whoever carries the link (the host runtime in simulation):
//! - left (when `first > 0`): the first junction's left layer is written through `lw_*`
//!   exactly as the previous junction's FF would write it (activations of the sample its FF
//!   runs next block cycle, `g` neurons per clock, neuron `≡ q (mod g)` on port `q`, `g` the
//!   previous junction's groups), and its delta sums are read and cleared through `lq_*`
//!   between block cycles (the sums the first junction's BP accumulated in the block cycle
//!   before), saturated to the value format as BP would saturate them. σ′ of this layer stays on the left board (stage_port.rs); `lw_sp` writes 0.
//! - right (when `last < L-1`): the last junction's right-layer writes appear on `rw_*`
//!   (activations of the sample its FF runs, to send on), and the delta sums of the sample
//!   its BP runs next are written through `d_*` between block cycles into the right port.
//!   Each link thus carries one value-format word per boundary neuron each way.
//!
//! The block cycle length is the stage's own longest pass (`max C_j`, at least 2), and a block
//! cycle starts only when `allow` exceeds the block cycles started: the stage waits for its
//! link, and the boundary ports are used while it waits. A stage of all junctions with no
//! links is today's single-board datapath with direct ports instead of the host link.

use crate::controller::{Controller, CtrlParams};
use crate::fixed::{b16, s32, sat};
use crate::junction::ports::groups;
use crate::junction::Junction;
use crate::params::JunctionParams;
use crate::stage_port::{BoundaryLeft, BoundaryRight, RightPort};
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to, wire_group_pair, wire_junction_control, wire_junction_pair};
use edgeflow_core::fixed::Format;
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;
use std::ops::RangeInclusive;
use std::rc::Rc;

#[derive(LogicBlock)]
pub struct Stage {
    pub clock: Signal<In, Clock>,
    // control
    pub go: Signal<In, Bit>,
    pub go_train: Signal<In, Bit>,
    pub go_samples: Signal<In, Bits<16>>,
    /// Block cycles the stage may start (it waits while `allow` ≤ started).
    pub allow: Signal<In, Bits<32>>,
    /// A linked stage's sequencer says directly whether a block cycle may start (one bit, no
    /// comparison of counters in front of the controller); `allow` is then unused.
    pub permit: Vec<Signal<In, Bit>>,
    pub started: Signal<Out, Bits<32>>,
    /// A block cycle starts at the end of this clock.
    pub starting: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    /// A block-cycle clock (the stage is not waiting).
    pub adv: Signal<Out, Bit>,
    /// The last clock of a block cycle.
    pub last: Signal<Out, Bit>,
    // labels of the output layer's samples (ring position = sample mod copies)
    pub lab_we: Signal<In, Bit>,
    pub lab_copy: Signal<In, Bits<16>>,
    pub lab_data: Signal<In, Bits<16>>,
    // input samples (stage with junction 1)
    pub in_we: Signal<In, Bit>,
    pub in_copy: Signal<In, Bits<16>>,
    pub in_addr: Signal<In, Bits<16>>,
    pub in_data: Signal<In, Bits<16>>,
    // weights and biases
    pub h_sel: Vec<Signal<In, Bit>>,
    pub h_bias: Signal<In, Bit>,
    pub h_we: Signal<In, Bit>,
    pub h_addr: Signal<In, Bits<16>>,
    pub h_bank: Signal<In, Bits<16>>,
    pub h_wdata: Signal<In, Bits<16>>,
    pub h_rdata: Vec<Signal<Out, Bits<16>>>,
    /// The left boundary, per group (the stage's first junction is not the network's).
    pub left: Vec<BoundaryLeft>,
    /// The right boundary, per group (the stage's last junction is not the network's).
    pub right: Vec<BoundaryRight>,
    pub d_we: Signal<In, Bit>,
    /// The parity of the block cycle the sums are for.
    pub d_copy: Signal<In, Bits<16>>,
    pub d_addr: Signal<In, Bits<16>>,
    pub d_data: Signal<In, Bits<16>>,
    /// The output layer's first largest activation so far (stage with the last junction).
    pub pred: Signal<Out, Bits<16>>,
    // blocks
    pub ctrl: Controller,
    pub junctions: Vec<Junction>,
    pub rport: Vec<RightPort>,
    _first: usize,
    _l: usize,
    _format: Format,
    _lefts: Rc<[usize]>,
}

/// The controller's view of junctions `range` of `spec` on the schedule `ff`, `bp`: its
/// block cycles, and the weight and bias memories a host walk visits, in walk order.
pub fn ctrl_params(
    spec: &Spec,
    range: RangeInclusive<usize>,
    ff: &[usize],
    bp: &[usize],
) -> CtrlParams {
    let local: Vec<JunctionParams> = range
        .clone()
        .map(|j| JunctionParams::with_schedule(spec, j, ff, bp))
        .collect();
    CtrlParams {
        junctions: local.len(),
        inputs: spec.layers[0],
        outputs: spec.layers[spec.junctions()],
        t: local.iter().map(|p| p.clocks).max().unwrap() + spec.block_cycle_overhead(),
        in_copies: bp[0] - ff[0] + 3,
        w_banks: local.iter().map(|p| p.z).collect(),
        w_rows: local.iter().map(|p| p.clocks).collect(),
        b_banks: local.iter().map(|p| p.groups).collect(),
        b_rows: local.iter().map(|p| p.bias_rows()).collect(),
        ff: ff[range.clone()].to_vec(),
        bp: bp[range].to_vec(),
        wait_all: true,
        registered_label: true,
    }
}

/// A 32-bit delta sum saturated to the value format, as BP saturates it (the Verilog
/// function `sat32` of `fixed::verilog_functions`).
pub fn sat_sum<B, X: Wires<B>>(w: &X, acc: &X::V, format: Format) -> X::V {
    w.call("sat32", acc, move |x| {
        b16(sat(format, s32(Bits::<32>::from(x)))).to_u64()
    })
}

impl Stage {
    /// Junctions `range` (0-based) of `spec` on the schedule `ff`, `bp` (every junction of
    /// the network, block cycles of its FF and BP/UP of sample 0).
    pub fn new(spec: &Spec, range: RangeInclusive<usize>, ff: &[usize], bp: &[usize]) -> Stage {
        Stage::build(spec, range, ff, bp, false)
    }

    /// [`Stage::new`] as a linked board runs it: a block cycle starts on `permit`, and the
    /// output layer's first largest compares registered outputs (ff_output.rs), so `pred` is
    /// complete two clocks after the block cycle that wrote them (the sequencer waits).
    pub fn linked(spec: &Spec, range: RangeInclusive<usize>, ff: &[usize], bp: &[usize]) -> Stage {
        Stage::build(spec, range, ff, bp, true)
    }

    fn build(
        spec: &Spec,
        range: RangeInclusive<usize>,
        ff: &[usize],
        bp: &[usize],
        linked: bool,
    ) -> Stage {
        let l = spec.junctions();
        let (first, last) = (*range.start(), *range.end());
        assert!(
            first <= last && last < l,
            "stage {first}..={last} of {l} junctions"
        );
        assert!(ff.len() == l && bp.len() == l);
        let mut ps: Vec<JunctionParams> = (0..l)
            .map(|j| JunctionParams::with_schedule(spec, j, ff, bp))
            .collect();
        ps[l - 1].pred_slack = linked;
        ps[first].left_copy_in = linked && first > 0;
        let junctions: Vec<Junction> = range
            .clone()
            .map(|j| Junction::new(&ps[j], if j > 0 { ps[j - 1].groups } else { 0 }))
            .collect();
        let local = &ps[first..=last];
        let ctrl = ctrl_params(spec, range.clone(), ff, bp);
        let left = if first > 0 { ps[first - 1].groups } else { 0 };
        let right = if last + 1 < l { ps[last].groups } else { 0 };
        let rport = if last + 1 < l {
            vec![RightPort::new(
                spec.layers[last + 1],
                right,
                ff[last],
                bp[last] - ff[last],
            )]
        } else {
            vec![]
        };
        let n = local.len();
        let mut s = Stage {
            clock: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            allow: Default::default(),
            permit: crate::sigs(usize::from(linked)),
            started: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            adv: Default::default(),
            last: Default::default(),
            lab_we: Default::default(),
            lab_copy: Default::default(),
            lab_data: Default::default(),
            in_we: Default::default(),
            in_copy: Default::default(),
            in_addr: Default::default(),
            in_data: Default::default(),
            h_sel: crate::sigs(n),
            h_bias: Default::default(),
            h_we: Default::default(),
            h_addr: Default::default(),
            h_bank: Default::default(),
            h_wdata: Default::default(),
            h_rdata: crate::sigs(n),
            left: groups(left),
            right: groups(right),
            d_we: Default::default(),
            d_copy: Default::default(),
            d_addr: Default::default(),
            d_data: Default::default(),
            pred: Default::default(),
            ctrl: Controller::new(ctrl),
            junctions,
            rport,
            _first: first,
            _l: l,
            _format: spec.format(),
            _lefts: Rc::from(vec![]),
        };
        s._lefts = s.junctions.iter().map(|x| x.left.len()).collect();
        s
    }

    /// First junction of the stage (0-based).
    pub fn first(&self) -> usize {
        self._first
    }

    /// Last junction of the stage (0-based).
    pub fn last_junction(&self) -> usize {
        self._first + self.junctions.len() - 1
    }

    /// Clocks of one block cycle of this stage.
    pub fn block_cycle_clocks(&self) -> usize {
        self.ctrl.params().t
    }
}

impl Logic for Stage {
    fn update(&mut self) {
        let shape = self.shape();
        Self::wire(&shape, &mut Sim(self));
    }

    fn connect(&mut self) {
        let shape = self.shape();
        Self::wire(&shape, &mut Connect(self));
    }

    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(&self.shape(), &mut t);
        t.verilog(&crate::fixed::verilog_functions(self._format, 0))
    }
}

impl Stage {
    fn shape(&self) -> Shape {
        Shape {
            lefts: self._lefts.clone(),
            left_port: self.left.len(),
            right_port: self.right.len(),
            rport: !self.rport.is_empty(),
            first: self._first,
            format: self._format,
            permit: !self.permit.is_empty(),
        }
    }

    /// The stage's connections: the simulation, `connect()` and the Verilog.
    fn wire<W: Wires<Self>>(shape: &Shape, w: &mut W) {
        let bit0 = w.lit(0, "1'b0");
        w.set(to!(ctrl.clock), at!(w, clock));
        w.set(to!(ctrl.go), at!(w, go));
        w.set(to!(ctrl.go_train), at!(w, go_train));
        w.set(to!(ctrl.go_samples), at!(w, go_samples));
        w.set(to!(ctrl.lab_we), at!(w, lab_we));
        w.set(to!(ctrl.lab_copy), at!(w, lab_copy));
        w.set(to!(ctrl.lab_data), at!(w, lab_data));
        let ready = if shape.permit {
            at!(w, permit[0])
        } else {
            w.gt(&at!(w, allow), &at!(w, ctrl.started))
        };
        w.set(to!(ctrl.sample_ready), ready);
        w.set(to!(ctrl.out_busy), bit0.clone());
        w.set(to!(started), at!(w, ctrl.started));
        w.set(to!(starting), at!(w, ctrl.starting));
        w.set(to!(done), at!(w, ctrl.done));
        w.set(to!(adv), at!(w, ctrl.adv));
        w.set(to!(last), at!(w, ctrl.last));
        let n = shape.lefts.len();
        let left_port = shape.first > 0;
        let format = shape.format;
        for j in 0..n {
            wire_junction_control!(w, j);
            w.set(to!(junctions[j].restart), at!(w, go));
            w.set(to!(junctions[j].h_bias), at!(w, h_bias));
            w.set(to!(junctions[j].h_we), at!(w, h_we));
            w.set(to!(junctions[j].h_addr), at!(w, h_addr));
            w.set(to!(junctions[j].h_bank), at!(w, h_bank));
            w.set(to!(junctions[j].h_wdata), at!(w, h_wdata));
            w.set(to!(junctions[j].in_copy), at!(w, in_copy));
            w.set(to!(junctions[j].in_addr), at!(w, in_addr));
            w.set(to!(junctions[j].in_data), at!(w, in_data));
            w.set(to!(junctions[j].ff_en), at!(w, ctrl.ff_en[j]));
            w.set(to!(junctions[j].bp_en), at!(w, ctrl.bp_en[j]));
            w.set(to!(junctions[j].h_sel), at!(w, h_sel[j]));
            w.set(to!(h_rdata[j]), at!(w, junctions[j].h_rdata));
            let we = if j == 0 && !left_port {
                at!(w, in_we)
            } else {
                bit0.clone()
            };
            w.set(to!(junctions[j].in_we), we);
            if j > 0 {
                wire_junction_pair!(w, j, shape.lefts[j]);
            } else if left_port {
                for q in 0..shape.left_port {
                    w.set(to!(junctions[j].left[q].w_en), at!(w, left[q].w_en));
                    w.set(to!(junctions[j].left[q].w_addr), at!(w, left[q].w_addr));
                    w.set(to!(junctions[j].left[q].w_a), at!(w, left[q].w_a));
                    w.set(to!(junctions[j].left[q].q_addr), at!(w, left[q].q_addr));
                    w.set(to!(junctions[j].left[q].q_clear), at!(w, left[q].q_clear));
                    w.set(to!(junctions[j].left[q].w_sp), w.lit(0, "16'd0"));
                    // BP saturates the sum before it uses it; saturating here first changes
                    // nothing and halves what the link carries
                    let acc = at!(w, junctions[j].left[q].q_acc);
                    w.set(to!(left[q].q_sum), sat_sum(w, &acc, format));
                    w.set(to!(left[q].q_acc), acc);
                }
            }
        }
        w.set(to!(pred), at!(w, junctions[n - 1].pred));
        if shape.rport {
            let x = n - 1;
            w.set(to!(rport[0].clock), at!(w, clock));
            w.set(to!(rport[0].last), at!(w, ctrl.last));
            w.set(to!(rport[0].restart), at!(w, go));
            w.set(to!(rport[0].d_we), at!(w, d_we));
            w.set(to!(rport[0].d_addr), at!(w, d_addr));
            w.set(to!(rport[0].d_copy), at!(w, d_copy));
            w.set(to!(rport[0].d_data), at!(w, d_data));
            for q in 0..shape.right_port {
                w.set(to!(right[q].w_en), at!(w, junctions[x].right[q].w_en));
                w.set(to!(right[q].w_addr), at!(w, junctions[x].right[q].w_addr));
                w.set(to!(right[q].w_a), at!(w, junctions[x].right[q].w_a));
                wire_group_pair!(w, [junctions[x].right[q]], [rport[0].left[q]]);
            }
        }
    }
}

/// What a stage's wiring depends on besides its signals.
struct Shape {
    /// Per junction, the groups on its left port.
    lefts: Rc<[usize]>,
    /// Groups on the stage's left and right boundary ports.
    left_port: usize,
    right_port: usize,
    rport: bool,
    first: usize,
    format: Format,
    /// Block cycles start on `permit` (a linked stage).
    permit: bool,
}

/// The Verilog of a stage (top module `top`).
pub fn verilog(spec: &Spec, range: RangeInclusive<usize>, ff: &[usize], bp: &[usize]) -> String {
    let mut s = Stage::new(spec, range, ff, bp);
    s.connect_all();
    generate_verilog_unchecked(&s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::yosys_check;

    fn spec() -> Spec {
        let t = "name='s'\nlayers=[12,6,8,4]\nfan_out=[2,4,1]\nz=[4,1,8]\nactivation='relu'\nlearning_rate_shift=3\n[fixed]\nwidth=12\nint_bits=3\nfrac_bits=8\n[pattern]\nkind='type1'\ndither=true\nseed=5\n";
        Spec::from_toml_str(t, "s").unwrap()
    }

    /// Links of 1 and 2 block cycles after junctions 1 and 2 (the schedule of
    /// `sim::Schedule::with_links(&[1, 2])`).
    fn schedule() -> (Vec<usize>, Vec<usize>) {
        (vec![0, 2, 5], vec![11, 9, 6])
    }

    #[test]
    fn stages_with_left_right_and_both_ports_verilog_is_clean() {
        let sp = spec();
        let (ff, bp) = schedule();
        for (range, name) in [
            (0..=0, "stage_right"),
            (1..=1, "stage_both"),
            (2..=2, "stage_left"),
        ] {
            let mut s = Stage::new(&sp, range, &ff, &bp);
            s.connect_all();
            yosys_check(&s, name);
        }
    }

    /// The stage runs a block cycle only when `allow` exceeds the block cycles started, each
    /// of exactly its block-cycle clocks, FF of its junction on the chain's offset; the ports
    /// carry the right layer's activations out of the block cycle where FF runs.
    #[test]
    fn waits_for_allow_and_runs_the_chains_block_cycles() {
        use crate::testing::{settle, tick};
        let sp = spec();
        let (ff, bp) = schedule();
        let mut s = Stage::new(&sp, 1..=1, &ff, &bp);
        s.connect_all();
        let samples = 3;
        s.go.next = true;
        s.go_train.next = true;
        s.go_samples.next = crate::fixed::b16(samples);
        tick(&mut s, |s| &mut s.clock);
        s.go.next = false;
        let t_len = s.block_cycle_clocks();
        let total = samples as usize + bp[1];
        for t in 0..total {
            // held back: no clock of the block cycle runs
            for _ in 0..3 {
                settle(&mut s);
                assert!(!s.adv.val(), "block cycle {t} ran before it was allowed");
                tick(&mut s, |s| &mut s.clock);
            }
            s.allow.next = Bits::<32>::from((t + 1) as u64);
            // inputs settle before the clock edge, as in a synchronous circuit
            settle(&mut s);
            tick(&mut s, |s| &mut s.clock);
            let (mut clocks, mut writes) = (0, 0);
            loop {
                settle(&mut s);
                assert!(s.adv.val(), "block cycle {t} stalled after {clocks} clocks");
                clocks += 1;
                writes += s.right.iter().map(|x| &x.w_en).filter(|x| x.val()).count();
                let last = s.last.val();
                tick(&mut s, |s| &mut s.clock);
                if last {
                    break;
                }
            }
            assert_eq!(clocks, t_len, "block cycle {t}");
            let ff_runs = t >= ff[1] && t - ff[1] < samples as usize;
            assert_eq!(
                writes,
                if ff_runs { sp.layers[2] } else { 0 },
                "block cycle {t}"
            );
            assert_eq!(s.started.val().index(), t + 1);
        }
        settle(&mut s);
        assert!(s.done.val());
    }

    #[test]
    fn ports_and_block_cycle_follow_the_range() {
        let sp = spec();
        let (ff, bp) = schedule();
        let s = Stage::new(&sp, 1..=2, &ff, &bp);
        // junction 1 finishes z/fi = 4/6 → 1 right neuron per clock; the left port is its width
        assert_eq!(s.left.len(), 1);
        assert!(s.right.is_empty() && s.rport.is_empty());
        assert_eq!(
            s.block_cycle_clocks(),
            (6 * 4).max(8 * 1) + crate::params::FF_LATENCY
        );
        assert_eq!((s.first(), s.last_junction()), (1, 2));
        let s = Stage::new(&sp, 0..=0, &ff, &bp);
        assert!(s.left.is_empty());
        assert_eq!(s.right.len(), 1);
        assert_eq!(
            s.block_cycle_clocks(),
            12 * 2 / 4 + crate::params::FF_LATENCY
        );
    }
}
