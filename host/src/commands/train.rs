//! `edgeflow train`: one board, a plan across boards, or a resident run.

use super::parse_mhz;
use crate::backends::{self, Choice, Use};
use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

/// `--backend` trains one board, a plan's chain of them, or a resident run.
const USES: &[Use] = &[Use::Train, Use::Plan, Use::Resident];

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(true).args(["spec", "plan", "init"])))]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long)]
    spec: Option<PathBuf>,
    /// Continue from this model (state, scaling, spec, sample order); see docs/export.md.
    #[arg(long)]
    init: Option<PathBuf>,
    /// Train across several boards as this plan (from `edgeflow plan -o`) lays out; the
    /// spec comes from the plan. The backends that run plans are marked [train --plan]
    /// under --backend.
    #[arg(long, conflicts_with = "spec")]
    plan: Option<PathBuf>,
    /// With --plan: also train the reference model with the plan's staleness on the same
    /// samples and fail unless every weight and bias is identical.
    #[arg(long, requires = "plan")]
    verify: bool,
    /// `digits` (bundled), a CSV file, or an MNIST `*-images-idx3-ubyte[.gz]` file.
    #[arg(long, default_value = "digits")]
    data: String,
    /// Column of the class label in a CSV file (default: the last).
    #[arg(long)]
    label_column: Option<usize>,
    /// How a CSV's values are brought into [0, 1]: feature (each feature min-max scaled,
    /// fitted on the training split, clipped), global (every value divided by the file's
    /// largest) or none (values already in [0, 1]). Kept in the model file. The bundled
    /// digits and MNIST keep their fixed pixel scaling under every choice. [default: feature;
    /// with --init: the model's]
    #[arg(long)]
    scale: Option<edgeflow_core::ScaleKind>,
    /// Passes over the training set; each is one pipelined stream in a fresh shuffled order.
    #[arg(long, default_value_t = 30)]
    epochs: usize,
    #[arg(
        long,
        default_value = "reference",
        value_parser = backends::parser(USES),
        help = backends::help("Where training runs; all but the float ones give the reference's bits:", USES)
    )]
    pub backend: Choice,
    /// Save the trained model (spec, format, complete state) to this file.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Write the training curve (accuracy per epoch): SVG, or PNG when the name ends in .png.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// After every epoch, measure per junction where the fixed-point arithmetic loses what
    /// float keeps (on 256 training samples, the epoch's weights): FF products outside the
    /// format's range, saturated sums, updates below half a step, weights at the range's
    /// ends. Printed under each epoch and in --json's history.
    #[arg(long, conflicts_with_all = ["plan", "resident"])]
    trace: bool,
    /// Threads the reference model trains on (default: every core the network is big
    /// enough for). The bits do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024), conflicts_with_all = ["plan", "resident"])]
    threads: Option<u64>,
    /// Keep the data set on the board (needs --board; backend serial:PORT or verilator,
    /// the board top co-simulated): upload it once, run every epoch on chip, infer the
    /// test set on chip, read the weights back. Same bits as every other backend.
    #[arg(long, requires = "board", conflicts_with_all = ["plan", "plot"])]
    resident: bool,
    /// The board of a resident run: icebreaker (its SPRAM), alchitry-cu (block RAM),
    /// ulx3s-85f, ulx3s-45f or ulx3s-12f (their SDRAM, 2^20 words).
    #[arg(long, requires = "resident")]
    board: Option<String>,
    /// UART rate of a resident run's board top (default: 3000000, or the fastest of
    /// 2000000, 1000000 and 115200 the clock divides to within 2 %).
    #[arg(long, requires = "resident")]
    baud: Option<u32>,
    /// Design clock in MHz of a resident run (default: the board's).
    #[arg(long, requires = "resident", value_parser = parse_mhz)]
    freq: Option<f64>,
    #[command(flatten)]
    pub opencl: super::OpenClArgs,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", self.spec.as_deref())
            .input("--init", self.init.as_deref())
            .input("--plan", self.plan.as_deref())
            .data("--data", Some(&self.data))
            .output("--out", self.out.as_deref())
            .output("--plot", self.plot.as_deref())
    }

    pub fn exec(self) -> Result<()> {
        if let Some(plan) = &self.plan {
            return crate::plan_cmd::train_plan(crate::plan_cmd::TrainPlanArgs {
                plan,
                init: self.init.as_deref(),
                data: &self.data,
                label_column: self.label_column,
                scale: self.scale,
                epochs: self.epochs,
                backend: &self.backend,
                out: self.out.as_deref(),
                plot: self.plot.as_deref(),
                json: self.json,
                verify: self.verify,
            });
        }
        let spec = self.spec;
        if self.resident {
            return crate::resident_cmd::train_resident_cmd(crate::resident_cmd::ResidentArgs {
                spec,
                init: self.init,
                board: self.board.expect("clap requires --board with --resident"),
                data: self.data,
                label_column: self.label_column,
                scale: self.scale,
                epochs: self.epochs,
                backend: self.backend.to_string(),
                baud: self.baud,
                freq: self.freq,
                out: self.out,
                json: self.json,
                flip_byte: std::env::var("EDGEFLOW_TEST_FLIP_BYTE")
                    .ok()
                    .and_then(|v| v.parse().ok()),
            });
        }
        crate::train::train_cmd(crate::train::TrainArgs {
            spec,
            init: self.init,
            data: self.data,
            label_column: self.label_column,
            scale: self.scale,
            epochs: self.epochs,
            backend: self.backend,
            out: self.out,
            plot: self.plot,
            json: self.json,
            trace: self.trace,
            threads: self.threads.map(|t| t as usize),
        })
    }
}
