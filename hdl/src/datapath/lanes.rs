//! The lanes: `z` multiply-round units working side by side, one per edge of the clock
//! (`w_e · a_k` in FF). Each lane is FF's product of the contract (`Format::ff_product`):
//! rounded, and under `ff_products = "saturated"` also saturated as in
//! [`crate::fixed::MulRoundSat`]; a rounded product has `Format::product_bits` bits and
//! travels sign-extended on a 32-bit bus. With registered products (`with_registered`) each
//! lane's product is held for a clock (in the Verilog before the rounding shift and
//! saturation, so the register is the MAC16's own output register) and `p` is the previous
//! clock's. With selects (`with_selects`, the FF of junction 1 when the inputs have one bit:
//! `a` is 0 or 1.0) a lane is `a ? w : 0`, which is the product there under either rule
//! (`Spec::input_selects`), and no multiplier is built.

use crate::fixed::{b32, s16};
use edgeflow_core::fixed::{FfProducts, Format};
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct Lanes {
    pub clock: Signal<In, Clock>,
    pub w: Vec<Signal<In, Bits<16>>>,
    pub a: Vec<Signal<In, Bits<16>>>,
    /// Each lane's product, sign-extended.
    pub p: Vec<Signal<Out, Bits<32>>>,
    _f: Format,
    _products: FfProducts,
    /// The registered products (empty without registered products).
    _q: Vec<i32>,
    /// Lanes select `w` by `a`'s 1.0 bit instead of multiplying.
    _select: bool,
}

impl Lanes {
    pub fn new(z: usize, f: Format, products: FfProducts) -> Lanes {
        Lanes {
            clock: Default::default(),
            w: crate::sigs(z),
            a: crate::sigs(z),
            p: crate::sigs(z),
            _f: f,
            _products: products,
            _q: vec![],
            _select: false,
        }
    }

    /// Selects in place of multipliers; only for operands `a` of 0 or 1.0 in a format that
    /// holds 1.0 (`int_bits ≥ 1`).
    pub fn with_selects(mut self, select: bool) -> Lanes {
        assert!(
            !select || self._f.int_bits >= 1,
            "1.0 saturates: no selects"
        );
        self._select = select;
        self
    }

    pub fn with_registered(mut self, registered: bool) -> Lanes {
        self._q = if registered {
            vec![0; self.p.len()]
        } else {
            vec![]
        };
        self
    }
}

impl Logic for Lanes {
    fn update(&mut self) {
        let one_bit = self._f.frac_bits as usize;
        let now = |l: usize| {
            if !self._select {
                let (w, a) = (s16(self.w[l].val()), s16(self.a[l].val()));
                self._f.ff_product(self._products, w, a)
            } else if self.a[l].val().get_bit(one_bit) {
                s16(self.w[l].val())
            } else {
                0
            }
        };
        if self._q.is_empty() {
            for l in 0..self.p.len() {
                self.p[l].next = b32(now(l) as i64);
            }
            return;
        }
        if self.clock.pos_edge() {
            self._q = (0..self.p.len()).map(now).collect();
        }
        for l in 0..self.p.len() {
            self.p[l].next = b32(self._q[l] as i64);
        }
    }
    fn connect(&mut self) {
        for x in self.p.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        if self._select {
            return Verilog::Custom(self.select_verilog());
        }
        let mut v = crate::fixed::verilog_functions(self._f, 0);
        if !self._q.is_empty() {
            for l in 0..self.p.len() {
                let _ = writeln!(v, "reg signed [31:0] q_{l};\ninitial q_{l} = 32'sd0;\nalways @(posedge clock) q_{l} <= mul_raw(w${l}, a${l});");
            }
        }
        // the functions return signed values, which the 32-bit bus takes sign-extended
        let (now, held) = match self._products {
            FfProducts::Rounded => ("mul_r", "rs"),
            FfProducts::Saturated => ("mul_rs", "sat_rs"),
        };
        v += "always @(*) begin\n";
        for l in 0..self.p.len() {
            if self._q.is_empty() {
                let _ = writeln!(v, "    p${l} = {now}(w${l}, a${l});");
            } else {
                let _ = writeln!(v, "    p${l} = {held}(q_{l});");
            }
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

impl Lanes {
    /// The Verilog of the selects: `a`'s 1.0 bit gates `w`, registered like a product with
    /// registered products.
    fn select_verilog(&self) -> String {
        let one_bit = self._f.frac_bits;
        let sel = |l: usize| format!("(a${l}[{one_bit}] ? w${l} : 16'd0)");
        let mut v = String::new();
        for l in 0..self.p.len() {
            let _ = writeln!(v, "reg [15:0] q_{l};");
            if !self._q.is_empty() {
                let _ = writeln!(
                    v,
                    "initial q_{l} = 16'd0;\nalways @(posedge clock) q_{l} <= {};",
                    sel(l)
                );
            }
        }
        v += "always @(*) begin\n";
        for l in 0..self.p.len() {
            if self._q.is_empty() {
                let _ = writeln!(v, "    q_{l} = {};", sel(l));
            }
            let _ = writeln!(v, "    p${l} = {{{{16{{q_{l}[15]}}}}, q_{l}}};");
        }
        v += "end\n";
        v
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
