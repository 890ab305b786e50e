//! `edgeflow train --resident`: the iCEBreaker board top (PLL model, UART bit by bit at
//! 3 Mbaud, SPRAM from yosys' own simulation model) under Verilator trains digits with the
//! data resident on the board, and ends in exactly the reference's state; so does a run
//! continued from a model (`--init`).

mod common;
use common::*;
use edgeflow_flow::tools::{tool_for_test, VERILATOR};

/// specs/digits.toml as the iCEBreaker and the ULX3S build it: registered reads and the deep
/// pipeline.
fn digits_as_boards_build_it() -> edgeflow_core::Spec {
    let mut built = edgeflow_core::Spec::load(&root().join("specs/digits.toml")).unwrap();
    built.registered_reads = true;
    built.deep_pipeline = true;
    built
}

#[test]
fn resident_digits_on_the_icebreaker_top_equals_the_reference() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let args = [
        "train",
        "--spec",
        "specs/digits.toml",
        "--board",
        "icebreaker",
        "--resident",
        "--epochs",
        "2",
        "--backend",
        "verilator",
        "--json",
    ];
    let resident = ok_json(&args);
    let reference = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "2",
        "--json",
    ]);
    assert_eq!(resident["state_sha256"], reference["state_sha256"]);
    assert_eq!(resident["test_accuracy"], reference["test_accuracy"]);
    assert_eq!(resident["baud"], 3_000_000);
    assert_eq!(resident["clock_mhz"], 30.0);
    // 64 inputs of 8 bits: 32 words and the label; all 1797 digits fit the 65,536 words
    assert_eq!(resident["record_words"], 33);
    assert_eq!(resident["resident_capacity_samples"], 65536 / 33);
    for k in [
        "upload_clocks",
        "train_clocks",
        "readback_clocks",
        "end_to_end_seconds",
        "end_to_end_samples_per_second",
    ] {
        assert!(resident[k].as_f64().unwrap() > 0.0, "{k}: {}", resident[k]);
    }
    // the datapath's own rate bounds the run: 2 epochs of 1438 samples at 642 clocks or more
    let train = resident["train_clocks"].as_u64().unwrap();
    assert!(train >= 2 * 1438 * 642, "train_clocks {train}");
    // `edgeflow bench`'s resident projection, made without simulating, against the counts
    let built = digits_as_boards_build_it();
    let p = edgeflow::board::resident::ResidentClocks::projected(&built, 10, 1, 1797, 1438, 2);
    let near = |k: &str, want: u64, within: f64| {
        let got = resident[k].as_f64().unwrap();
        assert!(
            (want as f64 - got).abs() <= within * got,
            "{k}: counted {got}, projected {want}"
        );
    };
    // the upload's count also holds the host's latency between frames, which grows when the
    // machine is loaded: the projection is its floor, and within twice of it
    let upload = resident["upload_clocks"].as_u64().unwrap();
    assert!(
        upload >= p.upload_clocks && upload <= 2 * p.upload_clocks,
        "upload_clocks: counted {upload}, projected {}",
        p.upload_clocks
    );
    near("train_clocks", p.train_clocks, 0.01);
    near("readback_clocks", p.readback_clocks, 0.01);

    // one bit flipped on the line during the upload: the board drops that serial frame
    // before any of it reaches the data memory, the host sends it again, and the run ends in
    // the reference's state
    let o = edgeflow_env(&args, &[("EDGEFLOW_TEST_FLIP_BYTE", "4001")]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("arrived corrupted at the board"), "{err}");
    let flipped = json_of(&args, o);
    assert_eq!(flipped["state_sha256"], reference["state_sha256"]);
    assert_eq!(flipped["test_accuracy"], reference["test_accuracy"]);
}

/// Every ULX3S keeps the set in its SDRAM: its board top with the SDRAM's pins, under
/// Verilator with rust-hdl's simulated chip on those pins (which stops the run on any
/// command that breaks the part's timing), trains digits and ends in the reference's state.
#[test]
fn resident_digits_in_the_ulx3s_sdram_equals_the_reference() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let resident = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--board",
        "ulx3s-85f",
        "--resident",
        "--epochs",
        "1",
        "--backend",
        "verilator",
        "--json",
    ]);
    let reference = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--json",
    ]);
    assert_eq!(resident["state_sha256"], reference["state_sha256"]);
    assert_eq!(resident["test_accuracy"], reference["test_accuracy"]);
    // 28.125 MHz divides to 2 Mbaud (14 clocks a bit), not to 3 Mbaud within 2 %
    assert_eq!(resident["clock_mhz"], 28.125);
    assert_eq!(resident["baud"], 2_000_000);
    // 2^20 words of the SDRAM, 33 words a record
    assert_eq!(resident["resident_capacity_samples"], (1 << 20) / 33);
    let built = digits_as_boards_build_it();
    let read = edgeflow_hdl::sdram_memory::read_clocks(28.125);
    let p = edgeflow::board::resident::ResidentClocks::projected(&built, 14, read, 1797, 1438, 1);
    let train = resident["train_clocks"].as_f64().unwrap();
    assert!(
        (p.train_clocks as f64 - train).abs() <= 0.01 * train,
        "train_clocks: counted {train}, projected {}",
        p.train_clocks
    );
}

#[test]
fn a_set_larger_than_the_board_memory_is_refused_before_any_build() {
    let dir = std::env::temp_dir().join(format!("edgeflow-resident-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 13-bit inputs: 52 words a sample and a label, 1797 samples need 95,241 words
    let text = std::fs::read_to_string(root().join("specs/digits.toml"))
        .unwrap()
        .replace("input_bits = 8", "input_bits = 13");
    let spec = dir.join("digits13.toml");
    std::fs::write(&spec, text).unwrap();
    fails_with(
        &[
            "train",
            "--spec",
            spec.to_str().unwrap(),
            "--board",
            "icebreaker",
            "--resident",
            "--backend",
            "verilator",
        ],
        &["1797 samples", "65536 words", "1236 samples", "input_bits"],
    );
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--resident",
            "--backend",
            "verilator",
        ],
        &["--board"],
    );
}

#[test]
fn resident_training_over_a_serial_port_equals_the_reference() {
    use edgeflow_hdl::board::pty_bridge::PtyBridge;
    use edgeflow_hdl::boards::board;
    use edgeflow_hdl::design::Inner;
    if !tool_for_test(VERILATOR) {
        return;
    }
    // the user's path: the serial backend opens a pseudo-terminal (raw mode, baud, timeouts)
    // whose other side is the co-simulated board top
    let spec = edgeflow_core::Spec::load(&root().join("specs/digits.toml")).unwrap();
    let bridge = PtyBridge::start(
        &Inner::Resident(spec),
        board("icebreaker").unwrap(),
        3_000_000,
    )
    .unwrap();
    let port = format!("serial:{}@3000000", bridge.slave_path().display());
    let resident = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--board",
        "icebreaker",
        "--resident",
        "--epochs",
        "1",
        "--backend",
        &port,
        "--json",
    ]);
    let reference = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--json",
    ]);
    assert_eq!(resident["state_sha256"], reference["state_sha256"]);
    assert_eq!(resident["test_accuracy"], reference["test_accuracy"]);
    bridge.stop().unwrap();
}

/// `--init` on the resident board top (Verilator co-simulation): the model's state goes in,
/// the chip's sample order starts at the model's next epoch, and the run ends in the state
/// the reference reaches from the same model.
#[test]
fn init_on_the_resident_board_top_equals_the_reference() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let d = tmpdir("resident-init");
    let m = d.join("digits.model");
    ok_json(&[
        "train",
        "--json",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--out",
        path_str(&m),
    ]);
    let cont = ["train", "--json", "--init", path_str(&m), "--epochs", "1"];
    let reference = ok_json(&cont);
    let mut args = cont.to_vec();
    args.extend([
        "--board",
        "icebreaker",
        "--resident",
        "--backend",
        "verilator",
    ]);
    let resident = ok_json(&args);
    assert_eq!(resident["state_sha256"], reference["state_sha256"]);
    assert_eq!(resident["test_accuracy"], reference["test_accuracy"]);
    std::fs::remove_dir_all(&d).ok();
}
