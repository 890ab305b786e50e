//! `edgeflow eval`.

use crate::backends::{self, Choice, Use};
use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Model file written by `edgeflow train --out` (it carries its spec).
    #[arg(long)]
    model: PathBuf,
    #[arg(
        long,
        default_value = "reference",
        value_parser = backends::parser(&[Use::Eval]),
        help = backends::help("Where inference runs:", &[Use::Eval])
    )]
    pub backend: Choice,
    /// `digits` (bundled), a CSV file, or an MNIST `*-images-idx3-ubyte[.gz]` file; split
    /// into train and test exactly as `train` split it.
    #[arg(long, default_value = "digits")]
    data: String,
    /// Column of the class label in a CSV file (default: the last).
    #[arg(long)]
    label_column: Option<usize>,
    /// The model applies the scaling it was trained with; if given, this must name it.
    #[arg(long)]
    scale: Option<edgeflow_core::ScaleKind>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub opencl: super::OpenClArgs,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--model", Some(&self.model))
            .data("--data", Some(&self.data))
    }

    pub fn exec(self) -> Result<()> {
        crate::train::eval_cmd(
            &self.model,
            &self.backend,
            &self.data,
            self.label_column,
            self.scale,
            self.json,
        )
    }
}
