//! `edgeflow deploy`.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The board to load: icebreaker, alchitry-cu, ulx3s-85f, ulx3s-45f or ulx3s-12f.
    #[arg(long)]
    board: String,
    /// The bitstream file `edgeflow bitstream` wrote for that board.
    bitstream: PathBuf,
    /// Print the command instead of running it.
    #[arg(long)]
    dry_run: bool,
    /// Write the SPI flash (persistent) instead of loading the FPGA's SRAM.
    #[arg(long)]
    flash: bool,
    /// Print one JSON object instead of text.
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
