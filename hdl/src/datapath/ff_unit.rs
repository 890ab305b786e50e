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
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use rust_hdl::core::prelude::*;

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
                .map(|_| ActivationRom::new(p.table.clone()).with_registered_input(p.deep_pipeline))
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
        let shape = (!self.ffd.bit.is_empty(), self.w.len(), self.r.len());
        Self::wire(shape, &mut Sim(self));
    }

    fn connect(&mut self) {
        let shape = (!self.ffd.bit.is_empty(), self.w.len(), self.r.len());
        Self::wire(shape, &mut Connect(self));
    }

    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(
            (!self.ffd.bit.is_empty(), self.w.len(), self.r.len()),
            &mut t,
        );
        t.verilog("")
    }
}

impl FfUnit {
    /// The unit's connections (with registered products `rp`, `z` lanes, `g` groups): the
    /// simulation, `connect()` and the Verilog.
    fn wire<W: Wires<Self>>((rp, z, g): (bool, usize, usize), w: &mut W) {
        let clock = at!(w, clock);
        w.set(to!(sum.clock), clock.clone());
        w.set(to!(pipe.clock), clock.clone());
        w.set(to!(out.clock), clock.clone());
        w.set(to!(lanes.clock), clock.clone());
        w.set(to!(ffd.clock), clock.clone());
        let (run, first) = (at!(w, run), at!(w, first));
        let done = w.and(&run, &at!(w, last_sub));
        // with registered products the sum takes the control, biases and rows through `ffd`
        let (s_run, s_first, s_done, bias, row): (_, _, _, Vec<_>, Vec<_>) = if rp {
            (
                at!(w, ffd.bit[0]),
                at!(w, ffd.bit[1]),
                at!(w, ffd.bit[2]),
                (0..g).map(|q| at!(w, ffd.word[q])).collect(),
                (0..g).map(|q| at!(w, ffd.word[g + q])).collect(),
            )
        } else {
            (
                run.clone(),
                first.clone(),
                done.clone(),
                (0..g).map(|q| at!(w, bias[q])).collect(),
                (0..g).map(|q| at!(w, r[q])).collect(),
            )
        };
        w.set(to!(sum.run), s_run);
        w.set(to!(sum.first), s_first);
        if rp {
            w.set(to!(ffd.bit_in[0]), run);
            w.set(to!(ffd.bit_in[1]), first);
            w.set(to!(ffd.bit_in[2]), done);
            for q in 0..g {
                w.set(to!(ffd.word_in[q]), at!(w, bias[q]));
                w.set(to!(ffd.word_in[g + q]), at!(w, r[q]));
            }
        }
        for l in 0..z {
            w.set(to!(lanes.w[l]), at!(w, w[l]));
            w.set(to!(lanes.a[l]), at!(w, a[l]));
            w.set(to!(sum.p[l]), at!(w, lanes.p[l]));
        }
        w.set(to!(pipe.done_in), s_done);
        w.set(to!(out.done), at!(w, pipe.done));
        w.set(to!(done), at!(w, pipe.done));
        w.set(to!(out.label), at!(w, label));
        for q in 0..g {
            w.set(to!(sum.bias[q]), bias[q].clone());
            w.set(to!(roms[q].h), at!(w, sum.h[q]));
            w.set(to!(roms[q].clock), clock.clone());
            w.set(to!(pipe.r_in[q]), row[q].clone());
            w.set(to!(act[q]), at!(w, roms[q].a));
            w.set(to!(sp[q]), at!(w, roms[q].sp));
            w.set(to!(r_out[q]), at!(w, pipe.r[q]));
            w.set(to!(out.a[q]), at!(w, roms[q].a));
            w.set(to!(out.r[q]), at!(w, pipe.r[q]));
            w.set(to!(out_delta[q]), at!(w, out.out_delta[q]));
        }
        w.set(to!(pred), at!(w, out.pred));
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
        let (av, spv) = activate(&p.table, f.saturate(h));
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
