//! `bench --to-accuracy X`: seconds of training until the test accuracy first reaches X.
//! Batch 1 and mini-batches learn different amounts per sample, so samples/s alone misleads.
//!
//! The CPU backends (the reference and the float baselines) are trained here epoch by epoch
//! in `edgeflow train`'s sample order, the test split evaluated after each epoch and only
//! training timed. Every other bit-exact backend and every board projection computes the
//! reference's bits, so it needs the reference's samples: its seconds are those samples over
//! its measured (or projected) training samples/s.

use super::*;
use crate::train::Split;
use anyhow::{bail, Result};
use edgeflow_core::order::SampleOrder;
use edgeflow_reference::accuracy;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Instant;

/// `--to-accuracy` takes a fraction of the test samples.
pub(super) fn check_target(x: f64, epochs: usize, sweep: bool) -> Result<()> {
    if !(x > 0.0 && x <= 1.0) {
        let hint = if x > 1.0 && x <= 100.0 {
            format!(" (for {x} % give {})", x / 100.0)
        } else {
            String::new()
        };
        bail!("--to-accuracy {x}: the test accuracy to reach is a fraction in (0, 1], e.g. 0.95{hint}");
    }
    if epochs == 0 {
        bail!("--epochs must be at least 1: the most epochs --to-accuracy trains");
    }
    if sweep {
        bail!("--to-accuracy and --sweep: give one of them (a sweep measures speed only)");
    }
    Ok(())
}

/// The CPU backends trained to the target here; the reference always (the others use its
/// samples).
fn trained_here(name: &str) -> bool {
    crate::backends::parse(name).is_ok_and(|c| c.backend.cpu_reference)
}

#[derive(Clone, Debug, Serialize)]
pub struct BackendToAccuracy {
    pub backend: String,
    pub kind: &'static str,
    /// `trained` (epoch by epoch here) or `reference samples` (the reference's samples at this
    /// backend's measured training samples/s).
    pub method: &'static str,
    pub available: bool,
    pub unavailable_reason: Option<String>,
    pub reached: bool,
    /// Epochs until the test accuracy first reached the target.
    pub epochs: Option<usize>,
    /// Training samples until then (epochs × training samples).
    pub samples: Option<usize>,
    /// Seconds of training until then, wall clock.
    pub seconds: Option<f64>,
    /// The same by the working thread's CPU time (CPU backends on one thread).
    pub seconds_cpu: Option<f64>,
    /// Training samples/s the seconds come from (`reference samples` rows).
    pub samples_per_second: Option<f64>,
    /// Test accuracy after each epoch trained (`trained` rows).
    pub test_accuracy: Vec<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProjectionToAccuracy {
    pub board: String,
    pub clock_mhz: f64,
    pub clock_source: String,
    pub clocks_per_sample: f64,
    pub samples_per_second: f64,
    pub reached: bool,
    /// The reference's samples until it reached the target.
    pub samples: Option<usize>,
    pub seconds: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ToAccuracy {
    /// The target, a fraction of the test samples.
    pub target: f64,
    pub max_epochs: usize,
    pub train_samples: usize,
    pub test_samples: usize,
    pub backends: Vec<BackendToAccuracy>,
    pub projections: Vec<ProjectionToAccuracy>,
}

fn train_to(
    spec: &Spec,
    split: &Split,
    name: &str,
    target: f64,
    max_epochs: usize,
    mb: MiniBatchOpts,
    pb: &ProgressBar,
) -> Result<BackendToAccuracy> {
    let (mut r, c) = open(spec, name, mb)?;
    r.reset(spec)?;
    let n = split.train.len();
    let mut order = SampleOrder::new(n);
    let (mut wall, mut cpu, mut acc) = (0.0, 0.0, Vec::new());
    let mut reached = None;
    for e in 1..=max_epochs {
        pb.set_message(format!(
            "{name}: to {target} test accuracy, epoch {e}/{max_epochs}"
        ));
        let stream = split.train.select(&order.next_epoch());
        let c0 = thread_cpu_seconds();
        let t0 = Instant::now();
        r.train(&stream)?;
        wall += t0.elapsed().as_secs_f64();
        if let (Some(c0), Some(c1)) = (c0, thread_cpu_seconds()) {
            cpu += c1 - c0;
        }
        acc.push(accuracy(&r.infer(&split.test)?, &split.test.labels));
        if acc[e - 1] >= target {
            reached = Some(e);
            break;
        }
    }
    Ok(BackendToAccuracy {
        backend: name.into(),
        kind: c.kind().label(),
        method: "trained",
        available: true,
        unavailable_reason: None,
        reached: reached.is_some(),
        epochs: reached,
        samples: reached.map(|e| e * n),
        seconds: reached.map(|_| wall.max(1e-9)),
        seconds_cpu: reached
            .filter(|_| r.on_calling_thread())
            .map(|_| cpu.max(1e-9)),
        samples_per_second: None,
        test_accuracy: acc,
    })
}

/// Every backend's and projection's time to `target`; `measured` gives the rates of the
/// bit-exact backends not trained here.
#[allow(clippy::too_many_arguments)]
pub(super) fn to_accuracy(
    spec: &Spec,
    split: &Split,
    target: f64,
    max_epochs: usize,
    mb: MiniBatchOpts,
    measured: &[Measured],
    proj: &[Projection],
    pb: &ProgressBar,
) -> ToAccuracy {
    let mut names: Vec<&str> = vec!["reference"];
    names.extend(measured.iter().map(|m| m.backend.as_str()));
    names.dedup();
    let mut rows: Vec<BackendToAccuracy> = Vec::new();
    for name in names.iter().filter(|n| trained_here(n)) {
        rows.push(
            train_to(spec, split, name, target, max_epochs, mb, pb).unwrap_or_else(|e| {
                let mut u = unreached(name, "trained");
                u.available = false;
                u.unavailable_reason = Some(format!("{e:#}"));
                u
            }),
        );
    }
    let need = rows
        .iter()
        .find(|r| r.backend == "reference")
        .and_then(|r| r.samples);
    for m in measured.iter().filter(|m| !trained_here(&m.backend)) {
        let mut row = unreached(&m.backend, "reference samples");
        row.kind = m.kind;
        row.available = m.available;
        row.unavailable_reason = m.unavailable_reason.clone();
        if m.available {
            let r = m.train_samples_per_second;
            row.samples_per_second = Some(r);
            if let Some(s) = need {
                row.reached = true;
                row.epochs = Some(s / split.train.len());
                row.samples = Some(s);
                row.seconds = Some(s as f64 / r);
            }
        }
        rows.push(row);
    }
    let projections = proj
        .iter()
        .map(|p| ProjectionToAccuracy {
            board: p.board.clone(),
            clock_mhz: p.clock_mhz,
            clock_source: p.clock_source.clone(),
            clocks_per_sample: p.clocks_per_sample,
            samples_per_second: p.samples_per_second,
            reached: need.is_some(),
            samples: need,
            seconds: need.map(|s| s as f64 / p.samples_per_second),
        })
        .collect();
    ToAccuracy {
        target,
        max_epochs,
        train_samples: split.train.len(),
        test_samples: split.test.len(),
        backends: rows,
        projections,
    }
}

fn unreached(name: &str, method: &'static str) -> BackendToAccuracy {
    BackendToAccuracy {
        backend: name.into(),
        kind: "float",
        method,
        available: true,
        unavailable_reason: None,
        reached: false,
        epochs: None,
        samples: None,
        seconds: None,
        seconds_cpu: None,
        samples_per_second: None,
        test_accuracy: Vec::new(),
    }
}

fn fmt_seconds(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0}")
    } else if s >= 0.01 {
        format!("{s:.3}")
    } else {
        format!("{s:.2e}")
    }
}

/// The text report of a time-to-accuracy run, into `w`.
pub(super) fn print(t: &ToAccuracy, w: &mut String) -> std::fmt::Result {
    writeln!(
        w,
        "time to {:.1} % test accuracy ({} training, {} test samples; at most {} epochs; training time only):",
        t.target * 100.0,
        t.train_samples,
        t.test_samples,
        t.max_epochs
    )?;
    let miss = |best: Option<f64>| match best {
        Some(b) => format!(
            "not reached in {} epochs (best {:.1} %)",
            t.max_epochs,
            b * 100.0
        ),
        None => "not reached: the reference did not reach it".to_string(),
    };
    for b in &t.backends {
        if !b.available {
            let why = b.unavailable_reason.as_deref().unwrap_or("");
            writeln!(w, "  {:<28} unavailable: {why}", b.backend)?;
            continue;
        }
        let best = b.test_accuracy.iter().cloned().reduce(f64::max);
        match (b.epochs, b.samples, b.seconds) {
            (Some(e), Some(s), Some(sec)) => writeln!(
                w,
                "  {:<28} {:>4} epochs {:>9} samples {:>10} s  {}",
                b.backend,
                e,
                s,
                fmt_seconds(sec),
                match b.samples_per_second {
                    Some(r) => format!("the reference's samples at {} samples/s", fmt_rate(r)),
                    None => "trained epoch by epoch, wall clock".into(),
                }
            )?,
            _ => writeln!(w, "  {:<28} {}", b.backend, miss(best))?,
        }
    }
    for p in &t.projections {
        let label = format!("{} @ {:.2} MHz", p.board, p.clock_mhz);
        match (p.samples, p.seconds) {
            (Some(s), Some(sec)) => writeln!(
                w,
                "  {label:<28}             {s:>9} samples {:>10} s  projected: the reference's samples at {} samples/s ({} clocks/sample)",
                fmt_seconds(sec),
                fmt_rate(p.samples_per_second),
                p.clocks_per_sample
            )?,
            _ => writeln!(w, "  {label:<28} {}", miss(None))?,
        }
    }
    Ok(())
}
