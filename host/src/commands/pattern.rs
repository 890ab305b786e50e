//! `edgeflow pattern`.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["spec", "spec_pos"])))]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long = "spec", value_name = "SPEC")]
    spec: Option<PathBuf>,
    /// The spec file as the first argument: shorthand for --spec.
    #[arg(value_name = "SPEC", conflicts_with = "spec")]
    spec_pos: Option<PathBuf>,
    /// Junction number, 1 to L.
    #[arg(long, default_value_t = 1)]
    junction: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn exec(self) -> Result<()> {
        let spec = self.spec.or(self.spec_pos).expect("clap requires a spec");
        crate::spec_cmd::pattern(&spec, self.junction, self.json)
    }
}
