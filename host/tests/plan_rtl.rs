//! `edgeflow train --plan … --backend rtl`: a small spec that a plan splits across three small
//! boards (with their own cost constants, so recalibrating the built-in boards leaves the
//! split alone), each board a simulated RTL stage, the links carrying the plan's delays; `--verify`
//! trains the reference model with the plan's staleness on the same samples and fails on any
//! differing bit. Each stage reports the block cycle its controller ran next to the plan's.

mod common;

use serde_json::Value;

#[test]
fn small_spec_on_three_rtl_stages_is_bit_exact_and_reports_each_stage() {
    let dir = std::env::temp_dir().join(format!("edgeflow-plan-rtl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (spec, boards, data) = common::toy_chain(&dir);
    let plan = dir.join("plan.json").to_str().unwrap().to_string();
    let v = common::ok_json(&[
        "plan", "--spec", &spec, "--boards", &boards, "-o", &plan, "--json",
    ]);
    assert!(v["stages"].as_array().unwrap().len() >= 2, "{v}");
    let deep_stages: Vec<u64> = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["board"] == "toy-deep")
        .map(|s| s["block_cycle_clocks"].as_u64().unwrap())
        .collect();
    assert_eq!(
        deep_stages.len(),
        1,
        "the middle board carries a stage: {v}"
    );
    let args = [
        "train",
        "--plan",
        &plan,
        "--backend",
        "rtl",
        "--data",
        &data,
        "--epochs",
        "2",
        "--verify",
    ];
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let v: Value = common::ok_json(&with_json);
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 3, "{v}");
    assert!(v["backend"].as_str().unwrap().starts_with("rtl x3"), "{v}");
    assert_eq!(v["state_sha256"], v["reference_sha256"], "{v}");
    assert!(v["state_sha256"].as_str().unwrap().len() == 64);
    let delays: Vec<u64> = v["link_delay"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    assert!(delays.iter().any(|&d| d > 0), "{v}");
    for s in stages {
        // the RTL's block cycle is the longest pass plus the FF pipeline's 2 clocks (5 on the
        // board building with the deep pipeline), which is the plan's overhead: the measured
        // block cycle is the predicted one
        let got = s["measured_clocks_per_block_cycle"].as_u64().unwrap();
        let plan = s["predicted_block_cycle_clocks"].as_u64().unwrap();
        assert!(got > 2, "{s}");
        assert_eq!(got, plan, "{s}");
        assert_eq!(
            s["measured_block_cycle_ps"].as_u64().unwrap(),
            got * 100_000,
            "{s}"
        );
        assert!(s["measured_block_cycles"].as_u64().unwrap() > 2 * 48, "{s}");
    }
    let mb = v["measured_bottleneck_stage"].as_u64().unwrap() as usize;
    let most = stages
        .iter()
        .map(|s| s["measured_clocks_per_block_cycle"].as_u64().unwrap())
        .max()
        .unwrap();
    assert_eq!(
        stages[mb - 1]["measured_clocks_per_block_cycle"]
            .as_u64()
            .unwrap(),
        most
    );
    // the text report names every stage's simulated block cycle and the bottleneck
    let o = common::edgeflow(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("verified: bit-identical"), "{text}");
    assert!(text.contains("simulated block cycle"), "{text}");
    assert!(text.contains("bottleneck: predicted stage"), "{text}");
    // every stage's Verilog, checked by yosys
    let vdir = dir.join("v");
    std::fs::create_dir_all(&vdir).unwrap();
    let v = common::ok_json(&[
        "verilog",
        "--plan",
        &plan,
        "-o",
        vdir.to_str().unwrap(),
        "--json",
    ]);
    let st = v["stages"].as_array().unwrap();
    assert_eq!(st.len(), 3, "{v}");
    for s in st {
        let text = std::fs::read_to_string(s["file"].as_str().unwrap()).unwrap();
        assert!(text.contains("module top("), "{s}");
        let lint = s["lint"].as_str().unwrap();
        if lint.contains("not installed") && std::env::var("CI").as_deref() == Ok("true") {
            panic!("yosys is required under CI=true");
        }
        assert!(
            lint == "yosys: clean" || lint.contains("not installed"),
            "{s}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
