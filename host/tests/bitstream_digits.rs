//! The bundled digits network on the iCEBreaker, for real: yosys → nextpnr-ice40 → icepack at
//! the board's default clock with a fixed placement seed. The bitstream must exist, the design
//! must fit the UP5K (yosys' LUT count and nextpnr's logic cells) and nextpnr's Fmax must reach
//! the clock the board top's PLL runs the pipelined design at: 21 MHz (issue 4 asks for 30 MHz;
//! the activation ROM's table lookup still limits Fmax to about 23 MHz).

mod common;

use common::{edgeflow, have, root};

#[test]
fn digits_bitstream_fits_the_up5k_and_meets_its_clock() {
    if !(have("yosys", "yosys")
        && have("nextpnr-ice40", "nextpnr-ice40")
        && have("icepack", "fpga-icestorm"))
    {
        return;
    }
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bitstream-digits");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let out = edgeflow(&[
        "bitstream",
        "--spec",
        "specs/digits.toml",
        "--board",
        "icebreaker",
        "--seed",
        "1",
        "-o",
        d.to_str().unwrap(),
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "edgeflow bitstream failed: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
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
    let (fmax, clock) = (
        v["fmax_mhz"].as_f64().unwrap(),
        v["clock_mhz"].as_f64().unwrap(),
    );
    assert_eq!(clock, 21.0, "the board top's PLL clock");
    assert!(fmax >= clock, "Fmax {fmax} MHz below the {clock} MHz clock");
    assert_eq!(v["timing_met"], true);
    eprintln!(
        "digits on the iCEBreaker: Fmax {fmax:.2} MHz at a {clock} MHz clock, {} of {} logic cells",
        lc[1], lc[2]
    );
}
