//! `edgeflow devices`.

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn exec(self) -> Result<()> {
        crate::opencl_cmd::devices_cmd(self.json)
    }
}
