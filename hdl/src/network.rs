//! The network top: the controller/host link and one junction per pair of layers, built from
//! a spec at run time (`Vec<Junction>`, per-instance tables and constants). Ports are the
//! host link of hdl/PROTOCOL.md: `clock`, `in_data`, `in_valid`, `in_ready`, `out_data`,
//! `out_valid`, `out_ready`.

use crate::controller::{Controller, CtrlParams};
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
    pub ctrl: Controller,
    pub junctions: Vec<Junction>,
}

impl Network {
    pub fn new(spec: &Spec) -> Network {
        let ps: Vec<JunctionParams> = (0..spec.junctions())
            .map(|j| JunctionParams::new(spec, j))
            .collect();
        let junctions = ps
            .iter()
            .enumerate()
            .map(|(j, p)| Junction::new(p, if j > 0 { ps[j - 1].groups } else { 0 }))
            .collect();
        Network {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            ctrl: Controller::new(CtrlParams::new(spec)),
            junctions,
        }
    }
}

impl Logic for Network {
    fn update(&mut self) {
        let c = &mut self.ctrl;
        c.clock.next = self.clock.val();
        c.in_data.next = self.in_data.val();
        c.in_valid.next = self.in_valid.val();
        c.out_ready.next = self.out_ready.val();
        self.in_ready.next = c.in_ready.val();
        self.out_data.next = c.out_data.val();
        self.out_valid.next = c.out_valid.val();
        let l = self.junctions.len();
        for j in 0..l {
            let c = &mut self.ctrl;
            let (lo, hi) = self.junctions.split_at_mut(j);
            let x = &mut hi[0];
            x.clock.next = self.clock.val();
            x.adv.next = c.adv.val();
            x.k.next = c.k.val();
            x.last.next = c.last.val();
            x.ff_en.next = c.ff_en[j].val();
            x.bp_en.next = c.bp_en[j].val();
            x.parity.next = c.parity.val();
            x.restart.next = c.restart.val();
            x.label.next = c.label.val();
            x.h_sel.next = c.h_sel[j].val();
            x.h_bias.next = c.h_bias.val();
            x.h_we.next = c.h_we.val();
            x.h_addr.next = c.h_addr.val();
            x.h_bank.next = c.h_bank.val();
            x.h_wdata.next = c.h_wdata.val();
            c.h_rdata[j].next = x.h_rdata.val();
            x.in_we.next = j == 0 && c.in_we.val();
            x.in_copy.next = c.in_copy.val();
            x.in_addr.next = c.in_addr.val();
            x.in_data.next = c.h_wdata.val();
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
        self.ctrl.pred.next = self.junctions[l - 1].pred.val();
    }

    fn connect(&mut self) {
        self.in_ready.connect();
        self.out_data.connect();
        self.out_valid.connect();
        let c = &mut self.ctrl;
        c.clock.connect();
        c.in_data.connect();
        c.in_valid.connect();
        c.out_ready.connect();
        c.pred.connect();
        for x in c.h_rdata.iter_mut() {
            x.connect();
        }
        for x in self.junctions.iter_mut() {
            x.clock.connect();
            x.adv.connect();
            x.k.connect();
            x.last.connect();
            x.ff_en.connect();
            x.bp_en.connect();
            x.parity.connect();
            x.restart.connect();
            x.label.connect();
            x.h_sel.connect();
            x.h_bias.connect();
            x.h_we.connect();
            x.h_addr.connect();
            x.h_bank.connect();
            x.h_wdata.connect();
            x.in_we.connect();
            x.in_copy.connect();
            x.in_addr.connect();
            x.in_data.connect();
            for v in [
                &mut x.lw_addr,
                &mut x.lw_a,
                &mut x.lw_sp,
                &mut x.lq_addr,
                &mut x.rq_sp,
            ] {
                for s in v.iter_mut() {
                    s.connect();
                }
            }
            for v in [&mut x.lw_en, &mut x.lq_clear] {
                for s in v.iter_mut() {
                    s.connect();
                }
            }
            for s in x.rq_acc.iter_mut() {
                s.connect();
            }
        }
    }

    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n");
        let mut a = |l: String, r: String| v.push_str(&format!("    {l} = {r};\n"));
        for s in ["clock", "in_data", "in_valid", "out_ready"] {
            a(format!("ctrl${s}"), s.to_string());
        }
        for s in ["in_ready", "out_data", "out_valid"] {
            a(s.to_string(), format!("ctrl${s}"));
        }
        let l = self.junctions.len();
        for j in 0..l {
            let x = format!("junctions${j}");
            a(format!("{x}$clock"), "clock".into());
            for s in [
                "adv", "k", "last", "parity", "restart", "label", "h_bias", "h_we", "h_addr",
                "h_bank", "h_wdata", "in_copy", "in_addr",
            ] {
                a(format!("{x}${s}"), format!("ctrl${s}"));
            }
            a(format!("{x}$ff_en"), format!("ctrl$ff_en${j}"));
            a(format!("{x}$bp_en"), format!("ctrl$bp_en${j}"));
            a(format!("{x}$h_sel"), format!("ctrl$h_sel${j}"));
            a(format!("ctrl$h_rdata${j}"), format!("{x}$h_rdata"));
            a(
                format!("{x}$in_we"),
                if j == 0 {
                    "ctrl$in_we".into()
                } else {
                    "1'b0".into()
                },
            );
            a(format!("{x}$in_data"), "ctrl$h_wdata".into());
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
        a("ctrl$pred".into(), format!("junctions${}$pred", l - 1));
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

/// The Verilog of the network built from `spec` (top module `top`).
pub fn verilog(spec: &Spec) -> String {
    let mut n = Network::new(spec);
    n.connect_all();
    generate_verilog_unchecked(&n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_network_verilog_is_clean() {
        let spec = Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
        )
        .unwrap();
        let mut n = Network::new(&spec);
        n.connect_all();
        crate::testing::yosys_check(&n, "network_tiny");
    }
}
