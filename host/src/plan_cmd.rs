//! `edgeflow plan`: split a network across boards in a chain (DESIGN.md section 8).

use crate::util::{print_json, write_atomic};
use anyhow::{anyhow, Context, Result};
use edgeflow_core::Spec;
use edgeflow_planner::report::{plan, PlanFile};
use edgeflow_planner::Board;
use std::path::Path;
use std::time::Instant;

pub fn us(ps: u64) -> String {
    let us = ps as f64 * 1e-6;
    if us >= 1000.0 {
        format!("{:.3} ms", us * 1e-3)
    } else {
        format!("{us:.3} µs")
    }
}

pub fn rate(sps: f64) -> String {
    if sps >= 1e6 {
        format!("{:.3} M samples/s", sps * 1e-6)
    } else if sps >= 1e3 {
        format!("{:.2} k samples/s", sps * 1e-3)
    } else {
        format!("{sps:.1} samples/s")
    }
}

fn pct(a: u64, b: u64) -> String {
    format!("{:.0}%", 100.0 * a as f64 / b.max(1) as f64)
}

pub fn plan_cmd(
    spec_path: &Path,
    boards: &str,
    permute: bool,
    json: bool,
    out: Option<&Path>,
) -> Result<()> {
    let spec = Spec::load(spec_path)?;
    let boards = Board::resolve_list(boards).map_err(|e| anyhow!(e))?;
    let t0 = Instant::now();
    let p =
        plan(&spec, &spec_path.display().to_string(), &boards, permute).map_err(|e| anyhow!(e))?;
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(o) = out {
        let text = serde_json::to_string_pretty(&p)?;
        write_atomic(o, text.as_bytes()).with_context(|| format!("writing {}", o.display()))?;
    }
    if json {
        let mut v = serde_json::to_value(&p)?;
        v["planning_seconds"] = seconds.into();
        print_json(&v);
    } else {
        print_text(&p, seconds);
        if let Some(o) = out {
            println!(
                "plan written to {}; train with: edgeflow train --plan {}",
                o.display(),
                o.display()
            );
        }
    }
    Ok(())
}

fn print_text(p: &PlanFile, seconds: f64) {
    println!(
        "{}: {} junctions on {} of {} boards ({}), planned in {:.1} ms",
        p.spec.name,
        p.spec.junctions(),
        p.stages.len(),
        p.boards.len(),
        if p.permute {
            "any order"
        } else {
            "chain order"
        },
        seconds * 1e3
    );
    for (i, s) in p.stages.iter().enumerate() {
        let u = &s.utilisation;
        println!(
            "  board {} {:<14} junctions {}-{}  z = {:?}  block cycle {} clocks = {}",
            s.board_index + 1,
            s.board,
            s.junctions[0],
            s.junctions[1],
            s.z,
            s.block_cycle_clocks,
            us(s.block_cycle_ps)
        );
        println!(
            "      DSP {}/{}{}  logic {}/{} ({})  RAM {}/{} bits ({})  {}/{} blocks ({})",
            u.dsp,
            u.dsp_available,
            if u.lut_multipliers > 0 {
                format!(" + {} LUT multipliers", u.lut_multipliers)
            } else {
                String::new()
            },
            u.logic,
            u.logic_available,
            pct(u.logic, u.logic_available),
            u.ram_bits,
            u.ram_bits_available,
            pct(u.ram_bits, u.ram_bits_available),
            u.ram_blocks,
            u.ram_blocks_available,
            pct(u.ram_blocks, u.ram_blocks_available)
        );
        if let Some(l) = p.links.get(i) {
            println!(
                "  link after junction {} ({} -> {}): transfer {}, latency {}, delay {} block cycles each way",
                l.after_junction,
                l.from_board,
                l.to_board,
                us(l.transfer_ps),
                us(l.latency_ps),
                l.delay_block_cycles
            );
        }
    }
    println!(
        "staleness {:?}  link delays {:?}",
        p.staleness, p.link_delay
    );
    println!(
        "predicted {} (block cycle {}); bottleneck: {}",
        rate(p.figures.samples_per_second),
        us(p.figures.period_ps),
        p.figures.bottleneck
    );
    println!(
        "lower bound: block cycle ≥ {}, at most {} ({}); gap {:.1}%",
        us(p.lower_bound.period_ps),
        rate(p.lower_bound.samples_per_second),
        p.lower_bound.binding,
        p.gap * 100.0
    );
    println!("baselines:");
    for b in &p.baselines {
        let groups: Vec<String> = b
            .groups
            .iter()
            .map(|g| format!("{}-{}", g[0], g[1]))
            .collect();
        match &b.figures {
            Some(f) => println!(
                "  {:<22} [{}]: {} ({:.2}x of plan); bottleneck: {}",
                b.name,
                groups.join(", "),
                rate(f.samples_per_second),
                f.samples_per_second / p.figures.samples_per_second,
                f.bottleneck
            ),
            None => println!("  {:<22} [{}]: does not fit", b.name, groups.join(", ")),
        }
    }
}
