//! The hardware: rust-hdl blocks of the sparse training datapath.
pub use edgeflow_core as core;

pub mod sim_util;
pub mod uart_link;
pub mod uart_rx;
pub mod uart_tx;
