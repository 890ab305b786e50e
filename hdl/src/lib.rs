//! The hardware: rust-hdl blocks of the sparse training datapath.
pub use edgeflow_core as core;

pub mod board_top;
pub mod boards;
pub mod echo_standin;
pub mod echo_top;
pub mod flow;
pub mod host_stream;
pub mod ice40_pll;
pub mod sim_util;
pub mod uart_link;
pub mod uart_rx;
pub mod uart_tx;
pub use rust_hdl;
pub mod design;
pub mod uart_sim_port;
