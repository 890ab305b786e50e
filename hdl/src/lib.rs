//! The hardware: rust-hdl blocks of the sparse training datapath.
pub use edgeflow_core as core;
