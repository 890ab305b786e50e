//! Pure-Rust foundations every edgeflow crate shares, with no hardware dependencies: the
//! network spec, the fixed-point contract, clash-free patterns, data sets, the order training
//! visits them in, and the state.

pub mod activation;
pub mod advice;
pub mod boards;
pub mod data;
pub mod fixed;
pub mod matrices;
pub mod order;
pub mod overlap;
pub mod pattern;
pub mod resident;
pub mod rng;
pub mod rounding;
pub mod scaling;
pub mod spec;
pub mod state;

pub use data::{Dataset, Encoded};
pub use fixed::{Activation, ActivationTable, FfProducts, Format, OutputDelta, ReluGate};
pub use pattern::JunctionPattern;
pub use rounding::{LaneRng, Rounding};
pub use scaling::{ScaleKind, Scaling};
pub use spec::{Derived, PatternKind, Spec, SpecError};
pub use state::State;
