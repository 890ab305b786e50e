//! `edgeflow synth`: yosys for a target, resources used against the part's.

use super::*;
use crate::report::{emit, Format, Written};
use anyhow::{bail, Result};
use edgeflow_flow::targets::{target, Target};
use edgeflow_flow::yosys::SynthResult;
use edgeflow_flow::{nextpnr, yosys};
use edgeflow_hdl::boards::BoardInfo;
use edgeflow_hdl::design::{inner_verilog, Inner};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How a synthesis-only Fmax is to be read (no open place and route for Xilinx).
pub const LOGIC_FMAX_KIND: &str =
    "pre-route estimate: yosys sta, 7-series cell delays, no routing (Vivado's post-route Fmax is lower)";

/// How `edgeflow bitstream`'s Fmax is to be read.
pub const PNR_FMAX_KIND: &str =
    "post-route static timing over nextpnr's SDF with the SB_MAC16 multiplies (icestorm's arcs)";

/// How `edgeflow bitstream`'s Fmax is to be read on an ECP5.
pub const ECP5_FMAX_KIND: &str =
    "post-route static timing over nextpnr-ecp5's SDF, the MULT18X18D multiplies timed (nextpnr-ecp5's arcs, as in its own Fmax)";

/// What the honest Fmax adds to nextpnr's own, for the human output.
pub(super) fn fmax_note(p: &nextpnr::PnrResult) -> String {
    if nextpnr::agrees(p.timing.fmax_mhz, p.nextpnr_fmax_mhz) {
        return format!(
            "static timing over nextpnr's routing, which agrees with nextpnr's {:.2} MHz",
            p.nextpnr_fmax_mhz
        );
    }
    format!(
        "static timing with the MAC16 multiplies; nextpnr alone says {:.2} MHz because it times \
         MAC16 ports as registers",
        p.nextpnr_fmax_mhz
    )
}

/// A target name fit for a file name.
pub(super) fn t_name(t: &str) -> &str {
    if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        t
    } else {
        "target"
    }
}

pub fn synth_cmd(
    spec: Option<&Path>,
    standin: Option<&str>,
    tname: Option<&str>,
    board_name: Option<&str>,
    json: bool,
    plot: &[PathBuf],
) -> Result<()> {
    let mut inner = inner(spec, standin)?;
    let board = board_name.map(edgeflow_hdl::boards::board).transpose()?;
    let tname = match (board, tname) {
        (Some(b), _) => b.target,
        (None, Some(t)) => t,
        (None, None) => bail!("give --target TARGET (the network alone) or --board BOARD"),
    };
    let t = target(tname)?;
    if let Some(b) = board {
        // the board top as `edgeflow bitstream` builds it
        inner = inner.for_board(b);
    }
    let (r, v) = synthesize_inner(&inner, board, t)?;
    for p in plot {
        let rows: Vec<(String, f64, f64, f64)> = r
            .table
            .rows
            .iter()
            .map(|x| {
                (
                    format!("{} ({})", x.resource, x.kind),
                    x.percent,
                    x.used,
                    x.available as f64,
                )
            })
            .collect();
        let title = format!(
            "{} on {} ({}): resources used",
            inner.name(),
            r.table.target,
            r.table.part
        );
        crate::chart::resource_chart(p, &title, &rows)?;
    }
    let mut report = json!({"design": inner.name(), "board": board.map(|b| b.name),
    // which Verilog these counts are of: calibration runs are checked against today's
    "verilog_key": crate::report_cache::key(&v), "table": r.table, "seconds": r.seconds,
    "fits": r.table.overflows().is_empty(), "multipliers": r.multipliers,
    "multipliers_in_luts": r.multipliers_in_luts});
    if let Some(t) = &r.timing {
        // top level, so `edgeflow bench --synth-report` finds it
        report["fmax_mhz"] = json!(t.fmax_mhz);
        report["fmax_kind"] = json!(LOGIC_FMAX_KIND);
        report["timing"] = json!(t);
        if let (Inner::Network(_), None) = (&inner, board) {
            crate::report_cache::store(&inner.name(), t_name(tname), &v, &report);
        }
    }
    let mut w = String::new();
    writeln!(
        w,
        "{} on {} (yosys {}, {:.1} s)",
        inner.name(),
        t.name,
        t.synth,
        r.seconds
    )?;
    write!(w, "{}", r.table.to_text())?;
    if let Some(t) = &r.timing {
        writeln!(
            w,
            "Fmax {:.1} MHz: {LOGIC_FMAX_KIND}; logic delay {:.2} ns{}",
            t.fmax_mhz,
            t.logic_delay_ns,
            if t.falling_edge_registers > 0 {
                format!(
                    ", halved for the {} falling-edge registers ({:.1} MHz with a whole clock on every path)",
                    t.falling_edge_registers, t.full_cycle_mhz
                )
            } else {
                String::new()
            }
        )?;
    }
    if r.multipliers_in_luts > 0 {
        writeln!(
            w,
            "{} of {} multipliers built from LUTs (the DSPs run out; weight-update ones first)",
            r.multipliers_in_luts, r.multipliers
        )?;
    }
    emit(&Written::new(report, w), Format::json(json));
    crate::flow::check::check_fit(&inner, board, &r.table)
}

/// yosys for target `t` on the design alone, or inside `board`'s board top at the board's
/// own clock; on the iCE40 also nextpnr's packer, for the logic cells. The result and the
/// Verilog.
pub(super) fn synthesize_inner(
    inner: &Inner,
    board: Option<&BoardInfo>,
    t: &Target,
) -> Result<(SynthResult, String)> {
    let v = match board {
        Some(b) => {
            edgeflow_hdl::design::board_top_verilog(inner, b, b.default_mhz, 115_200)?.verilog
        }
        None => inner_verilog(inner)?,
    };
    let dir = work_dir("synth")?;
    std::fs::write(dir.path().join("top.v"), &v)?;
    let pb = spinner(&format!("yosys {} on {}", t.synth, inner.name()));
    let pack = edgeflow_flow::targets::ice40_pack(t);
    let r = yosys::synthesize_within(
        t,
        inner.dsp_multipliers(),
        dir.path(),
        "top.v",
        pack.is_some(),
    );
    pb.finish_and_clear();
    let mut r = match r {
        Ok(r) => r,
        Err(e) => return Err(keep_logs(e, dir)),
    };
    if let Some((device, package)) = pack {
        // the iCE40's limit is its logic cells, which only nextpnr's packer counts; a board
        // top's pins are constrained (its PLL must sit on the clock pin)
        let (device, package, pcf) = match board {
            Some(b) => {
                let pcf = edgeflow_hdl::boards::constraints(b).0;
                std::fs::write(dir.path().join("top.pcf"), pcf)?;
                let device = crate::flow::bitstream::ice40_device(b);
                (device, b.package, Some("top.pcf"))
            }
            None => (device.to_string(), package, None),
        };
        let pb = spinner(&format!("nextpnr-ice40 --pack-only ({})", inner.name()));
        let u = nextpnr::pack_only(&device, package, dir.path(), pcf);
        pb.finish_and_clear();
        match u {
            Ok(u) => r.table = r.table.with_packed_cells(&u),
            Err(e) => return Err(keep_logs(e, dir)),
        }
    }
    Ok((r, v))
}
