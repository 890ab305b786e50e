//! The RTL network (rust-hdl simulation, driven through its host link) against the reference
//! model: every weight, bias and prediction, on the bundled specs and random specs.

use edgeflow_core::{Dataset, Spec};
use edgeflow_hdl::testbench::rtl::{check, check_lanes, random_data, random_spec, RtlSim};
use std::path::Path;

fn spec(name: &str) -> Spec {
    Spec::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("specs")
            .join(name),
    )
    .unwrap()
}

/// Clocks the pipelined datapath adds to the longest pass: the finished neuron sum and the
/// activation ROM output are registered.
const PIPELINE_LATENCY: usize = 2;

/// `C = max_j |W_j| / z_j`, from the spec alone.
fn longest_pass(sp: &Spec) -> usize {
    (0..sp.junctions())
        .map(|j| sp.layers[j] * sp.fan_out[j] / sp.z[j])
        .max()
        .unwrap()
}

#[test]
fn tiny_trains_and_infers_bit_exact() {
    let sp = spec("tiny.toml");
    let rep = check(&sp, &random_data(&sp, 40, 11), None).unwrap();
    assert!(rep.bit_exact, "{}", rep.first_difference.unwrap());
    // C = 8, T = C + 2 = 10: a training sample's 9 words (8 inputs + label) fit in it.
    assert_eq!(rep.block_cycle_clocks, 8 + PIPELINE_LATENCY);
    assert_eq!(rep.train_steady_clocks_per_sample, 10);
    assert_eq!(rep.infer_steady_clocks_per_sample, 10);
}

#[test]
fn digits_64_samples_bit_exact_at_c_plus_2_clocks_per_sample() {
    let sp = spec("digits.toml");
    let ds = Dataset::digits().unwrap();
    let data = ds.encode(&sp, &(100..164).collect::<Vec<_>>()).unwrap();
    let rep = check(&sp, &data, None).unwrap();
    assert!(rep.bit_exact, "{}", rep.first_difference.unwrap());
    // C = 64·20/2 = 640 clocks of junction 1, plus the pipeline
    assert_eq!(rep.block_cycle_clocks, 640 + PIPELINE_LATENCY);
    assert_eq!(rep.train_steady_clocks_per_sample, 642);
    assert_eq!(rep.infer_steady_clocks_per_sample, 642);
}

#[test]
fn twenty_four_random_specs_bit_exact() {
    let mut kinds = std::collections::BTreeSet::new();
    let mut acts = std::collections::BTreeSet::new();
    let (mut lt, mut gt, mut dither, mut plain) = (false, false, false, false);
    let mut bits = Vec::new();
    for seed in 100..124u64 {
        let sp = random_spec(seed);
        bits.push(sp.input_bits);
        for j in 0..sp.junctions() {
            lt |= sp.z[j] < sp.fan_in(j);
            gt |= sp.z[j] > sp.fan_in(j);
        }
        kinds.insert(format!("{:?}", sp.pattern.kind));
        acts.insert(sp.activation.name());
        dither |= sp.pattern.dither;
        plain |= !sp.pattern.dither;
        assert!((2..=4).contains(&sp.junctions()));
        let rep = check(&sp, &random_data(&sp, 10, seed), None).unwrap();
        assert!(
            rep.bit_exact,
            "seed {seed}: {}\n{}",
            rep.first_difference.unwrap(),
            sp.to_toml()
        );
        // One block cycle of T = C + 2 clocks per sample, unless the sample's words on the
        // 16-bit host link (N_0 inputs, plus the label when training) take longer.
        let t = (longest_pass(&sp) + PIPELINE_LATENCY) as u64;
        assert_eq!(rep.block_cycle_clocks as u64, t, "seed {seed}");
        let n0 = sp.layers[0] as u64;
        assert_eq!(
            rep.train_steady_clocks_per_sample,
            t.max(n0 + 1),
            "seed {seed}"
        );
        assert_eq!(rep.infer_steady_clocks_per_sample, t.max(n0), "seed {seed}");
    }
    assert_eq!(kinds.len(), 3);
    assert_eq!(acts.len(), edgeflow_core::Activation::ALL.len(), "{acts:?}");
    assert!(lt && gt && dither && plain);
    // the default precision, a few bits, and one bit: junction 1's FF lanes are selects
    // (the generator's formats all hold 1.0)
    assert!(bits.contains(&None) && bits.contains(&Some(1)), "{bits:?}");
    assert!(bits.iter().any(|b| matches!(b, Some(2..=4))), "{bits:?}");
}

/// One-bit inputs (junction 1's FF lanes are selects) on every pipeline: tiny, digits and
/// random specs, plain, with registered reads and with the deep pipeline; and at
/// `int_bits = 0`, where 1.0 saturates and the lanes stay multipliers.
#[test]
fn one_bit_inputs_are_bit_exact_on_every_pipeline() {
    let random: Vec<Spec> = (100..124u64)
        .map(random_spec)
        .filter(|s| s.input_bits == Some(1))
        .take(3)
        .collect();
    assert_eq!(random.len(), 3);
    bit_exact_with(random, 9, |sp, i| {
        sp.input_bits = Some(1);
        assert!(sp.input_selects());
        sp.registered_reads = i % 3 == 1;
        sp.deep_pipeline = i % 3 == 2;
        sp.registered_reads as usize + 2 * sp.deep_pipeline as usize
    });
    let mut sp = spec("tiny.toml");
    sp.input_bits = Some(1);
    sp.fixed = edgeflow_core::spec::FixedSpec {
        width: 8,
        int_bits: 0,
        frac_bits: 7,
    };
    assert!(!sp.input_selects());
    let rep = check(&sp, &random_data(&sp, 10, 3), None).unwrap();
    assert!(rep.bit_exact, "{}", rep.first_difference.unwrap());
}

#[test]
fn a_corrupted_weight_is_named() {
    // The comparison can fail: train the RTL from a state that differs in one weight.
    let sp = spec("tiny.toml");
    let data = random_data(&sp, 6, 5);
    let mut sim = RtlSim::new(&sp, None).unwrap();
    let mut st = edgeflow_core::State::initial(&sp);
    st.weights[1][3] += 1;
    sim.load_state(&st).unwrap();
    let back = sim.read_state().unwrap();
    let d = edgeflow_core::State::initial(&sp)
        .first_difference(&back, None)
        .expect("a difference");
    assert!(d.contains("junction 2 weight of edge 3"), "{d}");
    sim.train(&data).unwrap();
    let got = sim.read_state().unwrap();
    let mut r = edgeflow_reference::Reference::new(&sp);
    r.train(&data);
    let d = r
        .state
        .first_difference(&got, Some(&r.patterns))
        .expect("a difference");
    assert!(d.starts_with("junction "), "{d}");
}

#[test]
fn protocol_errors_and_recovery() {
    let sp = spec("tiny.toml");
    let mut sim = RtlSim::new(&sp, None).unwrap();
    // An unknown opcode answers 0xEEEE; junk is ignored until a valid opcode.
    let got = sim.raw(&[0x0077, 0x1234, 0x0004], 1).unwrap();
    assert_eq!(got, vec![0xEEEE]);
    // The READ_STATE that followed the junk still runs.
    let n: usize = 16 + 16 + 8 + 4 + 1;
    let mut rest = sim.raw(&[], n).unwrap();
    assert_eq!(rest.len(), n);
    assert_eq!(rest.pop(), Some(0xA004));
}

#[test]
fn dey_mnist_with_32_input_lanes_trains_at_c_plus_2() {
    // N_0 = 1024 inputs, C = 32: one word per clock needs 1025 clocks per training sample;
    // 32 lanes take a sample in 32 beats plus the label's, within T = C + 2 = 34.
    let sp = spec("dey-mnist.toml");
    let w = edgeflow_hdl::input_lanes::auto_lanes(&sp);
    assert_eq!(w, 32);
    let rep = check_lanes(&sp, &random_data(&sp, 6, 21), None, w).unwrap();
    assert!(rep.bit_exact, "{}", rep.first_difference.unwrap());
    assert_eq!(rep.block_cycle_clocks, 32 + PIPELINE_LATENCY);
    assert_eq!(rep.train_steady_clocks_per_sample, 34);
    assert_eq!(rep.infer_steady_clocks_per_sample, 34);
}

#[test]
fn random_specs_with_input_lanes_bit_exact() {
    // Every W from 2 to z_1, dividing N_0 or not (a short last beat), on random specs.
    let (mut divides, mut short, mut full) = (false, false, false);
    let mut seed = 400u64;
    let mut done = 0;
    while done < 10 {
        seed += 1;
        let sp = random_spec(seed);
        let z1 = sp.z[0];
        if z1 < 2 {
            continue;
        }
        let n0 = sp.layers[0];
        let w = match done % 3 {
            0 => z1,
            // a W that leaves the last beat of a sample short, when the spec has one
            1 => (2..z1).find(|w| n0 % w != 0).unwrap_or(2),
            _ => 2 + seed as usize % (z1 - 1),
        };
        divides |= n0 % w == 0;
        short |= n0 % w != 0;
        full |= w == z1;
        let rep = check_lanes(&sp, &random_data(&sp, 8, seed), None, w).unwrap();
        assert!(
            rep.bit_exact,
            "seed {seed}, {w} lanes: {}\n{}",
            rep.first_difference.unwrap(),
            sp.to_toml()
        );
        // the link now needs ceil(N_0/W) beats per sample (plus the label when training)
        let t = (longest_pass(&sp) + PIPELINE_LATENCY) as u64;
        assert_eq!(rep.block_cycle_clocks as u64, t, "seed {seed}");
        let beats = n0.div_ceil(w) as u64;
        assert_eq!(
            rep.train_steady_clocks_per_sample,
            t.max(beats + 1),
            "seed {seed}, {w} lanes"
        );
        assert_eq!(
            rep.infer_steady_clocks_per_sample,
            t.max(beats),
            "seed {seed}, {w} lanes"
        );
        done += 1;
    }
    assert!(divides && short && full, "{divides} {short} {full}");
}

/// With registered reads (`registered_reads = true`) the datapath runs a clock behind its
/// memories: the same bits, one more clock per block cycle.
#[test]
fn registered_reads_are_bit_exact_one_clock_later() {
    bit_exact_with((300..308u64).map(random_spec).collect(), 5, |sp, _| {
        sp.registered_reads = true;
        1
    });
}

/// The deep pipeline (`deep_pipeline = true`, with registered reads the iCEBreaker's build:
/// every product in the MAC16's output register, UP's two roundings as one, the saturated
/// sum registered before the activation lookup): FF's results land two clocks later and the
/// write-backs one, the same bits, two more clocks per block cycle. Without registered reads
/// on a few specs too.
#[test]
fn the_deep_pipeline_is_bit_exact_two_clocks_later() {
    bit_exact_with((310..318u64).map(random_spec).collect(), 6, |sp, i| {
        sp.deep_pipeline = true;
        sp.registered_reads = i % 3 != 2;
        2 + sp.registered_reads as usize
    });
}

/// tiny, digits (24 samples) and `random` (10 samples each) changed by `set`, which returns
/// the clocks it adds to the block cycle: every bit as the reference, and that block cycle.
fn bit_exact_with(random: Vec<Spec>, data_seed: u64, set: impl Fn(&mut Spec, usize) -> usize) {
    let mut specs = vec![spec("tiny.toml"), spec("digits.toml")];
    specs.extend(random);
    for (i, mut sp) in specs.into_iter().enumerate() {
        let extra = set(&mut sp, i);
        let n = if sp.name == "digits" { 24 } else { 10 };
        let rep = check(&sp, &random_data(&sp, n, data_seed), None).unwrap();
        assert!(
            rep.bit_exact,
            "{}: {}\n{}",
            sp.name,
            rep.first_difference.unwrap(),
            sp.to_toml()
        );
        assert_eq!(
            rep.block_cycle_clocks,
            longest_pass(&sp) + PIPELINE_LATENCY + extra,
            "{}",
            sp.name
        );
    }
}

/// FF's products rounded or saturated (`fixed` step 2) where products leave the range, on
/// the plain pipeline, with registered reads and on the deep pipeline: every bit as the
/// reference, and the two rules train to different states.
#[test]
fn ff_product_rules_are_bit_exact_on_every_pipeline() {
    let cases = edgeflow_tests::random_spec::product_cases(&spec("tiny.toml"));
    let data = edgeflow_tests::random_spec::product_data(&cases[0], 60, 5);
    for case in &cases {
        for pipeline in 0..3 {
            let mut sp = case.clone();
            sp.registered_reads = pipeline >= 1;
            sp.deep_pipeline = pipeline == 2;
            let rep = check(&sp, &data, None).unwrap();
            assert!(
                rep.bit_exact,
                "{:?}, pipeline {pipeline}: {}",
                sp.ff_products,
                rep.first_difference.unwrap()
            );
        }
    }
    assert!(
        edgeflow_tests::random_spec::train_apart(&cases[0], &cases[1], &data),
        "no FF product ever left the range"
    );
}
