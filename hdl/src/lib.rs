//! The hardware: rust-hdl blocks of the sparse training datapath, built from a spec at run
//! time (sizes, loop bounds, tables and constants come from the spec; widths are fixed at
//! 16-bit values and 32-bit sums). By what the hardware is: `datapath` (junctions, network,
//! stage), `memory`, `host_link` (the word protocol and its UART transport), `resident`
//! (training on a data set held on the board), `link` (board to board), `board` (board tops,
//! the boards, their Verilator co-simulation); next to them `testbench`, the RTL testbench
//! that clocks them against the reference model. Each block module is also reachable at the
//! crate root. The FPGA tools are the `edgeflow-flow` crate, which knows parts, not this
//! hardware.
pub use edgeflow_core as core;

pub mod board;
pub mod datapath;
pub mod host_link;
pub mod link;
pub mod memory;
pub mod resident;
pub mod sim_util;
pub mod testbench;
pub mod testing;

pub use board::{
    board_top, boards, design, echo_standin, echo_top, ecp5_pll, ice40_pll, linked_top,
    network_top, pty_bridge, sdram_top, verilator_uart,
};
pub use datapath::{
    act_rom, addr_gen, below, bp_unit, control_core, controller, copy_pointer, ff_output, ff_pipe,
    ff_unit, fixed, junction, lane_rng, lanes, network, neuron_sum, params, pipe_regs, sequencer,
    stage, stage_port, up_unit, wiring,
};
pub use host_link::{
    host_stream, input_lanes, resident_protocol, uart_frames, uart_link, uart_rx, uart_sim_port,
    uart_tx, word_stream,
};
pub use memory::{banked_ram, copy_memory, data_memory, delta_memory, sdram_memory};
pub use resident::{record_walker, with_memory};

use rust_hdl::core::prelude::*;

/// Bits that hold every value from 0 to `max` (at least one): the exact width of a counter,
/// pointer or address whose largest value is `max`.
pub(crate) fn bits_for(max: usize) -> u32 {
    (usize::BITS - max.leading_zeros()).max(1)
}

/// A mask of the bits that hold 0 to `max`.
pub(crate) fn mask_for(max: usize) -> u64 {
    (1u64 << bits_for(max)) - 1
}

/// `n` default signals (per-lane or per-group ports).
pub(crate) fn sigs<D: Direction, T: Synth>(n: usize) -> Vec<Signal<D, T>> {
    (0..n).map(|_| Default::default()).collect()
}

pub use network::{verilog, verilog_lanes, Network};
pub use rust_hdl;
