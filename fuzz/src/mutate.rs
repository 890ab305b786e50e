//! Mutations of one input: byte-level edits for every format, token-level edits for text.
//!
//! Driven by the project's SplitMix64, so a (target, seed, executions) triple names the exact
//! inputs a run tried.

use edgeflow_core::rng::SplitMix64;

/// Inputs grow no larger than this: the parsers' cost is per byte, and a finding is easier to
/// read small.
pub const MAX_LEN: usize = 64 * 1024;

const BYTES: &[u8] = b"\x00\x01\x7f\x80\xff0-9.\n\"[]={},#e";
const WORDS: &[u32] = &[
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x100,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x0803,
    0x0801,
    60_000,
    28,
];
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1",
    "0.5",
    "32767",
    "32768",
    "65536",
    "2147483647",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "99999999999999999999999",
    "1e308",
    "-1e308",
    "1e-320",
    "1e400",
    "nan",
    "NaN",
    "inf",
    "-inf",
];
const TOKENS: &[&str] = &[
    "\"", "[", "]", "=", "{", "}", ",", "\n", "#", ":", "[]", "{}", "\"\"", "[[x]]", "\\u0000",
    "\r\n",
];

pub struct Mutator {
    rng: SplitMix64,
    text: bool,
}

impl Mutator {
    pub fn new(seed: u64, text: bool) -> Mutator {
        Mutator {
            rng: SplitMix64::new(seed),
            text,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.rng.below(n)
        }
    }

    /// A new input from `corpus`: one entry, then one to four stacked edits.
    pub fn next(&mut self, corpus: &[Vec<u8>]) -> Vec<u8> {
        let mut v = corpus[self.below(corpus.len())].clone();
        for _ in 0..1 + self.below(4) {
            self.edit(&mut v, corpus);
        }
        v.truncate(MAX_LEN);
        v
    }

    fn edit(&mut self, v: &mut Vec<u8>, corpus: &[Vec<u8>]) {
        let ops = if self.text { 14 } else { 9 };
        let len = v.len();
        match self.below(ops) {
            0 if len > 0 => {
                let i = self.below(len);
                v[i] ^= 1 << self.below(8);
            }
            1 if len > 0 => {
                let i = self.below(len);
                v[i] = BYTES[self.below(BYTES.len())];
            }
            2 => {
                let i = self.below(len + 1);
                let b = self.rng.next_u64() as u8;
                v.insert(i, b);
            }
            3 if len > 0 => {
                let i = self.below(len);
                let n = 1 + self.below((len - i).min(64));
                v.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = self.below(len);
                let n = 1 + self.below((len - i).min(256));
                let chunk = v[i..i + n].to_vec();
                let at = self.below(len + 1);
                v.splice(at..at, chunk);
            }
            5 => {
                let other = &corpus[self.below(corpus.len())];
                let cut = self.below(len + 1);
                let from = self.below(other.len() + 1);
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            6 => {
                let cut = self.below(len + 1);
                v.truncate(cut);
            }
            7 | 8 if len >= 4 => {
                let w = WORDS[self.below(WORDS.len())];
                let bytes = if self.below(2) == 0 {
                    w.to_be_bytes()
                } else {
                    w.to_le_bytes()
                };
                // IDX and other binary headers are word-aligned.
                let i = self.below(len / 4) * 4;
                v[i..i + 4].copy_from_slice(&bytes);
            }
            9 => self.replace_number(v),
            10 => self.line_edit(v, 0),
            11 => self.line_edit(v, 1),
            12 => self.line_edit(v, 2),
            13 => {
                let t = TOKENS[self.below(TOKENS.len())].as_bytes();
                let at = self.below(len + 1);
                v.splice(at..at, t.iter().copied());
            }
            _ => {}
        }
    }

    /// Replace one run of digits (with its sign, point and exponent) by an extreme number.
    fn replace_number(&mut self, v: &mut Vec<u8>) {
        let is_num = |b: u8| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'e';
        let starts: Vec<usize> = (0..v.len())
            .filter(|&i| v[i].is_ascii_digit() && (i == 0 || !is_num(v[i - 1])))
            .collect();
        if starts.is_empty() {
            return;
        }
        let mut a = starts[self.below(starts.len())];
        if a > 0 && v[a - 1] == b'-' {
            a -= 1;
        }
        let mut b = a + 1;
        while b < v.len() && is_num(v[b]) {
            b += 1;
        }
        let n = NUMBERS[self.below(NUMBERS.len())].as_bytes();
        v.splice(a..b, n.iter().copied());
    }

    /// 0: duplicate a line, 1: delete one, 2: swap two.
    fn line_edit(&mut self, v: &mut Vec<u8>, op: usize) {
        let mut lines: Vec<Vec<u8>> = v.split(|&b| b == b'\n').map(|l| l.to_vec()).collect();
        let n = lines.len();
        let i = self.below(n);
        match op {
            0 => {
                let l = lines[i].clone();
                let at = self.below(n + 1);
                lines.insert(at, l);
            }
            1 if n > 1 => {
                lines.remove(i);
            }
            _ => {
                let j = self.below(n);
                lines.swap(i, j);
            }
        }
        *v = lines.join(&b'\n');
    }
}
