//! The reference model against an independent, naive statement of the same semantics.

use super::*;
use edgeflow_core::fixed::round_shift;
use edgeflow_core::{Activation, JunctionPattern};

fn spec(act: &str, output_delta: &str) -> Spec {
    let t = format!(
        "name='r'\nlayers=[8,4,2]\nfan_out=[2,1]\nz=[2,2]\nactivation='{act}'\noutput_delta='{output_delta}'\nlearning_rate_shift=2\nseed=3\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type1'\nseed=4\n"
    );
    Spec::from_toml_str(&t, "r").unwrap()
}

fn data(spec: &Spec, n: usize) -> Encoded {
    let mut inputs = Vec::new();
    let mut labels = Vec::new();
    let mut r = edgeflow_core::rng::SplitMix64::new(9);
    for _ in 0..n {
        for _ in 0..spec.layers[0] {
            inputs.push(r.below(129) as i32);
        }
        labels.push(r.below(2));
    }
    Encoded {
        inputs_per_sample: spec.layers[0],
        inputs,
        labels,
    }
}

/// An independent, deliberately naive statement of the same semantics: samples in order,
/// every junction keeps a history of its weights, and FF_j(n) reads the version from
/// before the last s_j updates. Arithmetic is written out with rationals-free integer ops.
fn naive(spec: &Spec, data: &Encoded, s: &[usize]) -> State {
    let l = spec.junctions();
    let f = spec.format();
    let table = ActivationTable::sigmoid(f);
    let pats = JunctionPattern::all(spec);
    let sat = |x: i64| x.clamp(f.min() as i64, f.max() as i64);
    let mul = |a: i32, b: i32| sat(round_shift(a as i64 * b as i64, f.frac_bits));
    let ff_mul = |a: i32, b: i32| match spec.ff_products {
        edgeflow_core::FfProducts::Saturated => mul(a, b),
        edgeflow_core::FfProducts::Rounded => round_shift(a as i64 * b as i64, f.frac_bits),
    };
    let mut hist: Vec<Vec<State>> = vec![vec![State::initial(spec)]; l]; // per junction versions
    let mut rngs: Vec<Vec<u32>> = (0..l)
        .map(|j| {
            (0..spec.z[j])
                .map(|lane| LaneRng::seeded(spec.seed, j, lane).0)
                .collect()
        })
        .collect();
    for n in 0..data.len() {
        // FF with stale weights
        let mut a = vec![data.input(n).to_vec()];
        let mut sp = vec![vec![]];
        for j in 0..l {
            let v = &hist[j];
            let ver = &v[(n as isize - s[j] as isize).max(0) as usize];
            let fi = pats[j].fan_in;
            let mut out = vec![];
            let mut sps = vec![];
            for r in 0..spec.layers[j + 1] {
                let mut acc = ver.biases[j][r] as i64;
                for e in r * fi..(r + 1) * fi {
                    acc += ff_mul(ver.weights[j][e], a[j][pats[j].left_of_edge[e] as usize]);
                }
                let h = sat(acc) as i32;
                let act = if j == l - 1 {
                    Activation::Sigmoid
                } else {
                    spec.activation
                };
                let (x, mut d) = activate(&ActivationTable::new(act, f), h);
                if act == Activation::Relu {
                    let clipped = spec.relu_gate == edgeflow_core::ReluGate::Clipped;
                    d = (h > 0 && !(clipped && h == f.max())) as i32;
                }
                out.push(x);
                sps.push(d);
            }
            a.push(out);
            sp.push(sps);
        }
        let clipped = spec.output_delta == edgeflow_core::OutputDelta::Clipped;
        let (first, last) = (table.sigma[0], table.sigma[table.sigma.len() - 1]);
        let mut d: Vec<i32> = a[l]
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                let target = k == data.labels[n];
                if clipped && ((target && x == last) || (!target && x == first)) {
                    return 0;
                }
                sat(x as i64 - if target { f.one() as i64 } else { 0 }) as i32
            })
            .collect();
        for j in (0..l).rev() {
            let mut cur = hist[j].last().unwrap().clone();
            let fi = pats[j].fan_in;
            let mut acc = vec![0i64; spec.layers[j]];
            let shift = spec.learning_rate_shift;
            let stochastic = spec.rounding() == edgeflow_core::Rounding::Stochastic;
            for r in 0..spec.layers[j + 1] {
                let mut bias_word = 0u32;
                for e in r * fi..(r + 1) * fi {
                    let k = pats[j].left_of_edge[e] as usize;
                    acc[k] += mul(cur.weights[j][e], d[r]);
                    let upd = if stochastic {
                        // Lane e mod z steps its xorshift32 (13, 17, 5) and rounds down
                        // the exact product plus the word's top frac+shift bits.
                        let x = &mut rngs[j][e % spec.z[j]];
                        *x ^= *x << 13;
                        *x ^= *x >> 17;
                        *x ^= *x << 5;
                        if e + 1 == (r + 1) * fi {
                            bias_word = *x;
                        }
                        let bits = f.frac_bits + shift;
                        let noise = if bits == 0 {
                            0
                        } else {
                            (*x as u64 >> (32 - bits)) as i64
                        };
                        let p = d[r] as i64 * a[j][k] as i64;
                        sat((p + noise).div_euclid(1i64 << bits))
                    } else {
                        round_shift(mul(d[r], a[j][k]), shift)
                    };
                    cur.weights[j][e] = sat(cur.weights[j][e] as i64 - upd) as i32;
                }
                let bias_upd = if stochastic {
                    let noise = (bias_word as u64 % (1u64 << shift)) as i64;
                    (d[r] as i64 + noise).div_euclid(1i64 << shift)
                } else {
                    round_shift(d[r] as i64, shift)
                };
                cur.biases[j][r] = sat(cur.biases[j][r] as i64 - bias_upd) as i32;
            }
            hist[j].push(cur);
            d = (0..spec.layers[j])
                .map(|k| {
                    hidden_delta(
                        spec.activation,
                        f,
                        sp[j].get(k).copied().unwrap_or(0),
                        sat(acc[k]) as i32,
                    )
                })
                .collect();
        }
    }
    let mut out = State::initial(spec);
    for j in 0..l {
        let last = hist[j].last().unwrap();
        out.weights[j] = last.weights[j].clone();
        out.biases[j] = last.biases[j].clone();
    }
    out
}

#[test]
fn pipelined_schedule_equals_naive_stale_sgd() {
    for (act, od, rounding) in [
        ("sigmoid", "clipped", "nearest"),
        ("sigmoid", "clipped", "stochastic"),
        ("relu", "clipped", "nearest"),
        ("relu", "plain", "stochastic"),
        ("tanh", "clipped", "stochastic"),
        ("tanh", "plain", "nearest"),
    ] {
        let mut sp = spec(act, od);
        sp.rounding = Some(if rounding == "stochastic" {
            Rounding::Stochastic
        } else {
            Rounding::Nearest
        });
        let d = data(&sp, 40);
        for s in [vec![3, 1], vec![5, 1], vec![6, 2]] {
            // Every case must run: a skipped case would let the test pass unseen.
            check_staleness(&s, 2).unwrap();
            let mut r = Reference::with_state(&sp, State::initial(&sp), s.clone()).unwrap();
            r.train(&d);
            let want = naive(&sp, &d, &s);
            assert_eq!(
                r.state.first_difference(&want, None),
                None,
                "{act} {rounding} s={s:?}"
            );
            assert_ne!(r.state, State::initial(&sp), "training changed something");
        }
    }
}

#[test]
fn clipped_output_delta_is_exercised_and_matches_the_naive_model() {
    // int_bits = 0: outputs clip at σ(±1), which training reaches within a few samples
    let mut states = Vec::new();
    for od in ["clipped", "plain"] {
        let mut sp = spec("sigmoid", od);
        sp.fixed = edgeflow_core::spec::FixedSpec {
            width: 8,
            int_bits: 0,
            frac_bits: 7,
        };
        sp.learning_rate_shift = 0;
        // one class only: its output climbs to the table's end, the other falls to its start
        let mut d = data(&sp, 60);
        d.labels.fill(0);
        let mut r = Reference::new(&sp);
        r.train(&d);
        let want = naive(&sp, &d, r.staleness());
        assert_eq!(r.state.first_difference(&want, None), None, "{od}");
        states.push(r.state.sha256());
    }
    assert_ne!(states[0], states[1], "the rule never applied");
}

#[test]
fn clipped_relu_gate_is_exercised_and_matches_the_naive_model() {
    // int_bits = 0 and η = 1: hidden pre-activations reach the format's maximum at once
    let mut states = Vec::new();
    for gate in ["clipped", "plain"] {
        let mut sp = spec("relu", "plain");
        sp.relu_gate = match gate {
            "clipped" => edgeflow_core::ReluGate::Clipped,
            _ => edgeflow_core::ReluGate::Plain,
        };
        sp.fixed = edgeflow_core::spec::FixedSpec {
            width: 8,
            int_bits: 0,
            frac_bits: 7,
        };
        sp.learning_rate_shift = 0;
        let d = data(&sp, 60);
        let mut r = Reference::new(&sp);
        r.train(&d);
        let want = naive(&sp, &d, r.staleness());
        assert_eq!(r.state.first_difference(&want, None), None, "{gate}");
        states.push(r.state.sha256());
    }
    assert_ne!(states[0], states[1], "the gate never shut");
}

#[test]
fn ff_product_rules_are_exercised_and_match_the_naive_model() {
    // ReLU at a range of ±2 with η = 1 and inputs over [0, 1]: weights and activations pass
    // 1.4 within a few samples, so FF products leave the range
    let mut states = Vec::new();
    for rule in [
        edgeflow_core::FfProducts::Rounded,
        edgeflow_core::FfProducts::Saturated,
    ] {
        let mut sp = spec("relu", "clipped");
        sp.ff_products = rule;
        sp.learning_rate_shift = 0;
        sp.fixed = edgeflow_core::spec::FixedSpec {
            width: 10,
            int_bits: 1,
            frac_bits: 8,
        };
        let mut d = data(&sp, 60);
        d.inputs.iter_mut().for_each(|x| *x *= 2);
        let mut r = Reference::new(&sp);
        r.train(&d);
        let want = naive(&sp, &d, r.staleness());
        assert_eq!(r.state.first_difference(&want, None), None, "{rule:?}");
        states.push(r.state.sha256());
    }
    assert_ne!(states[0], states[1], "no FF product ever left the range");
}

#[test]
fn staleness_changes_the_result() {
    let sp = spec("sigmoid", "clipped");
    let d = data(&sp, 40);
    let mut a = Reference::with_state(&sp, State::initial(&sp), vec![3, 1]).unwrap();
    let mut b = Reference::with_state(&sp, State::initial(&sp), vec![5, 1]).unwrap();
    a.train(&d);
    b.train(&d);
    assert_ne!(a.state.sha256(), b.state.sha256());
}

#[test]
fn invalid_staleness_is_rejected() {
    assert!(check_staleness(&[2, 1], 2)
        .unwrap_err()
        .to_string()
        .contains("at least 2"));
    assert!(check_staleness(&[3, 0], 2).is_err());
    assert!(check_staleness(&[3], 2).is_err());
    assert!(check_staleness(&[3, 1], 2).is_ok());
}

#[test]
fn block_cycles_and_work() {
    let sp = spec("sigmoid", "clipped");
    let d = data(&sp, 10);
    let mut r = Reference::new(&sp);
    let w = r.train(&d);
    assert_eq!(w.block_cycles, 10 + 2 * 2 - 1);
    // FF both junctions, UP both, BP only junction 2: 16 + 4 edges → (16+4)·2 + 4
    assert_eq!(w.edge_ops, 10 * (2 * 16 + 3 * 4));
}

#[test]
fn schedules_and_their_staleness() {
    let one = Schedule::single_board(3);
    assert_eq!(one.ff, vec![0, 1, 2]);
    assert_eq!(one.bp, vec![5, 4, 3]);
    assert_eq!(one.staleness(), vec![5, 3, 1]);
    assert_eq!(one.block_cycles(10), 10 + 2 * 3 - 1);
    // a 2-cycle link between junctions 1 and 2 adds 2 each way to junction 1's staleness
    let two = Schedule::with_links(&[2, 0]);
    assert_eq!(two.staleness(), vec![9, 3, 1]);
    assert!(check_staleness(&two.staleness(), 3).is_ok());
}

#[test]
fn argmax_takes_first_of_ties() {
    assert_eq!(argmax(&[1, 5, 5, 2]), 1);
    assert_eq!(argmax(&[7]), 0);
    assert_eq!(argmax(&[0.5, 2.0, 2.0, -1.0]), 1);
}

/// Shapes that take every path of the vectorized passes: many lanes stepping side by side
/// (z = 16), one lane cut into jumped-to segments (z = 1), four lanes reordered in runs
/// (z = 4), power-of-two and other left layers (masked and checked gathers), fan-ins of
/// 8, 16 and 32 (rows as whole vectors) and of 2 and 4 (deltas spread over every edge).
#[test]
fn every_word_and_gather_path_equals_naive_stale_sgd() {
    let shapes = [
        ("[32,16,4]", "[4,2]", "[16,1]"),
        ("[24,12,6]", "[2,1]", "[4,2]"),
        ("[64,16,4]", "[4,4]", "[2,1]"),
        ("[32,8,4]", "[8,2]", "[4,1]"),
    ];
    for (layers, fan_out, z) in shapes {
        for rounding in [Rounding::Stochastic, Rounding::Nearest] {
            let t = format!(
                "name='w'\nlayers={layers}\nfan_out={fan_out}\nz={z}\nactivation='sigmoid'\nlearning_rate_shift=1\nseed=8\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type1'\ndither=true\nseed=2\n"
            );
            let mut sp = Spec::from_toml_str(&t, "w").unwrap();
            sp.rounding = Some(rounding);
            let d = data(&sp, 30);
            let mut r = Reference::new(&sp);
            r.train(&d);
            let want = naive(&sp, &d, r.staleness());
            assert_eq!(
                r.state.first_difference(&want, None),
                None,
                "{layers} z={z} {rounding:?}"
            );
            assert_ne!(r.state, State::initial(&sp), "training changed something");
        }
    }
}

#[test]
fn inference_on_any_number_of_threads_predicts_sample_by_sample() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
    let sp = Spec::load(&dir.join("digits.toml")).unwrap();
    let ds = edgeflow_core::Dataset::digits().unwrap();
    let all = ds.encode(&sp, &(0..ds.len()).collect::<Vec<_>>()).unwrap();
    let mut r = Reference::new(&sp);
    r.train(&all);
    for n in [5, all.len()] {
        let d = all.select(&(0..n).collect::<Vec<_>>());
        // each sample alone, through the one-sample path
        let want: Vec<usize> = (0..n).map(|k| argmax(&r.forward(d.input(k)))).collect();
        assert!(want.iter().any(|&p| p != want[0]), "one class everywhere");
        for threads in [1, 2, 3, 7, 16, 1000] {
            assert_eq!(
                r.infer_threads(&d, threads),
                want,
                "{n} samples, {threads} threads"
            );
        }
    }
}

/// One model trained on `threads` threads.
fn on_threads(sp: &Spec, staleness: Vec<usize>, threads: usize) -> Reference {
    let mut r = Reference::with_state(sp, State::initial(sp), staleness).unwrap();
    r.set_threads(threads);
    r
}

/// Random specs (every activation, rounding, FF product rule, pattern type and input
/// precision the generator draws) on the one-board and a chained schedule: any thread count
/// leaves every weight, bias and rounding lane as one thread does, and counts the same work.
#[test]
fn threads_give_the_bits_of_one_thread() {
    let mut split_runs = 0;
    for seed in 0..48 {
        let sp = crate::random::random_spec(seed);
        let d = crate::random::random_data(&sp, 37, seed + 100);
        let links: Vec<usize> = (1..sp.junctions())
            .map(|j| (seed as usize + j) % 3)
            .collect();
        for staleness in [
            sp.default_staleness(),
            Schedule::with_links(&links).staleness(),
        ] {
            let mut one = on_threads(&sp, staleness.clone(), 1);
            assert_eq!(one.thread_plan().threads, 1);
            let want = one.train(&d);
            let want_second = one.train(&d.select(&[3, 1, 4, 1, 5]));
            for threads in [2, 3, 5] {
                let mut many = on_threads(&sp, staleness.clone(), threads);
                split_runs += usize::from(many.thread_plan().threads > 1);
                let work = many.train(&d);
                let second = many.train(&d.select(&[3, 1, 4, 1, 5]));
                let at = format!("seed {seed}, staleness {staleness:?}, {threads} threads");
                assert_eq!(many.state.first_difference(&one.state, None), None, "{at}");
                assert_eq!(many.lanes(), one.lanes(), "{at}: rounding lanes");
                assert_eq!((work, second), (want, want_second), "{at}: work");
            }
        }
    }
    assert!(
        split_runs > 250,
        "only {split_runs} runs on several threads"
    );
}

/// Runs long enough for the threads to stop and start taking part (the tuner's windows):
/// still the bits of one thread.
#[test]
fn threads_that_rest_and_return_change_no_bit() {
    for seed in [3, 8] {
        let sp = crate::random::random_spec(seed);
        let d = crate::random::random_data(&sp, 1500, seed);
        let mut one = on_threads(&sp, sp.default_staleness(), 1);
        one.train(&d);
        for threads in [2, 3] {
            let mut many = on_threads(&sp, sp.default_staleness(), threads);
            assert!(many.thread_plan().threads > 1);
            many.train(&d);
            assert_eq!(
                many.state.first_difference(&one.state, None),
                None,
                "seed {seed}"
            );
            assert_eq!(many.lanes(), one.lanes(), "seed {seed}: rounding lanes");
        }
    }
}

/// Without a thread count a network too small to share trains on one thread.
#[test]
fn small_networks_train_on_one_thread_unless_told() {
    let sp = crate::random::random_spec(1);
    let r = Reference::new(&sp);
    assert!(sp.edge_ops_per_sample() < MIN_EDGE_OPS_PER_THREAD);
    assert_eq!(r.thread_plan().threads, 1);
    assert!(r.with_threads(2).thread_plan().threads > 1);
}

/// The threaded path against the independent naive model on the shapes that take every word
/// and gather path.
#[test]
fn threads_equal_naive_stale_sgd() {
    for (layers, fan_out, z) in [
        ("[32,16,4]", "[4,2]", "[16,1]"),
        ("[24,12,6]", "[2,1]", "[4,2]"),
        ("[64,16,4]", "[4,4]", "[2,1]"),
    ] {
        for rounding in [Rounding::Stochastic, Rounding::Nearest] {
            let t = format!(
                "name='w'\nlayers={layers}\nfan_out={fan_out}\nz={z}\nactivation='relu'\nlearning_rate_shift=1\nseed=8\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type1'\ndither=true\nseed=2\n"
            );
            let mut sp = Spec::from_toml_str(&t, "w").unwrap();
            sp.rounding = Some(rounding);
            let d = data(&sp, 30);
            let mut r = on_threads(&sp, sp.default_staleness(), 3);
            assert!(r.thread_plan().threads > 1, "{layers}: split");
            r.train(&d);
            let want = naive(&sp, &d, r.staleness());
            assert_eq!(
                r.state.first_difference(&want, None),
                None,
                "{layers} {rounding:?}"
            );
            assert_ne!(r.state, State::initial(&sp), "training changed something");
        }
    }
}

/// Every row in exactly one share, cut at whole lane steps, and the threads' edge operations
/// within one granule of an even share.
#[test]
fn thread_shares_cover_every_row_once_and_balance() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
    for name in ["dey-mnist", "digits", "tiny"] {
        let sp = Spec::load(&dir.join(format!("{name}.toml"))).unwrap();
        let patterns = JunctionPattern::all(&sp);
        for threads in 1..=5 {
            let plan = threads::split(&patterns, threads);
            let mut seen: Vec<Vec<usize>> = sp.layers[1..].iter().map(|&n| vec![0; n]).collect();
            let mut loads = vec![];
            for shares in &plan {
                let mut ops = 0;
                for s in shares {
                    let p = &patterns[s.junction];
                    assert_eq!(
                        s.rows.start * p.fan_in % p.z,
                        0,
                        "{name}: cut inside a lane step"
                    );
                    assert_eq!(
                        s.rows.end * p.fan_in % p.z,
                        0,
                        "{name}: cut inside a lane step"
                    );
                    s.rows.clone().for_each(|r| seen[s.junction][r] += 1);
                    ops += s.rows.len() * p.fan_in * if s.junction > 0 { 3 } else { 2 };
                }
                loads.push(ops);
            }
            assert!(
                seen.iter().flatten().all(|&c| c == 1),
                "{name}, {threads} threads"
            );
            let total = sp.edge_ops_per_sample();
            assert_eq!(loads.iter().sum::<usize>(), total);
            let granule = patterns
                .iter()
                .enumerate()
                .map(|(j, p)| p.z.max(p.fan_in) * if j > 0 { 3 } else { 2 })
                .max()
                .unwrap();
            if plan.len() == threads {
                for l in &loads {
                    assert!(l.abs_diff(total / threads) <= granule, "{name}: {loads:?}");
                }
            }
        }
    }
}
