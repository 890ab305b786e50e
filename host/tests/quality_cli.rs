//! `edgeflow quality` on a two-network grid for one epoch: the report's fields, its files,
//! and that both arithmetics learn the digits at all.

mod common;

use common::{fails_with, ok_json, tmpdir};

#[test]
fn a_small_grid_reports_both_accuracies_and_the_gap() {
    let dir = tmpdir("quality");
    let v = ok_json(&[
        "quality",
        "--activations",
        "sigmoid",
        "--widths",
        "10,16",
        "--junctions",
        "2",
        "--epochs",
        "1",
        "--seeds",
        "1,2",
        "--json",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(v["seeds"], serde_json::json!([1, 2]));
    let nets = v["networks"].as_array().unwrap();
    assert_eq!(nets.len(), 2);
    let mut worst = f64::MIN;
    for (n, width) in nets.iter().zip([10, 16]) {
        assert_eq!(n["width"], width);
        assert_eq!(n["activation"], "sigmoid");
        assert_eq!(n["junctions"], 2);
        assert_eq!(n["learning_rate_shift"], 2);
        let b = n["bit_exact_test_accuracy"].as_f64().unwrap();
        let f = n["float_test_accuracy"].as_f64().unwrap();
        for a in [b, f] {
            assert!((0.0..=1.0).contains(&a), "{n}");
        }
        // one epoch of sigmoid on the digits is far above chance (10%) in both arithmetics
        assert!(b > 0.5 && f > 0.5, "{n}");
        assert_eq!(n["float_learns"], true);
        let gap = n["gap_points"].as_f64().unwrap();
        assert!((gap - (f - b) * 100.0).abs() < 1e-9, "{n}");
        // one result per seed, and the row's accuracies are their means
        let per = |k: &str| -> Vec<f64> {
            n[k].as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let (bs, fs) = (
            per("bit_exact_test_accuracies"),
            per("float_test_accuracies"),
        );
        assert_eq!((bs.len(), fs.len()), (2, 2), "{n}");
        assert!((b - (bs[0] + bs[1]) / 2.0).abs() < 1e-12, "{n}");
        assert!((f - (fs[0] + fs[1]) / 2.0).abs() < 1e-12, "{n}");
        let shas = n["state_sha256s"].as_array().unwrap();
        assert_eq!(shas.len(), 2);
        assert!(shas.iter().all(|s| s.as_str().unwrap().len() == 64));
        assert_ne!(shas[0], shas[1], "the seeds train different networks");
        assert_eq!(n["rounding"], "stochastic");
        assert!(n["spec"]
            .as_str()
            .unwrap()
            .contains("activation = \"sigmoid\""));
        worst = worst.max(gap);
    }
    assert_eq!(v["worst_gap_points"].as_f64().unwrap(), worst);
    assert_eq!(v["epochs"], 1);
    let md = std::fs::read_to_string(dir.join("quality.md")).unwrap();
    assert!(
        md.contains("Worst gap") && md.contains("sigmoid-w16-j2"),
        "{md}"
    );
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("quality.json")).unwrap()).unwrap();
    assert_eq!(written, v);
    assert!(std::fs::read_to_string(dir.join("quality.svg"))
        .unwrap()
        .contains("<svg"));
    assert!(std::fs::read(dir.join("quality.png"))
        .unwrap()
        .starts_with(b"\x89PNG"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_grids_and_overrides_fail_before_training() {
    let base = [
        "quality",
        "--epochs",
        "1",
        "--widths",
        "10",
        "--junctions",
        "2",
    ];
    let with = |extra: &[&'static str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        a
    };
    fails_with(&with(&["--set", "no_such_option=1"]), &["no_such_option"]);
    fails_with(&with(&["--set", "learning_rate_shift"]), &["KEY=VALUE"]);
    fails_with(
        &with(&["--set", "learning_rate_shift=40"]),
        &["learning_rate_shift", "exceeds 15"],
    );
    fails_with(&with(&["--activations", "swish"]), &["swish"]);
    fails_with(
        &with(&["--junctions", "5"]),
        &["--junctions 5", "2, 3 or 4"],
    );
    fails_with(&["quality", "--epochs", "0"], &["--epochs"]);
}
