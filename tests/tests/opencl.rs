//! OpenCL kernels against the reference model, bit for bit: complete state (every weight and
//! bias) and every prediction, for the bundled specs, random specs, chunked launches, a chain
//! of stages, and the exported-binary path. Without an OpenCL device these tests skip, except
//! under `CI=true`, where they fail.

use edgeflow_core::{Dataset, Encoded, JunctionPattern, Rounding, Spec, State};
use edgeflow_opencl::{device_for_tests, Device, OpenClNetwork, OpenClStage, Schedule};
use edgeflow_reference::Reference;
use edgeflow_tests::chain;
use edgeflow_tests::random_spec::{
    clipping_cases, product_cases, random_data, random_spec, train_apart,
};
use std::path::PathBuf;

fn bundled(name: &str) -> Spec {
    Spec::load(&PathBuf::from(format!(
        "{}/../specs/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    )))
    .unwrap()
}

fn digits(spec: &Spec, n: usize) -> Encoded {
    let d = Dataset::digits().unwrap();
    let idx: Vec<usize> = (0..n.min(d.len())).collect();
    d.encode(spec, &idx).unwrap()
}

fn assert_same_state(spec: &Spec, want: &State, got: &State, what: &str) {
    if want.sha256() != got.sha256() {
        let pats = JunctionPattern::all(spec);
        panic!(
            "{what}: state sha256 {} (reference) vs {} (OpenCL); first difference: {}",
            want.sha256(),
            got.sha256(),
            want.first_difference(got, Some(&pats))
                .unwrap_or_else(|| "none?".into())
        );
    }
}

/// Train `streams` streams on both, compare state after each and predictions at the end.
fn compare(
    dev: &std::sync::Arc<Device>,
    spec: &Spec,
    data: &Encoded,
    streams: usize,
    chunk: usize,
) {
    let mut r = Reference::new(spec);
    let mut o = OpenClNetwork::new(dev.clone(), spec, spec.default_staleness()).unwrap();
    o.chunk_cycles = chunk;
    assert_same_state(
        spec,
        &r.state,
        &o.read_state().unwrap(),
        &format!("{} initial", spec.name),
    );
    for s in 0..streams {
        r.train(data);
        o.train(data).unwrap();
        assert_same_state(
            spec,
            &r.state,
            &o.read_state().unwrap(),
            &format!("{} after stream {}", spec.name, s + 1),
        );
        assert_eq!(
            o.read_lanes().unwrap(),
            r.lanes(),
            "{}: lane streams after stream {}",
            spec.name,
            s + 1
        );
    }
    assert_ne!(
        r.state,
        State::initial(spec),
        "{}: training changed nothing",
        spec.name
    );
    let want: Vec<i32> = (0..data.len())
        .flat_map(|n| r.forward(data.input(n)))
        .collect();
    assert_eq!(
        o.forward(data).unwrap(),
        want,
        "{}: output activations differ",
        spec.name
    );
    assert_eq!(
        o.infer(data).unwrap(),
        r.infer(data),
        "{}: predictions differ",
        spec.name
    );
}

#[test]
fn tiny_digits_and_dey_mnist_are_bit_exact() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    let tiny = bundled("tiny");
    compare(&dev, &tiny, &random_data(&tiny, 300, 1), 2, 512);
    let dg = bundled("digits");
    compare(&dev, &dg, &digits(&dg, 1797), 2, 512);
    let dm = bundled("dey-mnist");
    compare(&dev, &dm, &digits(&dm, 256), 1, 512);
    compare(&dev, &dm, &random_data(&dm, 256, 7), 1, 512);
}

#[test]
fn random_specs_are_bit_exact() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    let mut bits = Vec::new();
    for seed in 0..30 {
        let spec = random_spec(seed);
        let data = random_data(&spec, 200, seed);
        compare(&dev, &spec, &data, 2, 37);
        bits.push(spec.input_bits);
    }
    // inputs of one bit and of a few, and the default precision
    assert!(bits.contains(&Some(1)) && bits.contains(&None), "{bits:?}");
    assert!(bits.iter().any(|b| matches!(b, Some(2..=4))), "{bits:?}");
}

/// The clipped rules: tiny at a 1.0 range with one class, so the outputs reach the sigmoid
/// table's ends (`fixed` step 6) and ReLU activations the format's maximum (step 5);
/// clipped and plain differ, each bit-exact.
#[test]
fn clipped_rules_are_bit_exact() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    let mut hashes = Vec::new();
    for spec in clipping_cases(&bundled("tiny")) {
        let mut data = random_data(&spec, 100, 5);
        data.labels.fill(0);
        compare(&dev, &spec, &data, 2, 37);
        let mut r = Reference::new(&spec);
        r.train(&data);
        hashes.push(r.state.sha256());
    }
    assert_ne!(
        hashes[0], hashes[1],
        "the clipped output delta never applied"
    );
    assert_ne!(hashes[2], hashes[3], "the clipped ReLU gate never applied");
}

/// FF products rounded or saturated (`fixed` step 2), where products leave the range: the
/// two differ, each bit-exact.
#[test]
fn ff_product_rules_are_bit_exact() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    let cases = product_cases(&bundled("tiny"));
    let data = edgeflow_tests::random_spec::product_data(&cases[0], 100, 5);
    for spec in &cases {
        compare(&dev, spec, &data, 2, 37);
    }
    assert!(
        train_apart(&cases[0], &cases[1], &data),
        "no FF product ever left the range"
    );
}

/// Any split of a stream into launches gives the same bits, under both roundings (the lane
/// generators carry over from one launch to the next like the weights).
#[test]
fn chunked_launches_give_identical_bits() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    for rounding in [Rounding::Nearest, Rounding::Stochastic] {
        let mut spec = random_spec(8);
        spec.rounding = Some(rounding);
        let data = random_data(&spec, 90, 3);
        let mut r = Reference::new(&spec);
        r.train(&data);
        for chunk in [1, 2, 5, 64, 100_000] {
            let mut o = OpenClNetwork::new(dev.clone(), &spec, spec.default_staleness()).unwrap();
            o.chunk_cycles = chunk;
            o.train(&data).unwrap();
            let what = format!("{rounding:?}, chunks of {chunk} block cycles");
            assert_same_state(&spec, &r.state, &o.read_state().unwrap(), &what);
            assert_eq!(o.read_lanes().unwrap(), r.lanes(), "{what}");
        }
    }
}

/// New weights start a training run: after `load_state` the lane generators start again, so
/// a network that trained, was reset and trained again equals one that trained once.
#[test]
fn load_state_restarts_the_lane_generators() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    let spec = bundled("tiny"); // sigmoid: stochastic by default
    let data = random_data(&spec, 100, 4);
    let mut o = OpenClNetwork::new(dev.clone(), &spec, spec.default_staleness()).unwrap();
    o.train(&data).unwrap();
    let once = o.read_state().unwrap();
    o.train(&data).unwrap();
    assert_ne!(
        o.read_state().unwrap(),
        once,
        "the second stream changed nothing"
    );
    o.load_state(&State::initial(&spec)).unwrap();
    assert_eq!(o.read_lanes().unwrap(), Reference::new(&spec).lanes());
    o.train(&data).unwrap();
    assert_same_state(
        &spec,
        &once,
        &o.read_state().unwrap(),
        "trained after a reset",
    );
}

/// Stages chained the way a multi-board runtime will: each stage a junction range with the
/// global schedule of a link-delayed plan, boundary buffers exchanged between windows.
/// Bit-identical to the reference model run with the plan's staleness.
#[test]
fn chain_of_stages_matches_reference_with_link_staleness() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    let mut staleness_mattered = 0;
    for (seed, cuts, delay) in [
        (2u64, vec![1, 3], 1usize),
        (6, vec![1, 2], 2),
        (17, vec![2], 3),
        (9, vec![1], 1),
    ] {
        let spec = random_spec(seed);
        let l = spec.junctions();
        let cuts: Vec<usize> = cuts.into_iter().filter(|&c| c < l).collect();
        let mut links = vec![0; l - 1];
        for &c in &cuts {
            links[c - 1] = delay;
        }
        let schedule = Schedule::with_links(&links);
        let data = random_data(&spec, 70, seed + 100);
        let mut bounds = vec![0];
        bounds.extend(&cuts);
        bounds.push(l);
        let mut stages: Vec<OpenClStage> = bounds
            .windows(2)
            .map(|b| OpenClStage::new(dev.clone(), &spec, b[0]..b[1], &schedule).unwrap())
            .collect();
        // two streams: the lane streams run on from one to the next
        for _ in 0..2 {
            chain::train_stream(&mut stages, &data, delay + 1);
        }
        let mut got = State::initial(&spec);
        let mut lanes = Vec::new();
        for st in &mut stages {
            st.read_state(&mut got).unwrap();
            lanes.extend(st.read_lanes().unwrap());
        }
        let mut r =
            Reference::with_state(&spec, State::initial(&spec), schedule.staleness()).unwrap();
        r.train(&data);
        r.train(&data);
        assert_eq!(lanes, r.lanes(), "chain {seed}: lane streams");
        assert_same_state(
            &spec,
            &r.state,
            &got,
            &format!("chain {seed} cuts {cuts:?} delay {delay}"),
        );
        assert_ne!(
            got,
            State::initial(&spec),
            "chain {seed}: training changed nothing"
        );
        // the single-board schedule gives other bits (with narrow formats it may not, so count)
        let mut single = Reference::new(&spec);
        single.train(&data);
        single.train(&data);
        staleness_mattered += (single.state.sha256() != got.sha256()) as usize;
    }
    assert!(
        staleness_mattered >= 3,
        "the link delays changed the result in only {staleness_mattered} of 4 plans"
    );
}

#[test]
fn exported_binary_round_trips_and_bad_binaries_are_clear_errors() {
    let Some(dev) = device_for_tests() else {
        return;
    };
    let spec = bundled("tiny");
    let data = random_data(&spec, 100, 5);
    let bin = dev.export_binary().unwrap();
    let dir = std::env::temp_dir().join(format!("edgeflow-ocl-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.bin");
    std::fs::write(&good, &bin).unwrap();
    let which = dev.info.index.to_string();
    let from_bin = Device::open_with_binary(Some(&which), &good).unwrap();
    assert_eq!(from_bin.origin, good.display().to_string());
    let mut a = OpenClNetwork::new(dev.clone(), &spec, spec.default_staleness()).unwrap();
    let mut b = OpenClNetwork::new(from_bin, &spec, spec.default_staleness()).unwrap();
    a.train(&data).unwrap();
    b.train(&data).unwrap();
    let mut r = Reference::new(&spec);
    r.train(&data);
    assert_same_state(
        &spec,
        &r.state,
        &b.read_state().unwrap(),
        "program from the binary",
    );
    assert_eq!(a.read_state().unwrap().sha256(), r.state.sha256());
    assert_eq!(b.infer(&data).unwrap(), r.infer(&data));

    let err = |bytes: &[u8], name: &str| -> String {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        format!(
            "{:#}",
            Device::open_with_binary(Some(&which), &p)
                .err()
                .expect("must fail")
        )
    };
    let mut flipped = bin.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x55;
    assert!(
        err(&flipped, "flipped.bin").contains("corrupt"),
        "{}",
        err(&flipped, "flipped.bin")
    );
    let e = err(&bin[..bin.len() / 2], "truncated.bin");
    assert!(e.contains("truncated"), "{e}");
    let e = err(b"\x7fELF garbage", "garbage.bin");
    assert!(e.contains("not an edgeflow kernel binary"), "{e}");
    let text = String::from_utf8_lossy(&bin[..200.min(bin.len())]).to_string();
    let dev_line = text
        .lines()
        .find(|l| l.starts_with("device="))
        .unwrap()
        .to_string();
    let mut other = Vec::new();
    let pos = bin
        .windows(dev_line.len())
        .position(|w| w == dev_line.as_bytes())
        .unwrap();
    other.extend_from_slice(&bin[..pos]);
    other.extend_from_slice(b"device=Some FPGA board");
    other.extend_from_slice(&bin[pos + dev_line.len()..]);
    let e = err(&other, "other.bin");
    assert!(
        e.contains("built for device 'Some FPGA board'") && e.contains("kernels build"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
