//! The FPGA flow on the echo stand-in: Verilator co-simulation against the rust-hdl
//! simulation, lint, synthesis tables and a real iCEBreaker bitstream.

use edgeflow_flow::tools::{tool_for_test, ICEPACK, NEXTPNR_ICE40, VERILATOR, YOSYS};
use edgeflow_flow::{nextpnr, targets, verilator, yosys};
use edgeflow_hdl::boards::{board, pcf};
use edgeflow_hdl::echo_standin::EchoStandIn;
use edgeflow_hdl::echo_top::EchoBoardTop;
use edgeflow_hdl::host_stream::run_words;

use rust_hdl::prelude::*;

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn echo_verilog() -> String {
    let mut e = EchoStandIn::default();
    e.connect_all();
    generate_verilog(&e)
}

#[test]
fn verilator_matches_rust_hdl_words_and_clocks() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let h = verilator::build(&scratch("echo-verilator"), &echo_verilog()).unwrap();
    let words: Vec<u16> = (0..500u32)
        .map(|i| (i.wrapping_mul(40503) >> 3) as u16)
        .collect();
    for stall in [0u64, 2, 3, 7] {
        let mut e = EchoStandIn::default();
        e.connect_all();
        let (want, want_clocks) = run_words(&mut e, &words, words.len(), stall, 100_000).unwrap();
        let got = h.run_batch(&words, words.len(), stall, 100_000).unwrap();
        assert_eq!(got.words, want, "stall {stall}");
        assert_eq!(got.clocks, want_clocks, "stall {stall}");
    }
    // The live (command by command) mode answers the same.
    let mut live = h.spawn().unwrap();
    for chunk in words.chunks(100) {
        let w = live.send(chunk).unwrap();
        let back = live.recv(chunk.len()).unwrap();
        w.join().unwrap().unwrap();
        let want: Vec<u16> = chunk.iter().map(|x| x.wrapping_add(1)).collect();
        assert_eq!(back, want);
    }
    let (clocks, _) = live.finish().unwrap();
    assert!(clocks >= words.len() as u64);
}

#[test]
fn standin_synthesizes_on_every_target() {
    if !tool_for_test(YOSYS) {
        return;
    }
    for t in targets::TARGETS {
        let dir = scratch(&format!("echo-synth-{}", t.name));
        std::fs::write(dir.join("top.v"), echo_verilog()).unwrap();
        let r = yosys::synthesize(t, &dir, "top.v", false).unwrap();
        // 16 data + 1 full flag flip-flops, whatever the family.
        assert_eq!(
            r.table.rows[1].used,
            17.0,
            "{}: {}",
            t.name,
            r.table.to_text()
        );
        assert!(r.table.overflows().is_empty());
    }
}

#[test]
fn icebreaker_bitstream_of_the_echo_board_top() {
    if !tool_for_test(YOSYS) || !tool_for_test(NEXTPNR_ICE40) || !tool_for_test(ICEPACK) {
        return;
    }
    let b = board("icebreaker").unwrap();
    let (src, mhz) = edgeflow_hdl::board_top::clock_source(b, 30.0).unwrap();
    let cpb = edgeflow_hdl::board_top::clocks_per_bit(mhz, 115_200).unwrap();
    let mut top = EchoBoardTop::new(EchoStandIn::default(), src, cpb, b.led_active_low);
    top.connect_all();
    let dir = scratch("echo-icebreaker");
    std::fs::write(dir.join("top.v"), generate_verilog(&top)).unwrap();
    std::fs::write(dir.join("top.pcf"), pcf(b, &[])).unwrap();
    let t = targets::target(b.target).unwrap();
    let s = yosys::synthesize(t, &dir, "top.v", true).unwrap();
    assert!(s.table.overflows().is_empty());
    let p = nextpnr::place_route_pack("--up5k", "sg48", &dir, mhz, 1).unwrap();
    assert!(p.timing.fmax_mhz >= 30.0, "Fmax {}", p.timing.fmax_mhz);
    // no SB_MAC16 in the echo top: the static timing is nextpnr's own (to 2 ps of period)
    assert!(
        (1e3 / p.timing.fmax_mhz - 1e3 / p.nextpnr_fmax_mhz).abs() <= 0.002,
        "{p:?}"
    );
    let bin = std::fs::metadata(dir.join("top.bin")).unwrap().len();
    assert!(bin > 100_000, "bitstream of {bin} bytes");
    eprintln!(
        "echo board top on iCEBreaker: Fmax {:.1} MHz, {:?}",
        p.timing.fmax_mhz, p.utilisation
    );
}

#[test]
fn multipliers_beyond_the_dsp_count_go_to_luts() {
    if !tool_for_test(YOSYS) {
        return;
    }
    // Ten registered 16×16 products for a part with 8 DSPs.
    let mut v = String::from(
        "module top(input clock, input [159:0] a, input [159:0] b, output reg [319:0] p);\n",
    );
    for i in 0..10 {
        v += &format!(
            "always @(posedge clock) p[{}:{}] <= a[{}:{}] * b[{}:{}];\n",
            32 * i + 31,
            32 * i,
            16 * i + 15,
            16 * i,
            16 * i + 15,
            16 * i
        );
    }
    v += "endmodule\n";
    let dir = scratch("mul-budget");
    std::fs::write(dir.join("top.v"), v).unwrap();
    let r =
        yosys::synthesize(targets::target("ice40-up5k").unwrap(), &dir, "top.v", false).unwrap();
    assert_eq!((r.multipliers, r.multipliers_in_luts), (10, 2));
    assert_eq!(r.table.rows[2].used, 8.0, "{}", r.table.to_text());
    assert!(
        r.table.rows[0].used > 300.0,
        "two 16×16 LUT multipliers: {}",
        r.table.to_text()
    );
}

#[test]
fn xc7_logic_fmax_falls_with_depth_and_halves_for_falling_edge_registers() {
    if !tool_for_test(YOSYS) {
        return;
    }
    let x7 = targets::target("xc7a100t").unwrap();
    // a sum of `n` registered 16-bit operands, registered on `edge`
    let run = |name: &str, n: usize, edge: &str| {
        let terms: Vec<String> = (0..n)
            .map(|i| format!("r[{}:{}]", 16 * i + 15, 16 * i))
            .collect();
        let v = format!(
            "module top(input clock, input [127:0] x, output reg [19:0] y);\nreg [127:0] r;\nalways @(posedge clock) r <= x;\nalways @({edge} clock) y <= {};\nendmodule\n",
            terms.join(" + ")
        );
        let dir = scratch(name);
        std::fs::write(dir.join("top.v"), v).unwrap();
        yosys::synthesize(x7, &dir, "top.v", false)
            .unwrap()
            .timing
            .expect("xc7 synthesis reports timing")
    };
    let short = run("fmax-short", 2, "posedge");
    let long = run("fmax-long", 8, "posedge");
    assert_eq!(short.falling_edge_registers, 0);
    assert!((short.fmax_mhz - 1000.0 / short.logic_delay_ns).abs() < 1e-9);
    assert!(
        long.logic_delay_ns > short.logic_delay_ns && long.fmax_mhz < short.fmax_mhz,
        "8 terms {long:?} vs 2: {short:?}"
    );
    // registers on the other edge: the worst path is given half a clock
    let half = run("fmax-half", 8, "negedge");
    assert!(half.falling_edge_registers > 0);
    assert!((half.fmax_mhz * 2.0 - half.full_cycle_mhz).abs() < 1e-9);
    assert!((half.full_cycle_mhz - 1000.0 / half.logic_delay_ns).abs() < 1e-9);
}
