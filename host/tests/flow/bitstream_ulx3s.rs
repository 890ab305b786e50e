//! specs/tiny.toml on the ULX3S (LFE5U-85F) at the board's default clock, for real: yosys
//! synth_ecp5 → nextpnr-ecp5 → ecppack → static timing over nextpnr's SDF, with a fixed
//! placement seed. The bitstream and its SVF must exist, the report must give the honest
//! Fmax (nextpnr-ecp5 times the MULT18X18D multiplies; the static timing must agree with it),
//! whether the clock is met, and the part's LUT4, FF, MULT18X18D and DP16KD counts; the
//! deploy command for the board is checked as a dry run.

use crate::common::edgeflow;
use edgeflow_flow::tools::{tool_for_test, ECPPACK, NEXTPNR_ECP5, YOSYS};

#[test]
fn tiny_bitstream_on_the_ulx3s_85f_reports_honest_fmax_and_ecp5_resources() {
    if !(tool_for_test(YOSYS) && tool_for_test(NEXTPNR_ECP5) && tool_for_test(ECPPACK)) {
        return;
    }
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bitstream-ulx3s");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let out = edgeflow(&[
        "bitstream",
        "--spec",
        "specs/tiny.toml",
        "--board",
        "ulx3s-85f",
        "--seed",
        "1",
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
    let bit = std::path::PathBuf::from(v["bitstream"].as_str().unwrap());
    assert_eq!(bit, d.join("tiny-ulx3s-85f.bit"));
    let image = std::fs::read(&bit).unwrap_or_else(|e| panic!("{}: {e}", bit.display()));
    // an ECP5 bitstream: the configuration preamble, then the LFE5U-85F's IDCODE 0x41113043
    let at = image
        .windows(4)
        .position(|w| w == [0xff, 0xff, 0xbd, 0xb3])
        .expect("no ECP5 preamble");
    let idcode = [0x41, 0x11, 0x30, 0x43];
    assert!(
        image[at..].windows(4).any(|w| w == idcode),
        "no LFE5U-85F IDCODE"
    );
    let svf = std::fs::read_to_string(d.join("tiny-ulx3s-85f.svf")).unwrap();
    assert!(svf.contains("SIR"), "not an SVF file");
    let lpf = std::fs::read_to_string(d.join("tiny-ulx3s-85f.lpf")).unwrap();
    assert!(
        lpf.contains("SITE \"M1\"") && lpf.contains("SITE \"L4\""),
        "{lpf}"
    );

    // nextpnr's own figure, read from the report it wrote
    let nextpnr = crate::common::nextpnr_fmax(&d.join("tiny-ulx3s-85f-nextpnr-report.json"));
    let f = |k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("no number {k} in {v}"))
    };
    let (fmax, clock) = (f("fmax_mhz"), f("clock_mhz"));
    assert_eq!(f("nextpnr_fmax_mhz"), nextpnr);
    assert!(
        (fmax - nextpnr).abs() <= 0.01 || (1e3 / fmax - 1e3 / nextpnr).abs() <= 0.002,
        "static timing {fmax} MHz, nextpnr-ecp5 {nextpnr} MHz"
    );
    assert!(v["sta_warning"].is_null(), "{}", v["sta_warning"]);
    assert!(v["fmax_kind"].as_str().unwrap().contains("MULT18X18D"));
    // the board's clock (its board file's clock_mhz) when no --freq is given
    let default = edgeflow_hdl::boards::board("ulx3s-85f")
        .unwrap()
        .default_mhz;
    assert_eq!(clock, default);
    assert_eq!(v["timing_met"], fmax >= clock);
    assert_eq!(out.status.success(), fmax >= clock, "{stderr}");
    // tiny with the board's deep pipeline and registered reads: a block cycle of the longest
    // pass (8 clocks) + 5
    assert_eq!(f("clocks_per_sample"), 13.0);
    assert_eq!(f("samples_per_second"), clock * 1e6 / 13.0);

    // the LFE5U-85F's resources (Lattice: 83,640 LUT4 and flip-flops, 156 MULT18X18D,
    // 208 DP16KD), each used count within the part
    let rows = v["resources"]["rows"].as_array().unwrap();
    let row = |kind: &str| {
        rows.iter()
            .find(|r| r["kind"].as_str().unwrap().starts_with(kind))
            .unwrap_or_else(|| panic!("no {kind} row in {rows:?}"))
    };
    for (kind, avail) in [
        ("LUT4", 83640),
        ("flip-flop", 83640),
        ("MULT18X18D", 156),
        ("DP16KD", 208),
    ] {
        let r = row(kind);
        assert_eq!(r["available"], avail, "{r}");
        let used = r["used"].as_f64().unwrap();
        assert!(used <= avail as f64, "{r}");
    }
    // tiny's products are in MULT18X18Ds, not in logic
    assert!(row("MULT18X18D")["used"].as_f64().unwrap() > 0.0);
    assert!(row("LUT4")["used"].as_f64().unwrap() > 1000.0);
    let util = v["nextpnr_utilisation"].as_array().unwrap();
    let mult = util.iter().find(|u| u[0] == "MULT18X18D").unwrap();
    assert_eq!(mult[1].as_f64(), row("MULT18X18D")["used"].as_f64());
    eprintln!(
        "tiny on ulx3s-85f: Fmax {fmax:.2} MHz (nextpnr-ecp5 {nextpnr:.2}) at a {clock} MHz clock; {} LUT4, {} MULT18X18D",
        row("LUT4")["used"],
        row("MULT18X18D")["used"]
    );

    // the cost model against the routed design: `cost --synth-report` reads the bitstream
    // report's resource table, each routed count next to the model's prediction
    let report = d.join("report.json");
    std::fs::write(&report, &out.stdout).unwrap();
    let cost = crate::common::ok_json(&[
        "cost",
        "--spec",
        "specs/tiny.toml",
        "--board",
        "ulx3s-85f",
        "--synth-report",
        report.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(cost["target"], "LFE5U-85F", "{cost}");
    let costed = cost["rows"].as_array().unwrap();
    for (resource, kind) in [("LUT", "LUT4"), ("DSP", "MULT18X18D"), ("BRAM", "DP16KD")] {
        let c = costed.iter().find(|r| r["resource"] == resource).unwrap();
        assert_eq!(c["synthesized"], row(kind)["used"], "{resource}: {cost}");
        assert!(c["predicted"].as_f64().unwrap() > 0.0, "{c}");
    }

    // deploy through openFPGALoader's ULX3S profile, as a dry run
    let out = edgeflow(&[
        "deploy",
        "--board",
        "ulx3s-85f",
        bit.to_str().unwrap(),
        "--dry-run",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        dep["command"],
        format!("openFPGALoader -b ulx3s {}", bit.display())
    );
}
