//! Running the external tools, with errors that say what is missing and how to get it.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::{Command, Stdio};

/// An external program and the Debian package that provides it.
#[derive(Clone, Copy, Debug)]
pub struct Tool {
    pub program: &'static str,
    pub package: &'static str,
}

pub const YOSYS: Tool = Tool {
    program: "yosys",
    package: "yosys",
};
pub const NEXTPNR_ICE40: Tool = Tool {
    program: "nextpnr-ice40",
    package: "nextpnr-ice40",
};
pub const ICEPACK: Tool = Tool {
    program: "icepack",
    package: "fpga-icestorm",
};
pub const VERILATOR: Tool = Tool {
    program: "verilator",
    package: "verilator",
};
pub const OPENFPGALOADER: Tool = Tool {
    program: "openFPGALoader",
    package: "openfpgaloader",
};

impl Tool {
    /// Whether the program is on PATH.
    pub fn available(&self) -> bool {
        std::env::var_os("PATH")
            .map(|paths| std::env::split_paths(&paths).any(|d| d.join(self.program).is_file()))
            .unwrap_or(false)
    }

    pub fn require(&self) -> Result<()> {
        if !self.available() {
            bail!(
                "`{}` not found on PATH; install the Debian package `{}` (sudo apt-get install {})",
                self.program,
                self.package,
                self.package
            );
        }
        Ok(())
    }

    /// Run to completion in `dir`, its output saved to `log`. On failure the error carries
    /// the end of the log, where the tools put the reason.
    pub fn run(&self, args: &[&str], dir: &Path, log: &Path) -> Result<String> {
        self.require()?;
        let out = Command::new(self.program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot start {}", self.program))?;
        let mut text = String::from_utf8_lossy(&out.stdout).to_string();
        text += &String::from_utf8_lossy(&out.stderr);
        std::fs::write(log, &text).with_context(|| format!("cannot write {}", log.display()))?;
        if !out.status.success() {
            let tail: Vec<&str> = text.lines().rev().take(25).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "{} {} failed ({}); full log: {}\n{}",
                self.program,
                args.join(" "),
                out.status,
                log.display(),
                tail.join("\n")
            );
        }
        Ok(text)
    }
}

/// For tests: whether a tool-dependent test may run. Missing tool: fails under `CI=true`,
/// otherwise prints a skip notice and returns false.
pub fn tool_for_test(tool: Tool) -> bool {
    if tool.available() {
        return true;
    }
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!(
            "CI=true but `{}` (Debian package {}) is missing",
            tool.program, tool.package
        );
    }
    eprintln!(
        "skipping: `{}` not installed (Debian package {})",
        tool.program, tool.package
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_names_its_package() {
        let t = Tool {
            program: "edgeflow-no-such-tool",
            package: "edgeflow-pkg",
        };
        let e = t
            .run(&[], Path::new("."), Path::new("/dev/null"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("edgeflow-no-such-tool") && e.contains("apt-get install edgeflow-pkg"),
            "{e}"
        );
    }
}
