//! `edgeflow pattern`.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Spec file (TOML).
    spec: PathBuf,
    /// Junction number, 1 to L.
    #[arg(long, default_value_t = 1)]
    junction: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn exec(self) -> Result<()> {
        crate::spec_cmd::pattern(&self.spec, self.junction, self.json)
    }
}
