//! Random valid specs for cross-backend tests: 2–4 junctions, every pattern kind, dither on and
//! off, every activation, lanes both below and above the fan-in, both roundings (given or by
//! default), and assorted fixed-point formats and input precisions. Deterministic in the seed,
//! so a failing case is reproduced by its seed alone.

use edgeflow_core::rng::SplitMix64;
use edgeflow_core::Spec;

fn pick<T: Copy>(r: &mut SplitMix64, v: &[T]) -> T {
    v[r.below(v.len())]
}

fn divisors(n: usize) -> Vec<usize> {
    (1..=n).filter(|d| n % d == 0).collect()
}

/// The spec for `seed`. Kinds, dither and activation cycle with the seed (so any 6·A
/// consecutive seeds, A activations, cover every combination of kind × dither × activation);
/// sizes, fan-outs, lanes and formats are random. Every result passes `Spec` validation.
pub fn random_spec(seed: u64) -> Spec {
    let mut r = SplitMix64::derive(seed, "random-spec", 0);
    let kind = ["type1", "type2", "type3"][(seed % 3) as usize];
    let dither = (seed / 3) % 2 == 1;
    let acts = edgeflow_core::Activation::ALL;
    let act = acts[(seed / 6 % acts.len() as u64) as usize].name();
    loop {
        let l = 2 + r.below(3);
        let mut layers = vec![pick(&mut r, &[8, 12, 16, 24, 32, 48, 64])];
        for _ in 1..l {
            layers.push(pick(&mut r, &[4, 6, 8, 12, 16, 24, 32]));
        }
        layers.push(pick(&mut r, &[2, 3, 4, 8, 10]));
        let mut fan_out = Vec::new();
        let mut z = Vec::new();
        let mut ok = true;
        for j in 0..l {
            let (left, right) = (layers[j], layers[j + 1]);
            // fan-outs giving an integer fan-in that divides the left layer
            let fos: Vec<usize> = (1..=right)
                .filter(|&fo| (left * fo) % right == 0 && left % (left * fo / right) == 0)
                .collect();
            if fos.is_empty() {
                ok = false;
                break;
            }
            let fo = pick(&mut r, &fos);
            let fi = left * fo / right;
            let zs: Vec<usize> = divisors(left)
                .into_iter()
                .filter(|&zz| fi % zz == 0 || zz % fi == 0)
                .collect();
            // prefer lanes on the side of the fan-in the coin asks for, when such lanes exist
            let want_more = r.below(2) == 1;
            let side: Vec<usize> = zs
                .iter()
                .copied()
                .filter(|&zz| (zz > fi) == want_more && zz != fi)
                .collect();
            z.push(if side.is_empty() {
                pick(&mut r, &zs)
            } else {
                pick(&mut r, &side)
            });
            fan_out.push(fo);
        }
        if !ok {
            continue;
        }
        let int_bits = r.below(4) as u32;
        // widths of 10+ bits and small shifts, so the updates of every junction stay above the
        // rounding step (narrower nets stop learning in their first junctions)
        let width = (10 + r.below(7) as u32).max(int_bits + 3);
        let frac = width - 1 - int_bits;
        // its own stream, so the other draws stay as they were
        let od = ["clipped", "plain"][SplitMix64::derive(seed, "output-delta", 0).below(2)];
        let gate = ["clipped", "plain"][SplitMix64::derive(seed, "relu-gate", 0).below(2)];
        let rounding = ["", "rounding = 'nearest'\n", "rounding = 'stochastic'\n"]
            [SplitMix64::derive(seed, "rounding", 0).below(3)];
        let products = [
            "",
            "ff_products = 'rounded'\n",
            "ff_products = 'saturated'\n",
        ][SplitMix64::derive(seed, "ff-products", 0).below(3)];
        let text = format!(
            "name = 'random-{seed}'\nlayers = {layers:?}\nfan_out = {fan_out:?}\nz = {z:?}\nactivation = '{act}'\n\
learning_rate_shift = {}\noutput_delta = '{od}'\nrelu_gate = '{gate}'\n{rounding}{products}seed = {}\n[fixed]\nwidth = {width}\nint_bits = {int_bits}\nfrac_bits = {frac}\n\
[pattern]\nkind = '{kind}'\ndither = {dither}\nseed = {}\n",
            1 + r.below(3),
            r.next_u64() % 1000,
            r.next_u64() % 1000,
        );
        if let Ok(mut s) = Spec::from_toml_str(&text, &format!("random-{seed}")) {
            s.input_bits = edgeflow_hdl::testbench::rtl::random_input_bits(seed);
            return s;
        }
    }
}

/// Random inputs, uniform over the values of the spec's input precision in `[0, 1]` and
/// encoded as the data sets are, and random labels: a stream of `n` samples.
pub fn random_data(spec: &Spec, n: usize, seed: u64) -> edgeflow_core::Encoded {
    let (f, bits) = (spec.format(), spec.input_bits());
    let steps = 1usize << (bits - 1);
    let mut r = SplitMix64::derive(seed, "random-data", 0);
    let mut inputs = Vec::with_capacity(n * spec.layers[0]);
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        for _ in 0..spec.layers[0] {
            inputs.push(f.quantize_input(r.below(steps + 1) as f64 / steps as f64, bits));
        }
        labels.push(r.below(*spec.layers.last().unwrap()));
    }
    edgeflow_core::Encoded {
        inputs_per_sample: spec.layers[0],
        inputs,
        labels,
    }
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
/// must train to different states, or no product ever left the range.
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
