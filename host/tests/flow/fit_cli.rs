//! `edgeflow fit`: its ranking checked against what other commands say of each design on
//! their own (`spec check` for the block cycle, `cost` for the model's verdict, the board
//! file for the clock), the spec it writes against the input line by line, its refusals,
//! and `--verify` through the real flow.

use crate::common::{have, ok_json, path_str, refused, root, tmpdir};
use serde_json::Value;
use std::path::Path;

/// The board file's own clock and the pipeline options it builds every network with.
fn board_file(board: &str) -> (f64, bool, bool) {
    let t: toml::Value = std::fs::read_to_string(root().join(format!("boards/{board}.toml")))
        .unwrap()
        .parse()
        .unwrap();
    let flag = |k: &str| t.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
    (
        t["clock_mhz"].as_float().unwrap(),
        flag("registered_reads"),
        flag("deep_pipeline"),
    )
}

/// The input spec with its `z` line replaced, and with the options the board forces added:
/// the network as that board builds it.
fn variant(text: &str, z: &[u64], rr: bool, dp: bool) -> String {
    let zs: Vec<String> = z.iter().map(|z| z.to_string()).collect();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("z =") {
            out += &format!("z = [{}]\n", zs.join(", "));
        } else if line == "[fixed]" {
            out += &format!("registered_reads = {rr}\ndeep_pipeline = {dp}\n\n[fixed]\n");
        } else {
            out += line;
            out.push('\n');
        }
    }
    out
}

fn zs(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|z| z.as_u64().unwrap())
        .collect()
}

/// Runs `fit` and checks every listed design against the other commands; returns the report
/// and the text of the spec it wrote.
fn ranking(spec: &str, board: &str, tag: &str) -> (Value, String) {
    let d = tmpdir(tag);
    let out = d.join("out.toml");
    let r = ok_json(&[
        "fit",
        "--spec",
        spec,
        "--board",
        board,
        "--top",
        "50",
        "-o",
        path_str(&out),
        "--json",
    ]);
    let (mhz, rr, dp) = board_file(board);
    assert_eq!(r["clock_mhz"].as_f64(), Some(mhz), "{r}");
    let input = ok_json(&["spec", "check", spec, "--json"]);
    let edges: Vec<u64> = input["derived"]["junctions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["edges"].as_u64().unwrap())
        .collect();
    let text = std::fs::read_to_string(root().join(spec)).unwrap();
    let cands = r["candidates"].as_array().unwrap();
    assert!(!cands.is_empty(), "{r}");
    for (i, c) in cands.iter().enumerate() {
        assert_eq!(c["rank"].as_u64(), Some(i as u64 + 1), "{c}");
        let z = zs(&c["z"]);
        for (j, &zj) in z.iter().enumerate() {
            assert_eq!(
                edges[j] % zj,
                0,
                "z {z:?} does not divide junction {j}'s edges"
            );
        }
        // as the board builds it: the spec's validation and its own block-cycle count
        let f = d.join(format!("cand{i}.toml"));
        std::fs::write(&f, variant(&text, &z, rr, dp)).unwrap();
        let check = ok_json(&["spec", "check", path_str(&f), "--json"]);
        assert_eq!(check["valid"], true);
        let clocks = check["derived"]["block_cycle_clocks"].as_u64().unwrap();
        assert_eq!(c["block_cycle_clocks"].as_u64(), Some(clocks), "{c}");
        let sps = c["samples_per_second"].as_f64().unwrap();
        assert_eq!(sps, mhz * 1e6 / clocks as f64, "{c}");
        // the cost model's own verdict on that spec
        let cost = ok_json(&["cost", "--spec", path_str(&f), "--board", board, "--json"]);
        // fits, or near the limit (within the model's error of the part) and marked so
        assert_ne!(cost["fits"], false, "{z:?}: {cost}");
        assert_eq!(c["near_limit"], cost["near_limit"], "{z:?}: {cost}");
        assert_eq!(c["usage"]["logic"], cost["usage"]["logic"], "{z:?}");
        if i > 0 {
            let p = &cands[i - 1];
            let ps = p["samples_per_second"].as_f64().unwrap();
            assert!(ps >= sps, "rank {i} is slower than rank {}", i + 1);
            if ps == sps {
                assert!(p["usage"]["logic"].as_u64() <= c["usage"]["logic"].as_u64());
            }
        }
    }
    // the written spec: the input with only the z line (and comments) changed
    let written = std::fs::read_to_string(&out).unwrap();
    let code = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.split('#').next().unwrap().trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let (a, b) = (code(&text), code(&written));
    assert_eq!(a.len(), b.len(), "{written}");
    for (x, y) in a.iter().zip(&b) {
        if x != y {
            assert!(x.starts_with("z =") && y.starts_with("z ="), "{x} → {y}");
        }
    }
    assert!(
        written.starts_with("# Written by `edgeflow fit --spec "),
        "{written}"
    );
    let w = ok_json(&["spec", "check", path_str(&out), "--json"]);
    let best: Vec<u64> = w["derived"]["junctions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["z"].as_u64().unwrap())
        .collect();
    assert_eq!(best, zs(&cands[0]["z"]));
    (r, text)
}

#[test]
fn tiny_on_icebreaker_is_the_fastest_of_every_z_that_fits() {
    let (r, text) = ranking("specs/tiny.toml", "icebreaker", "fit-tiny");
    // every combination of z, each judged by `spec check` and `cost` alone
    let d = tmpdir("fit-tiny-all");
    let (_, rr, dp) = board_file("icebreaker");
    let mut best: Option<u64> = None;
    let mut valid = 0;
    for z1 in 1..=16u64 {
        for z2 in 1..=16u64 {
            let f = d.join(format!("t{z1}-{z2}.toml"));
            std::fs::write(&f, variant(&text, &[z1, z2], rr, dp)).unwrap();
            let o = crate::common::edgeflow(&["spec", "check", path_str(&f), "--json"]);
            if !o.status.success() {
                continue;
            }
            valid += 1;
            let check: Value = serde_json::from_slice(&o.stdout).unwrap();
            let clocks = check["derived"]["block_cycle_clocks"].as_u64().unwrap();
            let cost = ok_json(&[
                "cost",
                "--spec",
                path_str(&f),
                "--board",
                "icebreaker",
                "--json",
            ]);
            // what the planner may use: not called a misfit, and within the part
            let u = &cost["usage"];
            if cost["fits"] != false && u["logic"].as_u64() <= u["logic_available"].as_u64() {
                best = Some(best.map_or(clocks, |b: u64| b.min(clocks)));
            }
        }
    }
    assert_eq!(valid, 16, "tiny has 4 valid z per junction");
    assert_eq!(
        r["candidates"][0]["block_cycle_clocks"].as_u64(),
        best,
        "{r}"
    );
    // tiny's own z = [4, 2] is over the iCEBreaker; z = [1, 1] is what fits
    assert_eq!(r["input"]["fits"], false, "{r}");
    assert!(r["input_rank"].is_null(), "{r}");
    assert_eq!(zs(&r["candidates"][0]["z"]), vec![1, 1], "{r}");
}

#[test]
fn digits_on_icebreaker_ranks_its_own_z_first() {
    let (r, _) = ranking("specs/digits.toml", "icebreaker", "fit-digits");
    assert_eq!(zs(&r["candidates"][0]["z"]), vec![2, 1], "{r}");
    assert_eq!(r["input_rank"], 1, "{r}");
    assert!(r["candidates"].as_array().unwrap().len() >= 2, "{r}");
}

#[test]
fn dey_mnist_on_ulx3s_85f_is_ranked_by_samples_per_second() {
    let (r, _) = ranking("specs/dey-mnist.toml", "ulx3s-85f", "fit-dey");
    // the published z = [128, 32] is over the 85F's logic by the model
    assert_eq!(r["input"]["fits"], false, "{r}");
    assert!(r["candidates"].as_array().unwrap().len() >= 3, "{r}");
}

#[test]
fn bad_input_is_refused_before_any_work() {
    let d = tmpdir("fit-refused");
    let spec = d.join("tiny.toml");
    std::fs::copy(root().join("specs/tiny.toml"), &spec).unwrap();
    let s = path_str(&spec);
    refused(
        &["fit", "--spec", s, "--board", "icebreaker", "-o", s],
        &["--out", "is the input --spec"],
        &[&spec],
    );
    refused(
        &["fit", "--spec", s, "--board", "icebreaker9"],
        &["--board", "unknown board 'icebreaker9'", "icebreaker"],
        &[&spec],
    );
    let missing = d.join("no/such/dir/out.toml");
    refused(
        &[
            "fit",
            "--spec",
            s,
            "--board",
            "icebreaker",
            "-o",
            path_str(&missing),
        ],
        &["does not exist"],
        &[&spec],
    );
    refused(
        &["fit", "--spec", s, "--board", "icebreaker", "--top", "0"],
        &["--top"],
        &[&spec],
    );
    let bad = d.join("bad.toml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(&spec)
            .unwrap()
            .replace("z = [4, 2]", "z = [3, 2]"),
    )
    .unwrap();
    refused(
        &["fit", "--spec", path_str(&bad), "--board", "icebreaker"],
        &["z[0]", "must divide the left layer size 8"],
        &[&bad],
    );
    assert!(!Path::new(&missing).exists());
}

/// tiny at z = [1, 1], the one design the model fits on the iCEBreaker, does not close at the
/// board's default clock with the MAC16 multiplies timed; at the oscillator's own clock it does.
#[test]
fn verify_builds_the_best_design_that_fits_and_meets_timing() {
    if !(have("yosys", "yosys")
        && have("nextpnr-ice40", "nextpnr-ice40")
        && have("icepack", "fpga-icestorm"))
    {
        return;
    }
    let d = tmpdir("fit-verify");
    let out = d.join("tiny-icebreaker.toml");
    let r = ok_json(&[
        "fit",
        "--spec",
        "specs/tiny.toml",
        "--board",
        "icebreaker",
        "--verify",
        "--freq",
        "12",
        "--top",
        "3",
        "-o",
        path_str(&out),
        "--json",
    ]);
    let v = &r["verify"];
    let ok = &v["verified"];
    assert_eq!(ok["timing_met"], true, "{r}");
    assert_eq!(ok["clock_mhz"].as_f64(), Some(12.0), "{r}");
    assert!(ok["fmax_mhz"].as_f64().unwrap() >= 12.0, "{r}");
    let tried = v["tried"].as_u64().unwrap();
    assert!(tried >= 1 && tried <= 3, "{r}");
    assert_eq!(v["attempts"].as_array().unwrap().len() as u64, tried);
    // the verified design is the one written, and every one tried before it failed
    assert_eq!(r["chosen"], ok["rank"], "{r}");
    for a in &v["attempts"].as_array().unwrap()[..tried as usize - 1] {
        assert!(a["fits"] == false || a["timing_met"] == false, "{a}");
    }
    // the model's logic next to the logic cells nextpnr placed (the iCE40's count)
    let lut = ok["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["resource"] == "LC")
        .unwrap();
    assert!(lut["used"].as_f64().unwrap() > 0.0 && lut["predicted"].as_u64().unwrap() > 0);
    let placed = ok["placed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0] == "ICESTORM_LC")
        .unwrap();
    assert_eq!(lut["used"].as_f64(), placed[1].as_f64(), "{ok}");
    // the model's prediction is the one `fit` ranked with
    let chosen = &r["candidates"][ok["rank"].as_u64().unwrap() as usize - 1];
    assert_eq!(lut["predicted"], chosen["usage"]["logic"], "{r}");
    let w = ok_json(&["spec", "check", path_str(&out), "--json"]);
    let z: Vec<u64> = w["derived"]["junctions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["z"].as_u64().unwrap())
        .collect();
    assert_eq!(z, zs(&ok["z"]));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("and meets timing in the real flow"));
}

/// A spec's own z that fits but wastes lanes is not ranked: the design named instead is as
/// fast by `spec check` and needs no more of anything by `cost`.
#[test]
fn the_specs_own_z_is_beaten_by_fewer_lanes_at_the_same_speed() {
    let r = ok_json(&[
        "fit",
        "--spec",
        "specs/tiny.toml",
        "--board",
        "nexys4-ddr",
        "--top",
        "50",
        "--json",
    ]);
    assert_eq!(r["input"]["fits"], true, "{r}");
    assert!(r["input_rank"].is_null(), "{r}");
    let by = zs(&r["input_beaten_by"]["z"]);
    assert_ne!(by, vec![4, 2]);
    let d = tmpdir("fit-beaten");
    let text = std::fs::read_to_string(root().join("specs/tiny.toml")).unwrap();
    let judge = |z: &[u64]| {
        let f = d.join(format!("z{z:?}.toml").replace([' ', '[', ']', ','], ""));
        std::fs::write(&f, variant(&text, z, false, false)).unwrap();
        let check = ok_json(&["spec", "check", path_str(&f), "--json"]);
        let cost = ok_json(&[
            "cost",
            "--spec",
            path_str(&f),
            "--board",
            "nexys4-ddr",
            "--json",
        ]);
        (
            check["derived"]["block_cycle_clocks"].as_u64().unwrap(),
            cost["usage"].clone(),
        )
    };
    let (own, own_use) = judge(&[4, 2]);
    let (other, other_use) = judge(&by);
    assert!(other <= own, "{by:?}: {other} clocks, the spec's {own}");
    for k in ["logic", "dsp", "ram_bits", "ram_blocks"] {
        assert!(
            other_use[k].as_u64() <= own_use[k].as_u64(),
            "{k}: {other_use} vs {own_use}"
        );
    }
}
