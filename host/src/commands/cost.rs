//! `edgeflow cost`: the cost model's prediction for one board, or a refit of its constants.

use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["spec", "fit"])))]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long)]
    spec: Option<PathBuf>,
    /// Refit from this directory of `edgeflow cost --json` and `edgeflow synth --json`
    /// reports (docs/calibration/runs, written by docs/calibration/reproduce.sh).
    #[arg(long, conflicts_with_all = ["spec", "synth_report"])]
    fit: Option<PathBuf>,
    /// Board name or file, as for `edgeflow plan --boards`.
    #[arg(long)]
    board: String,
    /// An `edgeflow synth --json` report of the same spec, to compare against.
    #[arg(long, alias = "synth", value_name = "REPORT")]
    synth_report: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", self.spec.as_deref())
            .input("--synth-report", self.synth_report.as_deref())
    }

    pub fn exec(self) -> Result<()> {
        match (self.fit, self.spec) {
            (Some(dir), _) => crate::cost_cmd::fit_cmd(&dir, &self.board, self.json),
            (None, Some(spec)) => crate::cost_cmd::cost_cmd(
                &spec,
                &self.board,
                self.synth_report.as_deref(),
                self.json,
            ),
            (None, None) => unreachable!("clap requires --spec without --fit"),
        }
    }
}
