//! `edgeflow train --trace`: the per-junction measurements of where precision goes, in the
//! JSON history and as text, and its refusal where there is no fixed-point arithmetic.

mod common;
use common::*;

#[test]
fn trace_reports_every_junction_after_every_epoch() {
    let v = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "2",
        "--trace",
        "--json",
    ]);
    let history = v["history"].as_array().unwrap();
    assert_eq!(history.len(), 2);
    for epoch in history {
        let trace = epoch["trace"].as_array().unwrap();
        assert_eq!(trace.len(), 2, "{epoch}");
        for (j, t) in trace.iter().enumerate() {
            assert_eq!(t["junction"], j + 1);
            for k in [
                "ff_products_outside",
                "sums_saturated",
                "updates_below_half_step",
                "weights_at_range_ends",
            ] {
                let x = t[k].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&x), "{k} = {x}");
            }
            // digits is sigmoid: its FF products cannot leave the range
            assert_eq!(t["ff_products_outside"], 0.0);
        }
    }
    // without --trace the history has none
    let v = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--json",
    ]);
    assert!(v["history"][0].get("trace").is_none());
    // as text: one line per junction under each epoch
    let o = edgeflow(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--trace",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    for j in [
        "junction 1: products outside",
        "junction 2: products outside",
    ] {
        assert!(err.contains(j), "{err}");
    }
}

#[test]
fn trace_needs_fixed_point_arithmetic() {
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--epochs",
            "1",
            "--trace",
            "--backend",
            "float",
        ],
        &[
            "--trace measures the fixed-point arithmetic",
            "--backend reference",
        ],
    );
}
