//! A resident design on the ULX3S 85F, for real: specs/tiny.toml with its data memory in the
//! board's SDRAM through yosys synth_ecp5, nextpnr-ecp5 and ecppack. Every SDRAM pin is
//! placed on the ball its board file names, the 16 data lines as bidirectional pads, and
//! the clock is met.

use crate::common::edgeflow;
use edgeflow_flow::tools::{tool_for_test, ECPPACK, NEXTPNR_ECP5, YOSYS};

#[test]
fn resident_tiny_with_the_sdram_routes_on_the_ulx3s_85f() {
    if !(tool_for_test(YOSYS) && tool_for_test(NEXTPNR_ECP5) && tool_for_test(ECPPACK)) {
        return;
    }
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bitstream-resident-ulx3s");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let out = edgeflow(&[
        "bitstream",
        "--spec",
        "specs/tiny.toml",
        "--board",
        "ulx3s-85f",
        "--resident",
        "--baud",
        "2000000",
        "--seed",
        "1",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["timing_met"], true, "{v}");
    let bit = std::path::PathBuf::from(v["bitstream"].as_str().unwrap());
    assert!(std::fs::metadata(&bit).unwrap().len() > 100_000);
    // the constraints: every SDRAM pin of the board file, on its ball
    let lpf = std::fs::read_to_string(d.join("tiny-resident-ulx3s-85f.lpf")).unwrap();
    let pins = edgeflow_hdl::boards::board("ulx3s-85f")
        .unwrap()
        .sdram
        .unwrap()
        .pins();
    assert_eq!(pins.len(), 39);
    for (port, ball) in &pins {
        assert!(
            lpf.contains(&format!("LOCATE COMP \"{port}\" SITE \"{ball}\";")),
            "{port} on {ball} missing in\n{lpf}"
        );
    }
    assert!(pins.contains(&("sdram_d[15]".to_string(), "J17".to_string())));
    // the design's data bus is an inout of the top, and every pin became a pad: the four of
    // every board top and the SDRAM's 39
    let top = std::fs::read_to_string(d.join("tiny-resident-ulx3s-85f_top.v")).unwrap();
    assert!(
        top.contains("inout wire  [15:0] sdram_d;"),
        "no inout data bus"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("tiny-resident-ulx3s-85f-nextpnr-report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        report["utilization"]["TRELLIS_IO"]["used"], 43,
        "{}",
        report["utilization"]
    );
}
