//! Random valid specs and data for the RTL and cross-backend tests, deterministic in their
//! seed so that a failing case is reproduced by its seed alone. One generator; a [`Shape`]
//! says how large the networks may be (small for the cycle-by-cycle simulations, larger for
//! the backends that run whole networks fast).

use edgeflow_core::{Encoded, FfProducts, Spec};
use std::ops::RangeInclusive;

/// The sizes and formats random specs are drawn from.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Sizes of the input layer, of hidden layers and of the output layer.
    pub input_layers: &'static [usize],
    pub hidden_layers: &'static [usize],
    pub output_layers: &'static [usize],
    /// Largest fan-out and largest number of lanes (`z`) of a junction.
    pub max_fan_out: usize,
    pub max_lanes: usize,
    /// Format width and integer bits (the fraction takes the rest).
    pub widths: RangeInclusive<u32>,
    pub int_bits: RangeInclusive<u32>,
    pub learning_rate_shifts: RangeInclusive<u32>,
}

impl Shape {
    /// Layers of 4–16 neurons, at most 4 lanes of fan-out and 8 lanes: what the rust-hdl,
    /// Icarus and Verilator simulations clock through in seconds.
    pub const SMALL: Shape = Shape {
        input_layers: &[4, 6, 8, 12, 16],
        hidden_layers: &[4, 6, 8, 12, 16],
        output_layers: &[4, 6, 8, 12, 16],
        max_fan_out: 4,
        max_lanes: 8,
        widths: 8..=16,
        int_bits: 1..=3,
        learning_rate_shifts: 1..=4,
    };
    /// Inputs up to 64, any fan-out and lane count, widths of 10+ bits and small shifts (so
    /// the updates of every junction stay above the rounding step: narrower nets stop
    /// learning in their first junctions).
    pub const WIDE: Shape = Shape {
        input_layers: &[8, 12, 16, 24, 32, 48, 64],
        hidden_layers: &[4, 6, 8, 12, 16, 24, 32],
        output_layers: &[2, 3, 4, 8, 10],
        max_fan_out: usize::MAX,
        max_lanes: usize::MAX,
        widths: 10..=16,
        int_bits: 0..=3,
        learning_rate_shifts: 1..=3,
    };
}

fn draw(r: &mut edgeflow_core::rng::SplitMix64, range: &RangeInclusive<u32>) -> u32 {
    range.start() + r.below((range.end() - range.start() + 1) as usize) as u32
}

/// A random valid spec of [`Shape::SMALL`] with 2–4 junctions.
pub fn random_spec(seed: u64) -> Spec {
    random_spec_of(&Shape::SMALL, seed)
}

/// A random valid spec with 2–4 junctions: pattern kind, dither and activation cycle with the
/// seed (any 6·A consecutive seeds, A activations, cover every combination of the three);
/// output delta, ReLU gate, FF product rule, rounding (given or by default) and input
/// precision are drawn from the seed; layers, fan-outs, lanes and format from `shape`.
pub fn random_spec_of(shape: &Shape, seed: u64) -> Spec {
    use edgeflow_core::fixed::{Activation, OutputDelta, ReluGate};
    use edgeflow_core::spec::{FixedSpec, PatternSpec};
    use edgeflow_core::{PatternKind, Rounding};
    let mut r = edgeflow_core::rng::SplitMix64::new(seed);
    loop {
        let l = 2 + r.below(3);
        let pick = |r: &mut edgeflow_core::rng::SplitMix64, v: &[usize]| v[r.below(v.len())];
        let mut layers = vec![pick(&mut r, shape.input_layers)];
        for j in 0..l {
            let sizes = if j + 1 == l {
                shape.output_layers
            } else {
                shape.hidden_layers
            };
            layers.push(pick(&mut r, sizes));
        }
        let mut fan_out = vec![];
        let mut z = vec![];
        for j in 0..l {
            let (left, right) = (layers[j], layers[j + 1]);
            // fan-outs giving an integer fan-in that divides the left layer
            let fos: Vec<usize> = (1..=right.min(shape.max_fan_out))
                .filter(|&f| (left * f) % right == 0 && left % (left * f / right) == 0)
                .collect();
            if fos.is_empty() {
                break;
            }
            let fo = fos[r.below(fos.len())];
            let fi = left * fo / right;
            let zs: Vec<usize> = (1..=left)
                .filter(|&d| left % d == 0 && (fi % d == 0 || d % fi == 0) && d <= shape.max_lanes)
                .collect();
            fan_out.push(fo);
            z.push(zs[r.below(zs.len())]);
        }
        if fan_out.len() != l {
            continue;
        }
        let width = draw(&mut r, &shape.widths);
        let int_bits = draw(&mut r, &shape.int_bits).min(width.saturating_sub(3));
        let spec = Spec {
            name: format!("random-{seed}"),
            layers,
            fan_out,
            z,
            fixed: FixedSpec {
                width,
                int_bits,
                frac_bits: width - 1 - int_bits,
            },
            activation: Activation::ALL[(seed / 6 % Activation::ALL.len() as u64) as usize],
            learning_rate_shift: draw(&mut r, &shape.learning_rate_shifts),
            // its own stream, so the other draws stay as they were
            output_delta: if edgeflow_core::rng::SplitMix64::derive(seed, "output-delta", 0)
                .below(2)
                == 0
            {
                OutputDelta::Clipped
            } else {
                OutputDelta::Plain
            },
            relu_gate: if edgeflow_core::rng::SplitMix64::derive(seed, "relu-gate", 0).below(2) == 0
            {
                ReluGate::Clipped
            } else {
                ReluGate::Plain
            },
            ff_products: [FfProducts::Rounded, FfProducts::Saturated]
                [edgeflow_core::rng::SplitMix64::derive(seed, "ff-products", 0).below(2)],
            rounding: [None, Some(Rounding::Nearest), Some(Rounding::Stochastic)]
                [edgeflow_core::rng::SplitMix64::derive(seed, "rounding", 0).below(3)],
            pattern: PatternSpec {
                kind: [PatternKind::Type1, PatternKind::Type2, PatternKind::Type3]
                    [(seed % 3) as usize],
                dither: seed / 3 % 2 == 1,
                seed: r.below(1000) as u64,
            },
            seed: r.below(1000) as u64,
            registered_reads: false,
            deep_pipeline: false,
            dsp_multipliers: None,
            input_bits: random_input_bits(seed),
        };
        if spec.validate("random").is_ok() {
            return spec;
        }
    }
}

/// The input precision of random spec `seed`, from its own stream so the other draws stay as
/// they were: absent (`frac_bits + 1`) a quarter of the time, one bit (the FF selects of
/// junction 1) a quarter, else 1 to 16 bits.
pub fn random_input_bits(seed: u64) -> Option<u32> {
    let mut r = edgeflow_core::rng::SplitMix64::derive(seed, "input-bits", 0);
    match r.below(4) {
        0 => None,
        1 => Some(1),
        _ => Some(1 + r.below(16) as u32),
    }
}

/// `n` random samples for a spec: inputs uniform over the `2^(b−1) + 1` values of its input
/// precision `b` in `[0, 1]`, encoded as the data sets are; random labels.
pub fn random_data(spec: &Spec, n: usize, seed: u64) -> Encoded {
    let mut r = edgeflow_core::rng::SplitMix64::new(seed);
    let (f, bits) = (spec.format(), spec.input_bits());
    let steps = 1usize << (bits - 1);
    let inputs = (0..n * spec.layers[0])
        .map(|_| f.quantize_input(r.below(steps + 1) as f64 / steps as f64, bits))
        .collect();
    let labels = (0..n)
        .map(|_| r.below(spec.layers[spec.junctions()]))
        .collect();
    Encoded {
        inputs_per_sample: spec.layers[0],
        inputs,
        labels,
    }
}
