//! nextpnr-ecp5 place and route, ecppack to a bitstream (`.bit`, and `.svf` for JTAG
//! players), and static timing over the SDF nextpnr writes (`sta.rs`).
//!
//! nextpnr-ecp5 times a combinational MULT18X18D's multiply itself (the arcs are in its SDF
//! and in its Fmax), so the analysis here needs no database of its own: it walks the same
//! delays, marks paths through multipliers, and is checked against nextpnr's figure.

use super::nextpnr::{parse_report, short_path, PnrResult, WORST_ENDPOINTS};
use super::sta::{self, DspModel};
use super::targets::{ecp5_device, Target};
use super::tools::{ECPPACK, NEXTPNR_ECP5};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Place and route `top.json` in `dir` with `top.lpf` for `target` in `package` at speed grade
/// `speed`, pack `top.bit` and `top.svf`, and time the routed design.
pub fn place_route_pack(
    target: &Target,
    package: &str,
    speed: u8,
    dir: &Path,
    mhz: f64,
    seed: u32,
) -> Result<PnrResult> {
    let Some(device) = ecp5_device(target) else {
        bail!("target {} is not an ECP5 part", target.name)
    };
    let start = std::time::Instant::now();
    let (freq, seed, speed) = (format!("{mhz}"), seed.to_string(), speed.to_string());
    let args = [
        device,
        "--package",
        package,
        "--speed",
        &speed,
        "--json",
        "top.json",
        "--lpf",
        "top.lpf",
        "--textcfg",
        "top.config",
        "--freq",
        &freq,
        "--report",
        "report.json",
        "--sdf",
        "top.sdf",
        "--seed",
        &seed,
        // router2 routes large congested designs in a fraction of router1's time (router1,
        // still nextpnr-ecp5's default, did not finish the published design in hours)
        "--router",
        "router2",
        // report the achieved Fmax when the clock is missed: `edgeflow bitstream` then fails
        // with the number and a clock that would meet it
        "--timing-allow-fail",
    ];
    NEXTPNR_ECP5.run(&args, dir, &dir.join("nextpnr.log"))?;
    ECPPACK.run(
        &["--svf", "top.svf", "top.config", "top.bit"],
        dir,
        &dir.join("ecppack.log"),
    )?;
    let report =
        std::fs::read_to_string(dir.join("report.json")).context("nextpnr wrote no report.json")?;
    let sdf = std::fs::read_to_string(dir.join("top.sdf")).context("nextpnr wrote no top.sdf")?;
    let mut r = time_routed(&sdf, parse_report(&report)?)?;
    r.seconds = start.elapsed().as_secs_f64();
    Ok(r)
}

/// Static timing of the routed design joined with nextpnr's report.
pub fn time_routed(sdf: &str, report: super::nextpnr::Report) -> Result<PnrResult> {
    let none = DspModel::Nextpnr {
        macs: Default::default(),
    };
    let mut timing = sta::analyse(sdf, &none).context("static timing over nextpnr's SDF")?;
    let view = timing.fmax_mhz;
    timing.critical_path = short_path(&timing.critical_path);
    timing.worst_endpoints.truncate(WORST_ENDPOINTS);
    Ok(PnrResult {
        timing,
        nextpnr_fmax_mhz: report.fmax_mhz,
        sta_nextpnr_view_mhz: view,
        constraint_mhz: report.constraint_mhz,
        utilisation: report.utilisation,
        seconds: 0.0,
    })
}
