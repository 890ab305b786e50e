//! Checks of the FPGA flow's inputs and outputs in the project's words: the clock a board
//! can make, and what ran out when place and route could not place a design.

use anyhow::{bail, Result};
use edgeflow_hdl::boards::BoardInfo;

/// `--freq` (default: the board's clock), refused above the fastest clock the board's PLL or
/// MMCM can make: the clock generator would silently settle for less.
pub fn clock_mhz(b: &BoardInfo, freq: Option<f64>) -> Result<f64> {
    let Some(f) = freq else {
        return Ok(b.default_mhz);
    };
    let max = if b.target.starts_with("ice40") {
        edgeflow_hdl::board_top::fastest_clock_at_most(b, f64::MAX)
    } else if b.target == "xc7a100t" {
        edgeflow_hdl::ice40_pll::mmcm_params(b.osc_mhz, f64::MAX).map(|m| m.3)
    } else {
        None // the board top's own clock plan decides
    };
    if let Some(max) = max.filter(|&m| f > m + 1e-9) {
        bail!(
            "--freq {f}: board {} makes at most {max} MHz (from its {} MHz oscillator); give a clock up to that",
            b.name,
            b.osc_mhz
        );
    }
    Ok(f)
}

/// nextpnr ran out of room ("Unable to place cell ... no BELs remaining"): which cell type,
/// and its use against the part from the utilisation nextpnr printed before placing.
pub fn placement_overflow(log: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains("Unable to place cell"))?;
    let kind = line
        .split("implement cell type '")
        .nth(1)
        .and_then(|t| t.split('\'').next())
        .unwrap_or("logic");
    let usage = log.lines().find_map(|l| {
        let (name, rest) = l.trim_start_matches("Info:").trim().split_once(':')?;
        if name.trim() != kind {
            return None;
        }
        let (used, avail) = rest.split_once('/')?;
        let used: u64 = used.trim().parse().ok()?;
        let avail: u64 = avail.split_whitespace().next()?.parse().ok()?;
        Some((used, avail))
    });
    let what = if kind == "ICESTORM_LC" {
        "logic cells (one LUT4 and one flip-flop each)".to_string()
    } else {
        format!("{kind} cells")
    };
    Some(match usage {
        Some((used, avail)) if used > avail => format!(
            "place and route needs {used} {what}, the part has {avail}: {} over ({:.0}%)",
            used - avail,
            100.0 * used as f64 / avail.max(1) as f64
        ),
        Some((used, avail)) => {
            format!("place and route could not place all {used} {what} in the part's {avail}")
        }
        None => format!("place and route ran out of {what}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_overflowing_cells_and_by_how_much() {
        // the shape of nextpnr-ice40's log when the logic cells run out
        let log = "Info: Device utilisation:\n\
                   Info: \t         ICESTORM_LC:  6425/ 5280   121%\n\
                   Info: \t        ICESTORM_RAM:    11/   30    36%\n\
                   Info: Placed 9 cells based on constraints.\n\
                   ERROR: Unable to place cell 'x_DFFLC', no BELs remaining to implement cell type 'ICESTORM_LC'\n";
        let m = placement_overflow(log).unwrap();
        assert!(
            m.contains("6425 logic cells")
                && m.contains("has 5280")
                && m.contains("1145 over (122%)"),
            "{m}"
        );
        assert!(placement_overflow("Info: Program finished normally.\n").is_none());
    }
}
