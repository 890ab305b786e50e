//! `edgeflow train --threads`: the reference model's thread count changes no bit of the
//! trained state, and is refused where no reference model trains.

mod common;
use common::*;

#[test]
fn any_thread_count_trains_the_same_state() {
    let sha = |threads: &str| {
        let v = ok_json(&[
            "train",
            "--spec",
            "specs/dey-mnist.toml",
            "--epochs",
            "2",
            "--threads",
            threads,
            "--json",
        ]);
        v["state_sha256"].as_str().unwrap().to_string()
    };
    let one = sha("1");
    assert_eq!(one.len(), 64);
    for t in ["2", "3"] {
        assert_eq!(sha(t), one, "{t} threads");
    }
}

#[test]
fn threads_without_a_reference_model_are_refused() {
    fails_with(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--epochs",
            "1",
            "--backend",
            "float",
            "--threads",
            "2",
        ],
        &["--threads", "--backend float"],
    );
    fails_with(
        &["train", "--spec", "specs/digits.toml", "--threads", "0"],
        &["--threads"],
    );
}
