//! Boards: everything that can hold a network's state and train or infer on it. The
//! reference model, OpenCL devices, the RTL simulation and (later) a serial link to a real
//! board all implement [`Board`], so every command drives them the same way and every one of
//! them is compared against the reference model bit for bit.

#[cfg(test)]
mod board_top_cosim;
pub mod hostlink;
pub mod opencl;
pub mod reference;
pub mod resident;
pub mod rtl;
pub mod rtl_stage;
pub mod serial;
#[cfg(test)]
mod serial_frames_tests;
pub mod verilator;

use anyhow::Result;
use edgeflow_core::{Encoded, State};

pub trait Board {
    /// A short name for reports, e.g. `reference` or `opencl:pthread-cpu`.
    fn name(&self) -> String;
    /// Whether its training runs on the calling thread alone (so that thread's CPU time
    /// measures it).
    fn on_calling_thread(&self) -> bool {
        true
    }
    /// Replace the complete state (every weight and bias). New weights start a training run:
    /// the stochastic-rounding lane generators start again from the spec's seed.
    fn load_state(&mut self, state: &State) -> Result<()>;
    /// Train on one stream of samples: the pipeline fills, runs and drains.
    fn train(&mut self, data: &Encoded) -> Result<()>;
    /// Predicted class of every sample with the current weights.
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>>;
    /// Read back the complete state.
    fn read_state(&mut self) -> Result<State>;
    /// Edge operations (one FF, BP or UP on one edge) per training sample, for throughput reports.
    fn edge_ops_per_sample(&self) -> u64;
    /// Clocks per training sample the board measured itself (a cycle-accurate simulation
    /// counts them); `edgeflow bench` projects board speed from it when present.
    fn clocks_per_sample(&self) -> Option<f64> {
        None
    }
}
