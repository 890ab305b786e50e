//! The UP unit: `w_e ← sat(w_e − η·(δ·a_k))` for every lane and `b ← sat(b − η·δ)` for every
//! group, with `η = 2^-shift` applied as a rounding arithmetic shift.
//!
//! With registered products (`with_registered`) each lane's `η·(δ·a_k)` is held for a clock
//! (in the Verilog as the raw product with both rounding constants, `mul_eta_raw`: the MAC16's
//! output register), and `new_w` takes the weight of the clock after: the junction delays the
//! weight to meet it. The biases, without a multiply, stay in the clock of their delta.
//!
//! With one-bit inputs (`with_selects`, junction 1's UP as its FF) `a_k` is 0 or 1.0, so
//! `δ·a_k` is `a_k ? δ·1.0 : 0`: each lane selects between its products by constants, which
//! synthesis folds into shifts, and no multiplier is built.

use crate::fixed::{b16, mul, round_shift, s16, sat};
use edgeflow_core::fixed::Format;
use edgeflow_core::rounding::{bias_update_stochastic, Rounding};
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
    /// With stochastic rounding: per lane, the word of its stream for this clock's update.
    pub word: Vec<Signal<In, Bits<32>>>,
    /// With stochastic rounding: per group, the low 16 bits of its bias's word.
    pub bias_word: Vec<Signal<In, Bits<16>>>,
    pub new_w: Vec<Signal<Out, Bits<16>>>,
    pub new_b: Vec<Signal<Out, Bits<16>>>,
    _f: Format,
    _stochastic: bool,
    _shift: u32,
    _lpg: usize,
    /// With registered products: each lane's registered `η·(δ·a)`.
    _reg: Option<Vec<i32>>,
    /// Selects in place of multipliers: `a` is 0 or 1.0.
    _select: bool,
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
            word: vec![],
            bias_word: vec![],
            new_w: crate::sigs(z),
            new_b: crate::sigs(groups),
            _f: f,
            _stochastic: false,
            _shift: shift,
            _lpg: lanes_per_group,
            _reg: None,
            _select: false,
        }
    }

    /// Selects in place of the lanes' multipliers; only for operands `a` of 0 or 1.0 in a
    /// format that holds 1.0 (`Spec::input_selects`).
    pub fn with_selects(mut self, select: bool) -> UpUnit {
        assert!(
            !select || self._f.int_bits >= 1,
            "1.0 saturates: no selects"
        );
        self._select = select;
        self
    }

    /// The operand the lane's product sees: `a`, or as a select what the hardware reads of
    /// it, 1.0 when its bit of 1.0 is set and 0 otherwise.
    fn operand(&self, a: i32) -> i32 {
        match self._select {
            false => a,
            true if a >> self._f.frac_bits & 1 == 1 => 1 << self._f.frac_bits,
            true => 0,
        }
    }

    /// The Verilog of a product of lane `l`'s `a`: `product(a)`, or as a select the two
    /// products by the constants 1.0 and 0 chosen by `a`'s bit of 1.0.
    fn product_hdl(&self, l: usize, product: impl Fn(&str) -> String) -> String {
        if !self._select {
            return product(&format!("a${l}"));
        }
        let (w, frac) = (self._f.width, self._f.frac_bits);
        format!(
            "(a${l}[{frac}] ? {} : {})",
            product(&format!("{w}'sd{}", 1u64 << frac)),
            product(&format!("{w}'sd0"))
        )
    }

    pub fn with_rounding(mut self, rounding: Rounding) -> UpUnit {
        self._stochastic = rounding == Rounding::Stochastic;
        let (z, g) = (self.new_w.len(), self.new_b.len());
        self.word = crate::sigs(if self._stochastic { z } else { 0 });
        self.bias_word = crate::sigs(if self._stochastic { g } else { 0 });
        self
    }

    /// Bits of the word a lane adds to the exact product, `frac + shift`.
    fn noise_bits(&self) -> u32 {
        self._f.frac_bits + self._shift
    }

    pub fn with_registered(mut self, registered: bool) -> UpUnit {
        self._reg = registered.then(|| vec![0; self.new_w.len()]);
        self
    }
}

impl Logic for UpUnit {
    fn update(&mut self) {
        let (f, s) = (self._f, self._shift);
        let n = self.noise_bits();
        // Per lane what the registered variant holds: the rounded `η·(δ·a)` (nearest) or
        // the exact product plus the word's noise (stochastic).
        let held: Vec<i32> = (0..self.w.len())
            .map(|l| {
                let d = s16(self.d[l / self._lpg].val());
                let a = self.operand(s16(self.a[l].val()));
                if self._stochastic {
                    let word = self.word[l].val().index() as u32;
                    let r = if n == 0 { 0 } else { (word >> (32 - n)) as i64 };
                    (d as i64 * a as i64 + r) as i32
                } else {
                    round_shift(mul(f, d, a) as i64, s) as i32
                }
            })
            .collect();
        let held = match &mut self._reg {
            None => held,
            Some(r) => {
                if self.clock.pos_edge() {
                    *r = held;
                }
                r.clone()
            }
        };
        for (l, &h) in held.iter().enumerate() {
            let up = if self._stochastic {
                sat(f, (h as i64) >> n) as i64
            } else {
                h as i64
            };
            self.new_w[l].next = b16(sat(f, s16(self.w[l].val()) as i64 - up));
        }
        for q in 0..self.d.len() {
            let b = s16(self.bias[q].val());
            let bd = s16(self.bd[q].val());
            let nb = if self._stochastic {
                bias_update_stochastic(f, b, bd, s, self.bias_word[q].val().index() as u32)
            } else {
                sat(f, b as i64 - round_shift(bd as i64, s))
            };
            self.new_b[q].next = b16(nb);
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
        let n = self.noise_bits();
        // stochastic: the exact product plus the word's top n bits (n ≤ 30, so the sum fits)
        let noisy = |l: usize, q: usize| {
            let r = if n == 0 {
                "32'sd0".to_string()
            } else {
                format!("$signed({{{}'d0, word${l}[31:{}]}})", 32 - n, 32 - n)
            };
            // a bare product: without selects the text is the multiplier's own
            let p = self.product_hdl(l, |a| format!("$signed(d${q}) * $signed({a})"));
            format!("({p} + {r})")
        };
        if self._reg.is_some() {
            for l in 0..self.w.len() {
                let q = l / self._lpg;
                let held = if self._stochastic {
                    noisy(l, q)
                } else {
                    self.product_hdl(l, |a| format!("mul_eta_raw(d${q}, {a})"))
                };
                let _ = writeln!(
                    v,
                    "reg signed [31:0] ur_{l};\ninitial ur_{l} = 0;\nalways @(posedge clock) ur_{l} <= {held};"
                );
            }
        } else if self._stochastic {
            for l in 0..self.w.len() {
                let q = l / self._lpg;
                let _ = writeln!(v, "wire signed [31:0] ur_{l} = {};", noisy(l, q));
            }
        }
        v += "always @(*) begin\n";
        for l in 0..self.w.len() {
            let q = l / self._lpg;
            let up = match (self._stochastic, self._reg.is_some()) {
                (true, _) => format!("sat32(ur_{l} >>> {n})"),
                (false, true) => format!("eta_rs(ur_{l})"),
                (false, false) => self.product_hdl(l, |a| format!("eta(mul_rs(d${q}, {a}))")),
            };
            let _ = writeln!(v, "    new_w${l} = sat32(sx(w${l}) - {up});");
        }
        for q in 0..self.d.len() {
            let up = if self._stochastic {
                let r = if self._shift == 0 {
                    "32'sd0".to_string()
                } else {
                    format!(
                        "$signed({{{}'d0, bias_word${q}[{}:0]}})",
                        32 - self._shift,
                        self._shift - 1
                    )
                };
                format!("((sx(bd${q}) + {r}) >>> {})", self._shift)
            } else {
                format!("eta(bd${q})")
            };
            let _ = writeln!(v, "    new_b${q} = sat32(sx(bias${q}) - {up});");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check, yosys_stat};

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

    /// Stochastic rounding, plain and registered, against the contract's functions.
    #[test]
    fn stochastic_updates_follow_the_contract() {
        use edgeflow_core::rounding::weight_update_stochastic;
        for (f, shift, registered) in [
            (Format::new(2, 7), 2, false),
            (Format::new(0, 9), 0, false),
            (Format::new(3, 12), 5, true),
            (Format::new(2, 5), 0, true),
        ] {
            let mut u = UpUnit::new(2, 1, 2, f, shift)
                .with_rounding(Rounding::Stochastic)
                .with_registered(registered);
            u.connect_all();
            let span = (f.max() - f.min() + 1) as usize;
            let mut r = edgeflow_core::rng::SplitMix64::new(8);
            let mut prev: Option<Vec<i32>> = None;
            let mut moved = 0;
            for _ in 0..400 {
                let v: Vec<i32> = (0..6).map(|_| f.min() + r.below(span) as i32).collect();
                // small deltas, so the noise decides whether an update happens
                let d = v[4] >> (f.width - 3);
                let words: Vec<u32> = (0..3).map(|_| r.next_u64() as u32).collect();
                for l in 0..2 {
                    u.w[l].next = b16(v[l]);
                    u.a[l].next = b16(v[2 + l]);
                    u.word[l].next = Bits::<32>::from(words[l] as u64);
                }
                u.d[0].next = b16(d);
                u.bd[0].next = b16(d);
                u.bias[0].next = b16(v[5]);
                u.bias_word[0].next = Bits::<32>::from(words[2] as u64).get_bits::<16>(0);
                settle(&mut u);
                // what the update subtracts: the new weight of w = 0, with saturation apart
                let ups: Vec<i32> = (0..2)
                    .map(|l| -weight_update_stochastic(f, 0, d, v[2 + l], shift, words[l]))
                    .collect();
                let want_ups = if registered {
                    prev.clone()
                } else {
                    Some(ups.clone())
                };
                if let Some(up) = want_ups {
                    for l in 0..2 {
                        let want = f.saturate(v[l] as i64 - up[l] as i64);
                        assert_eq!(s16(u.new_w[l].val()), want, "{f:?} shift {shift}");
                        moved += (want != v[l]) as usize;
                    }
                }
                assert_eq!(
                    s16(u.new_b[0].val()),
                    bias_update_stochastic(f, v[5], d, shift, words[2] & 0xffff)
                );
                prev = Some(ups);
                tick(&mut u, |x| &mut x.clock);
            }
            assert!(moved > 20, "updates must happen");
        }
    }

    /// The four variants: plain and registered, nearest and stochastic.
    fn variants(f: Format, shift: u32) -> Vec<UpUnit> {
        [(false, false), (true, false), (false, true), (true, true)]
            .into_iter()
            .map(|(registered, stochastic)| {
                UpUnit::new(2, 1, 2, f, shift)
                    .with_rounding(if stochastic {
                        Rounding::Stochastic
                    } else {
                        Rounding::Nearest
                    })
                    .with_registered(registered)
            })
            .collect()
    }

    /// With operands of 0 or 1.0 the selects update every weight as the multipliers do (whose
    /// values the tests above hold to the contract), in every variant.
    #[test]
    fn selects_update_as_the_multipliers_with_one_bit_operands() {
        let f = Format::new(2, 7);
        let one = 1 << f.frac_bits;
        for (mut mul, sel) in variants(f, 2).into_iter().zip(variants(f, 2)) {
            let mut sel = sel.with_selects(true);
            mul.connect_all();
            sel.connect_all();
            let span = (f.max() - f.min() + 1) as usize;
            let mut r = edgeflow_core::rng::SplitMix64::new(9);
            let mut moved = 0;
            for _ in 0..300 {
                let v: Vec<i32> = (0..4).map(|_| f.min() + r.below(span) as i32).collect();
                let a: Vec<i32> = (0..2).map(|_| one * r.below(2) as i32).collect();
                let words: Vec<u32> = (0..3).map(|_| r.next_u64() as u32).collect();
                for u in [&mut mul, &mut sel] {
                    for l in 0..2 {
                        u.w[l].next = b16(v[l]);
                        u.a[l].next = b16(a[l]);
                        if !u.word.is_empty() {
                            u.word[l].next = Bits::<32>::from(words[l] as u64);
                        }
                    }
                    u.d[0].next = b16(v[2]);
                    u.bd[0].next = b16(v[2]);
                    u.bias[0].next = b16(v[3]);
                    if !u.bias_word.is_empty() {
                        u.bias_word[0].next = Bits::<32>::from(words[2] as u64).get_bits::<16>(0);
                    }
                }
                settle(&mut mul);
                settle(&mut sel);
                for l in 0..2 {
                    assert_eq!(sel.new_w[l].val(), mul.new_w[l].val());
                    moved += (s16(mul.new_w[l].val()) != v[l]) as usize;
                }
                tick(&mut mul, |x| &mut x.clock);
                tick(&mut sel, |x| &mut x.clock);
            }
            assert!(moved > 50, "updates must happen");
        }
    }

    /// As selects, no variant's Verilog builds a multiplier (the multipliers' does).
    #[test]
    fn selects_take_no_multiplier() {
        let f = Format::new(2, 7);
        let multiplied = yosys_stat(&variants(f, 2).remove(0), "up_mul", "synth_ecp5 -top top");
        let Some(multiplied) = multiplied else { return };
        assert!(multiplied.contains("MULT18X18D"), "{multiplied}");
        for (i, u) in variants(f, 2).into_iter().enumerate() {
            let stat = yosys_stat(
                &u.with_selects(true),
                &format!("up_sel{i}"),
                "synth_ecp5 -top top",
            )
            .unwrap();
            assert!(!stat.contains("MULT18X18D"), "variant {i}: {stat}");
        }
    }

    #[test]
    fn up_unit_verilog_is_clean() {
        yosys_check(
            &UpUnit::new(2, 2, 1, Format::new(2, 7), 3).with_rounding(Rounding::Stochastic),
            "up_unit_stochastic",
        );
        yosys_check(
            &UpUnit::new(2, 1, 2, Format::new(3, 12), 0)
                .with_rounding(Rounding::Stochastic)
                .with_registered(true),
            "up_unit_stochastic_registered",
        );
        yosys_check(&UpUnit::new(3, 1, 3, Format::new(2, 7), 3), "up_unit");
        yosys_check(
            &UpUnit::new(2, 1, 2, Format::new(3, 12), 2).with_registered(true),
            "up_unit_registered",
        );
    }
}
