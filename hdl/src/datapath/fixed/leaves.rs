//! The format-width arithmetic of one lane or one neuron, as leaf blocks: a behaviour in
//! Rust (`update`) and its Verilog from the shared functions (`verilog_functions`). The
//! units (lanes.rs, bp_unit.rs) are composites of these.

use super::{b16, b32, s16, s32, sat, verilog_functions};
use edgeflow_core::fixed::{FfProducts, Format};
use rust_hdl::core::prelude::*;

/// One lane of FF: `w · a` as the contract's FF product (`Format::ff_product`: rounded, and
/// under `ff_products = "saturated"` also saturated), sign-extended on a 32-bit bus. With a
/// registered product (`with_registered`) the exact product is held for a clock (in the
/// Verilog before the rounding shift and saturation, so the register is a multiplier's own
/// output register) and `p` is the previous clock's. As a select (`with_select`, the FF of
/// junction 1 when inputs have one bit: `a` is 0 or 1.0) it is `a ? w : 0`, which is the
/// product there under either rule, and no multiplier is built.
#[derive(LogicBlock)]
pub struct LaneProduct {
    pub clock: Signal<In, Clock>,
    pub w: Signal<In, Bits<16>>,
    pub a: Signal<In, Bits<16>>,
    pub p: Signal<Out, Bits<32>>,
    _f: Format,
    _rule: FfProducts,
    _registered: bool,
    _select: bool,
    /// The registered product.
    _q: i32,
}

impl LaneProduct {
    pub fn new(f: Format, rule: FfProducts) -> Self {
        LaneProduct {
            clock: Default::default(),
            w: Default::default(),
            a: Default::default(),
            p: Default::default(),
            _f: f,
            _rule: rule,
            _registered: false,
            _select: false,
            _q: 0,
        }
    }

    pub fn with_registered(mut self, registered: bool) -> Self {
        self._registered = registered;
        self
    }

    /// A select in place of the multiplier; only for operands `a` of 0 or 1.0 in a format
    /// that holds 1.0 (`int_bits ≥ 1`).
    pub fn with_select(mut self, select: bool) -> Self {
        assert!(
            !select || self._f.int_bits >= 1,
            "1.0 saturates: no selects"
        );
        self._select = select;
        self
    }

    fn now(&self) -> i32 {
        if !self._select {
            self._f
                .ff_product(self._rule, s16(self.w.val()), s16(self.a.val()))
        } else if self.a.val().get_bit(self._f.frac_bits as usize) {
            s16(self.w.val())
        } else {
            0
        }
    }
}

impl Logic for LaneProduct {
    fn update(&mut self) {
        if !self._registered {
            self.p.next = b32(self.now() as i64);
            return;
        }
        if self.clock.pos_edge() {
            self._q = self.now();
        }
        self.p.next = b32(self._q as i64);
    }
    fn connect(&mut self) {
        self.p.connect();
    }
    fn hdl(&self) -> Verilog {
        if self._select {
            let sel = format!("(a[{}] ? w : 16'd0)", self._f.frac_bits);
            let q = if self._registered {
                format!("reg [15:0] q;\ninitial q = 16'd0;\nalways @(posedge clock) q <= {sel};\nalways @(*) p = {{{{16{{q[15]}}}}, q}};\n")
            } else {
                format!("reg [15:0] q;\nalways @(*) begin\n    q = {sel};\n    p = {{{{16{{q[15]}}}}, q}};\nend\n")
            };
            return Verilog::Custom(q);
        }
        // the functions return signed values, which the 32-bit bus takes sign-extended
        let (now, held) = match self._rule {
            FfProducts::Rounded => ("mul_r", "rs"),
            FfProducts::Saturated => ("mul_rs", "sat_rs"),
        };
        let body = if self._registered {
            format!("reg signed [31:0] q;\ninitial q = 32'sd0;\nalways @(posedge clock) q <= mul_raw(w, a);\nalways @(*) p = {held}(q);\n")
        } else {
            format!("always @(*) p = {now}(w, a);\n")
        };
        Verilog::Custom(format!("{}{body}", verilog_functions(self._f, 0)))
    }
}

/// One right neuron's delta in BP: the output layer's stored `sat(a − y)` (its sum
/// saturated), or a hidden layer's `σ′ · sat(Σ w·δ)`: a multiply for a table activation, a
/// gate for ReLU (`hidden_delta`). Registered (`with_registered`), `delta` is the previous
/// clock's, and a multiply is held as its raw product (`mul_raw`, then `sat_rs`).
#[derive(LogicBlock)]
pub struct RightDelta {
    pub clock: Signal<In, Clock>,
    /// The stored output delta (sign-extended) or the hidden delta sum.
    pub acc: Signal<In, Bits<32>>,
    pub sp: Signal<In, Bits<16>>,
    pub delta: Signal<Out, Bits<16>>,
    _f: Format,
    _act: edgeflow_core::fixed::Activation,
    _output_layer: bool,
    _registered: bool,
    _q: i32,
}

impl RightDelta {
    pub fn new(f: Format, act: edgeflow_core::fixed::Activation, output_layer: bool) -> Self {
        RightDelta {
            clock: Default::default(),
            acc: Default::default(),
            sp: Default::default(),
            delta: Default::default(),
            _f: f,
            _act: act,
            _output_layer: output_layer,
            _registered: false,
            _q: 0,
        }
    }

    pub fn with_registered(mut self, registered: bool) -> Self {
        self._registered = registered;
        self
    }

    fn now(&self) -> i32 {
        let s = sat(self._f, s32(self.acc.val()));
        if self._output_layer {
            s
        } else {
            edgeflow_core::fixed::hidden_delta(self._act, self._f, s16(self.sp.val()), s)
        }
    }
}

impl Logic for RightDelta {
    fn update(&mut self) {
        if !self._registered {
            self.delta.next = b16(self.now());
            return;
        }
        if self.clock.pos_edge() {
            self._q = self.now();
        }
        self.delta.next = b16(self._q);
    }
    fn connect(&mut self) {
        self.delta.connect();
    }
    fn hdl(&self) -> Verilog {
        let multiply = !self._output_layer && self._act.is_table();
        let now = if self._output_layer {
            "sat32(acc)"
        } else if multiply {
            "mul_rs(sp, sat32(acc))"
        } else {
            "(sp != 16'd0) ? sat32(acc) : 16'sd0"
        };
        let body = match (self._registered, multiply) {
            (false, _) => format!("always @(*) delta = {now};\n"),
            (true, true) => "reg signed [31:0] q;\ninitial q = 0;\nalways @(posedge clock) q <= mul_raw(sp, sat32(acc));\nalways @(*) delta = sat_rs(q);\n".to_string(),
            (true, false) => format!("reg signed [15:0] q;\ninitial q = 0;\nalways @(posedge clock) q <= {now};\nalways @(*) delta = q;\n"),
        };
        Verilog::Custom(format!("{}{body}", verilog_functions(self._f, 0)))
    }
}

/// One right neuron's sum in FF: the bias on the neuron's first clock, then the products of
/// its group's lanes every clock it runs, exact (`_w` bits), saturated once on the way out:
/// `h` is the saturated accumulator, so a neuron finished in clock `k` appears on `h` during
/// clock `k+1`.
#[derive(LogicBlock)]
pub struct NeuronAccumulator {
    pub clock: Signal<In, Clock>,
    pub run: Signal<In, Bit>,
    pub first: Signal<In, Bit>,
    /// The group's lane products, sign-extended.
    pub p: Vec<Signal<In, Bits<32>>>,
    pub bias: Signal<In, Bits<16>>,
    pub h: Signal<Out, Bits<16>>,
    _f: Format,
    /// Bits of a product with its sign.
    _pb: u32,
    /// Accumulator width in the Verilog.
    _w: u32,
    _acc: i64,
}

impl NeuronAccumulator {
    /// A neuron of `lanes` products of `product_bits` bits each, held in `width` bits.
    pub fn new(lanes: usize, f: Format, product_bits: u32, width: u32) -> Self {
        NeuronAccumulator {
            clock: Default::default(),
            run: Default::default(),
            first: Default::default(),
            p: crate::sigs(lanes),
            bias: Default::default(),
            h: Default::default(),
            _f: f,
            _pb: product_bits,
            _w: width,
            _acc: 0,
        }
    }
}

impl Logic for NeuronAccumulator {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.run.val() {
            let start = if self.first.val() {
                s16(self.bias.val()) as i64
            } else {
                self._acc
            };
            self._acc = start + self.p.iter().map(|p| s32(p.val())).sum::<i64>();
        }
        self.h.next = b16(sat(self._f, self._acc));
    }
    fn connect(&mut self) {
        self.h.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = verilog_functions(self._f, 0);
        let (w, top) = (self._w, self._f.width - 1);
        let (max, neg) = (self._f.max(), -(self._f.min() as i64));
        // In range exactly when the bits from the format's sign bit up are all equal: a
        // reduction, not the carry chains of two comparisons.
        v += &format!(
            "function signed [15:0] sat_acc;\n    input signed [{wm}:0] x;\n    reg signed [{top}:0] y;\n    begin\n        if ((&x[{wm}:{top}]) || !(|x[{wm}:{top}])) y = x[{top}:0];\n        else if (x[{wm}]) y = -{neg};\n        else y = {max};\n        sat_acc = y;\n    end\nendfunction\n",
            wm = w - 1
        );
        v += &format!(
            "function signed [31:0] sxp;\n    input signed [{}:0] x;\n    sxp = x;\nendfunction\n",
            self._pb - 1
        );
        v += &format!("reg signed [{wm}:0] acc;\nreg signed [{wm}:0] sum;\ninitial acc = {w}'sd0;\nalways @(*) begin\n    sum = (first ? sx(bias) : acc)", wm = w - 1);
        for l in 0..self.p.len() {
            v += &format!(" + sxp(p${l})");
        }
        v += ";\n    h = sat_acc(acc);\nend\nalways @(posedge clock) if (run) acc <= sum;\n";
        Verilog::Custom(v)
    }
}
