//! Adder tree and multi-clock accumulator of FF: the `z` lane products split into groups of
//! `min(z, fi)` lanes, one group per right neuron. With `z ≥ fi` each group's adder tree
//! completes a neuron every clock (`z/fi` per clock); with `z < fi` one group accumulates a
//! neuron over `fi/z` clocks. The bias starts the sum on the neuron's first clock; the sum is
//! exact (32 bits) and saturated once, on the way out: `h` is the saturated accumulator, so a
//! neuron finished in clock `k` appears on `h` during clock `k+1` (the first FF pipeline
//! stage; the adder tree and the saturation are in different clocks).

use crate::fixed::NeuronAccumulator;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::fixed::{FfProducts, Format};
use rust_hdl::core::prelude::*;

#[derive(LogicBlock)]
pub struct NeuronSum {
    pub clock: Signal<In, Clock>,
    /// The clock's products count (FF active).
    pub run: Signal<In, Bit>,
    /// First clock of the group's neuron: start from the bias.
    pub first: Signal<In, Bit>,
    /// The lanes' products, sign-extended (`Lanes::p`).
    pub p: Vec<Signal<In, Bits<32>>>,
    pub bias: Vec<Signal<In, Bits<16>>>,
    /// Saturated accumulator of each group: the pre-activation of the neuron whose last
    /// clock was the previous one.
    pub h: Vec<Signal<Out, Bits<16>>>,
    /// One accumulator per group.
    pub groups: Vec<NeuronAccumulator>,
    _f: Format,
    /// Bits of a product with its sign: the format's width when products are saturated,
    /// `Format::product_bits` when they are only rounded.
    _pb: u32,
}

impl NeuronSum {
    pub fn new(
        groups: usize,
        lanes_per_group: usize,
        f: Format,
        products: FfProducts,
    ) -> NeuronSum {
        let pb = match products {
            FfProducts::Rounded => f.product_bits(),
            FfProducts::Saturated => f.width,
        };
        NeuronSum {
            clock: Default::default(),
            run: Default::default(),
            first: Default::default(),
            p: crate::sigs(groups * lanes_per_group),
            bias: crate::sigs(groups),
            h: crate::sigs(groups),
            groups: (0..groups)
                .map(|_| NeuronAccumulator::new(lanes_per_group, f, pb, 32))
                .collect(),
            _f: f,
            _pb: pb,
        }
    }

    /// A neuron sums `fan_in` products of `_pb` bits and a bias, so its exact sum needs
    /// `_pb + bits(fan_in)` bits: a narrower accumulator is a shorter carry chain and the
    /// same value (one spare bit kept).
    pub fn with_fan_in(mut self, fan_in: usize) -> NeuronSum {
        let bits = usize::BITS - fan_in.leading_zeros();
        let w = (self._pb + 1 + bits).min(32);
        let lanes = self.p.len() / self.groups.len();
        self.groups = (0..self.groups.len())
            .map(|_| NeuronAccumulator::new(lanes, self._f, self._pb, w))
            .collect();
        self
    }

    fn wire<W: Wires<Self>>(groups: usize, lanes: usize, w: &mut W) {
        for q in 0..groups {
            w.set(to!(groups[q].clock), at!(w, clock));
            w.set(to!(groups[q].run), at!(w, run));
            w.set(to!(groups[q].first), at!(w, first));
            w.set(to!(groups[q].bias), at!(w, bias[q]));
            for l in 0..lanes {
                w.set(to!(groups[q].p[l]), at!(w, p[q * lanes + l]));
            }
            w.set(to!(h[q]), at!(w, groups[q].h));
        }
    }
}

impl Logic for NeuronSum {
    fn update(&mut self) {
        let g = self.groups.len();
        Self::wire(g, self.p.len() / g, &mut Sim(self));
    }
    fn connect(&mut self) {
        let g = self.groups.len();
        Self::wire(g, self.p.len() / g, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let g = self.groups.len();
        let mut t = Text::default();
        Self::wire(g, self.p.len() / g, &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{b16, b32, s16, sat};
    use crate::testing::{settle, tick, yosys_check};

    #[test]
    fn adder_tree_and_accumulator_saturate_once_a_clock_later() {
        let f = Format::new(2, 7);
        // z ≥ fi: two neurons of 2 lanes per clock
        let mut t = NeuronSum::new(2, 2, f, FfProducts::Saturated).with_fan_in(2);
        t.connect_all();
        t.run.next = true;
        t.first.next = true;
        for (l, v) in [300, 300, -5, 7].iter().enumerate() {
            t.p[l].next = b32(*v as i64);
        }
        t.bias[0].next = b16(-200);
        t.bias[1].next = b16(3);
        tick(&mut t, |t| &mut t.clock);
        t.run.next = false;
        settle(&mut t);
        assert_eq!((s16(t.h[0].val()), s16(t.h[1].val())), (400, 5));
        // z < fi: one neuron over 3 clocks; the exact sum only saturates at the end
        let mut a = NeuronSum::new(1, 2, f, FfProducts::Saturated).with_fan_in(6);
        a.connect_all();
        a.run.next = true;
        a.bias[0].next = b16(100);
        let parts = [[500, 500], [-400, -400], [-90, 5]];
        for (c, pp) in parts.iter().enumerate() {
            a.first.next = c == 0;
            a.p[0].next = b32(pp[0] as i64);
            a.p[1].next = b32(pp[1] as i64);
            tick(&mut a, |a| &mut a.clock);
        }
        // a clock without products keeps the finished sum
        a.run.next = false;
        a.p[0].next = b32(7);
        tick(&mut a, |a| &mut a.clock);
        assert_eq!(s16(a.h[0].val()), sat(f, 100 + 1000 - 800 - 85));
    }

    #[test]
    fn neuron_sum_verilog_is_clean() {
        yosys_check(
            &NeuronSum::new(2, 3, Format::new(2, 7), FfProducts::Rounded).with_fan_in(3),
            "neuron_sum",
        );
    }
}
