//! Synthesis targets and their resources (docs/hardware.md), and the resource table a
//! synthesis run is judged by.

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Target {
    pub name: &'static str,
    pub part: &'static str,
    /// The yosys synthesis command.
    pub synth: &'static str,
    pub luts: u64,
    pub ffs: u64,
    pub dsps: u64,
    pub brams: u64,
    pub lut_kind: &'static str,
    pub dsp_kind: &'static str,
    pub bram_kind: &'static str,
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "ice40-up5k",
        part: "iCE40UP5K-SG48",
        synth: "synth_ice40 -dsp -abc9 -top top",
        luts: 5280,
        ffs: 5280,
        dsps: 8,
        brams: 30,
        lut_kind: "LUT4",
        dsp_kind: "SB_MAC16",
        bram_kind: "EBR 4 Kbit",
    },
    Target {
        name: "ice40-hx8k",
        part: "iCE40HX8K-CB132",
        synth: "synth_ice40 -top top",
        luts: 7680,
        ffs: 7680,
        dsps: 0,
        brams: 32,
        lut_kind: "LUT4",
        dsp_kind: "none",
        bram_kind: "EBR 4 Kbit",
    },
    Target {
        name: "xc7a100t",
        part: "XC7A100T-1CSG324",
        synth: "synth_xilinx -family xc7 -flatten -top top",
        luts: 63400,
        ffs: 126800,
        dsps: 240,
        brams: 135,
        lut_kind: "LUT6",
        dsp_kind: "DSP48E1",
        bram_kind: "RAMB36E1 (RAMB18 = 1/2)",
    },
    // ECP5: `synth_ecp5` infers MULT18X18D multipliers and DP16KD block RAM by default; the
    // counts are nextpnr-ecp5's for the device (its utilisation report).
    Target {
        name: "ecp5-85k",
        part: "LFE5U-85F",
        synth: "synth_ecp5 -top top",
        luts: 83640,
        ffs: 83640,
        dsps: 156,
        brams: 208,
        lut_kind: "LUT4",
        dsp_kind: "MULT18X18D",
        bram_kind: "DP16KD 18 Kbit",
    },
    Target {
        name: "ecp5-45k",
        part: "LFE5U-45F",
        synth: "synth_ecp5 -top top",
        luts: 43848,
        ffs: 43848,
        dsps: 72,
        brams: 108,
        lut_kind: "LUT4",
        dsp_kind: "MULT18X18D",
        bram_kind: "DP16KD 18 Kbit",
    },
    Target {
        name: "ecp5-25k",
        part: "LFE5U-25F",
        synth: "synth_ecp5 -top top",
        luts: 24288,
        ffs: 24288,
        dsps: 28,
        brams: 56,
        lut_kind: "LUT4",
        dsp_kind: "MULT18X18D",
        bram_kind: "DP16KD 18 Kbit",
    },
    // The 12F is the 25k die (nextpnr places it as one) licensed for "12 K" LUTs and 32 block
    // RAMs in Lattice's family table: the smaller figures are what the part may use.
    Target {
        name: "ecp5-12k",
        part: "LFE5U-12F",
        synth: "synth_ecp5 -top top",
        luts: 12000,
        ffs: 12000,
        dsps: 28,
        brams: 32,
        lut_kind: "LUT4",
        dsp_kind: "MULT18X18D",
        bram_kind: "DP16KD 18 Kbit",
    },
];

/// nextpnr-ecp5's device flag of an ECP5 target, `None` for other families.
pub fn ecp5_device(t: &Target) -> Option<&'static str> {
    Some(match t.name {
        "ecp5-85k" => "--85k",
        "ecp5-45k" => "--45k",
        "ecp5-25k" => "--25k",
        "ecp5-12k" => "--12k",
        _ => return None,
    })
}

/// nextpnr-ice40's device flag and a package of an iCE40 target (the packer needs both; the
/// logic cells do not depend on the package), `None` for other families.
pub fn ice40_pack(t: &Target) -> Option<(&'static str, &'static str)> {
    Some(match t.name {
        "ice40-up5k" => ("--up5k", "sg48"),
        "ice40-hx8k" => ("--hx8k", "ct256"),
        _ => return None,
    })
}

/// A target name the flow does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown target '{name}'; known targets: {known}")]
pub struct UnknownTarget {
    pub name: String,
    pub known: String,
}

pub fn target(name: &str) -> Result<&'static Target, UnknownTarget> {
    TARGETS
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| UnknownTarget {
            name: name.to_string(),
            known: TARGETS
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ResourceRow {
    pub resource: String,
    pub kind: String,
    pub used: f64,
    pub available: u64,
    pub percent: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ResourceTable {
    pub target: String,
    pub part: String,
    pub rows: Vec<ResourceRow>,
    /// Every cell type yosys mapped to, with its count.
    pub cells: BTreeMap<String, u64>,
}

impl ResourceTable {
    /// Count a target's resources in yosys' cell counts.
    pub fn from_cells(t: &Target, cells: &BTreeMap<String, u64>) -> Self {
        let sum = |pred: &dyn Fn(&str) -> Option<f64>| -> f64 {
            cells
                .iter()
                .filter_map(|(k, &n)| pred(k).map(|w| w * n as f64))
                .fold(0.0, |a, b| a + b) // an empty f64 `sum()` is -0, which prints as "-0"
        };
        let (lut, ff, dsp, bram) = match t.name {
            "ice40-up5k" | "ice40-hx8k" => (
                sum(&|k| (k == "SB_LUT4").then_some(1.0)),
                sum(&|k| k.starts_with("SB_DFF").then_some(1.0)),
                sum(&|k| (k == "SB_MAC16").then_some(1.0)),
                sum(&|k| k.starts_with("SB_RAM40_4K").then_some(1.0)),
            ),
            "xc7a100t" => (
                // Distributed RAM and shift registers live in LUTs too.
                sum(&|k| match k {
                    "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" | "SRL16E" | "SRLC32E" => {
                        Some(1.0)
                    }
                    "RAM32X1D" | "RAM64X1D" => Some(2.0),
                    "RAM32M" | "RAM64M" => Some(4.0),
                    _ => None,
                }),
                // `_1`: the falling-edge flip-flops of the registered block-RAM reads
                sum(&|k| {
                    matches!(k.trim_end_matches("_1"), "FDRE" | "FDSE" | "FDCE" | "FDPE")
                        .then_some(1.0)
                }),
                sum(&|k| (k == "DSP48E1").then_some(1.0)),
                sum(&|k| match k {
                    "RAMB36E1" => Some(1.0),
                    "RAMB18E1" => Some(0.5),
                    _ => None,
                }),
            ),
            _ => (
                sum(&|k| match k {
                    "LUT4" => Some(1.0),
                    "CCU2C" => Some(2.0),
                    "TRELLIS_DPR16X4" => Some(4.0),
                    _ => None,
                }),
                sum(&|k| (k == "TRELLIS_FF").then_some(1.0)),
                sum(&|k| (k == "MULT18X18D").then_some(1.0)),
                sum(&|k| (k == "DP16KD").then_some(1.0)),
            ),
        };
        let row = |r: &str, kind: &str, used: f64, available: u64| ResourceRow {
            resource: r.into(),
            kind: kind.into(),
            used,
            available,
            percent: if available == 0 {
                if used > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                }
            } else {
                100.0 * used / available as f64
            },
        };
        ResourceTable {
            target: t.name.into(),
            part: t.part.into(),
            rows: vec![
                row("LUT", t.lut_kind, lut, t.luts),
                row("FF", "flip-flop", ff, t.ffs),
                row("DSP", t.dsp_kind, dsp, t.dsps),
                row("BRAM", t.bram_kind, bram, t.brams),
            ],
            cells: cells.clone(),
        }
    }

    /// Adds the logic cells nextpnr's packer filled (iCE40: `ICESTORM_LC`, where a LUT4, a
    /// flip-flop and a carry share a cell when they can), the count a design must fit in.
    pub fn with_packed_cells(mut self, utilisation: &[(String, u64, u64)]) -> Self {
        if let Some((kind, used, available)) =
            utilisation.iter().find(|(k, _, _)| k == "ICESTORM_LC")
        {
            self.rows.push(ResourceRow {
                resource: "LC".into(),
                kind: format!("logic cell ({kind})"),
                used: *used as f64,
                available: *available,
                percent: 100.0 * *used as f64 / (*available).max(1) as f64,
            });
        }
        self
    }

    /// The resources used beyond what the part has.
    pub fn overflows(&self) -> Vec<&ResourceRow> {
        self.rows
            .iter()
            .filter(|r| r.used > r.available as f64)
            .collect()
    }

    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{} ({})\n{:<6} {:<26} {:>10} {:>10} {:>8}\n",
            self.target, self.part, "", "", "used", "available", "%"
        );
        for r in &self.rows {
            s += &format!(
                "{:<6} {:<26} {:>10} {:>10} {:>7.1}%\n",
                r.resource, r.kind, r.used, r.available, r.percent
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_map_to_rows_and_overflow_is_found() {
        let cells: BTreeMap<String, u64> = [
            ("SB_LUT4", 6000),
            ("SB_DFFE", 10),
            ("SB_DFFR", 5),
            ("SB_MAC16", 8),
            ("SB_CARRY", 99),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        let t = ResourceTable::from_cells(target("ice40-up5k").unwrap(), &cells);
        let used: Vec<f64> = t.rows.iter().map(|r| r.used).collect();
        assert_eq!(used, vec![6000.0, 15.0, 8.0, 0.0]);
        let over: Vec<&str> = t.overflows().iter().map(|r| r.resource.as_str()).collect();
        assert_eq!(over, vec!["LUT"]);
        let x: BTreeMap<String, u64> = [
            ("RAMB18E1", 3),
            ("RAMB36E1", 1),
            ("DSP48E1", 240),
            ("FDRE", 5),
            ("FDRE_1", 2),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        let t = ResourceTable::from_cells(target("xc7a100t").unwrap(), &x);
        assert_eq!(t.rows[3].used, 2.5);
        assert_eq!(t.rows[1].used, 7.0);
        assert!(t.overflows().is_empty());
        assert!(target("virtex")
            .unwrap_err()
            .to_string()
            .contains("ice40-up5k"));
    }
}
