//! Serial framing (hdl/PROTOCOL.md, "Serial framing"): over a UART every word of the host
//! link travels in a frame `n, n words, sum1, sum2` with the sums of the UPLOAD frames, in
//! both directions; the board answers each host frame with [`FRAME_OK`] once it has passed
//! it to the network, or [`FRAME_BAD`] after dropping it. The board's side is `uart_link.rs`.

pub use crate::resident_protocol::checksum;

/// Words of a frame's payload at most: the board holds a whole host frame before passing it
/// on, in one 64-word buffer.
pub const FRAME_WORDS: usize = 64;
/// The board took a host frame and passed all of it to the network.
pub const FRAME_OK: u16 = 0xA5A5;
/// The board dropped a host frame (sums differ, bad length, or cut short): nothing of it
/// reached the network; the host sends it again.
pub const FRAME_BAD: u16 = 0x5A5A;

/// One frame: `payload.len()` (1 to [`FRAME_WORDS`]), the payload, then `sum1, sum2` over
/// the length word and the payload.
pub fn frame(payload: &[u16]) -> Vec<u16> {
    assert!((1..=FRAME_WORDS).contains(&payload.len()));
    let mut f = Vec::with_capacity(payload.len() + 3);
    f.push(payload.len() as u16);
    f.extend_from_slice(payload);
    let (s1, s2) = checksum(&f);
    f.extend([s1, s2]);
    f
}

/// Whether a frame read back (length word `n`, its payload, then the two sums) is intact.
pub fn frame_intact(n: u16, payload: &[u16], sums: [u16; 2]) -> bool {
    let (mut s1, mut s2) = checksum(&[n]);
    for &w in payload {
        s1 = s1.wrapping_add(w);
        s2 = s2.wrapping_add(s1);
    }
    payload.len() == n as usize && [s1, s2] == sums
}

/// What the board sends: answers to host frames between frames of the network's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    Ok,
    Bad,
    Data(Vec<u16>),
}

/// The units of a word stream from the board, every frame checked (for tests and tools that
/// hold a whole answer; the serial transport reads them one at a time).
/// Why a word stream from the board is not a sequence of intact frames.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("frame at word {at} fails its sums")]
    Sums { at: usize },
    #[error("word {at} ({word:#06x}) starts no frame")]
    NoFrame { at: usize, word: u16 },
}

pub fn units(words: &[u16]) -> Result<Vec<Unit>, FrameError> {
    let mut out = vec![];
    let mut i = 0;
    while i < words.len() {
        let n = words[i];
        match n {
            FRAME_OK => out.push(Unit::Ok),
            FRAME_BAD => out.push(Unit::Bad),
            n if (1..=FRAME_WORDS as u16).contains(&n) && i + 3 + n as usize <= words.len() => {
                let p = &words[i + 1..i + 1 + n as usize];
                let s = &words[i + 1 + n as usize..i + 3 + n as usize];
                if !frame_intact(n, p, [s[0], s[1]]) {
                    return Err(FrameError::Sums { at: i });
                }
                out.push(Unit::Data(p.to_vec()));
                i += n as usize + 2;
            }
            _ => return Err(FrameError::NoFrame { at: i, word: n }),
        }
        i += 1;
    }
    Ok(out)
}

/// The network's words in a stream of units, and how many answers of each kind came.
pub fn payload(units: &[Unit]) -> (Vec<u16>, usize, usize) {
    let mut w = vec![];
    let (mut ok, mut bad) = (0, 0);
    for u in units {
        match u {
            Unit::Ok => ok += 1,
            Unit::Bad => bad += 1,
            Unit::Data(d) => w.extend(d),
        }
    }
    (w, ok, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_the_sums_of_their_length_and_payload() {
        let f = frame(&[1, 2, 3]);
        // sum1: 3 + 1 + 2 + 3 = 9; sum2: 3 + 4 + 6 + 9 = 22
        assert_eq!(f, vec![3, 1, 2, 3, 9, 22]);
        assert!(frame_intact(3, &[1, 2, 3], [9, 22]));
        assert!(!frame_intact(3, &[1, 2, 7], [9, 22]));
        assert!(!frame_intact(3, &[1, 2, 3], [9, 23]));
        // two words swapped: sum1 agrees, sum2 does not
        assert!(!frame_intact(3, &[2, 1, 3], [9, 22]));
        let mut stream = vec![FRAME_OK];
        stream.extend(frame(&[7]));
        stream.push(FRAME_BAD);
        stream.extend(frame(&[8, 9]));
        let u = units(&stream).unwrap();
        assert_eq!(payload(&u), (vec![7, 8, 9], 1, 1));
        stream[3] ^= 4;
        assert!(units(&stream).is_err());
    }
}
