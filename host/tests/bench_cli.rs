//! `edgeflow bench` as a user runs it: every backend reported (measured or with the reason it
//! is not), the board projections the issue asks for, the sweeps, the plots, bad input.

mod common;

use common::{edgeflow, fails_with, ok_json, tmpdir};

#[test]
fn dey_mnist_reports_backends_baselines_and_the_published_clock() {
    let d = tmpdir("bench-dey");
    let png = d.join("bench.png");
    let v = ok_json(&[
        "bench",
        "--spec",
        "specs/dey-mnist.toml",
        "--backends",
        "reference,serial:/dev/no-such-port",
        "--samples",
        "40",
        "--repeat",
        "1",
        "--json",
        "--plot",
        png.to_str().unwrap(),
    ]);
    // the default data fits dey-mnist's 784 inputs
    assert_eq!(v["data"], "digits", "{v}");
    let b = v["backends"].as_array().unwrap();
    let names: Vec<&str> = b.iter().map(|m| m["backend"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "reference",
            "float",
            "sparse-f32",
            "dense",
            "dense-minibatch",
            "serial:/dev/no-such-port"
        ],
        "CPU references first, the baselines always, the unavailable one kept"
    );
    let r = &b[0];
    assert_eq!(r["available"], true);
    assert_eq!(r["bit_exact"], true);
    assert_eq!(r["samples"], 40);
    // 4096 edges FF+UP, 1024 edges FF+BP+UP
    assert_eq!(r["edge_ops_per_sample"], 4096 * 2 + 1024 * 3);
    assert!(r["train_samples_per_second"].as_f64().unwrap() > 0.0);
    assert!(r["speedup_vs_float"].as_f64().unwrap() > 0.0);
    assert!(r["speedup_vs_dense"].as_f64().unwrap() > 0.0);
    let bad = &b[5];
    assert_eq!(bad["available"], false);
    assert!(bad["unavailable_reason"]
        .as_str()
        .unwrap()
        .contains("cannot open serial port /dev/no-such-port"));
    // nexys4-ddr at the published 15 MHz: 34 clocks per sample from the spec
    let p = v["projections"].as_array().unwrap();
    let published = p
        .iter()
        .find(|x| x["board"] == "nexys4-ddr" && x["clock_mhz"] == 15.0)
        .expect("nexys4-ddr at 15 MHz");
    assert_eq!(published["clocks_per_sample"], 34.0);
    assert!((published["samples_per_second"].as_f64().unwrap() - 15e6 / 34.0).abs() < 1e-3);
    assert!(published["clock_source"]
        .as_str()
        .unwrap()
        .contains("published"));
    let boards = v["boards"].as_array().unwrap();
    let nexys = boards.iter().find(|x| x["board"] == "nexys4-ddr").unwrap();
    assert!(nexys["fmax_note"].as_str().unwrap().contains("--freq"));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
}

#[test]
fn a_clock_and_a_place_and_route_report_add_clocks() {
    let d = tmpdir("bench-fmax");
    let report = d.join("r.json");
    std::fs::write(&report, r#"{"board":"icebreaker","fmax_mhz":27.5}"#).unwrap();
    let out = d.join("b.json");
    let o = edgeflow(&[
        "bench",
        "--spec",
        "specs/digits.toml",
        "--backends",
        "reference",
        "--boards",
        "nexys4-ddr",
        "--freq",
        "62.5",
        "--synth-report",
        report.to_str().unwrap(),
        "--samples",
        "20",
        "--repeat",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("nexys4-ddr") && text.contains("JSON written to"),
        "-o FILE still prints the table: {text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let p = v["projections"].as_array().unwrap();
    let has = |b: &str, mhz: f64| p.iter().any(|x| x["board"] == b && x["clock_mhz"] == mhz);
    assert!(has("nexys4-ddr", 62.5) && has("nexys4-ddr", 15.0) && has("nexys4-ddr", 100.0));
    assert!(
        has("icebreaker", 27.5),
        "the report's board joins with its Fmax"
    );
    // the iCEBreaker builds digits with registered reads (one clock) and the deep pipeline
    // (two): C + 2 + 1 + 2 = 64·20/2 + 5 clocks a sample
    let ice: Vec<_> = p.iter().filter(|x| x["board"] == "icebreaker").collect();
    assert!(
        !ice.is_empty() && ice.iter().all(|x| x["clocks_per_sample"] == 645.0),
        "{ice:?}"
    );
    assert!(
        !has("nexys4-ddr", 27.5),
        "a report's Fmax belongs to its board only"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written["spec"], "digits");
}

#[test]
fn a_sweep_grows_the_edges_and_plots_both_formats() {
    let d = tmpdir("bench-sweep");
    let (svg, png) = (d.join("w.svg"), d.join("w.png"));
    let v = ok_json(&[
        "bench",
        "--spec",
        "specs/dey-mnist.toml",
        "--sweep",
        "density",
        "--backends",
        "reference",
        "--samples",
        "10",
        "--repeat",
        "1",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
    ]);
    let pts = v["points"].as_array().unwrap();
    assert!(pts.len() >= 4);
    let edges: Vec<u64> = pts.iter().map(|p| p["edges"].as_u64().unwrap()).collect();
    assert!(edges.windows(2).all(|e| e[0] < e[1]), "{edges:?}");
    assert!(pts.iter().all(|p| p["backends"][0]["bit_exact"] == true));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
}

#[test]
fn bad_input_is_named() {
    fails_with(
        &["bench", "--spec", "specs/digits.toml", "--plot", "x.pdf"],
        &["x.pdf", ".svg or .png"],
    );
    fails_with(
        &[
            "bench",
            "--spec",
            "specs/digits.toml",
            "--boards",
            "no-such-board",
        ],
        &["unknown board 'no-such-board'", "nexys4-ddr"],
    );
    fails_with(
        &["bench", "--spec", "specs/digits.toml", "--freq=0"],
        &["--freq 0", "positive"],
    );
    // the retired names still parse, as hidden aliases of the new ones
    fails_with(
        &["bench", "--spec", "specs/digits.toml", "--fmax=0"],
        &["--freq 0", "positive"],
    );
    // --json is a flag: a report file is named with -o
    fails_with(
        &["bench", "--spec", "specs/digits.toml", "--json", "r.json"],
        &["unexpected argument 'r.json'"],
    );
    fails_with(
        &["bench", "--spec", "specs/digits.toml", "--samples", "0"],
        &["--samples"],
    );
}

/// tiny (8 inputs, 4 outputs) does not take the bundled digits (64 features, 10 classes):
/// without --data bench trains on random samples made for it and says so; `--data random`
/// asks for them; `--data digits` is refused naming `--data random` (a spec the digits fit
/// keeps them: the dey-mnist test).
#[test]
fn any_spec_is_benchmarked_on_random_samples() {
    let run = |data: &[&str]| {
        let args = [
            &[
                "bench",
                "--spec",
                "specs/tiny.toml",
                "--backends",
                "reference",
            ][..],
            data,
            &[
                "--samples",
                "50",
                "--repeat",
                "1",
                "--boards",
                "icebreaker",
                "--json",
            ],
        ]
        .concat();
        let o = edgeflow(&args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (common::json_of(&args, o), err)
    };
    for data in [&[][..], &["--data", "random"]] {
        let (v, err) = run(data);
        assert_eq!(v["data"], "random", "{data:?}: {v}");
        assert_eq!(v["layers"], serde_json::json!([8, 8, 4]), "{v}");
        let r = &v["backends"][0];
        assert_eq!(
            (
                &r["backend"],
                &r["available"],
                &r["bit_exact"],
                &r["samples"]
            ),
            (&"reference".into(), &true.into(), &true.into(), &50.into()),
            "{r}"
        );
        // the note only when the user did not choose the data
        assert_eq!(
            err.contains("does not fit spec 'tiny' (8 inputs, 4 outputs): benchmarking on 1000 random samples"),
            data.is_empty(),
            "{data:?}: {err}"
        );
    }
    fails_with(
        &["bench", "--spec", "specs/tiny.toml", "--data", "digits"],
        &["64 features", "only 8 inputs", "--data random"],
    );
}

/// `edgeflow bench` on digits with the reference backend only and a few samples, plus `extra`
/// arguments and environment: the board projections it wrote.
fn projections(extra: &[&str], env: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let out = tmpdir("bench-proj").join(format!("{}.json", extra.len() + env.len()));
    let mut args = vec![
        "bench",
        "--spec",
        "specs/digits.toml",
        "--backends",
        "reference",
        "--samples",
        "20",
        "--repeat",
        "1",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = common::edgeflow_env(&args, env);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    v["projections"].as_array().unwrap().clone()
}

fn has(p: &[serde_json::Value], board: &str, mhz: f64) -> bool {
    p.iter()
        .any(|x| x["board"] == board && x["clock_mhz"] == mhz)
}

const XC7_REPORT: &str = r#"{"fmax_mhz":MHZ,"fmax_kind":"pre-route estimate","table":{"part":"XC7A100T-1CSG324","rows":[]}}"#;

/// An `edgeflow synth` report names a part, not a board: its Fmax goes to the boards built on
/// that part and to no other.
#[test]
fn a_synthesis_report_fmax_goes_to_boards_of_its_part() {
    let report = tmpdir("bench-part").join("s.json");
    std::fs::write(&report, XC7_REPORT.replace("MHZ", "24.5")).unwrap();
    let p = projections(
        &[
            "--boards",
            "nexys4-ddr,icebreaker",
            "--synth-report",
            report.to_str().unwrap(),
        ],
        &[],
    );
    assert!(has(&p, "nexys4-ddr", 24.5), "{p:?}");
    assert!(
        !has(&p, "icebreaker", 24.5),
        "an XC7 Fmax projected on an iCE40: {p:?}"
    );
}

/// Without --synth-report the bench finds what `edgeflow synth` kept for exactly this design:
/// the report filed under the SHA-256 of its Verilog (computed here from the hdl crate, not by
/// the code under test) projects its part's boards; one filed under other Verilog does not.
#[test]
fn a_kept_synthesis_report_of_the_same_design_is_found_without_a_flag() {
    use sha2::{Digest, Sha256};
    let d = tmpdir("bench-cache");
    let spec = edgeflow_core::Spec::load(&common::root().join("specs/digits.toml")).unwrap();
    let v =
        edgeflow_hdl::design::inner_verilog(&edgeflow_hdl::design::Inner::Network(spec)).unwrap();
    let key: String = Sha256::digest(v.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let report = |mhz: &str| XC7_REPORT.replace("MHZ", mhz);
    std::fs::write(
        d.join(format!("digits-xc7a100t-{key}.json")),
        report("33.25"),
    )
    .unwrap();
    std::fs::write(
        d.join("digits-xc7a100t-0123456789abcdef.json"),
        report("44.5"),
    )
    .unwrap();
    let p = projections(
        &["--boards", "nexys4-ddr,icebreaker"],
        &[("EDGEFLOW_REPORTS", d.to_str().unwrap())],
    );
    assert!(has(&p, "nexys4-ddr", 33.25), "{p:?}");
    assert!(
        !has(&p, "nexys4-ddr", 44.5),
        "another design's report was used: {p:?}"
    );
    assert!(!has(&p, "icebreaker", 33.25), "{p:?}");
}
