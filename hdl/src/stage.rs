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
use crate::junction::Junction;
use crate::params::JunctionParams;
use crate::stage_port::RightPort;
use edgeflow_core::fixed::Format;
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;
use std::fmt::Write;
use std::ops::RangeInclusive;

#[derive(LogicBlock)]
pub struct Stage {
    pub clock: Signal<In, Clock>,
    // control
    pub go: Signal<In, Bit>,
    pub go_train: Signal<In, Bit>,
    pub go_samples: Signal<In, Bits<16>>,
    /// Block cycles the stage may start (it waits while `allow` ≤ started).
    pub allow: Signal<In, Bits<32>>,
    pub started: Signal<Out, Bits<32>>,
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
    // left boundary
    pub lw_en: Vec<Signal<In, Bit>>,
    pub lw_addr: Vec<Signal<In, Bits<16>>>,
    pub lw_a: Vec<Signal<In, Bits<16>>>,
    pub lq_addr: Vec<Signal<In, Bits<16>>>,
    pub lq_clear: Vec<Signal<In, Bit>>,
    /// The delta sums, saturated to the value format: what the link carries back.
    pub lq_sum: Vec<Signal<Out, Bits<16>>>,
    // right boundary
    pub rw_en: Vec<Signal<Out, Bit>>,
    pub rw_addr: Vec<Signal<Out, Bits<16>>>,
    pub rw_a: Vec<Signal<Out, Bits<16>>>,
    pub d_we: Signal<In, Bit>,
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
}

impl Stage {
    /// Junctions `range` (0-based) of `spec` on the schedule `ff`, `bp` (every junction of
    /// the network, block cycles of its FF and BP/UP of sample 0).
    pub fn new(spec: &Spec, range: RangeInclusive<usize>, ff: &[usize], bp: &[usize]) -> Stage {
        let l = spec.junctions();
        let (first, last) = (*range.start(), *range.end());
        assert!(
            first <= last && last < l,
            "stage {first}..={last} of {l} junctions"
        );
        assert!(ff.len() == l && bp.len() == l);
        let ps: Vec<JunctionParams> = (0..l)
            .map(|j| JunctionParams::with_schedule(spec, j, ff, bp))
            .collect();
        let junctions: Vec<Junction> = range
            .clone()
            .map(|j| Junction::new(&ps[j], if j > 0 { ps[j - 1].groups } else { 0 }))
            .collect();
        let local = &ps[first..=last];
        let ctrl = CtrlParams {
            junctions: local.len(),
            inputs: spec.layers[0],
            t: local.iter().map(|p| p.clocks).max().unwrap()
                + crate::params::block_cycle_overhead(spec),
            in_copies: bp[0] - ff[0] + 3,
            w_banks: local.iter().map(|p| p.z).collect(),
            w_rows: local.iter().map(|p| p.clocks).collect(),
            b_banks: local.iter().map(|p| p.groups).collect(),
            b_rows: local.iter().map(|p| p.bias_rows()).collect(),
            ff: ff[range.clone()].to_vec(),
            bp: bp[range.clone()].to_vec(),
            wait_all: true,
        };
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
        Stage {
            clock: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            allow: Default::default(),
            started: Default::default(),
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
            lw_en: crate::sigs(left),
            lw_addr: crate::sigs(left),
            lw_a: crate::sigs(left),
            lq_addr: crate::sigs(left),
            lq_clear: crate::sigs(left),
            lq_sum: crate::sigs(left),
            rw_en: crate::sigs(right),
            rw_addr: crate::sigs(right),
            rw_a: crate::sigs(right),
            d_we: Default::default(),
            d_addr: Default::default(),
            d_data: Default::default(),
            pred: Default::default(),
            ctrl: Controller::new(ctrl),
            junctions,
            rport,
            _first: first,
            _l: l,
            _format: spec.format(),
        }
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
        let clock = self.clock.val();
        let go = self.go.val();
        let c = &mut self.ctrl;
        c.clock.next = clock;
        c.go.next = go;
        c.go_train.next = self.go_train.val();
        c.go_samples.next = self.go_samples.val();
        c.sample_ready.next = self.allow.val() > c.started.val();
        c.lab_we.next = self.lab_we.val();
        c.lab_copy.next = self.lab_copy.val();
        c.lab_data.next = self.lab_data.val();
        c.out_busy.next = false;
        self.started.next = c.started.val();
        self.done.next = c.done.val();
        self.adv.next = c.adv.val();
        self.last.next = c.last.val();
        let n = self.junctions.len();
        let (left_port, right_port) = (self._first > 0, !self.rport.is_empty());
        for j in 0..n {
            let c = &self.ctrl;
            let (lo, hi) = self.junctions.split_at_mut(j);
            let x = &mut hi[0];
            x.clock.next = clock;
            x.adv.next = c.adv.val();
            x.k.next = c.k.val();
            x.last.next = c.last.val();
            x.step.next = c.step.val();
            x.ff_en.next = c.ff_en[j].val();
            x.bp_en.next = c.bp_en[j].val();
            x.parity.next = c.parity.val();
            x.restart.next = go;
            x.label.next = c.label.val();
            x.h_sel.next = self.h_sel[j].val();
            x.h_bias.next = self.h_bias.val();
            x.h_we.next = self.h_we.val();
            x.h_addr.next = self.h_addr.val();
            x.h_bank.next = self.h_bank.val();
            x.h_wdata.next = self.h_wdata.val();
            self.h_rdata[j].next = x.h_rdata.val();
            x.in_we.next = j == 0 && !left_port && self.in_we.val();
            x.in_copy.next = self.in_copy.val();
            x.in_addr.next = self.in_addr.val();
            x.in_data.next = self.in_data.val();
            if j > 0 {
                let prev = &mut lo[j - 1];
                for q in 0..x.lw_en.len() {
                    x.lw_en[q].next = prev.rw_en[q].val();
                    x.lw_addr[q].next = prev.rw_addr[q].val();
                    x.lw_a[q].next = prev.rw_a[q].val();
                    x.lw_sp[q].next = prev.rw_sp[q].val();
                    x.lq_addr[q].next = prev.rq_addr[q].val();
                    x.lq_clear[q].next = prev.rq_clear[q].val();
                    prev.rq_acc[q].next = x.lq_acc[q].val();
                    prev.rq_sp[q].next = x.lq_sp[q].val();
                }
            } else if left_port {
                for q in 0..x.lw_en.len() {
                    x.lw_en[q].next = self.lw_en[q].val();
                    x.lw_addr[q].next = self.lw_addr[q].val();
                    x.lw_a[q].next = self.lw_a[q].val();
                    x.lw_sp[q].next = Bits::<16>::default();
                    x.lq_addr[q].next = self.lq_addr[q].val();
                    x.lq_clear[q].next = self.lq_clear[q].val();
                    // BP saturates the sum before it uses it; saturating here first changes
                    // nothing and halves what the link carries
                    self.lq_sum[q].next = b16(sat(self._format, s32(x.lq_acc[q].val())));
                }
            }
        }
        self.pred.next = self.junctions[n - 1].pred.val();
        if right_port {
            let x = &mut self.junctions[n - 1];
            let p = &mut self.rport[0];
            p.clock.next = clock;
            p.last.next = self.ctrl.last.val();
            p.restart.next = go;
            p.d_we.next = self.d_we.val();
            p.d_addr.next = self.d_addr.val();
            p.d_data.next = self.d_data.val();
            for q in 0..x.rw_en.len() {
                self.rw_en[q].next = x.rw_en[q].val();
                self.rw_addr[q].next = x.rw_addr[q].val();
                self.rw_a[q].next = x.rw_a[q].val();
                p.sp_en[q].next = x.rw_en[q].val();
                p.sp_addr[q].next = x.rw_addr[q].val();
                p.sp_data[q].next = x.rw_sp[q].val();
                p.rd_addr[q].next = x.rq_addr[q].val();
                x.rq_acc[q].next = p.rd_acc[q].val();
                x.rq_sp[q].next = p.rd_sp[q].val();
            }
        }
    }

    fn connect(&mut self) {
        for x in [&mut self.done, &mut self.adv, &mut self.last] {
            x.connect();
        }
        self.started.connect();
        self.pred.connect();
        for v in [&mut self.h_rdata, &mut self.rw_addr, &mut self.rw_a] {
            v.iter_mut().for_each(|x| x.connect());
        }
        self.rw_en.iter_mut().for_each(|x| x.connect());
        self.lq_sum.iter_mut().for_each(|x| x.connect());
        let c = &mut self.ctrl;
        for x in [&mut c.go, &mut c.go_train, &mut c.lab_we, &mut c.out_busy] {
            x.connect();
        }
        c.clock.connect();
        c.go_samples.connect();
        c.sample_ready.connect();
        c.lab_copy.connect();
        c.lab_data.connect();
        self.junctions.iter_mut().for_each(Junction::connect_inputs);
        for p in self.rport.iter_mut() {
            p.clock.connect();
            p.last.connect();
            p.restart.connect();
            p.d_we.connect();
            p.d_addr.connect();
            p.d_data.connect();
            p.sp_en.iter_mut().for_each(|s| s.connect());
            p.sp_addr.iter_mut().for_each(|s| s.connect());
            p.sp_data.iter_mut().for_each(|s| s.connect());
            p.rd_addr.iter_mut().for_each(|s| s.connect());
        }
    }

    fn hdl(&self) -> Verilog {
        let mut v = crate::fixed::verilog_functions(self._format, 0);
        v += "always @(*) begin\n";
        let mut a = |l: String, r: String| {
            let _ = writeln!(v, "    {l} = {r};");
        };
        a("ctrl$clock".into(), "clock".into());
        for s in [
            "go",
            "go_train",
            "go_samples",
            "lab_we",
            "lab_copy",
            "lab_data",
        ] {
            a(format!("ctrl${s}"), s.into());
        }
        a("ctrl$sample_ready".into(), "(allow > ctrl$started)".into());
        a("ctrl$out_busy".into(), "1'b0".into());
        for s in ["started", "done", "adv", "last"] {
            a(s.into(), format!("ctrl${s}"));
        }
        let n = self.junctions.len();
        let left_port = self._first > 0;
        for j in 0..n {
            let x = format!("junctions${j}");
            a(format!("{x}$clock"), "clock".into());
            for s in ["adv", "k", "last", "step", "parity", "label"] {
                a(format!("{x}${s}"), format!("ctrl${s}"));
            }
            a(format!("{x}$restart"), "go".into());
            for s in [
                "h_bias", "h_we", "h_addr", "h_bank", "h_wdata", "in_copy", "in_addr", "in_data",
            ] {
                a(format!("{x}${s}"), s.into());
            }
            a(format!("{x}$ff_en"), format!("ctrl$ff_en${j}"));
            a(format!("{x}$bp_en"), format!("ctrl$bp_en${j}"));
            a(format!("{x}$h_sel"), format!("h_sel${j}"));
            a(format!("h_rdata${j}"), format!("{x}$h_rdata"));
            let we = if j == 0 && !left_port {
                "in_we"
            } else {
                "1'b0"
            };
            a(format!("{x}$in_we"), we.into());
            if j > 0 {
                let pv = format!("junctions${}", j - 1);
                for q in 0..self.junctions[j].lw_en.len() {
                    for (mine, theirs) in [
                        ("lw_en", "rw_en"),
                        ("lw_addr", "rw_addr"),
                        ("lw_a", "rw_a"),
                        ("lw_sp", "rw_sp"),
                        ("lq_addr", "rq_addr"),
                        ("lq_clear", "rq_clear"),
                    ] {
                        a(format!("{x}${mine}${q}"), format!("{pv}${theirs}${q}"));
                    }
                    a(format!("{pv}$rq_acc${q}"), format!("{x}$lq_acc${q}"));
                    a(format!("{pv}$rq_sp${q}"), format!("{x}$lq_sp${q}"));
                }
            } else if left_port {
                for q in 0..self.lw_en.len() {
                    for s in ["lw_en", "lw_addr", "lw_a", "lq_addr", "lq_clear"] {
                        a(format!("{x}${s}${q}"), format!("{s}${q}"));
                    }
                    a(format!("{x}$lw_sp${q}"), "16'd0".into());
                    a(format!("lq_sum${q}"), format!("sat32({x}$lq_acc${q})"));
                }
            }
        }
        a("pred".into(), format!("junctions${}$pred", n - 1));
        if !self.rport.is_empty() {
            let x = format!("junctions${}", n - 1);
            a("rport$0$clock".into(), "clock".into());
            a("rport$0$last".into(), "ctrl$last".into());
            a("rport$0$restart".into(), "go".into());
            for s in ["d_we", "d_addr", "d_data"] {
                a(format!("rport$0${s}"), s.into());
            }
            for q in 0..self.rw_en.len() {
                for s in ["rw_en", "rw_addr", "rw_a"] {
                    a(format!("{s}${q}"), format!("{x}${s}${q}"));
                }
                a(format!("rport$0$sp_en${q}"), format!("{x}$rw_en${q}"));
                a(format!("rport$0$sp_addr${q}"), format!("{x}$rw_addr${q}"));
                a(format!("rport$0$sp_data${q}"), format!("{x}$rw_sp${q}"));
                a(format!("rport$0$rd_addr${q}"), format!("{x}$rq_addr${q}"));
                a(format!("{x}$rq_acc${q}"), format!("rport$0$rd_acc${q}"));
                a(format!("{x}$rq_sp${q}"), format!("rport$0$rd_sp${q}"));
            }
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
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
            tick(&mut s, |s| &mut s.clock);
            let (mut clocks, mut writes) = (0, 0);
            loop {
                settle(&mut s);
                assert!(s.adv.val(), "block cycle {t} stalled after {clocks} clocks");
                clocks += 1;
                writes += s.rw_en.iter().filter(|x| x.val()).count();
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
        assert_eq!(s.lw_en.len(), 1);
        assert!(s.rw_en.is_empty() && s.rport.is_empty());
        assert_eq!(
            s.block_cycle_clocks(),
            (6 * 4).max(8 * 1) + crate::params::FF_LATENCY
        );
        assert_eq!((s.first(), s.last_junction()), (1, 2));
        let s = Stage::new(&sp, 0..=0, &ff, &bp);
        assert!(s.lw_en.is_empty());
        assert_eq!(s.rw_en.len(), 1);
        assert_eq!(
            s.block_cycle_clocks(),
            12 * 2 / 4 + crate::params::FF_LATENCY
        );
    }
}
