//! A two-board linked plan built for real: a small network that the planner splits over two
//! iCEBreakers, each stage with its board-to-board link on the board file's PMOD pins and its
//! UART host link, through yosys → nextpnr-ice40 → icepack → static timing, with a sweep of
//! placement seeds. Both bitstreams must exist, fit the UP5K and meet their clock (the
//! forwarded link clock is timed too); the constraint files place the link pins; `deploy
//! --plan` loads them in chain order (dry run).

/// The stages' clock: the iCEBreaker's 30 MHz. The stages meet it with some placement seeds
/// and miss it by a few percent with others (docs/hardware.md, "Linked boards"), so each stage
/// sweeps seeds until one meets it.
const CLOCK_MHZ: &str = "30";
const SEEDS: &str = "1,2,3,4,5,6";

use crate::common::{edgeflow, have, ok_json, path_str, tmpdir};

/// Two junctions of 64 edges: on one iCEBreaker the planner gives them one lane each, on two
/// it gives each two lanes, so it splits them (the link's 4-word vector is short). At 8 bits
/// the second stage, with its link receiver, stays inside the UP5K's 5,280 logic cells.
const PAIR: &str = r#"
name = "pair"
layers = [64, 4, 16]
fan_out = [1, 16]
z = [1, 1]
activation = "sigmoid"
learning_rate_shift = 2
seed = 1

[fixed]
width = 8
int_bits = 2
frac_bits = 5

[pattern]
kind = "type2"
dither = true
seed = 2
"#;

#[test]
fn a_two_board_plan_builds_a_bitstream_per_stage_that_meets_its_clock() {
    if !(have("yosys", "yosys")
        && have("nextpnr-ice40", "nextpnr-ice40")
        && have("icepack", "fpga-icestorm"))
    {
        return;
    }
    let d = tmpdir("bitstream-linked");
    let spec = d.join("pair.toml");
    std::fs::write(&spec, PAIR).unwrap();
    let plan = d.join("plan.json");
    let p = ok_json(&[
        "plan",
        "--spec",
        path_str(&spec),
        "--boards",
        "icebreakerx2",
        "-o",
        path_str(&plan),
        "--json",
    ]);
    assert_eq!(p["stages"].as_array().unwrap().len(), 2, "{p}");
    let out = d.join("out");
    let o = edgeflow(&[
        "bitstream",
        "--plan",
        path_str(&plan),
        "--seed",
        SEEDS,
        "--freq",
        CLOCK_MHZ,
        "-o",
        path_str(&out),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    for (i, s) in stages.iter().enumerate() {
        let n = i + 1;
        assert_eq!(s["stage"], n);
        assert_eq!(s["fits"], true, "{s}");
        let bin = out.join(format!("pair-stage{n}-icebreaker.bin"));
        assert_eq!(s["bitstream"].as_str().unwrap(), bin.to_str().unwrap());
        let size = std::fs::metadata(&bin).unwrap().len();
        assert!(size > 100_000, "{} is only {size} bytes", bin.display());
        for r in s["resources"]["rows"].as_array().unwrap() {
            assert!(
                r["used"].as_f64() <= r["available"].as_f64(),
                "does not fit: {r}"
            );
        }
        // the plan counts the multipliers the link moves: the σ′ multiplier of the boundary
        // layer's deltas on stage 1, none in stage 2's lanes (planner/src/cost.rs)
        let used = |resource: &str| {
            s["resources"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["resource"] == resource)
                .unwrap()["used"]
                .as_f64()
                .unwrap()
        };
        let dsp = used("DSP");
        let planned = &p["stages"][i]["utilisation"];
        assert_eq!(
            planned["dsp"].as_f64().unwrap() + planned["lut_multipliers"].as_f64().unwrap(),
            dsp,
            "stage {n}: planned {planned}, synthesized {s}"
        );
        // the plan's block RAMs (planner/src/memories.rs) are never fewer than yosys maps:
        // a stage the planner says fits has the EBR it needs
        let ebr = used("BRAM");
        assert!(
            planned["ram_blocks"].as_f64().unwrap() >= ebr,
            "stage {n}: planned {planned}, synthesized {s}"
        );
        let (fmax, clock) = (
            s["fmax_mhz"].as_f64().unwrap(),
            s["clock_mhz"].as_f64().unwrap(),
        );
        assert!((clock - 30.0).abs() < 0.5, "{clock} MHz");
        crate::common::assert_seed_sweep(s, &[1, 2, 3, 4, 5, 6]);
        assert!(
            fmax >= clock && s["timing_met"] == true,
            "stage {n}: Fmax {fmax} MHz below the {clock} MHz clock; critical path {}",
            s["critical_path"]
        );
        // nextpnr's own figure for the design clock, from the report it wrote
        let report = out.join(format!("pair-stage{n}-icebreaker-nextpnr-report.json"));
        assert!(crate::common::nextpnr_fmax(&report) >= clock);
        // the link pins from boards/icebreaker.toml: board 1 sends activations on PMOD1A
        // and takes deltas on PMOD1B, board 2 the other way round
        let pcf =
            std::fs::read_to_string(out.join(format!("pair-stage{n}-icebreaker.pcf"))).unwrap();
        let want = if n == 1 {
            ["set_io to_next$0$clock 4", "set_io from_next$0$data[3] 28"]
        } else {
            ["set_io from_prev$0$clock 4", "set_io to_prev$0$data[3] 28"]
        };
        for w in want {
            assert!(pcf.contains(&format!("{w}\n")), "{w} missing in\n{pcf}");
        }
    }
    assert_eq!(v["all_built"], true);

    let dep = ok_json(&[
        "deploy",
        "--plan",
        path_str(&plan),
        "--dir",
        path_str(&out),
        "--serials",
        "A1,B2",
        "--dry-run",
        "--json",
    ]);
    let cmds: Vec<&str> = dep["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        cmds,
        [1, 2]
            .iter()
            .zip(["A1", "B2"])
            .map(|(n, serial)| format!(
                "openFPGALoader -b ice40_generic --ftdi-serial {serial} {}",
                out.join(format!("pair-stage{n}-icebreaker.bin")).display()
            ))
            .collect::<Vec<_>>()
    );
    // one serial for two stages is refused before anything runs
    let o = edgeflow(&[
        "deploy",
        "--plan",
        path_str(&plan),
        "--dir",
        path_str(&out),
        "--serials",
        "A1",
        "--dry-run",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("one FTDI serial per stage"));
}
