//! The network top: the host link, the controller and one junction per pair of layers, built from
//! a spec at run time (`Vec<Junction>`, per-instance tables and constants). Ports are the
//! host link of hdl/PROTOCOL.md: `clock`, `in_data`, `in_valid`, `in_ready`, `out_data`,
//! `out_valid`, `out_ready`.

use crate::controller::{Controller, CtrlParams};
use crate::host_link::HostLink;
use crate::junction::Junction;
use crate::params::JunctionParams;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to, wire_junction_control, wire_junction_pair};
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;
use std::rc::Rc;

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
    /// Per junction, the groups on its left port.
    _lefts: Rc<[usize]>,
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
        let mut n = Network {
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
            _lefts: Rc::from(vec![]),
        };
        n._lefts = n.junctions.iter().map(|x| x.left.len()).collect();
        n
    }
}

impl Logic for Network {
    fn update(&mut self) {
        let (lefts, lanes) = (self._lefts.clone(), self.in_lanes.len());
        Self::wire(&lefts, lanes, &mut Sim(self));
    }

    fn connect(&mut self) {
        let (lefts, lanes) = (self._lefts.clone(), self.in_lanes.len());
        Self::wire(&lefts, lanes, &mut Connect(self));
    }

    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(&self._lefts, self.in_lanes.len(), &mut t);
        t.verilog("")
    }
}

impl Network {
    /// The network's connections (`lefts`: the groups on each junction's left port,
    /// `in_lanes` extra input lanes): the simulation, `connect()` and the Verilog.
    fn wire<W: Wires<Self>>(lefts: &[usize], in_lanes: usize, w: &mut W) {
        w.set(to!(link.clock), at!(w, clock));
        w.set(to!(link.host_in.data), at!(w, in_data));
        w.set(to!(link.host_in.valid), at!(w, in_valid));
        w.set(to!(link.host_out.ready), at!(w, out_ready));
        w.set(to!(in_ready), at!(w, link.host_in.ready));
        w.set(to!(out_data), at!(w, link.host_out.data));
        w.set(to!(out_valid), at!(w, link.host_out.valid));
        w.set(to!(ctrl.clock), at!(w, clock));
        w.set(to!(ctrl.go), at!(w, link.go));
        w.set(to!(ctrl.go_train), at!(w, link.go_train));
        w.set(to!(ctrl.go_samples), at!(w, link.go_samples));
        w.set(to!(ctrl.sample_ready), at!(w, link.sample_ready));
        w.set(to!(ctrl.lab_we), at!(w, link.lab_we));
        w.set(to!(ctrl.lab_copy), at!(w, link.lab_copy));
        w.set(to!(ctrl.out_busy), at!(w, link.out_busy));
        w.set(to!(ctrl.lab_data), at!(w, link.h_wdata));
        w.set(to!(link.started), at!(w, ctrl.started));
        w.set(to!(link.starting), at!(w, ctrl.starting));
        w.set(to!(link.done), at!(w, ctrl.done));
        w.set(to!(link.pred_valid), at!(w, ctrl.pred_valid));
        let l = lefts.len();
        for j in 0..l {
            wire_junction_control!(w, j);
            w.set(to!(junctions[j].restart), at!(w, link.go));
            w.set(to!(junctions[j].h_bias), at!(w, link.h_bias));
            w.set(to!(junctions[j].h_we), at!(w, link.h_we));
            w.set(to!(junctions[j].h_addr), at!(w, link.h_addr));
            w.set(to!(junctions[j].h_bank), at!(w, link.h_bank));
            w.set(to!(junctions[j].h_wdata), at!(w, link.h_wdata));
            w.set(to!(junctions[j].in_copy), at!(w, link.in_copy));
            w.set(to!(junctions[j].in_addr), at!(w, link.in_addr));
            w.set(to!(junctions[j].ff_en), at!(w, ctrl.ff_en[j]));
            w.set(to!(junctions[j].bp_en), at!(w, ctrl.bp_en[j]));
            w.set(to!(junctions[j].h_sel), at!(w, link.h_sel[j]));
            w.set(to!(link.h_rdata[j]), at!(w, junctions[j].h_rdata));
            let we = if j == 0 {
                at!(w, link.in_we)
            } else {
                w.lit(0, "1'b0")
            };
            w.set(to!(junctions[j].in_we), we);
            w.set(to!(junctions[j].in_data), at!(w, link.h_wdata));
            if j > 0 {
                wire_junction_pair!(w, j, lefts[j]);
            }
        }
        w.set(to!(link.pred), at!(w, junctions[l - 1].pred));
        for k in 0..in_lanes {
            w.set(to!(junctions[0].in_lane_we[k]), at!(w, link.in_lanes_we[k]));
            w.set(to!(junctions[0].in_lane_data[k]), at!(w, in_lanes[k]));
        }
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
