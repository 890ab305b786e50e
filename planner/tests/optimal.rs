//! The planner against exhaustive search on random small instances: same best period, and
//! the plan it returns really reaches that period within every board's resources.

use edgeflow_core::rng::SplitMix64;
use edgeflow_core::Activation;
use edgeflow_planner::cost::{junction_need, Net};
use edgeflow_planner::dp::{evaluate, min_period_for, optimize, Order};
use edgeflow_planner::exhaustive::best_period;
use edgeflow_planner::Board;

fn random_net(r: &mut SplitMix64) -> Net {
    let sizes = [4u64, 6, 8, 12, 16];
    let l = 1 + r.below(4);
    let layers: Vec<u64> = (0..=l).map(|_| sizes[r.below(sizes.len())]).collect();
    let fan_out = (0..l)
        .map(|j| {
            let (left, right) = (layers[j], layers[j + 1]);
            let good: Vec<u64> = (1..=right)
                .filter(|&f| (left * f) % right == 0 && left % (left * f / right) == 0)
                .collect();
            good[r.below(good.len())]
        })
        .collect();
    let act = if r.below(2) == 0 {
        Activation::Sigmoid
    } else {
        Activation::Relu
    };
    Net::new(
        "random",
        layers,
        fan_out,
        4 + r.below(13) as u64,
        act,
        r.below(2) == 0,
    )
}

fn random_boards(r: &mut SplitMix64, net: &Net) -> Vec<Board> {
    // Scale memory and logic to what the whole network needs at its smallest z, so that
    // some instances fit on one board, some need several and some fit nowhere.
    // (with the XC7 constants written out, so a refit of the board files does not move the
    // instances)
    let mut probe = Board::built_in("nexys4-ddr").unwrap();
    probe.fit = edgeflow_planner::Fit {
        logic_per_junction: 1078,
        logic_per_lane_bit: 11,
        logic_per_board: 388,
        logic_serial_link: 237,
        ff_per_board: 0,
        ff_per_lane_bit: 22,
        ff_per_lut_multiplier: 0,
        logic_error: 0.1,
    };
    let (mut bits, mut logic) = (0u64, 0u64);
    for j in 0..net.junctions() {
        let n = junction_need(net, &probe, j, net.z_options[j][0], net.staleness(j, 0));
        bits += n.ram_bits;
        logic += n.logic;
    }
    let k = 1 + r.below(3);
    (0..k)
        .map(|i| Board {
            name: format!("b{i}"),
            part: String::new(),
            description: String::new(),
            clock_mhz: [10.0, 25.0, 50.0, 100.0][r.below(4)],
            dsp: [0, 2, 8, 32][r.below(4)],
            // room for the fixed per-board terms (the board top's among them) as before
            logic: 900 + 417 + logic * (20 + r.below(140) as u64) / 100,
            lut_per_multiplier: [40, 120, 280][r.below(3)],
            ram_bits: bits * (25 + r.below(120) as u64) / 100,
            ram_blocks: 8 + r.below(60) as u64,
            ram_block_width: [16, 36, 72][r.below(3)],
            ram_bank_min_rows: None,
            // a third of the boards count block RAMs per memory, as the iCE40's do
            ram_block_shapes: (r.below(3) == 0)
                .then(|| vec![[256, 16], [512, 8], [1024, 4], [2048, 2]]),
            link_mbps: [1.0, 10.0, 100.0, 1000.0][r.below(4)],
            link_latency_us: [0.0, 0.05, 1.0, 5.0][r.below(4)],
            link: None,
            // constants written out, so a refit of the board files does not move the
            // instances
            fit: edgeflow_planner::Fit {
                logic_per_junction: 1391,
                logic_per_lane_bit: 0,
                logic_per_board: 642,
                logic_serial_link: 417,
                ff_per_board: 732,
                ff_per_lane_bit: 5,
                ff_per_lut_multiplier: 138,
                logic_error: 0.1,
            },
            // some boards build with registered reads or the deep pipeline: longer block
            // cycles on them
            registered_reads: r.below(3) == 0,
            deep_pipeline: r.below(3) == 0,
            fpga: None,
            sdram: None,
        })
        .collect()
}

#[test]
fn planner_matches_exhaustive_search_on_1000_random_instances() {
    let mut r = SplitMix64::new(0x5eed_0f_91a7);
    let (mut checked, mut feasible, mut multi, mut step) = (0, 0, 0, 0);
    while checked < 1000 {
        let net = random_net(&mut r);
        let boards = random_boards(&mut r, &net);
        for order in [Order::Chain, Order::Every, Order::Permute] {
            let want = best_period(&net, &boards, order);
            let got = optimize(&net, &boards, order);
            match (&got, want) {
                (Err(_), None) => {}
                (Ok(sol), Some(p)) => {
                    assert_eq!(
                        sol.period, p,
                        "period differs from exhaustive search: {net:?} {boards:?} {order:?} {sol:?}"
                    );
                    let ev = evaluate(&net, &boards, &sol.stages, &sol.z, sol.period);
                    assert!(
                        ev.feasible,
                        "plan does not fit at its period: {sol:?} {ev:?}"
                    );
                    for (j, z) in sol.z.iter().enumerate() {
                        assert!(net.z_options[j].contains(z), "junction {j}: z {z} invalid");
                    }
                    // The plan's own smallest period is its reported one.
                    assert_eq!(min_period_for(&net, &boards, &sol.stages, &sol.z), Some(p));
                    if order != Order::Permute {
                        assert!(
                            sol.stages.windows(2).all(|w| w[0].board < w[1].board),
                            "chain order broken: {sol:?}"
                        );
                    }
                    if order == Order::Every {
                        assert_eq!(sol.stages.len(), boards.len(), "a board left out: {sol:?}");
                    }
                    feasible += 1;
                    multi += (sol.stages.len() > 1) as usize;
                    let t = ev
                        .stage_time
                        .iter()
                        .chain(ev.links.iter().map(|l| &l.transfer))
                        .max()
                        .copied()
                        .unwrap();
                    step += (t < p) as usize;
                }
                _ => panic!(
                    "planner {got:?} but exhaustive search {want:?}: {net:?} {boards:?} {order:?}"
                ),
            }
            checked += 1;
        }
    }
    eprintln!("{checked} instances: {feasible} feasible, {multi} on several boards, {step} set by a link-delay step");
    // The test must exercise the interesting cases, not only infeasible ones.
    assert!(feasible >= 300, "only {feasible} feasible instances");
    assert!(multi >= 100, "only {multi} multi-board plans");
}

/// A found instance: the smallest time candidate is already feasible, so the search for
/// link-delay steps below it has no lower end and must stop there (searching on exhausts
/// memory); the plan must be the exhaustive search's.
#[test]
fn a_plan_at_the_smallest_candidate_period_is_found() {
    let net = Net::new(
        "random",
        vec![6, 4, 4],
        vec![2, 2],
        8,
        Activation::Sigmoid,
        true,
    );
    // the constants written out (today's iCE40 fit), so a later refit of the defaults does
    // not move the instance
    let fit = edgeflow_planner::Fit {
        logic_per_junction: 1391,
        logic_per_lane_bit: 0,
        logic_per_board: 642,
        logic_serial_link: 0,
        ff_per_board: 732,
        ff_per_lane_bit: 5,
        ff_per_lut_multiplier: 138,
        logic_error: 0.1,
    };
    let board =
        |name: &str, mhz: f64, logic: u64, lpm: u64, bits: u64, width: u64, lat: f64| Board {
            name: name.into(),
            part: String::new(),
            description: String::new(),
            clock_mhz: mhz,
            dsp: 2,
            logic,
            lut_per_multiplier: lpm,
            ram_bits: bits,
            ram_blocks: 61,
            ram_block_width: width,
            ram_bank_min_rows: None,
            ram_block_shapes: None,
            link_mbps: 1000.0,
            link_latency_us: lat,
            link: None,
            fit: fit.clone(),
            registered_reads: false,
            deep_pipeline: false,
            fpga: None,
            sdram: None,
        };
    let boards = vec![
        board("b0", 25.0, 4195, 40, 4828, 16, 5.0),
        board("b1", 100.0, 4595, 120, 13458, 36, 1.0),
    ];
    for order in [Order::Chain, Order::Permute] {
        let want = best_period(&net, &boards, order).expect("feasible");
        let got = optimize(&net, &boards, order).unwrap();
        assert_eq!(got.period, want, "{order:?}");
    }
}
