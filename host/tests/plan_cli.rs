//! `edgeflow plan` and `edgeflow train --plan` as a user runs them.

mod common;

use common::{edgeflow, fails_with, ok_json, root};
use serde_json::Value;

#[test]
fn mnist_large_fits_no_single_board_but_four() {
    for b in ["icebreaker", "alchitry-cu", "nexys4-ddr", "opencl-device"] {
        fails_with(
            &["plan", "--spec", "specs/mnist-large.toml", "--boards", b],
            &["mnist-large does not fit", "short"],
        );
    }
    for b in ["nexys4-ddrx4", "opencl-devicex4"] {
        let v = ok_json(&[
            "plan",
            "--spec",
            "specs/mnist-large.toml",
            "--boards",
            b,
            "--json",
        ]);
        let stages = v["stages"].as_array().unwrap();
        assert!(stages.len() >= 2, "{b}: {v}");
        // The stages cover every junction once, in order.
        let mut next = 1;
        for s in stages {
            assert_eq!(s["junctions"][0].as_u64(), Some(next));
            next = s["junctions"][1].as_u64().unwrap() + 1;
        }
        assert_eq!(next as usize, v["spec"]["layers"].as_array().unwrap().len());
        let sps = v["samples_per_second"].as_f64().unwrap();
        let lb = v["lower_bound"]["samples_per_second"].as_f64().unwrap();
        assert!(sps > 0.0 && sps <= lb * (1.0 + 1e-9), "{sps} vs bound {lb}");
        for base in v["baselines"].as_array().unwrap() {
            if let Some(f) = base["figures"].as_object() {
                assert!(
                    f["samples_per_second"].as_f64().unwrap() <= sps * (1.0 + 1e-9),
                    "baseline beats the plan: {base}"
                );
            }
        }
        assert!(v["planning_seconds"].as_f64().unwrap() < 1.0);
    }
}

#[test]
fn plan_file_drives_training() {
    let dir = std::env::temp_dir().join(format!("edgeflow-plan-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    let p = plan.to_str().unwrap();
    let o = edgeflow(&[
        "plan",
        "--spec",
        "specs/digits.toml",
        "--boards",
        "icebreakerx2",
        "--all-boards",
        "-o",
        p,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for n in [
        "predicted",
        "bottleneck",
        "lower bound",
        "equal junction counts",
        "parameter-balanced",
    ] {
        assert!(text.contains(n), "plan output lacks {n}: {text}");
    }
    let curve = dir.join("curve.svg");
    let v = ok_json(&[
        "train",
        "--plan",
        p,
        "--epochs",
        "2",
        "--verify",
        "--plot",
        curve.to_str().unwrap(),
        "--json",
    ]);
    // --verify trained the reference model with the plan's staleness on the same samples
    // (digits is sigmoid, so stochastic rounding: the lane streams run across both epochs).
    assert_eq!(v["reference_sha256"], v["state_sha256"]);
    assert!(std::fs::read_to_string(&curve).unwrap().starts_with("<svg"));
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(
        stages.len(),
        serde_json::from_str::<Value>(&std::fs::read_to_string(&plan).unwrap()).unwrap()["stages"]
            .as_array()
            .unwrap()
            .len()
    );
    for s in stages {
        assert!(s["measured_seconds_per_sample"].as_f64().unwrap() > 0.0);
        assert!(s["predicted_block_cycle_ps"].as_u64().unwrap() > 0);
    }
    assert_eq!(v["state_sha256"].as_str().unwrap().len(), 64);
    fails_with(
        &["train", "--plan", p, "--backend", "float"],
        &["--plan runs on backend reference", "not 'float'"],
    );
    fails_with(
        &["train", "--plan", p, "--epochs", "1", "--plot", "x.pdf"],
        &["x.pdf", ".svg or .png"],
    );
    std::fs::write(dir.join("bad.json"), "{}").unwrap();
    fails_with(
        &["train", "--plan", dir.join("bad.json").to_str().unwrap()],
        &["bad.json"],
    );
    // A truncated plan, and one whose stages were edited to leave out a junction.
    let full = std::fs::read_to_string(&plan).unwrap();
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    fails_with(
        &["train", "--plan", cut.to_str().unwrap(), "--epochs", "1"],
        &["cut.json", "truncated", "re-run edgeflow plan"],
    );
    let mut edited: Value = serde_json::from_str(&full).unwrap();
    let last = edited["stages"].as_array().unwrap().len() - 1;
    edited["stages"][last]["junctions"][1] = 1.into();
    let gap = dir.join("gap.json");
    std::fs::write(&gap, edited.to_string()).unwrap();
    fails_with(
        &["train", "--plan", gap.to_str().unwrap(), "--epochs", "1"],
        &["gap.json", "stages"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--link mpi-loopback` replaces every board's own link by the MPI figure: the plan's boards
/// carry it and its links' latency is that figure, not the boards' PCIe-class one.
#[test]
fn a_named_link_replaces_the_boards_own() {
    let base = [
        "plan",
        "--spec",
        "specs/mnist-large.toml",
        "--boards",
        "opencl-devicex4",
    ];
    let own = common::ok_json(&[&base[..], &["--json"]].concat());
    let mpi = common::ok_json(&[&base[..], &["--link", "mpi-loopback", "--json"]].concat());
    let lat = mpi["boards"][0]["link_latency_us"].as_f64().unwrap();
    assert_ne!(lat, own["boards"][0]["link_latency_us"].as_f64().unwrap());
    for b in mpi["boards"].as_array().unwrap() {
        assert_eq!(b["link_latency_us"].as_f64(), Some(lat), "{b}");
        assert_eq!(b["link_mbps"], mpi["boards"][0]["link_mbps"], "{b}");
    }
    for l in mpi["links"].as_array().unwrap() {
        assert_eq!(l["latency_ps"].as_f64(), Some((lat * 1e6).ceil()), "{l}");
    }
}

#[test]
fn plan_errors_name_the_problem() {
    fails_with(
        &["plan", "--spec", "specs/tiny.toml", "--boards", "nosuch"],
        &["unknown board 'nosuch'", "icebreaker"],
    );
    fails_with(
        &["plan", "--spec", "specs/tiny.toml", "--boards", ""],
        &["--boards is empty"],
    );
    fails_with(
        &[
            "plan",
            "--spec",
            "specs/tiny.toml",
            "--boards",
            "icebreaker",
            "--link",
            "carrier-pigeon",
        ],
        &["--link carrier-pigeon", "mpi-loopback"],
    );
    fails_with(
        &[
            "plan",
            "--spec",
            "specs/nosuch.toml",
            "--boards",
            "icebreaker",
        ],
        &["nosuch.toml", "cannot be read"],
    );
    fails_with(
        &[
            "plan",
            "--spec",
            "specs/tiny.toml",
            "--boards",
            "icebreakerx3",
            "--all-boards",
        ],
        &[
            "--all-boards",
            "3 boards for the 2 junctions",
            "at most 2 boards",
        ],
    );
}

/// `edgeflow cost --fit` on runs made from known constants gives those constants back, leaves
/// out a run whose memories spilled past the part's block RAMs, and names what is missing.
#[test]
fn cost_fit_recovers_known_constants_from_runs() {
    let dir = common::tmpdir("cost-fit");
    // (junctions, lane bits, 16x16 LUT multipliers, block RAMs used)
    let cases = [
        (2.0, 32.0, 0.0, 20.0),
        (2.0, 48.0, 0.0, 25.0),
        (3.0, 72.0, 16.0, 25.0),
        (2.0, 60.0, 8.0, 17.0),
        (2.0, 96.0, 8.0, 38.0),
    ];
    for (i, &(j, s, m, bram)) in cases.iter().enumerate() {
        // board 660 (held), 900 per junction, 25 per lane bit, 800 per LUT multiplier; the
        // spilled last case is far off the law and must not move the fit
        let logic = if bram > 30.0 {
            99999.0
        } else {
            660.0 + 900.0 * j + 25.0 * s + 800.0 * m
        };
        let ff = 50.0 + 20.0 * s + 100.0 * m;
        let cost = serde_json::json!({
            "board": "icebreaker", "spec": format!("c{i}"),
            "rows": [{"resource": "LUT", "synthesized": logic}, {"resource": "FF", "synthesized": ff}],
            "terms": {"junctions": j, "lane_bits": s, "lut_multipliers": m, "lut_multiplier_units": m},
        });
        let synth = serde_json::json!({"table": {"rows": [
            {"resource": "BRAM", "used": bram, "available": 30.0}]}});
        std::fs::write(dir.join(format!("c{i}.cost.json")), cost.to_string()).unwrap();
        std::fs::write(dir.join(format!("c{i}.synth.json")), synth.to_string()).unwrap();
    }
    let d = dir.to_str().unwrap();
    // a board of our own, so the held board term is the test's and not the catalog's
    let board = dir.join("cal.toml");
    std::fs::write(
        &board,
        "name = \"icebreaker\"\nclock_mhz = 12.0\ndsp = 8\nlogic = 5280\n\
         lut_per_multiplier = 1\nram_bits = 1000000\nram_blocks = 30\nram_block_width = 16\n\
         link_mbps = 1.0\nlink_latency_us = 1.0\n[fit]\nlogic_per_junction = 1\n\
         logic_per_lane_bit = 1\nlogic_per_board = 660\nff_per_board = 1\nff_per_lane_bit = 1\n\
         ff_per_lut_multiplier = 1\n",
    )
    .unwrap();
    let b = board.to_str().unwrap();
    let v = ok_json(&["cost", "--fit", d, "--board", b, "--json"]);
    let f = &v["fit"];
    assert_eq!(
        (
            f["logic_per_junction"].as_u64(),
            f["logic_per_lane_bit"].as_u64(),
            v["lut_per_multiplier"].as_u64(),
            f["logic_per_board"].as_u64()
        ),
        (Some(900), Some(25), Some(800), Some(660)),
        "{v}"
    );
    assert_eq!(
        (
            f["ff_per_board"].as_u64(),
            f["ff_per_lane_bit"].as_u64(),
            f["ff_per_lut_multiplier"].as_u64()
        ),
        (Some(50), Some(20), Some(100)),
        "{v}"
    );
    assert_eq!(v["skipped"][0]["case"], "c4", "{v}");
    assert_eq!(v["cases"].as_array().unwrap().len(), 4);
    // a run written before the model reported its terms
    std::fs::write(
        dir.join("c0.cost.json"),
        r#"{"board": "icebreaker", "rows": []}"#,
    )
    .unwrap();
    fails_with(
        &["cost", "--fit", d, "--board", b],
        &["has no model terms", "COST_ONLY=1"],
    );
    fails_with(
        &[
            "cost",
            "--fit",
            "/nonexistent/runs",
            "--board",
            "icebreaker",
        ],
        &["cannot read calibration directory"],
    );
}

/// The ULX3S board files travel with the binary: from a directory without `boards/`, `cost`
/// and `plan` find them by name, with the file's own constants.
#[test]
fn ulx3s_boards_are_found_from_any_directory() {
    let d = common::tmpdir("boards-anywhere");
    let spec = root().join("specs/tiny.toml");
    for board in ["ulx3s-85f", "ulx3s-45f", "ulx3s-12f"] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_edgeflow"))
            .args(["cost", "--spec", spec.to_str().unwrap(), "--board", board])
            .args(["--json"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let file = std::fs::read_to_string(root().join(format!("boards/{board}.toml"))).unwrap();
        let logic: u64 = file
            .lines()
            .find_map(|l| l.strip_prefix("logic = "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(v["usage"]["logic_available"], logic, "{board}: {v}");
    }
    std::fs::remove_dir_all(&d).ok();
}
