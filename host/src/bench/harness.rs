//! The measuring harness: a backend or a float baseline trained on one stream, timed, and
//! compared with the reference model bit for bit.

use crate::backends::{Choice, Engine, Kind, Options};
use anyhow::{bail, Result};
use edgeflow_core::order::epoch_order;
use edgeflow_core::{Encoded, Spec};
use edgeflow_reference::Reference;
use indicatif::ProgressBar;
use serde::Serialize;
use std::time::Instant;

/// CPU time of the calling thread in seconds (`CLOCK_THREAD_CPUTIME_ID`, nanosecond
/// resolution), so the CPU references' rates can be read apart from other load on the machine.
pub(super) fn thread_cpu_seconds() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// How the mini-batch baseline runs: `--batch` and `--threads`.
#[derive(Clone, Copy, Debug)]
pub(super) struct MiniBatchOpts {
    pub(super) batch: usize,
    pub(super) threads: Option<usize>,
}

/// Opens `name` from the registry: a board (bit-exact) or one of the float baselines.
pub(super) fn open(spec: &Spec, name: &str, mb: MiniBatchOpts) -> Result<(Engine, Choice)> {
    let c = crate::backends::parse(name)?;
    let opts = Options {
        batch: mb.batch,
        threads: mb.threads,
        ..Options::default()
    };
    Ok((c.open(spec, &opts)?, c))
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
    pub(super) fn unavailable(backend: &str, reason: String) -> Measured {
        Measured {
            backend: backend.into(),
            kind: crate::backends::parse(backend)
                .map_or(Kind::BitExact, |c| c.kind())
                .label(),
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
pub(super) fn stream(train: &Encoded, n: usize) -> Encoded {
    let order = epoch_order(train.len(), 0);
    let idx: Vec<usize> = (0..n).map(|i| order[i % order.len()]).collect();
    train.select(&idx)
}

pub(super) struct Ctx<'a> {
    pub(super) spec: &'a Spec,
    pub(super) train: &'a Encoded,
    pub(super) samples: usize,
    pub(super) repeat: usize,
    pub(super) budget: f64,
    pub(super) minibatch: MiniBatchOpts,
    /// Reference state SHA-256 after training `n` samples, computed on demand.
    pub(super) ref_sha: std::collections::HashMap<usize, String>,
}

impl Ctx<'_> {
    pub(super) fn reference_sha(&mut self, n: usize) -> String {
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

pub(super) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

pub(super) fn measure(ctx: &mut Ctx, name: &str, pb: &ProgressBar) -> Measured {
    pb.set_message(format!("{name}: opening"));
    let (mut r, c) = match open(ctx.spec, name, ctx.minibatch) {
        Ok(r) => r,
        Err(e) => return Measured::unavailable(name, format!("{e:#}")),
    };
    match measure_runner(ctx, &c, &mut r, pb) {
        Ok(m) => m,
        Err(e) => Measured::unavailable(name, format!("failed while running: {e:#}")),
    }
}

pub(super) fn measure_runner(
    ctx: &mut Ctx,
    backend: &Choice,
    r: &mut Engine,
    pb: &ProgressBar,
) -> Result<Measured> {
    let spec = ctx.spec;
    let name = &backend.to_string();
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
            if let Engine::Board(b) = r {
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
    let best_cpu =
        (backend.backend.cpu_reference && r.on_calling_thread() && cpu.len() == wall.len())
            .then(|| cpu.iter().cloned().fold(0.0, f64::max));
    let ops = r.edge_ops_per_sample(spec);
    let bit_exact = sha.as_ref().map(|s| *s == ctx.reference_sha(n));
    Ok(Measured {
        backend: name.into(),
        kind: backend.kind().label(),
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
