//! `edgeflow bench`: every backend against the CPU references, on the same data, in one run.
//!
//! Measured: training and inference samples/s of each backend (best of `--repeat` runs, each
//! from the spec's initial state on the same stream), plus whether its final state is the
//! reference model's bit for bit. The CPU baselines are always measured: the float reference
//! on the same sparse network and the dense `f32` network of the same layer sizes (both
//! ordinary SGD, batch 1, one core). Projected: a board trains one sample per block cycle,
//! so samples/s = clock / clocks per sample, for every clock known for the board (the board
//! file, the published design, `--fmax`, a synthesis report).
//!
//! `--sweep width|density|z` repeats the CPU measurements and projections over a family of
//! specs grown from the given one, for the cost-per-sample-versus-edges plot.

use crate::backends::open_board;
use crate::board::Board;
use crate::chart::{self, Axes, BarChart, LineChart};
use crate::plot::Series;
use crate::util::{print_json, write_atomic};
use anyhow::{bail, Context, Result};
use edgeflow_core::order::epoch_order;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_sim::{DenseReference, FloatReference, Reference, SparseF32};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The backends `edgeflow bench` tries when `--backends` is not given.
/// The CPU baselines every run measures: the float reference (f64) and a fast `f32` version
/// of the same sparse network, and the dense network of the same layer sizes.
pub const FLOAT_BASELINES: [&str; 3] = ["float", "sparse-f32", "dense"];
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

/// Boards known without a board file (docs/hardware.md): name, part, board oscillator MHz.
const BUILTIN_BOARDS: &[(&str, &str, f64)] = &[
    ("nexys4-ddr", "XC7A100T-1CSG324", 100.0),
    ("icebreaker", "iCE40UP5K-SG48", 12.0),
    ("alchitry-cu", "iCE40HX8K-CB132", 100.0),
];

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
    pub fmax: Vec<f64>,
    pub synth_report: Option<PathBuf>,
    pub samples: usize,
    pub repeat: usize,
    pub budget: f64,
    /// `None`: digits, or random samples when digits does not fit (bench_data.rs).
    pub data: Option<String>,
    pub scale: edgeflow_core::ScaleKind,
    pub json: Option<PathBuf>,
    pub plot: Vec<PathBuf>,
    pub sweep: Option<Sweep>,
}

/// CPU time of the calling thread in seconds (`CLOCK_THREAD_CPUTIME_ID`, nanosecond
/// resolution), so the CPU references' rates can be read apart from other load on the machine.
fn thread_cpu_seconds() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// What runs a benchmark: a board (bit-exact) or one of the float baselines.
enum Runner {
    Board(Box<dyn Board>),
    Float(FloatReference),
    Sparse(SparseF32),
    Dense(DenseReference),
}

impl Runner {
    fn reset(&mut self, spec: &Spec) -> Result<()> {
        match self {
            Runner::Board(b) => b.load_state(&State::initial(spec)),
            Runner::Float(f) => {
                *f = FloatReference::new(spec);
                Ok(())
            }
            Runner::Sparse(x) => {
                *x = SparseF32::new(spec);
                Ok(())
            }
            Runner::Dense(d) => {
                *d = DenseReference::new(spec);
                Ok(())
            }
        }
    }
    fn train(&mut self, d: &Encoded) -> Result<()> {
        match self {
            Runner::Board(b) => b.train(d),
            Runner::Float(f) => {
                f.train(d);
                Ok(())
            }
            Runner::Sparse(x) => {
                x.train(d);
                Ok(())
            }
            Runner::Dense(x) => {
                x.train(d);
                Ok(())
            }
        }
    }
    fn infer(&mut self, d: &Encoded) -> Result<Vec<usize>> {
        match self {
            Runner::Board(b) => b.infer(d),
            Runner::Float(f) => Ok(f.infer(d)),
            Runner::Sparse(x) => Ok(x.infer(d)),
            Runner::Dense(x) => Ok(x.infer(d)),
        }
    }
    fn edge_ops_per_sample(&self, spec: &Spec) -> u64 {
        match self {
            Runner::Board(b) => b.edge_ops_per_sample(),
            Runner::Float(_) | Runner::Sparse(_) => sparse_edge_ops(spec),
            Runner::Dense(d) => d.edge_ops_per_sample(),
        }
    }
    /// Work of this backend happens on the calling thread, so its CPU time is meaningful.
    fn on_this_thread(&self, name: &str) -> bool {
        !matches!(self, Runner::Board(_)) || name == "reference"
    }
}

/// FF on every edge, UP on every edge, BP on the edges of hidden junctions.
pub fn sparse_edge_ops(spec: &Spec) -> u64 {
    spec.derived()
        .junctions
        .iter()
        .map(|j| j.edges as u64 * if j.index > 1 { 3 } else { 2 })
        .sum()
}

fn open(spec: &Spec, name: &str) -> Result<Runner> {
    Ok(match name {
        "float" => Runner::Float(FloatReference::new(spec)),
        "sparse-f32" => Runner::Sparse(SparseF32::new(spec)),
        "dense" => Runner::Dense(DenseReference::new(spec)),
        other => Runner::Board(open_board(spec, other)?),
    })
}

#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    pub backend: String,
    /// What the backend computes: `bit-exact` boards, or a `float` baseline.
    pub kind: &'static str,
    pub available: bool,
    /// Why the backend could not be benchmarked.
    pub unavailable_reason: Option<String>,
    /// Training samples per run (fewer than `--samples` when the time budget ran out).
    pub samples: usize,
    pub runs: usize,
    /// Best run, wall clock.
    pub train_samples_per_second: f64,
    /// Median run, wall clock.
    pub train_samples_per_second_median: f64,
    /// Best run, CPU time of the one thread doing the work (CPU backends only): the rate on an
    /// otherwise idle core.
    pub train_samples_per_second_cpu: Option<f64>,
    pub infer_samples_per_second: f64,
    pub edge_ops_per_sample: u64,
    pub train_edge_ops_per_second: f64,
    pub train_edge_ops_per_second_cpu: Option<f64>,
    /// Final state equals the reference model's after the same stream (bit-exact backends).
    pub bit_exact: Option<bool>,
    pub state_sha256: Option<String>,
    pub speedup_vs_float: Option<f64>,
    pub speedup_vs_dense: Option<f64>,
    /// Block cycles per sample the board itself reports (RTL simulation), if it does.
    pub clocks_per_sample: Option<f64>,
}

impl Measured {
    fn unavailable(backend: &str, reason: String) -> Measured {
        Measured {
            backend: backend.into(),
            kind: if FLOAT_BASELINES.contains(&backend) {
                "float"
            } else {
                "bit-exact"
            },
            available: false,
            unavailable_reason: Some(reason),
            samples: 0,
            runs: 0,
            train_samples_per_second: 0.0,
            train_samples_per_second_median: 0.0,
            train_samples_per_second_cpu: None,
            infer_samples_per_second: 0.0,
            edge_ops_per_sample: 0,
            train_edge_ops_per_second: 0.0,
            train_edge_ops_per_second_cpu: None,
            bit_exact: None,
            state_sha256: None,
            speedup_vs_float: None,
            speedup_vs_dense: None,
            clocks_per_sample: None,
        }
    }
}

/// `n` training samples: the epoch-0 order of the training split, repeated as needed.
fn stream(train: &Encoded, n: usize) -> Encoded {
    let order = epoch_order(train.len(), 0);
    let idx: Vec<usize> = (0..n).map(|i| order[i % order.len()]).collect();
    train.select(&idx)
}

struct Ctx<'a> {
    spec: &'a Spec,
    train: &'a Encoded,
    samples: usize,
    repeat: usize,
    budget: f64,
    /// Reference state SHA-256 after training `n` samples, computed on demand.
    ref_sha: std::collections::HashMap<usize, String>,
}

impl Ctx<'_> {
    fn reference_sha(&mut self, n: usize) -> String {
        if let Some(s) = self.ref_sha.get(&n) {
            return s.clone();
        }
        let mut r = Reference::new(self.spec);
        r.train(&stream(self.train, n));
        let s = r.state.sha256();
        self.ref_sha.insert(n, s.clone());
        s
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

fn measure(ctx: &mut Ctx, name: &str, pb: &ProgressBar) -> Measured {
    pb.set_message(format!("{name}: opening"));
    let mut r = match open(ctx.spec, name) {
        Ok(r) => r,
        Err(e) => return Measured::unavailable(name, format!("{e:#}")),
    };
    match measure_runner(ctx, name, &mut r, pb) {
        Ok(m) => m,
        Err(e) => Measured::unavailable(name, format!("failed while running: {e:#}")),
    }
}

fn measure_runner(ctx: &mut Ctx, name: &str, r: &mut Runner, pb: &ProgressBar) -> Result<Measured> {
    let spec = ctx.spec;
    // A short probe sizes the run so slow backends (RTL simulation) fit the time budget.
    let probe_n = ctx.samples.min(16);
    pb.set_message(format!("{name}: probing speed on {probe_n} samples"));
    r.reset(spec)?;
    let t0 = Instant::now();
    r.train(&stream(ctx.train, probe_n))?;
    let probe_rate = probe_n as f64 / t0.elapsed().as_secs_f64().max(1e-9);
    let n = ctx
        .samples
        .min(((probe_rate * ctx.budget / ctx.repeat as f64) as usize).max(probe_n));
    let data = stream(ctx.train, n);
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut sha = None;
    let mut clocks = None;
    for run in 0..ctx.repeat {
        pb.set_message(format!(
            "{name}: training {n} samples, run {}/{}",
            run + 1,
            ctx.repeat
        ));
        r.reset(spec)?;
        let c0 = thread_cpu_seconds();
        let t0 = Instant::now();
        r.train(&data)?;
        let dt = t0.elapsed().as_secs_f64().max(1e-9);
        wall.push(n as f64 / dt);
        if let (Some(c0), Some(c1)) = (c0, thread_cpu_seconds()) {
            cpu.push(n as f64 / (c1 - c0).max(1e-9));
        }
        if run == 0 {
            if let Runner::Board(b) = r {
                // before read_state, which is a command of its own
                clocks = b.clocks_per_sample();
                sha = Some(b.read_state()?.sha256());
            }
        }
    }
    pb.set_message(format!("{name}: inferring {n} samples"));
    let mut infer = Vec::new();
    for _ in 0..ctx.repeat {
        let t0 = Instant::now();
        let pred = r.infer(&data)?;
        infer.push(n as f64 / t0.elapsed().as_secs_f64().max(1e-9));
        if pred.len() != n {
            bail!("{name} predicted {} samples of {n}", pred.len());
        }
    }
    let best = wall.iter().cloned().fold(0.0, f64::max);
    let best_cpu = (r.on_this_thread(name) && cpu.len() == wall.len())
        .then(|| cpu.iter().cloned().fold(0.0, f64::max));
    let ops = r.edge_ops_per_sample(spec);
    let bit_exact = sha.as_ref().map(|s| *s == ctx.reference_sha(n));
    Ok(Measured {
        backend: name.into(),
        kind: if matches!(r, Runner::Board(_)) {
            "bit-exact"
        } else {
            "float"
        },
        available: true,
        unavailable_reason: None,
        samples: n,
        runs: ctx.repeat,
        train_samples_per_second: best,
        train_samples_per_second_median: median(&mut wall),
        train_samples_per_second_cpu: best_cpu,
        infer_samples_per_second: infer.iter().cloned().fold(0.0, f64::max),
        edge_ops_per_sample: ops,
        train_edge_ops_per_second: best * ops as f64,
        train_edge_ops_per_second_cpu: best_cpu.map(|c| c * ops as f64),
        bit_exact,
        state_sha256: sha,
        speedup_vs_float: None,
        speedup_vs_dense: None,
        clocks_per_sample: clocks,
    })
}

#[derive(Clone, Debug, Serialize)]
pub struct Projection {
    pub board: String,
    pub part: String,
    pub clock_mhz: f64,
    /// Where the clock comes from: the board file, the published design, `--fmax`, a synthesis report.
    pub clock_source: String,
    pub clocks_per_sample: f64,
    /// `spec` (longest junction pass + overhead, one sample per block cycle) or `rtl simulation`.
    pub clocks_source: String,
    /// One sample per block cycle, for training and for inference alike.
    pub samples_per_second: f64,
    pub edge_ops_per_second: f64,
    pub speedup_vs_float: Option<f64>,
    pub speedup_vs_dense: Option<f64>,
    pub speedup_vs_reference: Option<f64>,
}

/// What is known about a board: its part and the clocks it runs at, with their sources.
#[derive(Clone, Debug)]
pub struct BoardClocks {
    pub name: String,
    pub part: String,
    pub clocks: Vec<(f64, String)>,
    /// Why there is no place-and-route Fmax for this board, and how to get one.
    pub fmax_note: Option<String>,
}

/// Where board files live: `boards/` here, or next to the workspace.
fn boards_dir() -> PathBuf {
    let local = PathBuf::from("boards");
    if local.is_dir() {
        return local;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../boards"))
}

/// Names of the FPGA board files (the generic OpenCL device class is measured, not projected).
fn board_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(boards_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".toml"))
                        .map(String::from)
                })
                .filter(|n| !n.starts_with("opencl"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub fn board_clocks(name: &str) -> Result<BoardClocks> {
    let path = boards_dir().join(format!("{name}.toml"));
    let mut clocks = Vec::new();
    let part;
    if path.exists() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let v: toml::Value = toml::from_str(&text)
            .with_context(|| format!("board file {} is not valid TOML", path.display()))?;
        part = v
            .get("part")
            .and_then(|p| p.as_str())
            .unwrap_or("")
            .to_string();
        match v
            .get("clock_mhz")
            .and_then(|c| c.as_float().or_else(|| c.as_integer().map(|i| i as f64)))
        {
            Some(c) if c > 0.0 => clocks.push((c, format!("board file {}", path.display()))),
            _ => bail!(
                "board file {}: clock_mhz must be a positive number (MHz)",
                path.display()
            ),
        }
    } else if let Some(&(_, p, osc)) = BUILTIN_BOARDS.iter().find(|b| b.0 == name) {
        part = p.into();
        clocks.push((osc, "board oscillator".into()));
    } else {
        let mut known: Vec<String> = board_files();
        known.extend(BUILTIN_BOARDS.iter().map(|b| b.0.to_string()));
        known.sort();
        known.dedup();
        bail!(
            "unknown board '{name}': no {} and no built-in facts; known boards: {}",
            path.display(),
            known.join(", ")
        );
    }
    for &(b, mhz, what) in PUBLISHED {
        if b == name {
            clocks.push((mhz, what.into()));
        }
    }
    Ok(BoardClocks {
        name: name.into(),
        part,
        clocks,
        fmax_note: None,
    })
}

/// The Fmax a place-and-route report gives, in MHz, and the board it names (if any), as in
/// `edgeflow bitstream --json` output: the first number under a key containing `fmax`.
pub fn fmax_from_report(path: &Path) -> Result<(f64, Option<String>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading synthesis report {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "synthesis report {} is not JSON (use `edgeflow synth --json`)",
            path.display()
        )
    })?;
    fn find(v: &serde_json::Value) -> Option<f64> {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .find_map(|(k, x)| {
                    if k.to_ascii_lowercase().contains("fmax") {
                        x.as_f64()
                    } else {
                        None
                    }
                })
                .or_else(|| m.values().find_map(find)),
            serde_json::Value::Array(a) => a.iter().find_map(find),
            _ => None,
        }
    }
    let board = v.get("board").and_then(|b| {
        b.as_str()
            .map(String::from)
            .or_else(|| b.get("name").and_then(|n| n.as_str()).map(String::from))
    });
    match find(&v) {
        Some(f) if f > 0.0 => Ok((f, board)),
        _ => bail!("synthesis report {} has no positive number under a key containing 'fmax' (e.g. \"fmax_mhz\")", path.display()),
    }
}

/// The part a report was synthesized for (`edgeflow synth --json`'s `table.part`), if it says:
/// a report without a board applies only to boards with that part.
fn report_part(path: &Path) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v.pointer("/table/part")?.as_str().map(String::from)
}

/// What a report's Fmax is (`fmax_kind`, e.g. `edgeflow synth`'s pre-route estimate), if it says.
fn report_fmax_kind(path: &Path) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v.get("fmax_kind")?.as_str().map(String::from)
}

/// The training rate a speed-up uses: the CPU-time rate where there is one (the work of one
/// thread, unaffected by other load on the machine, and the best the baseline can do),
/// otherwise wall clock.
pub fn rate(m: &Measured) -> f64 {
    m.train_samples_per_second_cpu
        .unwrap_or(m.train_samples_per_second)
}

/// The faster of the two float implementations of the same sparse network: the baseline a
/// speed-up over "the float reference" is honest against.
fn fastest_sparse_float(measured: &[Measured]) -> Option<Measured> {
    measured
        .iter()
        .filter(|m| m.available && (m.backend == "float" || m.backend == "sparse-f32"))
        .max_by(|a, b| rate(a).partial_cmp(&rate(b)).unwrap())
        .cloned()
}

fn speedup(r: f64, base: Option<&Measured>) -> Option<f64> {
    base.filter(|b| b.available && rate(b) > 0.0)
        .map(|b| r / rate(b))
}

fn projections(spec: &Spec, boards: &[BoardClocks], measured: &[Measured]) -> Vec<Projection> {
    let find = |n: &str| measured.iter().find(|m| m.backend == n);
    let mut cps = vec![(
        spec.derived().block_cycle_clocks as f64,
        "spec (longest junction pass + overhead)".to_string(),
    )];
    for m in measured {
        if let Some(c) = m.clocks_per_sample {
            cps.push((
                c,
                format!("{}: the clocks it counted per training sample", m.backend),
            ));
        }
    }
    let ops = sparse_edge_ops(spec) as f64;
    let mut out = Vec::new();
    for b in boards {
        // a board that builds the network with registered reads or the deep pipeline runs
        // more clocks per sample than the spec as written, and than the simulations measured
        let mut built = spec.clone();
        if let Ok(x) = edgeflow_hdl::boards::board(&b.name) {
            built.registered_reads |= x.registered_reads;
            built.deep_pipeline |= x.deep_pipeline;
        }
        let board_cps = if built.block_cycle_overhead() != spec.block_cycle_overhead() {
            vec![(
                built.derived().block_cycle_clocks as f64,
                format!(
                    "spec as the board builds it ({}: {} more clocks)",
                    match (built.registered_reads, built.deep_pipeline) {
                        (true, true) => "registered reads and the deep pipeline",
                        (true, false) => "registered reads",
                        _ => "the deep pipeline",
                    },
                    built.block_cycle_overhead() - spec.block_cycle_overhead()
                ),
            )]
        } else {
            cps.clone()
        };
        for (mhz, src) in &b.clocks {
            for (c, csrc) in &board_cps {
                let rate = mhz * 1e6 / c;
                out.push(Projection {
                    board: b.name.clone(),
                    part: b.part.clone(),
                    clock_mhz: *mhz,
                    clock_source: src.clone(),
                    clocks_per_sample: *c,
                    clocks_source: csrc.clone(),
                    samples_per_second: rate,
                    edge_ops_per_second: rate * ops,
                    speedup_vs_float: speedup(rate, fastest_sparse_float(measured).as_ref()),
                    speedup_vs_dense: speedup(rate, find("dense")),
                    speedup_vs_reference: speedup(rate, find("reference")),
                });
            }
        }
    }
    out
}

fn boards_json(boards: &[BoardClocks]) -> serde_json::Value {
    json!(boards
        .iter()
        .map(|b| json!({
            "board": b.name,
            "part": b.part,
            "clocks_mhz": b.clocks.iter().map(|c| json!({"mhz": c.0, "source": c.1})).collect::<Vec<_>>(),
            "fmax_note": b.fmax_note,
        }))
        .collect::<Vec<_>>())
}

/// The machine the numbers come from.
pub fn machine() -> serde_json::Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
    };
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("PRETTY_NAME="))
                .map(|l| l[12..].trim_matches('"').to_string())
        });
    let mem_gib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|k| k.parse::<f64>().ok())
            .map(|k| (k / 1048576.0 * 10.0).round() / 10.0)
    });
    json!({
        "cpu": field("model name"),
        "cpu_mhz": field("cpu MHz").and_then(|s| s.parse::<f64>().ok()),
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "memory_gib": mem_gib,
        "os": os,
        "load_average": load_average(),
        "edgeflow": env!("CARGO_PKG_VERSION"),
    })
}

fn load_average() -> Option<Vec<f64>> {
    let t = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        t.split_whitespace()
            .take(3)
            .filter_map(|x| x.parse().ok())
            .collect(),
    )
}

fn progress(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} bench [{elapsed}] {msg}").unwrap());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
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
    for base in FLOAT_BASELINES {
        if !v.iter().any(|x| x == base) {
            v.push(base.into());
        }
    }
    // the CPU references first, then the accelerators in the order asked for
    let order = |b: &String| {
        ["reference", "float", "sparse-f32", "dense"]
            .iter()
            .position(|x| x == b)
            .unwrap_or(4)
    };
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
    for &f in &a.fmax {
        if !(f > 0.0 && f.is_finite()) {
            bail!("--fmax {f}: must be a positive clock in MHz");
        }
    }
    let mut out = Vec::new();
    for n in names {
        let mut b = board_clocks(&n)?;
        for &f in &a.fmax {
            b.clocks.push((f, "--fmax".into()));
        }
        let mut placed = !a.fmax.is_empty();
        for (f, rb, p) in &reports {
            let same_part = || report_part(p).is_none_or(|rp| rp.eq_ignore_ascii_case(&b.part));
            if rb.as_deref().map_or_else(same_part, |rb| rb == n) {
                let kind = report_fmax_kind(p).unwrap_or_else(|| "place-and-route Fmax".into());
                b.clocks.push((*f, format!("{kind}, {}", p.display())));
                placed = true;
            }
        }
        if !placed {
            let part = b.part.to_ascii_lowercase();
            b.fmax_note = Some(if part.starts_with("ice40") || part.starts_with("lfe5u") {
                format!("no Fmax given: `edgeflow bitstream --spec SPEC --board {n} -o DIR --json > r.json` reports the post-route Fmax; pass it with --synth-report r.json")
            } else {
                format!("no Fmax given: the open flow has no timing for {} (yosys synthesizes, Vivado places and routes: `edgeflow vivado --board {n}` exports the project); pass Vivado's Fmax with --fmax MHZ", b.part)
            });
        }
        out.push(b);
    }
    Ok(out)
}

pub fn bench_cmd(a: BenchArgs) -> Result<()> {
    crate::backends::check_bench_names(a.backends.iter().flatten())?;
    if a.samples == 0 || a.repeat == 0 {
        bail!("--samples and --repeat must be at least 1");
    }
    if !(a.budget > 0.0) {
        bail!("--budget must be a positive number of seconds");
    }
    for p in &a.plot {
        if !matches!(p.extension().and_then(|e| e.to_str()), Some("svg" | "png")) {
            bail!("--plot {}: the file must end in .svg or .png", p.display());
        }
    }
    let spec = Spec::load(&a.spec)?;
    let boards = board_list(&a, &spec)?;
    let json_stdout = a.json.as_deref() == Some(Path::new("-"));
    match a.sweep {
        Some(s) => sweep_cmd(&a, &spec, s, &boards, json_stdout),
        None => single_cmd(&a, &spec, &boards, json_stdout),
    }
}

fn emit_json(a: &BenchArgs, v: &serde_json::Value) -> Result<()> {
    match a.json.as_deref() {
        Some(p) if p == Path::new("-") => print_json(v),
        Some(p) => {
            let mut text = serde_json::to_string_pretty(v)?;
            text.push('\n');
            write_atomic(p, text.as_bytes())?;
        }
        None => {}
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

fn single_cmd(a: &BenchArgs, spec: &Spec, boards: &[BoardClocks], json_stdout: bool) -> Result<()> {
    let (train, data_name) = crate::bench_data::train_samples(spec, a.data.as_deref(), a.scale)?;
    let pb = progress(json_stdout);
    let mut ctx = Ctx {
        spec,
        train: &train,
        samples: a.samples,
        repeat: a.repeat,
        budget: a.budget,
        ref_sha: Default::default(),
    };
    let load_before = load_average();
    let mut measured: Vec<Measured> = backend_list(&a.backends, a.sweep.is_some())
        .iter()
        .map(|b| measure(&mut ctx, b, &pb))
        .collect();
    pb.finish_and_clear();
    let float = fastest_sparse_float(&measured);
    let dense = measured.iter().find(|m| m.backend == "dense").cloned();
    for m in measured.iter_mut().filter(|m| m.available) {
        m.speedup_vs_float = speedup(rate(m), float.as_ref());
        m.speedup_vs_dense = speedup(rate(m), dense.as_ref());
    }
    let proj = projections(spec, boards, &measured);
    let mut mach = machine();
    mach["load_average_before"] = json!(load_before);
    let d = spec.derived();
    let report = json!({
        "spec": spec.name,
        "spec_file": a.spec,
        "layers": spec.layers,
        "edges": d.total_edges,
        "block_cycle_clocks": d.block_cycle_clocks,
        "data": data_name,
        "samples_requested": a.samples,
        "repeat": a.repeat,
        "machine": mach,
        "backends": measured,
        "projections": proj,
        "boards": boards_json(boards),
        "notes": [
            "samples/s: best of `repeat` runs, wall clock; *_cpu: the same run timed by the CPU time of the working thread (CPU backends only)",
            "speedup_vs_float / speedup_vs_dense: training samples/s over the faster float implementation of the same sparse network (float f64 or sparse-f32) / the dense f32 network of the same layer sizes (SGD, batch 1, one core); rates are CPU-time rates where there is one (CPU backends), else wall clock",
            "projections: one training (or inference) sample per block cycle at the given clock; they do not check that the design fits the board",
        ],
    });
    emit_json(a, &report)?;
    for p in &a.plot {
        let mut bars: Vec<(String, f64, usize)> = measured
            .iter()
            .filter(|m| m.available)
            .map(|m| (m.backend.clone(), rate(m), 0))
            .collect();
        for p in &proj {
            bars.push((
                format!(
                    "{} @ {:.0} MHz, {} clk{}",
                    p.board,
                    p.clock_mhz,
                    if (p.clocks_per_sample - p.clocks_per_sample.round()).abs() < 0.05 {
                        format!("{:.0}", p.clocks_per_sample)
                    } else {
                        format!("{:.1}", p.clocks_per_sample)
                    },
                    if p.clocks_source.starts_with("spec") {
                        String::new()
                    } else {
                        format!(" ({})", p.clocks_source.split(':').next().unwrap_or(""))
                    }
                ),
                p.samples_per_second,
                1,
            ));
        }
        chart::bar_chart(
            p,
            &BarChart {
                title: &format!(
                    "{}: training samples/s ({} edges)",
                    spec.name, d.total_edges
                ),
                ylabel: "training samples/s",
                bars: &bars,
                group_names: &[
                    "measured here (CPU backends: thread CPU time)",
                    "board, one sample per block cycle (estimate)",
                ],
                log_y: true,
            },
        )?;
    }
    if json_stdout {
        return Ok(());
    }
    println!(
        "{}: {} edges, {} edge-ops per training sample, block cycle {} clocks; {} training samples from {} (best of {})",
        spec.name,
        d.total_edges,
        sparse_edge_ops(spec),
        d.block_cycle_clocks,
        a.samples,
        data_name,
        a.repeat
    );
    println!(
        "{:<11} {:>8} {:>13} {:>13} {:>13} {:>14} {:>10} {:>10}  bit-exact",
        "backend",
        "samples",
        "train/s",
        "train/s cpu",
        "infer/s",
        "edge-ops/s",
        "vs float",
        "vs dense"
    );
    for m in &measured {
        if !m.available {
            println!(
                "{:<11} unavailable: {}",
                m.backend,
                m.unavailable_reason.as_deref().unwrap_or("")
            );
            continue;
        }
        println!(
            "{:<11} {:>8} {:>13} {:>13} {:>13} {:>14} {:>10} {:>10}  {}",
            m.backend,
            m.samples,
            fmt_rate(m.train_samples_per_second),
            m.train_samples_per_second_cpu
                .map(fmt_rate)
                .unwrap_or_else(|| "-".into()),
            fmt_rate(m.infer_samples_per_second),
            fmt_rate(m.train_edge_ops_per_second),
            fmt_x(m.speedup_vs_float),
            fmt_x(m.speedup_vs_dense),
            m.bit_exact
                .map(|b| if b { "yes" } else { "NO" })
                .unwrap_or("-")
        );
    }
    println!("board projections (one sample per block cycle, training and inference):");
    for p in &proj {
        println!(
            "  {:<12} {:>7.2} MHz / {:>5} clocks = {:>10} samples/s  {:>8} vs float {:>8} vs dense {:>8} vs reference   [{}; clocks from {}]",
            p.board,
            p.clock_mhz,
            p.clocks_per_sample,
            fmt_rate(p.samples_per_second),
            fmt_x(p.speedup_vs_float),
            fmt_x(p.speedup_vs_dense),
            fmt_x(p.speedup_vs_reference),
            p.clock_source,
            p.clocks_source
        );
    }
    for b in boards {
        if let Some(n) = &b.fmax_note {
            println!("  {}: {n}", b.name);
        }
    }
    for p in &a.plot {
        println!("plot written to {}", p.display());
    }
    if let Some(j) = a.json.as_deref().filter(|p| *p != Path::new("-")) {
        println!("JSON written to {}", j.display());
    }
    Ok(())
}

/// A spec with the `z` of each junction moved to the valid value nearest (by ratio) to what
/// it asks for, or `None` when no junction can be made valid.
fn with_valid_z(mut s: Spec) -> Option<Spec> {
    for j in 0..s.junctions() {
        let left = s.layers[j];
        if left == 0 || s.layers[j + 1] == 0 || (left * s.fan_out[j]) % s.layers[j + 1] != 0 {
            return None;
        }
        let fi = s.fan_in(j);
        let want = s.z[j].max(1) as f64;
        let best = (1..=left)
            .filter(|&z| left % z == 0 && (fi % z == 0 || z % fi == 0))
            .min_by(|&x, &y| {
                ((x as f64 / want).ln().abs())
                    .partial_cmp(&(y as f64 / want).ln().abs())
                    .unwrap()
                    .then(y.cmp(&x))
            })?;
        s.z[j] = best;
    }
    s.validate("sweep").ok()?;
    Some(s)
}

/// The specs of a sweep, each with a short label; duplicates and invalid ones left out.
pub fn sweep_specs(base: &Spec, sweep: Sweep) -> Vec<(String, Spec)> {
    let l = base.junctions();
    let mut out: Vec<(String, Spec)> = Vec::new();
    let factors: &[f64] = match sweep {
        Sweep::Width => &[0.5, 1.0, 2.0, 4.0, 8.0, 16.0],
        Sweep::Density => &[0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
        Sweep::Z => &[0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
    };
    for &k in factors {
        let mut s = base.clone();
        let scale = |x: usize| ((x as f64 * k).round() as usize).max(1);
        match sweep {
            Sweep::Width => {
                for i in 1..l {
                    s.layers[i] = scale(base.layers[i]);
                }
                // constant density: fan-out grows with the right layer
                for j in 0..l {
                    if j + 1 < l {
                        s.fan_out[j] = scale(base.fan_out[j]).min(s.layers[j + 1]);
                    }
                }
            }
            Sweep::Density => {
                for j in 0..l {
                    s.fan_out[j] = scale(base.fan_out[j]).min(s.layers[j + 1]);
                }
            }
            Sweep::Z => {
                for j in 0..l {
                    s.z[j] = scale(base.z[j]).min(s.layers[j]);
                }
            }
        }
        s.name = format!("{}-{}x{k}", base.name, format!("{sweep:?}").to_lowercase());
        let Some(v) = (if sweep == Sweep::Z {
            s.validate("sweep").ok().map(|_| s)
        } else {
            with_valid_z(s)
        }) else {
            continue;
        };
        if out
            .iter()
            .any(|(_, o)| o.layers == v.layers && o.fan_out == v.fan_out && o.z == v.z)
        {
            continue;
        }
        out.push((format!("x{k}"), v));
    }
    out
}

#[derive(Serialize)]
struct SweepPoint {
    label: String,
    layers: Vec<usize>,
    fan_out: Vec<usize>,
    z: Vec<usize>,
    edges: usize,
    edge_ops_per_sample: u64,
    dense_weights: usize,
    multipliers: usize,
    block_cycle_clocks: usize,
    backends: Vec<Measured>,
    projections: Vec<Projection>,
}

fn sweep_cmd(
    a: &BenchArgs,
    base: &Spec,
    sweep: Sweep,
    boards: &[BoardClocks],
    json_stdout: bool,
) -> Result<()> {
    let specs = sweep_specs(base, sweep);
    if specs.len() < 2 {
        bail!("sweep {sweep:?} of {}: fewer than 2 valid specs; start from a spec with room to grow (e.g. specs/dey-mnist.toml)", base.name);
    }
    let (train, data_name) = crate::bench_data::train_samples(base, a.data.as_deref(), a.scale)?;
    let pb = progress(json_stdout);
    let load_before = load_average();
    let mut points = Vec::new();
    for (i, (label, s)) in specs.iter().enumerate() {
        pb.set_prefix(format!("{}/{}", i + 1, specs.len()));
        let mut ctx = Ctx {
            spec: s,
            train: &train,
            samples: a.samples,
            repeat: a.repeat,
            budget: a.budget,
            ref_sha: Default::default(),
        };
        let measured: Vec<Measured> = backend_list(&a.backends, a.sweep.is_some())
            .iter()
            .map(|b| measure(&mut ctx, b, &pb))
            .collect();
        let d = s.derived();
        points.push(SweepPoint {
            label: label.clone(),
            layers: s.layers.clone(),
            fan_out: s.fan_out.clone(),
            z: s.z.clone(),
            edges: d.total_edges,
            edge_ops_per_sample: sparse_edge_ops(s),
            dense_weights: s.layers.windows(2).map(|w| w[0] * w[1]).sum(),
            multipliers: d.multipliers,
            block_cycle_clocks: d.block_cycle_clocks,
            projections: projections(s, boards, &measured),
            backends: measured,
        });
    }
    pb.finish_and_clear();
    let (xname, xof): (&str, fn(&SweepPoint) -> f64) = match sweep {
        Sweep::Z => ("multipliers (FF + BP + UP lanes)", |p| p.multipliers as f64),
        _ => ("edges (weights of the sparse network)", |p| p.edges as f64),
    };
    // one series per measured backend and per board clock
    let mut series: Vec<Series> = Vec::new();
    let names: Vec<String> = points[0]
        .backends
        .iter()
        .filter(|m| m.available)
        .map(|m| m.backend.clone())
        .collect();
    for n in &names {
        let cpu_timed = points[0]
            .backends
            .iter()
            .any(|m| &m.backend == n && m.train_samples_per_second_cpu.is_some());
        series.push(Series {
            name: format!(
                "{n} ({})",
                if cpu_timed {
                    "thread CPU time"
                } else {
                    "wall clock"
                }
            ),
            points: points
                .iter()
                .filter_map(|p| {
                    p.backends
                        .iter()
                        .find(|m| &m.backend == n && m.available)
                        .map(|m| (xof(p), 1e6 / rate(m)))
                })
                .collect(),
        });
    }
    for (bi, pr) in points[0]
        .projections
        .iter()
        .enumerate()
        .filter(|(_, p)| p.clocks_source.starts_with("spec"))
    {
        series.push(Series {
            name: format!("{} @ {:.0} MHz", pr.board, pr.clock_mhz),
            points: points
                .iter()
                .filter_map(|p| {
                    p.projections
                        .get(bi)
                        .map(|q| (xof(p), 1e6 / q.samples_per_second))
                })
                .collect(),
        });
    }
    for p in &a.plot {
        chart::line_chart(
            p,
            &LineChart {
                title: &format!(
                    "{}: cost per training sample, {} sweep",
                    base.name,
                    format!("{sweep:?}").to_lowercase()
                ),
                xlabel: xname,
                ylabel: "µs per training sample",
                series: &series,
                axes: Axes::LogLog,
            },
        )?;
    }
    let mut mach = machine();
    mach["load_average_before"] = json!(load_before);
    emit_json(
        a,
        &json!({
            "sweep": format!("{sweep:?}").to_lowercase(),
            "base_spec": base.name,
            "data": data_name,
            "samples_requested": a.samples,
            "repeat": a.repeat,
            "machine": mach,
            "x_axis": xname,
            "points": points,
        }),
    )?;
    if json_stdout {
        return Ok(());
    }
    println!(
        "{} sweep of {} (µs per training sample; boards projected at one sample per block cycle)",
        format!("{sweep:?}").to_lowercase(),
        base.name
    );
    print!(
        "{:<7} {:<18} {:<10} {:<10} {:>8} {:>6} {:>7}",
        "point", "layers", "fan_out", "z", "edges", "mults", "clocks"
    );
    for s in &series {
        print!(" {:>22}", s.name);
    }
    println!();
    for (i, p) in points.iter().enumerate() {
        let fmtv = |v: &[usize]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        print!(
            "{:<7} {:<18} {:<10} {:<10} {:>8} {:>6} {:>7}",
            p.label,
            fmtv(&p.layers),
            fmtv(&p.fan_out),
            fmtv(&p.z),
            p.edges,
            p.multipliers,
            p.block_cycle_clocks
        );
        for s in &series {
            let x = xof(p);
            // series points are in point order; find this point's value
            let v = s
                .points
                .iter()
                .filter(|q| q.0 == x)
                .nth(points[..i].iter().filter(|o| xof(o) == x).count())
                .map(|q| q.1);
            print!(
                " {:>22}",
                v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
            );
        }
        println!();
    }
    for m in points
        .iter()
        .flat_map(|p| &p.backends)
        .filter(|m| !m.available)
    {
        println!(
            "{} unavailable: {}",
            m.backend,
            m.unavailable_reason.as_deref().unwrap_or("")
        );
    }
    for p in &a.plot {
        println!("plot written to {}", p.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> Spec {
        Spec::load(
            &PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs"))
                .join(format!("{name}.toml")),
        )
        .unwrap()
    }

    #[test]
    fn sweeps_grow_the_network_and_stay_valid() {
        let base = spec("dey-mnist");
        let w = sweep_specs(&base, Sweep::Width);
        assert!(w.len() >= 5, "{}", w.len());
        let edges: Vec<usize> = w.iter().map(|(_, s)| s.derived().total_edges).collect();
        assert!(
            edges.windows(2).all(|e| e[0] < e[1]),
            "width sweep grows the edges: {edges:?}"
        );
        assert!(
            w.iter()
                .any(|(_, s)| (&s.layers, &s.fan_out, &s.z)
                    == (&base.layers, &base.fan_out, &base.z)),
            "the base spec is one point"
        );
        for (_, s) in &w {
            s.validate("t").unwrap();
            assert_eq!(
                (s.layers[0], s.layers[2]),
                (1024, 32),
                "inputs and outputs stay"
            );
            // constant density in the first junction
            assert_eq!(s.fan_out[0] * 64, 4 * s.layers[1]);
        }
        let d = sweep_specs(&base, Sweep::Density);
        let edges: Vec<usize> = d.iter().map(|(_, s)| s.derived().total_edges).collect();
        assert!(
            d.len() >= 4 && edges.windows(2).all(|e| e[0] < e[1]),
            "{edges:?}"
        );
        let z = sweep_specs(&base, Sweep::Z);
        assert!(z.len() >= 4);
        assert!(z
            .iter()
            .all(|(_, s)| s.derived().total_edges == base.derived().total_edges));
        let clocks: Vec<usize> = z
            .iter()
            .map(|(_, s)| s.derived().max_junction_clocks)
            .collect();
        assert!(
            clocks.windows(2).all(|c| c[0] >= c[1]) && clocks[0] > clocks[clocks.len() - 1],
            "more lanes, fewer clocks: {clocks:?}"
        );
    }

    #[test]
    fn a_synth_report_fmax_is_projected_with_its_kind() {
        let dir = std::env::temp_dir().join(format!("edgeflow-bench-fmax-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("synth.json");
        std::fs::write(
            &p,
            r#"{"design":"dey-mnist","fits":true,"fmax_kind":"pre-route estimate","fmax_mhz":42.5,"timing":{"full_cycle_mhz":85.0}}"#,
        )
        .unwrap();
        assert_eq!(fmax_from_report(&p).unwrap(), (42.5, None));
        assert_eq!(report_fmax_kind(&p).as_deref(), Some("pre-route estimate"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn nexys4_projection_includes_the_published_clock() {
        let b = board_clocks("nexys4-ddr").unwrap();
        assert!(b
            .clocks
            .iter()
            .any(|(mhz, src)| *mhz == 15.0 && src.contains("published")));
        let s = spec("dey-mnist");
        let p = projections(&s, &[b], &[]);
        let published = p.iter().find(|p| p.clock_mhz == 15.0).unwrap();
        // 15 MHz over C + overhead clocks per sample, straight from the spec
        let c = (s.derived().max_junction_clocks + s.block_cycle_overhead()) as f64;
        assert_eq!(published.clocks_per_sample, c);
        assert!((published.samples_per_second - 15e6 / c).abs() < 1e-6);
        assert!(board_clocks("no-such-board")
            .unwrap_err()
            .to_string()
            .contains("unknown board 'no-such-board'"));
    }

    #[test]
    fn fmax_is_read_from_a_report() {
        let dir = std::env::temp_dir().join(format!("edgeflow-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.json");
        std::fs::write(&p, r#"{"target":"xc7a100t","timing":{"fmax_mhz":87.5}}"#).unwrap();
        assert_eq!(fmax_from_report(&p).unwrap(), (87.5, None));
        std::fs::write(&p, r#"{"board":"icebreaker","fmax_mhz":31.2}"#).unwrap();
        assert_eq!(
            fmax_from_report(&p).unwrap(),
            (31.2, Some("icebreaker".into()))
        );
        std::fs::write(&p, r#"{"luts":3}"#).unwrap();
        assert!(fmax_from_report(&p)
            .unwrap_err()
            .to_string()
            .contains("fmax"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_backend_is_reported_and_the_reference_is_bit_exact_with_itself() {
        let s = spec("tiny");
        let data = Encoded {
            inputs_per_sample: 8,
            inputs: (0..8 * 40).map(|i| (i * 37 % 129) as i32).collect(),
            labels: (0..40).map(|i| i % 4).collect(),
        };
        let mut ctx = Ctx {
            spec: &s,
            train: &data,
            samples: 40,
            repeat: 2,
            budget: 5.0,
            ref_sha: Default::default(),
        };
        let pb = ProgressBar::hidden();
        let r = measure(&mut ctx, "reference", &pb);
        assert!(r.available && r.samples == 40 && r.train_samples_per_second > 0.0);
        assert_eq!(r.bit_exact, Some(true));
        assert_eq!(r.edge_ops_per_sample, sparse_edge_ops(&s));
        let d = measure(&mut ctx, "dense", &pb);
        assert!(d.available && d.bit_exact.is_none() && d.infer_samples_per_second > 0.0);
        let n = measure(&mut ctx, "no-such-backend", &pb);
        assert!(!n.available && n.unavailable_reason.unwrap().contains("no-such-backend"));
        assert_eq!(
            backend_list(&Some(vec!["reference,opencl".into()]), false),
            vec!["reference", "float", "sparse-f32", "dense", "opencl"]
        );
    }
}
