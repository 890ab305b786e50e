//! The BP unit: each group's right delta (the output layer's `sat(a − y)` as stored, or a
//! hidden layer's `σ′ · sat(Σ w·δ)` — a multiply for sigmoid, a gate for ReLU), and each
//! lane's contribution `w_e · δ` to its left neuron's delta sum. The junction registers the
//! deltas (and the weights, activations and addresses they go with) for one clock, so the
//! contribution takes the registered delta `dq` with the weight of the same clock: the delta
//! and the contribution / UP update are in consecutive pipeline stages.

use crate::fixed::{b16, b32, mul, s16, s32, sat};
use edgeflow_core::fixed::{hidden_delta, Activation, Format};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct BpUnit {
    pub w: Vec<Signal<In, Bits<16>>>,
    /// Right layer: stored output delta (sign-extended) or the hidden delta sum.
    pub acc: Vec<Signal<In, Bits<32>>>,
    pub sp: Vec<Signal<In, Bits<16>>>,
    /// The deltas of the previous clock (registered `delta`), for the contributions.
    pub dq: Vec<Signal<In, Bits<16>>>,
    pub delta: Vec<Signal<Out, Bits<16>>>,
    pub contrib: Vec<Signal<Out, Bits<32>>>,
    _f: Format,
    _act: Activation,
    _output_layer: bool,
    _lpg: usize,
}

impl BpUnit {
    pub fn new(
        z: usize,
        groups: usize,
        lanes_per_group: usize,
        f: Format,
        right_act: Activation,
        output_layer: bool,
    ) -> BpUnit {
        BpUnit {
            w: crate::sigs(z),
            acc: crate::sigs(groups),
            sp: crate::sigs(groups),
            dq: crate::sigs(groups),
            delta: crate::sigs(groups),
            contrib: crate::sigs(z),
            _f: f,
            _act: right_act,
            _output_layer: output_layer,
            _lpg: lanes_per_group,
        }
    }
}

impl Logic for BpUnit {
    fn update(&mut self) {
        let f = self._f;
        let d: Vec<i32> = (0..self.delta.len())
            .map(|q| {
                let s = sat(f, s32(self.acc[q].val()));
                if self._output_layer {
                    s
                } else {
                    hidden_delta(self._act, f, s16(self.sp[q].val()), s)
                }
            })
            .collect();
        for q in 0..d.len() {
            self.delta[q].next = b16(d[q]);
        }
        for l in 0..self.w.len() {
            let dq = s16(self.dq[l / self._lpg].val());
            self.contrib[l].next = b32(mul(f, s16(self.w[l].val()), dq) as i64);
        }
    }
    fn connect(&mut self) {
        for x in self.delta.iter_mut() {
            x.connect();
        }
        for x in self.contrib.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let mut v = crate::fixed::verilog_functions(self._f, 0);
        v += "always @(*) begin\n";
        for q in 0..self.delta.len() {
            let e = if self._output_layer {
                format!("sat32(acc${q})")
            } else {
                match self._act {
                    Activation::Sigmoid => format!("mul_rs(sp${q}, sat32(acc${q}))"),
                    Activation::Relu => format!("(sp${q} != 16'd0) ? sat32(acc${q}) : 16'sd0"),
                }
            };
            let _ = writeln!(v, "    delta${q} = {e};");
        }
        for l in 0..self.w.len() {
            let _ = writeln!(v, "    contrib${l} = mul_rs(w${l}, dq${});", l / self._lpg);
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, yosys_check};

    #[test]
    fn deltas_and_contributions_follow_the_contract() {
        let f = Format::new(2, 7);
        for (act, out) in [
            (Activation::Sigmoid, false),
            (Activation::Relu, false),
            (Activation::Sigmoid, true),
        ] {
            let mut u = BpUnit::new(4, 2, 2, f, act, out);
            u.connect_all();
            let mut r = edgeflow_core::rng::SplitMix64::new(2);
            for _ in 0..300 {
                let acc: Vec<i64> = (0..2).map(|_| r.below(4000) as i64 - 2000).collect();
                let sp: Vec<i32> = (0..2)
                    .map(|_| r.below(40) as i32 * (r.below(2) as i32))
                    .collect();
                let w: Vec<i32> = (0..4).map(|_| f.min() + r.below(1024) as i32).collect();
                let dq: Vec<i32> = (0..2).map(|_| f.min() + r.below(1024) as i32).collect();
                for q in 0..2 {
                    u.acc[q].next = b32(acc[q]);
                    u.sp[q].next = b16(sp[q]);
                    u.dq[q].next = b16(dq[q]);
                }
                for l in 0..4 {
                    u.w[l].next = b16(w[l]);
                }
                settle(&mut u);
                for q in 0..2 {
                    let want = if out {
                        f.saturate(acc[q])
                    } else {
                        hidden_delta(act, f, sp[q], f.saturate(acc[q]))
                    };
                    assert_eq!(s16(u.delta[q].val()), want);
                }
                for l in 0..4 {
                    assert_eq!(s32(u.contrib[l].val()), f.mul(w[l], dq[l / 2]) as i64);
                }
            }
        }
    }

    #[test]
    fn bp_unit_verilog_is_clean() {
        yosys_check(
            &BpUnit::new(2, 1, 2, Format::new(2, 7), Activation::Sigmoid, false),
            "bp_unit_sigmoid",
        );
        yosys_check(
            &BpUnit::new(2, 2, 1, Format::new(2, 7), Activation::Relu, false),
            "bp_unit_relu",
        );
    }
}
