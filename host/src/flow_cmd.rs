//! `edgeflow verilog | synth | bitstream | deploy | vivado`: the FPGA flow from the command
//! line. Tool runs land in a work directory; results are printed as tables or `--json`.

use crate::paths::Paths;
use crate::util::{print_json, write_atomic};
use anyhow::{anyhow, bail, Result};
use edgeflow_core::Spec;
use edgeflow_hdl::boards::{board, boards, constraints, xdc, BoardInfo};
use edgeflow_hdl::design::{board_top_verilog, inner_verilog, Inner};
use edgeflow_hdl::flow::targets::target;
use edgeflow_hdl::flow::{nextpnr, nextpnr_ecp5, verilator, yosys};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Which design: the spec's network, or a stand-in named by the hidden `--standin` flag.
pub fn inner(spec: Option<&Path>, standin: Option<&str>) -> Result<Inner> {
    match (standin, spec) {
        (Some("echo"), _) => Ok(Inner::Echo),
        (Some(other), _) => bail!("unknown stand-in '{other}'; available: echo"),
        (None, Some(p)) => Ok(Inner::Network(Spec::load(p).map_err(|e| anyhow!("{e}"))?)),
        (None, None) => bail!("--spec SPEC is required"),
    }
}

/// The files a directory command writes, checked against its spec before any work.
fn check_out_files(spec: Option<&Path>, out: &Path, files: &[String]) -> Result<()> {
    Paths::new()
        .input("--spec", spec)
        .out_dir("--out", out, files)
        .check()
}

pub fn spinner(msg: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

fn work_dir(name: &str) -> Result<tempdir::Dir> {
    tempdir::Dir::new(name)
}

/// A tool run failed: keep its work directory, which holds the logs its message points to.
fn keep_logs(e: anyhow::Error, dir: tempdir::Dir) -> anyhow::Error {
    let p = dir.keep();
    anyhow!(
        "{e:#}\nthe work directory {} is kept with the tools' logs; remove it when done",
        p.display()
    )
}

/// A scratch directory removed on drop (kept when EDGEFLOW_KEEP_WORK is set, or after a
/// failure through `keep`).
mod tempdir {
    use anyhow::Result;
    use std::path::{Path, PathBuf};
    pub struct Dir(PathBuf, bool);
    impl Dir {
        pub fn new(name: &str) -> Result<Dir> {
            let p = std::env::temp_dir().join(format!("edgeflow-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p)?;
            Ok(Dir(p, false))
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
        pub fn keep(mut self) -> PathBuf {
            self.1 = true;
            self.0.clone()
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            if !self.1 && std::env::var_os("EDGEFLOW_KEEP_WORK").is_none() {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}

/// Lint warning categories that rust-hdl's generated Verilog triggers by construction, each
/// with the reason it is waived. Anything else fails `edgeflow verilog`.
pub const LINT_WAIVERS: &[(&str, &str)] = &[
    ("DECLFILENAME", "rust-hdl writes every module into one file, named after the top, by design"),
    (
        "WIDTH",
        "rust-hdl sizes integer literals and some operators at 32 bits and relies on assignment truncation; the truncation is exactly Bits<N> wrap-around, and the Verilator co-simulation proves every bit against the reference model",
    ),
    ("UNUSEDSIGNAL", "unused bits of sliced buses and constants rust-hdl emits as local signals"),
    ("UNUSEDPARAM", "rust-hdl emits every Constant as a localparam, used or not"),
    ("UNDRIVEN", "declared-but-unused outputs of library blocks (e.g. FIFO flags) rust-hdl leaves undriven"),
    ("PINCONNECTEMPTY", "unconnected optional ports of library blocks"),
    ("CASEINCOMPLETE", "state machines whose unused encodings fall to the default branch"),
    ("SYNCASYNCNET", "none expected; listed so a report names it"),
    ("BLKSEQ", "rust-hdl's simulation-only initial blocks use blocking assignments"),
    ("VARHIDDEN", "rust-hdl reuses port names as locals in wrapper modules"),
    ("PROCASSINIT", "rust-hdl sets register power-up values in initial blocks"),
    ("MULTIDRIVEN", "none expected; listed so a report names it"),
    (
        "UNSIGNED",
        "generated schedule comparisons against an offset of 0 (`started >= 0`), always true by design",
    ),
];

fn lint_report(dir: &Path, file: &str, extra: &[&str]) -> Result<serde_json::Value> {
    let warnings = verilator::lint(dir, file, extra)?;
    let mut by_cat: std::collections::BTreeMap<String, usize> = Default::default();
    let mut unwaived = vec![];
    for w in &warnings {
        let cat = w
            .trim_start_matches('%')
            .split(':')
            .next()
            .unwrap_or("")
            .trim_start_matches("Warning-")
            .to_string();
        if cat.starts_with("Error") {
            unwaived.push(w.clone());
            continue;
        }
        if !LINT_WAIVERS.iter().any(|(c, _)| *c == cat) {
            unwaived.push(w.clone());
        }
        *by_cat.entry(cat).or_default() += 1;
    }
    let waived: Vec<_> = by_cat
        .iter()
        .map(|(c, n)| {
            let why = LINT_WAIVERS
                .iter()
                .find(|(k, _)| k == c)
                .map(|x| x.1)
                .unwrap_or("NOT WAIVED");
            json!({"category": c, "count": n, "reason": why})
        })
        .collect();
    Ok(
        json!({"file": file, "warnings": warnings.len(), "by_category": waived, "unwaived": unwaived}),
    )
}

pub struct VerilogArgs {
    pub spec: Option<PathBuf>,
    pub standin: Option<String>,
    pub board: Option<String>,
    pub freq: Option<f64>,
    pub baud: u32,
    pub out: PathBuf,
    /// `auto` or a number (hdl::input_lanes); 1 whenever a board top is written.
    pub input_lanes: String,
    pub json: bool,
}

pub fn verilog_cmd(a: VerilogArgs) -> Result<()> {
    let inner = inner(a.spec.as_deref(), a.standin.as_deref())?;
    // the design as `edgeflow bitstream` builds it for the board
    let inner = match &a.board {
        Some(n) => inner.for_board(board(n).map_err(|e| anyhow!(e))?),
        None => inner,
    };
    let mut lanes = 1;
    let v = match (&inner, &a.board) {
        (Inner::Network(spec), None) => {
            lanes = edgeflow_hdl::input_lanes::parse_lanes(spec, &a.input_lanes)
                .map_err(|e| anyhow!(e))?;
            edgeflow_hdl::verilog_lanes(spec, lanes)
        }
        (Inner::Network(_), Some(b)) if !matches!(a.input_lanes.as_str(), "auto" | "1") => bail!(
            "--input-lanes {}: the --board {b} top talks over a UART, one 16-bit word at a time; leave --input-lanes at auto (1 with a board)",
            a.input_lanes
        ),
        _ => inner_verilog(&inner).map_err(|e| anyhow!(e))?,
    };
    // every file's content is made before the first is written, so a refused clock or baud
    // leaves nothing behind
    let mut outputs = vec![(format!("{}.v", inner.name()), v.clone())];
    let mut report = json!({"design": inner.name(), "input_lanes": lanes});
    if let Some(bname) = &a.board {
        let b = board(bname).map_err(|e| anyhow!(e))?;
        let mhz = crate::flow_check::clock_mhz(b, a.freq)?;
        let top = board_top_verilog(&inner, b, mhz, a.baud).map_err(|e| anyhow!(e))?;
        outputs.push((format!("{}_top.v", b.name), top.verilog));
        let (text, ext) = constraints(b);
        outputs.push((format!("{}.{ext}", b.name), text));
        report["board"] = json!({"name": b.name, "clock_mhz": top.mhz, "uart_clocks_per_bit": top.clocks_per_bit, "baud": a.baud});
    }
    let names: Vec<String> = outputs.iter().map(|o| o.0.clone()).collect();
    check_out_files(a.spec.as_deref(), &a.out, &names)?;
    let mut files = vec![];
    for (name, text) in &outputs {
        let f = a.out.join(name);
        write_atomic(&f, text.as_bytes())?;
        files.push(f.display().to_string());
    }
    report["files"] = json!(files);
    let mut unwaived = 0;
    if edgeflow_hdl::flow::tools::VERILATOR.available() {
        let dir = work_dir("lint")?;
        std::fs::write(dir.path().join("top.v"), &v)?;
        let l = lint_report(dir.path(), "top.v", &[])?;
        unwaived = l["unwaived"].as_array().map(|x| x.len()).unwrap_or(0);
        report["lint"] = l;
    } else {
        report["lint"] = json!("verilator not installed (Debian package verilator): lint skipped");
    }
    if a.json {
        print_json(&report);
    } else {
        for f in &files {
            println!("wrote {f}");
        }
        if let Some(l) = report["lint"].as_object() {
            println!("verilator --lint-only -Wall: {} warnings", l["warnings"]);
            for c in l["by_category"].as_array().into_iter().flatten() {
                println!(
                    "  {:<14} {:>5}  waived: {}",
                    c["category"].as_str().unwrap_or(""),
                    c["count"],
                    c["reason"].as_str().unwrap_or("")
                );
            }
        }
    }
    if unwaived > 0 {
        bail!(
            "verilator lint: {unwaived} warnings outside the documented waivers (see the report)"
        );
    }
    Ok(())
}

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
fn fmax_note(p: &nextpnr::PnrResult) -> String {
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
fn t_name(t: &str) -> &str {
    if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        t
    } else {
        "target"
    }
}

pub fn synth_cmd(
    spec: Option<&Path>,
    standin: Option<&str>,
    tname: &str,
    json: bool,
    plot: &[PathBuf],
) -> Result<()> {
    let inner = inner(spec, standin)?;
    let t = target(tname).map_err(|e| anyhow!(e))?;
    let v = inner_verilog(&inner).map_err(|e| anyhow!(e))?;
    let dir = work_dir("synth")?;
    std::fs::write(dir.path().join("top.v"), &v)?;
    let pb = spinner(&format!("yosys {} on {}", t.synth, inner.name()));
    let r = yosys::synthesize(t, dir.path(), "top.v", false);
    pb.finish_and_clear();
    let r = r.map_err(|e| keep_logs(e, dir))?;
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
    let mut report = json!({"design": inner.name(), "table": r.table, "seconds": r.seconds,
    "fits": r.table.overflows().is_empty(), "multipliers": r.multipliers,
    "multipliers_in_luts": r.multipliers_in_luts});
    if let Some(t) = &r.timing {
        // top level, so `edgeflow bench --synth-report` finds it
        report["fmax_mhz"] = json!(t.fmax_mhz);
        report["fmax_kind"] = json!(LOGIC_FMAX_KIND);
        report["timing"] = json!(t);
        if let Inner::Network(_) = &inner {
            crate::report_cache::store(&inner.name(), t_name(tname), &v, &report);
        }
    }
    if json {
        print_json(&report);
    } else {
        println!(
            "{} on {} (yosys {}, {:.1} s)",
            inner.name(),
            t.name,
            t.synth,
            r.seconds
        );
        print!("{}", r.table.to_text());
        if let Some(t) = &r.timing {
            println!(
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
            );
        }
        if r.multipliers_in_luts > 0 {
            println!(
                "{} of {} multipliers built from LUTs (the DSPs run out; weight-update ones first)",
                r.multipliers_in_luts, r.multipliers
            );
        }
    }
    crate::flow_check::check_fit(&inner, None, &r.table)
}

pub struct BitstreamArgs {
    pub spec: Option<PathBuf>,
    /// The network with the resident data memory (resident.rs).
    pub resident: bool,
    pub standin: Option<String>,
    pub board: String,
    pub out: PathBuf,
    pub freq: Option<f64>,
    pub baud: u32,
    pub seed: u32,
    pub json: bool,
}

/// nextpnr-ice40's device flag of the board's part.
fn ice40_device(b: &BoardInfo) -> String {
    format!("--{}", b.target.trim_start_matches("ice40-"))
}

pub fn bitstream_cmd(a: BitstreamArgs) -> Result<()> {
    let b = board(&a.board).map_err(|e| anyhow!(e))?;
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
    let t = target(b.target).map_err(|e| anyhow!(e))?;
    let name = format!("{}-{}", inner.name(), b.name);
    let (cons, cons_ext) = constraints(b);
    let bit_ext = if ecp5 { "bit" } else { "bin" };
    let mut names = vec![
        format!("{name}.{bit_ext}"),
        format!("{name}_top.v"),
        format!("{name}.{cons_ext}"),
        format!("{name}-nextpnr-report.json"),
    ];
    if ecp5 {
        names.push(format!("{name}.svf"));
    }
    check_out_files(a.spec.as_deref(), &a.out, &names)?;
    let mhz = crate::flow_check::clock_mhz(b, a.freq)?;
    let top = board_top_verilog(&inner, b, mhz, a.baud).map_err(|e| anyhow!(e))?;
    let dir = work_dir("bitstream")?;
    std::fs::write(dir.path().join("top.v"), &top.verilog)?;
    std::fs::write(dir.path().join(format!("top.{cons_ext}")), cons)?;
    let pb = spinner(&format!("yosys {} ({})", t.synth, inner.name()));
    let s = yosys::synthesize(t, dir.path(), "top.v", true);
    pb.finish_and_clear();
    let s = match s {
        Ok(s) => s,
        Err(e) => return Err(keep_logs(e, dir)),
    };
    crate::flow_check::check_fit(&inner, Some(b), &s.table)?;
    let pb = spinner(&format!(
        "{} at {:.2} MHz, {}, static timing",
        if ecp5 {
            "nextpnr-ecp5"
        } else {
            "nextpnr-ice40"
        },
        top.mhz,
        if ecp5 { "ecppack" } else { "icepack" }
    ));
    let p = if ecp5 {
        nextpnr_ecp5::place_route_pack(t, b.package, b.speed, dir.path(), top.mhz, a.seed)
    } else {
        nextpnr::place_route_pack(&ice40_device(b), b.package, dir.path(), top.mhz, a.seed)
    };
    pb.finish_and_clear();
    let p = match p {
        Ok(p) => p,
        Err(e) => {
            let log = std::fs::read_to_string(dir.path().join("nextpnr.log")).unwrap_or_default();
            let Some(m) = crate::flow_check::pnr_overflow(&log, &inner, b, t.part) else {
                return Err(keep_logs(e, dir));
            };
            let dir = dir.keep();
            bail!(
                "{m}\nnextpnr's log is kept: {} (remove {} when done)",
                dir.join("nextpnr.log").display(),
                dir.display()
            );
        }
    };
    let bin = a.out.join(format!("{name}.{bit_ext}"));
    write_atomic(
        &bin,
        &std::fs::read(dir.path().join(format!("top.{bit_ext}")))?,
    )?;
    let mut copies = vec![
        ("top.v".to_string(), format!("{name}_top.v")),
        (format!("top.{cons_ext}"), format!("{name}.{cons_ext}")),
        ("report.json".into(), format!("{name}-nextpnr-report.json")),
    ];
    if ecp5 {
        copies.push(("top.svf".into(), format!("{name}.svf")));
    }
    for (f, to) in copies {
        write_atomic(&a.out.join(to), &std::fs::read(dir.path().join(f))?)?;
    }
    let (cycle, samples_s) = match &inner {
        Inner::Network(spec) | Inner::Resident(spec) => {
            // the clocks this hardware spends per block cycle (the RTL's, not the spec's estimate)
            let c = edgeflow_hdl::params::block_cycle_clocks(spec) as f64;
            (Some(c), Some(top.mhz * 1e6 / c))
        }
        Inner::Echo => (None, None),
    };
    let uart_samples_s = match &inner {
        Inner::Network(spec) => Some(a.baud as f64 / (20.0 * (spec.layers[0] + 1) as f64)),
        // the samples are on the board: the line carries no sample words
        Inner::Resident(_) | Inner::Echo => None,
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
        "seconds": {"yosys": s.seconds, "nextpnr_icepack": p.seconds},
    });
    if a.json {
        print_json(&report);
    } else {
        println!("wrote {}", bin.display());
        print!("{}", s.table.to_text());
        println!(
            "clock {:.2} MHz, Fmax {:.2} MHz ({}): {}",
            top.mhz,
            p.timing.fmax_mhz,
            if met { "met" } else { "NOT met" },
            fmax_note(&p)
        );
        if let (Some(first), Some(last)) = (
            p.timing.critical_path.first(),
            p.timing.critical_path.last(),
        ) {
            let half = if p.timing.launch != p.timing.capture {
                ", a half-cycle path: the period is twice its delay"
            } else {
                ""
            };
            println!(
                "critical path ({} → {}{half}): {} → {} at {:.2} ns, period {:.2} ns",
                p.timing.launch, p.timing.capture, first.0, last.0, last.1, p.timing.period_ns
            );
        }
        if let (Some(c), Some(sps)) = (cycle, samples_s) {
            println!(
                "training: {c} clocks per sample → {sps:.0} samples/s at {:.2} MHz",
                top.mhz
            );
        }
        if let Some(u) = uart_samples_s {
            println!("UART at {} baud carries at most {u:.0} samples/s", a.baud);
        }
    }
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

pub fn vivado_cmd(
    spec: Option<&Path>,
    standin: Option<&str>,
    bname: &str,
    out: &Path,
    freq: Option<f64>,
    baud: u32,
    json: bool,
) -> Result<()> {
    let b = board(bname).map_err(|e| anyhow!(e))?;
    let inner = inner(spec, standin)?.for_board(b);
    if b.target != "xc7a100t" {
        let x: Vec<_> = boards()
            .iter()
            .filter(|b| b.target == "xc7a100t")
            .map(|b| b.name)
            .collect();
        bail!("the Vivado export is for Xilinx boards ({}); {} builds its bitstream in the open flow: use `edgeflow bitstream --board {}`", x.join(", "), b.name, b.name);
    }
    let mhz = crate::flow_check::clock_mhz(b, freq)?;
    let top = board_top_verilog(&inner, b, mhz, baud).map_err(|e| anyhow!(e))?;
    let name = format!("{}-{}", inner.name(), b.name);
    check_out_files(
        spec,
        out,
        &[
            "top.v".into(),
            format!("{}.xdc", b.name),
            "build.tcl".into(),
        ],
    )?;
    write_atomic(&out.join("top.v"), top.verilog.as_bytes())?;
    write_atomic(
        &out.join(format!("{}.xdc", b.name)),
        xdc(b, b.osc_mhz).as_bytes(),
    )?;
    let tcl = format!(
        "# Vivado batch build for {name} (written by edgeflow). Run: vivado -mode batch -source build.tcl\n\
# The design runs at {:.3} MHz from the board's {} MHz oscillator through an MMCM.\n\
set here [file dirname [file normalize [info script]]]\n\
create_project -force {name} $here/vivado -part xc7a100tcsg324-1\n\
add_files -norecurse $here/top.v\n\
add_files -fileset constrs_1 -norecurse $here/{}.xdc\n\
set_property top top [current_fileset]\n\
launch_runs synth_1 -jobs 4\nwait_on_run synth_1\n\
launch_runs impl_1 -to_step write_bitstream -jobs 4\nwait_on_run impl_1\n\
open_run impl_1\n\
report_utilization -file $here/utilization.rpt\n\
report_timing_summary -file $here/timing.rpt\n\
file copy -force $here/vivado/{name}.runs/impl_1/top.bit $here/{name}.bit\n\
puts \"edgeflow: wrote $here/{name}.bit\"\n",
        top.mhz,
        b.osc_mhz,
        b.name
    );
    write_atomic(&out.join("build.tcl"), tcl.as_bytes())?;
    let files = [
        "top.v".to_string(),
        format!("{}.xdc", b.name),
        "build.tcl".into(),
    ];
    if json {
        print_json(
            &json!({"design": inner.name(), "board": b.name, "clock_mhz": top.mhz, "dir": out.display().to_string(), "files": files}),
        );
    } else {
        println!("wrote a Vivado project script to {} ({}); build with: cd {} && vivado -mode batch -source build.tcl", out.display(), files.join(", "), out.display());
        println!(
            "the design runs at {:.3} MHz (MMCM from {} MHz)",
            top.mhz, b.osc_mhz
        );
    }
    Ok(())
}
