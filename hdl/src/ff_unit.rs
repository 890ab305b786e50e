//! The FF unit of a junction: lanes (`w·a`), adder tree / accumulator with the bias, the
//! activation ROM of each finished neuron, and the output stage (output delta, prediction).
//! A composite of the blocks in lanes.rs, neuron_sum.rs, act_rom.rs, ff_pipe.rs and
//! ff_output.rs. Three pipeline stages: products and sums in the clock of the edges; the
//! saturation and the ROM's table lookup one clock later (registered read); the ROM's
//! mirror, `act`, `sp`, `out_delta`, `done` and `r_out` (the neuron's row) two clocks later,
//! when the junction writes them (`FF_LATENCY`). With registered products the lanes hold
//! their products for a clock, the control, biases and rows of that clock wait beside them
//! in `ffd`, and everything above happens one clock later (`FF_LATENCY + 1`).

use crate::act_rom::ActivationRom;
use crate::ff_output::FfOutput;
use crate::ff_pipe::FfPipe;
use crate::lanes::Lanes;
use crate::neuron_sum::NeuronSum;
use crate::params::JunctionParams;
use crate::pipe_regs::PipeRegs;
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
    /// The neurons on `act`, `sp`, `out_delta` are finished (a write this clock).
    pub done: Signal<Out, Bit>,
    /// Their rows (`r` two clocks earlier).
    pub r_out: Vec<Signal<Out, Bits<16>>>,
    pub lanes: Lanes,
    pub sum: NeuronSum,
    pub roms: Vec<ActivationRom>,
    pub pipe: FfPipe,
    pub out: FfOutput,
    /// With registered products: run, first, done, then per group the bias and the row,
    /// delayed a clock to meet the registered products. Empty otherwise.
    pub ffd: PipeRegs,
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
            done: Default::default(),
            r_out: crate::sigs(g),
            lanes: Lanes::new(z, p.format, p.ff_products)
                .with_registered(p.deep_pipeline)
                .with_selects(p.input_selects),
            // the deep pipeline's register between the saturated sum and the lookup sits in
            // the ROM, after the index's mirror
            sum: NeuronSum::new(g, p.lanes_per_group, p.format, p.ff_products)
                .with_fan_in(p.fan_in),
            roms: (0..g)
                .map(|_| {
                    ActivationRom::new(p.right_act, p.table.clone())
                        .with_registered_input(p.deep_pipeline)
                })
                .collect(),
            pipe: FfPipe::new(g).with_depth(2 + p.deep_pipeline as usize),
            out: FfOutput::new(g, p.format)
                .with_registered_compare(p.pred_slack)
                .with_output_delta_ends(p.output_delta_ends),
            ffd: if p.deep_pipeline {
                PipeRegs::new(3, 2 * g)
            } else {
                PipeRegs::new(0, 0)
            },
        }
    }
}

impl Logic for FfUnit {
    fn update(&mut self) {
        let clock = self.clock.val();
        self.sum.clock.next = clock;
        self.pipe.clock.next = clock;
        self.out.clock.next = clock;
        for rom in self.roms.iter_mut() {
            rom.clock.next = clock;
        }
        self.lanes.clock.next = clock;
        self.ffd.clock.next = clock;
        let g = self.r.len();
        let (mut bits, mut words) = (
            vec![
                self.run.val(),
                self.first.val(),
                self.run.val() && self.last_sub.val(),
            ],
            (0..g)
                .map(|q| self.bias[q].val())
                .chain((0..g).map(|q| self.r[q].val()))
                .collect::<Vec<_>>(),
        );
        if !self.ffd.bit.is_empty() {
            for (i, &b) in bits.iter().enumerate() {
                self.ffd.bit_in[i].next = b;
            }
            for (i, &w) in words.iter().enumerate() {
                self.ffd.word_in[i].next = w;
            }
            bits = self.ffd.bit.iter().map(|x| x.val()).collect();
            words = self.ffd.word.iter().map(|x| x.val()).collect();
        }
        self.sum.run.next = bits[0];
        self.sum.first.next = bits[1];
        for l in 0..self.w.len() {
            self.lanes.w[l].next = self.w[l].val();
            self.lanes.a[l].next = self.a[l].val();
            self.sum.p[l].next = self.lanes.p[l].val();
        }
        self.pipe.done_in.next = bits[2];
        self.out.done.next = self.pipe.done.val();
        self.done.next = self.pipe.done.val();
        self.out.label.next = self.label.val();
        for q in 0..self.r.len() {
            self.sum.bias[q].next = words[q];
            self.roms[q].h.next = self.sum.h[q].val();
            self.pipe.r_in[q].next = words[g + q];
            self.act[q].next = self.roms[q].a.val();
            self.sp[q].next = self.roms[q].sp.val();
            self.r_out[q].next = self.pipe.r[q].val();
            self.out.a[q].next = self.roms[q].a.val();
            self.out.r[q].next = self.pipe.r[q].val();
            self.out_delta[q].next = self.out.out_delta[q].val();
        }
        self.pred.next = self.out.pred.val();
    }
    fn connect(&mut self) {
        self.lanes.clock.connect();
        self.ffd.clock.connect();
        for x in self.ffd.bit_in.iter_mut() {
            x.connect();
        }
        for x in self.ffd.word_in.iter_mut() {
            x.connect();
        }
        self.sum.clock.connect();
        self.pipe.clock.connect();
        self.out.clock.connect();
        for rom in self.roms.iter_mut() {
            rom.clock.connect();
        }
        self.sum.run.connect();
        self.sum.first.connect();
        for l in 0..self.w.len() {
            self.lanes.w[l].connect();
            self.lanes.a[l].connect();
            self.sum.p[l].connect();
        }
        self.pipe.done_in.connect();
        self.out.done.connect();
        self.done.connect();
        self.out.label.connect();
        for q in 0..self.r.len() {
            self.sum.bias[q].connect();
            self.roms[q].h.connect();
            self.pipe.r_in[q].connect();
            self.act[q].connect();
            self.sp[q].connect();
            self.r_out[q].connect();
            self.out.a[q].connect();
            self.out.r[q].connect();
            self.out_delta[q].connect();
        }
        self.pred.connect();
    }
    fn hdl(&self) -> Verilog {
        let rp = !self.ffd.bit.is_empty();
        let g = self.r.len();
        // with registered products the sum takes the control, biases and rows through `ffd`
        let (run, first, done) = if rp {
            ("ffd$bit$0", "ffd$bit$1", "ffd$bit$2")
        } else {
            ("run", "first", "run && last_sub")
        };
        let bias = |q: usize| {
            if rp {
                format!("ffd$word${q}")
            } else {
                format!("bias${q}")
            }
        };
        let row = |q: usize| {
            if rp {
                format!("ffd$word${}", g + q)
            } else {
                format!("r${q}")
            }
        };
        let mut v = format!("always @(*) begin\n    sum$clock = clock;\n    pipe$clock = clock;\n    out$clock = clock;\n    lanes$clock = clock;\n    ffd$clock = clock;\n    sum$run = {run};\n    sum$first = {first};\n");
        if rp {
            let _ = writeln!(
                v,
                "    ffd$bit_in$0 = run;\n    ffd$bit_in$1 = first;\n    ffd$bit_in$2 = run && last_sub;"
            );
            for q in 0..g {
                let _ = writeln!(
                    v,
                    "    ffd$word_in${q} = bias${q};\n    ffd$word_in${} = r${q};",
                    g + q
                );
            }
        }
        for l in 0..self.w.len() {
            let _ = writeln!(
                v,
                "    lanes$w${l} = w${l};\n    lanes$a${l} = a${l};\n    sum$p${l} = lanes$p${l};"
            );
        }
        let _ = writeln!(
            v,
            "    pipe$done_in = {done};\n    out$done = pipe$done;\n    done = pipe$done;\n    out$label = label;"
        );
        for q in 0..self.r.len() {
            let _ = writeln!(
                v,
                "    sum$bias${q} = {};\n    roms${q}$h = sum$h${q};\n    roms${q}$clock = clock;\n    pipe$r_in${q} = {};\n    act${q} = roms${q}$a;\n    sp${q} = roms${q}$sp;\n    r_out${q} = pipe$r${q};\n    out$a${q} = roms${q}$a;\n    out$r${q} = pipe$r${q};\n    out_delta${q} = out$out_delta${q};",
                bias(q),
                row(q)
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
    use edgeflow_core::fixed::{activate, output_delta};
    use edgeflow_core::Spec;

    fn params() -> JunctionParams {
        let s = Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
        )
        .unwrap();
        JunctionParams::new(&s, 1) // z = 2 < fi = 4: two clocks per neuron
    }

    #[test]
    fn ff_unit_computes_one_neuron_over_two_clocks_and_delivers_it_two_later() {
        one_neuron_over_two_clocks(false);
    }

    #[test]
    fn with_the_deep_pipeline_the_neuron_arrives_two_clocks_later() {
        one_neuron_over_two_clocks(true);
    }

    fn one_neuron_over_two_clocks(deep_pipeline: bool) {
        let mut p = params();
        p.deep_pipeline = deep_pipeline;
        let latency = crate::params::FF_LATENCY + 2 * deep_pipeline as usize;
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
            assert!(!u.done.val());
            tick(&mut u, |u| &mut u.clock);
        }
        // the neuron's last clock was c = 1: its results come FF_LATENCY clocks later
        u.run.next = false;
        for c in 0..latency {
            settle(&mut u);
            assert_eq!(u.done.val(), c + 1 == latency, "clock {c}");
            if c + 1 < latency {
                tick(&mut u, |u| &mut u.clock);
            }
        }
        let (av, spv) = activate(p.right_act, &p.table, f.saturate(h));
        assert_eq!((s16(u.act[0].val()), s16(u.sp[0].val())), (av, spv));
        assert_eq!(u.r_out[0].val().index(), 0);
        assert_eq!(
            s16(u.out_delta[0].val()),
            output_delta(f, p.output_delta_ends, av, true)
        );
    }

    #[test]
    fn ff_unit_verilog_is_clean() {
        yosys_check(&FfUnit::new(&params()), "ff_unit");
        let mut p = params();
        p.deep_pipeline = true;
        yosys_check(&FfUnit::new(&p), "ff_unit_deep_pipeline");
    }
}
