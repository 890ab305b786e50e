//! `edgeflow synth`.

use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
// the usage names what a user gives, not the hidden stand-in
#[command(
    override_usage = "edgeflow synth [OPTIONS] --spec <SPEC> <--target <TARGET>|--board <BOARD>>"
)]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long, required_unless_present = "standin")]
    spec: Option<PathBuf>,
    /// ice40-up5k, ice40-hx8k, xc7a100t, ecp5-85k, ecp5-45k, ecp5-25k or ecp5-12k: the
    /// network alone, as `edgeflow cost --synth-report` compares it.
    #[arg(long, required_unless_present = "board", conflicts_with = "board")]
    target: Option<String>,
    /// A board (name or file): its board top around the network (clock, UART bridge), as
    /// `edgeflow bitstream` builds it, on the board's part; what decides whether the design
    /// fits the board, without place and route.
    #[arg(long)]
    board: Option<String>,
    #[arg(long, hide = true)]
    standin: Option<String>,
    /// Print one JSON object instead of text: the report `cost --synth-report` and
    /// `bench --synth-report` read.
    #[arg(long)]
    json: bool,
    /// Resource-utilisation chart (% of the part per resource), SVG or PNG by extension.
    #[arg(long)]
    plot: Vec<PathBuf>,
}

impl Args {
    pub fn paths(&self) -> Paths {
        let mut p = Paths::new().input("--spec", self.spec.as_deref());
        for f in &self.plot {
            p = p.output("--plot", Some(f));
        }
        p
    }

    pub fn exec(self) -> Result<()> {
        crate::flow::synth::synth_cmd(
            self.spec.as_deref(),
            self.standin.as_deref(),
            self.target.as_deref(),
            self.board.as_deref(),
            self.json,
            &self.plot,
        )
    }
}
