//! What every CLI test needs: the built `edgeflow` binary run from the workspace root, and
//! checks that it succeeded with JSON or failed with a message naming what went wrong.
#![allow(dead_code)] // each test crate uses its own subset

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    // an empty report cache of each test's own: the user's kept synthesis reports must not
    // change what the bench projects in a test, tests must not add to them, and tests that
    // share a binary must not see each other's (libtest names a test's thread after it)
    let test = std::thread::current()
        .name()
        .unwrap_or("main")
        .replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let reports = std::env::temp_dir().join(format!(
        "edgeflow-test-reports-{}-{test}",
        std::process::id()
    ));
    let mut c = Command::new(env!("CARGO_BIN_EXE_edgeflow"));
    c.args(args)
        .env("EDGEFLOW_REPORTS", &reports)
        .envs(env.iter().copied())
        .current_dir(root());
    c
}

/// Run `edgeflow ARGS` with extra environment variables.
pub fn edgeflow_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().expect("edgeflow runs")
}

pub fn edgeflow(args: &[&str]) -> Output {
    edgeflow_env(args, &[])
}

/// Run `edgeflow ARGS`, killed after `limit` (None then): for a command that waits on a
/// device, so one that never answers fails its test instead of hanging it.
pub fn edgeflow_within(args: &[&str], limit: std::time::Duration) -> Option<Output> {
    output_within(command(args, &[]), limit)
}

/// Run `c` to its end with its output captured, killed after `limit` (None then).
pub fn output_within(mut c: Command, limit: std::time::Duration) -> Option<Output> {
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command runs");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(o) => Some(o.expect("the command runs")),
        Err(_) => {
            // SAFETY: the child is not reaped before the waiting thread sees it end, so the
            // pid is still its own.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = rx.recv();
            None
        }
    }
}

pub fn ok_json(args: &[&str]) -> Value {
    json_of(args, edgeflow(args))
}

/// The JSON a successful `edgeflow ARGS` printed (its output `o`).
pub fn json_of(args: &[&str], o: Output) -> Value {
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

/// The command fails cleanly (exit 1 or 2, no panic) and its error contains every needle.
pub fn fails_with(args: &[&str], needles: &[&str]) {
    let o = edgeflow(args);
    assert!(!o.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    // 1: edgeflow's own errors, 2: clap's usage errors; a panic exits with 101.
    assert!(matches!(o.status.code(), Some(1 | 2)), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}: {err}");
    }
}

/// A fresh directory for one test's files.
pub fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("edgeflow-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether `tool` is on PATH; under CI=true a missing tool fails the test (naming its Debian
/// package) instead of skipping it.
pub fn have(tool: &str, package: &str) -> bool {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false);
    if !found {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but {tool} (Debian package {package}) is missing");
        }
        eprintln!("skipping: {tool} not installed (Debian package {package})");
    }
    found
}

/// Bytes and permission bits of each file (None: absent).
pub fn snapshot(files: &[&Path]) -> Vec<(PathBuf, Option<(Vec<u8>, u32)>)> {
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
pub fn refused(args: &[&str], needles: &[&str], keep: &[&Path]) -> String {
    refused_env(args, &[], needles, keep)
}

pub fn refused_env(
    args: &[&str],
    env: &[(&str, &str)],
    needles: &[&str],
    keep: &[&Path],
) -> String {
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

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn write_mode(p: &Path, bytes: &[u8], mode: u32) {
    std::fs::write(p, bytes).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A digits model trained for one epoch.
pub fn digits_model(d: &Path) -> PathBuf {
    let m = d.join("digits.model");
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
    m
}

const TOY_BOARD: &str = "name = \"toy\"\npart = \"none\"\ndescription = \"a small board for chain tests\"\nclock_mhz = 10.0\ndsp = 4\nlogic = 4445\nlut_per_multiplier = 280\nram_bits = 65536\nram_blocks = 8\nram_block_width = 16\nlink_mbps = 20.0\nlink_latency_us = 1.0\n[fit]\nlogic_per_junction = 2014\nlogic_per_lane_bit = 55\nlogic_per_board = 800\nff_per_board = 300\nff_per_lane_bit = 28\nff_per_lut_multiplier = 0\n";

const TOY_SPEC: &str = "name = \"chain-small\"\nlayers = [16, 16, 8, 4]\nfan_out = [2, 2, 2]\nz = [2, 2, 2]\nactivation = \"sigmoid\"\nlearning_rate_shift = 2\nseed = 3\n[fixed]\nwidth = 10\nint_bits = 2\nfrac_bits = 7\n[pattern]\nkind = \"type2\"\ndither = true\nseed = 4\n";

/// A small spec, three small boards to split it across (their own cost constants, so
/// recalibrating the built-in boards leaves the split alone; the middle one builds with
/// registered reads and the deep pipeline) and 60 samples of 4 classes, written into `dir`:
/// the spec's path, the `--boards` list and the data's path.
pub fn toy_chain(dir: &Path) -> (String, String, String) {
    std::fs::write(dir.join("toy.toml"), TOY_BOARD).unwrap();
    // the same board building with registered reads and the deep pipeline, as an iCEBreaker
    // does: its stage's block cycle is 3 clocks longer, in the plan and in the RTL
    let deep = TOY_BOARD
        .replace("name = \"toy\"", "name = \"toy-deep\"")
        .replace(
            "[fit]",
            "registered_reads = true\ndeep_pipeline = true\n[fit]",
        );
    std::fs::write(dir.join("toy-deep.toml"), deep).unwrap();
    std::fs::write(dir.join("s.toml"), TOY_SPEC).unwrap();
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
    let (spec, data) = (path("s.toml"), path("d.csv"));
    let boards = format!(
        "{},{},{}",
        path("toy.toml"),
        path("toy-deep.toml"),
        path("toy.toml")
    );
    (spec, boards, data)
}

/// A bitstream report's seed sweep (`--seed A,B,...`): the seeds were tried in the order
/// given, stopping at the first that met the clock (every one before it missed), and the
/// report's Fmax and seed are the last one's.
pub fn assert_seed_sweep(report: &Value, seeds: &[u64]) {
    let tried = report["seeds_tried"].as_array().expect("seeds_tried");
    let clock = report["clock_mhz"].as_f64().unwrap();
    let order: Vec<u64> = tried.iter().map(|t| t["seed"].as_u64().unwrap()).collect();
    assert_eq!(order, seeds[..order.len()], "{report}");
    let (last, before) = tried.split_last().unwrap();
    for t in before {
        assert!(
            t["fmax_mhz"].as_f64().unwrap() < clock,
            "{t} met the clock: {report}"
        );
    }
    if last["fmax_mhz"].as_f64().unwrap() < clock {
        assert_eq!(
            order.len(),
            seeds.len(),
            "stopped on a missed clock: {report}"
        );
    }
    assert_eq!(report["seed"], last["seed"], "{report}");
    assert_eq!(report["fmax_mhz"], last["fmax_mhz"], "{report}");
}

/// The slowest clock's achieved Fmax in a nextpnr `--report` JSON (MHz).
pub fn nextpnr_fmax(report: &Path) -> f64 {
    let text = std::fs::read_to_string(report).unwrap();
    let np: Value = serde_json::from_str(&text).unwrap();
    np["fmax"]
        .as_object()
        .unwrap_or_else(|| panic!("no fmax in {}", report.display()))
        .values()
        .map(|c| c["achieved"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min)
}
