//! The lanes: `z` FF products side by side, one per edge of the clock (`w_e · a_k`), each a
//! [`LaneProduct`]: the contract's product (`Format::ff_product`), registered with registered
//! products (`with_registered`), a select with one-bit inputs (`with_selects`).

use crate::fixed::LaneProduct;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::fixed::{FfProducts, Format};
use rust_hdl::core::prelude::*;

#[derive(LogicBlock)]
pub struct Lanes {
    pub clock: Signal<In, Clock>,
    pub w: Vec<Signal<In, Bits<16>>>,
    pub a: Vec<Signal<In, Bits<16>>>,
    /// Each lane's product, sign-extended.
    pub p: Vec<Signal<Out, Bits<32>>>,
    pub lane: Vec<LaneProduct>,
}

impl Lanes {
    pub fn new(z: usize, f: Format, products: FfProducts) -> Lanes {
        Lanes {
            clock: Default::default(),
            w: crate::sigs(z),
            a: crate::sigs(z),
            p: crate::sigs(z),
            lane: (0..z).map(|_| LaneProduct::new(f, products)).collect(),
        }
    }

    /// Selects in place of multipliers (see [`LaneProduct::with_select`]).
    pub fn with_selects(mut self, select: bool) -> Lanes {
        self.lane = self
            .lane
            .into_iter()
            .map(|l| l.with_select(select))
            .collect();
        self
    }

    pub fn with_registered(mut self, registered: bool) -> Lanes {
        self.lane = self
            .lane
            .into_iter()
            .map(|l| l.with_registered(registered))
            .collect();
        self
    }

    /// Each lane's operands in, its product out.
    fn wire<W: Wires<Self>>(z: usize, w: &mut W) {
        let clock = at!(w, clock);
        for l in 0..z {
            w.set(to!(lane[l].clock), clock.clone());
            w.set(to!(lane[l].w), at!(w, w[l]));
            w.set(to!(lane[l].a), at!(w, a[l]));
            w.set(to!(p[l]), at!(w, lane[l].p));
        }
    }
}

impl Logic for Lanes {
    fn update(&mut self) {
        let z = self.lane.len();
        Self::wire(z, &mut Sim(self));
    }
    fn connect(&mut self) {
        let z = self.lane.len();
        Self::wire(z, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(self.lane.len(), &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{b16, s32};
    use crate::testing::{settle, tick, yosys_check};

    #[test]
    fn every_lane_multiplies_rounds_and_saturates() {
        let f = Format::new(2, 7);
        let mut lanes = Lanes::new(4, f, FfProducts::Saturated);
        lanes.connect_all();
        let mut r = edgeflow_core::rng::SplitMix64::new(1);
        for _ in 0..500 {
            let v: Vec<(i32, i32)> = (0..4)
                .map(|_| {
                    (
                        f.min() + r.below(1024) as i32,
                        f.min() + r.below(1024) as i32,
                    )
                })
                .collect();
            for (l, &(w, a)) in v.iter().enumerate() {
                lanes.w[l].next = b16(w);
                lanes.a[l].next = b16(a);
            }
            settle(&mut lanes);
            for (l, &(w, a)) in v.iter().enumerate() {
                assert_eq!(s32(lanes.p[l].val()), f.mul(w, a) as i64);
            }
        }
    }

    #[test]
    fn rounded_lanes_keep_products_beyond_the_range() {
        // 2.7 (±4): w up to ±4 times a up to 4 leaves the range; the lane keeps it
        let f = Format::new(2, 7);
        for registered in [false, true] {
            let mut lanes = Lanes::new(2, f, FfProducts::Rounded).with_registered(registered);
            lanes.connect_all();
            let mut r = edgeflow_core::rng::SplitMix64::new(2);
            let (mut prev, mut outside) = (None, 0);
            for _ in 0..300 {
                let v: Vec<(i32, i32)> = (0..2)
                    .map(|_| (f.min() + r.below(1024) as i32, r.below(512) as i32))
                    .collect();
                for (l, &(w, a)) in v.iter().enumerate() {
                    lanes.w[l].next = b16(w);
                    lanes.a[l].next = b16(a);
                }
                settle(&mut lanes);
                // w·a exactly, rounded half up to 7 fraction bits
                let now: Vec<i64> = v
                    .iter()
                    .map(|&(w, a)| (w as i64 * a as i64 + 64).div_euclid(128))
                    .collect();
                let want = if registered {
                    prev.clone()
                } else {
                    Some(now.clone())
                };
                if let Some(want) = want {
                    let got: Vec<i64> = (0..2).map(|l| s32(lanes.p[l].val())).collect();
                    assert_eq!(got, want, "registered {registered}");
                    outside += got.iter().filter(|&&p| p > 511 || p < -512).count();
                }
                prev = Some(now);
                tick(&mut lanes, |x| &mut x.clock);
            }
            assert!(outside > 100, "{outside} products beyond the range");
        }
    }

    #[test]
    fn registered_lanes_give_the_previous_clocks_products() {
        let f = Format::new(3, 12);
        let mut lanes = Lanes::new(2, f, FfProducts::Saturated).with_registered(true);
        lanes.connect_all();
        let mut r = edgeflow_core::rng::SplitMix64::new(3);
        let mut prev: Option<Vec<i32>> = None;
        for _ in 0..200 {
            let v: Vec<(i32, i32)> = (0..2)
                .map(|_| {
                    (
                        f.min() + r.below(65536) as i32,
                        f.min() + r.below(65536) as i32,
                    )
                })
                .collect();
            for (l, &(w, a)) in v.iter().enumerate() {
                lanes.w[l].next = b16(w);
                lanes.a[l].next = b16(a);
            }
            settle(&mut lanes);
            if let Some(p) = &prev {
                for l in 0..2 {
                    assert_eq!(s32(lanes.p[l].val()), p[l] as i64);
                }
            }
            prev = Some(v.iter().map(|&(w, a)| f.mul(w, a)).collect());
            tick(&mut lanes, |x| &mut x.clock);
        }
    }

    #[test]
    fn selects_are_the_products_of_one_bit_inputs() {
        for (f, registered) in [(Format::new(1, 6), false), (Format::new(3, 12), true)] {
            let one = f.quantize_input(1.0, 1);
            let mut lanes = Lanes::new(2, f, FfProducts::Saturated)
                .with_registered(registered)
                .with_selects(true);
            lanes.connect_all();
            let mut r = edgeflow_core::rng::SplitMix64::new(5);
            let mut prev: Option<Vec<i32>> = None;
            for _ in 0..300 {
                let v: Vec<(i32, i32)> = (0..2)
                    .map(|_| {
                        let w = f.min() + r.below(1 << f.width) as i32;
                        (w, if r.below(2) == 1 { one } else { 0 })
                    })
                    .collect();
                for (l, &(w, a)) in v.iter().enumerate() {
                    lanes.w[l].next = b16(w);
                    lanes.a[l].next = b16(a);
                }
                settle(&mut lanes);
                let now: Vec<i32> = v.iter().map(|&(w, a)| f.mul(w, a)).collect();
                let want = if registered {
                    prev.clone()
                } else {
                    Some(now.clone())
                };
                if let Some(want) = want {
                    let got: Vec<i32> = (0..2).map(|l| s32(lanes.p[l].val()) as i32).collect();
                    assert_eq!(got, want, "{f:?}");
                }
                prev = Some(now);
                tick(&mut lanes, |x| &mut x.clock);
            }
        }
    }

    #[test]
    fn lanes_verilog_is_clean() {
        yosys_check(
            &Lanes::new(3, Format::new(3, 12), FfProducts::Rounded),
            "lanes",
        );
        yosys_check(
            &Lanes::new(2, Format::new(3, 12), FfProducts::Rounded).with_registered(true),
            "lanes_registered",
        );
        for registered in [false, true] {
            yosys_check(
                &Lanes::new(2, Format::new(2, 7), FfProducts::Saturated)
                    .with_registered(registered)
                    .with_selects(true),
                &format!("lanes_selects_{registered}"),
            );
        }
    }
}
