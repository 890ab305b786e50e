//! The bundled digits network on the iCEBreaker at the board's default clock, for real:
//! yosys → nextpnr-ice40 → icepack → static timing over nextpnr's SDF, with placement seed 1
//! first of a sweep (the sweep stops at the first seed that meets the clock). The bitstream must exist, the design must fit the UP5K (yosys' LUT count and
//! nextpnr's logic cells), the static timing must reproduce nextpnr's own Fmax when it takes
//! nextpnr's view of the SB_MAC16s, and the honest Fmax (the multiplies put back) decides
//! whether the clock is met.

use crate::common::{edgeflow, have, root};

/// The honest Fmax (static timing with the SB_MAC16 multiplies) digits must reach: the
/// iCEBreaker's default clock. It needs registered reads and the deep pipeline, as the board
/// builds them (docs/hardware.md): without them a memory read and the combinational multiply
/// share a clock.
const DIGITS_MIN_FMAX_MHZ: f64 = 30.0;

#[test]
fn digits_bitstream_fits_the_up5k_and_its_honest_fmax_is_checked_against_the_clock() {
    if !(have("yosys", "yosys")
        && have("nextpnr-ice40", "nextpnr-ice40")
        && have("icepack", "fpga-icestorm"))
    {
        return;
    }
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bitstream-digits");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    // the board's default clock, which `edgeflow bitstream` builds for without --freq
    let out = edgeflow(&[
        "bitstream",
        "--spec",
        "specs/digits.toml",
        "--board",
        "icebreaker",
        "--seed",
        "1,2",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // the report is printed whether or not the clock is met
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let bin = root().join(v["bitstream"].as_str().unwrap());
    let bin = if bin.exists() {
        bin
    } else {
        std::path::PathBuf::from(v["bitstream"].as_str().unwrap())
    };
    let size = std::fs::metadata(&bin)
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()))
        .len();
    // an UP5K image is ~104 KB whatever the design
    assert!(size > 100_000, "{} is only {size} bytes", bin.display());
    // fits: every resource row of yosys' table and every nextpnr cell type within the part
    for r in v["resources"]["rows"].as_array().unwrap() {
        let (used, avail) = (
            r["used"].as_f64().unwrap(),
            r["available"].as_f64().unwrap(),
        );
        assert!(used <= avail, "does not fit: {r}");
    }
    let util = v["nextpnr_utilisation"].as_array().unwrap();
    let lc = util
        .iter()
        .find(|u| u[0] == "ICESTORM_LC")
        .expect("nextpnr reports logic cells");
    assert!(lc[1].as_u64().unwrap() <= lc[2].as_u64().unwrap(), "{lc}");
    for u in util {
        assert!(u[1].as_u64().unwrap() <= u[2].as_u64().unwrap(), "{u}");
    }

    // nextpnr's own figure, read from the report it wrote (not from edgeflow's parse of it)
    let nextpnr = crate::common::nextpnr_fmax(&d.join("digits-icebreaker-nextpnr-report.json"));
    let f = |k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("no number {k} in {v}"))
    };
    let (fmax, view, clock) = (f("fmax_mhz"), f("sta_nextpnr_view_mhz"), f("clock_mhz"));
    assert_eq!(f("nextpnr_fmax_mhz"), nextpnr);
    // the static timing, given nextpnr's view of the SB_MAC16s, is nextpnr's timer
    assert!(
        (view - nextpnr).abs() <= 0.01,
        "static timing's nextpnr view {view} MHz, nextpnr {nextpnr} MHz"
    );
    assert!(v["sta_warning"].is_null(), "{}", v["sta_warning"]);
    crate::common::assert_seed_sweep(&v, &[1, 2]);
    // putting the multiplies back can only lengthen paths
    assert!(
        fmax <= nextpnr + 0.01,
        "honest {fmax} MHz > nextpnr {nextpnr} MHz"
    );
    assert!((fmax * f("period_ns") - 1000.0).abs() < 1e-6, "{v}");
    assert!(
        v["fmax_kind"].as_str().unwrap().contains("SB_MAC16"),
        "{}",
        v["fmax_kind"]
    );
    let path = v["critical_path"].as_array().unwrap();
    assert!(!path.is_empty() && path.len() <= 25, "{path:?}");
    assert!(
        fmax >= DIGITS_MIN_FMAX_MHZ,
        "honest Fmax {fmax:.2} MHz below the expected {DIGITS_MIN_FMAX_MHZ} MHz (nextpnr {nextpnr:.2} MHz); path {path:?}"
    );

    let default = edgeflow_hdl::boards::board("icebreaker")
        .unwrap()
        .default_mhz;
    assert_eq!(clock, default, "the board's default clock");
    if fmax >= clock {
        assert!(out.status.success(), "clock met but failed: {stderr}");
        assert_eq!(v["timing_met"], true);
    } else {
        assert!(!out.status.success(), "clock missed but succeeded");
        assert_eq!(v["timing_met"], false);
        let clock_text = format!("< {clock:.2} MHz clock");
        assert!(
            stderr.contains("timing not met") && stderr.contains(&clock_text),
            "{stderr}"
        );
    }
    let s = |x: &serde_json::Value| x.as_str().unwrap_or("?").to_string();
    eprintln!(
        "digits on the iCEBreaker: Fmax {fmax:.2} MHz with the MAC16 multiplies (nextpnr alone \
         {nextpnr:.4} MHz, the static timing's view of nextpnr {view:.4} MHz) at a {clock} MHz \
         clock (timing met: {}), {} of {} logic cells; critical path {} → {} ({} → {})",
        v["timing_met"],
        lc[1],
        lc[2],
        s(&path[0][0]),
        s(&path[path.len() - 1][0]),
        s(&v["launch"]),
        s(&v["capture"])
    );
}
