//! Tests of the in-process multi-board runtime.
use super::*;
use edgeflow_core::rng::SplitMix64;

fn spec(text_layers: &str, fan_out: &str, z: &str, act: &str) -> Spec {
    let t = format!(
        "name='p'\nlayers={text_layers}\nfan_out={fan_out}\nz={z}\nactivation='{act}'\nlearning_rate_shift=2\nseed=7\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type2'\ndither=true\nseed=3\n"
    );
    Spec::from_toml_str(&t, "p").unwrap()
}

/// The test network: 4 junctions of 4 lanes (2 in the last), so every split is a chain.
fn four_junctions(act: &str) -> Spec {
    spec("[16, 16, 8, 8, 4]", "[4, 4, 4, 2]", "[4, 4, 4, 2]", act)
}

fn data(spec: &Spec, n: usize, seed: u64) -> Encoded {
    let mut r = SplitMix64::new(seed);
    let classes = *spec.layers.last().unwrap();
    Encoded {
        inputs_per_sample: spec.layers[0],
        inputs: (0..n * spec.layers[0])
            .map(|_| r.below(129) as i32)
            .collect(),
        labels: (0..n).map(|_| r.below(classes)).collect(),
    }
}

/// Every split of every junction count into stages, with varied link delays, both
/// roundings and two streams (the lane streams run on across them): the pipeline equals
/// the reference model with the same staleness, bit for bit.
#[test]
fn pipeline_equals_reference_with_the_plans_staleness() {
    use edgeflow_core::Rounding;
    let mut r = SplitMix64::new(11);
    for act in ["sigmoid", "relu"] {
        for rounding in [Rounding::Nearest, Rounding::Stochastic] {
            let mut sp = four_junctions(act);
            sp.rounding = Some(rounding);
            let l = sp.junctions();
            let d = data(&sp, 60, 5);
            for cuts in 0u32..(1 << (l - 1)) {
                let mut stages = Vec::new();
                let mut first = 0;
                let mut delays = vec![0; l - 1];
                for j in 0..l {
                    if j == l - 1 || cuts & (1 << j) != 0 {
                        stages.push((first, j));
                        first = j + 1;
                        if j < l - 1 {
                            delays[j] = 1 + r.below(3);
                        }
                    }
                }
                let s = Schedule::with_links(&delays).staleness();
                let mut want = Reference::with_state(&sp, State::initial(&sp), s.clone()).unwrap();
                let mut got = State::initial(&sp);
                let mut lanes = LaneRng::all_seeded(sp.seed, &sp.z);
                for stream in 0..2 {
                    let (next, timing) =
                        train_pipeline(&sp, &got, &mut lanes, &stages, &delays, &d).unwrap();
                    assert_eq!(timing.len(), stages.len());
                    got = next;
                    want.train(&d);
                    assert_eq!(
                        want.state.first_difference(&got, Some(&want.patterns)),
                        None,
                        "{act} {rounding:?} stages {stages:?} delays {delays:?} staleness {s:?} stream {stream}"
                    );
                    assert_eq!(want.state.sha256(), got.sha256());
                    assert_eq!(want.lanes(), &lanes[..]);
                }
                assert_ne!(got, State::initial(&sp));
            }
        }
    }
}

/// The staleness matters: a pipeline with delays differs from the single-board run, so the
/// test above cannot pass by ignoring them.
#[test]
fn link_delays_change_the_bits() {
    let sp = four_junctions("sigmoid");
    let d = data(&sp, 60, 5);
    let mut lanes = LaneRng::all_seeded(sp.seed, &sp.z);
    let stages = [(0, 1), (2, 3)];
    let (a, _) = train_pipeline(
        &sp,
        &State::initial(&sp),
        &mut lanes,
        &stages,
        &[0, 2, 0],
        &d,
    )
    .unwrap();
    let mut single = Reference::new(&sp);
    single.train(&d);
    assert_ne!(a.sha256(), single.state.sha256());
}

/// The board keeps the lane generators across streams and restarts them with new weights:
/// trained, reset and trained again equals trained once.
#[test]
fn pipeline_board_restarts_the_lanes_with_the_weights() {
    let sp = four_junctions("sigmoid");
    let d = data(&sp, 40, 6);
    let mut b = PipelineBoard::new(&sp, vec![(0, 1), (2, 3)], vec![0, 2, 0]);
    b.train(&d).unwrap();
    let once = b.read_state().unwrap();
    b.train(&d).unwrap();
    assert_ne!(b.read_state().unwrap(), once);
    b.load_state(&State::initial(&sp)).unwrap();
    b.train(&d).unwrap();
    assert_eq!(b.read_state().unwrap(), once);
}

/// The bundled large spec, planned on four nexys4-ddr boards, trained by the pipeline and
/// by the reference model with the plan's staleness: the same bits.
#[test]
fn mnist_large_plan_is_bit_exact() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/mnist-large.toml");
    let sp = Spec::load(std::path::Path::new(path)).unwrap();
    let boards = edgeflow_planner::Board::resolve_list("nexys4-ddrx4").unwrap();
    let p = edgeflow_planner::report::plan(&sp, path, &boards, edgeflow_planner::dp::Order::Chain)
        .unwrap();
    assert!(p.stages.len() >= 2, "mnist-large must not fit one board");
    let stages: Vec<(usize, usize)> = p
        .stages
        .iter()
        .map(|s| (s.junctions[0] - 1, s.junctions[1] - 1))
        .collect();
    let delays: Vec<usize> = p.link_delay.iter().map(|&d| d as usize).collect();
    let d = data(&p.spec, 120, 9);
    let mut lanes = LaneRng::all_seeded(p.spec.seed, &p.spec.z);
    let init = State::initial(&p.spec);
    let (got, _) = train_pipeline(&p.spec, &init, &mut lanes, &stages, &delays, &d).unwrap();
    let s: Vec<usize> = p.staleness.iter().map(|&x| x as usize).collect();
    let mut want = Reference::with_state(&p.spec, State::initial(&p.spec), s).unwrap();
    want.train(&d);
    assert_eq!(want.state.first_difference(&got, None), None);
    assert_eq!(want.state.sha256(), got.sha256());
}

#[test]
fn bad_stage_lists_are_rejected() {
    let sp = four_junctions("sigmoid");
    let d = data(&sp, 4, 5);
    let mut lanes = LaneRng::all_seeded(sp.seed, &sp.z);
    let e = train_pipeline(
        &sp,
        &State::initial(&sp),
        &mut lanes,
        &[(0, 1), (3, 3)],
        &[0, 1, 0],
        &d,
    )
    .unwrap_err();
    assert!(e.to_string().contains("do not cover"), "{e}");
}
