//! Data scaling as a user meets it: a tabular set whose features differ in range by 1000x,
//! the scaling kept in the model file, and the errors and warnings about bad values.

mod common;

use common::{edgeflow, fails_with, ok_json, tmpdir};
use edgeflow_core::order::DATA_SEED;
use edgeflow_core::Dataset;
use std::path::Path;

/// Enough epochs for the 1000x spread to show under global scaling.
const EPOCHS: &str = "4";

/// Column k's factor: geometric from 1 to 1000 over the 64 pixels.
fn factor(k: usize) -> f64 {
    1000f64.powf(k as f64 / 63.0)
}

/// The bundled digits with pixel k (0..16) multiplied by factor(k), label last.
fn write_spread_digits(path: &Path) {
    let d = Dataset::digits().unwrap();
    let mut text = String::new();
    for i in 0..d.len() {
        for (k, &v) in d.sample(i).iter().enumerate() {
            text.push_str(&format!("{},", v * 16.0 * factor(k)));
        }
        text.push_str(&format!("{}\n", d.y[i]));
    }
    std::fs::write(path, text).unwrap();
}

fn train(data: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "train",
        "--spec",
        "specs/digits.toml",
        "--data",
        data,
        "--epochs",
        EPOCHS,
        "--json",
    ];
    args.extend_from_slice(extra);
    ok_json(&args)
}

#[test]
fn features_spread_1_to_1000_learn_like_the_digits_and_the_model_keeps_the_scaling() {
    let dir = tmpdir("scale");
    let csv = dir.join("spread.csv");
    write_spread_digits(&csv);
    let csv_s = csv.to_str().unwrap();
    let model = dir.join("spread.model");

    let digits = train("digits", &[]);
    let feature = train(csv_s, &["--out", model.to_str().unwrap()]);
    let global = train(csv_s, &["--scale", "global"]);
    let acc = |v: &serde_json::Value| v["test_accuracy"].as_f64().unwrap() * 100.0;
    eprintln!(
        "digits {:.2}%, spread feature {:.2}%, spread global {:.2}%",
        acc(&digits),
        acc(&feature),
        acc(&global)
    );
    assert_eq!(feature["scale"], "feature");
    assert!(
        (acc(&feature) - acc(&digits)).abs() <= 1.0,
        "per-feature scaling: {} vs digits {}",
        acc(&feature),
        acc(&digits)
    );
    assert!(
        acc(&global) < acc(&digits) - 5.0,
        "global scaling squashes the small columns: {} vs digits {}",
        acc(&global),
        acc(&digits)
    );

    // the stored minima and maxima are exactly the training split's, bit for bit
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    assert_eq!(m["version"], 2);
    assert_eq!(m["scaling"]["kind"], "feature");
    let raw = Dataset::load(csv_s, None).unwrap();
    let (tr, _) = raw.split(DATA_SEED);
    for k in 0..64 {
        let col = tr.iter().map(|&i| raw.sample(i)[k]);
        let lo = col.clone().fold(f64::INFINITY, f64::min);
        let hi = col.fold(f64::NEG_INFINITY, f64::max);
        let stored = |f: &str| m["scaling"][f][k].as_f64().unwrap().to_bits();
        assert_eq!(
            (stored("min"), stored("max")),
            (lo.to_bits(), hi.to_bits()),
            "column {k}"
        );
    }

    // eval and infer apply the model's scaling: the accuracy at the end of training
    let e = ok_json(&[
        "eval",
        "--model",
        model.to_str().unwrap(),
        "--data",
        csv_s,
        "--json",
    ]);
    assert_eq!(e["test_accuracy"], feature["test_accuracy"]);
    assert_eq!(e["train_accuracy"], feature["train_accuracy"]);
    assert_eq!(e["scale"], "feature");
    let i = ok_json(&[
        "infer",
        "--model",
        model.to_str().unwrap(),
        "--data",
        csv_s,
        "--json",
    ]);
    assert_eq!(i["scale"], "feature");
    let (ntr, nte) = (
        feature["train_samples"].as_f64().unwrap(),
        feature["test_samples"].as_f64().unwrap(),
    );
    let correct =
        e["train_accuracy"].as_f64().unwrap() * ntr + e["test_accuracy"].as_f64().unwrap() * nte;
    assert_eq!(
        (i["accuracy"].as_f64().unwrap() * (ntr + nte)).round(),
        correct.round()
    );
    // a --scale that is not the model's is refused before any work
    fails_with(
        &[
            "eval",
            "--model",
            model.to_str().unwrap(),
            "--data",
            csv_s,
            "--scale",
            "global",
        ],
        &["--scale global", "spread.model", "--scale feature"],
    );

    // a model file from before the scaling was stored reads its data as global, as it did
    let mut old = m.clone();
    old["version"] = 1.into();
    old.as_object_mut().unwrap().remove("scaling");
    let old_path = dir.join("old.model");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let g = ok_json(&[
        "eval",
        "--model",
        old_path.to_str().unwrap(),
        "--data",
        csv_s,
        "--json",
    ]);
    assert_eq!(g["scale"], "global");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_values_are_named_and_an_outlier_is_warned_about() {
    let dir = tmpdir("scale-bad");
    // two classes, 40 samples each; column 1 spans 0..40
    let rows: Vec<[f64; 3]> = (0..80)
        .map(|i| [(i % 3) as f64 / 2.0, (i / 2) as f64, (i % 2) as f64])
        .collect();
    let write = |rows: &[[f64; 3]]| {
        let mut text = String::from("a,b,label\n");
        for r in rows {
            text.push_str(&format!("{},{},{}\n", r[0], r[1], r[2]));
        }
        text
    };
    let csv = dir.join("t.csv");
    std::fs::write(&csv, write(&rows)).unwrap();
    let csv_s = csv.to_str().unwrap();
    let args = |scale: &'static str| {
        vec![
            "train",
            "--spec",
            "specs/tiny.toml",
            "--data",
            csv_s,
            "--epochs",
            "1",
            "--scale",
            scale,
            "--json",
        ]
    };
    fails_with(
        &args("none"),
        &[
            "t.csv",
            "sample 4",
            "column 1 (`b`)",
            "value 2 ",
            "outside [0, 1]",
        ],
    );
    fails_with(&args("nope"), &["unknown scaling 'nope'"]);
    // the simulation takes CSV data too, scaled the same way
    fails_with(
        &[
            "sim",
            "--spec",
            "specs/tiny.toml",
            "--data",
            csv_s,
            "--samples",
            "4",
            "--scale",
            "none",
        ],
        &["t.csv", "column 1 (`b`)", "outside [0, 1]"],
    );
    let o = edgeflow(&args("feature"));
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));

    // one huge value in a training sample squashes its column: a warning naming file,
    // column and value
    let (tr, _) = Dataset::load(csv_s, None).unwrap().split(DATA_SEED);
    let mut bad = rows.clone();
    bad[tr[5]][1] = 1e300;
    std::fs::write(&csv, write(&bad)).unwrap();
    let o = edgeflow(&args("feature"));
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    for needle in ["warning", "t.csv", "column 1 (`b`)", "1e300", "outlier"] {
        assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
