//! The FPGA flow as code: the open tools (yosys, nextpnr-ice40, icepack, nextpnr-ecp5,
//! ecppack, verilator, openFPGALoader) run as subprocesses, their reports parsed into numbers
//! the CLI prints, and static timing over the routed delays. It knows parts (`targets`), not
//! the hardware: edgeflow-hdl hands it Verilog text.

pub mod nextpnr;
pub mod nextpnr_ecp5;
pub mod sta;
pub mod targets;
pub mod tools;
pub mod verilator;
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

/// Move a finished temporary file into place, with the permission bits of the file it
/// replaces (a private file stays private); on failure remove it, so nothing half-written is
/// left and any earlier file at `path` is untouched. Errors name `path`, never the temporary.
pub fn commit_temp(tmp: &Path, path: &Path) -> anyhow::Result<()> {
    let kept = match std::fs::metadata(path) {
        Ok(old) => std::fs::set_permissions(tmp, old.permissions()),
        Err(_) => Ok(()),
    };
    if let Err(e) = kept.and_then(|_| std::fs::rename(tmp, path)) {
        let _ = std::fs::remove_file(tmp);
        anyhow::bail!("cannot write {}: {e}", path.display());
    }
    Ok(())
}

/// Write a file so a reader never sees half of it: a temporary file beside it, then a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = temp_beside(path, "")?;
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        anyhow::bail!("cannot write {}: {e}", path.display());
    }
    commit_temp(&tmp, path)
}
