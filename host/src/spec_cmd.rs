//! `edgeflow spec check` and `edgeflow pattern`.

use crate::report::{emit, Format};
use anyhow::{bail, Result};
use edgeflow_core::overlap::OverlapBound;
use edgeflow_core::{JunctionPattern, Spec};
use serde::Serialize;
use std::fmt;
use std::path::Path;

pub fn check(path: &Path, json: bool) -> Result<()> {
    let spec = Spec::load(path)?;
    let d = spec.derived();
    let bits = spec.input_bits();
    let mut warnings = Vec::new();
    if bits > spec.fixed.frac_bits + 1 {
        warnings.push(format!(
            "input_bits = {bits} exceeds frac_bits + 1 = {}: the inputs are rounded to the format's {} fraction bits, so the extra {} bits are rounded away; use input_bits ≤ {} or more frac_bits",
            spec.fixed.frac_bits + 1,
            spec.fixed.frac_bits,
            bits - spec.fixed.frac_bits - 1,
            spec.fixed.frac_bits + 1
        ));
    }
    for w in &warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
    let r = Checked {
        source: &spec,
        spec: &spec.name,
        valid: true,
        layers: &spec.layers,
        format: spec.format(),
        activation: spec.activation,
        learning_rate: 0.5f64.powi(spec.learning_rate_shift as i32),
        rounding: spec.rounding(),
        rounding_given: spec.rounding.is_some(),
        input_bits: bits,
        warnings,
        derived: d,
        overlap_bound: OverlapBound::of(&spec),
        advice: spec.learning_advice(),
    };
    emit(&r, Format::json(json));
    Ok(())
}

/// `edgeflow spec check`'s report: the spec as given and what follows from it.
#[derive(Serialize)]
struct Checked<'a> {
    #[serde(skip)]
    source: &'a Spec,
    spec: &'a str,
    valid: bool,
    layers: &'a [usize],
    format: edgeflow_core::Format,
    activation: edgeflow_core::Activation,
    learning_rate: f64,
    rounding: edgeflow_core::Rounding,
    rounding_given: bool,
    input_bits: u32,
    warnings: Vec<String>,
    derived: edgeflow_core::Derived,
    /// The least block cycle that overlapping block cycles could reach with the same bits.
    overlap_bound: OverlapBound,
    advice: Vec<edgeflow_core::advice::Advice>,
}

impl fmt::Display for Checked<'_> {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        let (s, d, bits) = (self.source, &self.derived, self.input_bits);
        let f = s.format();
        let rounding = format!(
            "{:?} rounding{}",
            s.rounding(),
            if s.rounding.is_some() {
                ""
            } else {
                " (the default for this activation)"
            }
        )
        .to_lowercase();
        writeln!(w,
            "{}: valid. layers {:?}, {}-bit values (1 sign, {} integer, {} fraction), {:?}, η = 2^-{}, {rounding}",
            s.name,
            s.layers,
            f.width,
            f.int_bits,
            f.frac_bits,
            s.activation,
            s.learning_rate_shift,
        )?;
        writeln!(
            w,
            "inputs: {bits} bits of precision ({} values in [0, 1]){}",
            (1u32 << (bits - 1)) + 1,
            if s.input_bits.is_none() {
                " (the default, frac_bits + 1)"
            } else {
                ""
            }
        )?;
        writeln!(
            w,
            "{:>8} {:>7} {:>7} {:>7} {:>6} {:>5} {:>8} {:>6} {:>8} {:>9} {:>11}",
            "junction",
            "left",
            "right",
            "fan-out",
            "fan-in",
            "z",
            "|W|",
            "C",
            "density",
            "staleness",
            "multipliers"
        )?;
        for j in &d.junctions {
            writeln!(
                w,
                "{:>8} {:>7} {:>7} {:>7} {:>6} {:>5} {:>8} {:>6} {:>7.2}% {:>9} {:>11}",
                j.index,
                j.left,
                j.right,
                j.fan_out,
                j.fan_in,
                j.z,
                j.edges,
                j.clocks,
                j.density * 100.0,
                j.staleness,
                format!(
                    "{}+{}+{}",
                    j.multipliers_ff, j.multipliers_bp, j.multipliers_up
                )
            )?;
        }
        writeln!(w, "block cycle: {} clocks (longest junction {} + {} overhead); one training sample per block cycle",
            d.block_cycle_clocks, d.max_junction_clocks, d.block_cycle_clocks - d.max_junction_clocks)?;
        writeln!(
            w,
            "overlapped block cycles: at least {} clocks with the same bits (the data passed between block cycles; docs/design.md, \"Why not C\")",
            self.overlap_bound.clocks
        )?;
        writeln!(
            w,
            "multipliers: {} (FF z, BP 2z for hidden junctions, UP z); edges: {}",
            d.multipliers, d.total_edges
        )?;
        for a in s.learning_advice() {
            writeln!(w, "advice: {}: {}", a.field, a.message)?;
        }
        Ok(())
    }
}

pub fn pattern(path: &Path, junction: usize, json: bool) -> Result<()> {
    let spec = Spec::load(path)?;
    let l = spec.junctions();
    if junction == 0 || junction > l {
        bail!(
            "--junction {junction}: spec '{}' has junctions 1 to {l}",
            spec.name
        );
    }
    let p = JunctionPattern::generate(&spec, junction - 1);
    let edges: Vec<_> = (0..p.edges()).map(|e| p.edge(e)).collect();
    let r = Pattern {
        spec: &spec.name,
        junction,
        kind: p.kind,
        dither: p.dither,
        left: p.left,
        right: p.right,
        fan_out: p.fan_out,
        fan_in: p.fan_in,
        z: p.z,
        edges,
    };
    emit(&r, Format::json(json));
    Ok(())
}

/// `edgeflow pattern`'s report: every edge of one junction.
#[derive(Serialize)]
struct Pattern<'a> {
    spec: &'a str,
    junction: usize,
    kind: edgeflow_core::PatternKind,
    dither: bool,
    left: usize,
    right: usize,
    fan_out: usize,
    fan_in: usize,
    z: usize,
    edges: Vec<edgeflow_core::pattern::EdgeInfo>,
}

impl fmt::Display for Pattern<'_> {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            w,
            "{:>7} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5} {:>5}",
            "edge", "right", "left", "sweep", "clock", "lane", "bank", "row"
        )?;
        for e in &self.edges {
            writeln!(
                w,
                "{:>7} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5} {:>5}",
                e.edge, e.right, e.left, e.sweep, e.clock, e.lane, e.bank, e.row
            )?;
        }
        Ok(())
    }
}
