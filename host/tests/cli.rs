//! The `edgeflow` binary as a user runs it: spec checks, training, model files, errors.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn edgeflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_edgeflow"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("edgeflow runs")
}

fn ok_json(args: &[&str]) -> Value {
    let o = edgeflow(args);
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

fn fails_with(args: &[&str], needles: &[&str]) {
    let o = edgeflow(args);
    assert!(!o.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&o.stderr);
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}: {err}");
    }
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("edgeflow-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn dey_mnist_spec_check_matches_the_published_design() {
    let v = ok_json(&["spec", "check", "specs/dey-mnist.toml", "--json"]);
    let j = v["derived"]["junctions"].as_array().unwrap();
    assert_eq!(j.len(), 2);
    assert_eq!(
        (j[0]["clocks"].as_u64(), j[1]["clocks"].as_u64()),
        (Some(32), Some(32))
    );
    assert_eq!(
        (j[0]["fan_in"].as_u64(), j[1]["fan_in"].as_u64()),
        (Some(64), Some(32))
    );
    assert_eq!(
        (j[0]["density"].as_f64(), j[1]["density"].as_f64()),
        (Some(0.0625), Some(0.5))
    );
    assert_eq!(
        (j[0]["staleness"].as_u64(), j[1]["staleness"].as_u64()),
        (Some(3), Some(1))
    );
    // FF + BP multipliers of the published design: 224 of the xc7a100t's 240 DSPs
    let ff_bp: u64 = j
        .iter()
        .map(|x| x["multipliers_ff"].as_u64().unwrap() + x["multipliers_bp"].as_u64().unwrap())
        .sum();
    assert_eq!(ff_bp, 224);
}

#[test]
fn bundled_specs_are_valid_and_digits_is_sparse_enough() {
    for s in [
        "specs/tiny.toml",
        "specs/digits.toml",
        "specs/dey-mnist.toml",
    ] {
        ok_json(&["spec", "check", s, "--json"]);
    }
    let v = ok_json(&["spec", "check", "specs/digits.toml", "--json"]);
    for j in v["derived"]["junctions"].as_array().unwrap() {
        assert!(j["density"].as_f64().unwrap() <= 0.25);
    }
    // fits the UP5K's 8 DSPs
    assert!(v["derived"]["multipliers"].as_u64().unwrap() <= 8);
}

#[test]
fn bad_spec_names_file_field_rule_and_fix() {
    let d = tmpdir("bad");
    let p = d.join("bad.toml");
    let text = std::fs::read_to_string(root().join("specs/tiny.toml"))
        .unwrap()
        .replace("z = [4, 2]", "z = [3, 2]");
    std::fs::write(&p, text).unwrap();
    fails_with(
        &["spec", "check", p.to_str().unwrap()],
        &[
            "bad.toml",
            "junction 1: z[0]",
            "must divide the left layer size 8",
            "try 2 or 4",
        ],
    );
    fails_with(
        &["train", "--spec", p.to_str().unwrap(), "--epochs", "1"],
        &["bad.toml"],
    );
}

#[test]
fn pattern_dump_is_clash_free_and_complete() {
    let v = ok_json(&["pattern", "specs/tiny.toml", "--junction", "2", "--json"]);
    let edges = v["edges"].as_array().unwrap();
    let z = v["z"].as_u64().unwrap() as usize;
    assert_eq!(edges.len(), 16);
    for c in edges.chunks(z) {
        let mut banks: Vec<u64> = c.iter().map(|e| e["bank"].as_u64().unwrap()).collect();
        banks.sort();
        banks.dedup();
        assert_eq!(banks.len(), z);
    }
    for e in edges {
        assert_eq!(
            e["left"].as_u64().unwrap(),
            e["row"].as_u64().unwrap() * z as u64 + e["bank"].as_u64().unwrap()
        );
    }
    fails_with(
        &["pattern", "specs/tiny.toml", "--junction", "3"],
        &["junctions 1 to 2"],
    );
}

#[test]
fn digits_reaches_the_accuracy_targets_deterministically() {
    let d = tmpdir("digits");
    let model = d.join("digits.model");
    let plot = d.join("curve.svg");
    let a = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "30",
        "--json",
        "--out",
        model.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    for k in [
        "spec",
        "backend",
        "epochs",
        "train_accuracy",
        "test_accuracy",
        "samples_per_second",
        "state_sha256",
    ] {
        assert!(a.get(k).is_some(), "missing key {k}");
    }
    assert_eq!(a["backend"], "reference");
    let acc = a["test_accuracy"].as_f64().unwrap();
    assert!(acc >= 0.95, "bit-exact reference test accuracy {acc}");
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));

    // same spec, same seed → same state
    let b = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "30",
        "--json",
    ]);
    assert_eq!(a["state_sha256"], b["state_sha256"]);

    let f = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "30",
        "--backend",
        "float",
        "--json",
    ]);
    assert!(
        f["test_accuracy"].as_f64().unwrap() >= 0.96,
        "float {}",
        f["test_accuracy"]
    );
    assert!(f["state_sha256"].is_null());

    // eval of the saved model reproduces the final accuracy and the state hash
    let e = ok_json(&["eval", "--model", model.to_str().unwrap(), "--json"]);
    assert_eq!(e["test_accuracy"], a["test_accuracy"]);
    assert_eq!(e["state_sha256"], a["state_sha256"]);

    let o = edgeflow(&["infer", "--model", model.to_str().unwrap()]);
    assert!(o.status.success());
    let lines = String::from_utf8_lossy(&o.stdout).lines().count();
    assert_eq!(lines, 1798, "header + one line per digit");

    // a truncated model is a clear error, and nothing is half-written by a failed save
    let full = std::fs::read(&model).unwrap();
    let cut = d.join("cut.model");
    std::fs::write(&cut, &full[..full.len() / 3]).unwrap();
    fails_with(
        &["eval", "--model", cut.to_str().unwrap()],
        &["cut.model", "truncated"],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn data_that_does_not_fit_the_spec_is_a_clear_error() {
    fails_with(
        &["train", "--spec", "specs/tiny.toml", "--epochs", "1"],
        &["64 features", "only 8 inputs"],
    );
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--data",
            "/nonexistent.csv",
        ],
        &["/nonexistent.csv", "cannot be read"],
    );
    fails_with(
        &["train", "--spec", "specs/digits.toml", "--backend", "nope"],
        &["unknown backend 'nope'"],
    );
}
