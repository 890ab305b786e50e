//! `edgeflow bitstream`.

use super::parse_mhz;
use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, required_unless_present = "standin")]
    spec: Option<PathBuf>,
    /// icebreaker, alchitry-cu, ulx3s-85f, ulx3s-45f or ulx3s-12f.
    #[arg(long)]
    board: String,
    #[arg(short, long)]
    out: PathBuf,
    /// Design clock in MHz (default: the board's, e.g. 30 on the iCEBreaker, 28.125 on the
    /// ULX3S; values other than the oscillator's go through the PLL).
    #[arg(long, value_parser = parse_mhz)]
    freq: Option<f64>,
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    /// nextpnr placement seed, 0 to 2147483647 (nextpnr reads a signed 32-bit number).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(..=i32::MAX as i64))]
    seed: u32,
    /// Build the board top with the resident data memory (`train --resident`); use
    /// --baud 3000000 for the rate `train --resident` expects by default.
    #[arg(long, conflicts_with = "standin")]
    resident: bool,
    #[arg(long, hide = true)]
    standin: Option<String>,
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", self.spec.as_deref())
            .out_dir("--out", &self.out, &[])
    }

    pub fn exec(self) -> Result<()> {
        crate::flow::bitstream::bitstream_cmd(crate::flow::bitstream::BitstreamArgs {
            spec: self.spec,
            resident: self.resident,
            standin: self.standin,
            board: self.board,
            out: self.out,
            freq: self.freq,
            baud: self.baud,
            seed: self.seed,
            json: self.json,
        })
    }
}
