//! `edgeflow bench`: every backend against the CPU references, on the same data, in one run.
//!
//! Measured: training and inference samples/s of each backend (best of `--repeat` runs, each
//! from the spec's initial state on the same stream), plus whether its final state is the
//! reference model's bit for bit. The CPU baselines are always measured: the float reference
//! on the same sparse network and the dense `f32` network of the same layer sizes (both
//! ordinary SGD, batch 1, one core), and the dense network trained with mini-batch SGD on a
//! GEMM, on `--threads` threads. Projected: a board trains one sample per block cycle,
//! so samples/s = clock / clocks per sample, for every clock known for the board (the board
//! file, the published design, `--freq`, a synthesis report).
//!
//! `--to-accuracy X` also trains the CPU backends epoch by epoch until the test accuracy
//! reaches X, and gives every backend and projection its seconds of training to get there.
//!
//! `--sweep width|density|z` repeats the CPU measurements and projections over a family of
//! specs grown from the given one, for the cost-per-sample-versus-edges plot.

mod accuracy;
mod boards;
mod harness;
mod single;
mod sweep;
#[cfg(test)]
mod tests;

use crate::backends::Use;
use crate::util::write_atomic;
use anyhow::{bail, Result};
use edgeflow_core::Spec;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

pub use crate::backends::sparse_edge_ops;
use boards::*;
pub use boards::{board_clocks, fmax_from_report, machine, rate, BoardClocks, Projection};
pub use harness::Measured;
use harness::*;
use single::single_cmd;
use sweep::sweep_cmd;
pub use sweep::sweep_specs;

/// The backends `edgeflow bench` tries when `--backends` is not given (the float baselines,
/// [`crate::backends::float_baselines`], are measured on every run).
pub const DEFAULT_BACKENDS: &str = "reference,float,dense,opencl,rtl,verilator";
/// A sweep builds many networks, some large: the simulations would take hours.
pub const SWEEP_BACKENDS: &str = "reference,float,dense,opencl";

/// The published design's clock: Dey, Chugg, Beerel ran `specs/dey-mnist.toml`'s network at
/// 15 MHz on a Nexys4 DDR.
const PUBLISHED: &[(&str, f64, &str)] = &[(
    "nexys4-ddr",
    15.0,
    "published design (Dey, Chugg, Beerel), 15 MHz",
)];

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Sweep {
    /// Hidden layers ×1/2 … ×16 at constant density (fan-out scales with the layer).
    Width,
    /// Fan-out of every junction ×1/4 … ×8, capped at fully connected.
    Density,
    /// Edges per clock of every junction ×1/8 … ×8: same network, more or fewer multipliers.
    Z,
}

pub struct BenchArgs {
    pub spec: PathBuf,
    pub backends: Option<Vec<String>>,
    pub boards: Vec<String>,
    /// Further clocks (MHz) to project every board at.
    pub freq: Vec<f64>,
    pub synth_report: Option<PathBuf>,
    pub samples: usize,
    pub repeat: usize,
    pub budget: f64,
    /// `None`: digits, or random samples when digits does not fit (bench_data.rs).
    pub data: Option<String>,
    pub scale: edgeflow_core::ScaleKind,
    /// Print the JSON report instead of the table.
    pub json: bool,
    /// Write the JSON report to this file.
    pub out: Option<PathBuf>,
    pub plot: Vec<PathBuf>,
    pub sweep: Option<Sweep>,
    /// Samples per step of the `dense-minibatch` baseline.
    pub batch: usize,
    /// Threads of the `dense-minibatch` baseline.
    pub threads: Option<usize>,
    /// Test accuracy (a fraction) to train the CPU backends to.
    pub to_accuracy: Option<f64>,
    /// Most epochs `--to-accuracy` trains.
    pub epochs: usize,
}

fn progress(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} bench [{elapsed}] {msg}").unwrap());
    pb.set_prefix("bench");
    crate::ui::show(pb)
}

/// `--backends` in order, with the float baselines always present (the speed-ups need them).
fn backend_list(requested: &Option<Vec<String>>, sweep: bool) -> Vec<String> {
    let default = vec![if sweep {
        SWEEP_BACKENDS
    } else {
        DEFAULT_BACKENDS
    }
    .to_string()];
    let requested = requested.as_ref().unwrap_or(&default);
    let mut v: Vec<String> = Vec::new();
    for b in requested
        .iter()
        .flat_map(|s| s.split(','))
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        if !v.iter().any(|x| x == b) {
            v.push(b.to_string());
        }
    }
    for base in crate::backends::float_baselines() {
        if !v.iter().any(|x| x == base.name) {
            v.push(base.name.into());
        }
    }
    // the CPU references first, in the registry's order, then the others in the order asked for
    let cpu: Vec<&str> = crate::backends::BACKENDS
        .iter()
        .filter(|b| b.cpu_reference)
        .map(|b| b.name)
        .collect();
    let order = |b: &String| cpu.iter().position(|x| x == b).unwrap_or(cpu.len());
    v.sort_by_key(order);
    v
}

fn board_list(a: &BenchArgs, spec: &Spec) -> Result<Vec<BoardClocks>> {
    let mut names: Vec<String> = a
        .boards
        .iter()
        .flat_map(|s| s.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        names = board_files();
        if !names.iter().any(|n| n == "nexys4-ddr") {
            names.insert(0, "nexys4-ddr".into());
        }
    }
    // The report named by --synth-report, else every report `edgeflow synth` kept for exactly
    // this design (report_cache: keyed by the Verilog it synthesized).
    let paths: Vec<PathBuf> = match &a.synth_report {
        Some(p) => vec![p.clone()],
        None => crate::report_cache::lookup(&spec.name, || {
            let net = edgeflow_hdl::design::Inner::Network(spec.clone());
            edgeflow_hdl::design::inner_verilog(&net).ok()
        }),
    };
    let mut reports = Vec::new();
    for p in paths {
        let (f, rb) = fmax_from_report(&p)?;
        if let Some(b) = &rb {
            if !names.contains(b) {
                names.push(b.clone());
            }
        }
        reports.push((f, rb, p));
    }
    for &f in &a.freq {
        if !(f > 0.0 && f.is_finite()) {
            bail!("--freq {f}: must be a positive clock in MHz");
        }
    }
    let mut out = Vec::new();
    for n in names {
        let mut b = board_clocks(&n)?;
        for &f in &a.freq {
            b.clocks.push((f, "--freq".into(), None));
        }
        let mut placed = !a.freq.is_empty();
        for (f, rb, p) in &reports {
            let same_part = || report_part(p).is_none_or(|rp| rp.eq_ignore_ascii_case(&b.part));
            if rb.as_deref().map_or_else(same_part, |rb| rb == n) {
                let kind = report_fmax_kind(p).unwrap_or_else(|| "place-and-route Fmax".into());
                b.clocks.push((
                    *f,
                    format!("{kind}, {}", p.display()),
                    boards::report_clocks_per_sample(p),
                ));
                placed = true;
            }
        }
        if !placed {
            let part = b.part.to_ascii_lowercase();
            b.fmax_note = Some(if part.starts_with("ice40") || part.starts_with("lfe5u") {
                format!("no Fmax given: `edgeflow bitstream --spec SPEC --board {n} -o DIR --json > r.json` reports the post-route Fmax; pass it with --synth-report r.json")
            } else {
                format!("no Fmax given: the open flow has no timing for {} (yosys synthesizes, Vivado places and routes: `edgeflow vivado --board {n}` exports the project); pass Vivado's Fmax with --freq MHZ", b.part)
            });
        }
        out.push(b);
    }
    Ok(out)
}

pub fn bench_cmd(a: BenchArgs) -> Result<()> {
    for b in a.backends.iter().flatten().flat_map(|s| s.split(',')) {
        if !b.trim().is_empty() {
            crate::backends::parse(b)
                .and_then(|c| c.check("--backends", Use::Bench).cloned())
                .map_err(|e| anyhow::anyhow!("--backends: {e}"))?;
        }
    }
    if a.samples == 0 || a.repeat == 0 {
        bail!("--samples and --repeat must be at least 1");
    }
    if !(a.budget > 0.0) {
        bail!("--budget must be a positive number of seconds");
    }
    if a.batch == 0 || a.threads == Some(0) {
        bail!("--batch and --threads must be at least 1");
    }
    if let Some(x) = a.to_accuracy {
        accuracy::check_target(x, a.epochs, a.sweep.is_some())?;
    }
    for p in &a.plot {
        if !matches!(p.extension().and_then(|e| e.to_str()), Some("svg" | "png")) {
            bail!("--plot {}: the file must end in .svg or .png", p.display());
        }
    }
    let spec = Spec::load(&a.spec)?;
    let boards = board_list(&a, &spec)?;
    match a.sweep {
        Some(s) => sweep_cmd(&a, &spec, s, &boards),
        None => single_cmd(&a, &spec, &boards),
    }
}

/// Writes the JSON report to `-o`, when given.
fn write_report(a: &BenchArgs, v: &serde_json::Value) -> Result<()> {
    if let Some(p) = &a.out {
        let mut text = serde_json::to_string_pretty(v)?;
        text.push('\n');
        write_atomic(p, text.as_bytes())?;
    }
    Ok(())
}

fn fmt_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k", r / 1e3)
    } else {
        format!("{r:.1} ")
    }
}

fn fmt_x(x: Option<f64>) -> String {
    x.map(|v| {
        if v >= 100.0 {
            format!("{v:.0}x")
        } else if v >= 0.01 {
            format!("{v:.2}x")
        } else {
            format!("{v:.1e}x")
        }
    })
    .unwrap_or_else(|| "-".into())
}
