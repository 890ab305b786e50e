//! The hardware: rust-hdl blocks of the sparse training datapath, built from a spec at run
//! time (sizes, loop bounds, tables and constants come from the spec; widths are fixed at
//! 16-bit values and 32-bit sums).
pub use edgeflow_core as core;

pub mod act_rom;
pub mod addr_gen;
pub mod controller;
mod controller_verilog;
pub mod fixed;
pub mod junction;
mod junction_verilog;
pub mod network;
pub mod params;
pub mod testing;

pub use network::{verilog, Network};
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
pub mod network_top;
