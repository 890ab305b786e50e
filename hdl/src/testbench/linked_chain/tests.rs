use super::*;
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

/// The same under Verilator: the chain's Verilog, one model, every board on its own clock.
#[test]
fn tiny_on_two_linked_boards_in_verilator_is_bit_exact() {
    use crate::testbench::linked_verilator::LinkedVerilator;
    let sp = tiny();
    let d = random_data(&sp, 24, 5);
    let dir = std::env::temp_dir().join(format!("edgeflow-linked-tiny-{}", std::process::id()));
    let v = LinkedVerilator::build(&dir, &sp, &[(0, 0), (1, 1)], &[1], 4).unwrap();
    let r = v
        .check(&State::initial(&sp), &d, &[BASE_PS, FAST_PS])
        .unwrap();
    assert_exact(&r, "tiny, 2 linked boards in Verilator, link 1");
    let _ = std::fs::remove_dir_all(&dir);
}

/// digits over two boards (junction 1 and junction 2), 200 training samples, clocks 300 ppm
/// apart, under Verilator.
#[test]
fn digits_on_two_linked_boards_in_verilator_is_bit_exact() {
    use crate::testbench::linked_verilator::LinkedVerilator;
    let sp =
        Spec::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/digits.toml"))
            .unwrap();
    let d = random_data(&sp, 200, 9);
    let dir = std::env::temp_dir().join(format!("edgeflow-linked-digits-{}", std::process::id()));
    let v = LinkedVerilator::build(&dir, &sp, &[(0, 0), (1, 1)], &[1], 4).unwrap();
    let r = v
        .check(&State::initial(&sp), &d, &[BASE_PS, SLOW_PS])
        .unwrap();
    assert_exact(&r, "digits, 2 linked boards in Verilator, link 1");
    let _ = std::fs::remove_dir_all(&dir);
}
