//! A short seeded run of every target: a panic, hang or oversized allocation fails the test
//! with the input saved to a file and printed as hex.

use edgeflow_fuzz::run::Guard;

#[global_allocator]
static GUARD: Guard = Guard;

/// Inputs per target: a few seconds in all.
const EXECS: u64 = 3000;
/// Inputs per target that simulates the RTL.
const SLOW_EXECS: u64 = 40;

#[test]
fn every_parser_survives_mutated_inputs() {
    let mut outcomes = edgeflow_fuzz::run_all(&edgeflow_fuzz::targets::cheap(), EXECS, 7);
    outcomes.extend(edgeflow_fuzz::run_all(
        &edgeflow_fuzz::targets::slow(),
        SLOW_EXECS,
        7,
    ));
    edgeflow_fuzz::targets::clean_scratch();
    let bad: Vec<String> = outcomes
        .iter()
        .filter(|o| o.panics + o.hangs > 0)
        .map(|o| o.json())
        .collect();
    assert!(bad.is_empty(), "findings (inputs above): {bad:?}");
    for o in &outcomes {
        let want = if o.name == "link-rtl" {
            SLOW_EXECS
        } else {
            EXECS
        };
        assert_eq!(o.execs, want, "{}", o.json());
    }
}

fn panics_on_bang(b: &[u8]) {
    assert!(!b.contains(&b'!'), "a bang");
}

fn hangs_on_h(b: &[u8]) {
    while b.contains(&b'h') {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// The runner reports what it is there to find, with the input that caused it.
#[test]
fn runner_reports_panics_and_hangs_with_their_input() {
    let limit = std::time::Duration::from_millis(300);
    let t = edgeflow_fuzz::Target {
        name: "bang",
        text: true,
        seeds: vec![b"ok".to_vec(), b"ok!".to_vec()],
        run: panics_on_bang,
    };
    let o = edgeflow_fuzz::fuzz(&t, 100, 1, limit);
    assert_eq!(o.execs, 100);
    assert!(o.panics >= 1, "{}", o.json());
    assert_eq!(o.findings[0].kind, "panic");
    assert!(o.findings[0].message.contains("a bang"), "{:?}", o.findings);
    assert!(o.findings[0].input.contains(&b'!'));
    let t = edgeflow_fuzz::Target {
        name: "h",
        text: true,
        seeds: vec![b"ok".to_vec(), b"oh".to_vec()],
        run: hangs_on_h,
    };
    let o = edgeflow_fuzz::fuzz(&t, 100, 1, limit);
    assert_eq!((o.execs, o.hangs), (1, 1), "{}", o.json());
    assert_eq!(o.findings[0].input, b"oh");
}
