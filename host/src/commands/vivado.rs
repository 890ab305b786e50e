//! `edgeflow vivado`.

use super::parse_mhz;
use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
// the usage names what a user gives, not the hidden stand-in
#[command(override_usage = "edgeflow vivado [OPTIONS] --spec <SPEC> --out <OUT>")]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long, required_unless_present = "standin")]
    spec: Option<PathBuf>,
    /// The Xilinx board.
    #[arg(long, default_value = "nexys4-ddr")]
    board: String,
    /// Directory for the project script, constraints and Verilog, created if missing.
    #[arg(short, long)]
    out: PathBuf,
    /// Design clock in MHz, made by the MMCM (default 100).
    #[arg(long, value_parser = parse_mhz)]
    freq: Option<f64>,
    /// UART rate of the board top's host link.
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    #[arg(long, hide = true)]
    standin: Option<String>,
    /// Print one JSON object instead of text.
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
        crate::flow::vivado::vivado_cmd(
            self.spec.as_deref(),
            self.standin.as_deref(),
            &self.board,
            &self.out,
            self.freq,
            self.baud,
            self.json,
        )
    }
}
