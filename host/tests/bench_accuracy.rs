//! `edgeflow bench --to-accuracy`: seconds of training to a test accuracy, per backend and
//! per board projection, and its bad input.

mod common;

use common::{edgeflow, fails_with, ok_json};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn digits_to_eighty_percent_per_backend_and_board() {
    let v = ok_json(&[
        "bench",
        "--spec",
        "specs/digits.toml",
        "--backends",
        "reference,serial:/dev/no-such-port",
        "--boards",
        "icebreaker,nexys4-ddr",
        "--samples",
        "50",
        "--repeat",
        "1",
        "--threads",
        "2",
        "--to-accuracy",
        "0.8",
        "--epochs",
        "8",
        "--json",
    ]);
    let t = &v["to_accuracy"];
    assert_eq!(t["target"], 0.8, "{t}");
    assert_eq!(t["max_epochs"], 8);
    let (n, n_test) = (
        t["train_samples"].as_u64().unwrap(),
        t["test_samples"].as_u64().unwrap(),
    );
    // digits: 1797 samples, a fifth held out for the test
    assert_eq!(n + n_test, 1797);
    let rows = t["backends"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["backend"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "reference",
            "float",
            "sparse-f32",
            "dense",
            "dense-minibatch",
            "serial:/dev/no-such-port"
        ]
    );
    for r in &rows[..5] {
        let name = &r["backend"];
        assert_eq!(r["method"], "trained", "{r}");
        assert_eq!(
            r["reached"], true,
            "{name} reaches 80 % within 8 epochs: {r}"
        );
        let e = r["epochs"].as_u64().unwrap();
        let acc: Vec<f64> = r["test_accuracy"]
            .as_array()
            .unwrap()
            .iter()
            .map(f)
            .collect();
        assert!((1..=8).contains(&e) && acc.len() as u64 == e, "{r}");
        // the first epoch at the target: every earlier one below it
        assert!(
            acc[acc.len() - 1] >= 0.8 && acc[..acc.len() - 1].iter().all(|&a| a < 0.8),
            "{r}"
        );
        assert!(acc.iter().all(|&a| (0.0..=1.0).contains(&a)));
        assert_eq!(r["samples"].as_u64().unwrap(), e * n, "{r}");
        assert!(f(&r["seconds"]) > 0.0, "{r}");
    }
    assert_eq!(rows[0]["kind"], "bit-exact");
    assert_eq!(rows[4]["kind"], "float");
    let need = rows[0]["samples"].as_u64().unwrap();
    let serial = &rows[5];
    assert_eq!(serial["method"], "reference samples");
    assert_eq!(
        (&serial["available"], &serial["reached"]),
        (&Value::Bool(false), &Value::Bool(false))
    );
    let proj = t["projections"].as_array().unwrap();
    assert_eq!(proj.len(), v["projections"].as_array().unwrap().len());
    assert!(proj.iter().any(|p| p["board"] == "icebreaker"));
    assert!(proj
        .iter()
        .any(|p| p["board"] == "nexys4-ddr" && p["clock_mhz"] == 15.0));
    for p in proj {
        // a board computes the reference's bits: the reference's samples at its own rate
        assert_eq!(p["samples"].as_u64().unwrap(), need, "{p}");
        let rate = f(&p["clock_mhz"]) * 1e6 / f(&p["clocks_per_sample"]);
        assert!(
            (f(&p["samples_per_second"]) - rate).abs() < 1e-6 * rate,
            "{p}"
        );
        assert!(
            (f(&p["seconds"]) - need as f64 / rate).abs() < 1e-9 * need as f64,
            "{p}"
        );
    }
}

#[test]
fn the_table_says_not_reached() {
    // 100 %: no backend gets every test sample right in one epoch
    let o = edgeflow(&[
        "bench",
        "--spec",
        "specs/digits.toml",
        "--backends",
        "reference",
        "--boards",
        "icebreaker",
        "--samples",
        "20",
        "--repeat",
        "1",
        "--to-accuracy",
        "1",
        "--epochs",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("time to 100.0 % test accuracy"), "{text}");
    assert!(
        text.contains("dense-minibatch") && text.contains("not reached in 1 epochs"),
        "{text}"
    );
    assert!(
        text.contains("not reached: the reference did not reach it"),
        "{text}"
    );
}

#[test]
fn a_bad_target_is_named_before_any_training() {
    let base = [
        "bench",
        "--spec",
        "specs/digits.toml",
        "--backends",
        "reference",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    fails_with(
        &with(&["--to-accuracy", "95"]),
        &["--to-accuracy 95", "fraction in (0, 1]", "give 0.95"],
    );
    fails_with(
        &with(&["--to-accuracy", "0"]),
        &["--to-accuracy 0", "fraction in (0, 1]"],
    );
    fails_with(&with(&["--to-accuracy=-0.5"]), &["fraction in (0, 1]"]);
    fails_with(
        &with(&["--to-accuracy", "0.9", "--epochs", "0"]),
        &["--epochs must be at least 1"],
    );
    fails_with(
        &with(&["--to-accuracy", "0.9", "--sweep", "z"]),
        &["--to-accuracy and --sweep"],
    );
    fails_with(
        &with(&["--to-accuracy", "0.9", "--data", "random"]),
        &["--to-accuracy needs a data set with a test split"],
    );
    fails_with(
        &with(&["--batch", "0"]),
        &["--batch and --threads must be at least 1"],
    );
}
