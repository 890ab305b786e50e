//! Does nextpnr-ecp5 time a path through a combinational MULT18X18D? Two small designs on an
//! LFE5U-85F, built by the real flow (yosys synth_ecp5, nextpnr-ecp5, ecppack): registers →
//! 16 × 16 multiply → register, and the same registers with an XOR and an AND instead. The multiply
//! must be in a MULT18X18D with its registers off, and nextpnr's own Fmax must be the one
//! the static timing (sta.rs) finds with the multiplier's arcs from the SDF, not the one it
//! finds with those arcs taken out: then nextpnr times the multiply and its figure is honest.

use edgeflow_flow::nextpnr::{agrees, PnrResult};
use edgeflow_flow::nextpnr_ecp5::place_route_pack;
use edgeflow_flow::sta::{analyse, DspModel};
use edgeflow_flow::targets::target;
use edgeflow_flow::tools::{tool_for_test, ECPPACK, NEXTPNR_ECP5, YOSYS};
use edgeflow_flow::yosys::synthesize;
use std::path::{Path, PathBuf};

/// Operands shift in one bit a clock (few pins); the product or the XOR is registered and
/// its parity leaves on one pin.
fn design(op: &str) -> String {
    format!(
        "module top(input clk_osc, input uart_rx, output uart_tx);\n\
         reg [15:0] a = 0, b = 0;\n  reg [31:0] p = 0;\n\
         always @(posedge clk_osc) begin\n\
           a <= {{a[14:0], uart_rx}};\n    b <= {{b[14:0], a[15]}};\n    p <= {op};\n\
         end\n  assign uart_tx = ^p;\nendmodule\n"
    )
}

const LPF: &str = "LOCATE COMP \"clk_osc\" SITE \"G2\";\nLOCATE COMP \"uart_rx\" SITE \"M1\";\n\
LOCATE COMP \"uart_tx\" SITE \"L4\";\nFREQUENCY PORT \"clk_osc\" 25 MHZ;\n";

fn build(tag: &str, op: &str) -> (PnrResult, String, u64) {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("edgeflow-ecp5-mul-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("top.v"), design(op)).unwrap();
    std::fs::write(dir.join("top.lpf"), LPF).unwrap();
    let t = target("ecp5-85k").unwrap();
    let s = synthesize(t, &dir, "top.v", true).unwrap();
    let dsp = s.table.rows[2].used as u64;
    let r = place_route_pack(t, "CABGA381", 6, &dir, 100.0, 1).unwrap();
    let sdf = std::fs::read_to_string(dir.join("top.sdf")).unwrap();
    assert!(Path::new(&dir.join("top.bit")).is_file(), "no bitstream");
    let _ = std::fs::remove_dir_all(&dir);
    (r, sdf, dsp)
}

/// The SDF with the MULT18X18D's own arcs (its IOPATHs) removed: what a timer that skipped
/// the multiply would see.
fn without_multiply(sdf: &str) -> String {
    let mut out = String::new();
    let mut in_mult = false;
    for line in sdf.lines() {
        if line.contains("(CELLTYPE ") {
            in_mult = line.contains("\"MULT18X18D\"");
        }
        if in_mult && line.trim_start().starts_with("(IOPATH") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn nextpnr_ecp5_times_the_combinational_multiply() {
    if !(tool_for_test(YOSYS) && tool_for_test(NEXTPNR_ECP5) && tool_for_test(ECPPACK)) {
        return;
    }
    let (mul, sdf, dsps) = build("mul", "a * b");
    assert_eq!(dsps, 1, "the 16 × 16 product is one MULT18X18D");
    assert!(sdf.contains("\"MULT18X18D\""));
    // the static timing over the SDF is nextpnr's figure
    assert!(
        agrees(mul.timing.fmax_mhz, mul.nextpnr_fmax_mhz),
        "sta {} MHz, nextpnr {} MHz",
        mul.timing.fmax_mhz,
        mul.nextpnr_fmax_mhz
    );
    // ... and its worst path runs through the multiplier
    assert_eq!(
        mul.timing.worst_through_multiplier_ns,
        Some(mul.timing.period_ns),
        "{:?}",
        mul.timing.critical_path
    );
    assert!(
        mul.timing
            .critical_path
            .iter()
            .any(|(p, _)| p.contains("MULT18X18D")),
        "{:?}",
        mul.timing.critical_path
    );
    // without the multiply's arcs the analysis finds a much faster circuit, which is not
    // what nextpnr reports
    let none = DspModel::Nextpnr {
        macs: Default::default(),
    };
    let skipped = analyse(&without_multiply(&sdf), &none).unwrap();
    assert!(
        skipped.period_ns + 2.0 < mul.timing.period_ns,
        "the multiply adds at least 2 ns: {} against {} ns",
        skipped.period_ns,
        mul.timing.period_ns
    );
    assert!(!agrees(skipped.fmax_mhz, mul.nextpnr_fmax_mhz));
    // the same registers with an XOR and an AND: no multiplier, a far shorter clock
    let (xor, _, dsps) = build("xor", "{a ^ b, a & b}");
    assert_eq!(dsps, 0);
    assert_eq!(xor.timing.worst_through_multiplier_ns, None);
    assert!(agrees(xor.timing.fmax_mhz, xor.nextpnr_fmax_mhz));
    assert!(
        xor.timing.period_ns + 2.0 < mul.timing.period_ns,
        "xor {} ns, multiply {} ns",
        xor.timing.period_ns,
        mul.timing.period_ns
    );
    eprintln!(
        "ECP5 register → MULT18X18D → register: {:.2} MHz (nextpnr {:.2}); without the multiply's arcs {:.2} MHz; XOR and AND instead {:.2} MHz",
        mul.timing.fmax_mhz, mul.nextpnr_fmax_mhz, skipped.fmax_mhz, xor.timing.fmax_mhz
    );
}
