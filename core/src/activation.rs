//! Activation functions (step 5 of the contract in `fixed.rs`) and their hidden deltas
//! (step 7). Everything an activation is lives here: every backend asks
//! [`Activation::is_table`] which of the two hardware forms it takes and reads the table's
//! contents from [`ActivationTable`], so a new smooth activation is one match arm in
//! [`Activation::real`] (and its name in the lists below).
//!
//! - A **table activation** (sigmoid, tanh): `a` and its slope `σ′` are read from a table
//!   indexed by the top bits of the saturated pre-activation; the hidden delta multiplies by
//!   `σ′`.
//! - **ReLU**: `a = max(h, 0)`, and `σ′` is a gate (`h > 0`) rather than a multiplication by
//!   1, which the format may not even represent when `int_bits = 0`.

use crate::fixed::Format;
use crate::rounding::Rounding;
use serde::{Deserialize, Serialize};

/// Hidden-layer activation function (the output layer is always the sigmoid, with
/// cross-entropy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    Sigmoid,
    Relu,
    Tanh,
}

impl Activation {
    /// Every activation, in the order the CLI lists them and random specs draw from.
    pub const ALL: [Activation; 3] = [Activation::Sigmoid, Activation::Relu, Activation::Tanh];

    /// The spec's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Activation::Sigmoid => "sigmoid",
            Activation::Relu => "relu",
            Activation::Tanh => "tanh",
        }
    }

    /// The ONNX operator that computes it.
    pub fn onnx_op(self) -> &'static str {
        match self {
            Activation::Sigmoid => "Sigmoid",
            Activation::Relu => "Relu",
            Activation::Tanh => "Tanh",
        }
    }

    /// Whether `a` and `σ′` come from an [`ActivationTable`]; otherwise it is ReLU, a
    /// comparison and a gate.
    pub fn is_table(self) -> bool {
        self != Activation::Relu
    }

    /// The function and its slope at `x`, in floating point: what the tables hold (at their
    /// buckets' midpoints) and what the float baselines compute.
    pub fn real(self, x: f64) -> (f64, f64) {
        match self {
            Activation::Sigmoid => {
                let s = 1.0 / (1.0 + (-x).exp());
                (s, s * (1.0 - s))
            }
            Activation::Relu => {
                if x > 0.0 {
                    (x, 1.0)
                } else {
                    (0.0, 0.0)
                }
            }
            Activation::Tanh => {
                let t = x.tanh();
                (t, 1.0 - t * t)
            }
        }
    }

    /// The function in `f32` (the `f32` baselines).
    #[inline(always)]
    pub fn value_f32(self, x: f32) -> f32 {
        match self {
            Activation::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Activation::Relu => x.max(0.0),
            Activation::Tanh => x.tanh(),
        }
    }

    /// The slope in `f32` from the function's value `a` (the `f32` baselines keep only `a`).
    #[inline(always)]
    pub fn slope_of_value_f32(self, a: f32) -> f32 {
        match self {
            Activation::Sigmoid => a * (1.0 - a),
            Activation::Relu => (a > 0.0) as u8 as f32,
            Activation::Tanh => 1.0 - a * a,
        }
    }

    /// The rounding of the updates when the spec names none. Measured on the learning-quality
    /// grid (docs/quality): stochastic rounding closes the gap to float of sigmoid networks at
    /// 8–12 bits, while ReLU networks learn a little better with nearest; tanh, smooth and
    /// bounded like the sigmoid, takes the sigmoid's.
    pub fn default_rounding(self) -> Rounding {
        if self.is_table() {
            Rounding::Stochastic
        } else {
            Rounding::Nearest
        }
    }
}

/// The ReLU gate (σ′) at a pre-activation saturated at the format's maximum (step 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReluGate {
    /// Shut: a clipped activation passes no delta back.
    #[default]
    Clipped,
    /// Open for every `h > 0`, as if the activation were not clipped.
    Plain,
}

/// Number of top bits of the pre-activation that index a table: the whole value for narrow
/// formats, 10 bits (1024 entries, one iCE40 SPRAM-free EBR pair) for wider ones.
pub const MAX_TABLE_INDEX_BITS: u32 = 10;

/// A layer's activation data: for a table activation, `a` (`sigma`) and `σ′` (`sigma_prime`)
/// at the value format for each bucket of pre-activations; for ReLU, the gate rule alone
/// (the tables are empty).
///
/// The pre-activation `h` covers `[-2^int_bits, 2^int_bits)`; its top `index_bits` bits
/// (as an unsigned offset, `(h >> drop) + 2^(index_bits-1)`) select a bucket, whose entry is
/// the function and its slope at the bucket's midpoint ([`Activation::real`]), rounded half
/// up and saturated. The table is built in `f64` once, here, and handed to every backend as
/// data, so no backend evaluates `exp` or `tanh`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActivationTable {
    pub activation: Activation,
    pub format: Format,
    pub index_bits: u32,
    pub sigma: Vec<i32>,
    pub sigma_prime: Vec<i32>,
    /// ReLU's gate at the format's maximum.
    pub relu_gate: ReluGate,
}

impl ActivationTable {
    pub fn new(activation: Activation, format: Format) -> Self {
        let index_bits = format.width.min(MAX_TABLE_INDEX_BITS);
        let drop = format.width - index_bits;
        let n = if activation.is_table() {
            1usize << index_bits
        } else {
            0
        };
        let mut sigma = Vec::with_capacity(n);
        let mut sigma_prime = Vec::with_capacity(n);
        for idx in 0..n {
            let lo = ((idx as i64) - (n as i64 / 2)) << drop;
            // Midpoint of the bucket in raw units; a one-value bucket is its own midpoint.
            let mid = lo as f64 + ((1i64 << drop) as f64 - 1.0) / 2.0;
            let (a, slope) = activation.real(mid / (1u64 << format.frac_bits) as f64);
            sigma.push(format.quantize(a));
            sigma_prime.push(format.quantize(slope));
        }
        ActivationTable {
            activation,
            format,
            index_bits,
            sigma,
            sigma_prime,
            relu_gate: ReluGate::Plain,
        }
    }

    pub fn sigmoid(format: Format) -> Self {
        Self::new(Activation::Sigmoid, format)
    }

    pub fn with_relu_gate(mut self, gate: ReluGate) -> Self {
        self.relu_gate = gate;
        self
    }

    /// Whether ReLU's gate is open at the saturated pre-activation `h > 0`.
    #[inline(always)]
    pub fn relu_gate_open(&self, h: i32) -> bool {
        h > 0 && !(self.relu_gate == ReluGate::Clipped && h == self.format.max())
    }

    /// Table index of a saturated pre-activation.
    #[inline(always)]
    pub fn index(&self, h: i32) -> usize {
        let drop = self.format.width - self.index_bits;
        ((h >> drop) + (1i32 << (self.index_bits - 1))) as usize
    }

    /// Number of low bits of the pre-activation the index ignores.
    pub fn drop_bits(&self) -> u32 {
        self.format.width - self.index_bits
    }
}

/// Activation of one saturated pre-activation by the layer's `table`: `(a, σ′)` where for
/// ReLU `σ′` is the gate (1 when `h > 0`, else 0) and for a table activation it is the
/// table's slope at the format.
#[inline(always)]
pub fn activate(table: &ActivationTable, h: i32) -> (i32, i32) {
    if table.activation.is_table() {
        let i = table.index(h);
        (table.sigma[i], table.sigma_prime[i])
    } else {
        (h.max(0), table.relu_gate_open(h) as i32)
    }
}

/// Hidden delta from the saturated back-propagated sum (step 7 of the contract).
#[inline(always)]
pub fn hidden_delta(act: Activation, format: Format, sigma_prime: i32, sum: i32) -> i32 {
    if act.is_table() {
        format.mul(sigma_prime, sum)
    } else if sigma_prime != 0 {
        sum
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigmoid_table_is_monotone_symmetric_and_exact_at_zero() {
        for (i, fr) in [(2, 7), (3, 12), (0, 9), (7, 8)] {
            let f = Format::new(i, fr);
            let t = ActivationTable::sigmoid(f);
            assert_eq!(t.sigma.len(), 1 << f.width.min(MAX_TABLE_INDEX_BITS));
            assert!(t.sigma.windows(2).all(|w| w[0] <= w[1]));
            // every entry is σ at the bucket midpoint, within half an ulp
            for h in [f.min(), -1, 0, 1, f.max()] {
                let (s, ds) = activate(&t, h);
                let x = f.to_f64(h);
                let exact = 1.0 / (1.0 + (-x).exp());
                let bucket = f.to_f64(1 << t.drop_bits());
                assert!(
                    (f.to_f64(s) - exact).abs() <= bucket / 4.0 + f.to_f64(1),
                    "{h}"
                );
                assert!(ds >= 0 && ds <= f.quantize(0.25));
            }
        }
    }

    #[test]
    fn relu_gate() {
        let f = Format::new(2, 7);
        let t = ActivationTable::new(Activation::Relu, f);
        assert_eq!(activate(&t, -5), (0, 0));
        assert_eq!(activate(&t, 0), (0, 0));
        assert_eq!(activate(&t, 9), (9, 1));
        // at the format's maximum the gate shuts only under the clipped rule
        assert_eq!(activate(&t, 511), (511, 1));
        let c = t.clone().with_relu_gate(ReluGate::Clipped);
        assert_eq!(activate(&c, 511), (511, 0));
        assert_eq!(activate(&c, 510), (510, 1));
        assert_eq!(activate(&c, -1), (0, 0));
        assert_eq!(hidden_delta(Activation::Relu, f, 1, -300), -300);
        assert_eq!(hidden_delta(Activation::Relu, f, 0, -300), 0);
        assert_eq!(hidden_delta(Activation::Sigmoid, f, 32, 128), 32);
    }

    #[test]
    fn tanh_table_is_odd_bounded_by_one_and_close_to_tanh() {
        for (i, fr) in [(2, 7), (3, 12), (0, 9), (1, 4)] {
            let f = Format::new(i, fr);
            let t = ActivationTable::new(Activation::Tanh, f);
            assert_eq!(t.sigma.len(), 1 << f.width.min(MAX_TABLE_INDEX_BITS));
            assert!(t.sigma.windows(2).all(|w| w[0] <= w[1]));
            let bucket = f.to_f64(1 << t.drop_bits());
            for h in f.min()..=f.max() {
                let (a, da) = activate(&t, h);
                // within the bucket's width of tanh(h) (slope ≤ 1) and half an ulp
                let x = f.to_f64(h);
                assert!(
                    (f.to_f64(a) - x.tanh()).abs() <= bucket + f.to_f64(1),
                    "{h}"
                );
                assert!(a.abs() <= f.one() && (0..=f.one()).contains(&da), "{h}");
            }
            // odd: the table's halves mirror each other up to the buckets' offset
            let (lo, hi) = (activate(&t, f.min()).0, activate(&t, f.max()).0);
            assert!(
                lo < 0 && hi > 0 && (lo + hi).abs() <= 1,
                "({i}, {fr}): {lo} {hi}"
            );
        }
        assert_eq!(Activation::Tanh.default_rounding(), Rounding::Stochastic);
        assert!(Activation::Tanh.is_table() && !Activation::Relu.is_table());
    }
}
