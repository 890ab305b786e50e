//! `edgeflow man`: manual pages rendered from the command line itself (clap_mangen).

use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Write every page (edgeflow.1, edgeflow-train.1, ...) into this directory, created if
    /// missing; without it, edgeflow.1 goes to standard output.
    #[arg(short, long)]
    out: Option<PathBuf>,
}

/// Every page: the command and each visible subcommand, nested ones too, as (file, roff).
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = super::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    collect(&cmd, &mut out)?;
    Ok(out)
}

fn collect(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    out.push((man.get_filename(), roff));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, out)?;
    }
    Ok(())
}

impl Args {
    pub fn paths(&self) -> Paths {
        match &self.out {
            Some(dir) => {
                let names = pages()
                    .map(|p| p.into_iter().map(|(n, _)| n).collect::<Vec<_>>())
                    .unwrap_or_default();
                Paths::new().out_dir("--out", dir, &names)
            }
            None => Paths::new(),
        }
    }

    pub fn exec(self) -> Result<()> {
        let pages = pages()?;
        match &self.out {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                for (name, roff) in &pages {
                    crate::util::write_atomic(&dir.join(name), roff)?;
                }
                println!("{} manual pages written to {}", pages.len(), dir.display());
            }
            None => {
                use std::io::Write;
                std::io::stdout().write_all(&pages[0].1)?;
            }
        }
        Ok(())
    }
}
