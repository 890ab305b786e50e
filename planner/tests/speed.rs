//! The largest instance the planner is measured on (`cargo bench -p edgeflow-planner`, which
//! times it): 64 junctions on 16 different boards plan into a chain of several stages. The
//! time is the benchmark's to report, not a test's to assert.

use edgeflow_planner::dp::{optimize, Order};
use edgeflow_planner::instances::{deep_net, mixed_boards};

#[test]
fn sixty_four_junctions_on_sixteen_boards_plan_into_a_chain() {
    let net = deep_net(64);
    let boards = mixed_boards(16);
    let sol = optimize(&net, &boards, Order::Chain).expect("the instance fits");
    assert!(
        sol.stages.len() > 1,
        "the instance should need several boards"
    );
    // every junction is placed once, in order, across the stages
    let mut next = 0;
    for st in &sol.stages {
        assert_eq!(st.first, next, "{:?}", sol.stages);
        next = st.last + 1;
    }
    assert_eq!(next, 64);
    assert!(sol.period > 0);
}
