//! The user's own serial path without a board: `edgeflow train --backend serial:/dev/pts/N`
//! opens a pseudo-terminal as its serial port (termios, raw mode, baud, read timeouts as for
//! a real tty), and behind the pty runs the Verilator co-simulation of the iCEBreaker board
//! top for specs/tiny.toml (PLL model, power-on hold, UART, word bridge, network). The run
//! must end in the reference model's state and accuracies, bit for bit.

mod common;

use common::{edgeflow_within, json_of, root, tmpdir};
use edgeflow_core::{Spec, State};
use edgeflow_flow::tools::{tool_for_test, VERILATOR};
use edgeflow_hdl::board::pty_bridge::PtyBridge;
use edgeflow_hdl::boards::board;
use edgeflow_hdl::design::Inner;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A baud the host's serial set-up accepts (the FT2232H's fastest) that divides the board's
/// 30 MHz clock into few clocks per bit, so the simulation stays short.
const BAUD: u32 = 3_000_000;

/// A small data set for tiny's 8 inputs and 4 classes: the class is the largest of four
/// feature pairs, so training has something to learn.
fn write_data(path: &Path, rows: usize) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut text = String::new();
    for _ in 0..rows {
        let f: Vec<f64> = (0..8)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 1000) as f64 / 1000.0
            })
            .collect();
        let pair = |k: usize| f[2 * k] + f[2 * k + 1];
        let label = (0..4).max_by(|&a, &b| pair(a).total_cmp(&pair(b))).unwrap();
        let cells: Vec<String> = f.iter().map(|v| format!("{v:.3}")).collect();
        text += &format!("{},{label}\n", cells.join(","));
    }
    std::fs::write(path, text).unwrap();
}

/// `edgeflow ARGS` over the serial port: a tty set-up that leaves a read blocked (canonical
/// mode ignores the read timeout) fails here instead of hanging the test.
fn over_the_port(args: &[&str]) -> Value {
    let o = edgeflow_within(args, Duration::from_secs(300))
        .unwrap_or_else(|| panic!("{args:?} never finished: blocked on the serial port"));
    json_of(args, o)
}

fn same(a: &Value, b: &Value, keys: &[&str], what: &str) {
    for k in keys {
        assert_eq!(a[k], b[k], "{what}: {k} differs from the reference");
    }
}

#[test]
fn training_over_a_pty_on_the_verilated_icebreaker_top_matches_the_reference() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let spec = Spec::load(&root().join("specs/tiny.toml")).unwrap();
    let inner = Inner::Network(spec.clone());
    let bridge = PtyBridge::start(&inner, board("icebreaker").unwrap(), BAUD).unwrap();
    let d = tmpdir("serial-pty");
    let data = d.join("tiny.csv");
    write_data(&data, 200);
    let data = data.to_str().unwrap();
    let port = format!("serial:{}@{BAUD}", bridge.slave_path().display());
    let train = |backend: &str, model: &Path| {
        over_the_port(&[
            "train",
            "--spec",
            "specs/tiny.toml",
            "--data",
            data,
            "--epochs",
            "1",
            "--backend",
            backend,
            "--out",
            model.to_str().unwrap(),
            "--json",
        ])
    };
    let (ref_model, pty_model) = (d.join("reference.model"), d.join("pty.model"));
    let r = train("reference", &ref_model);
    let s = train(&port, &pty_model);
    same(
        &s,
        &r,
        &["state_sha256", "train_accuracy", "test_accuracy"],
        "train over the pty",
    );
    assert_ne!(
        r["state_sha256"].as_str(),
        Some(State::initial(&spec).sha256().as_str()),
        "training changed nothing"
    );
    assert_eq!(
        std::fs::read(&pty_model).unwrap(),
        std::fs::read(&ref_model).unwrap(),
        "the saved models differ"
    );

    // The same port opened again by a second command (the bridge outlives the close):
    // inference of the reference's model on the simulated board, accuracies as the
    // reference gets them.
    let eval = |backend: &str| {
        over_the_port(&[
            "eval",
            "--model",
            ref_model.to_str().unwrap(),
            "--data",
            data,
            "--backend",
            backend,
            "--json",
        ])
    };
    same(
        &eval(&port),
        &eval("reference"),
        &["train_accuracy", "test_accuracy"],
        "eval over the pty",
    );
    bridge.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}
