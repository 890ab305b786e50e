//! `edgeflow train --plan … --backend rtl`: a small spec that a plan splits across three small
//! boards (with their own cost constants, so recalibrating the built-in boards leaves the
//! split alone), each board a simulated RTL stage, the links carrying the plan's delays; `--verify`
//! trains the reference model with the plan's staleness on the same samples and fails on any
//! differing bit. Each stage reports the block cycle its controller ran next to the plan's.

mod common;

use serde_json::Value;

const BOARD: &str = "name = \"toy\"\npart = \"none\"\ndescription = \"a small board for chain tests\"\nclock_mhz = 10.0\ndsp = 4\nlogic = 4445\nlut_per_multiplier = 280\nram_bits = 65536\nram_blocks = 8\nram_block_width = 16\nlink_mbps = 20.0\nlink_latency_us = 1.0\n[fit]\nlogic_per_junction = 2014\nlogic_per_lane_bit = 55\nlogic_per_board = 800\nff_per_board = 300\nff_per_lane_bit = 28\nff_per_lut_multiplier = 0\n";

const SPEC: &str = "name = \"chain-small\"\nlayers = [16, 16, 8, 4]\nfan_out = [2, 2, 2]\nz = [2, 2, 2]\nactivation = \"sigmoid\"\nlearning_rate_shift = 2\nseed = 3\n[fixed]\nwidth = 10\nint_bits = 2\nfrac_bits = 7\n[pattern]\nkind = \"type2\"\ndither = true\nseed = 4\n";

#[test]
fn small_spec_on_three_rtl_stages_is_bit_exact_and_reports_each_stage() {
    let dir = std::env::temp_dir().join(format!("edgeflow-plan-rtl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("toy.toml"), BOARD).unwrap();
    // the same board building with registered reads and the deep pipeline, as an iCEBreaker
    // does: its stage's block cycle is 3 clocks longer, in the plan and in the RTL
    let deep = BOARD
        .replace("name = \"toy\"", "name = \"toy-deep\"")
        .replace(
            "[fit]",
            "registered_reads = true\ndeep_pipeline = true\n[fit]",
        );
    std::fs::write(dir.join("toy-deep.toml"), deep).unwrap();
    std::fs::write(dir.join("s.toml"), SPEC).unwrap();
    // 60 samples of 4 classes: class c has its 4 features 4c..4c+3 raised
    let mut csv = String::new();
    let mut r = 7u64;
    for n in 0..60 {
        let c = n % 4;
        for i in 0..16 {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (r >> 60) as usize % 9 + if i / 4 == c { 8 } else { 0 };
            csv += &format!("{v},");
        }
        csv += &format!("{c}\n");
    }
    std::fs::write(dir.join("d.csv"), csv).unwrap();
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
    let (spec, plan, data) = (path("s.toml"), path("plan.json"), path("d.csv"));
    let boards = format!(
        "{},{},{}",
        path("toy.toml"),
        path("toy-deep.toml"),
        path("toy.toml")
    );
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
