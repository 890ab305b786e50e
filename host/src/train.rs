//! `edgeflow train`, `eval`, `infer` and the no-argument demo.

#[path = "init.rs"]
pub mod init;
#[path = "train_report.rs"]
pub mod report;

use crate::backends::{Choice, Kind, Options, Use};
use crate::board::{reference::ReferenceBoard, Board};
use crate::model::ModelFile;
use crate::plot::{line_chart, Series};
use crate::report::{emit, Format};
use crate::ui;
use crate::util::write_atomic;
use anyhow::{bail, Context, Result};
use edgeflow_core::order::{SampleOrder, DATA_SEED};
use edgeflow_core::{Dataset, Encoded, ScaleKind, Scaling, Spec, State};
use edgeflow_reference::accuracy;
use edgeflow_reference::trace::JunctionTrace;
use indicatif::{ProgressBar, ProgressStyle};
use init::{check_epochs, Init};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub struct Split {
    pub train: Encoded,
    pub test: Encoded,
    pub name: String,
    /// What brought the values into [0, 1]; a trained model keeps it.
    pub scaling: Scaling,
    /// Features per sample in the data (before zero padding to `layers[0]`).
    pub features: usize,
}

/// Where a data set's scaling comes from: fitted on its training split, or a model's own.
#[derive(Clone, Copy)]
pub enum Scale<'a> {
    Fit(ScaleKind),
    Model(&'a Scaling),
}

/// A data set brought into [0, 1], with its scaling and the train/test split. What the fit
/// noticed (an outlier that squashes a column) goes to standard error.
pub fn load_scaled(
    data: &str,
    label_column: Option<usize>,
    scale: Scale,
) -> Result<(Dataset, Scaling, Vec<usize>, Vec<usize>)> {
    load_scaled_checked(data, label_column, scale, &|_| Ok(()))
}

/// [`load_scaled`], with `check` run on the data as loaded, before any scaling (a model's
/// check of the data's width names the model, which the scaling's own check cannot).
pub fn load_scaled_checked(
    data: &str,
    label_column: Option<usize>,
    scale: Scale,
    check: &dyn Fn(&Dataset) -> Result<()>,
) -> Result<(Dataset, Scaling, Vec<usize>, Vec<usize>)> {
    let d = Dataset::load(data, label_column)?;
    check(&d)?;
    let (tr, te) = d.split(DATA_SEED);
    let scaling = match scale {
        Scale::Fit(kind) => {
            let f = Scaling::fit(kind, &d, &tr)?;
            for w in &f.warnings {
                eprintln!("warning: {w}");
            }
            f.scaling
        }
        Scale::Model(s) => s.clone(),
    };
    Ok((scaling.apply(&d)?, scaling, tr, te))
}

pub fn load_split(
    spec: &Spec,
    data: &str,
    label_column: Option<usize>,
    scale: Scale,
) -> Result<Split> {
    load_split_checked(spec, data, label_column, scale, &|_| Ok(()))
}

/// [`load_split`] with a check of the data as loaded ([`load_scaled_checked`]).
pub fn load_split_checked(
    spec: &Spec,
    data: &str,
    label_column: Option<usize>,
    scale: Scale,
    check: &dyn Fn(&Dataset) -> Result<()>,
) -> Result<Split> {
    let (d, scaling, tr, te) = load_scaled_checked(data, label_column, scale, check)?;
    // An empty half would report 0% accuracy as if it had been measured.
    if tr.is_empty() || te.is_empty() {
        bail!(
            "data {data}: {} samples leave the {} set empty after the 80/20 split within each class; give some class at least 3 samples",
            d.len(),
            if tr.is_empty() { "training" } else { "test" }
        );
    }
    Ok(Split {
        train: d.encode(spec, &tr)?,
        test: d.encode(spec, &te)?,
        name: d.name.clone(),
        scaling,
        features: d.features,
    })
}

/// What `train` runs on: a backend of the registry, opened.
pub use crate::backends::Engine as Trainer;

#[derive(Clone, Debug, serde::Serialize)]
pub struct EpochReport {
    pub epoch: usize,
    pub train_accuracy: f64,
    pub test_accuracy: f64,
    /// With `train --trace`: where the arithmetic loses what float keeps, per junction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<JunctionTrace>>,
}

/// Samples of the training split `train --trace` measures after each epoch.
const TRACE_SAMPLES: usize = 256;

pub struct RunReport {
    pub epochs: Vec<EpochReport>,
    pub samples_per_second: f64,
    pub state: Option<State>,
    pub backend: String,
}

/// Train for `epochs` epochs, each one pipelined stream over the training set in the epoch's
/// [sample order](edgeflow_core::order); accuracies after every epoch. Only training time
/// counts towards samples/s.
pub fn run(t: Trainer, split: &Split, epochs: usize, quiet: bool) -> Result<(RunReport, Trainer)> {
    run_from(t, split, 0, epochs, quiet)
}

/// [`run`] from epoch `first` of the sample order (a continued run, `train --init`). With
/// no epochs, the one report is the accuracy of the state as loaded.
pub fn run_from(
    t: Trainer,
    split: &Split,
    first: usize,
    epochs: usize,
    quiet: bool,
) -> Result<(RunReport, Trainer)> {
    run_traced(t, split, first, epochs, quiet, None)
}

/// [`run_from`], with `trace`'s measurements after every epoch when it is given.
pub fn run_traced(
    mut t: Trainer,
    split: &Split,
    first: usize,
    epochs: usize,
    quiet: bool,
    trace: Option<&Spec>,
) -> Result<(RunReport, Trainer)> {
    let n = split.train.len();
    let quiet = quiet || crate::ui::quiet();
    let pb = if quiet {
        ProgressBar::hidden()
    } else {
        let pb = ProgressBar::new((epochs * n) as u64);
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] epoch {msg} {pos}/{len} samples ({per_sec}, eta {eta})",
            )
            .unwrap()
            .progress_chars("=> "),
        );
        pb.set_prefix(t.name());
        crate::ui::show(pb)
    };
    let mut reports = Vec::new();
    let mut train_time = 0.0;
    let mut order = SampleOrder::new(n);
    for _ in 0..first {
        order.next_keys();
    }
    if epochs == 0 {
        reports.push(EpochReport {
            epoch: first,
            train_accuracy: accuracy(&t.infer(&split.train)?, &split.train.labels),
            test_accuracy: accuracy(&t.infer(&split.test)?, &split.test.labels),
            trace: None,
        });
    }
    for e in 0..epochs {
        pb.set_message(format!("{}/{epochs}", e + 1));
        let stream = split.train.select(&order.next_epoch());
        let t0 = Instant::now();
        t.train(&stream)?;
        train_time += t0.elapsed().as_secs_f64();
        pb.inc(n as u64);
        let tr = accuracy(&t.infer(&split.train)?, &split.train.labels);
        let te = accuracy(&t.infer(&split.test)?, &split.test.labels);
        let line = format!(
            "{:>10} epoch {:>3}: train {:6.2}%  test {:6.2}%",
            t.name(),
            first + e + 1,
            tr * 100.0,
            te * 100.0
        );
        let traced = match (trace, &mut t) {
            (Some(spec), Trainer::Board(b)) => Some(edgeflow_reference::trace::trace(
                spec,
                &b.read_state()?,
                &split.train,
                TRACE_SAMPLES,
            )),
            (Some(_), Trainer::Float(..)) => {
                bail!("--trace measures the fixed-point arithmetic; the float backend has none")
            }
            (None, _) => None,
        };
        let mut lines = vec![line];
        for j in traced.iter().flatten() {
            lines.push(format!(
                "{:>10}   junction {}: products outside {:5.1}%, sums saturated {:5.1}%, updates below half a step {:5.1}%, weights at range ends {:5.1}%",
                "",
                j.junction,
                j.ff_products_outside * 100.0,
                j.sums_saturated * 100.0,
                j.updates_below_half_step * 100.0,
                j.weights_at_range_ends * 100.0
            ));
        }
        // Without a terminal the bar is hidden, but the per-epoch accuracy is still wanted.
        for line in lines {
            if pb.is_hidden() && !quiet {
                eprintln!("{line}");
            } else {
                pb.println(line);
            }
        }
        reports.push(EpochReport {
            epoch: first + e + 1,
            train_accuracy: tr,
            test_accuracy: te,
            trace: traced,
        });
    }
    pb.finish_and_clear();
    let state = t.read_state()?;
    Ok((
        RunReport {
            epochs: reports,
            samples_per_second: (epochs * n) as f64 / train_time.max(1e-9),
            state,
            backend: t.name(),
        },
        t,
    ))
}

/// Opens a backend of the registry to train with.
pub fn make_trainer(spec: &Spec, backend: &str) -> Result<Trainer> {
    crate::backends::parse(backend)?
        .check("--backend", Use::Train)?
        .open(spec, &Options::default())
}

pub struct TrainArgs {
    pub spec: Option<PathBuf>,
    pub init: Option<PathBuf>,
    pub data: String,
    pub label_column: Option<usize>,
    pub scale: Option<ScaleKind>,
    pub epochs: usize,
    pub backend: Choice,
    pub out: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub json: bool,
    pub trace: bool,
    /// Threads of the reference model (`None`: every core the network is big enough for).
    pub threads: Option<usize>,
}

/// Refuse a chart name that is neither SVG nor PNG before any training time is spent.
pub fn check_plot_path(path: Option<&Path>) -> Result<()> {
    let Some(p) = path else { return Ok(()) };
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") | Some("png") => Ok(()),
        _ => bail!(
            "--plot {}: the chart is written as SVG or PNG, chosen by the extension; name it .svg or .png",
            p.display()
        ),
    }
}

pub fn train_cmd(a: TrainArgs) -> Result<()> {
    let (spec, init) = init::spec_and_init(a.spec.as_deref(), a.init.as_deref())?;
    check_epochs(a.epochs, init.is_some())?;
    check_plot_path(a.plot.as_deref())?;
    let float = a.backend.kind() == Kind::Float;
    if a.trace && float {
        bail!("--trace measures the fixed-point arithmetic; the float backend has none. Drop --trace or use --backend reference");
    }
    if a.out.is_some() && float {
        bail!("--out saves a fixed-point model; the float backend has none. Drop --out or use --backend reference");
    }
    if a.threads.is_some() && !a.backend.backend.threads {
        bail!(
            "--threads sets the training threads; --backend {} has none. Drop --threads or use --backend reference",
            a.backend.name()
        );
    }
    let split = init::load_data(&spec, init.as_ref(), &a.data, a.label_column, a.scale)?;
    let opts = Options {
        threads: a.threads,
        ..Options::default()
    };
    let mut trainer = a
        .backend
        .check("--backend", Use::Train)?
        .open(&spec, &opts)?;
    if let Some(i) = &init {
        trainer.load_state(i.state())?;
    }
    let first = init.as_ref().map_or(0, Init::first_epoch);
    let traced = a.trace.then_some(&spec);
    let (rep, _) = run_traced(trainer, &split, first, a.epochs, a.json, traced)?;
    if let (Some(out), Some(state)) = (&a.out, &rep.state) {
        let mut m = ModelFile::new(&spec, &spec.default_staleness(), state, &split.scaling);
        m.features = Some(split.features);
        m.epochs = Some(first + a.epochs);
        m.save(out)?;
    }
    if let Some(p) = &a.plot {
        write_curve(p, &spec.name, &rep)?;
    }
    let last = rep.epochs.last().unwrap();
    let r = report::Trained {
        spec: spec.name.clone(),
        backend: rep.backend.clone(),
        data: split.name.clone(),
        scale: split.scaling.kind,
        epochs: a.epochs,
        first_epoch: first,
        init: a.init,
        train_samples: split.train.len(),
        test_samples: split.test.len(),
        train_accuracy: last.train_accuracy,
        test_accuracy: last.test_accuracy,
        best_test_accuracy: rep
            .epochs
            .iter()
            .map(|e| e.test_accuracy)
            .fold(0.0, f64::max),
        samples_per_second: rep.samples_per_second,
        state_sha256: rep.state.as_ref().map(|s| s.sha256()),
        history: rep.epochs,
        model: a.out,
    };
    emit(&r, Format::json(a.json));
    Ok(())
}

pub fn write_curve(path: &Path, name: &str, rep: &RunReport) -> Result<()> {
    let xs: Vec<f64> = rep.epochs.iter().map(|e| e.epoch as f64).collect();
    let title = format!("{name}: accuracy per epoch ({})", rep.backend);
    let series = [
        Series {
            name: "train".into(),
            points: xs
                .iter()
                .zip(&rep.epochs)
                .map(|(&x, e)| (x, e.train_accuracy * 100.0))
                .collect(),
        },
        Series {
            name: "test".into(),
            points: xs
                .iter()
                .zip(&rep.epochs)
                .map(|(&x, e)| (x, e.test_accuracy * 100.0))
                .collect(),
        },
    ];
    // PNG goes through plotters (needs a font); SVG stays the font-free writer.
    if crate::chart::is_png(path) {
        return crate::chart::line_chart(
            path,
            &crate::chart::LineChart {
                title: &title,
                xlabel: "epoch",
                ylabel: "accuracy (%)",
                series: &series,
                axes: crate::chart::Axes::Linear,
            },
        );
    }
    let svg = line_chart(&title, "epoch", "accuracy (%)", &series, false);
    crate::plot::save(path, &svg)
}

pub fn eval_cmd(
    model: &Path,
    backend: &Choice,
    data: &str,
    label_column: Option<usize>,
    scale: Option<ScaleKind>,
    json: bool,
) -> Result<()> {
    let (spec, m) = ModelFile::load(model)?;
    m.check_scale(model, scale)?;
    let width = |d: &Dataset| m.check_features(model, data, d.features);
    let split = load_split_checked(&spec, data, label_column, m.scale(), &width)?;
    let opts = Options {
        staleness: Some(m.staleness.clone()),
        ..Options::default()
    };
    let mut b = backend
        .check("--backend", Use::Eval)?
        .open_board(&spec, &opts)?;
    b.load_state(&m.state)?;
    let t0 = Instant::now();
    let tr = accuracy(&b.infer(&split.train)?, &split.train.labels);
    let te = accuracy(&b.infer(&split.test)?, &split.test.labels);
    let sps = (split.train.len() + split.test.len()) as f64 / t0.elapsed().as_secs_f64().max(1e-9);
    let r = report::Evaluated {
        spec: spec.name.clone(),
        backend: b.name(),
        data: split.name.clone(),
        scale: split.scaling.kind,
        epochs: None,
        train_accuracy: tr,
        test_accuracy: te,
        samples_per_second: sps,
        state_sha256: m.state_sha256.clone(),
    };
    emit(&r, Format::json(json));
    Ok(())
}

pub fn infer_cmd(
    model: &Path,
    data: &str,
    label_column: Option<usize>,
    scale: Option<ScaleKind>,
    out: Option<&Path>,
    json: bool,
) -> Result<()> {
    let (spec, m) = ModelFile::load(model)?;
    m.check_scale(model, scale)?;
    let width = |d: &Dataset| m.check_features(model, data, d.features);
    let (d, scaling, _, _) = load_scaled_checked(data, label_column, m.scale(), &width)?;
    let all: Vec<usize> = (0..d.len()).collect();
    let enc = d.encode(&spec, &all)?;
    let mut b = ReferenceBoard::new(&spec, m.staleness.clone())?;
    b.load_state(&m.state)?;
    let pred = b.infer(&enc)?;
    let acc = accuracy(&pred, &enc.labels);
    if let Some(p) = out {
        let text = report::Inferred::csv(&pred, &enc.labels);
        write_atomic(p, text.as_bytes()).with_context(|| format!("writing {}", p.display()))?
    }
    let r = report::Inferred {
        spec: spec.name.clone(),
        data: d.name.clone(),
        scale: scaling.kind,
        samples: enc.len(),
        accuracy: acc,
        state_sha256: m.state_sha256.clone(),
        out: out.map(Path::to_path_buf),
        predictions: out.is_none().then_some(pred),
        labels: enc.labels.clone(),
    };
    emit(&r, Format::json(json));
    ui::note(format!(
        "accuracy {:.2}% over {} samples",
        acc * 100.0,
        enc.len()
    ));
    Ok(())
}

/// `cargo run --release` with no arguments: the default spec on the bundled digits, with the
/// bit-exact reference model and the float reference side by side.
pub fn demo() -> Result<()> {
    let spec_path = crate::default_spec_path();
    let spec = Spec::load(&spec_path)?;
    let split = load_split(&spec, "digits", None, Scale::Fit(ScaleKind::Feature))?;
    let epochs = 30;
    println!(
        "edgeflow demo: {} ({}) on the bundled digits, {} training / {} test samples, {epochs} epochs",
        spec.name,
        spec_path.display(),
        split.train.len(),
        split.test.len()
    );
    let mut lines = Vec::new();
    for backend in ["reference", "float"] {
        let (rep, _) = run(make_trainer(&spec, backend)?, &split, epochs, false)?;
        let last = rep.epochs.last().unwrap();
        let best = rep
            .epochs
            .iter()
            .map(|e| e.test_accuracy)
            .fold(0.0, f64::max);
        lines.push(format!(
            "{backend:>10}: test accuracy {:.2}% (best {:.2}%), train {:.2}%, {:.0} samples/s{}",
            last.test_accuracy * 100.0,
            best * 100.0,
            last.train_accuracy * 100.0,
            rep.samples_per_second,
            rep.state
                .map(|s| format!(", state sha256 {}", &s.sha256()[..16]))
                .unwrap_or_default()
        ));
    }
    for l in lines {
        println!("{l}");
    }
    println!(
        "next: `edgeflow --help`, or `edgeflow train --spec specs/digits.toml --plot curve.svg`"
    );
    Ok(())
}
