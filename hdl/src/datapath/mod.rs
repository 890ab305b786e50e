//! The sparse training datapath: junctions of lanes doing FF, BP and UP at once, their
//! units, address generators, controller and sequencers, the fixed-point arithmetic in
//! Verilog, and the network and stage that chain junctions (docs/design.md).

pub mod act_rom;
pub mod addr_gen;
pub mod below;
pub mod bp_unit;
pub mod control_core;
pub mod controller;
pub mod copy_pointer;
pub mod ff_output;
pub mod ff_pipe;
pub mod ff_unit;
pub mod fixed;
pub mod junction;
pub mod lane_rng;
pub mod lanes;
pub mod network;
pub mod neuron_sum;
pub mod params;
pub mod pipe_regs;
pub mod sequencer;
pub mod stage;
pub mod stage_port;
pub mod up_unit;
pub mod wiring;
