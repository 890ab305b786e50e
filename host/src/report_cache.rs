//! Synthesis reports kept for `edgeflow bench`: `edgeflow synth` files each report under the
//! hash of the exact Verilog it synthesized, and the bench finds the reports of the design it
//! projects, so a board's projection at the synthesis Fmax needs no extra flag and can never
//! come from another design (a changed spec or datapath changes the Verilog, hence the key).
//!
//! Directory: `$EDGEFLOW_REPORTS`, else `$XDG_CACHE_HOME/edgeflow/reports`, else
//! `~/.cache/edgeflow/reports`.

use crate::util::write_atomic;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("EDGEFLOW_REPORTS") {
        return Some(PathBuf::from(d));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("edgeflow").join("reports"))
}

/// The design's key: the first 16 hex digits of the Verilog's SHA-256.
pub fn key(verilog: &str) -> String {
    Sha256::digest(verilog.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// File `report` for `design` on `target`. A cache that cannot be written costs the user only
/// the automatic lookup, so it is a note, not an error.
pub fn store(design: &str, target: &str, verilog: &str, report: &serde_json::Value) {
    let Some(d) = dir() else { return };
    let path = d.join(format!("{design}-{target}-{}.json", key(verilog)));
    let text = serde_json::to_string_pretty(report).unwrap_or_default();
    if let Err(e) = std::fs::create_dir_all(&d)
        .map_err(anyhow::Error::from)
        .and_then(|_| write_atomic(&path, text.as_bytes()))
    {
        eprintln!(
            "note: the synthesis report was not kept for `edgeflow bench` ({}: {e})",
            path.display()
        );
    }
}

/// Every kept report of exactly this design (any target), oldest name first. `verilog` is
/// only asked for when a report of that name exists: building a large network's Verilog
/// takes seconds, and most benches have nothing kept.
pub fn lookup(design: &str, verilog: impl FnOnce() -> Option<String>) -> Vec<PathBuf> {
    let Some(d) = dir() else { return vec![] };
    let prefix = format!("{design}-");
    let named: Vec<PathBuf> = std::fs::read_dir(&d)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    if named.is_empty() {
        return vec![];
    }
    let Some(v) = verilog() else { return vec![] };
    let suffix = format!("-{}.json", key(&v));
    let mut out: Vec<PathBuf> = named
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(&suffix))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_report_is_found_for_its_design_only() {
        let d = std::env::temp_dir().join(format!("edgeflow-reports-{}", std::process::id()));
        std::env::set_var("EDGEFLOW_REPORTS", &d);
        let r = serde_json::json!({"fmax_mhz": 40.0});
        store("net", "xc7a100t", "module top; endmodule", &r);
        let found = lookup("net", || Some("module top; endmodule".into()));
        assert_eq!(found.len(), 1, "{found:?}");
        let back: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&found[0]).unwrap()).unwrap();
        assert_eq!(back, r);
        // another design, or the same name with other Verilog, finds nothing
        assert!(lookup("other", || Some("module top; endmodule".into())).is_empty());
        assert!(lookup("net", || Some("module top; wire x; endmodule".into())).is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
