//! Random valid specs and data for the RTL and cross-backend tests, deterministic in their
//! seed so that a failing case is reproduced by its seed alone.

use edgeflow_core::{Encoded, FfProducts, Spec};

/// A random valid spec with 2–4 junctions for RTL tests: small layers, every pattern type,
/// dither, activation and format chosen from `seed`.
pub fn random_spec(seed: u64) -> Spec {
    use edgeflow_core::fixed::{Activation, OutputDelta, ReluGate};
    use edgeflow_core::spec::{FixedSpec, PatternSpec};
    use edgeflow_core::{PatternKind, Rounding};
    let mut r = edgeflow_core::rng::SplitMix64::new(seed);
    loop {
        let l = 2 + r.below(3);
        let sizes = [4usize, 6, 8, 12, 16];
        let mut layers = vec![sizes[r.below(sizes.len())]];
        for _ in 0..l {
            layers.push(sizes[r.below(sizes.len())]);
        }
        let mut fan_out = vec![];
        let mut z = vec![];
        for j in 0..l {
            let (left, right) = (layers[j], layers[j + 1]);
            let fos: Vec<usize> = (1..=right.min(4))
                .filter(|&f| (left * f) % right == 0 && left % (left * f / right) == 0)
                .collect();
            if fos.is_empty() {
                break;
            }
            let fo = fos[r.below(fos.len())];
            let fi = left * fo / right;
            let zs: Vec<usize> = (1..=left)
                .filter(|&d| left % d == 0 && (fi % d == 0 || d % fi == 0) && d <= 8)
                .collect();
            fan_out.push(fo);
            z.push(zs[r.below(zs.len())]);
        }
        if fan_out.len() != l {
            continue;
        }
        let width = 8 + r.below(9) as u32;
        let int_bits = 1 + r.below(3) as u32;
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
            activation: Activation::ALL[(seed % Activation::ALL.len() as u64) as usize],
            learning_rate_shift: 1 + r.below(4) as u32,
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
                    [(seed / 2 % 3) as usize],
                dither: seed / 6 % 2 == 1,
                seed: r.below(1000) as u64,
            },
            seed: r.below(1000) as u64,
            registered_reads: false,
            deep_pipeline: false,
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
