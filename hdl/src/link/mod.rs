//! Board-to-board link: a pipeline stage hands its boundary vector (the boundary layer's
//! activations forward, its deltas backward) to the next board without the host.
//!
//! Wires, all ordinary I/O pins, sender to receiver: `link_clock` (the sender's clock,
//! inverted, so the receiver samples each beat in the middle of its eye), `link_data` (`W`
//! pins), `link_valid` and `link_start`; one wire back, `link_credit`. A 16-bit word crosses
//! in `16 / W` beats, least significant bits first.
//!
//! A transfer is one boundary vector: a header word (the transfer's sequence number, with
//! `link_start` high on its first beat), the vector's `len` words, and a CRC-16 over header
//! and vector ([`crc16`]). `len` is fixed per link: it is the boundary layer's size.
//!
//! Flow control: the receiver's words wait in a clock-domain-crossing FIFO ([`cdc`]); the
//! sender starts a word only while it holds a credit, and starts with one per FIFO entry. The
//! receiver returns a credit, as one toggle of `link_credit`, for each entry its write side
//! has seen freed, so the sender can never overrun the FIFO, whatever the two clocks.
//!
//! Faults ([`rx::LinkRx::error`]): a CRC mismatch, a header that is not the expected
//! sequence number (a lost transfer), a misplaced start or a word cut short (framing), a
//! transfer that stops arriving (timeout) and a FIFO overrun are sticky error bits. The
//! receiver passes words on as they arrive and marks a vector good only after its CRC
//! matched ([`rx::LinkRx::good`]); after any error it delivers nothing more.

pub mod bench;
pub mod boundary;
pub mod cdc;
pub mod chain_verilog;
pub mod inbox;
pub mod linked_board;
pub mod linked_stage;
pub mod rx;
pub mod stage_host;
pub mod tx;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod verilog_tests;

use rust_hdl::prelude::*;

/// `error` bit: the CRC word did not match the transfer.
pub const ERR_CHECKSUM: u64 = 1;
/// `error` bit: a header carried another sequence number than expected (a lost transfer).
pub const ERR_SEQUENCE: u64 = 2;
/// `error` bit: a start where none belongs, none where a header belongs, or a word whose
/// beats were cut short.
pub const ERR_FRAMING: u64 = 4;
/// `error` bit: a transfer (or, while `awaiting` is high, its header) stopped arriving.
pub const ERR_TIMEOUT: u64 = 8;
/// `error` bit: a word arrived at a full FIFO (the credit protocol was broken).
pub const ERR_OVERRUN: u64 = 16;

/// A link's data pins must divide a 16-bit word into whole beats.
pub(crate) fn check_width(w: usize) {
    assert!(
        [1, 2, 4, 8, 16].contains(&w),
        "link width must divide 16 (got {w})"
    );
}

/// Initial value of the transfer CRC.
pub const CRC_INIT: u16 = 0xFFFF;

/// CRC-16 with polynomial 0x1021, initial value 0xFFFF, no reflection (CRC-16/CCITT-FALSE),
/// computed bit by bit as the definition reads.
pub fn crc16_bytes(bytes: &[u8]) -> u16 {
    let mut crc = CRC_INIT;
    for b in bytes {
        for i in (0..8).rev() {
            let bit = ((b >> i) & 1) as u16;
            let top = (crc >> 15) & 1;
            crc <<= 1;
            if bit ^ top == 1 {
                crc ^= 0x1021;
            }
        }
    }
    crc
}

/// The transfer CRC: [`crc16_bytes`] over the words, high byte first.
pub fn crc16(words: &[u16]) -> u16 {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    crc16_bytes(&bytes)
}

/// The words of one transfer as they cross the link.
pub fn frame(seq: u16, vector: &[u16]) -> Vec<u16> {
    let mut out = vec![seq];
    out.extend_from_slice(vector);
    out.push(crc16(&out));
    out
}

/// One word's step of [`crc16`], in logic: two byte steps of the shift-and-xor form of the
/// polynomial (no table, no loop), high byte first.
#[derive(LogicBlock, Default)]
pub struct Crc16Step {
    pub crc: Signal<In, Bits<16>>,
    pub word: Signal<In, Bits<16>>,
    pub out: Signal<Out, Bits<16>>,
    x1: Signal<Local, Bits<16>>,
    y1: Signal<Local, Bits<16>>,
    c1: Signal<Local, Bits<16>>,
    x2: Signal<Local, Bits<16>>,
    y2: Signal<Local, Bits<16>>,
}

impl Logic for Crc16Step {
    #[hdl_gen]
    fn update(&mut self) {
        self.x1.next = ((self.crc.val() >> 8) ^ (self.word.val() >> 8)) & 0xFF;
        self.y1.next = self.x1.val() ^ (self.x1.val() >> 4);
        self.c1.next =
            (self.crc.val() << 8) ^ (self.y1.val() << 12) ^ (self.y1.val() << 5) ^ self.y1.val();
        self.x2.next = ((self.c1.val() >> 8) ^ self.word.val()) & 0xFF;
        self.y2.next = self.x2.val() ^ (self.x2.val() >> 4);
        self.out.next =
            (self.c1.val() << 8) ^ (self.y2.val() << 12) ^ (self.y2.val() << 5) ^ self.y2.val();
    }
}
