//! The FPGA flow as code: the open tools (yosys, nextpnr-ice40, icepack, nextpnr-ecp5,
//! ecppack, verilator, openFPGALoader) run as subprocesses, their reports parsed into numbers
//! the CLI prints.

pub mod nextpnr;
pub mod nextpnr_ecp5;
pub mod sta;
pub mod targets;
pub mod tools;
pub mod verilator;
pub mod verilator_uart;
pub mod yosys;

use std::path::Path;

/// The temporary file an atomic write uses: hidden, beside `path` (so the rename stays on
/// one file system), with `ext` kept so tools that pick a format by extension still can.
/// Creates the directory.
pub fn temp_beside(path: &Path, ext: &str) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create directory {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let dot = if ext.is_empty() { "" } else { "." };
    Ok(dir.join(format!(".{name}.tmp-{}{dot}{ext}", std::process::id())))
}

/// Move a finished temporary file into place; on failure remove it, so nothing half-written
/// is left and any earlier file at `path` is untouched.
pub fn commit_temp(tmp: &Path, path: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::rename(tmp, path).with_context(|| {
        let _ = std::fs::remove_file(tmp);
        format!(
            "cannot move {} into place as {}",
            tmp.display(),
            path.display()
        )
    })
}

/// Write a file so a reader never sees half of it: a temporary file beside it, then a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let tmp = temp_beside(path, "")?;
    std::fs::write(&tmp, bytes).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}", tmp.display())
    })?;
    commit_temp(&tmp, path)
}
