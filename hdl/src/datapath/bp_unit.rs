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

//!
//! Each is a format-width leaf of `fixed`, wired here once: a `RightDelta` per group and a
//! `LaneProduct` (rounded and saturated) per lane.

use crate::fixed::{LaneProduct, RightDelta};
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::fixed::{Activation, FfProducts, Format};
use rust_hdl::core::prelude::*;

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
    /// Per group: its right delta.
    pub right: Vec<RightDelta>,
    /// Per lane: its contribution `w · dq`.
    pub product: Vec<LaneProduct>,
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
            clock: Default::default(),
            w: crate::sigs(z),
            acc: crate::sigs(groups),
            sp: crate::sigs(groups),
            dq: crate::sigs(groups),
            delta: crate::sigs(groups),
            contrib: crate::sigs(z),
            right: (0..groups)
                .map(|_| RightDelta::new(f, right_act, output_layer))
                .collect(),
            product: (0..z)
                .map(|_| LaneProduct::new(f, FfProducts::Saturated))
                .collect(),
            _lpg: lanes_per_group,
        }
    }

    pub fn with_registered(mut self, registered: bool) -> BpUnit {
        self.right = self
            .right
            .into_iter()
            .map(|r| r.with_registered(registered))
            .collect();
        self.product = self
            .product
            .into_iter()
            .map(|p| p.with_registered(registered))
            .collect();
        self
    }

    fn wire<W: Wires<Self>>(groups: usize, z: usize, lpg: usize, w: &mut W) {
        let clock = at!(w, clock);
        for q in 0..groups {
            w.set(to!(right[q].clock), clock.clone());
            w.set(to!(right[q].acc), at!(w, acc[q]));
            w.set(to!(right[q].sp), at!(w, sp[q]));
            w.set(to!(delta[q]), at!(w, right[q].delta));
        }
        for l in 0..z {
            w.set(to!(product[l].clock), clock.clone());
            w.set(to!(product[l].w), at!(w, w[l]));
            w.set(to!(product[l].a), at!(w, dq[l / lpg]));
            w.set(to!(contrib[l]), at!(w, product[l].p));
        }
    }
}

impl Logic for BpUnit {
    fn update(&mut self) {
        let (g, z, lpg) = (self.right.len(), self.product.len(), self._lpg);
        Self::wire(g, z, lpg, &mut Sim(self));
    }
    fn connect(&mut self) {
        let (g, z, lpg) = (self.right.len(), self.product.len(), self._lpg);
        Self::wire(g, z, lpg, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(self.right.len(), self.product.len(), self._lpg, &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{b16, b32, s16, s32};
    use crate::testing::{settle, tick, yosys_check};
    use edgeflow_core::fixed::hidden_delta;

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
