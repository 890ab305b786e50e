//! `edgeflow plan`.

use crate::paths::Paths;
use anyhow::Result;
use edgeflow_planner::dp::Order;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Spec file (TOML); its z values are replaced by the planned ones.
    #[arg(long)]
    spec: PathBuf,
    /// Boards in chain order, comma-separated: built-in names (icebreaker, alchitry-cu,
    /// nexys4-ddr, opencl-device), NAME.toml files in ./boards (e.g. ulx3s-85f) or $EDGEFLOW_BOARDS, or
    /// paths; NAMExK repeats a board K times.
    #[arg(long)]
    boards: String,
    /// Link every board to its neighbours with this named link instead of the boards'
    /// own: mpi-loopback (ranks of `mpirun` on one machine).
    #[arg(long)]
    link: Option<String>,
    /// Let the planner choose the order of the boards too.
    #[arg(long, conflicts_with = "all_boards")]
    permute: bool,
    /// Give every board at least one junction, in the given order (by default the planner
    /// leaves a board out when the network is faster without it).
    #[arg(long)]
    all_boards: bool,
    /// Print the plan as one JSON object (the plan file's content plus the planning time).
    #[arg(long)]
    json: bool,
    /// Write the plan (JSON) here, for `edgeflow train --plan`.
    #[arg(short, long)]
    out: Option<PathBuf>,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", Some(&self.spec))
            .output("--out", self.out.as_deref())
    }

    pub fn exec(self) -> Result<()> {
        crate::plan_cmd::plan_cmd(
            &self.spec,
            &self.boards,
            self.link.as_deref(),
            if self.permute {
                Order::Permute
            } else if self.all_boards {
                Order::Every
            } else {
                Order::Chain
            },
            self.json,
            self.out.as_deref(),
        )
    }
}
