use super::*;
use crate::host_link::{ACK_INFER, ACK_LOAD, ACK_READ, ACK_TRAIN, ERROR_WORD};
use crate::link::stage_host::{ACK_STATUS, LINK_FAILED, OP_STATUS};
use crate::link::{linked_stage::LINK_TIMEOUT_CLOCKS, ERR_TIMEOUT};
use crate::testbench::rtl::random_data;
use edgeflow_reference::Reference;

const BASE_PS: u64 = 33_334;
const SLOW_PS: u64 = 33_344;

fn tiny() -> Spec {
    Spec::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"))
        .unwrap()
}

fn talk(send: Vec<u16>, expect: usize) -> Talk {
    Talk {
        send,
        expect,
        every: 1,
    }
}

/// Clock count of a stream's answer (the words after its acknowledgement).
fn clocks(words: &[u16]) -> u32 {
    words[1] as u32 | (words[2] as u32) << 16
}

/// tiny on two boards, 300 ppm apart, driven only through each board's host words: LOAD,
/// TRAIN, READ, INFER (the last board's host reading predictions far slower than they come)
/// and STATUS, against the reference model with the chain's staleness.
#[test]
fn linked_boards_train_and_infer_through_their_host_words() {
    let sp = tiny();
    let d = random_data(&sp, 24, 9);
    let init = State::initial(&sp);
    let mut c = BoardChain::<4>::new(
        &sp,
        &[(0, 0), (1, 1)],
        &[1],
        &[BASE_PS, SLOW_PS],
        LINK_TIMEOUT_CLOCKS,
    );
    let budget = 200_000;
    let load: Vec<Talk> = (0..2).map(|i| talk(c.load_words(i, &init), 1)).collect();
    assert_eq!(c.exchange(&load, budget).unwrap(), vec![vec![ACK_LOAD]; 2]);

    let train: Vec<Talk> = (0..2)
        .map(|i| talk(c.stream_words(i, &d, true), 3))
        .collect();
    let got = c.exchange(&train, budget).unwrap();
    for g in &got {
        assert_eq!(g[0], ACK_TRAIN, "{got:?}");
        assert!(clocks(g) > 0);
    }

    let read: Vec<Talk> = (0..2)
        .map(|i| talk(c.read_words(), c.state_words(i) + 1))
        .collect();
    let got = c.exchange(&read, budget).unwrap();
    let mut st = State::initial(&sp);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(g.last(), Some(&ACK_READ));
        c.put_state(i, &g[..g.len() - 1], &mut st);
    }
    let staleness = c.schedule.staleness();
    let mut r = Reference::with_state(&sp, init, staleness).unwrap();
    r.train(&d);
    assert_eq!(r.state.first_difference(&st, Some(&r.patterns)), None);
    assert_eq!(st.sha256(), r.state.sha256());

    // the last board's host takes a word every 500 clocks: its board must wait for it
    let mut infer: Vec<Talk> = (0..2)
        .map(|i| talk(c.stream_words(i, &d, false), 3))
        .collect();
    infer[1].expect = d.len() + 3;
    infer[1].every = 500;
    let got = c.exchange(&infer, budget).unwrap();
    assert_eq!(got[0][0], ACK_INFER);
    let n = d.len();
    assert_eq!(got[1][n], ACK_INFER, "{:?}", got[1]);
    let pred: Vec<usize> = got[1][..n].iter().map(|&w| w as usize).collect();
    assert_eq!(pred, r.infer(&d));

    let status: Vec<Talk> = (0..2).map(|_| talk(vec![OP_STATUS], 4)).collect();
    for g in c.exchange(&status, budget).unwrap() {
        assert_eq!(&g[..2], &[ACK_STATUS, 0]);
        assert!(g[2] > 0, "block cycles started: {g:?}");
    }
    // an unknown opcode: the error word, then the board ignores words until a known opcode
    let junk = vec![talk(vec![0x0042, 0x1234, OP_STATUS], 5), talk(vec![], 0)];
    let got = c.exchange(&junk, budget).unwrap();
    assert_eq!(&got[0][..2], &[ERROR_WORD, ACK_STATUS]);
}

/// A board whose neighbour never starts: its link times out, the board drops the samples the
/// host still sends, answers LINK_FAILED with the error bits, and READ_STATE still works.
#[test]
fn a_board_whose_neighbour_never_answers_reports_the_link() {
    let sp = tiny();
    let d = random_data(&sp, 6, 3);
    let mut c = BoardChain::<4>::new(&sp, &[(0, 0), (1, 1)], &[0], &[BASE_PS, BASE_PS], 1 << 10);
    let init = State::initial(&sp);
    let load: Vec<Talk> = (0..2).map(|i| talk(c.load_words(i, &init), 1)).collect();
    c.exchange(&load, 100_000).unwrap();
    let only_first = vec![talk(c.stream_words(0, &d, true), 4), talk(vec![], 0)];
    let got = c.exchange(&only_first, 100_000).unwrap();
    assert_eq!(got[0][0], LINK_FAILED, "{got:?}");
    assert_eq!(
        got[0][1] >> 8,
        ERR_TIMEOUT as u16,
        "the next link's error bits"
    );
    let read = vec![talk(c.read_words(), c.state_words(0) + 1), talk(vec![], 0)];
    let got = c.exchange(&read, 100_000).unwrap();
    assert_eq!(got[0].last(), Some(&ACK_READ));
}
