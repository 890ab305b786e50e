//! A short seeded run of every target: a panic, hang or oversized allocation fails the test
//! with the input saved to a file and printed as hex.

use edgeflow_fuzz::run::Guard;

#[global_allocator]
static GUARD: Guard = Guard;

/// Inputs per target: a few seconds in all.
const EXECS: u64 = 3000;

#[test]
fn every_parser_survives_mutated_inputs() {
    let outcomes = edgeflow_fuzz::run_all(&edgeflow_fuzz::targets::cheap(), EXECS, 7);
    edgeflow_fuzz::targets::clean_scratch();
    let bad: Vec<String> = outcomes
        .iter()
        .filter(|o| o.panics + o.hangs > 0)
        .map(|o| o.json())
        .collect();
    assert!(bad.is_empty(), "findings (inputs above): {bad:?}");
    for o in &outcomes {
        assert_eq!(o.execs, EXECS, "{}", o.json());
    }
}
