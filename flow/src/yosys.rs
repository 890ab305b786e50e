//! yosys synthesis to a target's cells and the resource table from `stat -json`.

use super::targets::{ResourceTable, Target};
use super::tools::YOSYS;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct SynthResult {
    pub table: ResourceTable,
    /// The synthesized netlist (for nextpnr), when asked for.
    pub netlist: Option<PathBuf>,
    pub seconds: f64,
    /// Multipliers in the design after width reduction.
    pub multipliers: usize,
    /// Multipliers built from LUTs because the part has fewer DSPs than the design has
    /// multipliers (the DSP budget).
    pub multipliers_in_luts: usize,
    /// yosys `sta` on the mapped netlist (Xilinx targets): a pre-route, logic-only estimate.
    pub timing: Option<LogicTiming>,
}

/// What yosys' static timing analysis (`sta`) says about the mapped netlist, with the cell
/// delays of yosys' Xilinx 7-series models (`+/xilinx/cells_sim.v` specify blocks) and no
/// routing: the clock the logic alone would allow. Routing typically adds as much again on
/// a 7-series part, so the real Fmax (Vivado, after place and route) is lower.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LogicTiming {
    /// Latest arrival at any endpoint, from the clock pin through the clock buffer, the
    /// launching register and the logic (ns).
    pub logic_delay_ns: f64,
    /// Registers clocked on the falling edge (memories read at the falling edge): paths
    /// into or out of them have half a clock.
    pub falling_edge_registers: u64,
    /// The estimate: `1 / delay`, or `1 / (2·delay)` when falling-edge registers exist (the
    /// worst path is then assumed to have half a clock, which is exact when it starts or
    /// ends at one and conservative otherwise).
    pub fmax_mhz: f64,
    /// `1 / delay`: every path given a whole clock.
    pub full_cycle_mhz: f64,
    /// The worst path, endpoint first: `arrival_ps cell_type.pins`.
    pub critical_path: Vec<String>,
}

/// Read `sta`'s report: the latest arrival (ps) and the cells of its path.
pub fn parse_sta(text: &str, falling_edge_registers: u64) -> Result<LogicTiming> {
    let mut lines = text.lines();
    let ps: f64 = lines
        .by_ref()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("Latest arrival time in ")
                .and_then(|r| r.rsplit(" is ").next())
                .and_then(|n| n.trim_end_matches(':').trim().parse().ok())
        })
        .context("yosys sta printed no 'Latest arrival time'")?;
    if !(ps > 0.0) {
        bail!("yosys sta reports a latest arrival of {ps} ps: no timed path");
    }
    let mut path = vec![];
    for l in lines {
        let t = l.trim();
        if t.starts_with("Arrival histogram") {
            break;
        }
        // "  4078 name (FDRE.D)": an arrival, a cell, its type and pins
        let mut w = t.split_whitespace();
        if let (Some(a), Some(last)) = (w.next(), t.rsplit(' ').next()) {
            if a.parse::<f64>().is_ok() && last.starts_with('(') && last.ends_with(')') {
                path.push(format!(
                    "{a} {}",
                    last.trim_matches(|c| c == '(' || c == ')')
                ));
            }
        }
    }
    let ns = ps / 1000.0;
    let full = 1000.0 / ns;
    Ok(LogicTiming {
        logic_delay_ns: ns,
        falling_edge_registers,
        fmax_mhz: if falling_edge_registers > 0 {
            full / 2.0
        } else {
            full
        },
        full_cycle_mhz: full,
        critical_path: path,
    })
}

/// The flattened, width-reduced design the multiplier listing writes for the synthesis.
const PREPARED: &str = "prepared.il";

const PREPARE: &str = "hierarchy -top top\nproc\nflatten\nopt -fast\nwreduce\nopt_clean\n";

/// Synthesize `verilog` (a file in `dir`, top module `top`) for `target`. When the design has
/// more multipliers than the part has DSPs, some are built from LUTs (see
/// [`lut_multipliers`]), so it still maps when its logic fits; yosys alone would overflow
/// the DSPs.
pub fn synthesize(
    target: &Target,
    dir: &Path,
    verilog: &str,
    netlist: bool,
) -> Result<SynthResult> {
    synthesize_within(target, None, dir, verilog, netlist)
}

/// [`synthesize`] with at most `budget` multipliers in DSP cells (a spec's
/// `dsp_multipliers`; `None`: the part's), the rest built from LUTs as when the part has too
/// few.
pub fn synthesize_within(
    target: &Target,
    budget: Option<usize>,
    dir: &Path,
    verilog: &str,
    netlist: bool,
) -> Result<SynthResult> {
    let start = std::time::Instant::now();
    let dsps = budget.map_or(target.dsps as usize, |b| b.min(target.dsps as usize));
    let muls = if target.dsps > 0 {
        list_multipliers(dir, verilog)?
    } else {
        vec![]
    };
    let in_luts = lut_multipliers(&muls, dsps);
    let mut script = format!("read_verilog -sv {verilog}\n");
    if !in_luts.is_empty() {
        // the design as the multiplier listing left it: parsing and flattening a large
        // network again would double the run time
        script = format!("read_rtlil {PREPARED}\n");
        script += "techmap -map +/techmap.v";
        for name in &in_luts {
            script += &format!(" {name}");
        }
        script += "\n";
    }
    if target.synth.starts_with("synth_xilinx") {
        // The weight banks (32 rows each for dey-mnist) would go to distributed RAM plus a
        // read register, LUTs the LUT multipliers need; block RAM is otherwise unused.
        script += "setattr -set ram_style \"block\" m:*wmem*\nsetattr -set ram_style \"block\" *wmem/m:*\n";
    }
    script += target.synth;
    if netlist {
        script += " -json top.json";
    }
    script += "\ntee -q -o stat.json stat -json\n";
    let xilinx = target.synth.starts_with("synth_xilinx");
    if xilinx {
        // the cells' timing arcs: synth_xilinx reads them at its start, but MUXF7/8 and
        // CARRY4 lose theirs by the end
        script += "read_verilog -lib -specify +/xilinx/cells_sim.v\ntee -q -o sta.txt sta\n";
    }
    let ys = dir.join("synth.ys");
    std::fs::write(&ys, &script).with_context(|| format!("cannot write {}", ys.display()))?;
    YOSYS.run(&["-q", "-s", "synth.ys"], dir, &dir.join("yosys.log"))?;
    let stat =
        std::fs::read_to_string(dir.join("stat.json")).context("yosys wrote no stat.json")?;
    let cells = parse_stat_cells(&stat)?;
    let timing = if xilinx {
        let falling: u64 = cells
            .iter()
            .filter(|(k, _)| k.starts_with("FD") && k.ends_with("_1"))
            .map(|(_, n)| n)
            .sum();
        let sta = std::fs::read_to_string(dir.join("sta.txt")).context("yosys wrote no sta.txt")?;
        Some(parse_sta(&sta, falling)?)
    } else {
        None
    };
    Ok(SynthResult {
        timing,
        table: ResourceTable::from_cells(target, &cells),
        netlist: netlist.then(|| dir.join("top.json")),
        seconds: start.elapsed().as_secs_f64(),
        multipliers: muls.len(),
        multipliers_in_luts: in_luts.len(),
    })
}

/// The multipliers to build from LUTs when `muls` (narrowest first) exceed `dsps`. Products
/// narrower than the datapath's (address arithmetic, constant factors) go first: they cost
/// the fewest LUTs and the datapath keeps its DSPs. If that is not enough, full-width
/// weight-update (UP) multipliers go, as the published design (Dey et al.) keeps FF and BP
/// in DSP48s and UP elsewhere, but only as many as the DSPs lack: a DSP the FF and BP leave
/// free still takes an UP product (about 250 LUTs each for a 10-bit format in yosys' LUT
/// mapping); then the rest while still over budget.
fn lut_multipliers(muls: &[(String, u64)], dsps: usize) -> Vec<String> {
    if muls.len() <= dsps {
        return vec![];
    }
    let excess = muls.len() - dsps;
    let widest = muls.iter().map(|m| m.1).max().unwrap_or(0);
    let is_up = |n: &str| n.contains("\\up.") || n.contains("$up/");
    let narrow: Vec<String> = muls
        .iter()
        .filter(|m| m.1 < widest)
        .map(|m| m.0.clone())
        .collect();
    if narrow.len() >= excess {
        return narrow.into_iter().take(excess).collect();
    }
    let mut out = narrow;
    let up = excess - out.len();
    out.extend(
        muls.iter()
            .filter(|m| m.1 == widest && is_up(&m.0))
            .take(up)
            .map(|m| m.0.clone()),
    );
    let more = excess.saturating_sub(out.len());
    out.extend(
        muls.iter()
            .filter(|m| m.1 == widest && !is_up(&m.0))
            .take(more)
            .map(|m| m.0.clone()),
    );
    out
}

/// The design's `$mul` cells after width reduction, narrowest first: (selection, A+B width).
fn list_multipliers(dir: &Path, verilog: &str) -> Result<Vec<(String, u64)>> {
    let script = format!(
        "read_verilog -sv {verilog}\n{PREPARE}write_json muls-cells.json\nwrite_rtlil {PREPARED}\n"
    );
    std::fs::write(dir.join("muls.ys"), script)?;
    YOSYS.run(&["-q", "-s", "muls.ys"], dir, &dir.join("yosys-muls.log"))?;
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("muls-cells.json"))?)
            .context("yosys write_json output is not JSON")?;
    let mut out = vec![];
    if let Some(mods) = j.get("modules").and_then(|m| m.as_object()) {
        for (mname, m) in mods {
            for (cname, c) in m
                .get("cells")
                .and_then(|c| c.as_object())
                .into_iter()
                .flatten()
            {
                if c.get("type").and_then(|t| t.as_str()) != Some("$mul") {
                    continue;
                }
                let p = |k: &str| {
                    c.get("parameters")
                        .and_then(|p| p.get(k))
                        .and_then(|v| v.as_str())
                        .and_then(|b| u64::from_str_radix(b, 2).ok())
                };
                let w = p("A_WIDTH").unwrap_or(0) + p("B_WIDTH").unwrap_or(0);
                out.push((format!("{mname}/{cname}"), w));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// The combinational loops of `verilog` (a file in `dir`, top module `top`), bit by bit:
/// yosys `check` on the flattened design, one line per loop it reports. Verilator orders
/// whole always blocks, and rust-hdl writes a module's update as one, so Verilator's
/// `UNOPTFLAT` also names paths that only pass through a block without a bit depending on
/// itself; this is the check that tells the two apart.
pub fn combinational_loops(dir: &Path, verilog: &str) -> Result<Vec<String>> {
    let script = format!("read_verilog -sv {verilog}\nhierarchy -top top\nproc\nflatten\ncheck\n");
    std::fs::write(dir.join("loops.ys"), script)?;
    let log = YOSYS.run(&["-s", "loops.ys"], dir, &dir.join("loops.log"))?;
    Ok(loop_lines(&log))
}

fn loop_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("found logic loop"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Cell counts of the whole design from yosys `stat -json` (the `design` summary when there
/// are several modules, else the only module).
pub fn parse_stat_cells(json: &str) -> Result<BTreeMap<String, u64>> {
    let v: serde_json::Value =
        serde_json::from_str(json).context("yosys stat -json output is not JSON")?;
    let by_type = v
        .get("design")
        .and_then(|d| d.get("num_cells_by_type"))
        .or_else(|| {
            let mods = v.get("modules")?.as_object()?;
            (mods.len() == 1)
                .then(|| mods.values().next()?.get("num_cells_by_type"))
                .flatten()
        });
    let Some(by_type) = by_type.and_then(|b| b.as_object()) else {
        bail!("yosys stat -json has no num_cells_by_type");
    };
    Ok(by_type
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_products_then_update_multipliers_go_to_luts() {
        let m = |n: &str, w| (n.to_string(), w);
        let muls = vec![
            m("top/$flatten\\j$0.\\seq.$mul$9", 8),
            m("top/$flatten\\j$0.\\ff.$mul$1", 20),
            m("top/$flatten\\j$0.\\bp.$mul$2", 20),
            m("top/$flatten\\j$0.\\up.$mul$3", 20),
            m("top/$flatten\\j$0.\\up.$mul$5", 20),
            m("top/$flatten\\j$0.\\ff.$mul$4", 20),
        ];
        assert!(lut_multipliers(&muls, 6).is_empty());
        // the narrow product alone covers one missing DSP: the datapath keeps its DSPs
        assert_eq!(lut_multipliers(&muls, 5), vec![muls[0].0.clone()]);
        // two missing: the narrow one, then one UP multiplier (the other keeps its DSP)
        assert_eq!(
            lut_multipliers(&muls, 4),
            vec![muls[0].0.clone(), muls[3].0.clone()]
        );
        // three missing: the narrow one and both UP multipliers
        let three = vec![muls[0].0.clone(), muls[3].0.clone(), muls[4].0.clone()];
        assert_eq!(lut_multipliers(&muls, 3), three);
        // four missing: then an FF/BP multiplier as well
        assert_eq!(lut_multipliers(&muls, 2).len(), 4);
        assert_eq!(lut_multipliers(&muls, 2)[..3], three[..]);
    }

    #[test]
    fn sta_report_is_read() {
        let txt = "4. Executing STA pass (static timing analysis).\nLatest arrival time in 'top' is 4000:\n    4000 $x (FDRE.D)\n           $y [3]\n    3102 $abc$1 (LUT2.I0->O)\n     399 $ff$2 (FDRE.C->Q)\n       0   \\clk (<primary input>)\n\nArrival histogram:\n 3000 ****\n";
        let t = parse_sta(txt, 0).unwrap();
        assert_eq!(t.logic_delay_ns, 4.0);
        assert_eq!(t.fmax_mhz, 250.0);
        assert_eq!(
            t.critical_path,
            ["4000 FDRE.D", "3102 LUT2.I0->O", "399 FDRE.C->Q"]
        );
        // falling-edge registers: half a clock for the worst path
        assert_eq!(parse_sta(txt, 3).unwrap().fmax_mhz, 125.0);
        assert!(parse_sta("nothing", 0).is_err());
    }

    #[test]
    fn stat_json_cells_are_read() {
        let j = r#"{"creator":"Yosys","modules":{"\\top":{"num_cells":3,"num_cells_by_type":{"SB_LUT4":2,"SB_DFF":1}}}}"#;
        let c = parse_stat_cells(j).unwrap();
        assert_eq!(c["SB_LUT4"], 2);
        assert_eq!(c["SB_DFF"], 1);
        assert!(parse_stat_cells("{}").is_err());
    }
}
