//! `edgeflow train`, `eval`, `infer` and the no-argument demo.

#[path = "init.rs"]
pub mod init;

use crate::board::{reference::ReferenceBoard, Board};
use crate::model::ModelFile;
use crate::plot::{line_chart, Series};
use crate::util::{print_json, write_atomic};
use anyhow::{bail, Context, Result};
use edgeflow_core::order::{SampleOrder, DATA_SEED};
use edgeflow_core::{Dataset, Encoded, ScaleKind, Scaling, Spec, State};
use edgeflow_sim::trace::JunctionTrace;
use edgeflow_sim::{accuracy, FloatReference};
use indicatif::{ProgressBar, ProgressStyle};
use init::{check_epochs, Init};
use serde_json::json;
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

pub enum Trainer {
    Board(Box<dyn Board>),
    // Boxed like the boards, so a Trainer stays the size of a pointer.
    Float(Box<FloatReference>),
}

impl Trainer {
    fn train(&mut self, d: &Encoded) -> Result<()> {
        match self {
            Trainer::Board(b) => b.train(d),
            Trainer::Float(f) => {
                f.train(d);
                Ok(())
            }
        }
    }
    fn infer(&mut self, d: &Encoded) -> Result<Vec<usize>> {
        match self {
            Trainer::Board(b) => b.infer(d),
            Trainer::Float(f) => Ok(f.infer(d)),
        }
    }
    /// Start from `state` (`train --init`): a board loads it as it loads the spec's initial
    /// state; the float reference takes its values.
    pub fn load_state(&mut self, state: &State) -> Result<()> {
        match self {
            Trainer::Board(b) => b.load_state(state),
            Trainer::Float(f) => {
                let fmt = f.spec.format();
                let real = |v: &Vec<Vec<i32>>| -> Vec<Vec<f64>> {
                    v.iter()
                        .map(|w| w.iter().map(|&x| fmt.to_f64(x)).collect())
                        .collect()
                };
                f.weights = real(&state.weights);
                f.biases = real(&state.biases);
                Ok(())
            }
        }
    }
    fn name(&self) -> String {
        match self {
            Trainer::Board(b) => b.name(),
            Trainer::Float(_) => "float".into(),
        }
    }
}

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
            (Some(spec), Trainer::Board(b)) => Some(edgeflow_sim::trace::trace(
                spec,
                &b.read_state()?,
                &split.train,
                TRACE_SAMPLES,
            )),
            (Some(_), Trainer::Float(_)) => {
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
    let state = match &mut t {
        Trainer::Board(b) => Some(b.read_state()?),
        Trainer::Float(_) => None,
    };
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

pub fn make_trainer(spec: &Spec, backend: &str) -> Result<Trainer> {
    match backend {
        "reference" => Ok(Trainer::Board(Box::new(ReferenceBoard::new(
            spec,
            spec.default_staleness(),
        )?))),
        "float" => Ok(Trainer::Float(Box::new(FloatReference::new(spec)))),
        other => crate::backends::open_board(spec, other).map(Trainer::Board),
    }
}

pub struct TrainArgs {
    pub spec: Option<PathBuf>,
    pub init: Option<PathBuf>,
    pub data: String,
    pub label_column: Option<usize>,
    pub scale: Option<ScaleKind>,
    pub epochs: usize,
    pub backend: String,
    pub out: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub json: bool,
    pub trace: bool,
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
    if a.trace && a.backend == "float" {
        bail!("--trace measures the fixed-point arithmetic; the float backend has none. Drop --trace or use --backend reference");
    }
    if a.out.is_some() && a.backend == "float" {
        bail!("--out saves a fixed-point model; the float backend has none. Drop --out or use --backend reference");
    }
    let split = init::load_data(&spec, init.as_ref(), &a.data, a.label_column, a.scale)?;
    let mut trainer = make_trainer(&spec, &a.backend)?;
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
    let sha = rep.state.as_ref().map(|s| s.sha256());
    if a.json {
        print_json(&json!({
            "spec": spec.name,
            "backend": rep.backend,
            "data": split.name,
            "scale": split.scaling.kind,
            "epochs": a.epochs,
            "first_epoch": first,
            "init": a.init,
            "train_samples": split.train.len(),
            "test_samples": split.test.len(),
            "train_accuracy": last.train_accuracy,
            "test_accuracy": last.test_accuracy,
            "best_test_accuracy": rep.epochs.iter().map(|e| e.test_accuracy).fold(0.0, f64::max),
            "samples_per_second": rep.samples_per_second,
            "state_sha256": sha,
            "history": rep.epochs,
            "model": a.out,
        }));
    } else {
        println!(
            "{} on {} ({}): train {:.2}%, test {:.2}% after {} epochs; {:.0} training samples/s",
            spec.name,
            split.name,
            rep.backend,
            last.train_accuracy * 100.0,
            last.test_accuracy * 100.0,
            a.epochs,
            rep.samples_per_second
        );
        if let Some(s) = sha {
            println!("state sha256 {s}");
        }
        if let Some(o) = &a.out {
            println!("model written to {}", o.display());
        }
    }
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
    backend: &str,
    data: &str,
    label_column: Option<usize>,
    scale: Option<ScaleKind>,
    json: bool,
) -> Result<()> {
    let (spec, m) = ModelFile::load(model)?;
    m.check_scale(model, scale)?;
    let width = |d: &Dataset| m.check_features(model, data, d.features);
    let split = load_split_checked(&spec, data, label_column, m.scale(), &width)?;
    let mut b: Box<dyn Board> = match backend {
        "reference" => Box::new(ReferenceBoard::new(&spec, m.staleness.clone())?),
        "float" => bail!(
            "--backend float: a saved model is fixed point and runs on reference, opencl[:DEVICE], rtl, verilator or serial:PORT; the float reference has no saved models (compare it with `edgeflow train --backend float`)"
        ),
        other => crate::backends::open_board(&spec, other)?,
    };
    b.load_state(&m.state)?;
    let t0 = Instant::now();
    let tr = accuracy(&b.infer(&split.train)?, &split.train.labels);
    let te = accuracy(&b.infer(&split.test)?, &split.test.labels);
    let sps = (split.train.len() + split.test.len()) as f64 / t0.elapsed().as_secs_f64().max(1e-9);
    if json {
        print_json(&json!({
            "spec": spec.name,
            "backend": b.name(),
            "data": split.name,
            "scale": split.scaling.kind,
            "epochs": serde_json::Value::Null,
            "train_accuracy": tr,
            "test_accuracy": te,
            "samples_per_second": sps,
            "state_sha256": m.state_sha256,
        }));
    } else {
        println!(
            "{} on {}: train {:.2}%, test {:.2}%; {:.0} inference samples/s",
            spec.name,
            split.name,
            tr * 100.0,
            te * 100.0,
            sps
        );
    }
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
    let mut text = String::from("sample,predicted,label\n");
    for (i, p) in pred.iter().enumerate() {
        text.push_str(&format!("{i},{p},{}\n", enc.labels[i]));
    }
    let acc = accuracy(&pred, &enc.labels);
    match out {
        Some(p) => {
            write_atomic(p, text.as_bytes()).with_context(|| format!("writing {}", p.display()))?
        }
        None if !json => print!("{text}"),
        None => {}
    }
    if json {
        // Without -o the predictions come inline, so the JSON alone is the whole answer.
        print_json(&json!({
            "spec": spec.name,
            "data": d.name,
            "scale": scaling.kind,
            "samples": enc.len(),
            "accuracy": acc,
            "state_sha256": m.state_sha256,
            "out": out,
            "predictions": if out.is_none() { json!(pred) } else { serde_json::Value::Null },
        }));
    } else {
        eprintln!("accuracy {:.2}% over {} samples", acc * 100.0, enc.len());
    }
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
