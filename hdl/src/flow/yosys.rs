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
}

/// Synthesize `verilog` (a file in `dir`, top module `top`) for `target`.
pub fn synthesize(
    target: &Target,
    dir: &Path,
    verilog: &str,
    netlist: bool,
) -> Result<SynthResult> {
    let start = std::time::Instant::now();
    let mut script = format!("read_verilog -sv {verilog}\n{}", target.synth);
    if netlist {
        script += " -json top.json";
    }
    script += "\ntee -q -o stat.json stat -json\n";
    let ys = dir.join("synth.ys");
    std::fs::write(&ys, &script).with_context(|| format!("cannot write {}", ys.display()))?;
    YOSYS.run(&["-q", "-s", "synth.ys"], dir, &dir.join("yosys.log"))?;
    let stat =
        std::fs::read_to_string(dir.join("stat.json")).context("yosys wrote no stat.json")?;
    let cells = parse_stat_cells(&stat)?;
    Ok(SynthResult {
        table: ResourceTable::from_cells(target, &cells),
        netlist: netlist.then(|| dir.join("top.json")),
        seconds: start.elapsed().as_secs_f64(),
    })
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
    fn stat_json_cells_are_read() {
        let j = r#"{"creator":"Yosys","modules":{"\\top":{"num_cells":3,"num_cells_by_type":{"SB_LUT4":2,"SB_DFF":1}}}}"#;
        let c = parse_stat_cells(j).unwrap();
        assert_eq!(c["SB_LUT4"], 2);
        assert_eq!(c["SB_DFF"], 1);
        assert!(parse_stat_cells("{}").is_err());
    }
}
