//! The BP unit: each group's right delta (the output layer's `sat(a − y)` as stored, or a
//! hidden layer's `σ′ · sat(Σ w·δ)` — a multiply for sigmoid, a gate for ReLU), and each
//! lane's contribution `w_e · δ` to its left neuron's delta sum. The junction registers the
//! deltas (and the weights, activations and addresses they go with) for one clock, so the
//! contribution takes the registered delta `dq` with the weight of the same clock: the delta
//! and the contribution / UP update are in consecutive pipeline stages.
//!
//! With registered products (`with_registered`) the deltas and the contributions are held
//! for a clock in the unit (a sigmoid delta and every contribution in the Verilog as the raw
//! product, before the rounding shift and saturation: the MAC16's output register), and the
//! junction feeds `dq` from `delta` itself instead of its own register.

use crate::fixed::{b16, b32, mul, s16, s32, sat};
use edgeflow_core::fixed::{hidden_delta, Activation, Format};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct BpUnit {
    pub clock: Signal<In, Clock>,
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
    /// With registered products: the registered deltas and contributions.
    _reg: Option<Box<(Vec<i32>, Vec<i32>)>>,
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
            clock: Default::default(),
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
            _reg: None,
        }
    }

    pub fn with_registered(mut self, registered: bool) -> BpUnit {
        self._reg =
            registered.then(|| Box::new((vec![0; self.delta.len()], vec![0; self.contrib.len()])));
        self
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
        let c: Vec<i32> = (0..self.w.len())
            .map(|l| {
                let dq = s16(self.dq[l / self._lpg].val());
                mul(f, s16(self.w[l].val()), dq)
            })
            .collect();
        let (d, c) = match &mut self._reg {
            None => (d, c),
            Some(r) => {
                if self.clock.pos_edge() {
                    **r = (d, c);
                }
                (r.0.clone(), r.1.clone())
            }
        };
        for q in 0..d.len() {
            self.delta[q].next = b16(d[q]);
        }
        for l in 0..c.len() {
            self.contrib[l].next = b32(c[l] as i64);
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
        if self._reg.is_some() {
            return self.registered_hdl(v);
        }
        v += "always @(*) begin\n";
        for q in 0..self.delta.len() {
            let e = if self._output_layer {
                format!("sat32(acc${q})")
            } else {
                if self._act.is_table() {
                    format!("mul_rs(sp${q}, sat32(acc${q}))")
                } else {
                    format!("(sp${q} != 16'd0) ? sat32(acc${q}) : 16'sd0")
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

impl BpUnit {
    /// The Verilog with registered products: a sigmoid delta's and every contribution's raw
    /// product in a register (`mul_raw`, packed into the MAC16), `sat_rs` after it; a delta
    /// without a multiply is registered as it is.
    fn registered_hdl(&self, mut v: String) -> Verilog {
        for q in 0..self.delta.len() {
            let raw = !self._output_layer && self._act.is_table();
            let (width, next) = if raw {
                (32, format!("mul_raw(sp${q}, sat32(acc${q}))"))
            } else if self._output_layer {
                (16, format!("sat32(acc${q})"))
            } else {
                (16, format!("(sp${q} != 16'd0) ? sat32(acc${q}) : 16'sd0"))
            };
            let _ = writeln!(
                v,
                "reg signed [{}:0] dr_{q};\ninitial dr_{q} = 0;\nalways @(posedge clock) dr_{q} <= {next};",
                width - 1
            );
        }
        for l in 0..self.w.len() {
            let _ = writeln!(
                v,
                "reg signed [31:0] cr_{l};\ninitial cr_{l} = 0;\nalways @(posedge clock) cr_{l} <= mul_raw(w${l}, dq${});",
                l / self._lpg
            );
        }
        v += "always @(*) begin\n";
        for q in 0..self.delta.len() {
            let raw = !self._output_layer && self._act.is_table();
            let e = if raw {
                format!("sat_rs(dr_{q})")
            } else {
                format!("dr_{q}")
            };
            let _ = writeln!(v, "    delta${q} = {e};");
        }
        for l in 0..self.w.len() {
            let _ = writeln!(v, "    contrib${l} = sat_rs(cr_{l});");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};

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
    fn registered_deltas_and_contributions_are_the_previous_clocks() {
        let f = Format::new(3, 12);
        for (act, out) in [
            (Activation::Sigmoid, false),
            (Activation::Relu, false),
            (Activation::Sigmoid, true),
        ] {
            let mut u = BpUnit::new(2, 1, 2, f, act, out).with_registered(true);
            u.connect_all();
            let mut r = edgeflow_core::rng::SplitMix64::new(5);
            let mut prev: Option<(i32, Vec<i64>)> = None;
            for _ in 0..300 {
                let acc = r.below(1 << 20) as i64 - (1 << 19);
                let sp = r.below(5000) as i32 * r.below(2) as i32;
                let w: Vec<i32> = (0..2).map(|_| f.min() + r.below(65536) as i32).collect();
                let dq = f.min() + r.below(65536) as i32;
                u.acc[0].next = b32(acc);
                u.sp[0].next = b16(sp);
                u.dq[0].next = b16(dq);
                for l in 0..2 {
                    u.w[l].next = b16(w[l]);
                }
                settle(&mut u);
                if let Some((d, c)) = &prev {
                    assert_eq!(s16(u.delta[0].val()), *d);
                    for l in 0..2 {
                        assert_eq!(s32(u.contrib[l].val()), c[l]);
                    }
                }
                let d = if out {
                    f.saturate(acc)
                } else {
                    hidden_delta(act, f, sp, f.saturate(acc))
                };
                prev = Some((d, w.iter().map(|&x| f.mul(x, dq) as i64).collect()));
                tick(&mut u, |x| &mut x.clock);
            }
        }
    }

    #[test]
    fn bp_unit_verilog_is_clean() {
        for (act, out) in [
            (Activation::Sigmoid, false),
            (Activation::Relu, false),
            (Activation::Sigmoid, true),
        ] {
            yosys_check(
                &BpUnit::new(2, 1, 2, Format::new(3, 12), act, out).with_registered(true),
                &format!("bp_unit_registered_{act:?}_{out}"),
            );
        }
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
