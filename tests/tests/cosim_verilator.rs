//! Verilator co-simulation: the emitted Verilog, compiled with the harness edgeflow
//! generates, answers a whole host-link session (load, train, infer, read back) with exactly
//! the words of the rust-hdl simulation (predictions, device clock counts, every weight and
//! bias), and those words hold the reference model's state and predictions bit for bit.

use edgeflow_core::rounding::Rounding;
use edgeflow_core::{Dataset, Encoded, Spec, State};
use edgeflow_flow::tools::{tool_for_test, VERILATOR};
use edgeflow_flow::verilator;
use edgeflow_hdl::testbench::rtl::{check_stream_lanes, random_data, random_spec, RtlSim};
use edgeflow_reference::Reference;
use edgeflow_tests::random_spec::{clipping_cases, product_cases};
use std::path::Path;

fn spec(name: &str) -> Spec {
    Spec::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../specs")
            .join(name),
    )
    .unwrap()
}

/// Where in the session's answer word `i` lies, for failure messages.
fn region(i: usize, n: usize, state: usize) -> String {
    match i {
        0 => "LOAD_STATE ack".into(),
        1..=3 => "TRAIN ack / clock count".into(),
        i if i < 4 + n => format!("prediction of sample {}", i - 4),
        i if i < 7 + n => "INFER ack / clock count".into(),
        i if i < 7 + n + state => format!("READ_STATE value {}", i - 7 - n),
        _ => "READ_STATE ack".into(),
    }
}

struct Speeds {
    verilator_clocks_per_s: f64,
    rust_hdl_clocks_per_s: f64,
}

fn cosim(spec: &Spec, data: &Encoded, tag: &str) -> Speeds {
    cosim_lanes(spec, data, tag, 1)
}

/// The session in beats of `lanes` words, on the network built with that many input lanes.
fn cosim_lanes(spec: &Spec, data: &Encoded, tag: &str, lanes: usize) -> Speeds {
    let (words, reply) = check_stream_lanes(spec, data, lanes);
    let mut sim = RtlSim::with_lanes(spec, None, lanes).unwrap();
    let want = sim.raw(&words, reply).unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cosim-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    // Random specs: short sessions, so compile time dominates; tiny and digits report speed.
    let v = edgeflow_hdl::verilog_lanes(spec, lanes);
    assert_eq!(verilator::input_lanes_of(&v), lanes);
    let h = if tag.starts_with("random") || lanes > 1 {
        verilator::build_quick(&dir, &v).unwrap()
    } else {
        verilator::build(&dir, &v).unwrap()
    };
    let got = h
        .run_batch(&words, reply, 0, 20 * sim.clocks + 10_000)
        .unwrap();
    let n = data.len();
    let state_words = reply - 8 - n;
    if let Some(i) = (0..reply).find(|&i| got.words.get(i) != want.get(i)) {
        panic!(
            "{tag}: answer word {i} ({}): rust-hdl {:04x?}, Verilator {:04x?}",
            region(i, n, state_words),
            want.get(i),
            got.words.get(i)
        );
    }
    // The words against the reference model: predictions and the complete state.
    let mut r = Reference::new(spec);
    r.train(data);
    let preds: Vec<usize> = got.words[4..4 + n].iter().map(|&w| w as usize).collect();
    assert_eq!(preds, r.infer(data), "{tag}: predictions");
    let mut it = got.words[7 + n..7 + n + state_words]
        .iter()
        .map(|&w| w as i16 as i32);
    let l = spec.junctions();
    let state = State {
        weights: (0..l)
            .map(|j| it.by_ref().take(spec.layers[j] * spec.fan_out[j]).collect())
            .collect(),
        biases: (0..l)
            .map(|j| it.by_ref().take(spec.layers[j + 1]).collect())
            .collect(),
    };
    if let Some(d) = r.state.first_difference(&state, Some(&r.patterns)) {
        panic!("{tag}: Verilator state differs from the reference model: {d}");
    }
    assert_eq!(state.sha256(), r.state.sha256());
    let s = Speeds {
        verilator_clocks_per_s: got.clocks as f64 / got.seconds.max(1e-9),
        rust_hdl_clocks_per_s: sim.clocks as f64 / sim.seconds.max(1e-9),
    };
    eprintln!(
        "{tag}: bit-exact, {} answer words, {} clocks (rust-hdl {}); Verilator {:.0} clocks/s, rust-hdl {:.0} clocks/s ({:.0}x), Verilator build {:.1} s",
        reply, got.clocks, sim.clocks, s.verilator_clocks_per_s, s.rust_hdl_clocks_per_s,
        s.verilator_clocks_per_s / s.rust_hdl_clocks_per_s, h.build_seconds
    );
    s
}

#[test]
fn tiny_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let sp = spec("tiny.toml");
    cosim(&sp, &random_data(&sp, 24, 3), "tiny");
}

#[test]
fn digits_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let sp = spec("digits.toml");
    let ds = Dataset::digits().unwrap();
    let data = ds.encode(&sp, &(0..32).collect::<Vec<_>>()).unwrap();
    cosim(&sp, &data, "digits");
}

fn random_specs(seeds: &[u64]) {
    if !tool_for_test(VERILATOR) {
        return;
    }
    // one-bit inputs (junction 1's FF lanes as selects) among them
    assert!(
        [300u64, 301, 302, 303, 304, 305]
            .iter()
            .any(|&s| random_spec(s).input_selects()),
        "no random spec with one-bit inputs"
    );
    for &seed in seeds {
        let sp = random_spec(seed);
        cosim(
            &sp,
            &random_data(&sp, 8, seed),
            &format!("random-{seed}-{}", sp.name),
        );
    }
}

// Six random specs (2-4 junctions, every pattern kind, both activations), split in two so
// each test stays near a minute (one Verilator build per spec).
#[test]
fn random_specs_a_cosim_is_bit_exact() {
    random_specs(&[300, 301, 302]);
}

#[test]
fn random_specs_b_cosim_is_bit_exact() {
    random_specs(&[303, 304, 305]);
}

// Input lanes: a beat of W sample words per clock, W not dividing N_0 (tiny, 8 inputs, W = 3:
// a short last beat) and W = z_1 on a random spec with 2-4 junctions.
#[test]
fn input_lanes_tiny_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let sp = spec("tiny.toml");
    cosim_lanes(&sp, &random_data(&sp, 16, 4), "lanes-tiny-3", 3);
}

// Without dither each lane reads one bank: the input memory keeps, per read port, only that
// bank, split over the W write ports (W dividing z_1), as the resident tops build it.
#[test]
fn input_lanes_without_dither_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let mut sp = spec("tiny.toml");
    sp.pattern.dither = false;
    cosim_lanes(&sp, &random_data(&sp, 16, 6), "lanes-tiny-banks-2", 2);
}

#[test]
fn input_lanes_random_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let sp = (500u64..).map(random_spec).find(|s| s.z[0] >= 4).unwrap();
    let w = sp.z[0];
    cosim_lanes(
        &sp,
        &random_data(&sp, 8, 5),
        &format!("lanes-random-{}-{w}", sp.name),
        w,
    );
}

/// The registered-reads datapath (what the iCEBreaker bitstream is built with) in Verilog:
/// tiny and two random specs, every bit and clock count as the rust-hdl simulation.
#[test]
fn registered_reads_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let mut tiny = spec("tiny.toml");
    tiny.registered_reads = true;
    cosim(&tiny, &random_data(&tiny, 16, 4), "random-rr-tiny");
    for seed in [306u64, 307] {
        let mut sp = random_spec(seed);
        sp.registered_reads = true;
        cosim(
            &sp,
            &random_data(&sp, 8, seed),
            &format!("random-rr-{seed}"),
        );
    }
}

/// The deep pipeline (the iCEBreaker build with registered reads: products in the MAC16
/// output registers, UP's roundings merged, `mul_raw`/`sat_rs`/`eta_rs`, the saturated sum
/// registered) in Verilog: tiny, digits and two random
/// specs, every bit and clock count as the rust-hdl simulation.
#[test]
fn deep_pipeline_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    for name in ["tiny.toml", "digits.toml"] {
        let mut sp = spec(name);
        sp.registered_reads = true;
        sp.deep_pipeline = true;
        // a "random" tag builds quickly: this run checks bits, the speeds are measured above
        cosim(
            &sp,
            &random_data(&sp, 8, 4),
            &format!("random-rp-{}", sp.name),
        );
    }
    for seed in [316u64, 317] {
        let mut sp = random_spec(seed);
        sp.registered_reads = seed % 2 == 0;
        sp.deep_pipeline = true;
        cosim(
            &sp,
            &random_data(&sp, 8, seed),
            &format!("random-rp-{seed}"),
        );
    }
}

/// One-bit inputs on digits (junction 1's FF and UP lanes are selects) in Verilog, with the
/// deep pipeline's registered selects and without: every bit and clock count as the rust-hdl
/// simulation.
#[test]
fn one_bit_inputs_cosim_is_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let ds = Dataset::digits().unwrap();
    // the deep pipeline's registered products with stochastic rounding (digits' own), and
    // the plain datapath with nearest rounding: UP's selects in both their Verilog forms
    for (deep, rounding, tag) in [
        (true, None, "random-1bit-digits-rp"),
        (false, Some(Rounding::Nearest), "random-1bit-digits-nearest"),
    ] {
        let mut sp = spec("digits.toml");
        sp.input_bits = Some(1);
        sp.registered_reads = deep;
        sp.deep_pipeline = deep;
        sp.rounding = rounding;
        assert!(sp.input_selects());
        let data = ds.encode(&sp, &(0..16).collect::<Vec<_>>()).unwrap();
        cosim(&sp, &data, tag);
    }
}

/// The clipped rules in Verilog: tiny with a 1.0 range (outputs clip at σ(±1) and ReLU
/// activations at the format's maximum within a few samples) and one class, so the output
/// delta (`fixed` step 6) and the ReLU gate (step 5) meet their clipped cases; plain and
/// clipped, the plain pipeline and the deep one, every bit as the reference.
#[test]
fn clipped_rules_cosim_are_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let mut hashes = Vec::new();
    // the ReLU cases on the deep pipeline
    for (i, mut sp) in clipping_cases(&spec("tiny.toml")).into_iter().enumerate() {
        sp.deep_pipeline = i >= 2;
        let mut data = random_data(&sp, 24, 5);
        data.labels.fill(0);
        cosim(&sp, &data, &format!("clipped-{i}"));
        let mut r = Reference::new(&sp);
        r.train(&data);
        hashes.push(r.state.sha256());
    }
    assert_ne!(
        hashes[0], hashes[1],
        "the clipped output delta never applied"
    );
    assert_ne!(hashes[2], hashes[3], "the clipped ReLU gate never applied");
}

/// FF's products rounded or saturated (`fixed` step 2) in Verilog, where products leave the
/// range: rounded on the deep pipeline (registered products: `rs`), saturated on the plain
/// one (`mul_rs`), every bit as the reference, and the two rules differ. (The default
/// specs' cosims build `mul_r`.)
#[test]
fn ff_product_rules_cosim_are_bit_exact() {
    if !tool_for_test(VERILATOR) {
        return;
    }
    let cases = product_cases(&spec("tiny.toml"));
    let data = edgeflow_tests::random_spec::product_data(&cases[0], 60, 5);
    assert!(
        edgeflow_tests::random_spec::train_apart(&cases[0], &cases[1], &data),
        "no FF product ever left the range"
    );
    for (i, mut sp) in cases.into_iter().enumerate() {
        sp.deep_pipeline = i == 0;
        sp.registered_reads = i == 0;
        cosim(&sp, &data, &format!("ff-products-{i}"));
    }
}
