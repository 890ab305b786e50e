//! `edgeflow bitstream`.

use super::parse_mhz;
use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
// the usage names what a user gives, not the hidden stand-in
#[command(
    override_usage = "edgeflow bitstream [OPTIONS] --spec <SPEC> --board <BOARD> --out <OUT>\n       edgeflow bitstream [OPTIONS] --plan <PLAN> --out <OUT>"
)]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long, required_unless_present_any = ["standin", "plan"], conflicts_with = "plan")]
    spec: Option<PathBuf>,
    /// icebreaker, alchitry-cu, ulx3s-85f, ulx3s-45f or ulx3s-12f.
    #[arg(long, required_unless_present = "plan", conflicts_with = "plan")]
    board: Option<String>,
    /// A plan over boards with their own links (`edgeflow plan`): one bitstream per stage,
    /// each with its link pins, at its board's planned clock.
    #[arg(long, conflicts_with_all = ["resident", "standin"])]
    plan: Option<PathBuf>,
    /// Directory for the bitstream, the design's sources and the tools' reports, created if
    /// missing.
    #[arg(short, long)]
    out: PathBuf,
    /// Design clock in MHz (default: the board's, from its board description).
    #[arg(long, value_parser = parse_mhz)]
    freq: Option<f64>,
    /// UART rate of the board top's host link.
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    /// nextpnr placement seeds, 0 to 2147483647 (nextpnr reads a signed 32-bit number),
    /// comma-separated: tried in order until one meets the clock (`--seed 1,2,3`); the first
    /// that does is kept, or the last. Every stage of a plan has its own sweep.
    #[arg(long, visible_alias = "seeds", default_value = "1", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(..=i32::MAX as i64))]
    seed: Vec<u32>,
    /// Build the board top with the resident data memory (`train --resident`); use
    /// --baud 3000000 for the rate `train --resident` expects by default.
    #[arg(long, conflicts_with = "standin")]
    resident: bool,
    #[arg(long, hide = true)]
    standin: Option<String>,
    /// Print one JSON object instead of text: the report `cost --synth-report` and
    /// `bench --synth-report` read.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", self.spec.as_deref())
            .input("--plan", self.plan.as_deref())
            .out_dir("--out", &self.out, &[])
    }

    pub fn exec(self) -> Result<()> {
        if let Some(plan) = &self.plan {
            return crate::flow::bitstream_plan::bitstream_plan_cmd(
                plan, &self.out, self.freq, self.baud, &self.seed, self.json,
            );
        }
        crate::flow::bitstream::bitstream_cmd(crate::flow::bitstream::BitstreamArgs {
            spec: self.spec,
            resident: self.resident,
            standin: self.standin,
            board: self.board.expect("clap requires --board without --plan"),
            out: self.out,
            freq: self.freq,
            baud: self.baud,
            seeds: self.seed,
            json: self.json,
        })
    }
}
