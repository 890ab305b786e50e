//! `edgeflow bitstream --plan P -o DIR`: every stage of a linked plan as its board builds it
//! (hdl/src/board/linked_top.rs: the stage, its links on the board file's `[link.pins]`, the
//! UART host link), through the same flow as one board's bitstream, stage by stage.

use super::bitstream::{
    ice40_device, outputs, place_route, seeds_text, write_outputs, Built, Routed,
};
use super::synth::fmax_note;
use crate::report::{emit, Format, Written};
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_hdl::boards::board;
use edgeflow_hdl::design::Inner;
use edgeflow_hdl::link::linked_stage::{link_fifo_bits, LINK_TIMEOUT_CLOCKS};
use edgeflow_hdl::linked_top::{link_port_pins, LinkedDesign};
use edgeflow_planner::report::PlanFile;
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// A plan's stages as the designs their boards build, checked before anything is built:
/// every board has link pins, a middle board has two sides, the link FIFO is large enough.
pub fn linked_designs(p: &PlanFile, name: &str) -> Result<Vec<(String, LinkedDesign)>> {
    let l = crate::sim_linked::linked_boards(p, name)?;
    let delays: Vec<usize> = p.link_delay.iter().map(|&d| d as usize).collect();
    let sched = edgeflow_reference::Schedule::with_links(&delays);
    let fifo_bits = link_fifo_bits(&p.spec, &delays).ok_or_else(|| {
        anyhow!("plan {name}: a link carries more than 4096 words in flight; the link FIFO holds at most that")
    })?;
    let mut out = vec![];
    for (i, ((board_name, j, _), &(rr, deep))) in l.boards.iter().zip(&l.builds).enumerate() {
        let b = board(board_name)?;
        let mut spec = p.spec.clone();
        spec.registered_reads |= rr;
        spec.deep_pipeline |= deep;
        let d = LinkedDesign {
            spec,
            stage: i,
            range: (j[0] - 1, j[1] - 1),
            ff: sched.ff.clone(),
            bp: sched.bp.clone(),
            width: l.width as usize,
            fifo_bits,
            timeout: LINK_TIMEOUT_CLOCKS,
        };
        link_port_pins(b, d.has_prev(), d.has_next())
            .map_err(|e| anyhow!("plan {name}: stage {}: {e}", i + 1))?;
        if !b.target.starts_with("ice40") && !b.target.starts_with("ecp5") {
            bail!(
                "plan {name}: stage {} is on {}, which needs Vivado for a bitstream",
                i + 1,
                b.name
            );
        }
        out.push((board_name.clone(), d));
    }
    Ok(out)
}

/// The file stem of stage `stage` (0-based) of a plan of `spec` on `board`: what
/// `bitstream --plan` writes and `deploy --plan` loads.
pub fn stage_stem(spec: &str, stage: usize, board: &str) -> String {
    format!("{spec}-stage{}-{board}", stage + 1)
}

/// The bitstream's extension on a board: icepack's `.bin`, ecppack's `.bit`.
pub fn bit_ext(b: &edgeflow_hdl::boards::BoardInfo) -> &'static str {
    if b.target.starts_with("ecp5") {
        "bit"
    } else {
        "bin"
    }
}

/// `freq`: every stage's clock instead of its board's planned one (the plan's figures
/// then scale with it).
pub fn bitstream_plan_cmd(
    plan: &Path,
    out: &Path,
    freq: Option<f64>,
    baud: u32,
    seeds: &[u32],
    json: bool,
) -> Result<()> {
    let text = std::fs::read_to_string(plan)
        .with_context(|| format!("plan {}: cannot be read", plan.display()))?;
    let name = plan.display().to_string();
    let p = PlanFile::from_json(&text, &name)?;
    let designs = linked_designs(&p, &name)?;
    let mut files = vec![];
    for (board_name, d) in &designs {
        let b = board(board_name)?;
        let stem = stage_stem(&d.spec.name, d.stage, b.name);
        files.extend(outputs(&stem, b).into_iter().map(|o| o.1));
    }
    crate::paths::Paths::new()
        .input("--plan", Some(plan))
        .out_dir("--out", out, &files)
        .check()?;
    let mut stages = vec![];
    let mut text = String::new();
    let mut failures = vec![];
    for (board_name, d) in designs {
        let b = board(&board_name)?;
        let mhz = freq.unwrap_or(p.boards[p.stages[d.stage].board_index].clock_mhz);
        let inner = Inner::Linked(Box::new(d.clone()));
        let stem = stage_stem(&d.spec.name, d.stage, b.name);
        let ecp5 = b.target.starts_with("ecp5");
        let Routed {
            dir,
            top,
            synth: s,
            pnr,
            seeds: tried,
        } = match place_route(&inner, b, mhz, baud, seeds)? {
            Built::Routed(r) => r,
            Built::TooBig { message, .. } => {
                writeln!(text, "stage {} on {}: {message}", d.stage + 1, b.name)?;
                failures.push(format!("stage {} does not fit {}", d.stage + 1, b.name));
                stages.push(json!({"stage": d.stage + 1, "board": b.name, "fits": false, "message": message}));
                continue;
            }
        };
        let outputs = outputs(&stem, b);
        write_outputs(&dir, out, &outputs)?;
        let met = pnr.timing.fmax_mhz >= top.mhz;
        if !met {
            failures.push(format!(
                "stage {} on {}: Fmax {:.2} MHz < {:.2} MHz",
                d.stage + 1,
                b.name,
                pnr.timing.fmax_mhz,
                top.mhz
            ));
        }
        let cycle = d.block_cycle_clocks();
        let bin = out.join(&outputs[0].1);
        writeln!(
            text,
            "stage {} on {} (junctions {}-{}): {}\n  clock {:.2} MHz, Fmax {:.2} MHz ({}): {}; {}; block cycle {cycle} clocks",
            d.stage + 1,
            b.name,
            d.range.0 + 1,
            d.range.1 + 1,
            bin.display(),
            top.mhz,
            pnr.timing.fmax_mhz,
            if met { "met" } else { "NOT met" },
            fmax_note(&pnr),
            seeds_text(&tried)
        )?;
        write!(text, "{}", s.table.to_text())?;
        stages.push(json!({
            "stage": d.stage + 1, "board": b.name, "junctions": [d.range.0 + 1, d.range.1 + 1],
            "fits": true, "bitstream": bin.display().to_string(),
            "clock_mhz": top.mhz, "fmax_mhz": pnr.timing.fmax_mhz, "timing_met": met,
            "critical_path": pnr.timing.critical_path,
            "seed": tried.last().map(|t| t.seed), "seeds_tried": tried,
            "block_cycle_clocks": cycle, "resources": s.table, "nextpnr_utilisation": pnr.utilisation,
            "link": {"width": d.width, "fifo_words": 1usize << d.fifo_bits,
                     "previous": d.has_prev(), "next": d.has_next()},
            "device": if ecp5 { b.target.to_string() } else { ice40_device(b) },
        }));
    }
    let report = json!({
        "plan": name, "spec": p.spec.name, "baud": baud,
        "all_built": failures.is_empty(), "stages": stages,
    });
    emit(&Written::new(report, text), Format::json(json));
    if !failures.is_empty() {
        bail!("not every stage was built: {}", failures.join("; "));
    }
    Ok(())
}
