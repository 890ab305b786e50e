//! Board clocks (board files, the published design, `--freq`, synthesis reports) and the
//! projections of a measured spec onto them, with the machine the numbers come from.

use super::*;
use anyhow::{bail, Context, Result};
use edgeflow_core::Spec;
use serde::Serialize;
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Serialize)]
pub struct Projection {
    pub board: String,
    pub part: String,
    pub clock_mhz: f64,
    /// Where the clock comes from: the board file, the published design, `--freq`, a synthesis report.
    pub clock_source: String,
    pub clocks_per_sample: f64,
    /// `spec` (longest junction pass + overhead, one sample per block cycle) or `rtl simulation`.
    pub clocks_source: String,
    /// One sample per block cycle, for training and for inference alike.
    pub samples_per_second: f64,
    pub edge_ops_per_second: f64,
    pub speedup_vs_float: Option<f64>,
    pub speedup_vs_dense: Option<f64>,
    pub speedup_vs_reference: Option<f64>,
}

/// What is known about a board: its part and the clocks it runs at, with their sources.
#[derive(Clone, Debug)]
pub struct BoardClocks {
    pub name: String,
    pub part: String,
    /// Clocks (MHz) with where each comes from and, for the Fmax of a routed design, that
    /// design's own clocks per sample (`edgeflow bitstream --json`'s `clocks_per_sample`).
    pub clocks: Vec<(f64, String, Option<f64>)>,
    /// Why there is no place-and-route Fmax for this board, and how to get one.
    pub fmax_note: Option<String>,
}

/// Where board files live: `boards/` here, or next to the workspace.
pub(super) fn boards_dir() -> PathBuf {
    let local = PathBuf::from("boards");
    if local.is_dir() {
        return local;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../boards"))
}

/// Names of the FPGA board files (the generic OpenCL device class is measured, not projected).
pub(super) fn board_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(boards_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".toml"))
                        .map(String::from)
                })
                .filter(|n| !n.starts_with("opencl"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub fn board_clocks(name: &str) -> Result<BoardClocks> {
    let path = boards_dir().join(format!("{name}.toml"));
    let (text, source) = if path.exists() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        (text, format!("board file {}", path.display()))
    } else if let Some(text) = edgeflow_core::boards::carried_file(name) {
        (
            text.to_string(),
            format!("board file boards/{name}.toml (built in)"),
        )
    } else {
        let mut known: Vec<String> = board_files();
        known.extend(edgeflow_core::boards::carried().map(|b| b.0.to_string()));
        known.sort();
        known.dedup();
        bail!(
            "unknown board '{name}': no {} and no built-in board file; known boards: {}",
            path.display(),
            known.join(", ")
        );
    };
    let v: toml::Value =
        toml::from_str(&text).with_context(|| format!("{source} is not valid TOML"))?;
    let part = v
        .get("part")
        .and_then(|p| p.as_str())
        .unwrap_or("")
        .to_string();
    let mut clocks = Vec::new();
    match v
        .get("clock_mhz")
        .and_then(|c| c.as_float().or_else(|| c.as_integer().map(|i| i as f64)))
    {
        Some(c) if c > 0.0 => clocks.push((c, source, None)),
        _ => bail!("{source}: clock_mhz must be a positive number (MHz)"),
    }
    for &(b, mhz, what) in PUBLISHED {
        if b == name {
            clocks.push((mhz, what.into(), None));
        }
    }
    Ok(BoardClocks {
        name: name.into(),
        part,
        clocks,
        fmax_note: None,
    })
}

/// The Fmax a place-and-route report gives, in MHz, and the board it names (if any), as in
/// `edgeflow bitstream --json` output: the first number under a key containing `fmax`.
pub fn fmax_from_report(path: &Path) -> Result<(f64, Option<String>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading synthesis report {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "synthesis report {} is not JSON (use `edgeflow synth --json`)",
            path.display()
        )
    })?;
    pub(super) fn find(v: &serde_json::Value) -> Option<f64> {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .find_map(|(k, x)| {
                    if k.to_ascii_lowercase().contains("fmax") {
                        x.as_f64()
                    } else {
                        None
                    }
                })
                .or_else(|| m.values().find_map(find)),
            serde_json::Value::Array(a) => a.iter().find_map(find),
            _ => None,
        }
    }
    let board = v.get("board").and_then(|b| {
        b.as_str()
            .map(String::from)
            .or_else(|| b.get("name").and_then(|n| n.as_str()).map(String::from))
    });
    match find(&v) {
        Some(f) if f > 0.0 => Ok((f, board)),
        _ => bail!("synthesis report {} has no positive number under a key containing 'fmax' (e.g. \"fmax_mhz\")", path.display()),
    }
}

/// The part a report was synthesized for (`edgeflow synth --json`'s `table.part`), if it says:
/// a report without a board applies only to boards with that part.
pub(super) fn report_part(path: &Path) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v.pointer("/table/part")?.as_str().map(String::from)
}

/// The clocks per sample of the design a report routed (`edgeflow bitstream --json`), if it
/// says: its Fmax is that design's, whatever the benched spec's lanes.
pub(super) fn report_clocks_per_sample(path: &Path) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v.get("clocks_per_sample")?.as_f64().filter(|c| *c > 0.0)
}

/// What a report's Fmax is (`fmax_kind`, e.g. `edgeflow synth`'s pre-route estimate), if it says.
pub(super) fn report_fmax_kind(path: &Path) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v.get("fmax_kind")?.as_str().map(String::from)
}

/// The training rate a speed-up uses: the CPU-time rate where there is one (the work of one
/// thread, unaffected by other load on the machine, and the best the baseline can do),
/// otherwise wall clock.
pub fn rate(m: &Measured) -> f64 {
    m.train_samples_per_second_cpu
        .unwrap_or(m.train_samples_per_second)
}

/// The faster of the two float implementations of the same sparse network: the baseline a
/// speed-up over "the float reference" is honest against.
pub(super) fn fastest_sparse_float(measured: &[Measured]) -> Option<Measured> {
    measured
        .iter()
        .filter(|m| m.available && (m.backend == "float" || m.backend == "sparse-f32"))
        .max_by(|a, b| rate(a).partial_cmp(&rate(b)).unwrap())
        .cloned()
}

pub(super) fn speedup(r: f64, base: Option<&Measured>) -> Option<f64> {
    base.filter(|b| b.available && rate(b) > 0.0)
        .map(|b| r / rate(b))
}

pub(super) fn projections(
    spec: &Spec,
    boards: &[BoardClocks],
    measured: &[Measured],
) -> Vec<Projection> {
    let find = |n: &str| measured.iter().find(|m| m.backend == n);
    let mut cps = vec![(
        spec.derived().block_cycle_clocks as f64,
        "spec (longest junction pass + overhead)".to_string(),
    )];
    for m in measured {
        if let Some(c) = m.clocks_per_sample {
            cps.push((
                c,
                format!("{}: the clocks it counted per training sample", m.backend),
            ));
        }
    }
    let ops = sparse_edge_ops(spec) as f64;
    let mut out = Vec::new();
    for b in boards {
        // a board that builds the network with registered reads or the deep pipeline runs
        // more clocks per sample than the spec as written, and than the simulations measured
        let mut built = spec.clone();
        if let Ok(x) = edgeflow_hdl::boards::board(&b.name) {
            built.registered_reads |= x.registered_reads;
            built.deep_pipeline |= x.deep_pipeline;
        }
        let board_cps = if built.block_cycle_overhead() != spec.block_cycle_overhead() {
            vec![(
                built.derived().block_cycle_clocks as f64,
                format!(
                    "spec as the board builds it ({}: {} more clocks)",
                    match (built.registered_reads, built.deep_pipeline) {
                        (true, true) => "registered reads and the deep pipeline",
                        (true, false) => "registered reads",
                        _ => "the deep pipeline",
                    },
                    built.block_cycle_overhead() - spec.block_cycle_overhead()
                ),
            )]
        } else {
            cps.clone()
        };
        for (mhz, src, routed) in &b.clocks {
            // a routed design's Fmax holds for that design: at its own clocks per sample,
            // where they are not this spec's (another z, another pipeline)
            let own = match routed {
                Some(r) if !board_cps.iter().any(|(c, _)| (c - r).abs() < 0.5) => vec![(
                    *r,
                    format!(
                        "the routed design's own (this spec as the board builds it: {} clocks)",
                        board_cps[0].0
                    ),
                )],
                _ => board_cps.clone(),
            };
            for (c, csrc) in &own {
                let rate = mhz * 1e6 / c;
                out.push(Projection {
                    board: b.name.clone(),
                    part: b.part.clone(),
                    clock_mhz: *mhz,
                    clock_source: src.clone(),
                    clocks_per_sample: *c,
                    clocks_source: csrc.clone(),
                    samples_per_second: rate,
                    edge_ops_per_second: rate * ops,
                    speedup_vs_float: speedup(rate, fastest_sparse_float(measured).as_ref()),
                    speedup_vs_dense: speedup(rate, find("dense")),
                    speedup_vs_reference: speedup(rate, find("reference")),
                });
            }
        }
    }
    out
}

/// A board training with its data set resident (hdl/PROTOCOL.md, "Resident data"): the set
/// uploaded once over the board's UART, the epochs on chip, the weights read back.
#[derive(Clone, Debug, Serialize)]
pub struct ResidentProjection {
    pub board: String,
    pub clock_mhz: f64,
    pub clock_source: String,
    pub baud: u32,
    pub epochs: usize,
    pub train_samples: usize,
    pub record_words: usize,
    pub resident_capacity_samples: usize,
    /// The training set fits the board's data memory; the rates below hold only if it does.
    pub fits: bool,
    /// The network's block cycle as the board builds it, and the clocks the resident block
    /// takes to stream one record: a sample takes the longer of the two.
    pub block_cycle_clocks: usize,
    pub record_feed_clocks: u64,
    pub clocks: crate::board::resident::ResidentClocks,
    pub end_to_end_seconds: f64,
    pub end_to_end_samples_per_second: f64,
    pub speedup_vs_float: Option<f64>,
}

/// "End to end, resident" for every board with a data memory, at each of its clocks:
/// `train` samples, `epochs` epochs, the fastest UART rate the clock divides to.
pub(super) fn resident_projections(
    spec: &Spec,
    boards: &[BoardClocks],
    train: usize,
    epochs: usize,
    measured: &[Measured],
) -> Vec<ResidentProjection> {
    use crate::board::resident::{check_fits, default_baud, ResidentClocks};
    let mut out = Vec::new();
    for b in boards {
        let Ok(info) = edgeflow_hdl::boards::board(&b.name) else {
            continue;
        };
        let Ok((kind, words)) = edgeflow_hdl::data_memory::for_board(info) else {
            continue;
        };
        let built = crate::fit_search::as_built(spec, info);
        for (mhz, src, _) in &b.clocks {
            let baud = default_baud(*mhz);
            let Ok(cpb) = edgeflow_hdl::board_top::clocks_per_bit(*mhz, baud) else {
                continue;
            };
            let read = kind.read_clocks(*mhz);
            let clocks = ResidentClocks::projected(&built, cpb as u64, read, train, train, epochs);
            let seconds = clocks.total() as f64 / (mhz * 1e6);
            let rate = (train * epochs) as f64 / seconds;
            out.push(ResidentProjection {
                board: b.name.clone(),
                clock_mhz: *mhz,
                clock_source: src.clone(),
                baud,
                epochs,
                train_samples: train,
                record_words: spec.record_words(),
                resident_capacity_samples: words / spec.record_words(),
                fits: check_fits(spec, words, train, 0).is_ok(),
                block_cycle_clocks: built.block_cycle_clocks(),
                record_feed_clocks: edgeflow_hdl::resident_protocol::record_feed_clocks(
                    &built, read, train,
                ),
                clocks,
                end_to_end_seconds: seconds,
                end_to_end_samples_per_second: rate,
                speedup_vs_float: speedup(rate, fastest_sparse_float(measured).as_ref()),
            });
        }
    }
    out
}

pub(super) fn boards_json(boards: &[BoardClocks]) -> serde_json::Value {
    json!(boards
        .iter()
        .map(|b| json!({
            "board": b.name,
            "part": b.part,
            "clocks_mhz": b.clocks.iter().map(|c| json!({"mhz": c.0, "source": c.1, "clocks_per_sample": c.2})).collect::<Vec<_>>(),
            "fmax_note": b.fmax_note,
        }))
        .collect::<Vec<_>>())
}

/// The machine the numbers come from.
pub fn machine() -> serde_json::Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
    };
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("PRETTY_NAME="))
                .map(|l| l[12..].trim_matches('"').to_string())
        });
    let mem_gib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|k| k.parse::<f64>().ok())
            .map(|k| (k / 1048576.0 * 10.0).round() / 10.0)
    });
    json!({
        "cpu": field("model name"),
        "cpu_mhz": field("cpu MHz").and_then(|s| s.parse::<f64>().ok()),
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "memory_gib": mem_gib,
        "os": os,
        "load_average": load_average(),
        "edgeflow": env!("CARGO_PKG_VERSION"),
    })
}

pub(super) fn load_average() -> Option<Vec<f64>> {
    let t = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        t.split_whitespace()
            .take(3)
            .filter_map(|x| x.parse().ok())
            .collect(),
    )
}
