//! Careless and hostile runs of the CLI: each fails cleanly (non-zero exit, a message naming
//! the file or flag and the rule), and every file that existed before is byte for byte and
//! mode for mode what it was.

mod common;

use common::{edgeflow, edgeflow_env, ok_json, root, tmpdir};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Bytes and permission bits of each file (None: absent).
fn snapshot(files: &[&Path]) -> Vec<(PathBuf, Option<(Vec<u8>, u32)>)> {
    files
        .iter()
        .map(|f| {
            let s = std::fs::read(f)
                .ok()
                .map(|b| (b, std::fs::metadata(f).unwrap().permissions().mode()));
            (f.to_path_buf(), s)
        })
        .collect()
}

/// `edgeflow ARGS` fails with every needle in its message, names no temporary file, prints
/// no Rust debug dump, and leaves every file of `keep` as it was.
fn refused(args: &[&str], needles: &[&str], keep: &[&Path]) -> String {
    refused_env(args, &[], needles, keep)
}

fn refused_env(args: &[&str], env: &[(&str, &str)], needles: &[&str], keep: &[&Path]) -> String {
    let before = snapshot(keep);
    let o = edgeflow_env(args, env);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "{args:?} should fail: {err}");
    assert!(matches!(o.status.code(), Some(1 | 2)), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}: {err}");
    }
    for bad in [".tmp-", "panicked", "Os {", "kind: "] {
        assert!(!err.contains(bad), "{args:?}: message shows {bad:?}: {err}");
    }
    assert_eq!(snapshot(keep), before, "{args:?} changed a file: {err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn write(p: &Path, bytes: &[u8], mode: u32) {
    std::fs::write(p, bytes).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A digits model trained for one epoch.
fn digits_model(d: &Path) -> PathBuf {
    let m = d.join("digits.model");
    ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--out",
        s(&m),
        "--json",
    ]);
    m
}

#[test]
fn an_output_never_replaces_an_input_or_another_output() {
    let d = tmpdir("same");
    let svg = d.join("same.svg");
    write(&svg, b"<svg/>", 0o644);
    refused(
        &[
            "train",
            "--spec",
            "specs/digits.toml",
            "--epochs",
            "1",
            "--out",
            s(&svg),
            "--plot",
            s(&svg),
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
            s(&spec),
            "--epochs",
            "1",
            "--out",
            s(&spec),
        ],
        &["--out", "s.toml", "is the input --spec"],
        &[&spec],
    );
    let m = digits_model(&d);
    refused(
        &["infer", "--model", s(&m), "-o", s(&m)],
        &["--out", "digits.model", "is the input --model"],
        &[&m],
    );
    // through a link and a detour, still the same file
    let link = d.join("link.model");
    std::os::unix::fs::symlink(&m, &link).unwrap();
    let detour = format!(
        "{}/../{}/link.model",
        s(&d),
        d.file_name().unwrap().to_str().unwrap()
    );
    refused(
        &["infer", "--model", s(&m), "-o", &detour],
        &["is the input --model"],
        &[&m],
    );
    let csv = d.join("d.csv");
    let mut text = String::new();
    for i in 0..30 {
        text += &format!("{},{}\n", vec![(i % 17).to_string(); 64].join(","), i % 10);
    }
    write(&csv, text.as_bytes(), 0o644);
    refused(
        &["infer", "--model", s(&m), "--data", s(&csv), "-o", s(&csv)],
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
        &["train", "--spec", "specs/digits.toml", "--out", s(&d)],
        &["--out", "is a directory"],
        &[],
    );
    let file = d.join("file");
    write(&file, b"keep", 0o644);
    refused(
        &["verilog", "--spec", "specs/tiny.toml", "-o", s(&file)],
        &["--out", "is a file", "give a directory"],
        &[&file],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn overwriting_keeps_the_old_files_mode() {
    let d = tmpdir("mode");
    let m = d.join("m.model");
    write(&m, b"old", 0o600);
    ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--out",
        s(&m),
        "--json",
    ]);
    let meta = std::fs::metadata(&m).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_ne!(std::fs::read(&m).unwrap(), b"old");
    let p = d.join("p.json");
    write(&p, b"old", 0o640);
    ok_json(&[
        "plan",
        "--spec",
        "specs/tiny.toml",
        "--boards",
        "icebreaker",
        "-o",
        s(&p),
        "--json",
    ]);
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o640
    );
    std::fs::remove_dir_all(&d).ok();
}

/// An interrupted simulation leaves the waveform of the last complete run.
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
        s(&vcd),
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
            s(&vcd),
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
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(snapshot(&[&vcd]), before, "the complete VCD was replaced");
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
                s(&out),
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
            s(&out),
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
            s(&out),
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
            s(&out),
        ],
        &["--seed", "3000000000", "0..=2147483647"],
        &[],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn data_of_another_width_than_the_model_is_refused() {
    let d = tmpdir("width");
    let m = digits_model(&d);
    let csv = d.join("eight.csv");
    let mut text = String::new();
    for i in 0..40 {
        text += &format!("{},{}\n", vec![(i % 5).to_string(); 8].join(","), i % 10);
    }
    write(&csv, text.as_bytes(), 0o644);
    for cmd in ["eval", "infer"] {
        refused(
            &[cmd, "--model", s(&m), "--data", s(&csv)],
            &["eight.csv", "8 features", "digits.model", "trained on 64"],
            &[&m, &csv],
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

fn idx(n: u32, rows: u32, cols: u32, pixels: usize) -> Vec<u8> {
    let mut b = vec![0, 0, 8, 3];
    for v in [n, rows, cols] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    b.extend(std::iter::repeat(7u8).take(pixels));
    b
}

#[test]
fn idx_headers_are_checked() {
    let d = tmpdir("idx");
    let img = d.join("t-images-idx3-ubyte");
    let lab = d.join("t-labels-idx1-ubyte");
    write(&lab, &[0, 0, 8, 1, 0, 0, 0, 2, 1, 0], 0o644);
    let train = [
        "train",
        "--spec",
        "specs/tiny.toml",
        "--epochs",
        "1",
        "--data",
        s(&img),
    ];
    // 2^22 · 2^22 · 2^22 wraps to 0 in 64 bits: a 16-byte file would pass an unchecked size test
    let big = 1u32 << 22;
    write(&img, &idx(big, big, big, 0), 0o644);
    refused(
        &train,
        &[
            "t-images-idx3-ubyte",
            "4194304 images of 4194304x4194304",
            "header is damaged",
        ],
        &[&img],
    );
    write(&img, &idx(2, 0, 0, 0), 0o644);
    refused(
        &train,
        &["t-images-idx3-ubyte", "2 images of 0x0", "no pixels"],
        &[&img],
    );
    write(&img, &idx(2, 2, 2, 5), 0o644);
    refused(&train, &["is truncated: 21 bytes", "need 24"], &[&img]);
    write(&img, &idx(2, 2, 2, 9), 0o644);
    refused(&train, &["has 25 bytes", "1 extra bytes"], &[&img]);
    write(&img, &idx(2, 2, 2, 8), 0o644);
    let mut with_col = train.to_vec();
    with_col.extend(["--label-column", "3"]);
    refused(
        &with_col,
        &["--label-column 3", "applies to CSV files", "labels-idx1"],
        &[&img],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_bundled_digits_are_known_by_content_not_name() {
    let d = tmpdir("digits-name");
    // a user's own data that happens to be called digits.csv.gz
    let mine = d.join("digits.csv.gz");
    let mut text = String::new();
    for i in 0..40 {
        text += &format!("{},{}\n", vec![(i % 3).to_string(); 8].join(","), i % 4);
    }
    let plain = d.join("mine.csv");
    write(&plain, text.as_bytes(), 0o644);
    let gz = std::process::Command::new("gzip")
        .args(["-c", s(&plain)])
        .output()
        .unwrap();
    assert!(gz.status.success());
    write(&mine, &gz.stdout, 0o644);
    let v = ok_json(&[
        "train",
        "--spec",
        "specs/tiny.toml",
        "--epochs",
        "1",
        "--data",
        s(&mine),
        "--json",
    ]);
    assert_eq!(
        v["train_samples"].as_u64().unwrap() + v["test_samples"].as_u64().unwrap(),
        40
    );
    // the bundled file under another name is the bundled digits
    let copy = d.join("copy.gz");
    std::fs::copy(root().join("data/digits.csv.gz"), &copy).unwrap();
    let v = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--data",
        s(&copy),
        "--json",
    ]);
    let b = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--json",
    ]);
    assert_eq!(v["data"], "digits");
    assert_eq!(v["state_sha256"], b["state_sha256"]);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn deploy_takes_only_a_bitstream_for_the_board() {
    let d = tmpdir("deploy");
    let m = digits_model(&d);
    refused(
        &["deploy", "--board", "icebreaker", "--dry-run", s(&m)],
        &[
            "digits.model",
            "not a bitstream for ice40-up5k",
            "sync word 7eaa997e",
            "edgeflow bitstream",
        ],
        &[&m],
    );
    refused(
        &["deploy", "--board", "icebreaker", "--dry-run", s(&d)],
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
    write(
        &bin,
        &[0xff, 0x00, 0x00, 0xff, 0x7e, 0xaa, 0x99, 0x7e, 0x51, 0x00],
        0o644,
    );
    let v = ok_json(&[
        "deploy",
        "--board",
        "icebreaker",
        "--dry-run",
        s(&bin),
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
    write(
        &fake,
        b"#!/bin/sh\necho 'ERROR: fake yosys refuses'\nexit 1\n",
        0o755,
    );
    let path = format!("{}:{}", s(&bin), std::env::var("PATH").unwrap());
    let out = d.join("out");
    let e = refused_env(
        &[
            "bitstream",
            "--spec",
            "specs/tiny.toml",
            "--board",
            "icebreaker",
            "-o",
            s(&out),
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
            "reference, float, sparse-f32, dense, opencl[:DEVICE], rtl, verilator",
        ],
        &[],
    );
    let d = tmpdir("kbin");
    let k = d.join("garbage.bin");
    write(&k, b"garbage", 0o644);
    for args in [
        vec!["spec", "check", "specs/tiny.toml"],
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
        let mut a = vec!["--kernel-binary", s(&k)];
        a.extend(args);
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
    write(&cut, &full[..full.len() / 2], 0o644);
    let e = refused(
        &["eval", "--model", s(&cut)],
        &["cut.model", "truncated"],
        &[&cut],
    );
    assert!(e.contains(&format!("{} bytes", full.len() / 2)), "{e}");
    let csv = d.join("data.csv");
    write(&csv, b"1,2,3\n", 0o644);
    let e = refused(
        &["eval", "--model", s(&csv)],
        &["data.csv", "not an edgeflow model file", "found `1,2,3.`"],
        &[&csv],
    );
    assert!(!e.contains("truncated"), "{e}");
    // one byte broken in the middle of the JSON
    let mut bad = full.clone();
    let at = bad.len() / 2;
    bad[at] = b'}';
    let broken = d.join("broken.model");
    write(&broken, &bad, 0o644);
    let e = refused(
        &["eval", "--model", s(&broken)],
        &["broken.model"],
        &[&broken],
    );
    assert!(!e.contains("truncated"), "{e}");
    std::fs::remove_dir_all(&d).ok();
}

/// tiny at z = [2, 2] on the iCEBreaker: the cost model puts it at 95 % of the logic cells,
/// and nextpnr-ice40 cannot place it (6425 of 5280 logic cells). Neither `plan` nor `cost`
/// may call it fitting.
#[test]
fn the_fit_check_keeps_a_margin_below_the_full_part() {
    let v = ok_json(&[
        "plan",
        "--spec",
        "specs/tiny.toml",
        "--boards",
        "icebreaker",
        "--json",
    ]);
    for st in v["stages"].as_array().unwrap() {
        let u = &st["utilisation"];
        let (used, avail) = (
            u["logic"].as_f64().unwrap(),
            u["logic_available"].as_f64().unwrap(),
        );
        assert!(
            used <= 0.9 * avail,
            "planned {used} of {avail} logic cells: {st}"
        );
        assert_ne!(st["z"], serde_json::json!([2, 2]), "{st}");
    }
    let d = tmpdir("fit");
    let spec = d.join("tiny22.toml");
    let text = std::fs::read_to_string(root().join("specs/tiny.toml")).unwrap();
    let text = text.replace("z = [4, 2]", "z = [2, 2]");
    assert!(text.contains("z = [2, 2]"));
    write(&spec, text.as_bytes(), 0o644);
    let v = ok_json(&[
        "cost",
        "--spec",
        s(&spec),
        "--board",
        "icebreaker",
        "--json",
    ]);
    assert_eq!(v["fits"], false, "{v}");
    let verdict = v["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("uncertain fit") && verdict.contains("90% margin"),
        "{verdict}"
    );
    // and no false alarm: nextpnr-ice40 placed tiny at z = [1, 1] on the Alchitry Cu in 6067
    // of its 7680 logic cells, and digits at its own z on the iCEBreaker
    write(
        &spec,
        text.replace("z = [2, 2]", "z = [1, 1]").as_bytes(),
        0o644,
    );
    let v = ok_json(&[
        "cost",
        "--spec",
        s(&spec),
        "--board",
        "alchitry-cu",
        "--json",
    ]);
    assert_eq!(v["fits"], true, "{v}");
    let v = ok_json(&[
        "cost",
        "--spec",
        "specs/digits.toml",
        "--board",
        "icebreaker",
        "--json",
    ]);
    assert_eq!(v["fits"], true, "{v}");
    std::fs::remove_dir_all(&d).ok();
}
