use super::*;
use crate::link::linked_stage::LINK_TIMEOUT_CLOCKS;
use crate::testbench::rtl::random_data;

/// 30 MHz, and 300 ppm slower and faster (even picoseconds).
const BASE_PS: u64 = 33_334;
const SLOW_PS: u64 = 33_344;
const FAST_PS: u64 = 33_324;

fn tiny() -> Spec {
    Spec::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"))
        .unwrap()
}

fn assert_exact(r: &LinkedReport, what: &str) {
    assert_eq!(r.first_difference, None, "{what}: {r:?}");
    assert_eq!(r.state_sha256, r.reference_sha256, "{what}");
    eprintln!(
        "{what}: stages {:?} delays {:?} staleness {:?}: {} samples, {:.0} samples/s, boards {:?}",
        r.stages, r.link_delay, r.staleness, r.samples, r.train_samples_per_second, r.boards
    );
}

/// tiny on two boards whose clocks are 300 ppm apart, every vector on the link pins: the
/// reference model with the chain's staleness, every bit, for links of 0 and 1 block cycles.
#[test]
fn tiny_on_two_linked_boards_is_bit_exact() {
    let sp = tiny();
    let d = random_data(&sp, 24, 5);
    for delay in [0, 1] {
        let r = check_linked_chain::<4>(
            &sp,
            &State::initial(&sp),
            &[(0, 0), (1, 1)],
            &[delay],
            &[BASE_PS, SLOW_PS],
            &d,
        )
        .unwrap();
        assert_exact(&r, &format!("tiny, 2 linked boards, link {delay}"));
    }
}

/// `sp` over two boards (junction 1 | junction 2) with a link of 1 block cycle under
/// Verilator, `n` random samples, against the reference model.
fn two_boards_in_verilator(
    sp: &Spec,
    n: usize,
    seed: u64,
    periods: &[u64],
    what: &str,
) -> LinkedReport {
    use crate::testbench::linked_verilator::LinkedVerilator;
    let d = random_data(sp, n, seed);
    let dir = std::env::temp_dir().join(format!(
        "edgeflow-linked-{}-{}",
        sp.name,
        std::process::id()
    ));
    let v = LinkedVerilator::build(
        &dir,
        sp,
        &[(false, false); 2],
        &[(0, 0), (1, 1)],
        &[1],
        4,
        LINK_TIMEOUT_CLOCKS,
    )
    .unwrap();
    let r = v.check(&State::initial(sp), &d, periods).unwrap();
    assert_exact(&r, what);
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// The same under Verilator: the chain's Verilog, one model, every board on its own clock.
#[test]
fn tiny_on_two_linked_boards_in_verilator_is_bit_exact() {
    two_boards_in_verilator(
        &tiny(),
        24,
        5,
        &[BASE_PS, FAST_PS],
        "tiny, 2 linked boards in Verilator, link 1",
    );
}

/// digits over two boards, 200 training samples, clocks 300 ppm apart, under Verilator. The
/// first board's 640-clock pass bounds the chain (the link takes 328 clocks a vector), so in
/// steady state a block cycle starts every `block cycle + LINKED_STAGE_CLOCKS` of its clocks:
/// the vectors are copied in and the sums sent beside the block cycles, not between them.
#[test]
fn digits_on_two_linked_boards_in_verilator_is_bit_exact() {
    let sp =
        Spec::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/digits.toml"))
            .unwrap();
    let r = two_boards_in_verilator(
        &sp,
        200,
        9,
        &[BASE_PS, SLOW_PS],
        "digits, 2 linked boards in Verilator, link 1",
    );
    let clocks = (sp.block_cycle_clocks() + edgeflow_core::spec::LINKED_STAGE_CLOCKS) as f64;
    let expected = 1e12 / (clocks * BASE_PS as f64);
    let measured = r.steady_samples_per_second.unwrap();
    // the last board sees the first's pace through its own, slower clock: a clock's jitter
    // over the middle hundred block cycles, far below one clock a block cycle (0.15 %)
    assert!(
        (measured / expected - 1.0).abs() < 5e-4,
        "{measured} samples/s, {expected} for {clocks} clocks a block cycle"
    );
}

/// A second board twice as slow as the first, so that it bounds the chain: it copies in the
/// activations and sends its delta sums back beside its block cycles, one every
/// `block cycle + LINKED_STAGE_CLOCKS` of its clocks.
#[test]
fn a_slow_second_board_sends_its_sums_beside_its_block_cycles() {
    let sp = Spec::from_toml_str(
        r#"
name = "slow-second"
layers = [64, 64, 64]
fan_out = [16, 16]
z = [4, 2]
activation = "sigmoid"
learning_rate_shift = 2
seed = 1
[fixed]
width = 16
int_bits = 3
frac_bits = 12
[pattern]
kind = "type2"
dither = true
seed = 2
"#,
        "slow-second",
    )
    .unwrap();
    let r = two_boards_in_verilator(&sp, 60, 4, &[BASE_PS, SLOW_PS], "slow second board");
    let clocks = (sp.block_cycle_clocks() + edgeflow_core::spec::LINKED_STAGE_CLOCKS) as f64;
    let expected = 1e12 / (clocks * SLOW_PS as f64);
    let measured = r.steady_samples_per_second.unwrap();
    assert!(
        (measured / expected - 1.0).abs() < 5e-4,
        "{measured} samples/s, {expected} for {clocks} clocks a block cycle"
    );
}

/// Samples `m` such that junction `j` of `got` is exactly the reference model's after
/// training on the first `m` samples (each junction's weights change only by its own UP, in
/// sample order, so a board stopped between block cycles holds such a prefix).
fn prefix_of(sp: &Spec, staleness: &[usize], d: &Encoded, got: &State, j: usize) -> Vec<usize> {
    (0..=d.len())
        .filter(|&m| {
            let mut r = edgeflow_reference::Reference::with_state(
                sp,
                State::initial(sp),
                staleness.to_vec(),
            )
            .unwrap();
            r.train(&d.take(m));
            r.state.weights[j] == got.weights[j] && r.state.biases[j] == got.biases[j]
        })
        .collect()
}

/// A bit flipped on a link's wires, or a whole transfer lost: the receiving board stops with
/// the error named, before any block cycle uses the vector, and the weights read back are
/// consistent: every junction holds the reference model's weights after a whole number of
/// samples, the receiving board's fewer than the sample whose vector was hit.
#[test]
fn link_faults_stop_the_chain_with_consistent_weights() {
    use crate::link::{ERR_CHECKSUM, ERR_SEQUENCE};
    use crate::testbench::linked_verilator::{LinkedVerilator, WireFault};
    let sp = tiny();
    let d = random_data(&sp, 24, 5);
    let dir = std::env::temp_dir().join(format!("edgeflow-linked-fault-{}", std::process::id()));
    // a link of 0 block cycles: each vector arrives just as its receiver waits for it, so a
    // receiver that used words before the link marked them good would be caught
    let v = LinkedVerilator::build(
        &dir,
        &sp,
        &[(false, false); 2],
        &[(0, 0), (1, 1)],
        &[0],
        4,
        1 << 12,
    )
    .unwrap();
    let staleness = v.schedule.staleness();
    // a transfer of tiny's 8 boundary neurons: header, 8 words, CRC; 4 beats a word
    let beats = (8 + 2) * 4;
    let init = State::initial(&sp);
    for (forward, drop, err) in [
        (true, false, ERR_CHECKSUM),
        (false, false, ERR_CHECKSUM),
        // a lost transfer: the next one's header has the wrong sequence number (a lost last
        // transfer, with nothing after it, times out: link::tests and linked_boards::tests)
        (true, true, ERR_SEQUENCE),
    ] {
        let hit = 6u64;
        let fault = WireFault {
            site: FaultSite { link: 0, forward },
            // a payload beat of transfer `hit`, or all of that transfer
            first: hit * beats + if drop { 0 } else { 9 },
            count: if drop { beats } else { 1 },
            drop,
        };
        let what = format!("forward {forward}, drop {drop}");
        let run = v
            .run(&init, &d, &[BASE_PS, SLOW_PS], Some(fault), 1 << 20)
            .unwrap();
        let (board, prev, next) = run.failed.unwrap_or_else(|| panic!("{what}: not detected"));
        // the receiver: board 2 for activations, board 1 for delta sums
        assert_eq!(board, if forward { 2 } else { 1 }, "{what}");
        let bits = if forward { prev } else { next };
        assert_eq!(bits & err, err, "{what}: error bits {bits:#x}");
        for j in 0..2 {
            let m = prefix_of(&sp, &staleness, &d, &run.state, j);
            assert!(!m.is_empty(), "{what}: junction {} inconsistent", j + 1);
            eprintln!(
                "{what}: board {board} stopped, junction {} after {m:?} samples, started {:?}",
                j + 1,
                run.started
            );
        }
        // the vector hit belongs to sample `hit`: the block cycle that needs it never
        // started (activations: FF of junction 2 in ff[1] + hit; delta sums: BP of
        // junction 1 in bp[0] + hit)
        let (ff, bp) = (&v.schedule.ff, &v.schedule.bp);
        let (receiver, needs) = if forward {
            (1, ff[1] + hit as usize)
        } else {
            (0, bp[0] + hit as usize)
        };
        assert!(
            (run.started[receiver] as usize) <= needs,
            "{what}: board {} started {} block cycles, the one needing the vector is {needs}",
            receiver + 1,
            run.started[receiver]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Random specs of 3 and 4 junctions on three linked boards with mixed link delays, each
/// board on its own clock: every weight, bias and prediction.
#[test]
fn random_specs_on_three_linked_boards_are_bit_exact() {
    use crate::testbench::rtl::random_spec;
    let mut done = 0;
    for seed in 0..200u64 {
        let sp = random_spec(seed);
        let l = sp.junctions();
        if l < 3 {
            continue;
        }
        let (stages, delays) = match (l, seed % 2) {
            (3, _) => (vec![(0, 0), (1, 1), (2, 2)], vec![seed as usize % 2, 1]),
            (_, 0) => (vec![(0, 1), (2, 2), (3, 3)], vec![0, 1, seed as usize % 3]),
            _ => (vec![(0, 0), (1, 2), (3, 3)], vec![1, 0, seed as usize % 2]),
        };
        let d = random_data(&sp, 12, seed);
        let r = check_linked_chain::<2>(
            &sp,
            &State::initial(&sp),
            &stages,
            &delays,
            &[BASE_PS, SLOW_PS, FAST_PS],
            &d,
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", sp.to_toml()));
        assert_eq!(r.first_difference, None, "seed {seed}\n{}", sp.to_toml());
        assert_exact(
            &r,
            &format!("seed {seed} ({l} junctions, {})", sp.activation.name()),
        );
        done += 1;
        if done == 4 {
            break;
        }
    }
    assert_eq!(done, 4);
}
