//! `edgeflow quality`: its options are the library's `QualityCli`.

use crate::paths::Paths;
use anyhow::Result;

pub use crate::quality::QualityCli as Args;

impl Args {
    pub fn paths(&self) -> Paths {
        match &self.out {
            Some(dir) => {
                let files = ["quality.json", "quality.md", "quality.svg", "quality.png"];
                Paths::new().out_dir("--out", dir, &files.map(String::from))
            }
            None => Paths::new(),
        }
    }

    pub fn exec(self) -> Result<()> {
        crate::quality::quality_cmd(self)
    }
}
