//! `edgeflow`: train and run pre-defined sparse neural networks on FPGAs.

mod backends;
mod bench;
mod bench_data;
mod board;
mod chart;
mod cost_cmd;
mod deploy_cmd;
mod export_cmd;
mod flow_check;
mod flow_cmd;
#[cfg(test)]
mod fuzz_targets;
mod import_cmd;
mod model;
mod multiboard;
mod multiboard_opencl;
mod opencl_cmd;
mod paths;
mod plan_cmd;
mod plot;
mod quality;
mod report_cache;
mod resident_cmd;
mod sim_cmd;
mod sim_verilator;
mod spec_cmd;
mod stage_cmd;
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
    ///
    /// Example: edgeflow pattern specs/tiny.toml --junction 2 --json
    Pattern {
        /// Spec file (TOML).
        spec: PathBuf,
        /// Junction number, 1 to L.
        #[arg(long, default_value_t = 1)]
        junction: usize,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Train a network: one pipelined stream per epoch, accuracy after each epoch.
    ///
    /// Example: edgeflow train --spec specs/digits.toml --epochs 30 --out digits.model --plot curve.svg
    Train {
        /// Spec file (TOML).
        #[arg(long, required_unless_present_any = ["plan", "init"])]
        spec: Option<PathBuf>,
        /// Continue from this model (state, scaling, spec, sample order); see docs/export.md.
        #[arg(long)]
        init: Option<PathBuf>,
        /// Train across several boards as this plan (from `edgeflow plan -o`) lays out; the
        /// spec comes from the plan. Backends: reference (one thread per board), opencl
        /// (stage i on OpenCL device i) or rtl (one simulated RTL stage per board).
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
        /// Where training runs: reference (the bit-exact model), float (f64 SGD on the same
        /// sparse network, for accuracy comparison), opencl[:DEVICE] (see `edgeflow devices`),
        /// rtl (rust-hdl simulation), verilator (the emitted Verilog) or
        /// serial:/dev/ttyUSBn[@BAUD] (a board). All but float give the reference's bits.
        #[arg(long, default_value = "reference")]
        backend: String,
        /// Save the trained model (spec, format, complete state) to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write the training curve (accuracy per epoch): SVG, or PNG when the name ends in .png.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Keep the data set on the board (needs --board; backend serial:PORT or verilator,
        /// the board top co-simulated): upload it once, run every epoch on chip, infer the
        /// test set on chip, read the weights back. Same bits as every other backend.
        #[arg(long, requires = "board", conflicts_with_all = ["plan", "plot"])]
        resident: bool,
        /// The board of a resident run: icebreaker, alchitry-cu, ulx3s-85f, ulx3s-45f or
        /// ulx3s-12f.
        #[arg(long, requires = "resident")]
        board: Option<String>,
        /// UART rate of a resident run's board top (default: 3000000, or the fastest of
        /// 2000000, 1000000 and 115200 the clock divides to within 2 %).
        #[arg(long, requires = "resident")]
        baud: Option<u32>,
        /// Design clock in MHz of a resident run (default: the board's).
        #[arg(long, requires = "resident", value_parser = util::parse_mhz)]
        freq: Option<f64>,
    },
    /// Evaluate a saved model on the train/test split of a data set.
    ///
    /// Example: edgeflow eval --model digits.model --backend opencl:0 --json
    Eval {
        /// Model file written by `edgeflow train --out` (it carries its spec).
        #[arg(long)]
        model: PathBuf,
        /// Where inference runs: reference, opencl[:DEVICE], rtl, verilator or
        /// serial:/dev/ttyUSBn[@BAUD].
        #[arg(long, default_value = "reference")]
        backend: String,
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
    },
    Export(export_cmd::ExportCli),
    Import(import_cmd::ImportCli),
    /// Split a network across boards in a chain: the groups of junctions, which board hosts
    /// each, every z, the predicted samples/s, a lower bound, and the usual baselines.
    ///
    /// Example: edgeflow plan --spec specs/mnist-large.toml --boards nexys4-ddrx4 -o plan.json
    Plan {
        /// Spec file (TOML); its z values are replaced by the planned ones.
        #[arg(long)]
        spec: PathBuf,
        /// Boards in chain order, comma-separated: built-in names (icebreaker, alchitry-cu,
        /// nexys4-ddr, opencl-device), NAME.toml files in ./boards (e.g. ulx3s-85f) or $EDGEFLOW_BOARDS, or
        /// paths; NAMExK repeats a board K times.
        #[arg(long)]
        boards: String,
        /// Let the planner choose the order of the boards too.
        #[arg(long)]
        permute: bool,
        /// Print the plan as one JSON object (the plan file's content plus the planning time).
        #[arg(long)]
        json: bool,
        /// Write the plan (JSON) here, for `edgeflow train --plan`.
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// The cost model's prediction (LUT, FF, DSP, block RAMs) for one board holding the whole
    /// network at the spec's own z, and with --synth how close it is to an `edgeflow synth
    /// --json` report of the same spec (docs/calibration/reproduce.sh).
    ///
    /// The last line is the verdict: "fits BOARD", or "DOES NOT FIT BOARD" with every resource
    /// the model puts over the board (predicted against available; logic is allowed 90% of
    /// the part, the room place and route needs). `--json` has `fits` and `overflows`. The exit
    /// status is 0 either way: this is a report; `edgeflow bitstream` is what refuses.
    ///
    /// With --fit DIR it refits the board's logic and flip-flop constants to the calibration
    /// runs in DIR instead, and prints them as the board file's `[fit]` table.
    ///
    /// Example: edgeflow cost --spec specs/digits.toml --board icebreaker --synth synth.json
    ///
    /// Example: edgeflow cost --fit docs/calibration/runs --board icebreaker
    Cost {
        #[arg(long, required_unless_present = "fit")]
        spec: Option<PathBuf>,
        /// Refit from this directory of `edgeflow cost --json` and `edgeflow synth --json`
        /// reports (docs/calibration/runs, written by docs/calibration/reproduce.sh).
        #[arg(long, conflicts_with_all = ["spec", "synth"])]
        fit: Option<PathBuf>,
        /// Board name or file, as for `edgeflow plan --boards`.
        #[arg(long)]
        board: String,
        /// An `edgeflow synth --json` report of the same spec, to compare against.
        #[arg(long)]
        synth: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Predict every sample of a data set with a saved model (CSV: sample,predicted,label).
    ///
    /// Runs the reference model; the accuracy goes to standard error.
    ///
    /// Example: edgeflow infer --model digits.model -o predictions.csv
    Infer {
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
        /// How a CSV's values are brought into [0, 1], as for `edgeflow train`.
        #[arg(long, default_value = "feature")]
        scale: edgeflow_core::ScaleKind,
        /// Write every signal's waveform to this VCD file.
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// `rust-hdl` (the blocks' simulation models) or `verilator` (the emitted Verilog,
        /// compiled with a generated harness; far faster).
        #[arg(long, default_value = "rust-hdl")]
        engine: String,
        /// Sample words the host link takes per clock (1 to z_1), or `auto`: the fewest with
        /// which a sample's words fit in a block cycle (hdl/PROTOCOL.md, input lanes).
        #[arg(long, default_value = "auto")]
        input_lanes: String,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark every backend against the CPU references, with board projections.
    ///
    /// Example: edgeflow bench --spec specs/dey-mnist.toml --json report.json --plot bench.svg
    /// Sweep:   edgeflow bench --spec specs/dey-mnist.toml --sweep width --plot width.png
    Bench(BenchCli),
    /// Learning quality: a grid of networks on the bundled digits (activation x width x
    /// depth) trained with the bit-exact reference model and with float; the test accuracy of
    /// both and the gap per network, as a table, JSON and a chart. The worst gap is the
    /// headline.
    ///
    /// Example: edgeflow quality --epochs 30 -o docs/quality --set learning_rate_shift=3
    Quality(quality::QualityCli),
    /// List OpenCL platforms and devices: compute units, memory, driver version.
    ///
    /// The index shown is what `--backend opencl:N` and `kernels build --device N` take.
    Devices {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// OpenCL kernels: export the device binary of the program.
    Kernels {
        #[command(subcommand)]
        cmd: KernelsCmd,
    },
    /// Write the network's Verilog (and a board top with its pin constraints when --board is
    /// given), linted with `verilator --lint-only -Wall` (documented waivers only).
    Verilog {
        #[arg(long, required_unless_present_any = ["standin", "plan"])]
        spec: Option<PathBuf>,
        /// Write the Verilog of every stage of this plan instead (`<spec>_stage<i>.v`: the
        /// stage's junctions on the plan's schedule with its boundary ports).
        #[arg(long, conflicts_with_all = ["spec", "board", "standin"])]
        plan: Option<PathBuf>,
        /// icebreaker, alchitry-cu, nexys4-ddr, ulx3s-85f, ulx3s-45f or ulx3s-12f.
        #[arg(long)]
        board: Option<String>,
        /// Design clock in MHz (default: the board's).
        #[arg(long, value_parser = util::parse_mhz)]
        freq: Option<f64>,
        #[arg(long, default_value_t = 115_200)]
        baud: u32,
        #[arg(short, long)]
        out: PathBuf,
        #[arg(long, hide = true)]
        standin: Option<String>,
        /// Input lanes of the network's Verilog (1 to z_1, or `auto`); a --board top keeps the
        /// UART's one word per clock.
        #[arg(long, default_value = "auto")]
        input_lanes: String,
        #[arg(long)]
        json: bool,
    },
    /// Synthesize with yosys for a target and print LUT/FF/DSP/BRAM used, available and %.
    ///
    /// Example: edgeflow synth --spec specs/dey-mnist.toml --target xc7a100t
    Synth {
        #[arg(long, required_unless_present = "standin")]
        spec: Option<PathBuf>,
        /// ice40-up5k, ice40-hx8k, xc7a100t, ecp5-85k, ecp5-45k, ecp5-25k or ecp5-12k.
        #[arg(long)]
        target: String,
        #[arg(long, hide = true)]
        standin: Option<String>,
        #[arg(long)]
        json: bool,
        /// Resource-utilisation chart (% of the part per resource), SVG or PNG by extension.
        #[arg(long)]
        plot: Vec<PathBuf>,
    },
    /// Build a bitstream for an iCE40 or ECP5 board: yosys, nextpnr-ice40 and icepack, or
    /// nextpnr-ecp5 and ecppack; post-route static timing.
    ///
    /// Example: edgeflow bitstream --spec specs/digits.toml --board icebreaker -o build/
    Bitstream {
        #[arg(long, required_unless_present = "standin")]
        spec: Option<PathBuf>,
        /// icebreaker, alchitry-cu, ulx3s-85f, ulx3s-45f or ulx3s-12f.
        #[arg(long)]
        board: String,
        #[arg(short, long)]
        out: PathBuf,
        /// Design clock in MHz (default: the board's, e.g. 30 on the iCEBreaker, 28.125 on the
        /// ULX3S; values other than the oscillator's go through the PLL).
        #[arg(long, value_parser = util::parse_mhz)]
        freq: Option<f64>,
        #[arg(long, default_value_t = 115_200)]
        baud: u32,
        /// nextpnr placement seed, 0 to 2147483647 (nextpnr reads a signed 32-bit number).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(..=i32::MAX as i64))]
        seed: u32,
        /// Build the board top with the resident data memory (`train --resident`); use
        /// --baud 3000000 for the rate `train --resident` expects by default.
        #[arg(long, conflicts_with = "standin")]
        resident: bool,
        #[arg(long, hide = true)]
        standin: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Load a bitstream onto a board with openFPGALoader.
    Deploy {
        #[arg(long)]
        board: String,
        bitstream: PathBuf,
        /// Print the command instead of running it.
        #[arg(long)]
        dry_run: bool,
        /// Write the SPI flash (persistent) instead of loading the FPGA's SRAM.
        #[arg(long)]
        flash: bool,
        #[arg(long)]
        json: bool,
    },
    /// Export a Vivado project script (TCL + XDC + Verilog) for a Xilinx board.
    Vivado {
        #[arg(long, required_unless_present = "standin")]
        spec: Option<PathBuf>,
        #[arg(long, default_value = "nexys4-ddr")]
        board: String,
        #[arg(short, long)]
        out: PathBuf,
        /// Design clock in MHz, made by the MMCM (default 100).
        #[arg(long, value_parser = util::parse_mhz)]
        freq: Option<f64>,
        #[arg(long, default_value_t = 115_200)]
        baud: u32,
        #[arg(long, hide = true)]
        standin: Option<String>,
        #[arg(long)]
        json: bool,
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
        /// Where to write the program binary.
        #[arg(short, long)]
        out: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args)]
struct BenchCli {
    /// Spec file (TOML).
    #[arg(long)]
    spec: PathBuf,
    /// Backends to measure, comma-separated; ones that cannot run here are reported as
    /// unavailable with the reason. The CPU baselines float (same sparse network) and dense
    /// (same layer sizes, fully connected) are always measured. Default: reference, float,
    /// dense, opencl, rtl, verilator (a sweep: reference, float, dense, opencl).
    #[arg(long, value_delimiter = ',')]
    backends: Option<Vec<String>>,
    /// Boards to project (board files in boards/, comma-separated or repeated); default: every
    /// FPGA board file, and nexys4-ddr.
    #[arg(long = "board", value_delimiter = ',')]
    boards: Vec<String>,
    /// Also project at this clock (MHz), e.g. the Fmax a place-and-route reported.
    #[arg(long)]
    fmax: Vec<f64>,
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
    /// JSON report: `--json` prints it instead of the table, `--json FILE` writes it too.
    #[arg(long, num_args = 0..=1, default_missing_value = "-")]
    json: Option<PathBuf>,
    /// Chart of the results, SVG or PNG by extension; repeat for both.
    #[arg(long)]
    plot: Vec<PathBuf>,
    /// Instead of one spec, a family grown from it: cost per sample against the edge count.
    #[arg(long, value_enum)]
    sweep: Option<bench::Sweep>,
}

#[derive(Subcommand)]
enum SpecCmd {
    /// Validate a spec and print its derived values: fan-in, |W|, clocks per junction, block
    /// cycle, density, staleness and multipliers.
    ///
    /// Every broken rule is listed with the field and a fix. Example: edgeflow spec check specs/dey-mnist.toml
    Check {
        /// Spec file (TOML); specs/ holds tiny, digits, dey-mnist and mnist-large.
        spec: PathBuf,
        /// Print one JSON object instead of text.
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
    if let Some(cmd) = &cli.cmd {
        if let Some(k) = cli
            .kernel_binary
            .as_deref()
            .filter(|_| !paths::uses_opencl(cmd))
        {
            anyhow::bail!(
                "--kernel-binary {}: only an OpenCL backend loads kernels (train/eval --backend opencl[:DEVICE], bench with opencl among --backends); this command would ignore it: drop --kernel-binary or choose an OpenCL backend",
                k.display()
            );
        }
        paths::of_command(cmd, cli.kernel_binary.as_deref()).check()?;
    }
    board::opencl::set_kernel_binary(cli.kernel_binary.clone());
    match cli.cmd {
        None => train::demo(),
        Some(Cmd::Bench(b)) => bench::bench_cmd(bench::BenchArgs {
            spec: b.spec,
            backends: b.backends,
            boards: b.boards,
            fmax: b.fmax,
            synth_report: b.synth_report,
            samples: b.samples,
            repeat: b.repeat,
            budget: b.budget,
            data: b.data,
            scale: b.scale,
            json: b.json,
            plot: b.plot,
            sweep: b.sweep,
        }),
        Some(Cmd::Quality(q)) => quality::quality_cmd(q),
        Some(Cmd::Export(a)) => export_cmd::exec(a),
        Some(Cmd::Import(a)) => import_cmd::exec(a),
        Some(Cmd::Spec {
            cmd: SpecCmd::Check { spec, json },
        }) => spec_cmd::check(&spec, json),
        Some(Cmd::Pattern {
            spec,
            junction,
            json,
        }) => spec_cmd::pattern(&spec, junction, json),
        Some(Cmd::Train {
            spec,
            init,
            plan: Some(plan),
            verify,
            data,
            label_column,
            scale,
            epochs,
            backend,
            out,
            plot,
            json,
            ..
        }) => {
            let _ = spec;
            plan_cmd::train_plan(plan_cmd::TrainPlanArgs {
                plan: &plan,
                init: init.as_deref(),
                data: &data,
                label_column,
                scale,
                epochs,
                backend: &backend,
                out: out.as_deref(),
                plot: plot.as_deref(),
                json,
                verify,
            })
        }
        Some(Cmd::Train {
            spec,
            init,
            plan: None,
            verify: _,
            data,
            label_column,
            scale,
            epochs,
            backend,
            out,
            plot: _,
            json,
            resident: true,
            board,
            baud,
            freq,
        }) => resident_cmd::train_resident_cmd(resident_cmd::ResidentArgs {
            spec,
            init,
            board: board.expect("clap requires --board with --resident"),
            data,
            label_column,
            scale,
            epochs,
            backend,
            baud,
            freq,
            out,
            json,
            flip_byte: std::env::var("EDGEFLOW_TEST_FLIP_BYTE")
                .ok()
                .and_then(|v| v.parse().ok()),
        }),
        Some(Cmd::Train {
            spec,
            init,
            plan: None,
            verify: _,
            data,
            label_column,
            scale,
            epochs,
            backend,
            out,
            plot,
            json,
            ..
        }) => train::train_cmd(train::TrainArgs {
            spec,
            init,
            data,
            label_column,
            scale,
            epochs,
            backend,
            out,
            plot,
            json,
        }),
        Some(Cmd::Eval {
            model,
            backend,
            data,
            label_column,
            scale,
            json,
        }) => train::eval_cmd(&model, &backend, &data, label_column, scale, json),
        Some(Cmd::Plan {
            spec,
            boards,
            permute,
            json,
            out,
        }) => plan_cmd::plan_cmd(&spec, &boards, permute, json, out.as_deref()),
        Some(Cmd::Infer {
            model,
            data,
            label_column,
            scale,
            out,
            json,
        }) => train::infer_cmd(&model, &data, label_column, scale, out.as_deref(), json),
        Some(Cmd::Devices { json }) => opencl_cmd::devices_cmd(json),
        Some(Cmd::Kernels {
            cmd: KernelsCmd::Build { device, out, json },
        }) => opencl_cmd::kernels_build_cmd(device.as_deref(), &out, json),
        Some(Cmd::Sim {
            spec,
            samples,
            data,
            scale,
            vcd,
            engine,
            input_lanes,
            json,
        }) => match engine.as_str() {
            "verilator" => sim_verilator::sim_cmd(
                &spec,
                samples,
                data.as_deref(),
                scale,
                vcd.is_some(),
                &input_lanes,
                json,
            ),
            "rust-hdl" => sim_cmd::sim_cmd(
                &spec,
                samples,
                data.as_deref(),
                scale,
                vcd.as_deref(),
                &input_lanes,
                json,
            ),
            other => anyhow::bail!("unknown --engine '{other}'; use rust-hdl or verilator"),
        },
        Some(Cmd::Verilog {
            plan: Some(plan),
            out,
            json,
            ..
        }) => stage_cmd::stage_verilog_cmd(&plan, &out, json),
        Some(Cmd::Verilog {
            spec,
            plan: None,
            board,
            freq,
            baud,
            out,
            standin,
            input_lanes,
            json,
        }) => flow_cmd::verilog_cmd(flow_cmd::VerilogArgs {
            spec,
            standin,
            board,
            freq,
            baud,
            out,
            input_lanes,
            json,
        }),
        Some(Cmd::Cost {
            spec,
            fit,
            board,
            synth,
            json,
        }) => match (fit, spec) {
            (Some(dir), _) => cost_cmd::fit_cmd(&dir, &board, json),
            (None, Some(spec)) => cost_cmd::cost_cmd(&spec, &board, synth.as_deref(), json),
            (None, None) => unreachable!("clap requires --spec without --fit"),
        },
        Some(Cmd::Synth {
            spec,
            target,
            standin,
            json,
            plot,
        }) => flow_cmd::synth_cmd(spec.as_deref(), standin.as_deref(), &target, json, &plot),
        Some(Cmd::Bitstream {
            spec,
            board,
            out,
            freq,
            baud,
            seed,
            resident,
            standin,
            json,
        }) => flow_cmd::bitstream_cmd(flow_cmd::BitstreamArgs {
            spec,
            resident,
            standin,
            board,
            out,
            freq,
            baud,
            seed,
            json,
        }),
        Some(Cmd::Deploy {
            board,
            bitstream,
            dry_run,
            flash,
            json,
        }) => deploy_cmd::deploy_cmd(&board, &bitstream, dry_run, flash, json),
        Some(Cmd::Vivado {
            spec,
            board,
            out,
            freq,
            baud,
            standin,
            json,
        }) => flow_cmd::vivado_cmd(
            spec.as_deref(),
            standin.as_deref(),
            &board,
            &out,
            freq,
            baud,
            json,
        ),
    }
}
