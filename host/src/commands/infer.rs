//! `edgeflow infer`.

use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Model file written by `edgeflow train --out` (it carries its spec).
    #[arg(long)]
    model: PathBuf,
    /// `digits` (bundled), a CSV file, or an MNIST `*-images-idx3-ubyte[.gz]` file; every
    /// sample, in file order.
    #[arg(long, default_value = "digits")]
    data: String,
    /// Column of the class label in a CSV file (default: the last).
    #[arg(long)]
    label_column: Option<usize>,
    /// The model applies the scaling it was trained with; if given, this must name it.
    #[arg(long)]
    scale: Option<edgeflow_core::ScaleKind>,
    /// Write the predictions (CSV) here instead of standard output.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Print one JSON object: sample count, accuracy, and the predictions unless -o is given.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--model", Some(&self.model))
            .data("--data", Some(&self.data))
            .output("--out", self.out.as_deref())
    }

    pub fn exec(self) -> Result<()> {
        crate::train::infer_cmd(
            &self.model,
            &self.data,
            self.label_column,
            self.scale,
            self.out.as_deref(),
            self.json,
        )
    }
}
