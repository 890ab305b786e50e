//! The `edgeflow` binary as a user runs it: spec checks, training, model files, errors.

mod common;

use common::{edgeflow, fails_with, ok_json, root, tmpdir};

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
    // C + 2 today; overlapping block cycles cannot reach C = 32 (docs/design.md, "Why not
    // C": 2P ≥ 33 + 32), and the schedule run today is one of those the bound covers
    assert_eq!(v["derived"]["block_cycle_clocks"].as_u64(), Some(34));
    let least = v["overlap_bound"]["clocks"].as_u64().unwrap();
    assert!((33..=34).contains(&least), "{least}");
    let o = edgeflow(&["spec", "check", "specs/dey-mnist.toml"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("overlapped block cycles: at least {least} clocks")),
        "{text}"
    );
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
    // sigmoid, no rounding given: stochastic by default
    assert_eq!(v["rounding"], "stochastic");
    assert_eq!(v["rounding_given"], false);
    let r = ok_json(&["spec", "check", "specs/mnist-large.toml", "--json"]);
    assert_eq!(
        (&r["activation"], &r["rounding"]),
        (&"relu".into(), &"nearest".into())
    );
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
    let text = std::fs::read_to_string(root().join("specs/tiny.toml"))
        .unwrap()
        .replace("activation = ", "rounding = \"floor\"\nactivation = ");
    std::fs::write(&p, text).unwrap();
    fails_with(
        &["spec", "check", p.to_str().unwrap()],
        &["bad.toml", "rounding", "`nearest`", "`stochastic`"],
    );
}

#[test]
fn spec_check_shows_the_input_precision_and_warns_past_the_format() {
    let d = tmpdir("input-bits");
    let tiny = std::fs::read_to_string(root().join("specs/tiny.toml")).unwrap();
    // tiny has 7 fraction bits: 8 bits of input precision by default
    let v = ok_json(&["spec", "check", "specs/tiny.toml", "--json"]);
    assert_eq!(
        (
            v["input_bits"].as_u64(),
            v["warnings"].as_array().map(|w| w.len())
        ),
        (Some(8), Some(0))
    );
    let with = |b: u32| {
        let p = d.join(format!("in{b}.toml"));
        std::fs::write(
            &p,
            tiny.replacen("[fixed]", &format!("input_bits = {b}\n\n[fixed]"), 1),
        )
        .unwrap();
        p
    };
    let one = with(1);
    let v = ok_json(&["spec", "check", one.to_str().unwrap(), "--json"]);
    assert_eq!(
        (
            v["input_bits"].as_u64(),
            v["warnings"].as_array().map(|w| w.len())
        ),
        (Some(1), Some(0))
    );
    let o = edgeflow(&["spec", "check", one.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("inputs: 1 bits of precision (2 values in [0, 1])"));
    let wide = with(10);
    let o = edgeflow(&["spec", "check", wide.to_str().unwrap()]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: ")
            && err.contains("input_bits = 10 exceeds frac_bits + 1 = 8")
            && err.contains("extra 2 bits are rounded away"),
        "{err}"
    );
    let v = ok_json(&["spec", "check", wide.to_str().unwrap(), "--json"]);
    assert_eq!(v["warnings"].as_array().map(|w| w.len()), Some(1));
    fails_with(
        &["spec", "check", with(0).to_str().unwrap()],
        &[
            "in0.toml",
            "input_bits: = 0 must be between 1 and 16",
            "leave it out",
        ],
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
    let csv = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(csv.lines().count(), 1798, "header + one line per digit");
    // infer predicts every sample, eval the two halves of the split: the correct counts agree.
    let correct = csv
        .lines()
        .skip(1)
        .filter(|l| {
            let c: Vec<&str> = l.split(',').collect();
            c[1] == c[2]
        })
        .count();
    let (ntr, nte) = (
        a["train_samples"].as_u64().unwrap() as f64,
        a["test_samples"].as_u64().unwrap() as f64,
    );
    let from_eval =
        e["train_accuracy"].as_f64().unwrap() * ntr + e["test_accuracy"].as_f64().unwrap() * nte;
    assert_eq!(correct, from_eval.round() as usize);
    let j = ok_json(&["infer", "--model", model.to_str().unwrap(), "--json"]);
    assert_eq!(j["samples"], 1797);
    assert_eq!(j["accuracy"].as_f64().unwrap(), correct as f64 / 1797.0);
    let preds = j["predictions"].as_array().unwrap();
    for (p, line) in preds.iter().zip(csv.lines().skip(1)) {
        assert_eq!(p.to_string(), line.split(',').nth(1).unwrap());
    }

    // a fixed-point model has no float backend
    fails_with(
        &[
            "eval",
            "--model",
            model.to_str().unwrap(),
            "--backend",
            "float",
        ],
        &["--backend float", "reference"],
    );
    // a model whose staleness was edited is refused with the file and the field named
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    v["staleness"] = serde_json::json!([1, 1]);
    let stale = d.join("stale.model");
    std::fs::write(&stale, v.to_string()).unwrap();
    fails_with(
        &["eval", "--model", stale.to_str().unwrap()],
        &["stale.model", "\"staleness\"", "must exceed"],
    );

    // a save that fails (the name is taken by a directory) says so and leaves no temporary file
    let taken = d.join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--epochs",
            "1",
            "--out",
            taken.to_str().unwrap(),
        ],
        &["taken"],
    );
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

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

/// Bad values on the command line and in data files: each a clean failure that names the
/// option or file, before any training time is spent.
#[test]
fn bad_arguments_and_data_are_clear_errors() {
    let d = tmpdir("args");
    fails_with(
        &["train", "--spec", "specs/digits.toml", "--epochs", "0"],
        &["--epochs must be at least 1"],
    );
    fails_with(
        &["train", "--spec", "specs/digits.toml", "--epochs", "-1"],
        &["-1"],
    );
    fails_with(
        &["train", "--spec", "specs/digits.toml", "--plot", "c.pdf"],
        &["c.pdf", ".svg or .png"],
    );
    fails_with(
        &["pattern", "specs/tiny.toml", "--junction", "0"],
        &["--junction 0", "junctions 1 to 2"],
    );
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--backend",
            "opencl:99",
            "--epochs",
            "1",
        ],
        &["OpenCL"],
    );
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--backend",
            "opencl:",
            "--epochs",
            "1",
        ],
        &["opencl:", "names no device"],
    );
    let header = d.join("header.csv");
    std::fs::write(&header, "a,b,label\n").unwrap();
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--data",
            header.to_str().unwrap(),
        ],
        &["header.csv", "no samples"],
    );
    let one = d.join("one.csv");
    std::fs::write(&one, "1,2,0\n3,4,1\n").unwrap();
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--data",
            one.to_str().unwrap(),
        ],
        &["one.csv", "test set empty", "at least 3 samples"],
    );
    let nan = d.join("nan.csv");
    std::fs::write(&nan, "1,2,0\n3,nan,1\n").unwrap();
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--data",
            nan.to_str().unwrap(),
        ],
        &["nan.csv", "line 2, column 1", "not a finite number"],
    );
    // negative values scale per feature; only dividing by the largest value needs them ≥ 0
    let neg = d.join("neg.csv");
    std::fs::write(&neg, "1,2,0\n-1,2,1\n").unwrap();
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--data",
            neg.to_str().unwrap(),
            "--scale",
            "global",
        ],
        &["neg.csv", "negative", "--scale feature"],
    );
    let spec = d.join("nolr.toml");
    std::fs::write(
        &spec,
        std::fs::read_to_string(root().join("specs/tiny.toml"))
            .unwrap()
            .replace("learning_rate_shift = 2", ""),
    )
    .unwrap();
    fails_with(
        &["spec", "check", spec.to_str().unwrap()],
        &["nolr.toml", "missing field `learning_rate_shift`"],
    );
    std::fs::remove_dir_all(&d).ok();
}
