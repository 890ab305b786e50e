//! `edgeflow verilog`: the network's Verilog, a board top, or every stage of a plan.

use super::parse_mhz;
use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
// the usage names what a user gives, not the hidden stand-in
#[command(override_usage = "edgeflow verilog [OPTIONS] --out <OUT> <--spec <SPEC>|--plan <PLAN>>")]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long, required_unless_present_any = ["standin", "plan"])]
    spec: Option<PathBuf>,
    /// A plan (from `edgeflow plan -o`): the Verilog of each of its stages instead
    /// (`<spec>_stage<i>.v`: the stage's junctions on the plan's schedule with its boundary
    /// ports).
    #[arg(long, conflicts_with_all = ["spec", "board", "standin"])]
    plan: Option<PathBuf>,
    /// With --plan: each stage with its board-to-board links and the sequencer that joins
    /// them (the boards' link width from their board files).
    #[arg(long, requires = "plan")]
    linked: bool,
    /// icebreaker, alchitry-cu, nexys4-ddr, ulx3s-85f, ulx3s-45f or ulx3s-12f.
    #[arg(long)]
    board: Option<String>,
    /// Design clock in MHz (default: the board's).
    #[arg(long, value_parser = parse_mhz)]
    freq: Option<f64>,
    /// UART rate of the board top's host link.
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    /// Directory for the Verilog (and the board's constraints), created if missing.
    #[arg(short, long)]
    out: PathBuf,
    #[arg(long, hide = true)]
    standin: Option<String>,
    /// Input lanes of the network's Verilog (1 to z_1, or `auto`); a --board top keeps the
    /// UART's one word per clock.
    #[arg(long, default_value = "auto")]
    input_lanes: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// The directory commands name their files once the design is known (flow).
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", self.spec.as_deref())
            .input("--plan", self.plan.as_deref())
            .out_dir("--out", &self.out, &[])
    }

    pub fn exec(self) -> Result<()> {
        if let Some(plan) = &self.plan {
            return crate::stage_cmd::stage_verilog_cmd(plan, &self.out, self.linked, self.json);
        }
        crate::flow::verilog::verilog_cmd(crate::flow::verilog::VerilogArgs {
            spec: self.spec,
            standin: self.standin,
            board: self.board,
            freq: self.freq,
            baud: self.baud,
            out: self.out,
            input_lanes: self.input_lanes,
            json: self.json,
        })
    }
}
