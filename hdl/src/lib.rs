//! The hardware: rust-hdl blocks of the sparse training datapath, built from a spec at run
//! time (sizes, loop bounds, tables and constants come from the spec; widths are fixed at
//! 16-bit values and 32-bit sums).
pub use edgeflow_core as core;

pub mod act_rom;
pub mod addr_gen;
pub mod banked_ram;
pub mod below;
pub mod bp_unit;
pub mod controller;
pub mod copy_memory;
pub mod data_memory;
pub mod delta_memory;
pub mod ff_output;
pub mod ff_pipe;
pub mod ff_unit;
pub mod fixed;
pub mod host_link;
pub mod input_lanes;
pub mod junction;
pub mod lane_rng;
pub mod lanes;
pub mod link;
pub mod network;
pub mod neuron_sum;
pub mod params;
pub mod pipe_regs;
pub mod record_walker;
pub mod resident;
pub mod resident_protocol;
pub mod sequencer;
pub mod stage;
pub mod stage_port;
pub mod testing;
pub mod up_unit;
pub mod wiring;

use rust_hdl::core::prelude::*;

/// `n` default signals (per-lane or per-group ports).
pub(crate) fn sigs<D: Direction, T: Synth>(n: usize) -> Vec<Signal<D, T>> {
    (0..n).map(|_| Default::default()).collect()
}

pub use network::{verilog, verilog_lanes, Network};
pub mod board_top;
pub mod boards;
pub mod echo_standin;
pub mod echo_top;
pub mod ecp5_pll;
pub mod flow;
pub mod host_stream;
pub mod ice40_pll;
pub mod sim_util;
pub mod uart_frames;
pub mod uart_link;
pub mod uart_rx;
pub mod uart_tx;
pub use rust_hdl;
pub mod design;
pub mod network_top;
pub mod uart_sim_port;
