//! Bit errors on the simulated UART of the tiny board top (rust-hdl simulation of the whole
//! top, byte by byte on its pins): a corrupted word must be caught on the side that receives
//! it, reported, and never trained on; the run ends in the reference's state for the
//! uncorrupted words, bit for bit and complete.

use super::hostlink::HostLinkBoard;
use super::serial::ByteStreamLink;
use super::Board;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_hdl::ice40_pll::ClockSource;
use edgeflow_hdl::network::Network;
use edgeflow_hdl::network_top::NetworkBoardTop;
use edgeflow_hdl::testbench::rtl::random_data;
use edgeflow_hdl::uart_frames::FRAME_WORDS;
use edgeflow_hdl::uart_sim_port::SimUartPort;
use edgeflow_reference::Reference;
use std::time::Duration;

type SimBoard = HostLinkBoard<ByteStreamLink<SimUartPort<NetworkBoardTop>>>;

fn tiny() -> Spec {
    Spec::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../specs/tiny.toml"
    )))
    .unwrap()
}

fn sim_board(spec: &Spec) -> SimBoard {
    let cpb = 4;
    let top = NetworkBoardTop::new(Network::new(spec), ClockSource::Direct, cpb, true);
    let port = SimUartPort::new(Box::new(top), cpb as usize);
    let link = ByteStreamLink::new(port, "sim-uart:tiny", Duration::from_secs(120));
    HostLinkBoard::with_lanes(spec, link, 1)
}

/// Bytes on the line for one command's words in frames.
fn frame_bytes(words: usize) -> u64 {
    let frames = words.div_ceil(FRAME_WORDS);
    2 * (words + 3 * frames) as u64
}

/// The byte (towards the board) of word `w` of a command whose frames start at byte `at`.
fn byte_of_word(at: u64, w: usize) -> u64 {
    let (f, i) = (w / FRAME_WORDS, w % FRAME_WORDS);
    at + frame_bytes(f * FRAME_WORDS) + 2 * (1 + i) as u64
}

fn reference(spec: &Spec, init: &State, data: &Encoded) -> State {
    let mut r = Reference::new(spec);
    r.state = init.clone();
    r.train(data);
    r.state
}

fn assert_same(spec: &Spec, got: &State, want: &State, what: &str) {
    let r = Reference::new(spec);
    if let Some(d) = want.first_difference(got, Some(&r.patterns)) {
        panic!("{what}: the board's state differs from the uncorrupted reference run: {d}");
    }
    assert_eq!(got.sha256(), want.sha256(), "{what}");
}

#[test]
fn a_flipped_bit_in_a_streamed_sample_is_dropped_sent_again_and_never_trained_on() {
    let spec = tiny();
    let init = State::initial(&spec);
    // 20 samples: TRAIN spans three frames; the error hits the second, mid-stream
    let data = random_data(&spec, 20, 11);
    let mut b = sim_board(&spec);
    let load = frame_bytes(b.codec.load_state(&init).unwrap().len());
    let (sample, input) = (8, 3);
    // opcode, count, then 9 words (8 inputs and the label) per sample
    let w = 2 + 9 * sample + input;
    assert!(w / FRAME_WORDS == 1, "word {w} is in the second frame");
    b.link
        .stream
        .flips_to_fpga
        .push((byte_of_word(load, w), 0x10));
    b.load_state(&init).unwrap();
    assert_eq!(b.link.frames_resent, 0);
    b.train(&data).unwrap();
    let got = b.read_state().unwrap();
    assert_same(&spec, &got, &reference(&spec, &init, &data), "sample bit");
    assert_eq!(
        b.link.frames_resent, 1,
        "the board did not refuse the frame"
    );
    // the corrupted word would have changed the training: the check is what kept it out
    let mut bad = data.clone();
    bad.inputs[sample * spec.layers[0] + input] ^= 0x10;
    assert_ne!(
        reference(&spec, &init, &bad).sha256(),
        got.sha256(),
        "the flipped bit changes nothing: pick another"
    );
    let mut r = Reference::new(&spec);
    r.state = got;
    assert_eq!(b.infer(&data).unwrap(), r.infer(&data));
}

#[test]
fn a_flipped_bit_in_a_state_word_writes_no_weight_and_is_sent_again() {
    let spec = tiny();
    let init = State::initial(&spec);
    let data = random_data(&spec, 6, 5);
    let mut b = sim_board(&spec);
    // LOAD_STATE: the opcode, then weight 5 of junction 1; its high byte, lowest bit
    b.link
        .stream
        .flips_to_fpga
        .push((byte_of_word(0, 1 + 5) + 1, 0x01));
    b.load_state(&init).unwrap();
    b.train(&data).unwrap();
    let got = b.read_state().unwrap();
    assert_same(&spec, &got, &reference(&spec, &init, &data), "state bit");
    assert_eq!(
        b.link.frames_resent, 1,
        "the board did not refuse the frame"
    );
    let mut bad = init.clone();
    bad.weights[0][5] ^= 0x100;
    assert_ne!(reference(&spec, &bad, &data).sha256(), got.sha256());
}

#[test]
fn a_flipped_bit_in_a_word_read_back_is_caught_by_the_host_and_read_again() {
    let spec = tiny();
    let init = State::initial(&spec);
    let data = random_data(&spec, 6, 7);
    let mut b = sim_board(&spec);
    b.load_state(&init).unwrap();
    b.train(&data).unwrap();
    // 12 words into READ_STATE's answer: inside its frames of state words
    let at = b.link.stream.bytes_from_fpga + 2 * 12;
    b.link.stream.flips_from_fpga.push((at, 0x02));
    let got = b.read_state().unwrap();
    assert_same(
        &spec,
        &got,
        &reference(&spec, &init, &data),
        "read-back bit",
    );
    assert_eq!(
        b.link.answers_corrupted, 1,
        "the host did not see the error"
    );
    // a TRAIN whose acknowledgement is corrupted is not run again: the run stops, clearly
    let at = b.link.stream.bytes_from_fpga;
    b.link.stream.flips_from_fpga.push((at, 0x80));
    let e = format!("{:#}", b.train(&data).unwrap_err());
    assert!(e.contains("arrived corrupted"), "{e}");
}

#[test]
fn a_line_that_keeps_corrupting_a_frame_stops_the_run_with_a_clear_error() {
    let spec = tiny();
    let init = State::initial(&spec);
    let mut b = sim_board(&spec);
    let n = b.codec.load_state(&init).unwrap().len();
    let each = frame_bytes(n);
    for k in 0..4 {
        b.link.stream.flips_to_fpga.push((k * each + 9, 0x04));
    }
    let e = format!("{:#}", b.load_state(&init).unwrap_err());
    assert!(
        e.contains("refused frame 1 of 1 4 times") && e.contains("lower --baud"),
        "{e}"
    );
    assert_eq!(b.link.frames_resent, 3);
}
