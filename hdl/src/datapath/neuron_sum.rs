//! Adder tree and multi-clock accumulator of FF: the `z` lane products split into groups of
//! `min(z, fi)` lanes, one group per right neuron. With `z ≥ fi` each group's adder tree
//! completes a neuron every clock (`z/fi` per clock); with `z < fi` one group accumulates a
//! neuron over `fi/z` clocks. The bias starts the sum on the neuron's first clock; the sum is
//! exact (32 bits) and saturated once, on the way out: `h` is the saturated accumulator, so a
//! neuron finished in clock `k` appears on `h` during clock `k+1` (the first FF pipeline
//! stage; the adder tree and the saturation are in different clocks).

use crate::fixed::{b16, s16, s32, sat};
use edgeflow_core::fixed::{FfProducts, Format};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

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
    _lpg: usize,
    _f: Format,
    /// Bits of a product with its sign: the format's width when products are saturated,
    /// `Format::product_bits` when they are only rounded.
    _pb: u32,
    _acc: Vec<i64>,
    /// Accumulator width in the Verilog (32 unless the neuron's term count is known).
    _w: u32,
}

impl NeuronSum {
    pub fn new(
        groups: usize,
        lanes_per_group: usize,
        f: Format,
        products: FfProducts,
    ) -> NeuronSum {
        NeuronSum {
            clock: Default::default(),
            run: Default::default(),
            first: Default::default(),
            p: crate::sigs(groups * lanes_per_group),
            bias: crate::sigs(groups),
            h: crate::sigs(groups),
            _lpg: lanes_per_group,
            _f: f,
            _pb: match products {
                FfProducts::Rounded => f.product_bits(),
                FfProducts::Saturated => f.width,
            },
            _acc: vec![0; groups],
            _w: 32,
        }
    }

    /// A neuron sums `fan_in` products of `_pb` bits and a bias, so its exact sum needs
    /// `_pb + bits(fan_in)` bits: a narrower accumulator is a shorter carry chain and the
    /// same value (one spare bit kept).
    pub fn with_fan_in(mut self, fan_in: usize) -> NeuronSum {
        let bits = usize::BITS - fan_in.leading_zeros();
        self._w = (self._pb + 1 + bits).min(32);
        self
    }

    fn sums(&self) -> Vec<i64> {
        let first = self.first.val();
        (0..self.h.len())
            .map(|q| {
                let start = if first {
                    s16(self.bias[q].val()) as i64
                } else {
                    self._acc[q]
                };
                start
                    + (q * self._lpg..(q + 1) * self._lpg)
                        .map(|l| s32(self.p[l].val()))
                        .sum::<i64>()
            })
            .collect()
    }
}

impl Logic for NeuronSum {
    fn update(&mut self) {
        let f = self._f;
        if self.clock.pos_edge() {
            if self.run.val() {
                self._acc = self.sums();
            }
        }
        for q in 0..self.h.len() {
            self.h[q].next = b16(sat(f, self._acc[q]));
        }
    }
    fn connect(&mut self) {
        for x in self.h.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let g = self.h.len();
        let mut v = crate::fixed::verilog_functions(self._f, 0);
        let w = self._w;
        let (max, neg) = (self._f.max(), -(self._f.min() as i64));
        // In range exactly when the bits from the format's sign bit up are all equal: a
        // reduction, not the carry chains of two comparisons.
        let top = self._f.width - 1;
        let _ = writeln!(
            v,
            "function signed [15:0] sat_acc;\n    input signed [{wm}:0] x;\n    reg signed [{top}:0] y;\n    begin\n        if ((&x[{wm}:{top}]) || !(|x[{wm}:{top}])) y = x[{top}:0];\n        else if (x[{wm}]) y = -{neg};\n        else y = {max};\n        sat_acc = y;\n    end\nendfunction",
            wm = w - 1
        );
        let _ = writeln!(
            v,
            "function signed [31:0] sxp;\n    input signed [{}:0] x;\n    sxp = x;\nendfunction",
            self._pb - 1
        );
        for q in 0..g {
            let _ = writeln!(
                v,
                "reg signed [{wm}:0] acc_{q};\nreg signed [{wm}:0] sum_{q};",
                wm = w - 1
            );
        }
        v += "initial begin\n";
        for q in 0..g {
            let _ = writeln!(v, "    acc_{q} = {w}'sd0;");
        }
        v += "end\nalways @(*) begin\n";
        for q in 0..g {
            let _ = write!(v, "    sum_{q} = (first ? sx(bias${q}) : acc_{q})");
            for l in q * self._lpg..(q + 1) * self._lpg {
                let _ = write!(v, " + sxp(p${l})");
            }
            let _ = writeln!(v, ";\n    h${q} = sat_acc(acc_{q});");
        }
        v += "end\nalways @(posedge clock) begin\n    if (run) begin\n";
        for q in 0..g {
            let _ = writeln!(v, "        acc_{q} <= sum_{q};");
        }
        v += "    end\nend\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::b32;
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
