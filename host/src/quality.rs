//! `edgeflow quality`: how well the bit-exact arithmetic learns next to float. A grid of
//! networks on the bundled digits (hidden activation × value width × depth) is trained with
//! the reference model and with the float reference on the same samples in the same order;
//! each network's test accuracies and their gap are written as JSON, a markdown table and a
//! chart. The worst gap is the figure to drive down.
//!
//! Every network is generated as spec TOML and read by the spec parser, so options the grid
//! does not mention take the parser's defaults, and `--set KEY=VALUE` reaches any of them.

use crate::report::{emit, Format, Written};
use crate::train::{load_scaled, make_trainer, run, Scale, Split};
use crate::util::write_atomic;
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::{ScaleKind, Spec};
use serde::Serialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(clap::Args)]
pub struct QualityCli {
    /// Passes over the training set per network.
    #[arg(long, default_value_t = 30)]
    epochs: usize,
    /// Hidden activations, comma-separated (any the spec accepts).
    #[arg(long, value_delimiter = ',', default_value = "sigmoid,relu")]
    activations: Vec<String>,
    /// Value widths in bits, comma-separated; int_bits is 2 up to 10 bits and 3 above, the
    /// rest is fraction.
    #[arg(long, value_delimiter = ',', default_value = "8,10,12,16")]
    widths: Vec<u32>,
    /// Network depths in junctions (2 to 4), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "2,3,4")]
    junctions: Vec<usize>,
    /// Override a spec option in every network: KEY=VALUE with a TOML value (a bare word is a
    /// string), dotted keys for tables, e.g. --set learning_rate_shift=3 --set fixed.int_bits=2.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seeds of the initial weights (and of the rounding streams), comma-separated: every
    /// network is trained once per seed by both models and the accuracies are averaged, since
    /// one run on the 360 test samples moves by a point or two with the seed alone.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Networks trained at once (default: the machine's logical CPUs).
    #[arg(long)]
    jobs: Option<usize>,
    /// Write quality.json, quality.md and the chart (quality.svg, quality.png) into this
    /// directory.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Print the JSON report instead of the table.
    #[arg(long)]
    json: bool,
}

/// One training run's test and train accuracy, and its state's hash (none for float).
type Outcome = Result<(f64, f64, Option<String>)>;

/// One network of the grid and its two results.
#[derive(Clone, Debug, Serialize)]
struct Row {
    name: String,
    activation: String,
    /// The effective rounding of the updates (`Spec::rounding`).
    rounding: String,
    width: u32,
    int_bits: u32,
    frac_bits: u32,
    junctions: usize,
    layers: Vec<usize>,
    learning_rate_shift: u32,
    /// Test and train accuracies: the mean over the seeds.
    bit_exact_test_accuracy: f64,
    float_test_accuracy: f64,
    bit_exact_train_accuracy: f64,
    float_train_accuracy: f64,
    /// Float minus bit-exact test accuracy, in percentage points (mean over the seeds).
    gap_points: f64,
    seeds: Vec<u64>,
    /// Per seed, in the order of `seeds`.
    bit_exact_test_accuracies: Vec<f64>,
    float_test_accuracies: Vec<f64>,
    /// Per seed, the bit-exact model's final state.
    state_sha256s: Vec<String>,
    /// Whether float reached [`FLOAT_LEARNS`]; if not, the gap says little.
    float_learns: bool,
    /// The spec as the parser read it, defaults included (seed: the first of `seeds`).
    spec: String,
}

/// Layer sizes, fan-outs and lanes per depth: digits' 64 inputs and 10 classes, 80 hidden
/// neurons first, every junction at most 25% dense.
fn shape(junctions: usize) -> Option<(&'static [usize], &'static [usize], &'static [usize])> {
    match junctions {
        2 => Some((&[64, 80, 10], &[20, 2], &[2, 1])),
        3 => Some((&[64, 80, 40, 10], &[20, 8, 2], &[2, 2, 1])),
        4 => Some((&[64, 80, 40, 40, 10], &[20, 8, 10, 2], &[2, 2, 2, 1])),
        _ => None,
    }
}

/// η = 2^-shift per activation, where float learns every network of the grid in 30 epochs (so
/// a gap is the arithmetic's, not the rate's): sigmoid at specs/digits.toml's rate; ReLU's
/// unbounded activations diverge there in the deeper networks.
fn learning_rate_shift(activation: &str) -> u32 {
    match activation {
        "sigmoid" => 2,
        "relu" => 4,
        _ => 3,
    }
}

/// Float below this test accuracy has not learned the digits: the gap says little there.
const FLOAT_LEARNS: f64 = 0.5;

fn int_bits(width: u32) -> u32 {
    if width <= 10 {
        2
    } else {
        3
    }
}

fn list<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The grid point as spec TOML, before overrides.
fn base_toml(activation: &str, width: u32, junctions: usize) -> Result<String> {
    let (layers, fan_out, z) = shape(junctions).ok_or_else(|| {
        anyhow!("--junctions {junctions}: the grid has networks of 2, 3 or 4 junctions")
    })?;
    if !(5..=16).contains(&width) {
        bail!("--widths {width}: widths from 5 to 16 bits (sign, integer and at least 2 fraction bits)");
    }
    let ib = int_bits(width);
    Ok(format!(
        "name = \"{activation}-w{width}-j{junctions}\"\nlayers = [{}]\nfan_out = [{}]\nz = [{}]\nactivation = {}\nlearning_rate_shift = {}\nseed = 1\n\n[fixed]\nwidth = {width}\nint_bits = {ib}\nfrac_bits = {}\n\n[pattern]\nkind = \"type1\"\ndither = true\nseed = 1\n",
        list(layers),
        list(fan_out),
        list(z),
        toml::Value::String(activation.to_string()),
        learning_rate_shift(activation),
        width - 1 - ib
    ))
}

/// Apply `KEY=VALUE` overrides to spec TOML text.
fn apply_sets(text: &str, sets: &[(String, toml::Value)]) -> Result<String> {
    let mut doc: toml::Table = toml::from_str(text)?;
    for (key, value) in sets {
        let parts: Vec<&str> = key.split('.').collect();
        let (last, path) = parts.split_last().expect("split yields one part");
        let mut t = &mut doc;
        for p in path {
            t = t
                .entry(p.to_string())
                .or_insert_with(|| toml::Value::Table(Default::default()))
                .as_table_mut()
                .ok_or_else(|| anyhow!("--set {key}: `{p}` is not a table in the spec"))?;
        }
        t.insert(last.to_string(), value.clone());
    }
    Ok(toml::to_string(&doc)?)
}

fn parse_set(s: &str) -> Result<(String, toml::Value)> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("--set {s}: write KEY=VALUE, e.g. --set learning_rate_shift=3"))?;
    let k = k.trim();
    if k.is_empty() || k.split('.').any(|p| p.is_empty()) {
        bail!("--set {s}: the key is empty; write KEY=VALUE, e.g. --set fixed.int_bits=2");
    }
    let v = v.trim();
    // a TOML value if it is one, else the bare word as a string
    let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(v.to_string()));
    Ok((k.to_string(), value))
}

/// The grid's specs, each checked by the spec parser before any training.
fn grid(a: &QualityCli) -> Result<Vec<(String, u32, usize, Spec)>> {
    let sets: Vec<(String, toml::Value)> =
        a.set.iter().map(|s| parse_set(s)).collect::<Result<_>>()?;
    let mut out = Vec::new();
    for act in &a.activations {
        for &w in &a.widths {
            for &j in &a.junctions {
                let text = apply_sets(&base_toml(act, w, j)?, &sets)?;
                let spec = Spec::from_toml_str(&text, &format!("quality grid {act}-w{w}-j{j}"))
                    .map_err(|e| match a.set.is_empty() {
                        true => anyhow!("{e}"),
                        false => anyhow!(
                            "{e}\n(the grid's spec after --set {})",
                            a.set.join(" --set ")
                        ),
                    })?;
                out.push((act.clone(), w, j, spec));
            }
        }
    }
    if out.is_empty() {
        bail!(
            "the grid is empty: give at least one of each of --activations, --widths, --junctions"
        );
    }
    Ok(out)
}

pub fn quality_cmd(a: QualityCli) -> Result<()> {
    if a.epochs == 0 {
        bail!("--epochs must be at least 1");
    }
    let specs = grid(&a)?;
    if a.seeds.is_empty() {
        bail!("--seeds: give at least one seed");
    }
    let seeded = |i: usize, k: usize| {
        let mut spec = specs[i].3.clone();
        spec.seed = a.seeds[k];
        spec
    };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("-o {}: cannot create the directory", dir.display()))?;
    }
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let (data, scaling, tr, te) = load_scaled("digits", None, Scale::Fit(ScaleKind::Feature))?;
    let splits: Vec<Split> = specs
        .iter()
        .map(|(.., spec)| {
            Ok(Split {
                train: data.encode(spec, &tr)?,
                test: data.encode(spec, &te)?,
                name: data.name.clone(),
                scaling: scaling.clone(),
                features: data.features,
            })
        })
        .collect::<Result<_>>()?;
    // one task per network, seed and backend, handed out to `jobs` threads in order
    let tasks: Vec<(usize, usize, &str)> = (0..specs.len())
        .flat_map(|i| (0..a.seeds.len()).flat_map(move |k| [(i, k, "reference"), (i, k, "float")]))
        .collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..tasks.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(tasks.len()) {
            s.spawn(|| loop {
                let t = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(i, k, backend)) = tasks.get(t) else {
                    break;
                };
                let spec = &seeded(i, k);
                let r = make_trainer(spec, backend)
                    .and_then(|tr| run(tr, &splits[i], a.epochs, true))
                    .map(|(rep, _)| {
                        let last = rep.epochs.last().expect("at least one epoch");
                        (
                            last.test_accuracy,
                            last.train_accuracy,
                            rep.state.map(|s| s.sha256()),
                        )
                    });
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                if let Ok((te, ..)) = &r {
                    crate::ui::note(format!(
                        "[{n}/{}] {} seed {} {backend}: test {:.2}%",
                        tasks.len(),
                        spec.name,
                        spec.seed,
                        te * 100.0
                    ));
                }
                results.lock().unwrap()[t] = Some(r);
            });
        }
    });
    let mut results = results.into_inner().unwrap().into_iter();
    let mut rows = Vec::new();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    for (i, (act, w, j, _)) in specs.iter().enumerate() {
        let (mut bts, mut btrs, mut fts, mut ftrs, mut shas) =
            (vec![], vec![], vec![], vec![], vec![]);
        for _ in &a.seeds {
            let (bt, btr, sha) = results.next().flatten().expect("every task ran")?;
            let (ft, ftr, _) = results.next().flatten().expect("every task ran")?;
            bts.push(bt);
            btrs.push(btr);
            fts.push(ft);
            ftrs.push(ftr);
            shas.push(sha.unwrap_or_default());
        }
        let spec = seeded(i, 0);
        let (bt, ft) = (mean(&bts), mean(&fts));
        rows.push(Row {
            name: spec.name.clone(),
            activation: act.clone(),
            rounding: format!("{:?}", spec.rounding()).to_lowercase(),
            width: *w,
            int_bits: spec.fixed.int_bits,
            frac_bits: spec.fixed.frac_bits,
            junctions: *j,
            layers: spec.layers.clone(),
            learning_rate_shift: spec.learning_rate_shift,
            bit_exact_test_accuracy: bt,
            float_test_accuracy: ft,
            bit_exact_train_accuracy: mean(&btrs),
            float_train_accuracy: mean(&ftrs),
            gap_points: (ft - bt) * 100.0,
            float_learns: ft >= FLOAT_LEARNS,
            seeds: a.seeds.clone(),
            bit_exact_test_accuracies: bts,
            float_test_accuracies: fts,
            state_sha256s: shas,
            spec: spec.to_toml(),
        });
    }
    let worst = rows
        .iter()
        .max_by(|x, y| x.gap_points.total_cmp(&y.gap_points))
        .expect("the grid is not empty");
    let report = json!({
        "data": "digits",
        "epochs": a.epochs,
        "train_samples": tr.len(),
        "test_samples": te.len(),
        "set": a.set,
        "seeds": a.seeds,
        "worst_gap_points": worst.gap_points,
        "worst_gap_network": worst.name,
        "networks": rows,
    });
    let table = markdown(&a, &rows, worst);
    if let Some(dir) = &a.out {
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        write_atomic(&dir.join("quality.json"), text.as_bytes())?;
        write_atomic(&dir.join("quality.md"), table.as_bytes())?;
        for ext in ["svg", "png"] {
            chart(&dir.join(format!("quality.{ext}")), &a, &rows)?;
        }
    }
    emit(&Written::new(report, table), Format::json(a.json));
    Ok(())
}

fn markdown(a: &QualityCli, rows: &[Row], worst: &Row) -> String {
    let mut t = format!(
        "# Learning quality: bit-exact against float\n\n\
         Bundled digits ({} epochs, the same samples in the same order for both); test accuracy \
         after the last epoch, the mean over {} seed(s) of the initial weights ({}). Gap = float \
         − bit-exact, in points, with its range over the seeds; η = 2^-shift. A * marks a \
         network float itself does not learn (below {:.0} %).{}\n\n\
         Made by `edgeflow quality{}`.\n\n\
         **Worst gap: {:.1} points** ({}).\n\n\
         | network | activation | rounding | width (int.frac) | junctions | η shift | bit-exact | float | gap | gap range |\n\
         |---|---|---|---|---:|---:|---:|---:|---:|---|\n",
        a.epochs,
        a.seeds.len(),
        list(&a.seeds),
        FLOAT_LEARNS * 100.0,
        if a.set.is_empty() {
            String::new()
        } else {
            format!(" Spec overrides: `{}`.", a.set.join("`, `"))
        },
        std::env::args()
            .skip(1)
            .skip_while(|x| x != "quality")
            .skip(1)
            .map(|x| format!(" {x}"))
            .collect::<String>(),
        worst.gap_points,
        worst.name
    );
    for r in rows {
        let gaps: Vec<f64> = (r.float_test_accuracies.iter())
            .zip(&r.bit_exact_test_accuracies)
            .map(|(f, b)| (f - b) * 100.0)
            .collect();
        t.push_str(&format!(
            "| {} | {} | {} | {} ({}.{}) | {} | {} | {:.1} % | {:.1} %{} | {:+.1} | {:+.1} … {:+.1} |\n",
            r.name,
            r.activation,
            r.rounding,
            r.width,
            r.int_bits,
            r.frac_bits,
            r.junctions,
            r.learning_rate_shift,
            r.bit_exact_test_accuracy * 100.0,
            r.float_test_accuracy * 100.0,
            if r.float_learns { "" } else { " *" },
            r.gap_points,
            gaps.iter().copied().fold(f64::INFINITY, f64::min),
            gaps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ));
    }
    t
}

/// The gap against the width, one line per activation and depth.
fn chart(path: &Path, a: &QualityCli, rows: &[Row]) -> Result<()> {
    let mut series = Vec::new();
    for act in &a.activations {
        for &j in &a.junctions {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| &r.activation == act && r.junctions == j)
                .map(|r| (r.width as f64, r.gap_points))
                .collect();
            series.push(crate::plot::Series {
                name: format!("{act}, {j} junctions"),
                points,
            });
        }
    }
    let title = format!(
        "digits, {} epochs: float minus bit-exact test accuracy",
        a.epochs
    );
    crate::chart::line_chart(
        path,
        &crate::chart::LineChart {
            title: &title,
            xlabel: "value width (bits)",
            ylabel: "gap (points)",
            series: &series,
            axes: crate::chart::Axes::Linear,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_reach_any_option_and_bad_ones_are_named() {
        let base = base_toml("relu", 10, 3).unwrap();
        let sets = vec![
            parse_set("learning_rate_shift=3").unwrap(),
            parse_set("fixed.int_bits = 3").unwrap(),
            parse_set("fixed.width=11").unwrap(),
            parse_set("pattern.kind=type2").unwrap(),
        ];
        let s = Spec::from_toml_str(&apply_sets(&base, &sets).unwrap(), "t").unwrap();
        assert_eq!(s.learning_rate_shift, 3);
        assert_eq!(
            (s.fixed.width, s.fixed.int_bits, s.fixed.frac_bits),
            (11, 3, 7)
        );
        assert_eq!(s.pattern.kind, edgeflow_core::PatternKind::Type2);
        assert_eq!(s.layers, vec![64, 80, 40, 10]);
        let e = parse_set("rounding").unwrap_err().to_string();
        assert!(e.contains("KEY=VALUE"), "{e}");
        let e = apply_sets(&base, &[parse_set("name.x=1").unwrap()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`name` is not a table"), "{e}");
        // every grid point is a valid spec
        for j in 2..=4 {
            for w in [8, 10, 12, 16] {
                for act in ["sigmoid", "relu"] {
                    Spec::from_toml_str(&base_toml(act, w, j).unwrap(), "grid").unwrap();
                }
            }
        }
    }
}
