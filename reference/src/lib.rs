//! The bit-exact reference model (the definition of every bit every backend computes), the
//! float reference, and the CPU baselines the benchmarks compare against. No hardware crate:
//! the OpenCL host and anything else that needs only the schedule builds without rust-hdl.

pub mod dense;
pub mod error;
pub mod float;
pub mod kernels;
pub mod minibatch;
pub mod random;
pub mod reference;
pub mod sparse;
pub mod trace;
pub mod words;

pub use dense::DenseReference;
pub use error::{ModelError, StalenessError};
pub use float::FloatReference;
pub use minibatch::DenseMiniBatch;
pub use reference::{accuracy, argmax, check_staleness, Reference, Schedule, Work};
pub use sparse::SparseF32;
