//! `edgeflow deploy`: load a bitstream onto a board with openFPGALoader, after checking the
//! file is a bitstream for that board.

use crate::report::{emit, Format};
use crate::ui::spinner;
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_flow::tools::OPENFPGALOADER;
use edgeflow_hdl::boards::{board, BoardInfo};
use std::path::Path;

/// USB devices present, as `vvvv:pppp` ids, from sysfs.
pub(crate) fn usb_ids() -> Vec<String> {
    let mut ids = vec![];
    if let Ok(rd) = std::fs::read_dir("/sys/bus/usb/devices") {
        for e in rd.flatten() {
            let r = |f: &str| {
                std::fs::read_to_string(e.path().join(f))
                    .ok()
                    .map(|s| s.trim().to_string())
            };
            if let (Some(v), Some(p)) = (r("idVendor"), r("idProduct")) {
                ids.push(format!("{v}:{p}"));
            }
        }
    }
    ids
}

/// The configuration sync word every bitstream of the board's family carries near its start
/// (iCE40: after icepack's comment block; ECP5: the preamble after ecppack's comment;
/// 7-series: after the .bit header), with what makes it.
fn sync_word(b: &BoardInfo) -> Option<(&'static [u8], &'static str)> {
    if b.target.starts_with("ice40") {
        Some((
            &[0x7e, 0xaa, 0x99, 0x7e],
            "`edgeflow bitstream` (icepack's .bin)",
        ))
    } else if b.target.starts_with("ecp5") {
        Some((
            &[0xff, 0xff, 0xbd, 0xb3],
            "`edgeflow bitstream` (ecppack's .bit)",
        ))
    } else if b.target.starts_with("xc7") {
        Some((
            &[0xaa, 0x99, 0x55, 0x66],
            "Vivado (the .bit of `edgeflow vivado`'s project)",
        ))
    } else {
        None
    }
}

/// Refuse what is not a bitstream for the board before anything is sent to it.
pub(crate) fn check_bitstream(b: &BoardInfo, path: &Path) -> Result<()> {
    let build = format!(
        "build one with `edgeflow bitstream --spec SPEC --board {} -o DIR`",
        b.name
    );
    if path.is_dir() {
        bail!(
            "bitstream {}: is a directory; give the file in it (DIR/<design>-{}.bin), or {build}",
            path.display(),
            b.name
        );
    }
    let bytes = std::fs::read(path).map_err(|e| {
        anyhow!(
            "bitstream {}: cannot be read ({}); {build}",
            path.display(),
            crate::paths::io_reason(&e)
        )
    })?;
    let Some((sync, maker)) = sync_word(b) else {
        return Ok(());
    };
    let head = &bytes[..bytes.len().min(4096)];
    if !head.windows(sync.len()).any(|w| w == sync) {
        let hex: Vec<String> = head.iter().take(8).map(|x| format!("{x:02x}")).collect();
        bail!(
            "bitstream {}: not a bitstream for {}: no sync word {} in its first {} bytes (it starts {}); give the file written by {maker}",
            path.display(),
            b.target,
            sync.iter().map(|x| format!("{x:02x}")).collect::<String>(),
            head.len(),
            if hex.is_empty() { "empty".to_string() } else { hex.join(" ") }
        );
    }
    Ok(())
}

/// `edgeflow deploy`'s report: the loader's command, run or (`--dry-run`) not.
#[derive(serde::Serialize)]
struct Deployed {
    board: &'static str,
    command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    dry_run: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loaded: Option<bool>,
    #[serde(skip)]
    bitstream: String,
}

impl std::fmt::Display for Deployed {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self.loaded {
            Some(_) => writeln!(f, "loaded {} onto the {}", self.bitstream, self.board),
            None => writeln!(f, "would run: {}", self.command),
        }
    }
}

pub fn deploy_cmd(
    bname: &str,
    bitstream: &Path,
    dry_run: bool,
    flash: bool,
    json: bool,
) -> Result<()> {
    let b = board(bname)?;
    check_bitstream(b, bitstream)?;
    let mut args = vec!["-b".to_string(), b.loader_board.to_string()];
    if flash {
        args.push("-f".into());
    }
    args.push(bitstream.display().to_string());
    let cmd = format!("openFPGALoader {}", args.join(" "));
    let mut r = Deployed {
        board: b.name,
        command: cmd.clone(),
        dry_run: dry_run.then_some(true),
        loaded: None,
        bitstream: bitstream.display().to_string(),
    };
    if dry_run {
        emit(&r, Format::json(json));
        return Ok(());
    }
    OPENFPGALOADER.require()?;
    if !usb_ids().iter().any(|id| id == b.usb_id) {
        bail!(
            "no {} attached: looked for its FTDI USB bridge {} in /sys/bus/usb/devices and found none; plug the board in (and check the cable and udev permissions), or use --dry-run to see the command ({cmd})",
            b.name,
            b.usb_id
        );
    }
    let pb = spinner(&format!("{cmd}"));
    let out = std::process::Command::new(OPENFPGALOADER.program)
        .args(&args)
        .output()
        .context("cannot start openFPGALoader")?;
    pb.finish_and_clear();
    if !out.status.success() {
        bail!(
            "{cmd} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    r.loaded = Some(true);
    emit(&r, Format::json(json));
    Ok(())
}
