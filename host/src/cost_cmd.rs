//! `edgeflow cost`: what the planner's cost model predicts for one board hosting the whole
//! network at the spec's own z, and, given an `edgeflow synth --json` report, how far that
//! is from what yosys actually mapped (the calibration of docs/calibration/reproduce.sh).

use crate::util::print_json;
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::Spec;
use edgeflow_planner::cost::{single_board_usage, Net};
use edgeflow_planner::Board;
use serde_json::json;
use std::path::Path;

/// One resource: the model's prediction and, when a synthesis report was given, yosys' count.
struct Row {
    resource: &'static str,
    predicted: f64,
    synthesized: Option<f64>,
}

pub fn cost_cmd(spec_path: &Path, board: &str, synth: Option<&Path>, json: bool) -> Result<()> {
    let spec = Spec::load(spec_path)?;
    let board = Board::resolve(board).map_err(|e| anyhow!(e))?;
    let net = Net::from_spec(&spec);
    let z: Vec<u64> = spec.z.iter().map(|&z| z as u64).collect();
    let u = single_board_usage(&net, &board, &z);
    let ffs = edgeflow_planner::cost::flip_flops(&net, &z);
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
    let used = |name: &str| -> Result<Option<f64>> {
        let Some(v) = &report else { return Ok(None) };
        let rows = v["table"]["rows"].as_array().ok_or_else(|| {
            anyhow!("synthesis report has no table.rows; write it with `edgeflow synth --json`")
        })?;
        match rows.iter().find(|r| r["resource"] == name) {
            Some(r) => Ok(r["used"].as_f64()),
            None => bail!("synthesis report has no {name} row in table.rows"),
        }
    };
    let rows = vec![
        Row {
            resource: "LUT",
            predicted: u.logic as f64,
            synthesized: used("LUT")?,
        },
        Row {
            resource: "FF",
            predicted: ffs as f64,
            synthesized: used("FF")?,
        },
        Row {
            resource: "DSP",
            predicted: u.dsp as f64,
            synthesized: used("DSP")?,
        },
        Row {
            resource: "BRAM",
            predicted: u.ram_blocks as f64,
            synthesized: used("BRAM")?,
        },
    ];
    // predicted / synthesized: 1.0 is exact, below 1 the model underestimates
    let ratio = |r: &Row| r.synthesized.filter(|&s| s > 0.0).map(|s| r.predicted / s);
    if json {
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"resource": r.resource, "predicted": r.predicted,
                       "synthesized": r.synthesized, "ratio": ratio(r)})
            })
            .collect();
        print_json(&json!({
            "spec": spec.name, "board": board.name, "z": z,
            "target": report.as_ref().and_then(|v| v["table"]["target"].as_str().map(String::from)),
            "usage": u, "flip_flops": ffs, "rows": out,
        }));
    } else {
        println!(
            "{} on {} at z = {:?} (cost model{})",
            spec.name,
            board.name,
            z,
            if report.is_some() { " vs yosys" } else { "" }
        );
        println!(
            "{:<6} {:>10} {:>12} {:>16}",
            "", "predicted", "synthesized", "pred/synth"
        );
        for r in &rows {
            println!(
                "{:<6} {:>10} {:>12} {:>16}",
                r.resource,
                r.predicted,
                r.synthesized.map(|s| s.to_string()).unwrap_or("-".into()),
                ratio(r).map(|x| format!("{x:.2}")).unwrap_or("-".into())
            );
        }
    }
    Ok(())
}
