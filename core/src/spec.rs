//! The network spec (TOML): what a user writes, how it is validated, and what follows from it.

use crate::fixed::{Activation, ActivationTable, Format, OutputDelta, ReluGate};
use crate::rounding::Rounding;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// Clocks a block cycle spends beyond the longest junction pass (pipeline fill of the
/// multiply-accumulate path); the published design needed 4.
pub const BLOCK_CYCLE_OVERHEAD: usize = 2;

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
    /// Rounding of the updates: `stochastic` or `nearest` (see `rounding`). When absent,
    /// [`Spec::rounding`] picks the one that learns for the activation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<Rounding>,
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
        BLOCK_CYCLE_OVERHEAD + self.registered_reads as usize + 2 * self.deep_pipeline as usize
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
        self.rounding.unwrap_or(match self.activation {
            Activation::Sigmoid => Rounding::Stochastic,
            Activation::Relu => Rounding::Nearest,
        })
    }

    /// Number of junctions `L`.
    pub fn junctions(&self) -> usize {
        self.layers.len() - 1
    }

    pub fn format(&self) -> Format {
        Format::new(self.fixed.int_bits, self.fixed.frac_bits)
    }

    /// The activation data every backend computes with: the sigmoid table at the spec's
    /// format and the spec's ReLU gate.
    pub fn activation_table(&self) -> ActivationTable {
        ActivationTable::sigmoid(self.format()).with_relu_gate(self.relu_gate)
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
                let good_z: Vec<usize> = divisors(left)
                    .into_iter()
                    .filter(|&d| fi % d == 0 || d % fi == 0)
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
                    multipliers_ff: z,
                    multipliers_bp: if hidden_left { 2 * z } else { 0 },
                    multipliers_up: z,
                }
            })
            .collect();
        let c = junctions.iter().map(|j| j.clocks).max().unwrap_or(0);
        Derived {
            block_cycle_clocks: c + self.block_cycle_overhead(),
            max_junction_clocks: c,
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
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
layers = [32, 16, 8]
fan_out = [4, 4]
z = [8, 4]
activation = "sigmoid"
learning_rate_shift = 3
seed = 1
[fixed]
width = 10
int_bits = 2
frac_bits = 7
[pattern]
kind = "type2"
dither = true
seed = 5
"#;

    fn err(text: &str) -> String {
        Spec::from_toml_str(text, "x.toml").unwrap_err().to_string()
    }

    #[test]
    fn good_spec_and_derived() {
        let s = Spec::from_toml_str(GOOD, "x.toml").unwrap();
        let d = s.derived();
        assert_eq!(d.junctions[0].fan_in, 8);
        assert_eq!(d.junctions[1].fan_in, 8);
        assert_eq!(d.junctions[0].clocks, 16);
        assert_eq!(d.junctions[1].clocks, 16);
        assert_eq!(d.junctions[0].staleness, 3);
        assert_eq!(d.junctions[1].staleness, 1);
        assert_eq!(d.block_cycle_clocks, 16 + BLOCK_CYCLE_OVERHEAD);
    }

    #[test]
    fn z_must_divide_left_layer() {
        let e = err(&GOOD.replace("z = [8, 4]", "z = [8, 6]"));
        assert!(e.contains("x.toml"), "{e}");
        assert!(e.contains("junction 2: z[1]"), "{e}");
        assert!(e.contains("= 6 must divide the left layer size 16"), "{e}");
        assert!(e.contains("try 4 or 8"), "{e}");
    }

    #[test]
    fn z_and_fan_in_must_nest() {
        // 48 left, 16 right, fan-out 4 → fan-in 12; z = 16 divides 48
        let e = err(&GOOD
            .replace("layers = [32, 16, 8]", "layers = [48, 16, 8]")
            .replace("z = [8, 4]", "z = [16, 4]"));
        // fan-in 12, z 16: neither divides the other
        assert!(e.contains("junction 1: z[0]"), "{e}");
        assert!(
            e.contains("= 16 and fan-in 12: one must divide the other"),
            "{e}"
        );
    }

    #[test]
    fn fan_in_must_be_whole() {
        let e = err(&GOOD
            .replace("layers = [32, 16, 8]", "layers = [32, 12, 8]")
            .replace("z = [8, 4]", "z = [8, 3]"));
        assert!(e.contains("junction 1: fan_out[0]"), "{e}");
        assert!(e.contains("fan-in is not whole"), "{e}");
        assert!(e.contains("try 3"), "{e}");
    }

    #[test]
    fn fan_in_must_divide_left_layer() {
        // 24 left, 16 right, fo 4 → 96 edges, fi 6, 6 | 24 ok; use fo 8 → fi 12, 12 | 24 ok;
        // 40 left, 16 right, fo 6 → 240 edges, fi 15, 15 ∤ 40
        let e = err(&GOOD
            .replace("layers = [32, 16, 8]", "layers = [40, 16, 8]")
            .replace("fan_out = [4, 4]", "fan_out = [6, 4]"));
        assert!(
            e.contains("fan-in 15, which must divide the left layer size 40"),
            "{e}"
        );
    }

    #[test]
    fn fan_out_range() {
        let e = err(&GOOD.replace("fan_out = [4, 4]", "fan_out = [4, 9]"));
        assert!(e.contains("junction 2: fan_out[1]"), "{e}");
        assert!(e.contains("between 1 and the right layer size 8"), "{e}");
    }

    #[test]
    fn edge_count_is_bounded() {
        let e = err(&GOOD
            .replace("layers = [32, 16, 8]", "layers = [32768, 32768, 8]")
            .replace("fan_out = [4, 4]", "fan_out = [1024, 4]")
            .replace("z = [8, 4]", "z = [1024, 4]"));
        assert!(e.contains("junction 1: fan_out[0]"), "{e}");
        assert!(e.contains("33554432 edges, more than 16777216"), "{e}");
        assert!(e.contains("at most 512"), "{e}");
    }

    /// 39 junctions, each within the bound, must not pass either: `train` would abort on
    /// allocation.
    #[test]
    fn edge_count_is_bounded_over_the_network() {
        let n = 40;
        let e = err(&GOOD
            .replace(
                "layers = [32, 16, 8]",
                &format!("layers = {:?}", vec![32768; n]),
            )
            .replace(
                "fan_out = [4, 4]",
                &format!("fan_out = {:?}", vec![512; n - 1]),
            )
            .replace("z = [8, 4]", &format!("z = {:?}", vec![512; n - 1])));
        assert!(e.contains("fan_out: 39 junctions"), "{e}");
        assert!(
            e.contains("654311424 edges in all, more than 16777216"),
            "{e}"
        );
        assert!(!e.contains("junction 1:"), "{e}");
        // At the bound exactly: one junction of 2^24 edges is as valid as before.
        let one = GOOD
            .replace("layers = [32, 16, 8]", "layers = [32768, 32768]")
            .replace("fan_out = [4, 4]", "fan_out = [512]")
            .replace("z = [8, 4]", "z = [512]");
        assert!(Spec::from_toml_str(&one, "x.toml").is_ok());
    }

    #[test]
    fn entry_counts() {
        let e = err(&GOOD.replace("z = [8, 4]", "z = [8]"));
        assert!(
            e.contains("z: has 1 entries but the network has 2 junctions"),
            "{e}"
        );
    }

    #[test]
    fn too_few_layers() {
        let e = err(&GOOD.replace("layers = [32, 16, 8]", "layers = [32]"));
        assert!(e.contains("layers: needs at least 2 sizes"), "{e}");
    }

    #[test]
    fn zero_layer() {
        let e = err(&GOOD.replace("layers = [32, 16, 8]", "layers = [32, 0, 8]"));
        assert!(e.contains("layers[1]: = 0 must be between 1 and 32768 (the 32-bit accumulators must not overflow)"), "{e}");
    }

    #[test]
    fn width_rules() {
        let e = err(&GOOD.replace("width = 10", "width = 11"));
        assert!(
            e.contains("fixed.width: = 11 must equal 1 (sign) + int_bits (2) + frac_bits (7)"),
            "{e}"
        );
        let e = err(&GOOD
            .replace("width = 10", "width = 18")
            .replace("frac_bits = 7", "frac_bits = 15"));
        assert!(e.contains("must be between 2 and 16"), "{e}");
        let e = err(&GOOD
            .replace("width = 10", "width = 13")
            .replace("int_bits = 2", "int_bits = 5"));
        assert!(e.contains("fixed.int_bits: = 5 exceeds 3"), "{e}");
    }

    #[test]
    fn learning_rate_rule() {
        let e = err(&GOOD.replace("learning_rate_shift = 3", "learning_rate_shift = 20"));
        assert!(e.contains("learning_rate_shift: = 20 exceeds 15"), "{e}");
    }

    #[test]
    fn empty_name() {
        let e = err(&GOOD.replace("name = \"t\"", "name = \" \""));
        assert!(e.contains("name: must not be empty"), "{e}");
    }

    #[test]
    fn toml_errors_name_line_and_field() {
        let e = err(&GOOD.replace("kind = \"type2\"", "kind = \"type9\""));
        assert!(e.contains("x.toml"), "{e}");
        assert!(e.contains("line 14 (`kind = \"type9\"`)"), "{e}");
        assert!(e.contains("type9"), "{e}");
        let e = err(&GOOD.replace("seed = 1\n", "seed = 1\nbogus = 2\n"));
        assert!(e.contains("unknown field `bogus`"), "{e}");
        // A missing field names the field, not the file's first line.
        let e = err(&GOOD.replace("learning_rate_shift", "# learning_rate_shift"));
        assert!(e.contains("missing field `learning_rate_shift`"), "{e}");
        assert!(!e.contains("line 1 ("), "{e}");
    }

    #[test]
    fn several_problems_reported_together() {
        let s = GOOD.replace("z = [8, 4]", "z = [7, 6]");
        let e = Spec::from_toml_str(&s, "x.toml").unwrap_err();
        assert_eq!(e.problems.len(), 2);
    }

    #[test]
    fn missing_file() {
        let e = Spec::load(Path::new("/nonexistent/x.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/x.toml") && e.contains("cannot be read"),
            "{e}"
        );
    }
}
