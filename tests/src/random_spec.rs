//! Random valid specs for the cross-backend tests, and the spec variants that reach the
//! clipping and product rules. Deterministic in the seed, so a failing case is reproduced by
//! its seed alone.

use edgeflow_core::Spec;
use edgeflow_reference::random::{random_spec_of, Shape};

pub use edgeflow_reference::random::random_data;

/// The spec for `seed`: the one generator (`edgeflow_reference::random`) at
/// [`Shape::WIDE`], for the backends that run whole networks fast.
pub fn random_spec(seed: u64) -> Spec {
    random_spec_of(&Shape::WIDE, seed)
}

/// The four cases that meet the clipped rules of `fixed` steps 5 and 6: `spec` (tiny) at a
/// 1.0 range (8 bits, no integer bit) with η = 1 and one class, so outputs reach the sigmoid
/// table's ends and ReLU activations the format's maximum within a few samples. In order:
/// sigmoid with the output delta clipped, then plain; ReLU with the gate clipped, then plain.
/// Cases 0 and 1 (and 2 and 3) must train to different states, or the rule never applied.
pub fn clipping_cases(spec: &Spec) -> Vec<Spec> {
    use edgeflow_core::{Activation, OutputDelta, ReluGate};
    [
        (Activation::Sigmoid, OutputDelta::Clipped, ReluGate::Clipped),
        (Activation::Sigmoid, OutputDelta::Plain, ReluGate::Clipped),
        (Activation::Relu, OutputDelta::Plain, ReluGate::Clipped),
        (Activation::Relu, OutputDelta::Plain, ReluGate::Plain),
    ]
    .into_iter()
    .map(|(activation, output_delta, relu_gate)| {
        let mut s = spec.clone();
        s.activation = activation;
        s.output_delta = output_delta;
        s.relu_gate = relu_gate;
        s.fixed = edgeflow_core::spec::FixedSpec {
            width: 8,
            int_bits: 0,
            frac_bits: 7,
        };
        s.learning_rate_shift = 0;
        s
    })
    .collect()
}

/// The two FF product rules (`fixed` step 2) where they differ: `spec` with ReLU at a range
/// of ±2 (10 bits, 1 integer bit) and η = 1, so activations and weights grow past 1.4 within
/// a few samples and their products past the range. Rounded first, then saturated; the two
/// must train apart ([`train_apart`]), or no product ever left the range.
pub fn product_cases(spec: &Spec) -> Vec<Spec> {
    use edgeflow_core::{Activation, FfProducts};
    [FfProducts::Rounded, FfProducts::Saturated]
        .into_iter()
        .map(|rule| {
            let mut s = spec.clone();
            s.activation = Activation::Relu;
            s.ff_products = rule;
            s.fixed = edgeflow_core::spec::FixedSpec {
                width: 10,
                int_bits: 1,
                frac_bits: 8,
            };
            s.learning_rate_shift = 0;
            s
        })
        .collect()
}

/// Data for [`product_cases`]: `n` samples with every input at 1.0 and random labels, so the
/// first junction's activations are as large as inputs make them.
pub fn product_data(case: &Spec, n: usize, seed: u64) -> edgeflow_core::Encoded {
    let mut d = random_data(case, n, seed);
    d.inputs
        .fill(case.format().quantize_input(1.0, case.input_bits()));
    d
}

/// Whether `a` and `b` train `data` to different states after some prefix of it: the rule in
/// which they differ applied. (Their final states alone can meet again, when both saturate.)
pub fn train_apart(a: &Spec, b: &Spec, data: &edgeflow_core::Encoded) -> bool {
    use edgeflow_reference::Reference;
    (1..=data.labels.len()).any(|n| {
        let prefix = data.select(&(0..n).collect::<Vec<_>>());
        let (mut ra, mut rb) = (Reference::new(a), Reference::new(b));
        ra.train(&prefix);
        rb.train(&prefix);
        ra.state.sha256() != rb.state.sha256()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_kinds_activations_and_both_lane_sides() {
        let specs: Vec<Spec> = (0..24).map(random_spec).collect();
        let toml: Vec<String> = specs.iter().map(|s| s.to_toml()).collect();
        for k in ["type1", "type2", "type3"] {
            assert!(toml.iter().any(|t| t.contains(k)), "{k}");
        }
        assert!(toml.iter().any(|t| t.contains("relu")));
        assert!(specs.iter().any(|s| s.pattern.dither) && specs.iter().any(|s| !s.pattern.dither));
        let mut below = false;
        let mut above = false;
        for s in &specs {
            for j in 0..s.junctions() {
                below |= s.z[j] < s.fan_in(j);
                above |= s.z[j] > s.fan_in(j);
            }
            assert!((2..=4).contains(&s.junctions()));
        }
        assert!(below && above);
        // both roundings with both activations, given and by default
        use edgeflow_core::{Activation, Rounding};
        for act in [Activation::Sigmoid, Activation::Relu] {
            for rounding in [Rounding::Nearest, Rounding::Stochastic] {
                assert!(
                    specs
                        .iter()
                        .any(|s| s.activation == act && s.rounding() == rounding),
                    "{act:?} {rounding:?}"
                );
            }
        }
        for rule in [
            edgeflow_core::FfProducts::Rounded,
            edgeflow_core::FfProducts::Saturated,
        ] {
            assert!(specs.iter().any(|s| s.ff_products == rule), "{rule:?}");
        }
        assert!(specs.iter().any(|s| s.rounding.is_none()));
        assert!(specs.iter().any(|s| s.rounding.is_some()));
        // input precisions: the default, one bit (junction 1's selects), a few bits, and more
        // than the format holds
        let bits: Vec<Option<u32>> = specs.iter().map(|s| s.input_bits).collect();
        assert!(bits.contains(&None) && bits.contains(&Some(1)), "{bits:?}");
        assert!(bits.iter().any(|b| matches!(b, Some(2..=4))), "{bits:?}");
        assert!(specs.iter().any(|s| s.input_bits() > s.fixed.frac_bits + 1));
        // and the data is at that precision: one bit gives exactly 0 and 1.0
        for s in specs.iter().filter(|s| s.input_bits == Some(1)) {
            let one = s.format().quantize_input(1.0, 1);
            let d = random_data(s, 20, 1);
            assert!(d.inputs.iter().all(|&x| x == 0 || x == one));
            assert!(d.inputs.contains(&0) && d.inputs.contains(&one));
        }
        assert_eq!(
            random_spec(5).to_toml(),
            random_spec(5).to_toml(),
            "deterministic"
        );
    }
}
