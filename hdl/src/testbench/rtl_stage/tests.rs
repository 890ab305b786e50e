use super::*;
use crate::testbench::rtl::{random_data, random_spec};

fn tiny() -> Spec {
    Spec::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"))
        .unwrap()
}

fn assert_exact(r: &ChainReport, what: &str) {
    assert_eq!(r.first_difference, None, "{what}: {r:?}");
    assert_eq!(r.state_sha256, r.reference_sha256, "{what}");
    eprintln!(
        "{what}: stages {:?} delays {:?} staleness {:?}: {} samples, {} block cycles, sha256 {}",
        r.stages, r.link_delay, r.staleness, r.samples, r.block_cycles, r.state_sha256
    );
}

/// One stage of every junction, no links: the single-board schedule and its bits.
#[test]
fn one_stage_is_the_single_board_network() {
    let sp = tiny();
    let d = random_data(&sp, 24, 3);
    let r = check_chain(&sp, &[(0, 1)], &[0], &d).unwrap();
    assert_eq!(r.staleness, sp.default_staleness());
    assert_exact(&r, "tiny, one stage");
    // the longest pass (8 clocks) plus the 2 clocks of the FF pipeline
    assert_eq!(r.stage_stats[0].clocks_per_block_cycle, 8 + 2);
}

/// tiny on two boards, with a link of 0 and of 2 block cycles: the reference model with
/// the chain's staleness, every bit; the delayed link really changes the bits.
#[test]
fn tiny_on_two_boards_is_bit_exact() {
    let sp = tiny();
    let d = random_data(&sp, 30, 5);
    let mut single = edgeflow_reference::Reference::new(&sp);
    single.train(&d);
    for delay in [0, 2] {
        let r = check_chain(&sp, &[(0, 0), (1, 1)], &[delay], &d).unwrap();
        assert_exact(&r, &format!("tiny, 2 boards, link {delay}"));
        assert_eq!(r.staleness, vec![3 + 2 * delay, 1]);
        assert_eq!(
            r.state_sha256 == single.state.sha256(),
            delay == 0,
            "a link of {delay} block cycles must change the result exactly when it is not 0"
        );
        // each board's block cycle is its own junction's pass (4 and 8 clocks) plus the
        // 2 clocks of the FF pipeline
        assert_eq!(r.stage_stats[0].clocks_per_block_cycle, 4 + 2);
        assert_eq!(r.stage_stats[1].clocks_per_block_cycle, 8 + 2);
    }
}

/// Stages built with registered reads and the deep pipeline (what an iCEBreaker builds):
/// the same bits, each block cycle three clocks longer.
#[test]
fn stages_with_the_deep_pipeline_are_bit_exact() {
    let mut sp = tiny();
    sp.registered_reads = true;
    sp.deep_pipeline = true;
    let d = random_data(&sp, 30, 5);
    for delay in [0, 2] {
        let r = check_chain(&sp, &[(0, 0), (1, 1)], &[delay], &d).unwrap();
        assert_exact(&r, &format!("tiny, deep pipeline, 2 boards, link {delay}"));
        assert_eq!(r.stage_stats[0].clocks_per_block_cycle, 4 + 5);
        assert_eq!(r.stage_stats[1].clocks_per_block_cycle, 8 + 5);
    }
    // one board building with them next to one building without (iCEBreaker and Nexys)
    let sp = tiny();
    let mut chain = RtlChain::with_builds(
        &sp,
        &[(0, 0), (1, 1)],
        &[1],
        &[(true, true), (false, false)],
    )
    .unwrap();
    chain.load_state(&State::initial(&sp)).unwrap();
    chain.run(&d, true).unwrap();
    let mut reference = edgeflow_reference::Reference::with_state(
        &sp,
        State::initial(&sp),
        chain.schedule.staleness(),
    )
    .unwrap();
    reference.train(&d);
    assert_eq!(chain.read_state().sha256(), reference.state.sha256());
    assert_eq!(chain.stages[0].stats.clocks_per_block_cycle, 4 + 5);
    assert_eq!(chain.stages[1].stats.clocks_per_block_cycle, 8 + 2);
    for seed in [3u64, 8, 21] {
        let mut sp = random_spec(seed);
        sp.registered_reads = true;
        sp.deep_pipeline = true;
        let l = sp.junctions();
        let stages: Vec<(usize, usize)> = (0..l).map(|j| (j, j)).collect();
        let d = random_data(&sp, 12, seed);
        let r = check_chain(&sp, &stages, &vec![1; l - 1], &d).unwrap();
        assert_exact(&r, &format!("seed {seed}, deep pipeline, {l} boards"));
    }
}

/// Random specs of 3 and 4 junctions on three boards with mixed link delays: every
/// activation, both depths, and a stage of two junctions in the middle or at an end.
#[test]
fn random_specs_on_three_boards_are_bit_exact() {
    let mut seen = std::collections::BTreeSet::new();
    let combos = 2 * edgeflow_core::Activation::ALL.len();
    let mut done = 0;
    for seed in 0..300u64 {
        let sp = random_spec(seed);
        let l = sp.junctions();
        let act = sp.activation.name();
        if l < 3 || seen.contains(&(l, act)) && done >= 4 {
            continue;
        }
        let (stages, delays) = match (l, seed % 2) {
            (3, _) => (vec![(0, 0), (1, 1), (2, 2)], vec![1 + seed as usize % 2, 0]),
            (_, 0) => (
                vec![(0, 1), (2, 2), (3, 3)],
                vec![0, seed as usize % 3, 1 + seed as usize % 2],
            ),
            _ => (
                vec![(0, 0), (1, 2), (3, 3)],
                vec![seed as usize % 3, 0, 1 + seed as usize % 2],
            ),
        };
        let d = random_data(&sp, 16, seed);
        let r = check_chain(&sp, &stages, &delays, &d).unwrap();
        assert_eq!(r.first_difference, None, "seed {seed}\n{}", sp.to_toml());
        assert_exact(&r, &format!("seed {seed} ({l} junctions, {act})"));
        seen.insert((l, act));
        done += 1;
        if seen.len() == combos {
            break;
        }
    }
    assert_eq!(
        seen.len(),
        combos,
        "3 and 4 junctions, every activation: {seen:?}"
    );
}

/// Weights at the format's maximum make the boundary's delta sums overflow the value
/// format: the link carries them saturated, and the bits still match.
#[test]
fn saturated_boundary_sums_stay_bit_exact() {
    let sp = tiny();
    let mut st = State::initial(&sp);
    let max = sp.format().max();
    st.weights.iter_mut().flatten().for_each(|w| *w = max);
    let d = random_data(&sp, 12, 8);
    let r = check_chain_from(&sp, &st, &[(0, 0), (1, 1)], &[1], &d).unwrap();
    assert_exact(&r, "tiny, weights at the maximum");
    assert!(
        r.stage_stats[1].saturated_sums > 0,
        "no boundary sum saturated: {:?}",
        r.stage_stats
    );
}

/// Every stage's generated Verilog, replayed in Icarus Verilog on the inputs the chain gave
/// its rust-hdl model (load, a training stream, read-back, an inference stream), gives
/// the same outputs at every clock.
#[test]
fn stage_verilog_replays_like_the_model() {
    // tiny from its initial state and with every weight at the maximum (the boundary's
    // delta sums saturate), and a random spec
    let cases = [
        (tiny(), vec![(0, 0), (1, 1)], vec![1], false),
        (tiny(), vec![(0, 0), (1, 1)], vec![0], true),
        (random_spec(2), vec![], vec![], false),
    ];
    for (sp, stages, delays, at_max) in cases {
        let mut init = State::initial(&sp);
        if at_max {
            let max = sp.format().max();
            init.weights.iter_mut().flatten().for_each(|w| *w = max);
        }
        let (stages, delays) = if stages.is_empty() {
            // a random spec: one stage per junction, links of 0, 1, 2 … block cycles
            let l = sp.junctions();
            ((0..l).map(|j| (j, j)).collect(), (0..l - 1).collect())
        } else {
            (stages, delays)
        };
        let mut chain = RtlChain::new(&sp, &stages, &delays).unwrap();
        chain.stages.iter_mut().for_each(|s| s.record());
        chain.load_state(&init).unwrap();
        let d = random_data(&sp, 10, 4);
        chain.run(&d, true).unwrap();
        let got = chain.read_state();
        chain.run(&d, false).unwrap();
        if at_max {
            assert!(chain.stages[1].stats.saturated_sums > 0);
        }
        let mut want =
            edgeflow_reference::Reference::with_state(&sp, init, chain.schedule.staleness())
                .unwrap();
        want.train(&d);
        assert_eq!(want.state.first_difference(&got, None), None);
        for st in &chain.stages {
            let v = crate::stage::verilog(
                &sp,
                st.first..=st.last,
                &chain.schedule.ff,
                &chain.schedule.bp,
            );
            let name = format!(
                "{}{}-{}-{}",
                sp.name,
                if at_max { "-max" } else { "" },
                st.first + 1,
                st.last + 1
            );
            let trace = st.trace.as_ref().unwrap();
            match iverilog_replay(&st.stage, &v, trace, &name).unwrap() {
                Some(()) if st.first == 0 => {
                    // the comparison is live: one flipped output bit is found
                    let mut bad = trace.clone();
                    let c = bad.len() / 2;
                    bad[c].1[0] ^= 1;
                    let e = iverilog_replay(&st.stage, &v, &bad, &name).unwrap_err();
                    assert!(
                        e.to_string()
                            .contains(&format!("clock {c}: output started")),
                        "{e}"
                    );
                    eprintln!(
                        "{name}: {} clocks replayed, every output equal; a flipped bit is caught",
                        trace.len()
                    );
                }
                Some(()) => eprintln!(
                    "{name}: {} clocks replayed, every output equal",
                    trace.len()
                ),
                None => {
                    if std::env::var("CI").as_deref() == Ok("true") {
                        panic!("iverilog is required under CI=true");
                    }
                    eprintln!("skipping the Verilog replay: iverilog is not installed");
                    return;
                }
            }
        }
    }
}

#[test]
fn bad_chains_are_rejected() {
    let sp = tiny();
    assert!(RtlChain::new(&sp, &[(0, 0)], &[0])
        .err()
        .unwrap()
        .to_string()
        .contains("cover"));
    assert!(RtlChain::new(&sp, &[(0, 1)], &[1])
        .err()
        .unwrap()
        .to_string()
        .contains("inside"));
    assert!(RtlChain::new(&sp, &[(0, 0), (1, 1)], &[])
        .err()
        .unwrap()
        .to_string()
        .contains("link delays"));
}
