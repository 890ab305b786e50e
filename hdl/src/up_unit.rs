//! The UP unit: `w_e ← sat(w_e − η·(δ·a_k))` for every lane and `b ← sat(b − η·δ)` for every
//! group, with `η = 2^-shift` applied as a rounding arithmetic shift.
//!
//! With registered products (`with_registered`) each lane's `η·(δ·a_k)` is held for a clock
//! (in the Verilog as the raw product with both rounding constants, `mul_eta_raw`: the MAC16's
//! output register), and `new_w` takes the weight of the clock after: the junction delays the
//! weight to meet it. The biases, without a multiply, stay in the clock of their delta.

use crate::fixed::{b16, mul, round_shift, s16, sat};
use edgeflow_core::fixed::Format;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct UpUnit {
    pub clock: Signal<In, Clock>,
    pub w: Vec<Signal<In, Bits<16>>>,
    pub a: Vec<Signal<In, Bits<16>>>,
    pub d: Vec<Signal<In, Bits<16>>>,
    pub bias: Vec<Signal<In, Bits<16>>>,
    /// The delta each bias is updated with (the junction gives the bias and its delta a
    /// register of their own with the deep pipeline, so they may come a clock after `d`).
    pub bd: Vec<Signal<In, Bits<16>>>,
    pub new_w: Vec<Signal<Out, Bits<16>>>,
    pub new_b: Vec<Signal<Out, Bits<16>>>,
    _f: Format,
    _shift: u32,
    _lpg: usize,
    /// With registered products: each lane's registered `η·(δ·a)`.
    _reg: Option<Vec<i32>>,
}

impl UpUnit {
    pub fn new(z: usize, groups: usize, lanes_per_group: usize, f: Format, shift: u32) -> UpUnit {
        UpUnit {
            clock: Default::default(),
            w: crate::sigs(z),
            a: crate::sigs(z),
            d: crate::sigs(groups),
            bias: crate::sigs(groups),
            bd: crate::sigs(groups),
            new_w: crate::sigs(z),
            new_b: crate::sigs(groups),
            _f: f,
            _shift: shift,
            _lpg: lanes_per_group,
            _reg: None,
        }
    }

    pub fn with_registered(mut self, registered: bool) -> UpUnit {
        self._reg = registered.then(|| vec![0; self.new_w.len()]);
        self
    }
}

impl Logic for UpUnit {
    fn update(&mut self) {
        let (f, s) = (self._f, self._shift);
        let ups: Vec<i32> = (0..self.w.len())
            .map(|l| {
                let d = s16(self.d[l / self._lpg].val());
                round_shift(mul(f, d, s16(self.a[l].val())) as i64, s) as i32
            })
            .collect();
        let ups = match &mut self._reg {
            None => ups,
            Some(r) => {
                if self.clock.pos_edge() {
                    *r = ups;
                }
                r.clone()
            }
        };
        for l in 0..self.w.len() {
            self.new_w[l].next = b16(sat(f, s16(self.w[l].val()) as i64 - ups[l] as i64));
        }
        for q in 0..self.d.len() {
            let b = s16(self.bias[q].val()) as i64;
            self.new_b[q].next = b16(sat(f, b - round_shift(s16(self.bd[q].val()) as i64, s)));
        }
    }
    fn connect(&mut self) {
        for x in self.new_w.iter_mut() {
            x.connect();
        }
        for x in self.new_b.iter_mut() {
            x.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let mut v = crate::fixed::verilog_functions(self._f, self._shift);
        if self._reg.is_some() {
            for l in 0..self.w.len() {
                let q = l / self._lpg;
                let _ = writeln!(
                    v,
                    "reg signed [31:0] ur_{l};\ninitial ur_{l} = 0;\nalways @(posedge clock) ur_{l} <= mul_eta_raw(d${q}, a${l});"
                );
            }
        }
        v += "always @(*) begin\n";
        for l in 0..self.w.len() {
            let q = l / self._lpg;
            let up = if self._reg.is_some() {
                format!("eta_rs(ur_{l})")
            } else {
                format!("eta(mul_rs(d${q}, a${l}))")
            };
            let _ = writeln!(v, "    new_w${l} = sat32(sx(w${l}) - {up});");
        }
        for q in 0..self.d.len() {
            let _ = writeln!(v, "    new_b${q} = sat32(sx(bias${q}) - eta(bd${q}));");
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
    fn updates_follow_the_contract() {
        for (f, shift) in [
            (Format::new(2, 7), 2),
            (Format::new(0, 9), 0),
            (Format::new(3, 12), 5),
        ] {
            let mut u = UpUnit::new(2, 1, 2, f, shift);
            u.connect_all();
            let span = (f.max() - f.min() + 1) as usize;
            let mut r = edgeflow_core::rng::SplitMix64::new(4);
            for _ in 0..400 {
                let v: Vec<i32> = (0..6).map(|_| f.min() + r.below(span) as i32).collect();
                u.w[0].next = b16(v[0]);
                u.w[1].next = b16(v[1]);
                u.a[0].next = b16(v[2]);
                u.a[1].next = b16(v[3]);
                u.d[0].next = b16(v[4]);
                // the bias takes its own delta input
                u.bd[0].next = b16(v[1]);
                u.bias[0].next = b16(v[5]);
                settle(&mut u);
                for l in 0..2 {
                    let want = f.saturate(v[l] as i64 - f.eta(f.mul(v[4], v[2 + l]), shift) as i64);
                    assert_eq!(s16(u.new_w[l].val()), want);
                }
                assert_eq!(
                    s16(u.new_b[0].val()),
                    f.saturate(v[5] as i64 - f.eta(v[1], shift) as i64)
                );
            }
        }
    }

    #[test]
    fn registered_updates_take_the_previous_clocks_product() {
        for (f, shift) in [(Format::new(3, 12), 2), (Format::new(2, 7), 0)] {
            let mut u = UpUnit::new(2, 1, 2, f, shift).with_registered(true);
            u.connect_all();
            let span = (f.max() - f.min() + 1) as usize;
            let mut r = edgeflow_core::rng::SplitMix64::new(6);
            let mut prev: Option<Vec<i32>> = None;
            for _ in 0..300 {
                let v: Vec<i32> = (0..6).map(|_| f.min() + r.below(span) as i32).collect();
                for l in 0..2 {
                    u.w[l].next = b16(v[l]);
                    u.a[l].next = b16(v[2 + l]);
                }
                u.d[0].next = b16(v[4]);
                u.bd[0].next = b16(v[4]);
                u.bias[0].next = b16(v[5]);
                settle(&mut u);
                if let Some(up) = &prev {
                    for l in 0..2 {
                        let want = f.saturate(v[l] as i64 - up[l] as i64);
                        assert_eq!(s16(u.new_w[l].val()), want);
                    }
                }
                // the bias has no multiply and is not delayed
                assert_eq!(
                    s16(u.new_b[0].val()),
                    f.saturate(v[5] as i64 - f.eta(v[4], shift) as i64)
                );
                prev = Some(
                    (0..2)
                        .map(|l| f.eta(f.mul(v[4], v[2 + l]), shift))
                        .collect(),
                );
                tick(&mut u, |x| &mut x.clock);
            }
        }
    }

    #[test]
    fn up_unit_verilog_is_clean() {
        yosys_check(&UpUnit::new(3, 1, 3, Format::new(2, 7), 3), "up_unit");
        yosys_check(
            &UpUnit::new(2, 1, 2, Format::new(3, 12), 2).with_registered(true),
            "up_unit_registered",
        );
    }
}
