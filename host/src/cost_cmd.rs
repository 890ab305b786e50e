//! `edgeflow cost`: what the planner's cost model predicts for one board hosting the whole
//! network at the spec's own z, and, given an `edgeflow synth --json` report, how far that
//! is from what yosys actually mapped (the calibration of docs/calibration/reproduce.sh).

use crate::report::{emit, Format, Written};
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::Spec;
use edgeflow_planner::calibrate::{fit, Case, Terms};
use edgeflow_planner::cost::{single_board_usage, Net, Usage};
use edgeflow_planner::Board;
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::fmt::Write as _;
use std::path::Path;

/// One resource: the model's prediction and, when a synthesis report was given, yosys' count.
#[derive(Serialize)]
struct Row {
    resource: &'static str,
    predicted: f64,
    synthesized: Option<f64>,
    /// predicted / synthesized: 1.0 is exact, below 1 the model underestimates.
    ratio: Option<f64>,
}

impl Row {
    fn new(resource: &'static str, predicted: f64, synthesized: Option<f64>) -> Row {
        let ratio = synthesized.filter(|&s| s > 0.0).map(|s| predicted / s);
        Row {
            resource,
            predicted,
            synthesized,
            ratio,
        }
    }
}

/// `edgeflow cost`'s report.
#[derive(Serialize)]
struct Costed {
    spec: String,
    board: String,
    z: Vec<u64>,
    /// true: fits whatever the model's error; false: does not; null: near the limit, where
    /// synthesis decides.
    fits: Option<bool>,
    near_limit: bool,
    verdict: String,
    overflows: Vec<serde_json::Value>,
    /// The synthesis report's target, when one was given.
    target: Option<String>,
    usage: Usage,
    flip_flops: u64,
    rows: Vec<Row>,
    terms: Terms,
    #[serde(skip)]
    vs_yosys: bool,
}

impl fmt::Display for Costed {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            w,
            "{} on {} at z = {:?} (cost model{})",
            self.spec,
            self.board,
            self.z,
            if self.vs_yosys { " vs yosys" } else { "" }
        )?;
        writeln!(
            w,
            "{:<6} {:>10} {:>12} {:>16}",
            "", "predicted", "synthesized", "pred/synth"
        )?;
        for r in &self.rows {
            writeln!(
                w,
                "{:<6} {:>10} {:>12} {:>16}",
                r.resource,
                r.predicted,
                r.synthesized.map(|s| s.to_string()).unwrap_or("-".into()),
                r.ratio.map(|x| format!("{x:.2}")).unwrap_or("-".into())
            )?;
        }
        writeln!(w, "{}", self.verdict)
    }
}

pub fn cost_cmd(spec_path: &Path, board: &str, synth: Option<&Path>, json: bool) -> Result<()> {
    let spec = Spec::load(spec_path)?;
    let board = Board::resolve(board)?;
    let net = Net::from_spec(&spec);
    let z: Vec<u64> = spec.z.iter().map(|&z| z as u64).collect();
    let u = single_board_usage(&net, &board, &z);
    let ffs = edgeflow_planner::cost::flip_flops(&net, &board, &z);
    let report = match synth {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read synthesis report {}", p.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{} is not JSON; write it with `edgeflow synth --json > FILE`",
                    p.display()
                )
            })?;
            Some(v)
        }
        None => None,
    };
    if let (Some(v), Some(p)) = (&report, synth) {
        if report_rows(v).is_none() {
            bail!(
                "{}: no resource table (neither `table.rows` nor `resources.rows`); write it \
                 with `edgeflow synth --json` or `edgeflow bitstream --json`",
                p.display()
            );
        }
    }
    let used = |name: &str| -> Result<Option<f64>> {
        let Some(rows) = report.as_ref().and_then(report_rows) else {
            return Ok(None);
        };
        match rows.iter().find(|r| r["resource"] == name) {
            Some(r) => Ok(r["used"].as_f64()),
            None => bail!("the synthesis report's resource table has no {name} row"),
        }
    };
    // what the part's logic is counted in: packed logic cells where the report has them
    // (iCE40), else LUT4 or LUT
    let logic = match &report {
        Some(v) if report_rows(v).is_some_and(|r| r.iter().any(|r| r["resource"] == "LC")) => "LC",
        _ => "LUT",
    };
    // a board top (`edgeflow synth --board`) holds the UART bridge; the network alone does not
    let board_top = report.as_ref().is_some_and(|v| v["board"].is_string());
    let link = if board_top {
        0
    } else {
        board.fit.logic_serial_link
    };
    let rows = vec![
        Row::new(logic, u.logic.saturating_sub(link) as f64, used(logic)?),
        Row::new("FF", ffs as f64, used("FF")?),
        Row::new("DSP", u.dsp as f64, used("DSP")?),
        Row::new("BRAM", u.ram_blocks as f64, used("BRAM")?),
    ];
    let r = Costed {
        spec: spec.name.clone(),
        board: board.name.clone(),
        fits: u.verdict(),
        near_limit: u.verdict().is_none(),
        verdict: verdict(&u, &board.name, spec_path),
        overflows: overflows(&u)
            .iter()
            .map(|o| {
                json!({
                "resource": o.resource, "predicted": o.predicted, "available": o.available,
                "allowed": o.allowed, "percent": o.percent()})
            })
            .collect(),
        target: report.as_ref().and_then(|v| {
            v["table"]["target"]
                .as_str()
                .or(v["resources"]["part"].as_str())
                .map(String::from)
        }),
        usage: u,
        flip_flops: ffs,
        rows,
        terms: Terms::new(&net, &board, &z),
        z,
        vs_yosys: report.is_some(),
    };
    emit(&r, Format::json(json));
    Ok(())
}

/// The used/available rows of a report: `table.rows` of `edgeflow synth --json`, or
/// `resources.rows` of `edgeflow bitstream --json` (after placement and routing).
fn report_rows(v: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
    v["table"]["rows"]
        .as_array()
        .or_else(|| v["resources"]["rows"].as_array())
}

/// A resource the model puts over the board: what the part has, and what the model allows
/// of it (more for logic: a prediction within the model's error may still fit).
struct Over {
    resource: &'static str,
    predicted: u64,
    available: u64,
    allowed: u64,
}

impl Over {
    fn percent(&self) -> f64 {
        100.0 * self.predicted as f64 / self.available.max(1) as f64
    }
}

/// Every resource the design cannot fit in whatever the model's error; none when it fits or
/// is near the limit (`Usage::verdict`).
fn overflows(u: &Usage) -> Vec<Over> {
    [
        ("logic cells", u.logic, u.logic_available, u.logic_may_fit()),
        (
            "block RAMs",
            u.ram_blocks,
            u.ram_blocks_available,
            u.ram_blocks_available,
        ),
        (
            "block RAM bits",
            u.ram_bits,
            u.ram_bits_available,
            u.ram_bits_available,
        ),
    ]
    .into_iter()
    .filter(|(_, need, _, allowed)| need > allowed)
    .map(|(resource, predicted, available, allowed)| Over {
        resource,
        predicted,
        available,
        allowed,
    })
    .collect()
}

/// The model's verdict in words: fits, near the limit (with what decides), or every resource
/// over the board, predicted against available, and what to change.
fn verdict(u: &Usage, board: &str, spec: &Path) -> String {
    let err = u.logic_error * 100.0;
    let pct = 100.0 * u.logic as f64 / u.logic_available.max(1) as f64;
    match u.verdict() {
        Some(true) => {
            return format!(
                "fits {board}: logic {pct:.0}% of the part (the model is within {err:.0}% of synthesis on its calibration runs)"
            )
        }
        None => {
            return format!(
                "NEAR THE LIMIT of {board}: logic {pct:.0}% of the part ({} of {}), within the model's {err:.0}% error; \
                 `edgeflow synth --spec {} --board {board}` counts the real cells",
                u.logic,
                u.logic_available,
                spec.display()
            )
        }
        Some(false) => {}
    }
    let each: Vec<String> = overflows(u)
        .iter()
        .map(|o| {
            let beyond = if o.allowed > o.available {
                format!(", beyond the model's {err:.0}% error")
            } else {
                String::new()
            };
            format!(
                "{}: {} predicted, the part has {} ({:.0}%{beyond})",
                o.resource,
                o.predicted,
                o.available,
                o.percent()
            )
        })
        .collect();
    format!(
        "DOES NOT FIT {board}: {}. Lower z, use a smaller network or a larger board",
        each.join("; ")
    )
}

/// `edgeflow cost --fit DIR --board B`: refit the board's constants from the calibration runs
/// in DIR (`*.cost.json` of this board, each next to its `*.synth.json`), print them as the
/// board file's `[fit]` table and show every case with the refitted model.
pub fn fit_cmd(dir: &Path, board: &str, json: bool) -> Result<()> {
    let board = Board::resolve(board)?;
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read calibration directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".cost.json"))
        .collect();
    paths.sort();
    let (mut cases, mut skipped) = (Vec::new(), Vec::new());
    for p in &paths {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p)?)
            .with_context(|| format!("{} is not JSON", p.display()))?;
        if v["board"] != board.name.as_str() {
            continue;
        }
        let name = p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".cost.json")
            .to_string();
        let terms: Terms = serde_json::from_value(v["terms"].clone()).with_context(|| {
            format!(
                "{} has no model terms: rerun `COST_ONLY=1 docs/calibration/reproduce.sh`",
                p.display()
            )
        })?;
        let synth = |r: &str| {
            v["rows"]
                .as_array()
                .and_then(|rows| rows.iter().find(|x| x["resource"] == r))
                .and_then(|x| x["synthesized"].as_f64())
        };
        let (Some(logic), Some(ffs)) = (synth("LC").or_else(|| synth("LUT")), synth("FF")) else {
            skipped.push((name, "no synthesis numbers".to_string()));
            continue;
        };
        // Past the part's block RAMs yosys moves memories into flip-flops and read muxes,
        // which the model does not represent (it refuses such a design by its RAM limits).
        let sp = p.with_file_name(format!("{name}.synth.json"));
        if let Ok(text) = std::fs::read_to_string(&sp) {
            let s: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if let Some(r) = s["table"]["rows"]
                .as_array()
                .and_then(|rows| rows.iter().find(|x| x["resource"] == "BRAM"))
            {
                let (used, avail) = (r["used"].as_f64(), r["available"].as_f64());
                if let (Some(u), Some(a)) = (used, avail) {
                    if u > a {
                        skipped.push((
                            name,
                            format!("{u} block RAMs of {a}: memories spilled into logic"),
                        ));
                        continue;
                    }
                }
            }
        }
        cases.push(Case {
            name,
            terms,
            logic,
            flip_flops: ffs,
        });
    }
    let (f, lpm) = fit(&cases, &board).map_err(|e| anyhow!("{} ({})", e, dir.display()))?;
    let predict = |c: &Case| {
        (
            edgeflow_planner::calibrate::predicted_logic(&f, lpm, &c.terms),
            f.ff_per_board as f64
                + f.ff_per_lane_bit as f64 * c.terms.lane_bits
                + f.ff_per_lut_multiplier as f64 * c.terms.lut_multipliers,
        )
    };
    let rows: Vec<_> = cases
        .iter()
        .map(|c| {
            let (l, ff) = predict(c);
            json!({"case": c.name, "logic_predicted": l.round(), "logic_synthesized": c.logic,
                   "logic_ratio": l / c.logic, "ff_predicted": ff.round(),
                   "ff_synthesized": c.flip_flops, "ff_ratio": ff / c.flip_flops})
        })
        .collect();
    let r = Written {
        value: json!({
            "board": board.name, "fit": f, "lut_per_multiplier": lpm, "cases": rows,
            "skipped": skipped.iter().map(|(n, why)| json!({"case": n, "why": why})).collect::<Vec<_>>(),
        }),
        text: fit_text(&board.name, dir, &f, lpm, &rows, &skipped, &cases)?,
    };
    emit(&r, Format::json(json));
    Ok(())
}

/// `cost --fit`'s table, and the fit as the board file's `[fit]` table.
fn fit_text(
    board: &str,
    dir: &Path,
    f: &edgeflow_planner::Fit,
    lpm: u64,
    rows: &[serde_json::Value],
    skipped: &[(String, String)],
    cases: &[Case],
) -> Result<String> {
    let mut w = String::new();
    writeln!(
        w,
        "{} cases of board {} in {} (least squares; logic_per_board {}):",
        cases.len(),
        board,
        dir.display(),
        f.logic_per_board
    )?;
    writeln!(
        w,
        "{:<28} {:>10} {:>10} {:>7} {:>8} {:>8} {:>7}",
        "case", "logic pred", "logic synth", "ratio", "FF pred", "FF synth", "ratio"
    )?;
    for r in rows {
        writeln!(
            w,
            "{:<28} {:>10} {:>10} {:>7.2} {:>8} {:>8} {:>7.2}",
            r["case"].as_str().unwrap_or(""),
            r["logic_predicted"].as_f64().unwrap_or(0.0),
            r["logic_synthesized"].as_f64().unwrap_or(0.0),
            r["logic_ratio"].as_f64().unwrap_or(0.0),
            r["ff_predicted"].as_f64().unwrap_or(0.0),
            r["ff_synthesized"].as_f64().unwrap_or(0.0),
            r["ff_ratio"].as_f64().unwrap_or(0.0)
        )?;
    }
    for (n, why) in skipped {
        writeln!(w, "skipped {n}: {why}")?;
    }
    writeln!(
        w,
        "\nfor the board file (lut_per_multiplier = {lpm}):\n[fit]"
    )?;
    w.push_str(&toml::to_string(f)?);
    Ok(w)
}
