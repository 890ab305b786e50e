//! Careless and hostile runs of the CLI: each fails cleanly (non-zero exit, a message naming
//! the file or flag and the rule), and every file that existed before is byte for byte and
//! mode for mode what it was.

mod common;

use common::{
    digits_model, edgeflow, ok_json, path_str, refused, refused_env, root, snapshot, tmpdir,
    write_mode,
};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

#[test]
fn an_output_never_replaces_an_input_or_another_output() {
    let d = tmpdir("same");
    let svg = d.join("same.svg");
    write_mode(&svg, b"<svg/>", 0o644);
    refused(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--epochs",
            "1",
            "--out",
            path_str(&svg),
            "--plot",
            path_str(&svg),
        ],
        &["--out", "--plot", "same.svg", "name the same file"],
        &[&svg],
    );
    let spec = d.join("s.toml");
    std::fs::copy(root().join("specs/tiny.toml"), &spec).unwrap();
    refused(
        &[
            "train",
            "--spec",
            path_str(&spec),
            "--epochs",
            "1",
            "--out",
            path_str(&spec),
        ],
        &["--out", "s.toml", "is the input --spec"],
        &[&spec],
    );
    let m = digits_model(&d);
    refused(
        &["infer", "--model", path_str(&m), "-o", path_str(&m)],
        &["--out", "digits.model", "is the input --model"],
        &[&m],
    );
    // through a link and a detour, still the same file
    let link = d.join("link.model");
    std::os::unix::fs::symlink(&m, &link).unwrap();
    let detour = format!(
        "{}/../{}/link.model",
        path_str(&d),
        d.file_name().unwrap().to_str().unwrap()
    );
    refused(
        &["infer", "--model", path_str(&m), "-o", &detour],
        &["is the input --model"],
        &[&m],
    );
    let csv = d.join("d.csv");
    let mut text = String::new();
    for i in 0..30 {
        text += &format!("{},{}\n", vec![(i % 17).to_string(); 64].join(","), i % 10);
    }
    write_mode(&csv, text.as_bytes(), 0o644);
    refused(
        &[
            "infer",
            "--model",
            path_str(&m),
            "--data",
            path_str(&csv),
            "-o",
            path_str(&csv),
        ],
        &["--out", "d.csv", "is the input --data"],
        &[&csv, &m],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn output_paths_are_checked_before_any_training() {
    let d = tmpdir("early");
    for (flag, path) in [("--out", "/proc/x"), ("--plot", "/proc/x.png")] {
        let e = refused(
            &[
                "train",
                "--spec",
                "specs/digits.toml",
                "--epochs",
                "30",
                flag,
                path,
            ],
            &[flag, path, "cannot create files in directory /proc"],
            &[],
        );
        assert!(!e.contains("epoch"), "trained before the check: {e}");
    }
    refused(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--out",
            "/nonexistent-dir/m",
        ],
        &["--out", "directory /nonexistent-dir does not exist"],
        &[],
    );
    refused(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--out",
            path_str(&d),
        ],
        &["--out", "is a directory"],
        &[],
    );
    let file = d.join("file");
    write_mode(&file, b"keep", 0o644);
    refused(
        &[
            "verilog",
            "--spec",
            "specs/tiny.toml",
            "-o",
            path_str(&file),
        ],
        &["--out", "is a file", "give a directory"],
        &[&file],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn overwriting_keeps_the_old_files_mode() {
    let d = tmpdir("mode");
    let m = d.join("m.model");
    write_mode(&m, b"old", 0o600);
    ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--out",
        path_str(&m),
        "--json",
    ]);
    let meta = std::fs::metadata(&m).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_ne!(std::fs::read(&m).unwrap(), b"old");
    let p = d.join("p.json");
    write_mode(&p, b"old", 0o640);
    ok_json(&[
        "plan",
        "--spec",
        "specs/tiny.toml",
        "--boards",
        "icebreaker",
        "-o",
        path_str(&p),
        "--json",
    ]);
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o640
    );
    std::fs::remove_dir_all(&d).ok();
}

/// An interrupted simulation leaves the waveform of the last complete run, and no
/// temporary file beside it.
#[test]
fn sim_vcd_is_replaced_only_when_complete() {
    let d = tmpdir("vcd");
    let vcd = d.join("t.vcd");
    let o = edgeflow(&[
        "sim",
        "--spec",
        "specs/tiny.toml",
        "--samples",
        "8",
        "--vcd",
        path_str(&vcd),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::set_permissions(&vcd, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = snapshot(&[&vcd]);
    assert!(
        before[0].1.as_ref().unwrap().0.starts_with(b"$"),
        "not a VCD"
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_edgeflow"))
        .args([
            "sim",
            "--spec",
            "specs/tiny.toml",
            "--samples",
            "4000",
            "--vcd",
            path_str(&vcd),
        ])
        .current_dir(root())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // interrupted once the waveform is being written
    let tmp_started = || {
        snapshot(&[&vcd]) != before
            || std::fs::read_dir(&d)
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains(".tmp-"))
    };
    for _ in 0..600 {
        if tmp_started() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(tmp_started(), "the long run never started its waveform");
    std::thread::sleep(std::time::Duration::from_millis(500));
    // Ctrl-C
    let int = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(int.success());
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the long run finished before the interrupt"
    );
    assert_eq!(snapshot(&[&vcd]), before, "the complete VCD was replaced");
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n != "t.vcd")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn clocks_and_seeds_outside_the_tools_range_are_refused() {
    let d = tmpdir("freq");
    let out = d.join("v");
    for f in ["nan", "inf", "-3", "0"] {
        refused(
            &[
                "verilog",
                "--spec",
                "specs/tiny.toml",
                "--board",
                "icebreaker",
                &format!("--freq={f}"),
                "-o",
                path_str(&out),
            ],
            &["--freq", f, "positive number of MHz"],
            &[],
        );
    }
    refused(
        &[
            "verilog",
            "--spec",
            "specs/tiny.toml",
            "--board",
            "icebreaker",
            "--freq",
            "1e9",
            "-o",
            path_str(&out),
        ],
        &["--freq 1000000000", "icebreaker makes at most", "MHz"],
        &[],
    );
    refused(
        &[
            "vivado",
            "--spec",
            "specs/tiny.toml",
            "--freq",
            "5000",
            "-o",
            path_str(&out),
        ],
        &["--freq 5000", "nexys4-ddr makes at most"],
        &[],
    );
    assert!(!out.exists(), "wrote files before refusing");
    refused(
        &[
            "bitstream",
            "--spec",
            "specs/tiny.toml",
            "--board",
            "icebreaker",
            "--seed",
            "3000000000",
            "-o",
            path_str(&out),
        ],
        &["--seed", "3000000000", "0..=2147483647"],
        &[],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn deploy_takes_only_a_bitstream_for_the_board() {
    let d = tmpdir("deploy");
    let m = digits_model(&d);
    refused(
        &["deploy", "--board", "icebreaker", "--dry-run", path_str(&m)],
        &[
            "digits.model",
            "not a bitstream for ice40-up5k",
            "sync word 7eaa997e",
            "edgeflow bitstream",
        ],
        &[&m],
    );
    refused(
        &["deploy", "--board", "icebreaker", "--dry-run", path_str(&d)],
        &["is a directory", "give the file in it"],
        &[],
    );
    refused(
        &[
            "deploy",
            "--board",
            "icebreaker",
            "--dry-run",
            "/nonexistent.bin",
        ],
        &["/nonexistent.bin", "cannot be read", "edgeflow bitstream"],
        &[],
    );
    // icepack's layout: comment block, then the sync word
    let bin = d.join("ok.bin");
    write_mode(
        &bin,
        &[0xff, 0x00, 0x00, 0xff, 0x7e, 0xaa, 0x99, 0x7e, 0x51, 0x00],
        0o644,
    );
    let v = ok_json(&[
        "deploy",
        "--board",
        "icebreaker",
        "--dry-run",
        path_str(&bin),
        "--json",
    ]);
    assert_eq!(v["dry_run"], true);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_failed_tool_run_keeps_the_log_its_message_names() {
    let d = tmpdir("keeplog");
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("yosys");
    write_mode(
        &fake,
        b"#!/bin/sh\necho 'ERROR: fake yosys refuses'\nexit 1\n",
        0o755,
    );
    let path = format!("{}:{}", path_str(&bin), std::env::var("PATH").unwrap());
    let out = d.join("out");
    let e = refused_env(
        &[
            "bitstream",
            "--spec",
            "specs/tiny.toml",
            "--board",
            "icebreaker",
            "-o",
            path_str(&out),
        ],
        &[("PATH", &path)],
        &["fake yosys refuses", "full log: ", "is kept"],
        &[],
    );
    let log = e
        .split("full log: ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap();
    let text = std::fs::read_to_string(log).unwrap_or_else(|_| panic!("{log} is gone: {e}"));
    assert!(text.contains("fake yosys refuses"));
    std::fs::remove_dir_all(Path::new(log).parent().unwrap()).ok();
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bench_names_and_kernel_binary_are_checked() {
    refused(
        &[
            "bench",
            "--spec",
            "specs/tiny.toml",
            "--backends",
            "reference,bogus",
        ],
        &[
            "--backends",
            "'bogus'",
            "reference, float, sparse-f32, dense, dense-minibatch, opencl[:DEVICE], rtl, verilator",
        ],
        &[],
    );
    let d = tmpdir("kbin");
    let k = d.join("garbage.bin");
    write_mode(&k, b"garbage", 0o644);
    // a command that never runs OpenCL does not take the flag at all
    refused(
        &[
            "spec",
            "check",
            "specs/tiny.toml",
            "--kernel-binary",
            path_str(&k),
        ],
        &["unexpected argument '--kernel-binary'"],
        &[&k],
    );
    // one that can, with a backend that does not, refuses it
    for args in [
        vec![
            "train",
            "--spec",
            "specs/tiny.toml",
            "--backend",
            "reference",
        ],
        vec![
            "bench",
            "--spec",
            "specs/tiny.toml",
            "--backends",
            "reference",
        ],
    ] {
        let mut a = args.clone();
        a.extend(["--kernel-binary", path_str(&k)]);
        refused(
            &a,
            &["--kernel-binary", "garbage.bin", "only an OpenCL backend"],
            &[&k],
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn model_errors_say_what_was_expected_and_found() {
    let d = tmpdir("modelmsg");
    let m = digits_model(&d);
    let full = std::fs::read(&m).unwrap();
    let cut = d.join("cut.model");
    write_mode(&cut, &full[..full.len() / 2], 0o644);
    let e = refused(
        &["eval", "--model", path_str(&cut)],
        &["cut.model", "truncated"],
        &[&cut],
    );
    assert!(e.contains(&format!("{} bytes", full.len() / 2)), "{e}");
    let csv = d.join("data.csv");
    write_mode(&csv, b"1,2,3\n", 0o644);
    let e = refused(
        &["eval", "--model", path_str(&csv)],
        &["data.csv", "not an edgeflow model file", "found `1,2,3.`"],
        &[&csv],
    );
    assert!(!e.contains("truncated"), "{e}");
    // one byte broken in the middle of the JSON
    let mut bad = full.clone();
    let at = bad.len() / 2;
    bad[at] = b'}';
    let broken = d.join("broken.model");
    write_mode(&broken, &bad, 0o644);
    let e = refused(
        &["eval", "--model", path_str(&broken)],
        &["broken.model"],
        &[&broken],
    );
    assert!(!e.contains("truncated"), "{e}");
    std::fs::remove_dir_all(&d).ok();
}
