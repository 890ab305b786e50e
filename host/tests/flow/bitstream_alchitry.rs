//! The Alchitry Cu (iCE40 HX8K, no DSPs) through the real open flow: yosys, nextpnr-ice40
//! with the board's package and pins, icepack. The echo stand-in keeps it to seconds; the
//! iCEBreaker path builds the whole digits network (bitstream_digits.rs).

use crate::common::{have, ok_json, tmpdir};

#[test]
fn alchitry_cu_bitstream_is_built_pinned_and_meets_100_mhz() {
    if !(have("yosys", "yosys")
        && have("nextpnr-ice40", "nextpnr-ice40")
        && have("icepack", "fpga-icestorm"))
    {
        return;
    }
    let d = tmpdir("alchitry");
    let v = ok_json(&[
        "bitstream",
        "--standin",
        "echo",
        "--board",
        "alchitry-cu",
        "--freq",
        "100",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["resources"]["part"], "iCE40HX8K-CB132", "{v}");
    // asked for 100 MHz (the board file's clock is 50, for networks of LUT multipliers), the
    // Cu's oscillator drives the echo stand-in directly, and it closes there
    assert_eq!(v["clock_mhz"].as_f64(), Some(100.0), "{v}");
    assert_eq!(v["timing_met"], true, "{v}");
    assert!(v["fmax_mhz"].as_f64().unwrap() >= 100.0, "{v}");
    // no SB_MAC16 on the HX8K: the static timing is nextpnr's own timing. Compared in period:
    // nextpnr's Fmax can be 1 ps off the sum of its own critical path; 2 ps is the SDF's
    // whole-ps precision
    let (fmax, nextpnr) = (
        v["fmax_mhz"].as_f64().unwrap(),
        v["nextpnr_fmax_mhz"].as_f64().unwrap(),
    );
    assert!(
        (1e3 / fmax - 1e3 / nextpnr).abs() <= 0.002,
        "{fmax} MHz vs nextpnr {nextpnr} MHz"
    );
    assert!(v["sta_warning"].is_null(), "{v}");
    assert_eq!(
        v["worst_through_multiplier_ns"],
        serde_json::Value::Null,
        "{v}"
    );
    // an iCE40 configuration image: preamble then the sync word, and the HX8K's fixed size
    // (an image for another die would differ)
    let bin = std::fs::read(v["bitstream"].as_str().unwrap()).unwrap();
    assert_eq!(&bin[..8], &[0xff, 0x00, 0x00, 0xff, 0x7e, 0xaa, 0x99, 0x7e]);
    assert_eq!(bin.len(), 135_100, "HX8K images are 135100 bytes");
    // the FTDI UART, the oscillator and LED 0 on the Cu's balls
    let pcf = std::fs::read_to_string(d.join("echo-standin-alchitry-cu.pcf")).unwrap();
    for line in [
        "set_io clk_osc P7",
        "set_io uart_rx P14",
        "set_io uart_tx M9",
        "set_io led_error J11",
    ] {
        assert!(pcf.contains(line), "{line} missing from {pcf}");
    }
}
