//! `edgeflow verilog | synth | bitstream | deploy | vivado`: the FPGA flow from the command
//! line. Tool runs land in a work directory; results are printed as tables or `--json`.

pub mod bitstream;
pub mod check;
pub mod fit;
pub mod synth;
pub mod verilog;
pub mod vivado;

use crate::paths::Paths;
use crate::ui::spinner;
use anyhow::{anyhow, bail, Result};
use edgeflow_core::Spec;
use edgeflow_flow::verilator;
use edgeflow_hdl::design::Inner;
use serde_json::json;
use std::path::Path;

/// Which design: the spec's network, or a stand-in named by the hidden `--standin` flag.
pub fn inner(spec: Option<&Path>, standin: Option<&str>) -> Result<Inner> {
    match (standin, spec) {
        (Some("echo"), _) => Ok(Inner::Echo),
        (Some(other), _) => bail!("unknown stand-in '{other}'; available: echo"),
        (None, Some(p)) => Ok(Inner::Network(Spec::load(p)?)),
        (None, None) => bail!("--spec SPEC is required"),
    }
}

/// The files a directory command writes, checked against its spec before any work.
fn check_out_files(spec: Option<&Path>, out: &Path, files: &[String]) -> Result<()> {
    Paths::new()
        .input("--spec", spec)
        .out_dir("--out", out, files)
        .check()
}

fn work_dir(name: &str) -> Result<tempdir::Dir> {
    tempdir::Dir::new(name)
}

/// A tool run failed: keep its work directory, which holds the logs its message points to.
fn keep_logs(e: anyhow::Error, dir: tempdir::Dir) -> anyhow::Error {
    let p = dir.keep();
    anyhow!(
        "{e:#}\nthe work directory {} is kept with the tools' logs; remove it when done",
        p.display()
    )
}

/// A scratch directory removed on drop (kept when EDGEFLOW_KEEP_WORK is set, or after a
/// failure through `keep`).
mod tempdir {
    use anyhow::Result;
    use std::path::{Path, PathBuf};
    pub struct Dir(PathBuf, bool);
    impl Dir {
        pub fn new(name: &str) -> Result<Dir> {
            let p = std::env::temp_dir().join(format!("edgeflow-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p)?;
            Ok(Dir(p, false))
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
        pub fn keep(mut self) -> PathBuf {
            self.1 = true;
            self.0.clone()
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            if !self.1 && std::env::var_os("EDGEFLOW_KEEP_WORK").is_none() {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}

/// Lint warning categories that rust-hdl's generated Verilog triggers by construction, each
/// with the reason it is waived. Anything else fails `edgeflow verilog`.
pub const LINT_WAIVERS: &[(&str, &str)] = &[
    ("DECLFILENAME", "rust-hdl writes every module into one file, named after the top, by design"),
    (
        "WIDTH",
        "rust-hdl sizes integer literals and some operators at 32 bits and relies on assignment truncation; the truncation is exactly Bits<N> wrap-around, and the Verilator co-simulation proves every bit against the reference model",
    ),
    ("UNUSEDSIGNAL", "unused bits of sliced buses and constants rust-hdl emits as local signals"),
    ("UNUSEDPARAM", "rust-hdl emits every Constant as a localparam, used or not"),
    ("UNDRIVEN", "declared-but-unused outputs of library blocks (e.g. FIFO flags) rust-hdl leaves undriven"),
    ("PINCONNECTEMPTY", "unconnected optional ports of library blocks"),
    ("CASEINCOMPLETE", "state machines whose unused encodings fall to the default branch"),
    ("SYNCASYNCNET", "none expected; listed so a report names it"),
    ("BLKSEQ", "rust-hdl's simulation-only initial blocks use blocking assignments"),
    ("VARHIDDEN", "rust-hdl reuses port names as locals in wrapper modules"),
    ("PROCASSINIT", "rust-hdl sets register power-up values in initial blocks"),
    ("MULTIDRIVEN", "none expected; listed so a report names it"),
    (
        "UNSIGNED",
        "generated schedule comparisons against an offset of 0 (`started >= 0`), always true by design",
    ),
];

fn lint_report(dir: &Path, file: &str, extra: &[&str]) -> Result<serde_json::Value> {
    let warnings = verilator::lint(dir, file, extra)?;
    let mut by_cat: std::collections::BTreeMap<String, usize> = Default::default();
    let mut unwaived = vec![];
    for w in &warnings {
        let cat = w
            .trim_start_matches('%')
            .split(':')
            .next()
            .unwrap_or("")
            .trim_start_matches("Warning-")
            .to_string();
        if cat.starts_with("Error") {
            unwaived.push(w.clone());
            continue;
        }
        if !LINT_WAIVERS.iter().any(|(c, _)| *c == cat) {
            unwaived.push(w.clone());
        }
        *by_cat.entry(cat).or_default() += 1;
    }
    let waived: Vec<_> = by_cat
        .iter()
        .map(|(c, n)| {
            let why = LINT_WAIVERS
                .iter()
                .find(|(k, _)| k == c)
                .map(|x| x.1)
                .unwrap_or("NOT WAIVED");
            json!({"category": c, "count": n, "reason": why})
        })
        .collect();
    Ok(
        json!({"file": file, "warnings": warnings.len(), "by_category": waived, "unwaived": unwaived}),
    )
}
