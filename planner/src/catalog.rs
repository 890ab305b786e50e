//! The board catalog: `boards/*.toml`. The built-in boards are compiled in; a user adds a
//! board by writing a file of the same shape and naming its path (or putting it in a
//! `boards/` directory, or in `$EDGEFLOW_BOARDS`).

use crate::error::CatalogError;
use edgeflow_core::boards::BUILT_IN;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One board: what the cost model needs to know about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    pub name: String,
    #[serde(default)]
    pub part: String,
    #[serde(default)]
    pub description: String,
    /// Clock the datapath runs at, MHz.
    pub clock_mhz: f64,
    /// Hardware multipliers (16 x 16 or wider).
    pub dsp: u64,
    /// Logic cells (LUT4 or LUT6).
    pub logic: u64,
    /// Logic cells for one 16 x 16 multiplier built from logic, when the DSPs run out.
    pub lut_per_multiplier: u64,
    /// Block RAM, bits.
    pub ram_bits: u64,
    /// Independently addressable block RAMs.
    pub ram_blocks: u64,
    /// Widest data port of one block RAM, bits.
    pub ram_block_width: u64,
    /// Synthesis gives every lane's memory bank of at least this many rows a block RAM of its
    /// own and keeps smaller ones in LUT RAM (yosys `synth_ecp5`); without it the cost model
    /// counts one wide weight memory per junction (`cost::junction_need`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_bank_min_rows: Option<u64>,
    /// The shapes (rows, width) one block RAM takes, on a part without LUT RAM (the iCE40):
    /// the cost model then counts every memory the board's Verilog declares as yosys maps it,
    /// in blocks or in logic (crate::memories), against `ram_blocks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_block_shapes: Option<Vec<[u64; 2]>>,
    /// Bandwidth of the board's link to its neighbour in the chain, Mbit/s; derived from
    /// `[link]` when the board file has one.
    #[serde(default)]
    pub link_mbps: f64,
    /// One-way latency of that link, µs; derived from `[link]` when the board file has one.
    #[serde(default)]
    pub link_latency_us: f64,
    /// The board-to-board link on the board's own pins (hdl/src/link), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<BoardLink>,
    /// The cost model's constants for this board's logic family, fitted to synthesis
    /// (`[fit]` in the board file; `edgeflow cost --fit` computes them). A board file without
    /// it gets the iCE40 (LUT4) fit.
    #[serde(default)]
    pub fit: Fit,
    /// The board builds every network with registered reads (hdl/src/board/boards.rs): one more
    /// clock per block cycle than the spec as written, when the spec has none.
    #[serde(default)]
    pub registered_reads: bool,
    /// The board builds every network with the deep pipeline: two more clocks per block
    /// cycle, when the spec has none.
    #[serde(default)]
    pub deep_pipeline: bool,
    /// The FPGA flow's facts (target, pins, oscillator; hdl/src/board/boards.rs reads them).
    /// The cost model only asks whether there are any ([`Board::builds_verilog`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fpga: Option<toml::Table>,
    /// The SDRAM's pins, where a board top keeps a resident data set (hdl/src/board/boards.rs
    /// reads them); the cost model does not count the SDRAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdram: Option<toml::Table>,
}

/// A board's own board-to-board link (hdl/src/link; docs/hardware.md, "The board-to-board
/// link"): one link each way per neighbour, clocked by the sending board's design clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardLink {
    /// Data pins per link: 1, 2, 4, 8 or 16.
    pub width: u64,
    /// Sender clocks per 16-bit word on the wire, as the link's simulation measures it.
    pub clocks_per_word: f64,
    /// Clocks a transfer takes beyond its words' wire time, as measured.
    pub latency_clocks: u64,
    /// Which pins carry it (for the FPGA flow; not used by the cost model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pins: Option<toml::Table>,
}

/// Logic and flip-flop constants of the cost model (planner/src/cost.rs), per logic family:
/// a LUT6 part maps the same network to fewer cells than a LUT4 part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// Cells per junction beyond its lanes: sequencer, interleaver, activation ROM, memories'
    /// read muxes.
    pub logic_per_junction: u64,
    /// Cells per lane and value bit: the FF, BP and UP adders and saturation, copy-memory
    /// replicas' addressing.
    pub logic_per_lane_bit: u64,
    /// Cells of the controller and the host link, once per board. Measured, not fitted: in
    /// networks of equal depth it cannot be told apart from the per-junction term.
    pub logic_per_board: u64,
    /// Cells of the board top around the network, once per board built with a serial host
    /// link: clock, power-on hold and the UART bridge with its checked frames (the echo board
    /// top synthesized on its own). `edgeflow synth` of the network alone has none of it.
    #[serde(default)]
    pub logic_serial_link: u64,
    /// Flip-flops once per board, per lane bit and per multiplier built from logic (reported
    /// next to synthesis, not a planning constraint).
    pub ff_per_board: u64,
    pub ff_per_lane_bit: u64,
    pub ff_per_lut_multiplier: u64,
    /// The model's largest relative error in logic over the family's calibration runs
    /// (`edgeflow cost --fit` measures it): a prediction within this share of the part's
    /// logic is near the limit, where only synthesis can tell whether it fits.
    #[serde(default = "Fit::default_logic_error")]
    pub logic_error: f64,
}

impl Fit {
    fn default_logic_error() -> f64 {
        0.10
    }
}

impl Default for Fit {
    /// The iCE40 UP5K fit: boards/icebreaker.toml's `[fit]` (docs/calibration).
    fn default() -> Fit {
        Board::built_in("icebreaker")
            .expect("icebreaker is built in")
            .fit
    }
}

/// Names of the built-in boards.
pub fn built_in_names() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(n, _)| *n).collect()
}

/// The most boards one `--boards` list may name: more than any real chain, and it keeps
/// `NAMExK` from allocating without bound.
pub const MAX_BOARDS: usize = 1024;

impl Board {
    /// Whether the board runs the project's Verilog (it has an FPGA flow), whose memories the
    /// cost model counts as declared (read replicas included); a board without one (an
    /// OpenCL device) keeps one copy of each value.
    pub fn builds_verilog(&self) -> bool {
        self.fpga.is_some()
    }

    pub fn from_toml_str(text: &str, source: &str) -> Result<Board, CatalogError> {
        let b: Board = toml::from_str(text).map_err(|error| CatalogError::Toml {
            file: source.to_string(),
            error,
        })?;
        b.validate(source)?;
        let mut b = b;
        if let Some(l) = &b.link {
            // One direction's payload rate and the latency, for reports and for pairs with
            // a board that has no link of its own.
            b.link_mbps = 16.0 * b.clock_mhz / l.clocks_per_word;
            b.link_latency_us = l.latency_clocks as f64 / b.clock_mhz;
        }
        Ok(b)
    }

    fn validate(&self, source: &str) -> Result<(), CatalogError> {
        let mut bad = Vec::new();
        if self.name.trim().is_empty() {
            bad.push("name: must not be empty".to_string());
        }
        // Times are whole picoseconds in a u64; these ranges keep every block cycle and link
        // time of a valid spec far from overflow, and cover any real board.
        let mut ranges = vec![("clock_mhz", self.clock_mhz, 0.001, 100_000.0)];
        match &self.link {
            None => ranges.push(("link_mbps", self.link_mbps, 0.001, 1e9)),
            Some(l) => {
                if self.link_mbps != 0.0 || self.link_latency_us != 0.0 {
                    bad.push(
                        "link_mbps, link_latency_us: give them or a [link] table, not both \
                         (a [link] derives them)"
                            .into(),
                    );
                }
                if ![1, 2, 4, 8, 16].contains(&l.width) {
                    bad.push(format!(
                        "link.width: = {} must be 1, 2, 4, 8 or 16",
                        l.width
                    ));
                }
                ranges.push(("link.clocks_per_word", l.clocks_per_word, 1.0, 1e6));
                ranges.push(("link.latency_clocks", l.latency_clocks as f64, 0.0, 1e9));
            }
        }
        for (field, v, lo, hi) in ranges {
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                bad.push(format!(
                    "{field}: = {v:?} must be a number from {lo} to {hi}"
                ));
            }
        }
        if !(self.link_latency_us.is_finite() && (0.0..=1e6).contains(&self.link_latency_us)) {
            bad.push(format!(
                "link_latency_us: = {:?} must be from 0 to 1000000 (one second)",
                self.link_latency_us
            ));
        }
        if self.dsp == 0 && self.lut_per_multiplier == 0 {
            bad.push("dsp and lut_per_multiplier are both 0: the board cannot multiply".into());
        }
        for (field, v) in [
            ("logic", self.logic),
            ("ram_bits", self.ram_bits),
            ("ram_blocks", self.ram_blocks),
            ("ram_block_width", self.ram_block_width),
        ] {
            if v == 0 {
                bad.push(format!("{field}: must be positive"));
            }
        }
        if self.ram_bank_min_rows == Some(0) {
            bad.push(
                "ram_bank_min_rows: must be positive (the fewest rows a lane's bank has when \
                 synthesis gives it a block RAM of its own)"
                    .into(),
            );
        }
        if let Some(shapes) = &self.ram_block_shapes {
            if shapes.is_empty() || shapes.iter().any(|&[r, w]| r == 0 || w == 0) {
                bad.push(
                    "ram_block_shapes: must list [rows, width] pairs, both positive (e.g. \
                     [[256, 16], [512, 8]] for one block's configurations)"
                        .into(),
                );
            }
            if self.ram_bank_min_rows.is_some() {
                bad.push(
                    "ram_bank_min_rows and ram_block_shapes: give one (the first for a part \
                     with LUT RAM, the second for one without)"
                        .into(),
                );
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(CatalogError::Invalid {
                file: source.to_string(),
                problems: bad,
            })
        }
    }

    /// A built-in board by name.
    pub fn built_in(name: &str) -> Option<Board> {
        edgeflow_core::boards::carried_file(name).map(|t| {
            Board::from_toml_str(t, &format!("boards/{name}.toml (built in)"))
                .expect("built-in boards are valid")
        })
    }

    /// A board by name or path: a path to a `.toml` file; else `NAME.toml` in
    /// `$EDGEFLOW_BOARDS` or `./boards/`; else a built-in or bundled board.
    pub fn resolve(what: &str) -> Result<Board, CatalogError> {
        let as_path = Path::new(what);
        if what.ends_with(".toml") || what.contains('/') {
            let text = std::fs::read_to_string(as_path).map_err(|error| CatalogError::Read {
                file: what.to_string(),
                error,
                built_in: built_in_names().join(", "),
            })?;
            return Board::from_toml_str(&text, what);
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Ok(d) = std::env::var("EDGEFLOW_BOARDS") {
            dirs.push(PathBuf::from(d));
        }
        dirs.push(PathBuf::from("boards"));
        for d in dirs {
            let p = d.join(format!("{what}.toml"));
            if let Ok(text) = std::fs::read_to_string(&p) {
                return Board::from_toml_str(&text, &p.display().to_string());
            }
        }
        Board::built_in(what).ok_or_else(|| CatalogError::Unknown {
            name: what.to_string(),
            built_in: built_in_names().join(", "),
        })
    }

    /// Resolve a comma-separated list, with `NAMExK` meaning K boards of that kind.
    pub fn resolve_list(list: &str) -> Result<Vec<Board>, CatalogError> {
        let mut out = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, count) = match item.rsplit_once('x') {
                Some((n, k))
                    if !n.is_empty() && !k.is_empty() && k.chars().all(|c| c.is_ascii_digit()) =>
                {
                    (
                        n,
                        k.parse::<usize>().map_err(|error| CatalogError::Count {
                            item: item.to_string(),
                            error,
                        })?,
                    )
                }
                _ => (item, 1),
            };
            if count == 0 || count > MAX_BOARDS {
                return Err(CatalogError::CountRange {
                    item: item.to_string(),
                    count,
                });
            }
            let b = Board::resolve(name)?;
            for _ in 0..count {
                out.push(b.clone());
            }
        }
        if out.len() > MAX_BOARDS {
            return Err(CatalogError::TooMany { count: out.len() });
        }
        if out.is_empty() {
            return Err(CatalogError::Empty);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgeflow_core::boards::BUNDLED;

    #[test]
    fn built_ins_parse() {
        for n in built_in_names().into_iter().chain(BUNDLED.map(|b| b.0)) {
            let b = Board::built_in(n).unwrap();
            assert_eq!(b.name, n);
        }
    }

    #[test]
    fn lists_and_counts() {
        let v = Board::resolve_list("icebreaker, nexys4-ddrx3").unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v[3].name, "nexys4-ddr");
        let e = Board::resolve_list("nosuch").unwrap_err().to_string();
        assert!(
            e.contains("unknown board 'nosuch'") && e.contains("icebreaker"),
            "{e}"
        );
    }

    /// A `[link]` gives the board its link figures: 16 bits per `clocks_per_word` clocks
    /// each way, `latency_clocks` at the board's clock; figures given as well, a bad width
    /// or a `[link]` field it does not know are refused.
    #[test]
    fn a_link_table_derives_the_link_figures() {
        let b = Board::built_in("icebreaker").unwrap();
        let l = b.link.as_ref().expect("the iCEBreaker has a [link]");
        assert_eq!((l.width, l.clocks_per_word, l.latency_clocks), (4, 4.0, 5));
        // 30 MHz, 4 clocks per 16-bit word, 5 clocks of latency.
        assert_eq!(b.link_mbps, 120.0);
        assert_eq!(b.link_latency_us, 5.0 / 30.0);
        let t = include_str!("../../boards/icebreaker.toml");
        for (from, to, field) in [
            ("[link]\n", "link_mbps = 5.0\n[link]\n", "not both"),
            ("width = 4\n", "width = 3\n", "link.width"),
            ("width = 4\n", "width = 4\nlanes = 2\n", "lanes"),
            (
                "clocks_per_word = 4.0",
                "clocks_per_word = 0.0",
                "link.clocks_per_word",
            ),
        ] {
            assert!(t.contains(from), "{from}");
            let text = t.replacen(from, to, 1);
            let e = Board::from_toml_str(&text, "x.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains("x.toml") && e.contains(field), "{to}: {e}");
        }
    }

    #[test]
    fn bad_board_file_names_field() {
        let t = include_str!("../../boards/icebreaker.toml")
            .replace("clock_mhz = 30.0", "clock_mhz = -1.0");
        let e = Board::from_toml_str(&t, "x.toml").unwrap_err().to_string();
        assert!(e.contains("x.toml") && e.contains("clock_mhz"), "{e}");
        let e = Board::from_toml_str("name = 'a'", "y.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("y.toml") && e.contains("missing field"), "{e}");
        let t = include_str!("../../boards/ulx3s-85f.toml")
            .replace("ram_bank_min_rows = 48", "ram_bank_min_rows = 0");
        let e = Board::from_toml_str(&t, "z.toml").unwrap_err().to_string();
        assert!(
            e.contains("z.toml") && e.contains("ram_bank_min_rows"),
            "{e}"
        );
    }

    /// Clocks and link figures so small or large that times in picoseconds would overflow
    /// are refused, not planned into a block cycle of u64::MAX.
    #[test]
    fn out_of_range_clock_and_link_are_refused() {
        let base = include_str!("../../boards/nexys4-ddr.toml");
        for (from, to, field) in [
            ("clock_mhz = 100.0", "clock_mhz = 1e-300", "clock_mhz"),
            ("clock_mhz = 100.0", "clock_mhz = 1e12", "clock_mhz"),
            ("link_mbps = 800.0", "link_mbps = 1e-9", "link_mbps"),
            (
                "link_latency_us = 1.0",
                "link_latency_us = 1e300",
                "link_latency_us",
            ),
        ] {
            assert!(base.contains(from));
            let e = Board::from_toml_str(&base.replace(from, to), "x.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains("x.toml") && e.contains(field), "{to}: {e}");
        }
        let e = Board::resolve_list("icebreakerx100000000000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 ≤ K ≤ 1024"), "{e}");
    }
}
