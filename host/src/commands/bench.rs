//! `edgeflow bench`.

use crate::backends::{self, Choice, Needs, Use};
use crate::bench::{BenchArgs, Sweep};
use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long)]
    spec: PathBuf,
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = backends::parser(&[Use::Bench]),
        help = backends_help()
    )]
    backends: Option<Vec<Choice>>,
    /// Boards to project (board files in boards/, comma-separated or repeated); default: every
    /// FPGA board file, and nexys4-ddr.
    #[arg(long, alias = "board", value_delimiter = ',')]
    boards: Vec<String>,
    /// Also project at this clock (MHz), e.g. the Fmax a place-and-route reported; repeat for
    /// several.
    #[arg(long, alias = "fmax")]
    freq: Vec<f64>,
    /// Also project at the Fmax in this JSON report (`edgeflow synth --json` output).
    #[arg(long)]
    synth_report: Option<PathBuf>,
    /// Training samples per run (slow backends use fewer, see --budget).
    #[arg(long, default_value_t = 2000)]
    samples: usize,
    /// Runs per backend; the best is reported (and the median in JSON).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Seconds of training per backend before it gets fewer samples (slow simulations).
    #[arg(long, default_value_t = 30.0)]
    budget: f64,
    /// Data set: `digits` (bundled), a CSV file, MNIST IDX images, or `random` (1000 random
    /// samples made for the spec: any spec). Default: digits; a spec digits does not fit
    /// (fewer than 64 inputs or 10 outputs) gets random samples, with a note on stderr.
    #[arg(long)]
    data: Option<String>,
    /// How a CSV's values are brought into [0, 1], as for `edgeflow train`.
    #[arg(long, default_value = "feature")]
    scale: edgeflow_core::ScaleKind,
    /// Print the JSON report instead of the table.
    #[arg(long)]
    json: bool,
    /// Write the JSON report to this file (the table or --json is still printed).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Chart of the results, SVG or PNG by extension; repeat for both.
    #[arg(long)]
    plot: Vec<PathBuf>,
    /// Instead of one spec, a family grown from it: cost per sample against the edge count.
    #[arg(long, value_enum)]
    sweep: Option<Sweep>,
    /// Samples per SGD step of the dense-minibatch baseline.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Threads the reference model, the dense-minibatch baseline and sparse-f32 train on
    /// (default: dense-minibatch every logical CPU, the reference every one the network is
    /// big enough for, sparse-f32 one; above one sparse-f32 runs Hogwild!). The reference's
    /// bits do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Also train the CPU backends epoch by epoch until the test accuracy reaches this
    /// fraction (0 < X <= 1, e.g. 0.95), and report each backend's and board projection's
    /// seconds of training to get there.
    #[arg(long, value_name = "FRACTION")]
    to_accuracy: Option<f64>,
    /// Most epochs --to-accuracy trains before it reports "not reached"; also the epochs of
    /// the boards' "end to end, resident" rows.
    #[arg(long, default_value_t = 50)]
    epochs: usize,
    #[command(flatten)]
    pub opencl: super::OpenClArgs,
}

fn backends_help() -> String {
    let always: Vec<&str> = backends::float_baselines().map(|b| b.name).collect();
    backends::help(
        &format!(
            "Backends to measure, comma-separated; ones that cannot run here are reported as unavailable with the reason. The float baselines ({}) are always measured. Default: {} (a sweep: {}).",
            always.join(", "),
            crate::bench::DEFAULT_BACKENDS.replace(',', ", "),
            crate::bench::SWEEP_BACKENDS.replace(',', ", ")
        ),
        &[Use::Bench],
    )
}

impl Args {
    pub fn paths(&self) -> Paths {
        let mut p = Paths::new()
            .input("--spec", Some(&self.spec))
            .input("--synth-report", self.synth_report.as_deref())
            .data("--data", self.data.as_deref())
            .output("--out", self.out.as_deref());
        for f in &self.plot {
            p = p.output("--plot", Some(f));
        }
        p
    }

    /// Whether an OpenCL backend is among those measured (the default list has one).
    pub fn uses_opencl(&self) -> bool {
        self.backends
            .as_ref()
            .is_none_or(|v| v.iter().any(|c| c.backend.needs == Needs::OpenCl))
    }

    pub fn exec(self) -> Result<()> {
        crate::bench::bench_cmd(BenchArgs {
            spec: self.spec,
            backends: self
                .backends
                .map(|v| v.iter().map(Choice::to_string).collect()),
            boards: self.boards,
            freq: self.freq,
            synth_report: self.synth_report,
            samples: self.samples,
            repeat: self.repeat,
            budget: self.budget,
            data: self.data,
            scale: self.scale,
            json: self.json,
            out: self.out,
            plot: self.plot,
            sweep: self.sweep,
            batch: self.batch,
            threads: self.threads,
            to_accuracy: self.to_accuracy,
            epochs: self.epochs,
        })
    }
}
