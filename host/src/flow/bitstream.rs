//! `edgeflow bitstream`: synthesis, place and route, packing and post-route timing for an
//! iCE40 or ECP5 board.

use super::synth::{fmax_note, ECP5_FMAX_KIND, PNR_FMAX_KIND};
use super::*;
use crate::report::{emit, Format, Written};
use crate::util::write_atomic;
use anyhow::{bail, Result};
use edgeflow_flow::nextpnr::PnrResult;
use edgeflow_flow::targets::target;
use edgeflow_flow::yosys::SynthResult;
use edgeflow_flow::{nextpnr, nextpnr_ecp5, yosys};
use edgeflow_hdl::boards::{board, constraints, BoardInfo};
use edgeflow_hdl::design::{board_top_verilog, BoardTopVerilog, Inner};
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

pub struct BitstreamArgs {
    pub spec: Option<PathBuf>,
    /// The network with the resident data memory (resident.rs).
    pub resident: bool,
    pub standin: Option<String>,
    pub board: String,
    pub out: PathBuf,
    pub freq: Option<f64>,
    pub baud: u32,
    /// nextpnr placement seeds, tried in order until one meets the clock.
    pub seeds: Vec<u32>,
    pub json: bool,
}

/// nextpnr-ice40's device flag of the board's part.
pub(crate) fn ice40_device(b: &BoardInfo) -> String {
    format!("--{}", b.target.trim_start_matches("ice40-"))
}

pub fn bitstream_cmd(a: BitstreamArgs) -> Result<()> {
    let b = board(&a.board)?;
    // with registered reads where the board asks for them (its multipliers are slow)
    let inner = match inner(a.spec.as_deref(), a.standin.as_deref())? {
        Inner::Network(s) if a.resident => Inner::Resident(s),
        i => i,
    }
    .for_board(b);
    let ecp5 = b.target.starts_with("ecp5");
    if !b.target.starts_with("ice40") && !ecp5 {
        bail!("board {} needs Vivado for a bitstream; use `edgeflow vivado --board {}` to export a project", b.name, b.name);
    }
    let name = format!("{}-{}", inner.name(), b.name);
    let outputs = outputs(&name, b);
    let names: Vec<String> = outputs.iter().map(|o| o.1.clone()).collect();
    check_out_files(a.spec.as_deref(), &a.out, &names)?;
    let mhz = crate::flow::check::clock_mhz(b, a.freq)?;
    let Routed {
        dir,
        top,
        synth: s,
        pnr: p,
        seeds: tried,
    } = match place_route(&inner, b, mhz, a.baud, &a.seeds)? {
        Built::Routed(r) => r,
        Built::TooBig { message, log: None } => bail!("{message}"),
        Built::TooBig {
            message,
            log: Some(dir),
        } => {
            let dir = dir.keep();
            bail!(
                "{message}\nnextpnr's log is kept: {} (remove {} when done)",
                dir.join("nextpnr.log").display(),
                dir.display()
            );
        }
    };
    let bin = a.out.join(&outputs[0].1);
    write_outputs(&dir, &a.out, &outputs)?;
    let (cycle, samples_s) = match &inner {
        Inner::Network(spec) | Inner::Resident(spec) => {
            // the clocks this hardware spends per block cycle (the RTL's, not the spec's estimate)
            let c = spec.block_cycle_clocks() as f64;
            (Some(c), Some(top.mhz * 1e6 / c))
        }
        Inner::Linked(d) => {
            let c = d.block_cycle_clocks() as f64;
            (Some(c), Some(top.mhz * 1e6 / c))
        }
        Inner::Echo => (None, None),
    };
    let uart_samples_s = match &inner {
        Inner::Network(spec) => Some(a.baud as f64 / (20.0 * (spec.layers[0] + 1) as f64)),
        // the samples are on the board: the line carries no sample words
        Inner::Resident(_) | Inner::Echo | Inner::Linked(_) => None,
    };
    // the static timing's Fmax, with the multiplies nextpnr leaves out (flow/sta.rs)
    let met = p.timing.fmax_mhz >= top.mhz;
    let warning = p.self_check_warning();
    if let Some(w) = &warning {
        eprintln!("warning: {w}");
    }
    let report = json!({
        "design": inner.name(), "board": b.name, "bitstream": bin.display().to_string(),
        "clock_mhz": top.mhz, "fmax_mhz": p.timing.fmax_mhz,
        "fmax_kind": if ecp5 { ECP5_FMAX_KIND } else { PNR_FMAX_KIND },
        "timing_met": met, "nextpnr_fmax_mhz": p.nextpnr_fmax_mhz,
        "sta_nextpnr_view_mhz": p.sta_nextpnr_view_mhz, "sta_warning": warning,
        "period_ns": p.timing.period_ns, "launch": p.timing.launch, "capture": p.timing.capture,
        "critical_path": p.timing.critical_path,
        "worst_through_multiplier_ns": p.timing.worst_through_multiplier_ns,
        "worst_endpoints": p.timing.worst_endpoints,
        "resources": s.table, "nextpnr_utilisation": p.utilisation,
        "block_cycle_clocks": cycle, "samples_per_s_at_clock": samples_s,
        "clocks_per_sample": cycle, "samples_per_second": samples_s,
        "samples_per_s_uart_bound": uart_samples_s, "baud": a.baud,
        "seed": tried.last().map(|t| t.seed), "seeds_tried": tried,
        "seconds": {"yosys": s.seconds, "nextpnr_icepack": p.seconds},
    });
    let mut w = String::new();
    writeln!(w, "wrote {}", bin.display())?;
    write!(w, "{}", s.table.to_text())?;
    writeln!(
        w,
        "clock {:.2} MHz, Fmax {:.2} MHz ({}): {}; {}",
        top.mhz,
        p.timing.fmax_mhz,
        if met { "met" } else { "NOT met" },
        fmax_note(&p),
        seeds_text(&tried)
    )?;
    if let (Some(first), Some(last)) = (
        p.timing.critical_path.first(),
        p.timing.critical_path.last(),
    ) {
        let half = if p.timing.launch != p.timing.capture {
            ", a half-cycle path: the period is twice its delay"
        } else {
            ""
        };
        writeln!(
            w,
            "critical path ({} → {}{half}): {} → {} at {:.2} ns, period {:.2} ns",
            p.timing.launch, p.timing.capture, first.0, last.0, last.1, p.timing.period_ns
        )?;
    }
    if let (Some(c), Some(sps)) = (cycle, samples_s) {
        writeln!(
            w,
            "training: {c} clocks per sample → {sps:.0} samples/s at {:.2} MHz",
            top.mhz
        )?;
    }
    if let Some(u) = uart_samples_s {
        writeln!(
            w,
            "UART at {} baud carries at most {u:.0} samples/s",
            a.baud
        )?;
    }
    emit(&Written::new(report, w), Format::json(a.json));
    if !met {
        // the fastest clock this board can make at or below Fmax: the oscillator, a PLL
        // output, or either divided in the fabric (below the PLL's 16 MHz)
        let fix = match edgeflow_hdl::board_top::fastest_clock_at_most(b, p.timing.fmax_mhz) {
            Some(f) => format!("try --freq {}", (f * 1000.0).ceil() / 1000.0),
            None => format!(
                "no clock {} can make (its {} MHz oscillator or a PLL output, divided by up to \
                 16) is at or below that: make the design faster or smaller (a smaller z, a \
                 narrower format)",
                b.name, b.osc_mhz
            ),
        };
        bail!(
            "timing not met: Fmax {:.2} MHz < {:.2} MHz clock ({}); {fix}",
            p.timing.fmax_mhz,
            top.mhz,
            fmax_note(&p)
        );
    }
    Ok(())
}

/// The files a bitstream build leaves, as (the work directory's file, the output's name
/// from `stem`): the bitstream first, then the board top's Verilog, its constraints,
/// nextpnr's report and, on the ECP5, the SVF.
pub(super) fn outputs(stem: &str, b: &BoardInfo) -> Vec<(String, String)> {
    let (_, cons) = constraints(b);
    let bit = super::bitstream_plan::bit_ext(b);
    let mut v = vec![
        (format!("top.{bit}"), format!("{stem}.{bit}")),
        ("top.v".into(), format!("{stem}_top.v")),
        (format!("top.{cons}"), format!("{stem}.{cons}")),
        ("report.json".into(), format!("{stem}-nextpnr-report.json")),
    ];
    if b.target.starts_with("ecp5") {
        v.push(("top.svf".into(), format!("{stem}.svf")));
    }
    v
}

/// Copies the build's `outputs` from its work directory into `out`, each atomically.
pub(super) fn write_outputs(
    dir: &tempdir::Dir,
    out: &std::path::Path,
    outputs: &[(String, String)],
) -> Result<()> {
    for (f, to) in outputs {
        write_atomic(&out.join(to), &std::fs::read(dir.path().join(f))?)?;
    }
    Ok(())
}

/// What the real flow made of a design: its work directory (the tools' files), the board
/// top, yosys' resources and the routed design's timing.
pub(super) struct Routed {
    pub dir: tempdir::Dir,
    pub top: BoardTopVerilog,
    pub synth: SynthResult,
    /// The routed design of the last seed tried: the first that met the clock, or the last.
    pub pnr: PnrResult,
    /// Every seed tried, in order, with its Fmax (MHz).
    pub seeds: Vec<SeedTried>,
}

/// "placement seed 4", with the seeds before it that missed the clock.
pub(super) fn seeds_text(tried: &[SeedTried]) -> String {
    let (last, before) = tried.split_last().expect("a routed design has a seed");
    let mut t = format!("placement seed {}", last.seed);
    if !before.is_empty() {
        let missed: Vec<String> = before
            .iter()
            .map(|s| format!("{} at {:.2} MHz", s.seed, s.fmax_mhz))
            .collect();
        t += &format!(" (after {})", missed.join(", "));
    }
    t
}

/// One nextpnr run of a seed sweep.
#[derive(serde::Serialize, Clone, Copy)]
pub(super) struct SeedTried {
    pub seed: u32,
    pub fmax_mhz: f64,
}

/// A design through synthesis and place and route, or the part's room ran out: yosys mapped
/// more than the part has (no log to keep) or nextpnr could not place it (its log in `log`).
pub(super) enum Built {
    Routed(Routed),
    TooBig {
        message: String,
        log: Option<tempdir::Dir>,
    },
}

/// yosys, then nextpnr-ice40 or nextpnr-ecp5 and the packer, in a work directory: the
/// design's board top at `mhz`. The placement seeds are tried in order (one synthesis) until
/// one meets the clock; placement is a search, and a design near its clock meets it with some
/// seeds and not others. A tool that fails for another reason than room is an error, its logs
/// kept.
pub(super) fn place_route(
    inner: &Inner,
    b: &BoardInfo,
    mhz: f64,
    baud: u32,
    seeds: &[u32],
) -> Result<Built> {
    assert!(!seeds.is_empty(), "clap requires at least one seed");
    let ecp5 = b.target.starts_with("ecp5");
    let t = target(b.target)?;
    let (cons, cons_ext) = inner.constraints(b)?;
    let top = board_top_verilog(inner, b, mhz, baud)?;
    let dir = work_dir("bitstream")?;
    std::fs::write(dir.path().join("top.v"), &top.verilog)?;
    std::fs::write(dir.path().join(format!("top.{cons_ext}")), cons)?;
    let pb = spinner(&format!("yosys {} ({})", t.synth, inner.name()));
    let s = yosys::synthesize_within(t, inner.dsp_multipliers(), dir.path(), "top.v", true);
    pb.finish_and_clear();
    let s = match s {
        Ok(s) => s,
        Err(e) => return Err(keep_logs(e, dir)),
    };
    if let Err(e) = crate::flow::check::check_fit(inner, Some(b), &s.table) {
        return Ok(Built::TooBig {
            message: e.to_string(),
            log: None,
        });
    }
    let mut tried = vec![];
    for (i, &seed) in seeds.iter().enumerate() {
        let pb = spinner(&format!(
            "{} at {:.2} MHz, seed {seed}{}, {}, static timing (log: {})",
            if ecp5 {
                "nextpnr-ecp5"
            } else {
                "nextpnr-ice40"
            },
            top.mhz,
            if seeds.len() > 1 {
                format!(" ({} of {})", i + 1, seeds.len())
            } else {
                String::new()
            },
            if ecp5 { "ecppack" } else { "icepack" },
            dir.path().join("nextpnr.log").display()
        ));
        let p = if ecp5 {
            nextpnr_ecp5::place_route_pack(t, b.package, b.speed, dir.path(), top.mhz, seed)
        } else {
            nextpnr::place_route_pack(&ice40_device(b), b.package, dir.path(), top.mhz, seed)
        };
        pb.finish_and_clear();
        let pnr = match p {
            Ok(pnr) => pnr,
            Err(e) => {
                let log =
                    std::fs::read_to_string(dir.path().join("nextpnr.log")).unwrap_or_default();
                return match crate::flow::check::pnr_overflow(&log, inner, b, t.part) {
                    Some(message) => Ok(Built::TooBig {
                        message,
                        log: Some(dir),
                    }),
                    None => Err(keep_logs(e, dir)),
                };
            }
        };
        tried.push(SeedTried {
            seed,
            fmax_mhz: pnr.timing.fmax_mhz,
        });
        if pnr.timing.fmax_mhz >= top.mhz || i + 1 == seeds.len() {
            return Ok(Built::Routed(Routed {
                dir,
                top,
                synth: s,
                pnr,
                seeds: tried,
            }));
        }
    }
    unreachable!("the last seed returns")
}
