//! `edgeflow fit --verify`: the ranked designs through the real flow, best first, until one
//! fits and meets timing. iCE40 and ECP5 boards get what `edgeflow bitstream` runs (yosys,
//! nextpnr, the packer, post-route static timing) in a work directory; XC7 boards have no
//! open place and route, so there it is yosys alone (`edgeflow synth`), with its pre-route
//! Fmax estimate.

use super::bitstream::{place_route, Built};
use super::synth::{synthesize_inner, ECP5_FMAX_KIND, LOGIC_FMAX_KIND, PNR_FMAX_KIND};
use crate::fit_search::Candidate;
use crate::ui;
use anyhow::Result;
use edgeflow_flow::targets::{target, ResourceTable};
use edgeflow_hdl::boards::BoardInfo;
use edgeflow_hdl::design::Inner;
use edgeflow_planner::cost::{flip_flops, Net};
use edgeflow_planner::Board;
use serde::Serialize;

/// The UART rate of the board top built for the check (the bitstream's default).
const BAUD: u32 = 115_200;

/// What the flow said of one design.
#[derive(Debug, Serialize)]
pub struct Attempt {
    pub rank: usize,
    pub z: Vec<usize>,
    pub fits: bool,
    pub timing_met: bool,
    pub fmax_mhz: Option<f64>,
    pub outcome: String,
}

/// One resource: the cost model's prediction next to what the flow used.
#[derive(Debug, Serialize)]
pub struct Row {
    pub resource: String,
    pub kind: String,
    /// None for flip-flops next to a board top: the model counts the network's alone.
    pub predicted: Option<u64>,
    pub used: f64,
    pub available: u64,
}

/// The first design that fits and meets timing, as the flow built it.
#[derive(Debug, Serialize)]
pub struct Verified {
    pub rank: usize,
    pub z: Vec<usize>,
    pub clock_mhz: f64,
    pub fmax_mhz: f64,
    pub fmax_kind: &'static str,
    pub timing_met: bool,
    /// What yosys mapped (with the board top on iCE40 and ECP5, the network alone on XC7).
    pub resources: Vec<Row>,
    /// nextpnr's cells in use after packing (used, available); none on XC7.
    pub placed: Vec<(String, u64, u64)>,
}

#[derive(Debug, Serialize)]
pub struct Verification {
    /// The tools that ran.
    pub flow: &'static str,
    pub tried: usize,
    pub attempts: Vec<Attempt>,
    pub verified: Option<Verified>,
}

/// The model's numbers next to yosys' rows. `board_top`: the table includes the board top
/// (the model's logic does; without it, its `logic_serial_link` comes off, as `edgeflow cost`
/// compares).
fn rows(c: &Candidate, board: &Board, t: &ResourceTable, board_top: bool) -> Vec<Row> {
    let z: Vec<u64> = c.z.iter().map(|&z| z as u64).collect();
    let u = &c.usage;
    // the model's logic is the part's count: logic cells where the table has them (iCE40)
    let cells = t.rows.iter().any(|r| r.resource == "LC");
    t.rows
        .iter()
        .map(|r| Row {
            resource: r.resource.clone(),
            kind: r.kind.clone(),
            predicted: match r.resource.as_str() {
                "LUT" if cells => None,
                "LC" => Some(u.logic),
                "LUT" if board_top => Some(u.logic),
                "LUT" => Some(u.logic.saturating_sub(board.fit.logic_serial_link)),
                "FF" if board_top => None,
                "FF" => Some(flip_flops(&Net::from_spec(&c.spec), board, &z)),
                "DSP" => Some(u.dsp),
                _ => Some(u.ram_blocks),
            },
            used: r.used,
            available: r.available,
        })
        .collect()
}

/// Runs the flow on `cands` in order until one fits and meets timing at `mhz`.
pub fn verify(
    cands: &[Candidate],
    b: &BoardInfo,
    board: &Board,
    mhz: f64,
    seed: u32,
) -> Result<Verification> {
    let xc7 = b.target.starts_with("xc7");
    let flow = match b.target {
        t if t.starts_with("ice40") => "yosys, nextpnr-ice40, icepack, post-route static timing",
        t if t.starts_with("ecp5") => "yosys, nextpnr-ecp5, ecppack, post-route static timing",
        _ => "yosys synthesis only (no open place and route for XC7): resources and a pre-route Fmax estimate",
    };
    let mut v = Verification {
        flow,
        tried: 0,
        attempts: vec![],
        verified: None,
    };
    for c in cands {
        v.tried += 1;
        ui::note(format!(
            "verify {}/{}: z = {:?} ({} clocks per block cycle)",
            v.tried,
            cands.len(),
            c.z,
            c.block_cycle_clocks
        ));
        let inner = Inner::Network(c.spec.clone()).for_board(b);
        let (fits, outcome, verified) = if xc7 {
            let t = target(b.target)?;
            let (r, _) = synthesize_inner(&inner, None, t)?;
            let fits = r.table.overflows().is_empty();
            let fmax = r.timing.as_ref().map_or(0.0, |t| t.fmax_mhz);
            let ok = Verified {
                rank: c.rank,
                z: c.z.clone(),
                clock_mhz: mhz,
                fmax_mhz: fmax,
                fmax_kind: LOGIC_FMAX_KIND,
                timing_met: fmax >= mhz,
                resources: rows(c, board, &r.table, false),
                placed: vec![],
            };
            let over: Vec<String> = r
                .table
                .overflows()
                .iter()
                .map(|o| format!("{} {} of {}", o.resource, o.used, o.available))
                .collect();
            let outcome = if fits {
                String::new()
            } else {
                format!("does not fit: yosys maps {}", over.join(", "))
            };
            (fits, outcome, Some(ok))
        } else {
            match place_route(&inner, b, mhz, BAUD, &[seed])? {
                Built::TooBig { message, .. } => (false, message, None),
                Built::Routed(r) => {
                    let ecp5 = b.target.starts_with("ecp5");
                    let ok = Verified {
                        rank: c.rank,
                        z: c.z.clone(),
                        clock_mhz: r.top.mhz,
                        fmax_mhz: r.pnr.timing.fmax_mhz,
                        fmax_kind: if ecp5 { ECP5_FMAX_KIND } else { PNR_FMAX_KIND },
                        timing_met: r.pnr.timing.fmax_mhz >= r.top.mhz,
                        // with the logic cells nextpnr placed (iCE40)
                        resources: rows(
                            c,
                            board,
                            &r.synth.table.clone().with_packed_cells(&r.pnr.utilisation),
                            true,
                        ),
                        placed: r
                            .pnr
                            .utilisation
                            .iter()
                            .filter(|x| x.1 > 0)
                            .cloned()
                            .collect(),
                    };
                    (true, String::new(), Some(ok))
                }
            }
        };
        let met = verified.as_ref().is_some_and(|x| x.timing_met);
        let fmax = verified.as_ref().map(|x| x.fmax_mhz);
        let outcome = match (fits, met, fmax) {
            (false, ..) => outcome,
            (true, true, Some(f)) => format!("fits, Fmax {f:.2} MHz: timing met"),
            (true, _, f) => format!(
                "fits, timing NOT met: Fmax {:.2} MHz < {mhz:.2} MHz",
                f.unwrap_or(0.0)
            ),
        };
        ui::note(format!("  {outcome}"));
        v.attempts.push(Attempt {
            rank: c.rank,
            z: c.z.clone(),
            fits,
            timing_met: met,
            fmax_mhz: fmax,
            outcome,
        });
        if fits && met {
            v.verified = verified;
            break;
        }
    }
    Ok(v)
}
