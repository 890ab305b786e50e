//! The FF unit of a junction: lanes (`w·a`), adder tree / accumulator with the bias, the
//! activation ROM of each finished neuron, and the output stage (output delta, prediction).
//! A composite of the blocks in lanes.rs, neuron_sum.rs, act_rom.rs and ff_output.rs.

use crate::act_rom::ActivationRom;
use crate::ff_output::FfOutput;
use crate::lanes::Lanes;
use crate::neuron_sum::NeuronSum;
use crate::params::JunctionParams;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct FfUnit {
    pub clock: Signal<In, Clock>,
    pub run: Signal<In, Bit>,
    pub first: Signal<In, Bit>,
    pub last_sub: Signal<In, Bit>,
    pub w: Vec<Signal<In, Bits<16>>>,
    pub a: Vec<Signal<In, Bits<16>>>,
    pub bias: Vec<Signal<In, Bits<16>>>,
    pub r: Vec<Signal<In, Bits<16>>>,
    pub label: Signal<In, Bits<16>>,
    pub act: Vec<Signal<Out, Bits<16>>>,
    pub sp: Vec<Signal<Out, Bits<16>>>,
    pub out_delta: Vec<Signal<Out, Bits<16>>>,
    pub pred: Signal<Out, Bits<16>>,
    pub lanes: Lanes,
    pub sum: NeuronSum,
    pub roms: Vec<ActivationRom>,
    pub out: FfOutput,
}

impl FfUnit {
    pub fn new(p: &JunctionParams) -> FfUnit {
        let (z, g) = (p.z, p.groups);
        FfUnit {
            clock: Default::default(),
            run: Default::default(),
            first: Default::default(),
            last_sub: Default::default(),
            w: crate::sigs(z),
            a: crate::sigs(z),
            bias: crate::sigs(g),
            r: crate::sigs(g),
            label: Default::default(),
            act: crate::sigs(g),
            sp: crate::sigs(g),
            out_delta: crate::sigs(g),
            pred: Default::default(),
            lanes: Lanes::new(z, p.format),
            sum: NeuronSum::new(g, p.lanes_per_group, p.format).with_fan_in(p.fan_in),
            roms: (0..g)
                .map(|_| ActivationRom::new(p.right_act, p.table.clone()))
                .collect(),
            out: FfOutput::new(g, p.format),
        }
    }
}

impl Logic for FfUnit {
    fn update(&mut self) {
        let clock = self.clock.val();
        self.sum.clock.next = clock;
        self.out.clock.next = clock;
        self.sum.run.next = self.run.val();
        self.sum.first.next = self.first.val();
        for l in 0..self.w.len() {
            self.lanes.w[l].next = self.w[l].val();
            self.lanes.a[l].next = self.a[l].val();
            self.sum.p[l].next = self.lanes.p[l].val();
        }
        self.out.done.next = self.run.val() && self.last_sub.val();
        self.out.label.next = self.label.val();
        for q in 0..self.r.len() {
            self.sum.bias[q].next = self.bias[q].val();
            self.roms[q].h.next = self.sum.h[q].val();
            self.act[q].next = self.roms[q].a.val();
            self.sp[q].next = self.roms[q].sp.val();
            self.out.a[q].next = self.roms[q].a.val();
            self.out.r[q].next = self.r[q].val();
            self.out_delta[q].next = self.out.out_delta[q].val();
        }
        self.pred.next = self.out.pred.val();
    }
    fn connect(&mut self) {
        self.sum.clock.connect();
        self.out.clock.connect();
        self.sum.run.connect();
        self.sum.first.connect();
        for l in 0..self.w.len() {
            self.lanes.w[l].connect();
            self.lanes.a[l].connect();
            self.sum.p[l].connect();
        }
        self.out.done.connect();
        self.out.label.connect();
        for q in 0..self.r.len() {
            self.sum.bias[q].connect();
            self.roms[q].h.connect();
            self.act[q].connect();
            self.sp[q].connect();
            self.out.a[q].connect();
            self.out.r[q].connect();
            self.out_delta[q].connect();
        }
        self.pred.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n    sum$clock = clock;\n    out$clock = clock;\n    sum$run = run;\n    sum$first = first;\n");
        for l in 0..self.w.len() {
            let _ = writeln!(
                v,
                "    lanes$w${l} = w${l};\n    lanes$a${l} = a${l};\n    sum$p${l} = lanes$p${l};"
            );
        }
        v += "    out$done = run && last_sub;\n    out$label = label;\n";
        for q in 0..self.r.len() {
            let _ = writeln!(
                v,
                "    sum$bias${q} = bias${q};\n    roms${q}$h = sum$h${q};\n    act${q} = roms${q}$a;\n    sp${q} = roms${q}$sp;\n    out$a${q} = roms${q}$a;\n    out$r${q} = r${q};\n    out_delta${q} = out$out_delta${q};"
            );
        }
        v += "    pred = out$pred;\nend\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{b16, s16};
    use crate::testing::{settle, tick, yosys_check};
    use edgeflow_core::fixed::activate;
    use edgeflow_core::Spec;

    fn params() -> JunctionParams {
        let s = Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
        )
        .unwrap();
        JunctionParams::new(&s, 1) // z = 2 < fi = 4: two clocks per neuron
    }

    #[test]
    fn ff_unit_computes_one_neuron_over_two_clocks() {
        let p = params();
        let f = p.format;
        let mut u = FfUnit::new(&p);
        u.connect_all();
        u.run.next = true;
        u.label.next = b16(0);
        u.bias[0].next = b16(-30);
        u.r[0].next = b16(0);
        let (w, a) = ([100, -60, 45, 128], [128, 64, -32, 90]);
        let mut h = -30i64;
        for c in 0..2 {
            u.first.next = c == 0;
            u.last_sub.next = c == 1;
            for l in 0..2 {
                u.w[l].next = b16(w[2 * c + l]);
                u.a[l].next = b16(a[2 * c + l]);
                h += f.mul(w[2 * c + l], a[2 * c + l]) as i64;
            }
            settle(&mut u);
            if c == 1 {
                let (av, spv) = activate(p.right_act, &p.table, f.saturate(h));
                assert_eq!((s16(u.act[0].val()), s16(u.sp[0].val())), (av, spv));
                assert_eq!(
                    s16(u.out_delta[0].val()),
                    f.saturate(av as i64 - f.one() as i64)
                );
            }
            tick(&mut u, |u| &mut u.clock);
        }
    }

    #[test]
    fn ff_unit_verilog_is_clean() {
        yosys_check(&FfUnit::new(&params()), "ff_unit");
    }
}
