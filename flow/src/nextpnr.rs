//! nextpnr-ice40 place and route, its timing report, static timing over its post-route delays
//! (`sta.rs`, with the SB_MAC16 multiplies it leaves out), and icepack.

use super::sta::{self, DspModel};
use super::tools::{ICEPACK, NEXTPNR_ICE40};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct PnrResult {
    /// Static timing over nextpnr's post-route delays with every combinational SB_MAC16
    /// multiply on its path (`sta.rs`): `timing.fmax_mhz` is the clock the circuit can run. The
    /// critical path is shortened (`short_path`), the endpoints cut to `WORST_ENDPOINTS`.
    pub timing: sta::StaResult,
    /// nextpnr's own achieved Fmax (the slowest clock of its report), MHz. It times every
    /// SB_MAC16 port as a register port, so with combinational multipliers it is too high.
    pub nextpnr_fmax_mhz: f64,
    /// The same static timing with nextpnr's view of the SB_MAC16s: must equal
    /// `nextpnr_fmax_mhz` (a check of the analysis against nextpnr's own timer).
    pub sta_nextpnr_view_mhz: f64,
    pub constraint_mhz: f64,
    /// nextpnr's utilisation after packing: (cell type, used, available).
    pub utilisation: Vec<(String, u64, u64)>,
    pub seconds: f64,
}

impl PnrResult {
    /// The static timing disagrees with nextpnr's own Fmax when given nextpnr's view: then
    /// `fmax_mhz` rests on an analysis that does not match the tool it reads.
    pub fn self_check_warning(&self) -> Option<String> {
        (!agrees(self.sta_nextpnr_view_mhz, self.nextpnr_fmax_mhz)).then(|| {
            format!(
                "static timing with nextpnr's view of the SB_MAC16s gives {:.3} MHz but nextpnr \
                 reports {:.3} MHz: the honest Fmax ({:.2} MHz) may be off; check top.sdf against \
                 nextpnr's log (EDGEFLOW_KEEP_WORK=1 keeps them)",
                self.sta_nextpnr_view_mhz, self.nextpnr_fmax_mhz, self.timing.fmax_mhz
            )
        })
    }
}

/// How far the static timing's nextpnr view may be from nextpnr's figure, MHz, or
pub const SELF_CHECK_MHZ: f64 = 0.01;
/// in period, ns: nextpnr's Fmax can be 1 ps off the sum of its own critical path, and the
/// SDF has whole ps.
pub const SELF_CHECK_NS: f64 = 0.002;

/// Two Fmax figures are the same to nextpnr's precision (`SELF_CHECK_MHZ` or `SELF_CHECK_NS`).
pub fn agrees(a_mhz: f64, b_mhz: f64) -> bool {
    (a_mhz - b_mhz).abs() <= SELF_CHECK_MHZ || (1e3 / a_mhz - 1e3 / b_mhz).abs() <= SELF_CHECK_NS
}

/// nextpnr's report: its Fmax of the slowest clock, the constraint and the utilisation.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub fmax_mhz: f64,
    pub constraint_mhz: f64,
    pub utilisation: Vec<(String, u64, u64)>,
}

/// Place and route `top.json` in `dir` with `top.pcf`, pack `top.bin`, and time the routed
/// design from the SDF nextpnr writes (`top.sdf`).
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
        "--sdf",
        "top.sdf",
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
    let report = parse_report(&report)?;
    let sdf = std::fs::read_to_string(dir.join("top.sdf")).context("nextpnr wrote no top.sdf")?;
    let netlist = std::fs::read_to_string(dir.join("top.json")).context("no top.json")?;
    let mut r = time_routed(device, &sdf, &netlist, report)?;
    r.seconds = start.elapsed().as_secs_f64();
    Ok(r)
}

/// Pack a synthesized netlist (`top.json` in `dir`) with nextpnr-ice40, without placing it,
/// and return nextpnr's utilisation table. A logic cell (ICESTORM_LC) holds one LUT4, one
/// flip-flop and one carry; only the packer knows how many pair up, and the part's logic
/// cells, not its LUT4s, are what a design must fit in.
/// A board top's pins are constrained (`pcf`: a PLL must sit on its clock pin).
pub fn pack_only(
    device: &str,
    package: &str,
    dir: &Path,
    pcf: Option<&str>,
) -> Result<Vec<(String, u64, u64)>> {
    let mut args = vec![
        device,
        "--package",
        package,
        "--json",
        "top.json",
        "--pack-only",
    ];
    if let Some(p) = pcf {
        args.extend(["--pcf", p]);
    }
    NEXTPNR_ICE40.run(&args, dir, &dir.join("nextpnr-pack.log"))?;
    let log = std::fs::read_to_string(dir.join("nextpnr-pack.log")).unwrap_or_default();
    let u = log_utilisation(&log);
    if u.is_empty() {
        bail!("nextpnr-ice40 --pack-only printed no utilisation table");
    }
    Ok(u)
}

/// The icestorm timing database with a device's SB_MAC16 arcs, by nextpnr's device flag.
fn dsp_timing_db(device: &str) -> Result<&'static str> {
    Ok(match device.trim_start_matches('-') {
        "up3k" | "up5k" => "up5k",
        "u1k" | "u2k" | "u4k" => "u4k",
        other => bail!("device {other} has SB_MAC16 cells but no known icestorm timing database"),
    })
}

/// Static timing of the routed design twice, with the multipliers and with nextpnr's view of
/// them, joined with nextpnr's report.
pub fn time_routed(device: &str, sdf: &str, netlist: &str, report: Report) -> Result<PnrResult> {
    let macs = sta::mac_registers(netlist)?;
    // without SB_MAC16s both models are the same analysis and no database is needed
    let arcs = if macs.is_empty() {
        vec![]
    } else {
        let path = sta::timing_db(dsp_timing_db(device)?)?;
        let db = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        sta::cell_arcs(&db, "SB_MAC16_MUL_S_16X16_BYPASS")
            .with_context(|| format!("in {}", path.display()))?
    };
    time_with(sdf, macs, arcs, report)
}

/// `time_routed` with the multiplier's arcs given.
fn time_with(
    sdf: &str,
    macs: std::collections::HashMap<String, sta::MacRegisters>,
    arcs: Vec<(String, String, f64)>,
    report: Report,
) -> Result<PnrResult> {
    let view = sta::analyse(sdf, &DspModel::Nextpnr { macs: macs.clone() })
        .context("static timing over nextpnr's SDF (nextpnr's view)")?;
    let honest = sta::analyse(sdf, &DspModel::Multiplier { arcs, macs })
        .context("static timing over nextpnr's SDF")?;
    let mut timing = honest;
    timing.critical_path = short_path(&timing.critical_path);
    timing.worst_endpoints.truncate(WORST_ENDPOINTS);
    Ok(PnrResult {
        timing,
        nextpnr_fmax_mhz: report.fmax_mhz,
        sta_nextpnr_view_mhz: view.fmax_mhz,
        constraint_mhz: report.constraint_mhz,
        utilisation: report.utilisation,
        seconds: 0.0,
    })
}

/// The bitstream report lists this many of the slowest endpoints.
pub const WORST_ENDPOINTS: usize = 40;

/// At most this many entries in a shortened path.
pub const PATH_ENTRIES: usize = 25;

/// A critical path a person can read: a run of carry-chain hops (`CIN`/`COUT`) becomes one
/// entry, yosys' repeated `_SB_CARRY_CO_CI` name segments are counted instead of spelled
/// out, and a path still longer than `PATH_ENTRIES` keeps its two ends around one entry
/// saying how many were left out.
pub fn short_path(path: &[(String, f64)]) -> Vec<(String, f64)> {
    let carry = |n: &str| n.ends_with("/CIN") || n.ends_with("/COUT");
    let mut out: Vec<(String, f64)> = vec![];
    let mut i = 0;
    while i < path.len() {
        if !carry(&path[i].0) {
            out.push((short_name(&path[i].0), path[i].1));
            i += 1;
            continue;
        }
        let run = path[i..].iter().take_while(|p| carry(&p.0)).count();
        let stages = path[i..i + run]
            .iter()
            .filter(|p| p.0.ends_with("/COUT"))
            .count();
        out.push((
            format!("(carry chain, {stages} stages)"),
            path[i + run - 1].1,
        ));
        i += run;
    }
    if out.len() > PATH_ENTRIES {
        let keep = (PATH_ENTRIES - 1) / 2;
        let left = out.len() - 2 * keep;
        let tail = out.split_off(out.len() - keep);
        let skipped_to = out[out.len() - 1].1;
        out.truncate(keep);
        out.push((format!("({left} more)"), skipped_to));
        out.extend(tail);
    }
    out
}

/// yosys names a cell after the nets it grew from, repeating `_SB_CARRY_CO_CI` once per carry
/// stage: count such repeats.
fn short_name(name: &str) -> String {
    const SEG: &str = "_SB_CARRY_CO_CI";
    let mut out = String::new();
    let mut rest = name;
    while let Some(p) = rest.find(SEG) {
        out.push_str(&rest[..p]);
        let mut n = 0;
        while rest[p + n * SEG.len()..].starts_with(SEG) {
            n += 1;
        }
        out.push_str(SEG);
        if n > 1 {
            out.push_str(&format!("×{n}"));
        }
        rest = &rest[p + n * SEG.len()..];
    }
    out.push_str(rest);
    out
}

/// The utilisation table nextpnr prints after packing ("Device utilisation:"), as (cell
/// type, used, available); the same lines in nextpnr-ice40's and nextpnr-ecp5's logs. It is
/// there when placement fails, where no report.json is written.
pub fn log_utilisation(log: &str) -> Vec<(String, u64, u64)> {
    let Some(start) = log.rfind("Device utilisation:") else {
        return vec![];
    };
    log[start..]
        .lines()
        .skip(1)
        .map(|l| l.trim_start_matches("Info:").trim())
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            let (kind, rest) = l.split_once(':')?;
            let (used, rest) = rest.split_once('/')?;
            let avail = rest.split_whitespace().next()?;
            Some((
                kind.trim().to_string(),
                used.trim().parse().ok()?,
                avail.parse().ok()?,
            ))
        })
        .collect()
}

/// The cell types nextpnr could not fit: those its utilisation table puts over the part,
/// and the one named by "no BELs remaining to implement cell type '...'" (packing can leave
/// cells unusable below 100%), as (cell type, used, available).
pub fn overflows(log: &str) -> Vec<(String, u64, u64)> {
    let unplaced = log
        .lines()
        .filter_map(|l| l.split("implement cell type '").nth(1))
        .filter_map(|t| t.split('\'').next())
        .last();
    log_utilisation(log)
        .into_iter()
        .filter(|(kind, used, avail)| used > avail || Some(kind.as_str()) == unplaced)
        .collect()
}

pub fn parse_report(json: &str) -> Result<Report> {
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
    Ok(Report {
        fmax_mhz,
        constraint_mhz,
        utilisation,
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

    /// The shape of nextpnr-ice40's log when the logic cells run out (an UP5K build).
    const ICE40_LOG: &str = "Info: Checksum: 0x829be43f\n\n\
        Info: Device utilisation:\n\
        Info: \t         ICESTORM_LC:  6625/ 5280   125%\n\
        Info: \t        ICESTORM_RAM:    11/   30    36%\n\
        Info: \t               SB_GB:     8/    8   100%\n\
        Info: \t        ICESTORM_DSP:     8/    8   100%\n\
        Info: \t      ICESTORM_SPRAM:     0/    4     0%\n\
        \n\
        Info: Placed 9 cells based on constraints.\n\
        ERROR: Unable to place cell 'x_SB_LUT4_O_LC', no BELs remaining to implement cell type 'ICESTORM_LC'\n\
        0 warnings, 1 error\n";

    /// nextpnr-ecp5's table (a 12F build's lines, the counts raised past the part).
    const ECP5_LOG: &str = "Info: Device utilisation:\n\
        Info: \t          TRELLIS_IO:       4/    197     2%\n\
        Info: \t              DP16KD:      60/     56   107%\n\
        Info: \t          MULT18X18D:      12/     28    42%\n\
        Info: \t          TRELLIS_FF:     174/  24288     0%\n\
        Info: \t        TRELLIS_COMB:   30120/  24288   124%\n\
        Info: \t        TRELLIS_RAMW:       8/   3036     0%\n\
        \n\
        Info: Placed 5 cells based on constraints.\n";

    #[test]
    fn the_log_table_gives_what_ran_out() {
        let u = log_utilisation(ICE40_LOG);
        assert_eq!(u.len(), 5, "{u:?}");
        assert_eq!(u[0], ("ICESTORM_LC".to_string(), 6625, 5280));
        assert_eq!(u[4], ("ICESTORM_SPRAM".to_string(), 0, 4));
        // full (SB_GB, ICESTORM_DSP at 100%) is not over
        assert_eq!(
            overflows(ICE40_LOG),
            vec![("ICESTORM_LC".to_string(), 6625, 5280)]
        );
        assert_eq!(
            overflows(ECP5_LOG),
            vec![
                ("DP16KD".to_string(), 60, 56),
                ("TRELLIS_COMB".to_string(), 30120, 24288)
            ]
        );
        // the cell type nextpnr could not place counts even below 100%
        let packed = ICE40_LOG.replace("6625/ 5280   125%", "5270/ 5280    99%");
        assert_eq!(
            overflows(&packed),
            vec![("ICESTORM_LC".to_string(), 5270, 5280)]
        );
        assert!(overflows("Info: Program finished normally.\n").is_empty());
    }

    /// r2 → r1 through wires only; r1 → r2 through a combinational multiplier m. Periods by
    /// hand: r2 → r1 1400 + 500 + 1200 = 3100 ps; r1 → m → r2 1400 + 1000 + 5000 (the
    /// multiply) + 1000 + 1000 = 9400 ps.
    const SDF: &str = r#"(DELAYFILE (SDFVERSION "3.0") (TIMESCALE 1ps)
      (CELL (CELLTYPE "top") (INSTANCE )
        (DELAY (ABSOLUTE
          (INTERCONNECT r1/O m_DSP/A_0 (1000:1000:1000) (1000:1000:1000))
          (INTERCONNECT m_DSP/O_0 r2/I0 (1000:1000:1000) (1000:1000:1000))
          (INTERCONNECT r2/O r1/I0 (500:500:500) (500:500:500)))))
      (CELL (CELLTYPE "ICESTORM_LC") (INSTANCE r1)
        (DELAY (ABSOLUTE (IOPATH CLK O (1400:1400:1400) (1400:1400:1400))))
        (TIMINGCHECK (SETUPHOLD (posedge I0) (posedge CLK) (1200:1200:1200) (0:0:0))))
      (CELL (CELLTYPE "ICESTORM_DSP") (INSTANCE m_DSP)
        (DELAY (ABSOLUTE (IOPATH CLK O_0 (100:100:100) (100:100:100))))
        (TIMINGCHECK (SETUPHOLD (posedge A_0) (posedge CLK) (100:100:100) (0:0:0))))
      (CELL (CELLTYPE "ICESTORM_LC") (INSTANCE r2)
        (DELAY (ABSOLUTE (IOPATH CLK O (1400:1400:1400) (1400:1400:1400))))
        (TIMINGCHECK (SETUPHOLD (posedge I0) (posedge CLK) (1000:1000:1000) (0:0:0)))))"#;

    fn report(mhz: f64) -> Report {
        Report {
            fmax_mhz: mhz,
            constraint_mhz: 12.0,
            utilisation: vec![("ICESTORM_DSP".to_string(), 1, 8)],
        }
    }

    #[test]
    fn the_multiply_is_timed_and_nextpnr_view_is_checked() {
        let macs: std::collections::HashMap<_, _> =
            [("m_DSP".to_string(), sta::MacRegisters::default())].into();
        let arcs = vec![("A_0".to_string(), "O_0".to_string(), 5000.0)];
        let nextpnr = 1e6 / 3100.0;
        let r = time_with(SDF, macs.clone(), arcs.clone(), report(nextpnr)).unwrap();
        assert!((r.timing.fmax_mhz - 1e6 / 9400.0).abs() < 1e-9, "{r:?}");
        assert!((r.timing.period_ns - 9.4).abs() < 1e-9, "{r:?}");
        assert!((r.sta_nextpnr_view_mhz - nextpnr).abs() < 1e-9, "{r:?}");
        assert_eq!(r.nextpnr_fmax_mhz, nextpnr);
        assert_eq!(
            r.timing.worst_through_multiplier_ns,
            Some(r.timing.period_ns)
        );
        assert_eq!((r.timing.launch, r.timing.capture), ("posedge", "posedge"));
        let names: Vec<&str> = r
            .timing
            .critical_path
            .iter()
            .map(|p| p.0.as_str())
            .collect();
        assert_eq!(names, ["r1/O", "m_DSP/A_0", "m_DSP/O_0", "r2/I0"]);
        assert_eq!(r.timing.critical_path[3].1, 8.4);
        assert_eq!((r.constraint_mhz, r.utilisation.len()), (12.0, 1));
        assert_eq!(r.self_check_warning(), None);
        // 128.40 against 128.42 MHz is 1 ps; 23.14 against 23.16 MHz is 37 ps
        assert!(agrees(1e3 / 7.788, 1e3 / 7.787) && !agrees(1e3 / 7.788, 1e3 / 7.785));
        assert!(agrees(23.14, 23.15) && !agrees(23.14, 23.16));
        // nextpnr's figure 1 MHz off the analysis' view of it: kept, and a warning names both
        let r = time_with(SDF, macs, arcs, report(nextpnr - 1.0)).unwrap();
        let w = r.self_check_warning().expect("a warning");
        assert!(
            w.contains(&format!("{:.3}", nextpnr)) && w.contains(&format!("{:.3}", nextpnr - 1.0)),
            "{w}"
        );
    }

    #[test]
    fn without_multipliers_both_views_agree_and_need_no_database() {
        let sdf = SDF.replace("ICESTORM_DSP", "ICESTORM_LC");
        let netlist = r#"{"modules":{"top":{"cells":{"l":{"type":"SB_LUT4","parameters":{}}}}}}"#;
        // m is now a logic cell with a register at A_0 (r1 → m 2500 ps, m → r2 2100 ps), so
        // r2 → r1 (3100 ps) is the worst path in both views
        let r = time_routed("--hx8k", &sdf, netlist, report(1e6 / 3100.0)).unwrap();
        assert!((r.timing.fmax_mhz - 1e6 / 3100.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r.timing.fmax_mhz, r.sta_nextpnr_view_mhz);
        assert_eq!(r.timing.worst_through_multiplier_ns, None);
        // an SB_MAC16 on a device without a known database is an error, not a guess
        let mac = r#"{"modules":{"top":{"cells":{"m":{"type":"SB_MAC16","parameters":{}}}}}}"#;
        let e = time_routed("--hx8k", SDF, mac, report(1.0)).unwrap_err();
        assert!(e.to_string().contains("hx8k"), "{e}");
        assert_eq!(dsp_timing_db("--up5k").unwrap(), "up5k");
        assert_eq!(dsp_timing_db("--u4k").unwrap(), "u4k");
    }

    #[test]
    fn paths_are_shortened_for_reading() {
        let c = "x_SB_CARRY_CO_CI_SB_CARRY_CO_CI_SB_CARRY_CO_CI_SB_CARRY_CO";
        let p: Vec<(String, f64)> = [
            ("ram/RDATA_8", 1.0),
            ("lut_LC/I2", 2.0),
            (&format!("{c}$CARRY/I2")[..], 3.0),
            (&format!("{c}$CARRY/COUT")[..], 4.0),
            ("y$CARRY/CIN", 4.0),
            ("y$CARRY/COUT", 5.0),
            ("z_SB_CARRY_CO_CI_LC/I3", 6.0),
        ]
        .iter()
        .map(|(n, a)| (n.to_string(), *a))
        .collect();
        let s = short_path(&p);
        let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "ram/RDATA_8",
                "lut_LC/I2",
                "x_SB_CARRY_CO_CI×3_SB_CARRY_CO$CARRY/I2",
                "(carry chain, 2 stages)",
                "z_SB_CARRY_CO_CI_LC/I3"
            ]
        );
        assert_eq!(s[3].1, 5.0);
        // a long path keeps both ends
        let long: Vec<(String, f64)> = (0..40).map(|i| (format!("c{i}/O"), i as f64)).collect();
        let s = short_path(&long);
        assert_eq!(s.len(), PATH_ENTRIES);
        assert_eq!((s[0].0.as_str(), s[11].0.as_str()), ("c0/O", "c11/O"));
        assert_eq!(s[12], ("(16 more)".to_string(), 27.0));
        assert_eq!((s[13].0.as_str(), s[24].0.as_str()), ("c28/O", "c39/O"));
    }
}
