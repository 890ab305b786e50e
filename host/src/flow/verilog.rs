//! `edgeflow verilog`: the network's Verilog, or a board top with its pin constraints, linted.

use super::*;
use crate::report::{emit, Format, Written};
use crate::util::write_atomic;
use anyhow::{bail, Result};
use edgeflow_hdl::boards::{board, constraints};
use edgeflow_hdl::design::{board_top_verilog, inner_verilog, Inner};
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

pub struct VerilogArgs {
    pub spec: Option<PathBuf>,
    pub standin: Option<String>,
    pub board: Option<String>,
    pub freq: Option<f64>,
    pub baud: u32,
    pub out: PathBuf,
    /// `auto` or a number (hdl::input_lanes); 1 whenever a board top is written.
    pub input_lanes: String,
    pub json: bool,
}

pub fn verilog_cmd(a: VerilogArgs) -> Result<()> {
    let inner = inner(a.spec.as_deref(), a.standin.as_deref())?;
    // the design as `edgeflow bitstream` builds it for the board
    let inner = match &a.board {
        Some(n) => inner.for_board(board(n)?),
        None => inner,
    };
    let mut lanes = 1;
    let v = match (&inner, &a.board) {
        (Inner::Network(spec), None) => {
            lanes = edgeflow_hdl::input_lanes::parse_lanes(spec, &a.input_lanes)?;
            edgeflow_hdl::verilog_lanes(spec, lanes)
        }
        (Inner::Network(_), Some(b)) if !matches!(a.input_lanes.as_str(), "auto" | "1") => bail!(
            "--input-lanes {}: the --board {b} top talks over a UART, one 16-bit word at a time; leave --input-lanes at auto (1 with a board)",
            a.input_lanes
        ),
        _ => inner_verilog(&inner)?,
    };
    // every file's content is made before the first is written, so a refused clock or baud
    // leaves nothing behind
    let mut outputs = vec![(format!("{}.v", inner.name()), v.clone())];
    let mut report = json!({"design": inner.name(), "input_lanes": lanes});
    if let Some(bname) = &a.board {
        let b = board(bname)?;
        let mhz = crate::flow::check::clock_mhz(b, a.freq)?;
        let top = board_top_verilog(&inner, b, mhz, a.baud)?;
        outputs.push((format!("{}_top.v", b.name), top.verilog));
        let (text, ext) = constraints(b);
        outputs.push((format!("{}.{ext}", b.name), text));
        report["board"] = json!({"name": b.name, "clock_mhz": top.mhz, "uart_clocks_per_bit": top.clocks_per_bit, "baud": a.baud});
    }
    let names: Vec<String> = outputs.iter().map(|o| o.0.clone()).collect();
    check_out_files(a.spec.as_deref(), &a.out, &names)?;
    let mut files = vec![];
    for (name, text) in &outputs {
        let f = a.out.join(name);
        write_atomic(&f, text.as_bytes())?;
        files.push(f.display().to_string());
    }
    report["files"] = json!(files);
    let mut unwaived = 0;
    if edgeflow_flow::tools::VERILATOR.available() {
        let dir = work_dir("lint")?;
        std::fs::write(dir.path().join("top.v"), &v)?;
        let l = lint_report(dir.path(), "top.v", &[])?;
        unwaived = l["unwaived"].as_array().map(|x| x.len()).unwrap_or(0);
        report["lint"] = l;
    } else {
        report["lint"] = json!("verilator not installed (Debian package verilator): lint skipped");
    }
    let mut w = String::new();
    for f in &files {
        writeln!(w, "wrote {f}")?;
    }
    if let Some(l) = report["lint"].as_object() {
        writeln!(w, "verilator --lint-only -Wall: {} warnings", l["warnings"])?;
        for c in l["by_category"].as_array().into_iter().flatten() {
            writeln!(
                w,
                "  {:<14} {:>5}  waived: {}",
                c["category"].as_str().unwrap_or(""),
                c["count"],
                c["reason"].as_str().unwrap_or("")
            )?;
        }
    }
    emit(&Written::new(report, w), Format::json(a.json));
    if unwaived > 0 {
        bail!(
            "verilator lint: {unwaived} warnings outside the documented waivers (see the report)"
        );
    }
    Ok(())
}
