//! `edgeflow completions SHELL`: the shell's completion script, from the command line itself.

use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
    /// Write the script to this file instead of standard output.
    #[arg(short, long)]
    out: Option<PathBuf>,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new().output("--out", self.out.as_deref())
    }

    pub fn exec(self) -> Result<()> {
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut super::command(), "edgeflow", &mut script);
        match &self.out {
            Some(p) => crate::util::write_atomic(p, &script),
            None => {
                use std::io::Write;
                std::io::stdout().write_all(&script)?;
                Ok(())
            }
        }
    }
}
