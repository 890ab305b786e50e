//! The command line: one module per subcommand, each with its clap arguments, the files it
//! reads and writes, and an `exec` that hands the work to the library modules.

use crate::backends::Needs;
use crate::paths::Paths;
use crate::ui;
use anyhow::{bail, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

pub mod bench;
pub mod bitstream;
pub mod completions;
pub mod cost;
pub mod deploy;
pub mod devices;
pub mod eval;
pub mod fit;
pub mod infer;
pub mod kernels;
pub mod man;
pub mod pattern;
pub mod plan;
pub mod quality;
pub mod sim;
pub mod spec;
pub mod synth;
pub mod train;
pub mod verilog;
pub mod vivado;

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
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
    /// Print only results and errors: no progress, no notes.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print the files a command checked and how long it took.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// `--kernel-binary`, on the commands that can run an OpenCL backend.
#[derive(clap::Args)]
pub struct OpenClArgs {
    /// Load the OpenCL program from this device binary (written by `edgeflow kernels build`)
    /// instead of building the kernels from source; only with an OpenCL backend.
    #[arg(long, value_name = "FILE")]
    pub kernel_binary: Option<PathBuf>,
}

impl OpenClArgs {
    /// Refuses a kernel binary the run would not load, else hands it to the OpenCL boards.
    fn apply(&self, uses_opencl: bool) -> Result<()> {
        if let Some(k) = self.kernel_binary.as_deref().filter(|_| !uses_opencl) {
            bail!(
                "--kernel-binary {}: only an OpenCL backend loads kernels (--backend opencl[:DEVICE], or opencl among bench --backends); this run would ignore it: drop --kernel-binary or choose an OpenCL backend",
                k.display()
            );
        }
        crate::board::opencl::set_kernel_binary(self.kernel_binary.clone());
        Ok(())
    }
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Inspect a network spec.
    Spec(spec::Args),
    /// Dump a junction's connection pattern: every edge's left neuron, lane, bank and row.
    ///
    /// Example: edgeflow pattern --spec specs/tiny.toml --junction 2 --json
    Pattern(pattern::Args),
    /// Train a network: one pipelined stream per epoch, accuracy after each epoch.
    ///
    /// Example: edgeflow train --spec specs/digits.toml --epochs 30 -o digits.model --plot curve.svg
    Train(train::Args),
    /// Evaluate a saved model on the train/test split of a data set.
    ///
    /// Example: edgeflow eval --model digits.model --backend opencl:0 --json
    Eval(eval::Args),
    /// Split a network across boards in a chain: the groups of junctions, which board hosts
    /// each, every z, the predicted samples/s, a lower bound, and the usual baselines.
    ///
    /// Example: edgeflow plan --spec specs/mnist-large.toml --boards nexys4-ddrx4 -o plan.json
    Plan(plan::Args),
    /// The cost model's prediction (LUT, FF, DSP, block RAMs) for one board holding the whole
    /// network at the spec's own z, and with --synth-report how close it is to an `edgeflow
    /// synth --json` report of the same spec (docs/calibration/reproduce.sh).
    ///
    /// The last line is the verdict: "fits BOARD", or "DOES NOT FIT BOARD" with every resource
    /// the model puts over the board (predicted against available; logic is allowed 90% of
    /// the part, the room place and route needs). `--json` has `fits` and `overflows`. The exit
    /// status is 0 either way: this is a report; `edgeflow bitstream` is what refuses.
    ///
    /// With --fit DIR it refits the board's logic and flip-flop constants to the calibration
    /// runs in DIR instead, and prints them as the board file's `[fit]` table.
    ///
    /// Example: edgeflow cost --spec specs/digits.toml --board icebreaker --synth-report synth.json
    ///
    /// Example: edgeflow cost --fit docs/calibration/runs --board icebreaker
    Cost(cost::Args),
    /// The fastest designs of a spec's network that fit a board: every z per junction (and
    /// the pipeline choices the board leaves open) costed by the model, timed as the hardware
    /// builds it, ranked by samples/s; -o writes the best one's spec, --verify builds them.
    ///
    /// Only choices that keep the network's function are searched: layers, fan-out, format,
    /// activation, pattern, seeds and learning rate stay as the spec has them.
    ///
    /// Example: edgeflow fit --spec specs/dey-mnist.toml --board ulx3s-85f -o dey-mnist-ulx3s.toml
    Fit(fit::Args),
    /// Predict every sample of a data set with a saved model (CSV: sample,predicted,label).
    ///
    /// Runs the reference model; the accuracy goes to standard error.
    ///
    /// Example: edgeflow infer --model digits.model -o predictions.csv
    Infer(infer::Args),
    /// Export a trained model: ONNX (runs in any ONNX runtime) or NPZ (weights, masks and
    /// format for NumPy). See docs/export.md.
    ///
    /// Example: edgeflow export --model digits.model -o digits.onnx
    Export(crate::export_cmd::ExportCli),
    /// Make a model file from weights trained elsewhere (NPZ, in the spec's pattern),
    /// rounded to the spec's format. See docs/export.md.
    ///
    /// Example: edgeflow import --spec specs/digits.toml --npz weights.npz -o digits.model
    Import(crate::import_cmd::ImportCli),
    /// Simulate the RTL network (rust-hdl) against the reference model: load the spec's
    /// initial weights, train N samples, infer them, read everything back and compare.
    ///
    /// Example: edgeflow sim --spec specs/tiny.toml --samples 32 --vcd tiny.vcd --json
    Sim(sim::Args),
    /// Benchmark every backend against the CPU references, with board projections.
    ///
    /// Example: edgeflow bench --spec specs/dey-mnist.toml -o report.json --plot bench.svg
    ///
    /// Sweep:   edgeflow bench --spec specs/dey-mnist.toml --sweep width --plot width.png
    Bench(bench::Args),
    /// Learning quality: a grid of networks on the bundled digits (activation x width x
    /// depth) trained with the bit-exact reference model and with float; the test accuracy of
    /// both and the gap per network, as a table, JSON and a chart. The worst gap is the
    /// headline.
    ///
    /// Example: edgeflow quality --epochs 30 -o docs/quality --set learning_rate_shift=3
    Quality(quality::Args),
    /// List OpenCL platforms and devices: compute units, memory, driver version.
    ///
    /// The index shown is what `--backend opencl:N` and `kernels build --device N` take.
    Devices(devices::Args),
    /// OpenCL kernels: export the device binary of the program.
    Kernels(kernels::Args),
    /// Write the network's Verilog (and a board top with its pin constraints when --board is
    /// given), linted with `verilator --lint-only -Wall` (documented waivers only).
    Verilog(verilog::Args),
    /// Synthesize with yosys for a target and print LUT/FF/DSP/BRAM used, available and %.
    ///
    /// Example: edgeflow synth --spec specs/dey-mnist.toml --target xc7a100t
    Synth(synth::Args),
    /// Build a bitstream for an iCE40 or ECP5 board: yosys, nextpnr-ice40 and icepack, or
    /// nextpnr-ecp5 and ecppack; post-route static timing.
    ///
    /// Example: edgeflow bitstream --spec specs/digits.toml --board icebreaker -o build/
    Bitstream(bitstream::Args),
    /// Load a bitstream onto a board with openFPGALoader.
    Deploy(deploy::Args),
    /// Export a Vivado project script (TCL + XDC + Verilog) for a Xilinx board.
    Vivado(vivado::Args),
    /// Print a shell completion script.
    ///
    /// Example: edgeflow completions bash > ~/.local/share/bash-completion/completions/edgeflow
    Completions(completions::Args),
    /// Write the manual pages: edgeflow.1 and one page per subcommand.
    ///
    /// Example: edgeflow man -o man/ && man -l man/edgeflow-train.1
    Man(man::Args),
}

impl Cmd {
    /// Every file the command reads or writes, by the flag that names it, for `Paths::check`.
    fn paths(&self) -> Paths {
        match self {
            Cmd::Spec(_) | Cmd::Pattern(_) | Cmd::Devices(_) | Cmd::Deploy(_) => Paths::new(),
            Cmd::Completions(a) => a.paths(),
            Cmd::Man(a) => a.paths(),
            Cmd::Train(a) => a.paths(),
            Cmd::Eval(a) => a.paths(),
            Cmd::Plan(a) => a.paths(),
            Cmd::Cost(a) => a.paths(),
            Cmd::Fit(a) => a.paths(),
            Cmd::Infer(a) => a.paths(),
            Cmd::Export(a) => crate::export_cmd::paths(a),
            Cmd::Import(a) => crate::import_cmd::paths(a),
            Cmd::Sim(a) => a.paths(),
            Cmd::Bench(a) => a.paths(),
            Cmd::Quality(a) => a.paths(),
            Cmd::Kernels(a) => a.paths(),
            Cmd::Verilog(a) => a.paths(),
            Cmd::Synth(a) => a.paths(),
            Cmd::Bitstream(a) => a.paths(),
            Cmd::Vivado(a) => a.paths(),
        }
    }

    /// The `--kernel-binary` of a command that can run OpenCL, and whether this run does.
    fn opencl(&self) -> Option<(&OpenClArgs, bool)> {
        match self {
            Cmd::Train(a) => Some((&a.opencl, a.backend.backend.needs == Needs::OpenCl)),
            Cmd::Eval(a) => Some((&a.opencl, a.backend.backend.needs == Needs::OpenCl)),
            Cmd::Bench(a) => Some((&a.opencl, a.uses_opencl())),
            _ => None,
        }
    }

    fn exec(self) -> Result<()> {
        match self {
            Cmd::Spec(a) => a.exec(),
            Cmd::Pattern(a) => a.exec(),
            Cmd::Train(a) => a.exec(),
            Cmd::Eval(a) => a.exec(),
            Cmd::Plan(a) => a.exec(),
            Cmd::Cost(a) => a.exec(),
            Cmd::Fit(a) => a.exec(),
            Cmd::Infer(a) => a.exec(),
            Cmd::Export(a) => crate::export_cmd::exec(a),
            Cmd::Import(a) => crate::import_cmd::exec(a),
            Cmd::Sim(a) => a.exec(),
            Cmd::Bench(a) => a.exec(),
            Cmd::Quality(a) => a.exec(),
            Cmd::Devices(a) => a.exec(),
            Cmd::Kernels(a) => a.exec(),
            Cmd::Verilog(a) => a.exec(),
            Cmd::Synth(a) => a.exec(),
            Cmd::Bitstream(a) => a.exec(),
            Cmd::Deploy(a) => a.exec(),
            Cmd::Vivado(a) => a.exec(),
            Cmd::Completions(a) => a.exec(),
            Cmd::Man(a) => a.exec(),
        }
    }
}

/// A clock in MHz: a finite positive number (what the board can make is checked with the board).
pub fn parse_mhz(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!(
            "`{s}` is not a clock: give a positive number of MHz, e.g. 24"
        )),
    }
}

/// The command line as `edgeflow` parses it, with help that depends on the board files.
pub fn command() -> clap::Command {
    let ice40_ecp5 = |t: &str| t.starts_with("ice40") || t.starts_with("ecp5");
    let bitstream = clock_help("", &ice40_ecp5);
    let resident = clock_help(" of a resident run", &ice40_ecp5);
    let all = clock_help("", &|_| true);
    let xc7 = clock_help("", &|t| t.starts_with("xc7"));
    Cli::command()
        .mut_subcommand("bitstream", |c| c.mut_arg("freq", |a| a.help(bitstream)))
        .mut_subcommand("train", |c| c.mut_arg("freq", |a| a.help(resident)))
        .mut_subcommand("verilog", |c| c.mut_arg("freq", |a| a.help(all)))
        .mut_subcommand("vivado", |c| c.mut_arg("freq", |a| a.help(xc7)))
}

/// `--freq` help naming every board's default clock as its board description gives it.
fn clock_help(what: &str, targets: &dyn Fn(&str) -> bool) -> String {
    let defaults: Vec<String> = edgeflow_hdl::boards::boards()
        .iter()
        .filter(|b| targets(b.target))
        .map(|b| format!("{} {}", b.name, b.default_mhz))
        .collect();
    format!(
        "Design clock{what} in MHz (default: the board's: {}); a clock other than the oscillator's comes from its PLL or MMCM",
        defaults.join(", ")
    )
}

/// Parses the process's arguments, exiting with clap's message on a usage error.
pub fn parse() -> Cli {
    let m = command().get_matches();
    Cli::from_arg_matches(&m).unwrap_or_else(|e| e.exit())
}

/// Runs the parsed command line: flags and paths checked first, then the command's work.
pub fn exec(cli: Cli) -> Result<()> {
    ui::set_level(cli.quiet, cli.verbose);
    let Some(cmd) = cli.cmd else {
        return crate::train::demo();
    };
    let mut paths = cmd.paths();
    if let Some((o, uses)) = cmd.opencl() {
        o.apply(uses)?;
        paths = paths.input("--kernel-binary", o.kernel_binary.as_deref());
    }
    paths.check()?;
    ui::detail(paths.describe());
    let t0 = std::time::Instant::now();
    cmd.exec()?;
    ui::detail(format!("done in {:.1} s", t0.elapsed().as_secs_f64()));
    Ok(())
}
