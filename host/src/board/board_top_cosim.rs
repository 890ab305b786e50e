//! The ULX3S board top under Verilator, spoken to byte by byte over its UART pins: the
//! emitted Verilog of the whole top (EHXPLLL through its simulation model, power-on hold,
//! UART receiver and transmitter, word bridge, network) trains and infers on specs/tiny.toml
//! and must end in the reference model's state, bit for bit.

use super::hostlink::HostLinkBoard;
use super::serial::ByteStreamLink;
use super::Board;
use edgeflow_core::{Spec, State};
use edgeflow_flow::tools::{tool_for_test, VERILATOR};
use edgeflow_hdl::board::verilator_uart::{build, UartStream};
use edgeflow_hdl::boards::board;
use edgeflow_hdl::design::{board_top_verilog, Inner};
use edgeflow_hdl::ecp5_pll::EHXPLLL_SIM_MODEL;
use edgeflow_hdl::ice40_pll::ClockSource;
use edgeflow_hdl::testbench::rtl::random_data;
use edgeflow_reference::Reference;
use std::time::Duration;

#[test]
fn ulx3s_board_top_under_verilator_trains_tiny_like_the_reference() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let spec = Spec::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../specs/tiny.toml"
    )))
    .unwrap();
    let b = board("ulx3s-85f").unwrap();
    // the design as the board builds it (registered reads, deep pipeline) at its default
    // clock through the PLL; a baud rate of clock / 4 keeps the simulation short
    let inner = Inner::Network(spec.clone()).for_board(b);
    let top =
        board_top_verilog(&inner, b, b.default_mhz, (b.default_mhz * 1e6 / 4.0) as u32).unwrap();
    assert!(matches!(top.source, ClockSource::Ecp5Pll(_)));
    assert!(top.verilog.contains("EHXPLLL"));
    assert_eq!(top.clocks_per_bit, 4);
    let dir = std::env::temp_dir().join(format!("edgeflow-ulx3s-uart-{}", std::process::id()));
    let h = build(&dir, &top.verilog, EHXPLLL_SIM_MODEL).unwrap();
    let stream = UartStream::spawn(&h, top.clocks_per_bit).unwrap();
    let link = ByteStreamLink::new(stream, "verilator-uart:ulx3s-85f", Duration::from_secs(60));
    let Inner::Network(built) = inner else {
        unreachable!()
    };
    let mut brd = HostLinkBoard::with_initial_state(&built, link).unwrap();
    let data = random_data(&spec, 6, 11);
    brd.train(&data).unwrap();
    let preds = brd.infer(&data).unwrap();
    let got = brd.read_state().unwrap();
    let mut r = Reference::new(&spec);
    r.train(&data);
    if let Some(d) = r.state.first_difference(&got, Some(&r.patterns)) {
        panic!("state over the Verilated ULX3S board top differs from the reference: {d}");
    }
    assert_eq!(got.sha256(), r.state.sha256());
    assert_eq!(preds, r.infer(&data));
    assert_ne!(
        got.sha256(),
        State::initial(&spec).sha256(),
        "training changed nothing"
    );
    drop(brd);
    let _ = std::fs::remove_dir_all(&dir);
}
