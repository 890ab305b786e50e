//! End of FF on the right layer: the output delta `δ_L = sat(a − y)` (one-hot label; `0` at
//! the sigmoid table's end on the target's side under the clipped rule, `fixed` step 6)
//! written for BP of the next block cycle, and the running first-largest output (the
//! prediction).
//!
//! With `with_registered_compare` the first-largest compares the outputs of the clock before
//! (registered here), so the comparison starts at flip-flops and not behind the activation
//! ROM's mirror subtraction, and the prediction is the registered first-largest, so the host
//! link's message register does not wait on the comparison either. The prediction is then
//! complete two clocks after the last output: the network sets it only for a last junction
//! whose pass is at least two clocks shorter than the block cycle's longest.

use crate::fixed::{b16, s16};
use edgeflow_core::fixed::output_delta;
use edgeflow_core::fixed::Format;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct FfOutput {
    pub clock: Signal<In, Clock>,
    /// A group's neuron completes this clock.
    pub done: Signal<In, Bit>,
    pub a: Vec<Signal<In, Bits<16>>>,
    pub r: Vec<Signal<In, Bits<16>>>,
    pub label: Signal<In, Bits<16>>,
    pub out_delta: Vec<Signal<Out, Bits<16>>>,
    /// Index of the first largest output so far, including this clock's neurons.
    pub pred: Signal<Out, Bits<16>>,
    _f: Format,
    _best: (i32, usize),
    /// With a registered compare: the done flag and each group's (output, neuron) of the
    /// clock before.
    _in: Option<(bool, Vec<(i32, usize)>)>,
    /// The table entries where the output delta stops (`fixed::output_delta_ends`).
    _ends: Option<(i32, i32)>,
}

impl FfOutput {
    pub fn new(groups: usize, f: Format) -> FfOutput {
        FfOutput {
            clock: Default::default(),
            done: Default::default(),
            a: crate::sigs(groups),
            r: crate::sigs(groups),
            label: Default::default(),
            out_delta: crate::sigs(groups),
            pred: Default::default(),
            _f: f,
            _best: (0, 0),
            _in: None,
            _ends: None,
        }
    }

    pub fn with_output_delta_ends(mut self, ends: Option<(i32, i32)>) -> FfOutput {
        self._ends = ends;
        self
    }

    pub fn with_registered_compare(mut self, on: bool) -> FfOutput {
        self._in = on.then(|| (false, vec![(0, 0); self.a.len()]));
        self
    }

    /// This clock's (output, neuron) of each group.
    fn current(&self) -> Vec<(i32, usize)> {
        self.a
            .iter()
            .zip(&self.r)
            .map(|(a, r)| (s16(a.val()), r.val().index()))
            .collect()
    }

    /// What the first-largest compares: this clock's outputs, or the registered ones.
    fn inputs(&self) -> (bool, Vec<(i32, usize)>) {
        match &self._in {
            Some(x) => x.clone(),
            None => (self.done.val(), self.current()),
        }
    }

    fn best(&self) -> (i32, usize) {
        let mut b = self._best;
        let (done, ar) = self.inputs();
        if done {
            for (a, r) in ar {
                if r == 0 || a > b.0 {
                    b = (a, r);
                }
            }
        }
        b
    }
}

impl Logic for FfOutput {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._best = self.best();
            if self._in.is_some() {
                self._in = Some((self.done.val(), self.current()));
            }
        }
        for q in 0..self.a.len() {
            let target = self.r[q].val() == self.label.val();
            let a = s16(self.a[q].val());
            self.out_delta[q].next = b16(output_delta(self._f, self._ends, a, target));
        }
        let pred = if self._in.is_some() {
            self._best.1
        } else {
            self.best().1
        };
        self.pred.next = b16(pred as i32);
    }
    fn connect(&mut self) {
        for x in self.out_delta.iter_mut() {
            x.connect();
        }
        self.pred.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = crate::fixed::verilog_functions(self._f, 0);
        v += "reg signed [15:0] best_val;\nreg [15:0] best_idx;\nreg signed [15:0] cb_val;\nreg [15:0] cb_idx;\n";
        // the compare's inputs: this clock's, or the registered ones of the clock before
        let reg = self._in.is_some();
        let (dn, an, rn) = if reg {
            ("cd_q", "ca_q", "cr_q")
        } else {
            ("done", "a$", "r$")
        };
        if reg {
            v += "reg cd_q;\ninitial cd_q = 1'b0;\n";
            let mut upd = String::from("always @(posedge clock) begin\n    cd_q <= done;\n");
            for q in 0..self.a.len() {
                let _ = writeln!(
                    v,
                    "reg [15:0] ca_q{q};\nreg [15:0] cr_q{q};\ninitial begin ca_q{q} = 16'd0; cr_q{q} = 16'd0; end"
                );
                let _ = writeln!(upd, "    ca_q{q} <= a${q};\n    cr_q{q} <= r${q};");
            }
            v += &upd;
            v += "end\n";
        }
        v += "initial begin\n    best_val = 16'sd0;\n    best_idx = 16'd0;\nend\nalways @(*) begin\n    cb_val = best_val;\n    cb_idx = best_idx;\n";
        for q in 0..self.a.len() {
            let _ = writeln!(
                v,
                "    if ({dn} && (({rn}{q} == 16'd0) || ($signed({an}{q}) > cb_val))) begin\n        cb_val = {an}{q};\n        cb_idx = {rn}{q};\n    end\n    out_delta${q} = {stop}sat32(sx(a${q}) - ((r${q} == label) ? {} : 0));",
                self._f.one(),
                stop = match self._ends {
                    // the table's entries are non-negative
                    Some((first, last)) => format!(
                        "(a${q} == ((r${q} == label) ? 16'd{last} : 16'd{first})) ? 16'd0 : "
                    ),
                    None => String::new(),
                }
            );
        }
        let _ = writeln!(
            v,
            "    pred = {};\nend\nalways @(posedge clock) begin\n    best_val <= cb_val;\n    best_idx <= cb_idx;\nend",
            if reg { "best_idx" } else { "cb_idx" }
        );
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};

    #[test]
    fn first_largest_and_output_delta() {
        let f = Format::new(2, 7);
        let mut o = FfOutput::new(2, f);
        o.connect_all();
        o.label.next = b16(2);
        o.done.next = true;
        // outputs 0..3 = 10, 50, 50, 20 over two clocks: first largest is neuron 1
        for (c, vals) in [[10, 50], [50, 20]].iter().enumerate() {
            for q in 0..2 {
                o.a[q].next = b16(vals[q]);
                o.r[q].next = b16((2 * c + q) as i32);
            }
            settle(&mut o);
            if c == 1 {
                assert_eq!(s16(o.out_delta[0].val()), 50 - 128, "label neuron: a - 1");
                assert_eq!(s16(o.out_delta[1].val()), 20);
                assert_eq!(o.pred.val().index(), 1);
            }
            tick(&mut o, |o| &mut o.clock);
        }
        o.done.next = false;
        settle(&mut o);
        assert_eq!(o.pred.val().index(), 1);
    }

    /// On a random stream of outputs (ties, restarts at neuron 0, idle clocks) the
    /// registered compare's prediction is the plain one's two clocks later, and its output
    /// deltas are the plain ones of the same clock.
    #[test]
    fn a_registered_compare_predicts_two_clocks_later() {
        let f = Format::new(2, 7);
        let mut plain = FfOutput::new(2, f);
        let mut reg = FfOutput::new(2, f).with_registered_compare(true);
        plain.connect_all();
        reg.connect_all();
        let mut r = edgeflow_core::rng::SplitMix64::new(9);
        let mut prev: std::collections::VecDeque<usize> = Default::default();
        let mut changes = 0;
        for t in 0..500 {
            let done = r.below(3) != 0;
            let base = if r.below(5) == 0 { 0 } else { 2 * (t % 5) };
            for o in [&mut plain, &mut reg] {
                o.done.next = done;
                o.label.next = b16(3);
            }
            for q in 0..2 {
                let a = b16(r.below(6) as i32 * 20 - 40);
                plain.a[q].next = a;
                reg.a[q].next = a;
                plain.r[q].next = b16((base + q) as i32);
                reg.r[q].next = b16((base + q) as i32);
            }
            settle(&mut plain);
            settle(&mut reg);
            for q in 0..2 {
                assert_eq!(plain.out_delta[q].val(), reg.out_delta[q].val());
            }
            if prev.len() == 2 {
                let p = prev.pop_front().unwrap();
                assert_eq!(reg.pred.val().index(), p, "clock {t}");
                changes += (p != plain.pred.val().index()) as usize;
            }
            prev.push_back(plain.pred.val().index());
            tick(&mut plain, |o| &mut o.clock);
            tick(&mut reg, |o| &mut o.clock);
        }
        assert!(changes > 50, "the prediction moves ({changes} changes)");
    }

    #[test]
    fn ff_output_verilog_is_clean() {
        yosys_check(&FfOutput::new(2, Format::new(2, 7)), "ff_output");
        yosys_check(
            &FfOutput::new(2, Format::new(2, 7)).with_registered_compare(true),
            "ff_output_registered",
        );
    }
}
