//! Simulation: the bit-exact reference model, the float reference, and (with the hdl crate)
//! the RTL testbench that compares the hardware against the reference.

pub mod dense;
pub mod float;
pub mod kernels;
pub mod minibatch;
pub mod random;
pub mod reference;
pub mod rtl;
pub mod rtl_stage;
pub mod sparse;
pub mod trace;
pub mod words;

pub use dense::DenseReference;
pub use float::FloatReference;
pub use minibatch::DenseMiniBatch;
pub use reference::{accuracy, argmax, check_staleness, Reference, Schedule, Work};
pub use sparse::SparseF32;
