//! Driving blocks outside rust-hdl's threaded `Simulation`: settle, clock, and the yosys lint
//! every block's Verilog must pass. The testbench harness (sim crate) uses the same loop,
//! which is several times faster than the channel-based testbench of `Simulation`.

use rust_hdl::core::prelude::*;
use std::path::PathBuf;
use std::process::Command;

/// Propagate until no signal changes (combinational settling, one simulation time step).
pub fn settle<B: Block>(b: &mut B) {
    for _ in 0..10_000 {
        b.update_all();
        if !b.has_changed() {
            return;
        }
    }
    panic!("circuit did not settle (combinational loop?)");
}

/// One full clock period: rising edge, settle, falling edge, settle.
pub fn tick<B: Block>(b: &mut B, clock: impl Fn(&mut B) -> &mut Signal<In, Clock>) {
    clock(b).next = Clock { clk: true };
    settle(b);
    clock(b).next = Clock { clk: false };
    settle(b);
}

/// Compile and run a self-contained Icarus testbench (module `tb`) and return what it printed.
/// `None` when iverilog is not installed (a failure under `CI=true`); a compile error panics
/// with Icarus' message.
pub fn icarus_run(tb: &str, tag: &str) -> Option<String> {
    if Command::new("iverilog").arg("-V").output().is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "iverilog (Debian package iverilog) is required under CI=true"
        );
        eprintln!("skipping {tag}: iverilog is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("edgeflow-icarus-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tb.v"), tb).unwrap();
    let c = Command::new("iverilog")
        .current_dir(&dir)
        .args(["-g2005", "-o", "tb.vvp", "tb.v"])
        .output()
        .unwrap();
    assert!(
        c.status.success(),
        "iverilog failed on {tag}: {}",
        String::from_utf8_lossy(&c.stderr)
    );
    let out = Command::new("vvp")
        .current_dir(&dir)
        .args(["-n", "tb.vvp"])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The rows of `n` integers an Icarus testbench printed (other lines, such as warnings,
/// left out).
pub fn icarus_rows(out: &str, n: usize) -> Vec<Vec<i32>> {
    out.lines()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .filter(|v: &Vec<i32>| v.len() == n)
        .collect()
}

/// Why a Verilog translation fails its yosys lint.
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{name}: yosys found {} problem(s) (files in {dir}):\n{}", .problems.len(), .problems.join("\n"))]
    Problems {
        name: String,
        dir: String,
        problems: Vec<String>,
    },
}

/// Why yosys rejects a Verilog translation: latches, undriven wires, missing modules, or
/// anything `check -assert` finds. `Ok(None)` when yosys is not installed.
pub fn yosys_lint(verilog: &str, name: &str) -> Result<Option<()>, LintError> {
    if Command::new("yosys").arg("-V").output().is_err() {
        return Ok(None);
    }
    let dir = std::env::temp_dir().join(format!("edgeflow-yosys-{}-{name}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file: PathBuf = dir.join("top.v");
    std::fs::write(&file, verilog)?;
    let out = Command::new("yosys")
        .current_dir(&dir)
        .arg("-q")
        .arg("-l")
        .arg("yosys.log")
        .arg("-p")
        .arg("read_verilog top.v; hierarchy -check -top top; proc; check -assert")
        .output()?;
    let log = std::fs::read_to_string(dir.join("yosys.log")).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    for line in log.lines().chain(stderr.lines()) {
        if line.contains("Latch inferred")
            || line.contains("has no driver")
            || line.contains("is not part of the design")
            || line.contains("implicitly declared")
            || line.contains("ERROR")
            || line.contains("Warning: multiple conflicting drivers")
        {
            problems.push(line.trim().to_string());
        }
    }
    if !out.status.success() && problems.is_empty() {
        problems.push(format!("yosys failed: {}", stderr.trim()));
    }
    if problems.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Some(()))
    } else {
        Err(LintError::Problems {
            name: name.to_string(),
            dir: dir.display().to_string(),
            problems,
        })
    }
}

/// Test helper: the last `stat` of yosys running `script` (after `read_verilog top.v`) on a
/// block's Verilog; `None` without yosys (a failure under `CI=true`).
pub fn yosys_stat<B: Block>(b: &B, name: &str, script: &str) -> Option<String> {
    if Command::new("yosys").arg("-V").output().is_err() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "yosys is required"
        );
        return None;
    }
    let dir = std::env::temp_dir().join(format!("edgeflow-yosys-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("top.v"), generate_verilog_unchecked(b)).unwrap();
    let out = Command::new("yosys")
        .current_dir(&dir)
        .args(["-p", &format!("read_verilog top.v; {script}; stat")])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{name}: {log}");
    let _ = std::fs::remove_dir_all(&dir);
    Some(
        log.rsplit("Printing statistics")
            .next()
            .unwrap()
            .to_string(),
    )
}

/// Test helper: lint a block's Verilog; skip (or fail under `CI=true`) without yosys.
pub fn yosys_check<B: Block>(b: &B, name: &str) {
    let v = generate_verilog_unchecked(b);
    match yosys_lint(&v, name) {
        Ok(Some(())) => {}
        Ok(None) => {
            if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
                panic!("yosys is required under CI=true");
            }
            eprintln!("skipping the yosys check of {name}: yosys is not installed");
        }
        Err(e) => panic!("{e}\n--- verilog ---\n{v}"),
    }
}
