//! `edgeflow deploy`.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The board to load: icebreaker, alchitry-cu, ulx3s-85f, ulx3s-45f or ulx3s-12f.
    #[arg(long, required_unless_present = "plan", conflicts_with = "plan")]
    board: Option<String>,
    /// The bitstream file `edgeflow bitstream` wrote for that board.
    #[arg(required_unless_present = "plan", conflicts_with = "plan")]
    bitstream: Option<PathBuf>,
    /// A linked plan: load every stage's bitstream from --dir onto its board, in chain order.
    #[arg(long, requires = "dir")]
    plan: Option<PathBuf>,
    /// With --plan: the directory `edgeflow bitstream --plan P -o DIR` wrote.
    #[arg(long, requires = "plan")]
    dir: Option<PathBuf>,
    /// With --plan: each stage's FTDI serial number, comma-separated in chain order (needed
    /// when several boards of one kind are attached; `openFPGALoader --scan-usb` lists them).
    #[arg(long, value_delimiter = ',', requires = "plan")]
    serials: Vec<String>,
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
        if let (Some(plan), Some(dir)) = (&self.plan, &self.dir) {
            return crate::deploy_plan::deploy_plan_cmd(
                plan,
                dir,
                &self.serials,
                self.dry_run,
                self.flash,
                self.json,
            );
        }
        crate::deploy_cmd::deploy_cmd(
            self.board
                .as_deref()
                .expect("clap requires --board without --plan"),
            self.bitstream
                .as_deref()
                .expect("clap requires the bitstream without --plan"),
            self.dry_run,
            self.flash,
            self.json,
        )
    }
}
