//! edgeflow's host side: the `edgeflow` command line and the library it runs on, so a Rust
//! program can train, benchmark and build the same way the commands do.

pub mod backends;
pub mod bench;
pub mod bench_data;
pub mod board;
pub mod chart;
pub mod commands;
pub mod cost_cmd;
pub mod deploy_cmd;
pub mod deploy_plan;
pub mod export_cmd;
pub mod fit_cmd;
pub mod fit_search;
pub mod flow;
#[cfg(test)]
mod fuzz_targets;
pub mod import_cmd;
pub mod model;
pub mod multiboard;
#[cfg(feature = "mpi")]
pub mod multiboard_mpi;
#[cfg(feature = "mpi")]
pub mod multiboard_mpi_stage;
pub mod multiboard_opencl;
pub mod opencl_cmd;
pub mod paths;
pub mod plan_cmd;
pub mod plan_report;
pub mod plot;
pub mod quality;
pub mod report;
pub mod report_cache;
pub mod resident_cmd;
pub mod sim_cmd;
pub mod sim_linked;
pub mod sim_verilator;
pub mod spec_cmd;
pub mod stage_cmd;
pub mod train;
pub mod ui;
pub mod util;

use std::path::PathBuf;

/// The bundled default spec, found next to the workspace so `cargo run` works from anywhere.
pub fn default_spec_path() -> PathBuf {
    let local = PathBuf::from("specs/digits.toml");
    if local.exists() {
        return local;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/digits.toml"))
}
