//! The acceptance bound: planning 64 junctions on 16 different boards takes under 1 s.

use edgeflow_planner::dp::{optimize, Order};
use edgeflow_planner::instances::{deep_net, mixed_boards};
use std::time::Instant;

#[test]
fn sixty_four_junctions_on_sixteen_boards_under_a_second() {
    let net = deep_net(64);
    let boards = mixed_boards(16);
    let t0 = Instant::now();
    let sol = optimize(&net, &boards, Order::Chain).expect("the instance fits");
    let s = t0.elapsed().as_secs_f64();
    eprintln!(
        "planned 64 junctions on 16 boards in {:.1} ms: {} stages, period {} ps",
        s * 1e3,
        sol.stages.len(),
        sol.period
    );
    assert!(
        sol.stages.len() > 1,
        "the instance should need several boards"
    );
    assert!(s < 1.0, "planning took {s:.3} s");
}
