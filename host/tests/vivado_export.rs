//! `edgeflow vivado` without Vivado: what a Vivado build would reject first is checked with
//! the tools we have. yosys elaborates the exported top against the Xilinx primitive library
//! (a misspelled primitive or port is an error there, as in Vivado), every top-level port has
//! a pin and an I/O standard in the XDC (Vivado's DRC stops `write_bitstream` on an
//! unconstrained port), and Tcl runs the build script with the Vivado commands stubbed, so a
//! syntax error or a file the script names but the export did not write fails here.

mod common;

use common::{have, ok_json, tmpdir};
use std::collections::BTreeSet;
use std::process::Command;

/// The port names of `module top(...)` in the exported Verilog.
fn top_ports(verilog: &str) -> BTreeSet<String> {
    let start = verilog.find("module top(").expect("a module top") + "module top(".len();
    let end = start + verilog[start..].find(')').unwrap();
    verilog[start..end]
        .split(',')
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

#[test]
fn vivado_project_for_tiny_at_15_mhz_passes_the_checks_vivado_would_make() {
    let d = tmpdir("vivado-tiny");
    let v = ok_json(&[
        "vivado",
        "--spec",
        "specs/tiny.toml",
        "--board",
        "nexys4-ddr",
        "--freq",
        "15",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    let top = std::fs::read_to_string(d.join("top.v")).unwrap();
    let xdc = std::fs::read_to_string(d.join("nexys4-ddr.xdc")).unwrap();

    // every port pinned, with an I/O standard, once
    let ports = top_ports(&top);
    assert!(
        ports.contains("clk_osc") && ports.contains("uart_rx"),
        "{ports:?}"
    );
    for p in &ports {
        let lines: Vec<&str> = xdc
            .lines()
            .filter(|l| l.contains("PACKAGE_PIN") && l.contains(&format!("{{ {p} }}")))
            .collect();
        assert_eq!(lines.len(), 1, "port {p} must have exactly one pin: {xdc}");
        assert!(lines[0].contains("IOSTANDARD"), "{p}: {}", lines[0]);
    }
    // and nothing pinned that is not a port (Vivado warns and drops it: a typo goes unseen)
    for l in xdc.lines().filter(|l| l.contains("PACKAGE_PIN")) {
        let name = l
            .rsplit("{ ")
            .next()
            .unwrap()
            .trim_end_matches(" }]")
            .trim();
        assert!(ports.contains(name), "XDC pins {name}, not a port of top");
    }
    // the clock constraint is the board oscillator's period
    assert!(
        xdc.contains("create_clock -name clk_osc -period 10.000"),
        "{xdc}"
    );
    // the MMCM: its VCO inside the XC7 -1 speed grade's 600-1200 MHz, its output the clock
    // the export reports (Vivado refuses a VCO out of range at implementation)
    let param = |name: &str| -> f64 {
        let at = top
            .find(&format!(".{name}("))
            .unwrap_or_else(|| panic!("no {name}"));
        let rest = &top[at + name.len() + 2..];
        rest[..rest.find(')').unwrap()].parse().unwrap()
    };
    let vco = 1000.0 / param("CLKIN1_PERIOD") * param("CLKFBOUT_MULT_F") / param("DIVCLK_DIVIDE");
    assert!((600.0..=1200.0).contains(&vco), "VCO {vco} MHz");
    let f = vco / param("CLKOUT0_DIVIDE_F");
    assert!((f - 15.0).abs() < 1e-9, "MMCM gives {f} MHz, asked 15");
    assert_eq!(v["clock_mhz"].as_f64(), Some(f), "{v}");

    // yosys elaborates the top with the Xilinx primitives as the library
    if have("yosys", "yosys") {
        let o = Command::new("yosys")
            .args([
                "-q",
                "-p",
                "read_verilog -lib +/xilinx/cells_sim.v +/xilinx/cells_xtra.v; \
                 read_verilog -sv top.v; hierarchy -check -top top",
            ])
            .current_dir(&d)
            .output()
            .expect("yosys runs");
        assert!(
            o.status.success(),
            "yosys rejects the exported top: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }

    // the build script, with Vivado's commands recorded instead of run
    if have("tclsh", "tcl") {
        let stub = r#"
set calls {}
foreach cmd {create_project set_property current_fileset launch_runs wait_on_run open_run
             report_utilization report_timing_summary} {
    proc $cmd {args} [list lappend ::calls [list $cmd]]
}
proc add_files {args} {
    set skip 0
    foreach f $args {
        if {$skip} { set skip 0; continue }
        if {$f in {-fileset -of_objects}} { set skip 1; continue }
        if {[string index $f 0] eq "-"} { continue }
        if {![file exists $f]} { error "add_files: missing $f" }
        lappend ::calls [list add_files [file tail $f]]
    }
}
rename file _file
proc file {sub args} {
    if {$sub eq "copy"} { lappend ::calls [list file_copy [_file tail [lindex $args end]]]; return }
    return [_file $sub {*}$args]
}
rename create_project _cp
proc create_project {args} { lappend ::calls [list create_project {*}[lrange $args end-2 end]] }
source [lindex $argv 0]
foreach c $::calls { puts $c }
"#;
        let stub_path = d.join("stub.tcl");
        std::fs::write(&stub_path, stub).unwrap();
        let o = Command::new("tclsh")
            .arg(&stub_path)
            .arg(d.join("build.tcl"))
            .output()
            .expect("tclsh runs");
        let calls = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "build.tcl fails under Tcl: {}{calls}",
            String::from_utf8_lossy(&o.stderr)
        );
        for want in [
            "-part xc7a100tcsg324-1",
            "add_files top.v",
            "add_files nexys4-ddr.xdc",
            "launch_runs",
            "report_timing_summary",
            "file_copy tiny-nexys4-ddr.bit",
        ] {
            assert!(
                calls.contains(want),
                "build.tcl never did `{want}`:\n{calls}"
            );
        }
    }
}
