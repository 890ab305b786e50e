//! `--input-lanes` of `edgeflow sim` and `edgeflow verilog` as a user runs them.

mod common;

use common::{fails_with, ok_json, tmpdir};

#[test]
fn sim_reports_input_lanes_and_the_link_keeps_up() {
    // tiny: N_0 = 8, C = 8, block cycle C + 2 = 10: auto keeps one word per clock (a
    // training sample's 9 words fit in the block cycle), two lanes change nothing
    let v = ok_json(&[
        "sim",
        "--spec",
        "specs/tiny.toml",
        "--samples",
        "12",
        "--json",
    ]);
    assert_eq!(v["input_lanes"], 1);
    assert_eq!(v["bit_exact"], true);
    assert_eq!(v["clocks_per_sample"], 8 + 2);
    let v = ok_json(&[
        "sim",
        "--spec",
        "specs/tiny.toml",
        "--samples",
        "12",
        "--input-lanes",
        "2",
        "--json",
    ]);
    assert_eq!(v["input_lanes"], 2);
    assert_eq!(v["bit_exact"], true);
    assert_eq!(v["clocks_per_sample"], 8 + 2);
    assert_eq!(v["infer_clocks_per_sample"], 8 + 2);
}

#[test]
fn bad_input_lanes_are_clear_errors() {
    fails_with(
        &["sim", "--spec", "specs/tiny.toml", "--input-lanes", "5"],
        &["input lanes = 5", "z_1 = 4", "--input-lanes auto"],
    );
    fails_with(
        &["sim", "--spec", "specs/tiny.toml", "--input-lanes", "wide"],
        &["--input-lanes 'wide'", "auto"],
    );
    let d = tmpdir("lanes-verilog");
    fails_with(
        &[
            "verilog",
            "--spec",
            "specs/tiny.toml",
            "--board",
            "icebreaker",
            "--input-lanes",
            "2",
            "-o",
            d.to_str().unwrap(),
        ],
        &["--input-lanes 2", "UART"],
    );
}
