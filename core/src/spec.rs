//! The network spec (TOML): what a user writes, how it is validated, and what follows from it.

use crate::fixed::{Activation, ActivationTable, FfProducts, Format, OutputDelta, ReluGate};
use crate::rounding::Rounding;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// Clocks a block cycle spends beyond the longest junction pass: the FF pipeline's latency
/// from a junction's last edge to the last right-layer write it causes (the finished sum is
/// registered for saturation and the activation ROM, the ROM output again before the write);
/// the published design needed 4.
pub const BLOCK_CYCLE_OVERHEAD: usize = 2;

/// Clocks a board of a linked chain spends between its block cycles when nothing is late: its
/// sequencer settles the next block cycle's steps, decides, and lets the stage start
/// (hdl/src/link/boundary.rs). The planner adds them to such a board's block cycle.
pub const LINKED_STAGE_CLOCKS: usize = 3;

/// Clocks the deep pipeline adds to FF, and so to the block cycle: the product register and
/// the saturated sum's register.
pub const DEEP_PIPELINE_CLOCKS: usize = 2;

/// Most clocks one junction pass (`C_j` = edges / z) may take: the hardware counts a block
/// cycle, the pass and every clock any build adds to it (registered reads, the deep pipeline,
/// a linked stage's sequencer), in 16-bit counters.
pub const MAX_PASS_CLOCKS: usize =
    (1 << 16) - 1 - (BLOCK_CYCLE_OVERHEAD + 1 + DEEP_PIPELINE_CLOCKS + LINKED_STAGE_CLOCKS);

/// Whether `z` lanes give junction passes of `edges / z` clocks the hardware can count
/// ([`MAX_PASS_CLOCKS`]).
pub fn pass_fits_counters(edges: usize, z: usize) -> bool {
    z > 0 && edges / z <= MAX_PASS_CLOCKS
}

/// Most edges one junction, and the whole network, may have. Without a bound a fully connected
/// 32768 × 32768 junction, or dozens of junctions just under the bound, pass validation and
/// then abort on allocation (4 GiB per copy of the weights); 2^24 16-bit weights are over 50
/// times the block RAM of the largest board in boards/.
pub const MAX_EDGES: usize = 1 << 24;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatternKind {
    Type1,
    Type2,
    Type3,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedSpec {
    pub width: u32,
    pub int_bits: u32,
    pub frac_bits: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternSpec {
    pub kind: PatternKind,
    #[serde(default)]
    pub dither: bool,
    #[serde(default)]
    pub seed: u64,
}

/// A network spec exactly as written in TOML.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub name: String,
    /// `N_0 … N_L`.
    pub layers: Vec<usize>,
    /// Fan-out `fo_i` of every left neuron of junction `i` (one entry per junction).
    pub fan_out: Vec<usize>,
    /// Edges per clock `z_i` of junction `i`.
    pub z: Vec<usize>,
    pub fixed: FixedSpec,
    pub activation: Activation,
    /// `η = 2^-learning_rate_shift`.
    pub learning_rate_shift: u32,
    /// The output delta of an output already at the sigmoid table's end on its target's side:
    /// `clipped` (the default: no delta) or `plain` (`a − y`). See `fixed` step 6.
    #[serde(default)]
    pub output_delta: OutputDelta,
    /// ReLU's gate where the pre-activation is saturated at the format's maximum: `clipped`
    /// (the default: shut) or `plain` (open). See `fixed` step 5.
    #[serde(default)]
    pub relu_gate: ReluGate,
    /// FF's products before the neuron's sum: `rounded` (the default: only the sum
    /// saturates) or `saturated` (each product too). See `fixed` step 2.
    #[serde(default)]
    pub ff_products: FfProducts,
    /// Rounding of the updates: `stochastic` or `nearest` (see `rounding`). When absent,
    /// [`Spec::rounding`] picks the one that learns for the activation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<Rounding>,
    /// Bits of precision of an input (1–16): an input in `[0, 1]` is one of
    /// `2^(input_bits−1) + 1` values `q·2^−(input_bits−1)` ([`Format::quantize_input`]). Absent:
    /// [`Spec::input_bits`] gives `frac_bits + 1`, the format's own precision on `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_bits: Option<u32>,
    pub pattern: PatternSpec,
    /// Seed of the initial weights.
    #[serde(default)]
    pub seed: u64,
    /// Register every memory read before the arithmetic uses it: one more clock per block
    /// cycle, and no clock holds a memory read and a multiply together. For parts whose
    /// multipliers are slow as combinational logic (the iCE40 UP5K's MAC16: 9 ns); the
    /// results are the same bits either way. Board files can ask for it (`edgeflow
    /// bitstream` then turns it on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub registered_reads: bool,
    /// The deep pipeline, for parts whose arithmetic is slow next to their clock (the iCE40
    /// UP5K): every multiplier's product is held in a register (the MAC16 has one at its
    /// output, so it costs no logic cell) before the rounding, saturation and sums that follow
    /// it, and each finished neuron's saturated sum is registered before its activation
    /// lookup. Two more clocks per block cycle, the same bits. Board files can ask for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deep_pipeline: bool,
    /// At most this many multipliers in the part's DSP cells, the rest built from logic
    /// (absent: as many as the part has). The same bits either way; a choice for parts whose
    /// router cannot reach every DSP of a full design (`edgeflow fit` weighs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsp_multipliers: Option<usize>,
}

/// One broken rule: the field, what the rule is, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub field: String,
    pub rule: String,
    pub fix: String,
}

/// Every rule a spec breaks, with the file it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub source: String,
    pub problems: Vec<Problem>,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid spec {}:", self.source)?;
        for p in &self.problems {
            write!(f, "\n  - {}: {}", p.field, p.rule)?;
            if !p.fix.is_empty() {
                write!(f, "; {}", p.fix)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

fn divisors(n: usize) -> Vec<usize> {
    (1..=n).filter(|d| n % d == 0).collect()
}

fn list(v: &[usize]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    match s.len() {
        0 => "none".into(),
        1 => s[0].clone(),
        _ => format!("{} or {}", s[..s.len() - 1].join(", "), s[s.len() - 1]),
    }
}

/// Values of `v` closest to `target`, at most `k`, in increasing order.
fn nearest(mut v: Vec<usize>, target: usize, k: usize) -> Vec<usize> {
    v.sort_by_key(|&x| (x.abs_diff(target), x));
    v.truncate(k);
    v.sort();
    v
}

impl Spec {
    /// Clocks a block cycle spends beyond the longest junction pass on this hardware:
    /// [`BLOCK_CYCLE_OVERHEAD`], one more with `registered_reads`, two more with
    /// `deep_pipeline`.
    pub fn block_cycle_overhead(&self) -> usize {
        BLOCK_CYCLE_OVERHEAD
            + self.registered_reads as usize
            + DEEP_PIPELINE_CLOCKS * self.deep_pipeline as usize
    }

    /// `C = max C_j`: the longest junction pass, in clocks (`C_j` = edges / z).
    pub fn max_pass_clocks(&self) -> usize {
        (0..self.junctions())
            .map(|j| self.layers[j] * self.fan_out[j] / self.z[j])
            .max()
            .unwrap_or(1)
    }

    /// Clocks of a block cycle: the longest pass and the pipeline's overhead, so the last
    /// right-layer write of a block cycle lands before the next one starts (which also keeps
    /// a weight written back in one block cycle from being read back at the same clock edge).
    pub fn block_cycle_clocks(&self) -> usize {
        self.max_pass_clocks() + self.block_cycle_overhead()
    }

    pub fn from_toml_str(text: &str, source: &str) -> Result<Spec, SpecError> {
        let spec: Spec = toml::from_str(text).map_err(|e| SpecError {
            source: source.to_string(),
            problems: vec![Problem {
                // A missing field has the whole file (or table) as its span: its first line
                // would point at an unrelated comment, so only point at short spans.
                field: e
                    .span()
                    .filter(|s| {
                        !text[s.start.min(text.len())..s.end.min(text.len())].contains('\n')
                    })
                    .map(|s| {
                        let before = &text[..s.start.min(text.len())];
                        let line = before.matches('\n').count() + 1;
                        let content = text.lines().nth(line - 1).unwrap_or("").trim();
                        format!("line {line} (`{content}`)")
                    })
                    .unwrap_or_else(|| "TOML".into()),
                rule: e.message().trim().to_string(),
                fix: "see specs/digits.toml for a complete, valid spec".into(),
            }],
        })?;
        spec.validate(source)?;
        Ok(spec)
    }

    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            source: source.clone(),
            problems: vec![Problem {
                field: "file".into(),
                rule: format!("cannot be read: {e}"),
                fix: "check the path; bundled specs live in specs/".into(),
            }],
        })?;
        Spec::from_toml_str(&text, &source)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a spec always serializes")
    }

    /// The rounding of the updates: the spec's `rounding`, or when it has none, stochastic
    /// for sigmoid hidden layers and nearest for ReLU. Measured on the learning-quality grid
    /// (docs/quality): stochastic rounding closes the gap to float of sigmoid networks at
    /// 8–12 bits, while ReLU networks learn a little better with nearest.
    pub fn rounding(&self) -> Rounding {
        self.rounding
            .unwrap_or_else(|| self.activation.default_rounding())
    }

    /// The effective input precision: the spec's `input_bits`, or when it has none
    /// `frac_bits + 1`, which encodes an input exactly as a plain rounding to the format.
    pub fn input_bits(&self) -> u32 {
        self.input_bits.unwrap_or(self.fixed.frac_bits + 1)
    }

    /// Junction 1's products with its inputs are selects: FF's `mul(w, x)` is `x ? w : 0` and
    /// UP's `mul(δ, x)` is `x ? δ : 0`. With one-bit inputs `x` is 0 or 1.0, and
    /// `mul(v, 1.0) = v` wherever the format holds 1.0. With `int_bits = 0` the input 1.0
    /// saturates to `1 − 2^−frac_bits` and the products stay products.
    pub fn input_selects(&self) -> bool {
        self.input_bits() == 1 && self.fixed.int_bits >= 1
    }

    /// Number of junctions `L`.
    pub fn junctions(&self) -> usize {
        self.layers.len() - 1
    }

    pub fn format(&self) -> Format {
        Format::new(self.fixed.int_bits, self.fixed.frac_bits)
    }

    /// The activation data every backend computes layer `layer` (1 … L) with: the table of
    /// its activation ([`Spec::activation_of_layer`]) at the spec's format, and the spec's
    /// ReLU gate.
    pub fn activation_table(&self, layer: usize) -> ActivationTable {
        ActivationTable::new(self.activation_of_layer(layer), self.format())
            .with_relu_gate(self.relu_gate)
    }

    /// The output table's entries at which an output's delta stops (step 6 of the contract,
    /// `fixed::output_delta_ends`).
    pub fn output_delta_ends(&self) -> Option<(i32, i32)> {
        crate::fixed::output_delta_ends(self.output_delta, &self.activation_table(self.junctions()))
    }

    /// Check every rule of docs/spec.md; report all broken ones at once.
    pub fn validate(&self, source: &str) -> Result<(), SpecError> {
        let mut p = Vec::new();
        let mut add =
            |field: String, rule: String, fix: String| p.push(Problem { field, rule, fix });
        if self.name.trim().is_empty() {
            add(
                "name".into(),
                "must not be empty".into(),
                "give the network a name".into(),
            );
        }
        if self.layers.len() < 2 {
            add(
                "layers".into(),
                format!(
                    "needs at least 2 sizes (inputs and outputs), got {}",
                    self.layers.len()
                ),
                "write e.g. layers = [64, 80, 10]".into(),
            );
        }
        for (i, &n) in self.layers.iter().enumerate() {
            if n == 0 || n > 32768 {
                add(
                    format!("layers[{i}]"),
                    format!("= {n} must be between 1 and 32768 (the 32-bit accumulators must not overflow)"),
                    "use a positive layer size".into(),
                );
            }
        }
        let fx = &self.fixed;
        if fx.width != 1 + fx.int_bits + fx.frac_bits {
            add(
                "fixed.width".into(),
                format!(
                    "= {} must equal 1 (sign) + int_bits ({}) + frac_bits ({})",
                    fx.width, fx.int_bits, fx.frac_bits
                ),
                format!("set width = {}", 1 + fx.int_bits + fx.frac_bits),
            );
        }
        if fx.width > 16 || fx.width < 2 {
            add(
                "fixed.width".into(),
                format!(
                    "= {} must be between 2 and 16 (the datapath multiplies 16 x 16 bits)",
                    fx.width
                ),
                "use e.g. width = 16, int_bits = 3, frac_bits = 12".into(),
            );
        }
        if fx.int_bits > 3 {
            add(
                "fixed.int_bits".into(),
                format!(
                    "= {} exceeds 3: the sigmoid table covers at most [-8, 8)",
                    fx.int_bits
                ),
                "use int_bits = 2 or 3 and give the rest to frac_bits".into(),
            );
        }
        if let Some(b) = self.input_bits {
            if !(1..=16).contains(&b) {
                add(
                    "input_bits".into(),
                    format!("= {b} must be between 1 and 16 (bits of precision of an input in [0, 1])"),
                    format!(
                        "use e.g. input_bits = 1 for black-and-white inputs, or leave it out for the format's own precision ({})",
                        fx.frac_bits + 1
                    ),
                );
            }
        }
        if self.learning_rate_shift > 15 {
            add(
                "learning_rate_shift".into(),
                format!(
                    "= {} exceeds 15: every update would round to zero",
                    self.learning_rate_shift
                ),
                "η = 2^-shift; typical values are 2 to 6".into(),
            );
        }
        let l = self.layers.len().saturating_sub(1);
        for (field, v) in [("fan_out", &self.fan_out), ("z", &self.z)] {
            if v.len() != l {
                add(
                    field.into(),
                    format!(
                        "has {} entries but the network has {l} junctions (one per pair of layers)",
                        v.len()
                    ),
                    format!("give exactly {l} values"),
                );
            }
        }
        let bad_sizes = self.layers.iter().any(|&n| n == 0 || n > 32768);
        // Edges of the junctions that are each within MAX_EDGES, for the bound on their sum.
        let (mut total, mut counted) = (0usize, 0usize);
        if self.fan_out.len() == l && self.z.len() == l && !bad_sizes {
            for j in 0..l {
                let (left, right) = (self.layers[j], self.layers[j + 1]);
                let (fo, z) = (self.fan_out[j], self.z[j]);
                let name = format!("junction {}", j + 1);
                let good_fo: Vec<usize> = (1..=right)
                    .filter(|&f| (left * f) % right == 0 && left % (left * f / right) == 0)
                    .collect();
                if fo == 0 || fo > right {
                    add(
                        format!("{name}: fan_out[{j}]"),
                        format!("= {fo} must be between 1 and the right layer size {right}"),
                        format!("try {}", list(&nearest(good_fo, fo, 3))),
                    );
                    continue;
                }
                if (left * fo) % right != 0 {
                    add(
                        format!("{name}: fan_out[{j}]"),
                        format!(
                            "= {fo} gives {} edges, which the right layer size {right} does not divide, so fan-in is not whole",
                            left * fo
                        ),
                        format!("try {}", list(&nearest(good_fo, fo, 3))),
                    );
                    continue;
                }
                if left * fo > MAX_EDGES {
                    add(
                        format!("{name}: fan_out[{j}]"),
                        format!(
                            "= {fo} gives {} edges, more than {MAX_EDGES} (2^24): no FPGA here holds that many weights and the host models would need gigabytes",
                            left * fo
                        ),
                        format!(
                            "lower fan_out[{j}] to at most {} or split the layer",
                            MAX_EDGES / left
                        ),
                    );
                    continue;
                }
                total = total.saturating_add(left * fo);
                counted += 1;
                let fi = left * fo / right;
                if left % fi != 0 {
                    add(
                        format!("{name}: fan_out[{j}]"),
                        format!(
                            "= {fo} gives fan-in {fi}, which must divide the left layer size {left} so a right neuron's edges stay in one sweep"
                        ),
                        format!("try {}", list(&nearest(good_fo, fo, 3))),
                    );
                    continue;
                }
                if self.ff_products == FfProducts::Rounded && (1..=16).contains(&fx.width) {
                    // The FF accumulator: fan-in products of up to `product_bits` bits and a bias.
                    let product_bits = fx.width + fx.int_bits.min(fx.width - 1);
                    let largest = ((fi as u64) << (product_bits - 1)) + (1u64 << (fx.width - 1));
                    if largest >= 1u64 << 31 {
                        add(
                            format!("{name}: fan_out[{j}]"),
                            format!(
                                "= {fo} gives fan-in {fi}: with ff_products = \"rounded\" a neuron sums {fi} products of up to {product_bits} bits, which can overflow the 32-bit accumulator"
                            ),
                            format!(
                                "lower the fan-in to at most {}, use fewer int_bits, or set ff_products = \"saturated\"",
                                ((1u64 << 31) - (1u64 << (fx.width - 1)) - 1) >> (product_bits - 1)
                            ),
                        );
                        continue;
                    }
                }
                let good_z: Vec<usize> = divisors(left)
                    .into_iter()
                    .filter(|&d| (fi % d == 0 || d % fi == 0) && pass_fits_counters(left * fo, d))
                    .collect();
                if z == 0 || left % z != 0 {
                    add(
                        format!("{name}: z[{j}]"),
                        format!("= {z} must divide the left layer size {left}"),
                        format!("try {}", list(&nearest(good_z, z, 2))),
                    );
                } else if fi % z != 0 && z % fi != 0 {
                    add(
                        format!("{name}: z[{j}]"),
                        format!("= {z} and fan-in {fi}: one must divide the other"),
                        format!("try {}", list(&nearest(good_z, z, 2))),
                    );
                } else if !pass_fits_counters(left * fo, z) {
                    add(
                        format!("{name}: z[{j}]"),
                        format!(
                            "= {z} gives passes of {} clocks, more than {MAX_PASS_CLOCKS}: the hardware counts a block cycle in 16 bits",
                            left * fo / z
                        ),
                        format!("raise z[{j}]: try {}", list(&nearest(good_z, z, 2))),
                    );
                }
            }
        }
        // Every junction's weights are held at once (and copied per stale pass), so the bound
        // of one junction holds for the network too.
        if counted == l && total > MAX_EDGES {
            add(
                "fan_out".into(),
                format!(
                    "{l} junctions with {total} edges in all, more than {MAX_EDGES} (2^24): the host models would need gigabytes"
                ),
                "lower the fan_out values or use fewer or smaller layers".into(),
            );
        }
        if p.is_empty() {
            Ok(())
        } else {
            Err(SpecError {
                source: source.to_string(),
                problems: p,
            })
        }
    }

    /// Derived values of a validated spec.
    pub fn derived(&self) -> Derived {
        let l = self.junctions();
        let junctions: Vec<JunctionInfo> = (0..l)
            .map(|j| {
                let (left, right) = (self.layers[j], self.layers[j + 1]);
                let fo = self.fan_out[j];
                let z = self.z[j];
                let edges = left * fo;
                let fi = edges / right;
                let hidden_left = j > 0;
                JunctionInfo {
                    index: j + 1,
                    left,
                    right,
                    fan_out: fo,
                    fan_in: fi,
                    z,
                    edges,
                    clocks: edges / z,
                    density: fo as f64 / right as f64,
                    staleness: 2 * (l - (j + 1)) + 1,
                    multipliers_ff: if j == 0 && self.input_selects() { 0 } else { z },
                    multipliers_bp: if hidden_left { 2 * z } else { 0 },
                    multipliers_up: if j == 0 && self.input_selects() { 0 } else { z },
                }
            })
            .collect();
        Derived {
            block_cycle_clocks: self.block_cycle_clocks(),
            max_junction_clocks: self.max_pass_clocks(),
            multipliers: junctions
                .iter()
                .map(|j| j.multipliers_ff + j.multipliers_bp + j.multipliers_up)
                .sum(),
            total_edges: junctions.iter().map(|j| j.edges).sum(),
            junctions,
        }
    }

    /// Single-board staleness vector `s_i = 2(L - i) + 1`.
    pub fn default_staleness(&self) -> Vec<usize> {
        let l = self.junctions();
        (1..=l).map(|i| 2 * (l - i) + 1).collect()
    }

    pub fn fan_in(&self, j: usize) -> usize {
        self.layers[j] * self.fan_out[j] / self.layers[j + 1]
    }

    /// Edges of junction `j`.
    pub fn edges(&self, j: usize) -> usize {
        self.layers[j] * self.fan_out[j]
    }

    /// The activation of layer `layer` (1 … L; layer 0 is the inputs): the spec's hidden
    /// activation, and the sigmoid on the output layer, whose deltas are `a − y`.
    pub fn activation_of_layer(&self, layer: usize) -> Activation {
        if layer == self.junctions() {
            Activation::Sigmoid
        } else {
            self.activation
        }
    }

    /// Edge operations of training on one sample: FF and UP on every edge, and BP on every
    /// edge of the junctions after the first (the inputs need no deltas).
    pub fn edge_ops_per_sample(&self) -> usize {
        (0..self.junctions())
            .map(|j| self.edges(j) * if j > 0 { 3 } else { 2 })
            .sum()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct JunctionInfo {
    pub index: usize,
    pub left: usize,
    pub right: usize,
    pub fan_out: usize,
    pub fan_in: usize,
    pub z: usize,
    pub edges: usize,
    pub clocks: usize,
    pub density: f64,
    pub staleness: usize,
    pub multipliers_ff: usize,
    pub multipliers_bp: usize,
    pub multipliers_up: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct Derived {
    pub junctions: Vec<JunctionInfo>,
    pub max_junction_clocks: usize,
    pub block_cycle_clocks: usize,
    pub multipliers: usize,
    pub total_edges: usize,
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
