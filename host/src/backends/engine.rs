//! What a backend opens into: a board, which computes the reference model's bits, or a float
//! network, which learns the same task in floating point for comparison.

use crate::board::Board;
use anyhow::{bail, Result};
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_reference::{DenseMiniBatch, DenseReference, FloatReference, SparseF32};

/// A float network: trained and asked like a board, but with no fixed-point state to read.
pub trait FloatNet {
    fn train(&mut self, d: &Encoded);
    fn infer(&mut self, d: &Encoded) -> Vec<usize>;
    /// Back to the network's initial weights.
    fn reset(&mut self, spec: &Spec);
    fn edge_ops_per_sample(&self, spec: &Spec) -> u64;
    /// Whether all of its work happens on the calling thread (so its CPU time means something).
    fn on_calling_thread(&self) -> bool {
        true
    }
    /// Start from a fixed-point state (`train --init`), where the network can take one.
    fn load_state(&mut self, _state: &State) -> Result<()> {
        bail!("this float baseline has another shape than the spec's network; it cannot start from a model")
    }
}

pub enum Engine {
    Board(Box<dyn Board>),
    /// A float network and its backend's name.
    Float(&'static str, Box<dyn FloatNet>),
}

impl Engine {
    /// A float network; [`super::Choice::open`] gives it its backend's name.
    pub fn float(net: impl FloatNet + 'static) -> Engine {
        Engine::Float("", Box::new(net))
    }

    pub fn name(&self) -> String {
        match self {
            Engine::Board(b) => b.name(),
            Engine::Float(name, _) => name.to_string(),
        }
    }

    pub fn train(&mut self, d: &Encoded) -> Result<()> {
        match self {
            Engine::Board(b) => b.train(d),
            Engine::Float(_, f) => {
                f.train(d);
                Ok(())
            }
        }
    }

    pub fn infer(&mut self, d: &Encoded) -> Result<Vec<usize>> {
        match self {
            Engine::Board(b) => b.infer(d),
            Engine::Float(_, f) => Ok(f.infer(d)),
        }
    }

    /// Start from `state` (`train --init`): a board loads it as it loads the spec's initial
    /// state; the float reference takes its values.
    pub fn load_state(&mut self, state: &State) -> Result<()> {
        match self {
            Engine::Board(b) => b.load_state(state),
            Engine::Float(_, f) => f.load_state(state),
        }
    }

    /// Back to the spec's initial state, for another timed run on the same stream.
    pub fn reset(&mut self, spec: &Spec) -> Result<()> {
        match self {
            Engine::Board(b) => b.load_state(&State::initial(spec)),
            Engine::Float(_, f) => {
                f.reset(spec);
                Ok(())
            }
        }
    }

    pub fn edge_ops_per_sample(&self, spec: &Spec) -> u64 {
        match self {
            Engine::Board(b) => b.edge_ops_per_sample(),
            Engine::Float(_, f) => f.edge_ops_per_sample(spec),
        }
    }

    /// Whether all of its work happens on the calling thread (a board is asked by its backend's
    /// entry, [`super::Backend::cpu_reference`]).
    pub fn on_calling_thread(&self) -> bool {
        match self {
            Engine::Board(b) => b.on_calling_thread(),
            Engine::Float(_, f) => f.on_calling_thread(),
        }
    }

    /// The fixed-point state, which only a board has.
    pub fn read_state(&mut self) -> Result<Option<State>> {
        match self {
            Engine::Board(b) => b.read_state().map(Some),
            Engine::Float(..) => Ok(None),
        }
    }
}

/// FF on every edge, UP on every edge, BP on the edges of hidden junctions.
pub fn sparse_edge_ops(spec: &Spec) -> u64 {
    spec.edge_ops_per_sample() as u64
}

impl FloatNet for FloatReference {
    fn train(&mut self, d: &Encoded) {
        FloatReference::train(self, d)
    }
    fn infer(&mut self, d: &Encoded) -> Vec<usize> {
        FloatReference::infer(self, d)
    }
    fn reset(&mut self, spec: &Spec) {
        *self = FloatReference::new(spec);
    }
    fn edge_ops_per_sample(&self, spec: &Spec) -> u64 {
        sparse_edge_ops(spec)
    }
    /// The same network as the state's: it takes the state's values as reals.
    fn load_state(&mut self, state: &State) -> Result<()> {
        let fmt = self.spec.format();
        let real = |v: &Vec<Vec<i32>>| -> Vec<Vec<f64>> {
            v.iter()
                .map(|w| w.iter().map(|&x| fmt.to_f64(x)).collect())
                .collect()
        };
        self.weights = real(&state.weights);
        self.biases = real(&state.biases);
        Ok(())
    }
}

impl FloatNet for SparseF32 {
    fn train(&mut self, d: &Encoded) {
        SparseF32::train(self, d)
    }
    fn infer(&mut self, d: &Encoded) -> Vec<usize> {
        SparseF32::infer(self, d)
    }
    fn reset(&mut self, spec: &Spec) {
        *self = SparseF32::new(spec).with_threads(self.threads());
    }
    fn edge_ops_per_sample(&self, spec: &Spec) -> u64 {
        sparse_edge_ops(spec)
    }
    fn on_calling_thread(&self) -> bool {
        self.threads() == 1
    }
}

impl FloatNet for DenseReference {
    fn train(&mut self, d: &Encoded) {
        DenseReference::train(self, d)
    }
    fn infer(&mut self, d: &Encoded) -> Vec<usize> {
        DenseReference::infer(self, d)
    }
    fn reset(&mut self, spec: &Spec) {
        *self = DenseReference::new(spec);
    }
    fn edge_ops_per_sample(&self, _: &Spec) -> u64 {
        DenseReference::edge_ops_per_sample(self)
    }
}

impl FloatNet for DenseMiniBatch {
    fn train(&mut self, d: &Encoded) {
        DenseMiniBatch::train(self, d)
    }
    fn infer(&mut self, d: &Encoded) -> Vec<usize> {
        DenseMiniBatch::infer(self, d)
    }
    fn reset(&mut self, spec: &Spec) {
        *self = DenseMiniBatch::new(spec, self.batch, self.threads);
    }
    fn edge_ops_per_sample(&self, _: &Spec) -> u64 {
        DenseMiniBatch::edge_ops_per_sample(self)
    }
    fn on_calling_thread(&self) -> bool {
        self.threads == 1
    }
}
