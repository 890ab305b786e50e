//! `edgeflow`: train and run pre-defined sparse neural networks on FPGAs.

mod backends;
mod board;
mod model;
mod plot;
mod sim_cmd;
mod spec_cmd;
mod train;
mod util;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The bundled default spec, found next to the workspace so `cargo run` works from anywhere.
pub fn default_spec_path() -> PathBuf {
    let local = PathBuf::from("specs/digits.toml");
    if local.exists() {
        return local;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/digits.toml"))
}

#[derive(Parser)]
#[command(
    name = "edgeflow",
    version,
    about = "Train and run pre-defined sparse neural networks on FPGAs: one spec, a bit-exact reference model, and hardware that computes exactly the same bits.",
    long_about = "edgeflow turns a network spec (TOML: layer sizes, fan-out and edges-per-clock z per junction, \
fixed-point format) into a junction-pipelined training accelerator, and drives it.\n\n\
Start with:\n  edgeflow spec check specs/digits.toml      what the spec implies (fan-in, clocks, staleness)\n  \
edgeflow train --spec specs/digits.toml    train on the bundled digits with the reference model\n\n\
With no subcommand, runs the demo: the default spec trained by the reference model and the float reference."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Inspect a network spec.
    Spec {
        #[command(subcommand)]
        cmd: SpecCmd,
    },
    /// Dump a junction's connection pattern: every edge's left neuron, lane, bank and row.
    Pattern {
        /// Spec file (TOML).
        spec: PathBuf,
        /// Junction number, 1 to L.
        #[arg(long, default_value_t = 1)]
        junction: usize,
        #[arg(long)]
        json: bool,
    },
    /// Train a network: one pipelined stream per epoch, accuracy after each epoch.
    ///
    /// Example: edgeflow train --spec specs/digits.toml --epochs 30 --out digits.model --plot curve.svg
    Train {
        /// Spec file (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// `digits` (bundled), a CSV file, or an MNIST `*-images-idx3-ubyte[.gz]` file.
        #[arg(long, default_value = "digits")]
        data: String,
        /// Column of the class label in a CSV file (default: the last).
        #[arg(long)]
        label_column: Option<usize>,
        #[arg(long, default_value_t = 30)]
        epochs: usize,
        /// Where training runs: reference (bit-exact model) or float (f64 SGD, for accuracy comparison).
        #[arg(long, default_value = "reference")]
        backend: String,
        /// Save the trained model (spec, format, complete state) to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write the training curve (accuracy per epoch) as SVG.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Evaluate a saved model on the train/test split of a data set.
    Eval {
        #[arg(long)]
        model: PathBuf,
        #[arg(long, default_value = "digits")]
        data: String,
        #[arg(long)]
        label_column: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Predict every sample of a data set with a saved model (CSV: sample,predicted,label).
    Infer {
        #[arg(long)]
        model: PathBuf,
        #[arg(long, default_value = "digits")]
        data: String,
        #[arg(long)]
        label_column: Option<usize>,
        /// Write the predictions here instead of standard output.
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// Simulate the RTL network (rust-hdl) against the reference model: load the spec's
    /// initial weights, train N samples, infer them, read everything back and compare.
    ///
    /// Example: edgeflow sim --spec specs/tiny.toml --samples 32 --vcd tiny.vcd --json
    Sim {
        /// Spec file (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// Training samples (one TRAIN stream), then inferred.
        #[arg(long, default_value_t = 16)]
        samples: usize,
        /// `digits`, a CSV file, an MNIST file, or `random` (default: digits when the spec
        /// takes 64 inputs, random samples otherwise).
        #[arg(long)]
        data: Option<String>,
        /// Write every signal's waveform to this VCD file.
        #[arg(long)]
        vcd: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum SpecCmd {
    /// Validate a spec and print its derived values: fan-in, |W|, clocks per junction, block
    /// cycle, density, staleness and multipliers.
    Check {
        spec: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = dispatch(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.cmd {
        None => train::demo(),
        Some(Cmd::Spec { cmd: SpecCmd::Check { spec, json } }) => spec_cmd::check(&spec, json),
        Some(Cmd::Pattern { spec, junction, json }) => spec_cmd::pattern(&spec, junction, json),
        Some(Cmd::Train { spec, data, label_column, epochs, backend, out, plot, json }) => {
            train::train_cmd(train::TrainArgs { spec, data, label_column, epochs, backend, out, plot, json })
        }
        Some(Cmd::Eval { model, data, label_column, json }) => train::eval_cmd(&model, &data, label_column, json),
        Some(Cmd::Sim { spec, samples, data, vcd, json }) => sim_cmd::sim_cmd(&spec, samples, data.as_deref(), vcd.as_deref(), json),
        Some(Cmd::Infer { model, data, label_column, out }) => {
            train::infer_cmd(&model, &data, label_column, out.as_deref())
        }
    }
}
