//! The network top: the host link, the controller and one junction per pair of layers, built from
//! a spec at run time (`Vec<Junction>`, per-instance tables and constants). Ports are the
//! host link of hdl/PROTOCOL.md: `clock`, `in_data`, `in_valid`, `in_ready`, `out_data`,
//! `out_valid`, `out_ready`.

use crate::controller::{Controller, CtrlParams};
use crate::host_link::HostLink;
use crate::junction::Junction;
use crate::params::JunctionParams;
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;

#[derive(LogicBlock)]
pub struct Network {
    pub clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// Words 1 … W-1 of a sample beat (input lanes, PROTOCOL.md); none when W = 1.
    pub in_lanes: Vec<Signal<In, Bits<16>>>,
    pub link: HostLink,
    pub ctrl: Controller,
    pub junctions: Vec<Junction>,
}

impl Network {
    /// One sample word per clock: the 16-bit protocol of the UART board tops.
    pub fn new(spec: &Spec) -> Network {
        Network::with_input_lanes(spec, 1)
    }

    /// Sample words arrive `lanes` per beat (input_lanes.rs; 1 ≤ lanes ≤ z_1).
    pub fn with_input_lanes(spec: &Spec, lanes: usize) -> Network {
        let mut ps: Vec<JunctionParams> = (0..spec.junctions())
            .map(|j| JunctionParams::new(spec, j))
            .collect();
        // neighbours on one board: a one-lane delta memory read by one group reads on the
        // clock edge, its register standing in for the reader's (delta_memory.rs)
        for j in 1..ps.len() {
            let on = ps[j].registered_reads && ps[j].z == 1 && ps[j - 1].groups == 1;
            ps[j].registered_sums_left = on;
            ps[j - 1].registered_sums_right = on;
        }
        // the controller's block cycle covers the longest pass: a last junction two clocks
        // shorter has its outputs done two clocks early, time enough to register them before
        // the argmax and to register the argmax itself
        let longest = ps.iter().map(|p| p.clocks).max().unwrap_or(0);
        if let Some(p) = ps.last_mut() {
            p.pred_slack = p.clocks + 2 <= longest;
        }
        let junctions = ps
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let x = Junction::new(p, if j > 0 { ps[j - 1].groups } else { 0 });
                if j == 0 && lanes > 1 {
                    x.with_input_lanes(lanes)
                } else {
                    x
                }
            })
            .collect();
        Network {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            in_lanes: crate::sigs(lanes - 1),
            link: HostLink::with_lanes(CtrlParams::new(spec), lanes),
            ctrl: Controller::new(CtrlParams::new(spec)),
            junctions,
        }
    }
}

impl Logic for Network {
    fn update(&mut self) {
        let clock = self.clock.val();
        let h = &mut self.link;
        h.clock.next = clock;
        h.in_data.next = self.in_data.val();
        h.in_valid.next = self.in_valid.val();
        h.out_ready.next = self.out_ready.val();
        self.in_ready.next = h.in_ready.val();
        self.out_data.next = h.out_data.val();
        self.out_valid.next = h.out_valid.val();
        let c = &mut self.ctrl;
        c.clock.next = clock;
        c.go.next = h.go.val();
        c.go_train.next = h.go_train.val();
        c.go_samples.next = h.go_samples.val();
        c.sample_ready.next = h.sample_ready.val();
        c.lab_we.next = h.lab_we.val();
        c.lab_copy.next = h.lab_copy.val();
        c.lab_data.next = h.h_wdata.val();
        c.out_busy.next = h.out_busy.val();
        h.started.next = c.started.val();
        h.starting.next = c.starting.val();
        h.done.next = c.done.val();
        h.pred_valid.next = c.pred_valid.val();
        let l = self.junctions.len();
        for j in 0..l {
            let (c, h) = (&self.ctrl, &mut self.link);
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
            x.restart.next = h.go.val();
            x.label.next = c.label.val();
            x.h_sel.next = h.h_sel[j].val();
            x.h_bias.next = h.h_bias.val();
            x.h_we.next = h.h_we.val();
            x.h_addr.next = h.h_addr.val();
            x.h_bank.next = h.h_bank.val();
            x.h_wdata.next = h.h_wdata.val();
            h.h_rdata[j].next = x.h_rdata.val();
            x.in_we.next = j == 0 && h.in_we.val();
            x.in_copy.next = h.in_copy.val();
            x.in_addr.next = h.in_addr.val();
            x.in_data.next = h.h_wdata.val();
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
            }
        }
        self.link.pred.next = self.junctions[l - 1].pred.val();
        for k in 0..self.in_lanes.len() {
            let x = &mut self.junctions[0];
            x.in_lane_we[k].next = self.link.in_lanes_we[k].val();
            x.in_lane_data[k].next = self.in_lanes[k].val();
        }
    }

    fn connect(&mut self) {
        self.in_ready.connect();
        self.out_data.connect();
        self.out_valid.connect();
        let h = &mut self.link;
        for x in [
            &mut h.in_valid,
            &mut h.out_ready,
            &mut h.done,
            &mut h.pred_valid,
        ] {
            x.connect();
        }
        h.clock.connect();
        h.in_data.connect();
        h.pred.connect();
        h.started.connect();
        h.starting.connect();
        h.h_rdata.iter_mut().for_each(|x| x.connect());
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
    }

    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n");
        let mut a = |l: String, r: String| v.push_str(&format!("    {l} = {r};\n"));
        for s in ["clock", "in_data", "in_valid", "out_ready"] {
            a(format!("link${s}"), s.to_string());
        }
        for s in ["in_ready", "out_data", "out_valid"] {
            a(s.to_string(), format!("link${s}"));
        }
        a("ctrl$clock".into(), "clock".into());
        for s in [
            "go",
            "go_train",
            "go_samples",
            "sample_ready",
            "lab_we",
            "lab_copy",
            "out_busy",
        ] {
            a(format!("ctrl${s}"), format!("link${s}"));
        }
        a("ctrl$lab_data".into(), "link$h_wdata".into());
        for s in ["started", "starting", "done", "pred_valid"] {
            a(format!("link${s}"), format!("ctrl${s}"));
        }
        let l = self.junctions.len();
        for j in 0..l {
            let x = format!("junctions${j}");
            a(format!("{x}$clock"), "clock".into());
            for s in ["adv", "k", "last", "step", "parity", "label"] {
                a(format!("{x}${s}"), format!("ctrl${s}"));
            }
            a(format!("{x}$restart"), "link$go".into());
            for s in [
                "h_bias", "h_we", "h_addr", "h_bank", "h_wdata", "in_copy", "in_addr",
            ] {
                a(format!("{x}${s}"), format!("link${s}"));
            }
            a(format!("{x}$ff_en"), format!("ctrl$ff_en${j}"));
            a(format!("{x}$bp_en"), format!("ctrl$bp_en${j}"));
            a(format!("{x}$h_sel"), format!("link$h_sel${j}"));
            a(format!("link$h_rdata${j}"), format!("{x}$h_rdata"));
            let we = if j == 0 { "link$in_we" } else { "1'b0" };
            a(format!("{x}$in_we"), we.into());
            a(format!("{x}$in_data"), "link$h_wdata".into());
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
            }
        }
        a("link$pred".into(), format!("junctions${}$pred", l - 1));
        for k in 0..self.in_lanes.len() {
            a(
                format!("junctions$0$in_lane_we${k}"),
                format!("link$in_lanes_we${k}"),
            );
            a(
                format!("junctions$0$in_lane_data${k}"),
                format!("in_lanes${k}"),
            );
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

/// The Verilog of the network built from `spec` (top module `top`), one word per clock.
pub fn verilog(spec: &Spec) -> String {
    verilog_lanes(spec, 1)
}

/// The Verilog of the network with `lanes` input lanes (ports `in_lanes$0 …`, PROTOCOL.md).
pub fn verilog_lanes(spec: &Spec, lanes: usize) -> String {
    let mut n = Network::with_input_lanes(spec, lanes);
    n.connect_all();
    generate_verilog_unchecked(&n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_networks_verilog_is_clean() {
        for name in ["tiny", "digits"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../specs/{name}.toml"));
            let spec = Spec::load(&path).unwrap();
            let mut n = Network::new(&spec);
            n.connect_all();
            crate::testing::yosys_check(&n, &format!("network_{name}"));
        }
    }

    #[test]
    fn network_with_input_lanes_verilog_is_clean() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml");
        let mut n = Network::with_input_lanes(&Spec::load(&path).unwrap(), 3);
        n.connect_all();
        assert_eq!(n.in_lanes.len(), 2);
        crate::testing::yosys_check(&n, "network_lanes");
    }

    #[test]
    fn relu_type1_network_verilog_is_clean() {
        let t = "name='r'\nlayers=[12,6,8,4]\nfan_out=[2,4,1]\nz=[4,1,8]\nactivation='relu'\nlearning_rate_shift=3\n[fixed]\nwidth=12\nint_bits=3\nfrac_bits=8\n[pattern]\nkind='type1'\ndither=true\nseed=5\n";
        let spec = Spec::from_toml_str(t, "r").unwrap();
        let mut n = Network::new(&spec);
        n.connect_all();
        crate::testing::yosys_check(&n, "network_relu_type1");
    }
}
