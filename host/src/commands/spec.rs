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
    #[command(group(clap::ArgGroup::new("input").required(true).args(["spec", "spec_pos"])))]
    Check {
        /// Spec file (TOML); specs/ holds tiny, digits, dey-mnist and mnist-large.
        #[arg(long = "spec", value_name = "SPEC")]
        spec: Option<PathBuf>,
        /// The spec file as the first argument: shorthand for --spec.
        #[arg(value_name = "SPEC", conflicts_with = "spec")]
        spec_pos: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

impl Args {
    pub fn exec(self) -> Result<()> {
        match self.cmd {
            SpecCmd::Check {
                spec,
                spec_pos,
                json,
            } => {
                let spec = spec.or(spec_pos).expect("clap requires a spec");
                crate::spec_cmd::check(&spec, json)
            }
        }
    }
}
