//! The state as dense matrices, the form other frameworks hold a layer in, and back.
//!
//! Junction `j`'s matrix has one row per right neuron and one column per left neuron
//! (`rows × cols = N_j × N_{j-1}`, the orientation of a PyTorch `Linear` weight): entry
//! `(r, c)` is the weight of the edge from left neuron `c` to right neuron `r`, and zero
//! where the pattern has no edge. The mask holds 1 on the pattern, 0 elsewhere.

use crate::pattern::JunctionPattern;
use crate::spec::Spec;
use crate::state::State;

/// One junction in dense form, raw fixed-point values (the value is `raw · 2^-frac_bits`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenseJunction {
    /// Right neurons.
    pub rows: usize,
    /// Left neurons.
    pub cols: usize,
    /// `rows × cols`, row-major: 1 where the pattern has an edge.
    pub mask: Vec<u8>,
    /// `rows × cols`, row-major: the edge's weight, 0 off the pattern.
    pub weight: Vec<i32>,
    pub bias: Vec<i32>,
}

/// Every junction of `state` (which has the shape of `spec`) as a dense matrix.
pub fn to_dense(spec: &Spec, state: &State) -> Vec<DenseJunction> {
    JunctionPattern::all(spec)
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let (rows, cols) = (p.right, p.left);
            let mut mask = vec![0u8; rows * cols];
            let mut weight = vec![0i32; rows * cols];
            for (e, &left) in p.left_of_edge.iter().enumerate() {
                let at = (e / p.fan_in) * cols + left as usize;
                mask[at] = 1;
                weight[at] = state.weights[j][e];
            }
            DenseJunction {
                rows,
                cols,
                mask,
                weight,
                bias: state.biases[j].clone(),
            }
        })
        .collect()
}

/// Real-valued weights for one junction, as another framework trained them: `rows × cols`
/// row-major in the orientation above, and one bias per right neuron.
pub struct RealJunction<'a> {
    pub weight: &'a [f64],
    pub bias: &'a [f64],
}

/// What [`from_real`] did besides rounding: values beyond the format, set to its limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantized {
    pub state: State,
    pub saturated: usize,
}

/// Why dense matrices cannot become a state.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("junction {junction}: weight at row {row} (right neuron), column {column} (left neuron) is {value}, but the spec's pattern has no edge there ({off} nonzero weight{} off the pattern in this junction); train with the exported masks (multiply each weight by its mask) so only the pattern's edges are nonzero", plural(.off))]
    OffPattern {
        junction: usize,
        row: usize,
        column: usize,
        value: f64,
        off: usize,
    },
    #[error("{what} is {value}, not a finite number")]
    NotFinite { what: String, value: f64 },
}

fn plural(n: &usize) -> &'static str {
    if *n == 1 {
        ""
    } else {
        "s"
    }
}

/// The state of `spec` holding `junctions`' values, each rounded to the spec's format to
/// nearest, ties up (`Format::quantize`, the rounding of the initial weights), and saturated
/// at the format's limits. The caller has checked the shapes (`rows × cols` and `rows`).
/// A nonzero weight where the pattern has no edge is an error naming its junction (from 1),
/// row (right neuron) and column (left neuron); so is a value that is not a finite number.
pub fn from_real(spec: &Spec, junctions: &[RealJunction]) -> Result<Quantized, ImportError> {
    let f = spec.format();
    let patterns = JunctionPattern::all(spec);
    let mut state = State {
        weights: Vec::new(),
        biases: Vec::new(),
    };
    let mut saturated = 0;
    let mut q = |v: f64, what: &dyn Fn() -> String| -> Result<i32, ImportError> {
        if !v.is_finite() {
            return Err(ImportError::NotFinite {
                what: what(),
                value: v,
            });
        }
        let raw = f.quantize(v);
        let exact = (v * (1u64 << f.frac_bits) as f64 + 0.5).floor();
        if exact != raw as f64 {
            saturated += 1;
        }
        Ok(raw)
    };
    for (j, (p, real)) in patterns.iter().zip(junctions).enumerate() {
        let cols = p.left;
        assert_eq!(
            real.weight.len(),
            p.right * cols,
            "shape checked by the caller"
        );
        let mut on = vec![false; p.right * cols];
        for (e, &left) in p.left_of_edge.iter().enumerate() {
            on[(e / p.fan_in) * cols + left as usize] = true;
        }
        let off: Vec<usize> = (0..on.len())
            .filter(|&i| !on[i] && real.weight[i] != 0.0)
            .collect();
        if let Some(&i) = off.first() {
            return Err(ImportError::OffPattern {
                junction: j + 1,
                row: i / cols,
                column: i % cols,
                value: real.weight[i],
                off: off.len(),
            });
        }
        let mut w = Vec::with_capacity(p.left_of_edge.len());
        for (e, &left) in p.left_of_edge.iter().enumerate() {
            let (r, c) = (e / p.fan_in, left as usize);
            let what = || format!("junction {}: weight at row {r}, column {c}", j + 1);
            w.push(q(real.weight[r * cols + c], &what)?);
        }
        let mut b = Vec::with_capacity(p.right);
        for (r, &v) in real.bias.iter().enumerate() {
            b.push(q(v, &|| format!("junction {}: bias of row {r}", j + 1))?);
        }
        state.weights.push(w);
        state.biases.push(b);
    }
    Ok(Quantized { state, saturated })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn tiny() -> Spec {
        Spec::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../specs/tiny.toml"
        )))
        .unwrap()
    }

    fn real(spec: &Spec, d: &[DenseJunction]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let f = spec.format();
        (
            d.iter()
                .map(|j| j.weight.iter().map(|&v| f.to_f64(v)).collect())
                .collect(),
            d.iter()
                .map(|j| j.bias.iter().map(|&v| f.to_f64(v)).collect())
                .collect(),
        )
    }

    fn junctions<'a>(w: &'a [Vec<f64>], b: &'a [Vec<f64>]) -> Vec<RealJunction<'a>> {
        w.iter()
            .zip(b)
            .map(|(w, b)| RealJunction { weight: w, bias: b })
            .collect()
    }

    #[test]
    fn dense_and_back_is_the_identity_and_masks_hold_fan_in_ones_per_row() {
        let s = tiny();
        let mut st = State::initial(&s);
        st.biases[1][3] = -5;
        let d = to_dense(&s, &st);
        for (j, dj) in d.iter().enumerate() {
            for r in 0..dj.rows {
                let ones: usize = dj.mask[r * dj.cols..(r + 1) * dj.cols]
                    .iter()
                    .map(|&m| m as usize)
                    .sum();
                assert_eq!(ones, s.fan_in(j), "junction {j} row {r}");
            }
        }
        let (w, b) = real(&s, &d);
        let back = from_real(&s, &junctions(&w, &b)).unwrap();
        assert_eq!(back.state, st);
        assert_eq!(back.saturated, 0);
    }

    #[test]
    fn off_pattern_weights_are_named_and_large_values_saturate() {
        let s = tiny();
        let d = to_dense(&s, &State::initial(&s));
        let (mut w, mut b) = real(&s, &d);
        let i = d[1].mask.iter().position(|&m| m == 0).unwrap();
        w[1][i] = 0.25;
        let e = from_real(&s, &junctions(&w, &b)).err().unwrap();
        let (r, c) = (i / d[1].cols, i % d[1].cols);
        assert!(
            e.to_string().contains(&format!(
                "junction 2: weight at row {r} (right neuron), column {c} (left neuron) is 0.25"
            )),
            "{e}"
        );
        w[1][i] = 0.0;
        b[0][0] = 1e9;
        b[0][1] = -1e9;
        let q = from_real(&s, &junctions(&w, &b)).unwrap();
        let f = s.format();
        assert_eq!(
            (q.state.biases[0][0], q.state.biases[0][1]),
            (f.max(), f.min())
        );
        assert_eq!(q.saturated, 2);
        b[0][0] = f64::NAN;
        let e = from_real(&s, &junctions(&w, &b)).err().unwrap();
        assert!(
            e.to_string().contains("junction 1: bias of row 0 is NaN"),
            "{e}"
        );
    }

    #[test]
    fn import_rounds_to_nearest_ties_up() {
        let s = tiny();
        let d = to_dense(&s, &State::initial(&s));
        let (mut w, b) = real(&s, &d);
        let step = 1.0 / (1u64 << s.fixed.frac_bits) as f64;
        let i = d[0].mask.iter().position(|&m| m == 1).unwrap();
        let e = (0..s.layers[0] * s.fan_out[0])
            .find(|&e| {
                let p = &JunctionPattern::all(&s)[0];
                (e / p.fan_in) * p.left + p.left_of_edge[e] as usize == i
            })
            .unwrap();
        for (v, want) in [
            (2.5 * step, 3),
            (-2.5 * step, -2),
            (2.49 * step, 2),
            (-2.51 * step, -3),
        ] {
            w[0][i] = v;
            let q = from_real(&s, &junctions(&w, &b)).unwrap();
            assert_eq!(q.state.weights[0][e], want, "{v}");
        }
    }
}
