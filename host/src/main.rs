//! `edgeflow`: train and run pre-defined sparse neural networks on FPGAs.

mod backends;
mod board;
mod model;
mod multiboard;
mod multiboard_opencl;
mod opencl_cmd;
mod plan_cmd;
mod plot;
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
    /// Load the OpenCL program from this device binary (written by `edgeflow kernels build`)
    /// instead of building the kernels from source: the path a precompiled board takes.
    #[arg(long, global = true)]
    kernel_binary: Option<PathBuf>,
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
        #[arg(long, required_unless_present = "plan")]
        spec: Option<PathBuf>,
        /// Train across several boards as this plan (from `edgeflow plan -o`) lays out; the
        /// spec comes from the plan. Backends: reference (one thread per board), opencl, rtl.
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
        /// Where inference runs: reference or opencl[:DEVICE].
        #[arg(long, default_value = "reference")]
        backend: String,
        #[arg(long, default_value = "digits")]
        data: String,
        #[arg(long)]
        label_column: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Split a network across boards in a chain: the groups of junctions, which board hosts
    /// each, every z, the predicted samples/s, a lower bound, and the usual baselines.
    ///
    /// Example: edgeflow plan --spec specs/mnist-large.toml --boards nexys4-ddrx4 -o plan.json
    Plan {
        /// Spec file (TOML); its z values are replaced by the planned ones.
        #[arg(long)]
        spec: PathBuf,
        /// Boards in chain order, comma-separated: built-in names (icebreaker, alchitry-cu,
        /// nexys4-ddr, opencl-device), NAME.toml files in ./boards or $EDGEFLOW_BOARDS, or
        /// paths; NAMExK repeats a board K times.
        #[arg(long)]
        boards: String,
        /// Let the planner choose the order of the boards too.
        #[arg(long)]
        permute: bool,
        #[arg(long)]
        json: bool,
        /// Write the plan (JSON) here, for `edgeflow train --plan`.
        #[arg(short, long)]
        out: Option<PathBuf>,
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
    /// List OpenCL platforms and devices: compute units, memory, driver version.
    Devices {
        #[arg(long)]
        json: bool,
    },
    /// OpenCL kernels: export the device binary of the program.
    Kernels {
        #[command(subcommand)]
        cmd: KernelsCmd,
    },
}

#[derive(Subcommand)]
enum KernelsCmd {
    /// Build the kernels for a device and write its program binary, for `--kernel-binary FILE`.
    ///
    /// Example: edgeflow kernels build --device 0 -o edgeflow-pocl.bin
    Build {
        /// Device index or name (see `edgeflow devices`); default the first.
        #[arg(long)]
        device: Option<String>,
        #[arg(short, long)]
        out: PathBuf,
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
    board::opencl::set_kernel_binary(cli.kernel_binary.clone());
    match cli.cmd {
        None => train::demo(),
        Some(Cmd::Spec { cmd: SpecCmd::Check { spec, json } }) => spec_cmd::check(&spec, json),
        Some(Cmd::Pattern { spec, junction, json }) => spec_cmd::pattern(&spec, junction, json),
        Some(Cmd::Train { spec, plan: Some(plan), verify, data, label_column, epochs, backend, out, plot, json }) => {
            let _ = (spec, plot);
            plan_cmd::train_plan(&plan, &data, label_column, epochs, &backend, out.as_deref(), json, verify)
        }
        Some(Cmd::Train { spec, plan: None, verify: _, data, label_column, epochs, backend, out, plot, json }) => {
            let spec = spec.expect("clap requires --spec without --plan");
            train::train_cmd(train::TrainArgs { spec, data, label_column, epochs, backend, out, plot, json })
        }
        Some(Cmd::Eval { model, backend, data, label_column, json }) => {
            train::eval_cmd(&model, &backend, &data, label_column, json)
        }
        Some(Cmd::Plan { spec, boards, permute, json, out }) => {
            plan_cmd::plan_cmd(&spec, &boards, permute, json, out.as_deref())
        }
        Some(Cmd::Infer { model, data, label_column, out }) => {
            train::infer_cmd(&model, &data, label_column, out.as_deref())
        }
        Some(Cmd::Devices { json }) => opencl_cmd::devices_cmd(json),
        Some(Cmd::Kernels { cmd: KernelsCmd::Build { device, out, json } }) => {
            opencl_cmd::kernels_build_cmd(device.as_deref(), &out, json)
        }
    }
}
