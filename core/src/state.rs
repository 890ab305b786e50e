//! The complete trainable state (every weight and bias), its deterministic initialisation and
//! its canonical serialization, so two backends are compared by one SHA-256.

use crate::data::hex;
use crate::pattern::JunctionPattern;
use crate::rng::SplitMix64;
use crate::spec::Spec;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// `weights[j][e]`: junction `j` (0-based), edge `e` in right-neuron-major order.
    pub weights: Vec<Vec<i32>>,
    /// `biases[j][n]`: right neuron `n` of junction `j`.
    pub biases: Vec<Vec<i32>>,
}

/// Why a state does not fit a spec.
#[derive(Debug, thiserror::Error)]
pub enum ShapeError {
    #[error("state has {have} junctions, spec '{spec}' has {want}")]
    Junctions {
        have: usize,
        spec: String,
        want: usize,
    },
    #[error("junction {junction}: state has {weights} weights and {biases} biases, spec needs {want_weights} and {want_biases}")]
    Junction {
        junction: usize,
        weights: usize,
        biases: usize,
        want_weights: usize,
        want_biases: usize,
    },
    #[error("junction {junction}: value {value} is outside the {width}-bit format")]
    OutOfFormat {
        junction: usize,
        value: i32,
        width: u32,
    },
}

impl State {
    /// Glorot-uniform weights, `U(-√(6/(fi+fo)), +√(6/(fi+fo)))`, quantized; zero biases.
    /// Drawn per junction from an independent stream of the spec's weight seed.
    pub fn initial(spec: &Spec) -> State {
        let f = spec.format();
        let mut weights = Vec::new();
        let mut biases = Vec::new();
        for j in 0..spec.junctions() {
            let fi = spec.fan_in(j);
            let fo = spec.fan_out[j];
            let limit = (6.0 / (fi + fo) as f64).sqrt();
            let mut rng = SplitMix64::derive(spec.seed, "weights", j as u64);
            let n = spec.layers[j] * fo;
            weights.push(
                (0..n)
                    .map(|_| f.quantize((rng.next_f64() * 2.0 - 1.0) * limit))
                    .collect(),
            );
            biases.push(vec![0; spec.layers[j + 1]]);
        }
        State { weights, biases }
    }

    /// Canonical bytes: magic, junction count, then per junction the edge and neuron counts
    /// and every weight then every bias as little-endian `i16`.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut b = b"edgeflow-state-v1\0".to_vec();
        b.extend_from_slice(&(self.weights.len() as u32).to_le_bytes());
        for (w, bias) in self.weights.iter().zip(&self.biases) {
            b.extend_from_slice(&(w.len() as u32).to_le_bytes());
            b.extend_from_slice(&(bias.len() as u32).to_le_bytes());
            for &v in w.iter().chain(bias.iter()) {
                b.extend_from_slice(&(v as i16).to_le_bytes());
            }
        }
        b
    }

    pub fn sha256(&self) -> String {
        hex(&Sha256::digest(self.canonical_bytes()))
    }

    /// Check that the state has the shape of the spec.
    pub fn check_shape(&self, spec: &Spec) -> Result<(), ShapeError> {
        let l = spec.junctions();
        if self.weights.len() != l || self.biases.len() != l {
            return Err(ShapeError::Junctions {
                have: self.weights.len(),
                spec: spec.name.clone(),
                want: l,
            });
        }
        let f = spec.format();
        for j in 0..l {
            let (we, be) = (spec.layers[j] * spec.fan_out[j], spec.layers[j + 1]);
            if self.weights[j].len() != we || self.biases[j].len() != be {
                return Err(ShapeError::Junction {
                    junction: j + 1,
                    weights: self.weights[j].len(),
                    biases: self.biases[j].len(),
                    want_weights: we,
                    want_biases: be,
                });
            }
            if let Some(&value) = self.weights[j]
                .iter()
                .chain(&self.biases[j])
                .find(|&&v| v < f.min() || v > f.max())
            {
                return Err(ShapeError::OutOfFormat {
                    junction: j + 1,
                    value,
                    width: f.width,
                });
            }
        }
        Ok(())
    }

    /// First difference against `other`, as a sentence naming junction, edge or neuron.
    pub fn first_difference(
        &self,
        other: &State,
        patterns: Option<&[JunctionPattern]>,
    ) -> Option<String> {
        for j in 0..self.weights.len().min(other.weights.len()) {
            for (e, (a, b)) in self.weights[j].iter().zip(&other.weights[j]).enumerate() {
                if a != b {
                    let at = patterns
                        .map(|p| {
                            let i = p[j].edge(e);
                            format!(" (left neuron {} → right neuron {})", i.left, i.right)
                        })
                        .unwrap_or_default();
                    return Some(format!(
                        "junction {} weight of edge {e}{at}: expected {a}, got {b}",
                        j + 1
                    ));
                }
            }
            for (n, (a, b)) in self.biases[j].iter().zip(&other.biases[j]).enumerate() {
                if a != b {
                    return Some(format!(
                        "junction {} bias of right neuron {n}: expected {a}, got {b}",
                        j + 1
                    ));
                }
            }
        }
        if self.weights.len() != other.weights.len() {
            return Some("different number of junctions".into());
        }
        None
    }
}
