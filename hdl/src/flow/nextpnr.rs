//! nextpnr-ice40 place and route, its timing report, and icepack.

use super::tools::{ICEPACK, NEXTPNR_ICE40};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct PnrResult {
    /// Achieved Fmax of the design clock (the slowest clock domain), MHz.
    pub fmax_mhz: f64,
    pub constraint_mhz: f64,
    /// nextpnr's utilisation after packing: (cell type, used, available).
    pub utilisation: Vec<(String, u64, u64)>,
    pub seconds: f64,
}

/// Place and route `top.json` in `dir` with `top.pcf`, then pack `top.bin`.
pub fn place_route_pack(
    device: &str,
    package: &str,
    dir: &Path,
    mhz: f64,
    seed: u32,
) -> Result<PnrResult> {
    let start = std::time::Instant::now();
    let freq = format!("{mhz}");
    let seed = seed.to_string();
    let args = [
        device,
        "--package",
        package,
        "--json",
        "top.json",
        "--pcf",
        "top.pcf",
        "--asc",
        "top.asc",
        "--freq",
        &freq,
        "--report",
        "report.json",
        "--seed",
        &seed,
        // report the achieved Fmax when the clock is missed: `edgeflow bitstream` then fails
        // with the number and a clock that would meet it
        "--timing-allow-fail",
    ];
    NEXTPNR_ICE40.run(&args, dir, &dir.join("nextpnr.log"))?;
    ICEPACK.run(&["top.asc", "top.bin"], dir, &dir.join("icepack.log"))?;
    let report =
        std::fs::read_to_string(dir.join("report.json")).context("nextpnr wrote no report.json")?;
    let mut r = parse_report(&report)?;
    r.seconds = start.elapsed().as_secs_f64();
    Ok(r)
}

pub fn parse_report(json: &str) -> Result<PnrResult> {
    let v: serde_json::Value = serde_json::from_str(json).context("nextpnr report is not JSON")?;
    let Some(fmax) = v.get("fmax").and_then(|f| f.as_object()) else {
        bail!("nextpnr report has no fmax")
    };
    let mut worst: Option<(f64, f64)> = None;
    for clk in fmax.values() {
        let a = clk.get("achieved").and_then(|x| x.as_f64()).unwrap_or(0.0);
        let c = clk
            .get("constraint")
            .and_then(|x| x.as_f64())
            .unwrap_or(0.0);
        if worst.map_or(true, |(w, _)| a < w) {
            worst = Some((a, c));
        }
    }
    let Some((fmax_mhz, constraint_mhz)) = worst else {
        bail!("nextpnr report has no clock in fmax")
    };
    let mut utilisation = vec![];
    if let Some(u) = v.get("utilization").and_then(|u| u.as_object()) {
        for (k, x) in u {
            let used = x.get("used").and_then(|n| n.as_u64()).unwrap_or(0);
            let avail = x.get("available").and_then(|n| n.as_u64()).unwrap_or(0);
            utilisation.push((k.clone(), used, avail));
        }
    }
    Ok(PnrResult {
        fmax_mhz,
        constraint_mhz,
        utilisation,
        seconds: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_gives_the_slowest_clock() {
        let j = r#"{"fmax":{"a":{"achieved":48.5,"constraint":30.0},"b":{"achieved":70.1,"constraint":30.0}},
                   "utilization":{"ICESTORM_LC":{"available":5280,"used":321}}}"#;
        let r = parse_report(j).unwrap();
        assert_eq!((r.fmax_mhz, r.constraint_mhz), (48.5, 30.0));
        assert_eq!(r.utilisation, vec![("ICESTORM_LC".to_string(), 321, 5280)]);
        assert!(parse_report(r#"{"fmax":{}}"#).is_err());
    }
}
