//! The lanes: `z` multiply-round-saturate units working side by side, one per edge of the
//! clock (`w_e · a_k` in FF). Each lane is the same arithmetic as [`crate::fixed::MulRoundSat`].

use crate::fixed::{b16, mul, s16};
use edgeflow_core::fixed::Format;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct Lanes {
    pub w: Vec<Signal<In, Bits<16>>>,
    pub a: Vec<Signal<In, Bits<16>>>,
    pub p: Vec<Signal<Out, Bits<16>>>,
    _f: Format,
}

impl Lanes {
    pub fn new(z: usize, f: Format) -> Lanes {
        Lanes {
            w: crate::sigs(z),
            a: crate::sigs(z),
            p: crate::sigs(z),
            _f: f,
        }
    }
}

impl Logic for Lanes {
    fn update(&mut self) {
        for l in 0..self.p.len() {
            self.p[l].next = b16(mul(self._f, s16(self.w[l].val()), s16(self.a[l].val())));
        }
    }
    fn connect(&mut self) {
        for x in self.p.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let mut v = crate::fixed::verilog_functions(self._f, 0);
        v += "always @(*) begin\n";
        for l in 0..self.p.len() {
            let _ = writeln!(v, "    p${l} = mul_rs(w${l}, a${l});");
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
    fn every_lane_multiplies_rounds_and_saturates() {
        let f = Format::new(2, 7);
        let mut lanes = Lanes::new(4, f);
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
                assert_eq!(s16(lanes.p[l].val()), f.mul(w, a));
            }
        }
    }

    #[test]
    fn lanes_verilog_is_clean() {
        yosys_check(&Lanes::new(3, Format::new(3, 12)), "lanes");
    }
}
