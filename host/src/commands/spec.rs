//! `edgeflow spec check`.

use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    cmd: SpecCmd,
}

#[derive(Subcommand)]
enum SpecCmd {
    /// Validate a spec and print its derived values: fan-in, |W|, clocks per junction, block
    /// cycle, density, staleness and multipliers.
    ///
    /// Every broken rule is listed with the field and a fix. Example: edgeflow spec check specs/dey-mnist.toml
    Check {
        /// Spec file (TOML); specs/ holds tiny, digits, dey-mnist and mnist-large.
        spec: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

impl Args {
    pub fn exec(self) -> Result<()> {
        match self.cmd {
            SpecCmd::Check { spec, json } => crate::spec_cmd::check(&spec, json),
        }
    }
}
