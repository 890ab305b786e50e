//! What a command reads and writes, checked before any work: every output's directory
//! exists and takes new files, no output is a directory, and no output is an input or
//! another output of the same command (compared after resolving links). A long run then
//! never ends in an unwritable path, and an output never replaces what the run read.

use anyhow::{bail, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The paths of one command, each with the flag that named it.
#[derive(Default)]
pub struct Paths {
    inputs: Vec<(String, PathBuf)>,
    outputs: Vec<(String, PathBuf)>,
    dirs: Vec<(String, PathBuf)>,
}

impl Paths {
    pub fn new() -> Paths {
        Paths::default()
    }

    pub fn input(mut self, flag: &str, p: Option<&Path>) -> Paths {
        if let Some(p) = p {
            self.inputs.push((flag.into(), p.to_path_buf()));
        }
        self
    }

    /// A `--data` value: `digits` is built in; an MNIST images file brings its labels file.
    pub fn data(self, flag: &str, data: Option<&str>) -> Paths {
        match data {
            None | Some("digits") | Some("random") => self,
            Some(d) => {
                let p = Path::new(d);
                let labels = p
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .filter(|n| n.contains("images-idx3"))
                    .map(|n| p.with_file_name(n.replace("images-idx3", "labels-idx1")));
                self.input(flag, Some(p)).input(flag, labels.as_deref())
            }
        }
    }

    pub fn output(mut self, flag: &str, p: Option<&Path>) -> Paths {
        if let Some(p) = p {
            self.outputs.push((flag.into(), p.to_path_buf()));
        }
        self
    }

    /// A directory the command fills (created if missing), with the names it writes there.
    pub fn out_dir(mut self, flag: &str, dir: &Path, files: &[String]) -> Paths {
        self.dirs.push((flag.into(), dir.to_path_buf()));
        for f in files {
            self.outputs.push((flag.into(), dir.join(f)));
        }
        self
    }

    /// The files by flag, for `--verbose`.
    pub fn describe(&self) -> String {
        let list = |v: &[(String, PathBuf)]| {
            v.iter()
                .map(|(f, p)| format!("{f} {}", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut written = self.outputs.clone();
        written.extend(self.dirs.iter().map(|(f, d)| (f.clone(), d.join(""))));
        format!(
            "reads: {}; writes: {}",
            Some(list(&self.inputs))
                .filter(|s| !s.is_empty())
                .unwrap_or("-".into()),
            Some(list(&written))
                .filter(|s| !s.is_empty())
                .unwrap_or("-".into())
        )
    }

    pub fn check(&self) -> Result<()> {
        for (flag, d) in &self.dirs {
            if d.exists() && !d.is_dir() {
                bail!(
                    "{flag} {}: is a file; this command writes several files into a directory: give a directory",
                    d.display()
                );
            }
            let base = existing_ancestor(d);
            if !base.is_dir() {
                bail!(
                    "{flag} {}: {} is not a directory; give a directory path",
                    d.display(),
                    base.display()
                );
            }
            writable(flag, d, &base)?;
        }
        for (flag, p) in &self.outputs {
            check_output(flag, p, self.dirs.iter().any(|(_, d)| p.starts_with(d)))?;
        }
        for (i, (flag, p)) in self.outputs.iter().enumerate() {
            for (iflag, ip) in &self.inputs {
                if same_file(p, ip) {
                    bail!(
                        "{flag} {}: is the input {iflag} {}; the output would replace what this command reads. Write the output under another name",
                        p.display(),
                        ip.display()
                    );
                }
            }
            for (oflag, op) in &self.outputs[..i] {
                if same_file(p, op) {
                    bail!(
                        "{oflag} {} and {flag} {} name the same file; one output would overwrite the other. Give each output its own name",
                        op.display(),
                        p.display()
                    );
                }
            }
        }
        Ok(())
    }
}

fn check_output(flag: &str, p: &Path, in_new_dir: bool) -> Result<()> {
    if p.is_dir() {
        bail!(
            "{flag} {}: is a directory; give a file name (e.g. {})",
            p.display(),
            p.join("out").display()
        );
    }
    if p.file_name().is_none() {
        bail!("{flag} {}: names no file; give a file name", p.display());
    }
    let parent = parent(p);
    if in_new_dir && !parent.exists() {
        return Ok(()); // the directory check covered where it will be created
    }
    if !parent.exists() {
        bail!(
            "{flag} {}: directory {} does not exist; create it first or write elsewhere",
            p.display(),
            parent.display()
        );
    }
    if !parent.is_dir() {
        bail!(
            "{flag} {}: {} is not a directory; give a path inside a directory",
            p.display(),
            parent.display()
        );
    }
    writable(flag, p, &parent)
}

fn parent(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The deepest part of `p` that exists (`.` for a relative path none of which exists).
fn existing_ancestor(p: &Path) -> PathBuf {
    let mut a = p.to_path_buf();
    while !a.exists() {
        match a.parent() {
            Some(d) if !d.as_os_str().is_empty() => a = d.to_path_buf(),
            _ => return PathBuf::from("."),
        }
    }
    a
}

/// Whether files can be created in `dir`: by creating one and removing it, the only test
/// that holds for read-only mounts, /proc and permission bits alike.
fn writable(flag: &str, p: &Path, dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".edgeflow-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => bail!(
            "{flag} {}: cannot create files in directory {} ({}); write to another directory",
            p.display(),
            dir.display(),
            io_reason(&e)
        ),
    }
}

/// An I/O error as a reason, without the OS error number.
pub fn io_reason(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.find(" (os error") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

/// Where `p` points: the file itself when it exists (links resolved), else its resolved
/// directory and its name; the part of a directory not yet made is kept as written.
fn resolved(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let base = existing_ancestor(p);
    // `.` stands for the working directory, not for a first component of `p`
    let skip = if base == Path::new(".") && !p.starts_with(".") {
        0
    } else {
        base.components().count()
    };
    let rest: PathBuf = p
        .components()
        .skip(skip)
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    let base = base.canonicalize().unwrap_or(base);
    base.join(rest)
}

fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        // hard links too
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    resolved(a) == resolved(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_links_and_names_not_yet_written() {
        let d = std::env::temp_dir().join(format!("edgeflow-paths-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("a"), "x").unwrap();
        std::os::unix::fs::symlink(d.join("a"), d.join("link")).unwrap();
        assert!(same_file(&d.join("link"), &d.join("a")));
        assert!(same_file(&d.join("sub/../b"), &d.join("b")));
        assert!(!same_file(&d.join("b"), &d.join("c")));
        // relative names of which nothing exists yet are still two files
        assert!(!same_file(
            Path::new("edgeflow-missing-a.model"),
            Path::new("edgeflow-missing-b.onnx")
        ));
        assert!(same_file(
            Path::new("./edgeflow-missing-a.model"),
            Path::new("edgeflow-missing-a.model")
        ));
        let e = Paths::new()
            .input("--spec", Some(&d.join("a")))
            .output("--out", Some(&d.join("sub/../link")))
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("is the input --spec"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
