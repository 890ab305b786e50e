//! `edgeflow sim --plan P --engine verilator --linked`: digits split by the planner over two
//! iCEBreakers and the published dey-mnist over two ULX3S 85F, each board its Verilog with
//! its board-to-board links, clocks 300 ppm apart, 200 training samples, every bit held
//! against the reference model with the plan's staleness; each stage's Verilog with its
//! links; and the plans `--linked` refuses.

mod common;

/// `edgeflow plan` of specs/SPEC.toml split over `boards` (`--all-boards`), written to `plan`.
fn plan_split(spec: &str, boards: &str, plan: &str) {
    let spec = common::root().join(format!("specs/{spec}.toml"));
    let v = common::ok_json(&[
        "plan",
        "--spec",
        common::path_str(&spec),
        "--boards",
        boards,
        "--all-boards",
        "-o",
        plan,
        "--json",
    ]);
    assert_eq!(v["stages"].as_array().unwrap().len(), 2, "{v}");
}

/// The linked co-simulation of a two-board `plan` over 200 samples: bit-exact, the second
/// board's clock 300 ppm slower, and the measured samples/s within 2 % of the plan's.
fn linked_two_boards_match_the_plan(plan: &str, what: &str) {
    let v = common::ok_json(&[
        "sim",
        "--plan",
        plan,
        "--engine",
        "verilator",
        "--linked",
        "--samples",
        "200",
        "--json",
    ]);
    assert_eq!(v["bit_exact"], true, "{v}");
    assert_eq!(v["state_sha256"], v["reference_sha256"], "{v}");
    assert_eq!(v["samples"], 200);
    let boards = v["boards"].as_array().unwrap();
    assert_eq!(boards.len(), 2, "{v}");
    // the plan's clock, and 300 ppm slower, to the simulator's whole picoseconds
    let p0 = boards[0]["clock_period_ps"].as_f64().unwrap();
    let p1 = boards[1]["clock_period_ps"].as_f64().unwrap();
    assert!((p1 - p0 * (1.0 + 300e-6)).abs() <= 1.0, "{v}");
    for b in boards {
        assert!(b["clocks_per_sample"].as_f64().unwrap() > 0.0, "{v}");
    }
    let measured = v["steady_samples_per_second"].as_f64().unwrap();
    let predicted = v["predicted_samples_per_second"].as_f64().unwrap();
    assert!(measured > 0.0 && predicted > 0.0, "{v}");
    eprintln!("{what}: {measured:.0} samples/s measured, {predicted:.0} predicted");
    // clocks counted in simulation against the plan's cost model: the link's words, its
    // frame and the boards' sequencers, within 2 %
    assert!(
        (measured / predicted - 1.0).abs() <= 0.02,
        "measured {measured:.0} samples/s against the plan's {predicted:.0}"
    );
}

/// A 1024-input network over two ULX3S: junction 1's board takes its inputs one word a
/// clock, which sets the chain's period.
#[test]
fn dey_mnist_on_two_linked_ulx3s_is_bit_exact() {
    if !common::have("verilator", "verilator") {
        return;
    }
    let dir = common::tmpdir("linked-cli-ulx3s");
    let plan = dir.join("plan.json");
    let plan = common::path_str(&plan);
    plan_split("dey-mnist", "ulx3s-85fx2", plan);
    linked_two_boards_match_the_plan(plan, "dey-mnist on two linked ULX3S 85F");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn digits_on_two_linked_icebreakers_is_bit_exact() {
    if !common::have("verilator", "verilator") {
        return;
    }
    let dir = common::tmpdir("linked-cli");
    let plan = dir.join("plan.json");
    let plan = common::path_str(&plan);
    plan_split("digits", "icebreakerx2", plan);
    linked_two_boards_match_the_plan(plan, "digits on two linked iCEBreakers");
    // each stage's Verilog with its links, checked by yosys, into a directory that does
    // not exist yet (the command creates it)
    let out = dir.join("stages");
    let v = common::ok_json(&[
        "verilog",
        "--plan",
        plan,
        "--linked",
        "-o",
        common::path_str(&out),
        "--json",
    ]);
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2, "{v}");
    for s in stages {
        assert_eq!(s["lint"], "yosys: clean", "{v}");
        let text = std::fs::read_to_string(s["file"].as_str().unwrap()).unwrap();
        // the first board sends activations and takes delta sums; the second the reverse
        let (out_pins, in_pins) = if s["stage"] == 1 {
            ("to_next$0$data", "from_next$0$data")
        } else {
            ("to_prev$0$data", "from_prev$0$data")
        };
        assert!(
            text.contains(out_pins) && text.contains(in_pins),
            "{}",
            s["file"]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn linked_needs_a_plan_the_engine_and_boards_with_links() {
    let dir = common::tmpdir("linked-cli-bad");
    let plan = dir.join("plan.json");
    let plan = common::path_str(&plan);
    common::fails_with(
        &["sim", "--plan", plan, "--engine", "verilator"],
        &["--linked"],
    );
    plan_split("digits", "icebreakerx2", plan);
    // the same plan with the second board's link taken out of its board file
    let mut p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plan).unwrap()).unwrap();
    p["boards"][1]["link"] = serde_json::Value::Null;
    p["boards"][1]["name"] = "icebreaker-unlinked".into();
    std::fs::write(plan, serde_json::to_string(&p).unwrap()).unwrap();
    common::fails_with(
        &["sim", "--plan", plan, "--linked", "--samples", "8"],
        &["--engine verilator"],
    );
    common::fails_with(
        &[
            "sim",
            "--plan",
            plan,
            "--engine",
            "verilator",
            "--linked",
            "--samples",
            "8",
        ],
        &["no [link]", "board 2 (icebreaker-unlinked)"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}
