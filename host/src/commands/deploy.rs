//! `edgeflow deploy`.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    board: String,
    bitstream: PathBuf,
    /// Print the command instead of running it.
    #[arg(long)]
    dry_run: bool,
    /// Write the SPI flash (persistent) instead of loading the FPGA's SRAM.
    #[arg(long)]
    flash: bool,
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn exec(self) -> Result<()> {
        crate::deploy_cmd::deploy_cmd(
            &self.board,
            &self.bitstream,
            self.dry_run,
            self.flash,
            self.json,
        )
    }
}
