//! Checks of the FPGA flow's inputs and outputs in the project's words: the clock a board
//! can make, what ran out when synthesis or place and route could not fit a design, and
//! what to change.

use anyhow::{bail, Result};
use edgeflow_flow::targets::ResourceTable;
use edgeflow_hdl::boards::BoardInfo;
use edgeflow_hdl::design::Inner;

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

/// Which kind of room a resource is, for what to change when it runs out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Room {
    Logic,
    Memory,
}

/// A cell type nextpnr counts, in the project's words, and the room it is.
fn cell_name(kind: &str) -> (String, Room) {
    let (what, room) = match kind {
        "ICESTORM_LC" => ("logic cells", Room::Logic),
        "TRELLIS_COMB" => ("logic cells", Room::Logic),
        "TRELLIS_FF" => ("flip-flops", Room::Logic),
        "ICESTORM_DSP" | "MULT18X18D" | "ALU54B" => ("DSP multipliers", Room::Logic),
        "ICESTORM_RAM" | "DP16KD" => ("block RAMs", Room::Memory),
        "ICESTORM_SPRAM" => ("single-port RAMs", Room::Memory),
        "TRELLIS_RAMW" => ("distributed RAM cells", Room::Memory),
        "SB_IO" | "TRELLIS_IO" => ("I/O pins", Room::Logic),
        _ => ("cells", Room::Logic),
    };
    (format!("{what} ({kind})"), room)
}

/// nextpnr stopped and its log shows cells over what the part has: each such cell type in
/// the project's words with used, available and the percentage, then what to change. None
/// when the log shows no such overflow (the tool's own words are then the best there is).
pub fn pnr_overflow(log: &str, inner: &Inner, b: &BoardInfo, part: &str) -> Option<String> {
    let over = edgeflow_flow::nextpnr::overflows(log);
    let room = over
        .iter()
        .map(|o| cell_name(&o.0).1)
        .find(|&r| r == Room::Logic)
        .unwrap_or(Room::Memory);
    let needs: Vec<String> = over
        .iter()
        .map(|(kind, used, avail)| {
            format!(
                "{used} {} of the part's {avail} ({:.0}%)",
                cell_name(kind).0,
                100.0 * *used as f64 / (*avail).max(1) as f64
            )
        })
        .collect();
    (!needs.is_empty()).then(|| {
        format!(
            "the design does not fit {} ({part}): place and route needs {}. {}",
            b.name,
            needs.join(" and "),
            suggestion(inner, Some(b), room)
        )
    })
}

/// What to change so the design fits, one or two sentences: the junction to give fewer
/// lanes, registers the spec adds that the board does not ask for, the resident memory,
/// then a smaller network or a larger board.
pub fn suggestion(inner: &Inner, b: Option<&BoardInfo>, room: Room) -> String {
    let (spec, resident) = match inner {
        Inner::Network(s) => (s, false),
        Inner::Resident(s) => (s, true),
        Inner::Linked(_) => {
            return "Plan again with this board's real room (edgeflow plan), or use a larger part."
                .into()
        }
        Inner::Echo => return "Use a larger part.".into(),
    };
    let d = spec.derived();
    let most_edges = d.junctions.iter().max_by_key(|j| j.edges).unwrap();
    if room == Room::Memory {
        return format!(
            "To fit: a smaller network (junction {} holds the most weights, {} edges: reduce its fan-out {} or the layer sizes){}, or a board with more block RAM.",
            most_edges.index,
            most_edges.edges,
            most_edges.fan_out,
            if resident { ", build without --resident" } else { "" }
        );
    }
    let mults = |j: &edgeflow_core::spec::JunctionInfo| {
        j.multipliers_ff + j.multipliers_bp + j.multipliers_up
    };
    // the junction with the most multipliers that still has lanes to give up: the next
    // smaller z that divides its edge count
    let shrinkable = d
        .junctions
        .iter()
        .filter_map(|j| (1..j.z).rev().find(|&z| j.edges % z == 0).map(|z| (j, z)))
        .max_by_key(|(j, _)| mults(j));
    let mut ways = vec![match shrinkable {
        Some((j, z)) => format!(
            "fewer lanes: z = {z} for junction {} (it has the most multipliers, {} of {}, at z = {}; {} clocks per pass instead of {})",
            j.index,
            mults(j),
            d.multipliers,
            j.z,
            j.edges / z,
            j.clocks
        ),
        None => "a smaller network (every junction is at z = 1: fewer or smaller layers, a smaller fan-out)".into(),
    }];
    // registers the spec asks for beyond what the board needs can go
    let forced = |board: fn(&BoardInfo) -> bool| b.map_or(false, board);
    let mut extra = vec![];
    if spec.registered_reads && !forced(|b| b.registered_reads) {
        extra.push("registered_reads");
    }
    if spec.deep_pipeline && !forced(|b| b.deep_pipeline) {
        extra.push("deep_pipeline");
    }
    if !extra.is_empty() {
        ways.push(format!("{} = false in the spec", extra.join(" and ")));
    }
    if resident {
        ways.push(
            "a build without --resident (its data memory and record walker take room)".into(),
        );
    }
    if shrinkable.is_some() {
        ways.push("a smaller network".into());
    }
    ways.push("a board with more logic".into());
    let last = ways.pop().unwrap();
    format!("To fit: {}, or {last}.", ways.join(", "))
}

/// yosys mapped more of a resource than the part has: refused before place and route.
pub fn check_fit(inner: &Inner, b: Option<&BoardInfo>, t: &ResourceTable) -> Result<()> {
    if let Some(r) = t.overflows().first() {
        let room = if r.resource == "BRAM" {
            Room::Memory
        } else {
            Room::Logic
        };
        bail!(
            "the design does not fit {}: {} {} used {} of {} ({:.0}%). {}",
            t.part,
            r.resource,
            r.kind,
            r.used,
            r.available,
            r.percent,
            suggestion(inner, b, room)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(z: [usize; 2]) -> edgeflow_core::Spec {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/tiny.toml");
        let mut s = edgeflow_core::Spec::load(std::path::Path::new(p)).unwrap();
        s.z = z.to_vec();
        s
    }

    #[test]
    fn names_the_overflowing_cells_and_what_to_change() {
        // the shape of nextpnr-ice40's log when the logic cells run out
        let log = "Info: Device utilisation:\n\
                   Info: \t         ICESTORM_LC:  6625/ 5280   125%\n\
                   Info: \t        ICESTORM_RAM:    11/   30    36%\n\
                   \n\
                   ERROR: Unable to place cell 'x_DFFLC', no BELs remaining to implement cell type 'ICESTORM_LC'\n";
        let b = edgeflow_hdl::boards::board("icebreaker").unwrap();
        let net = Inner::Network(tiny([2, 2])).for_board(b);
        let m = pnr_overflow(log, &net, b, "iCE40UP5K-SG48").unwrap();
        assert!(
            m.starts_with("the design does not fit icebreaker (iCE40UP5K-SG48): place and route needs 6625 logic cells (ICESTORM_LC) of the part's 5280 (125%). To fit: fewer lanes: z = 1 for junction "),
            "{m}"
        );
        // the iCEBreaker asks for registered reads and the deep pipeline: not for the user
        assert!(!m.contains("registered_reads"), "{m}");
        assert!(
            m.ends_with("a smaller network, or a board with more logic."),
            "{m}"
        );
        // on a board that does not ask for them, the spec's own extra registers can go
        let cu = edgeflow_hdl::boards::board("alchitry-cu").unwrap();
        let mut s = tiny([1, 1]);
        s.deep_pipeline = true;
        let m = pnr_overflow(log, &Inner::Resident(s).for_board(cu), cu, "x").unwrap();
        assert!(
            m.contains("a smaller network (every junction is at z = 1"),
            "{m}"
        );
        assert!(m.contains("deep_pipeline = false in the spec"), "{m}");
        assert!(m.contains("without --resident"), "{m}");
        // block RAMs over: memory advice
        let ram = log.replace("6625/ 5280   125%", "3000/ 5280    57%");
        let ram = ram.replace("11/   30    36%", "40/   30   133%");
        let ram = ram.replace("'ICESTORM_LC'", "'ICESTORM_RAM'");
        let m = pnr_overflow(&ram, &net, b, "p").unwrap();
        assert!(
            m.contains("needs 40 block RAMs (ICESTORM_RAM) of the part's 30 (133%)")
                && m.contains("holds the most weights")
                && m.contains("more block RAM"),
            "{m}"
        );
        assert!(pnr_overflow("Info: Program finished normally.\n", &net, b, "p").is_none());
    }
}
