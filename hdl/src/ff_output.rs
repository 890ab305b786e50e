//! End of FF on the right layer: the output delta `δ_L = sat(a − y)` (one-hot label) written
//! for BP of the next block cycle, and the running first-largest output (the prediction).

use crate::fixed::{b16, s16, sat};
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
        }
    }

    fn best(&self) -> (i32, usize) {
        let mut b = self._best;
        if self.done.val() {
            for q in 0..self.a.len() {
                let (a, r) = (s16(self.a[q].val()), self.r[q].val().index());
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
        }
        let one = self._f.one() as i64;
        for q in 0..self.a.len() {
            let y = if self.r[q].val() == self.label.val() {
                one
            } else {
                0
            };
            self.out_delta[q].next = b16(sat(self._f, s16(self.a[q].val()) as i64 - y));
        }
        self.pred.next = b16(self.best().1 as i32);
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
        v += "initial begin\n    best_val = 16'sd0;\n    best_idx = 16'd0;\nend\nalways @(*) begin\n    cb_val = best_val;\n    cb_idx = best_idx;\n";
        for q in 0..self.a.len() {
            let _ = writeln!(
                v,
                "    if (done && ((r${q} == 16'd0) || ($signed(a${q}) > cb_val))) begin\n        cb_val = a${q};\n        cb_idx = r${q};\n    end\n    out_delta${q} = sat32(sx(a${q}) - ((r${q} == label) ? {} : 0));",
                self._f.one()
            );
        }
        v += "    pred = cb_idx;\nend\nalways @(posedge clock) begin\n    best_val <= cb_val;\n    best_idx <= cb_idx;\nend\n";
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

    #[test]
    fn ff_output_verilog_is_clean() {
        yosys_check(&FfOutput::new(2, Format::new(2, 7)), "ff_output");
    }
}
