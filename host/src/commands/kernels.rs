//! `edgeflow kernels build`.

use crate::paths::Paths;
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    cmd: KernelsCmd,
}

#[derive(Subcommand)]
enum KernelsCmd {
    /// Build the kernels for a device and write its program binary, for `--kernel-binary FILE`.
    ///
    /// Example: edgeflow kernels build --device 0 -o edgeflow-pocl.bin
    Build {
        /// Device index or name (see `edgeflow devices`); default the first.
        #[arg(long)]
        device: Option<String>,
        /// Where to write the program binary.
        #[arg(short, long)]
        out: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

impl Args {
    pub fn paths(&self) -> Paths {
        match &self.cmd {
            KernelsCmd::Build { out, .. } => Paths::new().output("--out", Some(out)),
        }
    }

    pub fn exec(self) -> Result<()> {
        match self.cmd {
            KernelsCmd::Build { device, out, json } => {
                crate::opencl_cmd::kernels_build_cmd(device.as_deref(), &out, json)
            }
        }
    }
}
