//! The FPGA-flow commands from the outside: exit codes, files, messages. The stand-in design
//! (hidden `--standin echo`) exercises the flow where the network is not needed.

use crate::common::have;
use std::process::Command;

fn edgeflow(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_edgeflow"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn deploy_without_a_board_fails_naming_what_it_looked_for() {
    if !have("openFPGALoader", "openfpgaloader") {
        return;
    }
    let d = scratch("deploy");
    let bit = d.join("x.bin");
    // icepack's layout: an empty comment block, then the iCE40 sync word
    std::fs::write(&bit, [0xff, 0x00, 0x00, 0xff, 0x7e, 0xaa, 0x99, 0x7e]).unwrap();
    let (ok, _, err) = edgeflow(&["deploy", "--board", "icebreaker", bit.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("no icebreaker attached") && err.contains("0403:6010"),
        "{err}"
    );
    let (ok, out, _) = edgeflow(&[
        "deploy",
        "--board",
        "icebreaker",
        bit.to_str().unwrap(),
        "--dry-run",
    ]);
    assert!(ok);
    assert!(out.contains("openFPGALoader -b ice40_generic"), "{out}");
    let (ok, _, err) = edgeflow(&["deploy", "--board", "icebreaker", "/nonexistent.bin"]);
    assert!(!ok && err.contains("/nonexistent.bin"), "{err}");
    let (ok, _, err) = edgeflow(&["deploy", "--board", "zedboard", bit.to_str().unwrap()]);
    assert!(!ok && err.contains("known boards: icebreaker"), "{err}");
}

#[test]
fn vivado_export_writes_tcl_xdc_and_verilog() {
    let d = scratch("vivado");
    let (ok, out, err) = edgeflow(&[
        "vivado",
        "--standin",
        "echo",
        "--board",
        "nexys4-ddr",
        "--freq",
        "15",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["clock_mhz"], 15.0);
    let tcl = std::fs::read_to_string(d.join("build.tcl")).unwrap();
    assert!(tcl.contains("xc7a100tcsg324-1") && tcl.contains("write_bitstream"));
    let x = std::fs::read_to_string(d.join("nexys4-ddr.xdc")).unwrap();
    assert!(x.contains("PACKAGE_PIN E3") && x.contains("uart_rx"));
    let top = std::fs::read_to_string(d.join("top.v")).unwrap();
    assert!(top.contains("MMCME2_BASE") && top.contains("CLKOUT0_DIVIDE_F"));
    let (ok, _, err) = edgeflow(&[
        "vivado",
        "--standin",
        "echo",
        "--board",
        "icebreaker",
        "-o",
        d.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("edgeflow bitstream"), "{err}");
}

#[test]
fn synth_prints_a_resource_table_as_json() {
    if !have("yosys", "yosys") {
        return;
    }
    let (ok, out, err) = edgeflow(&[
        "synth",
        "--standin",
        "echo",
        "--target",
        "ice40-up5k",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["table"]["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["resource"].as_str().unwrap())
        .collect();
    // on the iCE40 also the logic cells nextpnr's packer fills: at least one per LUT4, and
    // at most one per LUT4, flip-flop and carry
    assert_eq!(names, ["LUT", "FF", "DSP", "BRAM", "LC"]);
    assert_eq!(rows[1]["used"], 17.0);
    assert_eq!(rows[0]["available"], 5280);
    assert_eq!(rows[4]["available"], 5280);
    let (lut, ff, lc) = (
        rows[0]["used"].as_f64().unwrap(),
        rows[1]["used"].as_f64().unwrap(),
        rows[4]["used"].as_f64().unwrap(),
    );
    let carries = v["table"]["cells"]["SB_CARRY"].as_f64().unwrap_or(0.0);
    assert!(
        lc >= lut && lc <= lut + ff + carries,
        "{lc} cells for {lut} LUT4, {ff} FF and {carries} carries"
    );
    // Xilinx: a pre-route, logic-only Fmax from yosys sta, where `bench --synth-report`
    // looks for it
    let (ok, out, err) = edgeflow(&[
        "synth",
        "--standin",
        "echo",
        "--target",
        "xc7a100t",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = v["fmax_mhz"].as_f64().unwrap();
    let t = &v["timing"];
    assert!(f > 0.0 && v["fmax_kind"].as_str().unwrap().contains("pre-route"));
    assert!((f - 1000.0 / t["logic_delay_ns"].as_f64().unwrap()).abs() < 1e-9);
    assert!(!t["critical_path"].as_array().unwrap().is_empty());
    let (ok, _, err) = edgeflow(&["synth", "--standin", "echo", "--target", "virtex2"]);
    assert!(!ok && err.contains("known targets"), "{err}");
}

#[test]
fn verilog_is_written_and_lint_clean_within_waivers() {
    if !have("verilator", "verilator") {
        return;
    }
    let d = scratch("verilog");
    let (ok, out, err) = edgeflow(&[
        "verilog",
        "--standin",
        "echo",
        "--board",
        "icebreaker",
        "--freq", // given, so the test does not depend on the board's default clock
        "30",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lint"]["unwaived"].as_array().unwrap().len(), 0, "{out}");
    assert!(std::fs::read_to_string(d.join("icebreaker.pcf"))
        .unwrap()
        .contains("set_io uart_tx 9"));
    assert!(std::fs::read_to_string(d.join("icebreaker_top.v"))
        .unwrap()
        .contains("SB_PLL40_PAD"));
}

#[test]
fn network_verilog_is_lint_clean_within_waivers() {
    // a network with its board top: the controller, host link and datapath rust-hdl writes
    if !have("verilator", "verilator") || !have("yosys", "yosys") {
        return;
    }
    let d = scratch("verilog-tiny");
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/tiny.toml");
    let (ok, out, err) = edgeflow(&[
        "verilog",
        "--spec",
        spec,
        "--board",
        "icebreaker",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lint"]["unwaived"].as_array().unwrap().len(), 0, "{out}");
}

/// A spec's `dsp_multipliers` keeps the multipliers over it out of the DSP cells, in yosys as
/// in the cost model, and `edgeflow fit --dsp-multipliers` searches under it and writes it.
#[test]
fn a_dsp_budget_builds_the_other_multipliers_from_logic() {
    if !have("yosys", "yosys") {
        return;
    }
    let d = scratch("dsp-budget");
    let tiny = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/tiny.toml"))
        .unwrap();
    let spec = d.join("tiny3.toml");
    std::fs::write(&spec, format!("dsp_multipliers = 3\n{tiny}")).unwrap();
    let (ok, out, err) = edgeflow(&[
        "synth",
        "--spec",
        spec.to_str().unwrap(),
        "--target",
        "ecp5-25k",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mults = v["multipliers"].as_u64().unwrap();
    // FF, BP and UP lanes of both junctions: far more than the budget
    assert!(mults >= 10, "{v}");
    assert_eq!(v["multipliers_in_luts"].as_u64(), Some(mults - 3), "{v}");
    assert_eq!(v["table"]["cells"]["MULT18X18D"].as_u64(), Some(3), "{v}");

    let out_spec = d.join("fitted.toml");
    let (ok, out, err) = edgeflow(&[
        "fit",
        "--spec",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/tiny.toml"),
        "--board",
        "ulx3s-85f",
        "--dsp-multipliers",
        "2",
        "-o",
        out_spec.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["dsp_multipliers"].as_u64(), Some(2), "{v}");
    for c in v["candidates"].as_array().unwrap() {
        assert!(c["usage"]["dsp"].as_u64().unwrap() <= 2, "{c}");
    }
    let written = std::fs::read_to_string(&out_spec).unwrap();
    assert!(
        written.contains("dsp_multipliers = 2") && written.contains("--dsp-multipliers 2"),
        "{written}"
    );
}
