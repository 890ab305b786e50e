use super::bench::{Beat, LinkBench};
use super::rx::LinkRx;
use super::tx::LinkTx;
use super::*;
use crate::testing::settle;

/// 30 MHz on the sender, in picoseconds (even, for the half periods).
const TX_PS: u64 = 33_334;
/// The receiver 300 ppm slower and 300 ppm faster.
const RX_SLOW_PS: u64 = 33_344;
const RX_FAST_PS: u64 = 33_324;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn vectors(seed: u64, count: usize, len: usize) -> Vec<Vec<u16>> {
    let mut r = Rng(seed);
    (0..count)
        .map(|_| (0..len).map(|_| r.next() as u16).collect())
        .collect()
}

type Bench4 = LinkBench<4, 5, 6>;

fn bench4(len: u16, rx_ps: u64) -> Bench4 {
    LinkBench::new(
        LinkTx::new(len, LinkRx::<4, 5, 6>::depth()),
        LinkRx::new(len, 5000),
        TX_PS,
        rx_ps,
        TX_PS / 3,
    )
}

#[test]
fn crc_matches_the_catalogue_check_value() {
    // CRC-16/CCITT-FALSE of "123456789" is 0x29B1.
    assert_eq!(crc16_bytes(b"123456789"), 0x29B1);
    assert_eq!(crc16(&[0x3132, 0x3334]), crc16_bytes(b"1234"));
}

#[test]
fn crc_step_in_logic_matches_the_bitwise_crc() {
    let mut step = Crc16Step::default();
    step.connect_all();
    let mut r = Rng(7);
    let words: Vec<u16> = (0..300).map(|_| r.next() as u16).collect();
    let mut crc = CRC_INIT;
    for (i, &w) in words.iter().enumerate() {
        step.crc.next = (crc as u64).into();
        step.word.next = (w as u64).into();
        settle(&mut step);
        crc = step.out.val().index() as u16;
        assert_eq!(crc, crc16(&words[..=i]), "after word {i}");
    }
}

fn assert_all_arrive<const W: usize>(b: &mut LinkBench<W, 5, 6>, vs: &[Vec<u16>], ready: u64) {
    let mut r = Rng(ready + 1);
    let s = b.stream(vs, |_| r.next() % 100 < ready, false, 200_000);
    assert_eq!(s.error, 0, "error bits");
    assert_eq!(s.good, vs.len(), "good transfers");
    assert_eq!(s.words, vs.concat(), "words in order, bit-equal");
}

#[test]
fn random_vectors_cross_between_clocks_300_ppm_apart() {
    for rx_ps in [RX_SLOW_PS, RX_FAST_PS] {
        let vs = vectors(rx_ps, 6, 37);
        // A consumer that takes a word on 70 % of its clocks.
        assert_all_arrive(&mut bench4(37, rx_ps), &vs, 70);
    }
    let vs = vectors(3, 5, 64);
    let mut b: LinkBench<8, 5, 6> = LinkBench::new(
        LinkTx::new(64, 32),
        LinkRx::new(64, 5000),
        TX_PS,
        RX_FAST_PS,
        TX_PS / 5,
    );
    assert_all_arrive(&mut b, &vs, 90);
    // Nothing in the crossing depends on the clocks being close: a receiver at less than
    // half and at nearly twice the sender's clock.
    for rx_ps in [77_778, 17_858] {
        let vs = vectors(rx_ps, 3, 29);
        assert_all_arrive(&mut bench4(29, rx_ps), &vs, 80);
    }
    let vs = vectors(4, 3, 20);
    let mut b: LinkBench<1, 5, 6> = LinkBench::new(
        LinkTx::new(20, 32),
        LinkRx::new(20, 5000),
        TX_PS,
        RX_SLOW_PS,
        0,
    );
    assert_all_arrive(&mut b, &vs, 50);
}

#[test]
fn a_stalled_reader_fills_the_fifo_exactly_and_never_overruns() {
    let vs = vectors(11, 3, 50);
    let mut b = bench4(50, RX_SLOW_PS);
    // The consumer takes nothing for 2000 clocks: the receiver takes the header itself and
    // holds the next word for its checks, and then the sender may send one word per entry.
    let s = b.stream(&vs, |_| false, false, 2000);
    assert_eq!(s.error, 0);
    assert_eq!(
        b.beats,
        (1 + 1 + 32) * 4,
        "beats on the wire while the reader stalls"
    );
    assert!(!b.tx.words.ready.val(), "sender out of credits");
    let s = b.stream(&vs, |_| true, false, 100_000);
    assert_eq!((s.error, s.good), (0, 3));
    assert_eq!(s.words, vs.concat());
}

#[test]
fn throughput_in_clocks_per_word() {
    let len = 64;
    let vs = vectors(5, 8, len);
    let payload = (vs.len() * len) as f64;
    let per_word = |busy: u64| busy as f64 / payload;
    let mut b4 = bench4(len as u16, RX_FAST_PS);
    let s = b4.stream(&vs, |_| true, false, 100_000);
    assert_eq!((s.error, s.good), (0, vs.len()));
    // Credits never run out with a consumer that keeps up: the wire carries a beat on every
    // sender clock, 16 / W per word, plus the header and CRC words of each transfer.
    let frame_words = (vs.len() * (len + 2)) as u64;
    assert_eq!(s.busy_tx_clocks, frame_words * 4);
    eprintln!(
        "link W=4: {:.4} sender clocks per vector word ({} words per transfer)",
        per_word(s.busy_tx_clocks),
        len
    );
    let mut b8: LinkBench<8, 5, 6> = LinkBench::new(
        LinkTx::new(len as u16, 32),
        LinkRx::new(len as u16, 5000),
        TX_PS,
        RX_SLOW_PS,
        TX_PS / 3,
    );
    let s = b8.stream(&vs, |_| true, false, 100_000);
    assert_eq!((s.error, s.good), (0, vs.len()));
    assert_eq!(s.busy_tx_clocks, frame_words * 2);
    eprintln!(
        "link W=8: {:.4} sender clocks per vector word",
        per_word(s.busy_tx_clocks)
    );
}

/// Stream `vs` through a W=4 link with `fault` on the wire; the receiver's error bits and
/// good transfers.
fn with_fault(vs: &[Vec<u16>], fault: impl FnMut(u64, &mut Beat) + 'static) -> (u64, usize) {
    let mut b = bench4(vs[0].len() as u16, RX_SLOW_PS);
    b.fault = Some(Box::new(fault));
    let s = b.stream(vs, |c| c % 3 != 0, true, 50_000);
    assert!(s.good < vs.len(), "a faulty stream must not end all good");
    (s.error, s.good)
}

// Transfer t's words start at beat t * (len + 2) * 4 (W = 4: four beats per word).
const LEN: usize = 16;
fn first_beat(transfer: u64, word: u64) -> u64 {
    (transfer * (LEN as u64 + 2) + word) * 4
}

#[test]
fn a_flipped_data_bit_is_a_checksum_error() {
    let vs = vectors(21, 3, LEN);
    let at = first_beat(1, 5) + 2;
    let got = with_fault(&vs, move |n, b| {
        if n == at {
            b.data ^= 0b0100;
        }
    });
    assert_eq!(got, (ERR_CHECKSUM, 1));
    // In the CRC word itself too.
    let at = first_beat(0, LEN as u64 + 1);
    let got = with_fault(&vs, move |n, b| {
        if n == at {
            b.data ^= 1;
        }
    });
    assert_eq!(got, (ERR_CHECKSUM, 0));
}

#[test]
fn a_lost_transfer_is_a_sequence_error() {
    let vs = vectors(22, 3, LEN);
    let (from, to) = (first_beat(1, 0), first_beat(2, 0));
    let got = with_fault(&vs, move |n, b| {
        if (from..to).contains(&n) {
            b.valid = false;
        }
    });
    assert_eq!(got, (ERR_SEQUENCE, 1));
    // A flipped bit in a header reads as another sequence number.
    let at = first_beat(2, 0) + 3;
    let got = with_fault(&vs, move |n, b| {
        if n == at {
            b.data ^= 0b1000;
        }
    });
    assert_eq!(got, (ERR_SEQUENCE, 2));
}

#[test]
fn a_lost_last_transfer_times_out_while_expected() {
    let vs = vectors(23, 2, LEN);
    let from = first_beat(1, 0);
    let got = with_fault(&vs, move |n, b| {
        if n >= from {
            b.valid = false;
        }
    });
    assert_eq!(got, (ERR_TIMEOUT, 1));
}

#[test]
fn misplaced_starts_and_cut_words_are_framing_errors() {
    let vs = vectors(24, 3, LEN);
    // A start on a vector word: the transfer looks cut short.
    let at = first_beat(1, 7);
    let got = with_fault(&vs, move |n, b| {
        if n == at {
            b.start = true;
        }
    });
    assert_eq!(got, (ERR_FRAMING, 1));
    // A lost start: the header is not recognized.
    let at = first_beat(2, 0);
    let got = with_fault(&vs, move |n, b| {
        if n == at {
            b.start = false;
        }
    });
    assert_eq!(got, (ERR_FRAMING, 2));
    // One beat of a word lost: the word is cut short (later words misalign too).
    let at = first_beat(0, 9) + 1;
    let (err, good) = with_fault(&vs, move |n, b| {
        if n == at {
            b.valid = false;
        }
    });
    assert!(err & ERR_FRAMING != 0, "error bits {err:#b}");
    assert_eq!(good, 0);
}

#[test]
fn more_credits_than_entries_overrun_the_fifo() {
    // The check behind the credit protocol: a sender that believes in 40 entries of 32.
    let vs = vectors(25, 3, 50);
    let mut b: Bench4 = LinkBench::new(
        LinkTx::new(50, 40),
        LinkRx::new(50, 5000),
        TX_PS,
        RX_SLOW_PS,
        TX_PS / 3,
    );
    let s = b.stream(&vs, |c| c > 2000, false, 10_000);
    assert_eq!(s.error, ERR_OVERRUN);
    assert!(s.good < 3);
}

/// The `[link]` figures of every board file are what the simulated link measures.
#[test]
fn board_files_carry_the_measured_link_timing() {
    use super::bench::link_timing;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../boards");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let t: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let Some(link) = t.get("link").and_then(|l| l.as_table()) else {
            continue;
        };
        let width = link["width"].as_integer().unwrap() as u64;
        let m = link_timing(width).expect("a width that divides 16");
        eprintln!("{}: W={width}: {m:?}", path.display());
        assert_eq!(m.clocks_per_word, 16.0 / width as f64, "one beat per clock");
        assert_eq!(
            (
                link["clocks_per_word"].as_float().unwrap(),
                link["latency_clocks"].as_integer().unwrap() as u64
            ),
            (m.clocks_per_word, m.latency_clocks),
            "{}: [link] clocks_per_word, latency_clocks as measured",
            path.display()
        );
        seen += 1;
    }
    assert!(seen >= 2, "board files with a [link]: {seen}");
}
