//! `edgeflow verilog | synth | bitstream | deploy | vivado`: the FPGA flow from the command
//! line. Tool runs land in a work directory; results are printed as tables or `--json`.

pub mod bitstream;
pub mod bitstream_plan;
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
        "UNOPTFLAT",
        "rust-hdl writes a module's update as one always block and Verilator orders whole blocks, so a path through a block looks circular; waived only when yosys `check` finds no loop bit by bit",
    ),
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
    if by_cat.contains_key("UNOPTFLAT") {
        unwaived.extend(real_loops(dir, file));
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

/// What keeps Verilator's `UNOPTFLAT` from being waived: the loops yosys finds bit by bit, or
/// the reason the check could not run.
fn real_loops(dir: &Path, file: &str) -> Vec<String> {
    if !edgeflow_flow::tools::YOSYS.available() {
        return vec![
            "UNOPTFLAT: yosys (Debian package yosys) is not installed, so the loops Verilator names cannot be checked bit by bit".into(),
        ];
    }
    match edgeflow_flow::yosys::combinational_loops(dir, file) {
        Ok(loops) => loops
            .into_iter()
            .map(|l| format!("UNOPTFLAT: yosys check: {l}"))
            .collect(),
        Err(e) => vec![format!("UNOPTFLAT: the yosys loop check failed: {e:#}")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgeflow_flow::tools::{tool_for_test, VERILATOR, YOSYS};

    /// A register read through a child's one always block and fed back to it by the parent:
    /// circular to Verilator, not bit by bit.
    const THROUGH: &str = "module child(input wire clk, input wire i, output reg o, output reg p);
    reg r;
    reg t;
    always @(*) begin
        t = r;
        o = t;
        p = i;
        if (t) begin
            p = !i;
        end
    end
    always @(posedge clk) r <= p;
endmodule
module top(input wire clk, output wire z);
    wire o;
    wire p;
    reg i;
    child c(.clk(clk), .i(i), .o(o), .p(p));
    always @(*) i = o;
    assign z = p;
endmodule
";

    fn lint(text: &str) -> serde_json::Value {
        let dir = work_dir("lint-test").unwrap();
        std::fs::write(dir.path().join("top.v"), text).unwrap();
        lint_report(dir.path(), "top.v", &[]).unwrap()
    }

    fn categories(v: &serde_json::Value) -> Vec<String> {
        v["by_category"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["category"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn verilators_block_loops_pass_only_when_no_bit_loops() {
        if !tool_for_test(VERILATOR) || !tool_for_test(YOSYS) {
            return;
        }
        let through = lint(THROUGH);
        assert!(
            categories(&through).contains(&"UNOPTFLAT".to_string()),
            "{through}"
        );
        assert_eq!(
            through["unwaived"].as_array().unwrap().len(),
            0,
            "{through}"
        );
        // the same with the child's output depending on its input: a real loop
        let real = lint(&THROUGH.replace("o = t;", "o = t ^ i;"));
        let unwaived = real["unwaived"].as_array().unwrap();
        assert!(
            unwaived
                .iter()
                .any(|u| u.as_str().unwrap().contains("logic loop")),
            "{real}"
        );
    }
}
