//! Resident data sets: samples packed into 16-bit words for a board's data memory
//! (hdl/PROTOCOL.md, UPLOAD). A sample is one record of `record_words` words: its inputs as
//! codes of `input_code_bits` bits in one little-endian bit string (input `k` in bits
//! `k·b … k·b + b − 1`, bit `i` of the string in word `i / 16`, bit `i mod 16`), then one
//! word with the label. A code is the raw input shifted right by `input_code_shift`: every
//! raw input of the spec is a multiple of that power of two, so the chip rebuilds the raw
//! value exactly with one left shift.

use crate::{Encoded, Spec};

impl Spec {
    /// Right shift from a raw input to its code: the fraction bits below the input
    /// precision. Zero when 1.0 saturates (`int_bits = 0`: the largest input is then
    /// `1 − 2^−frac_bits`, not a multiple of a coarser step).
    pub fn input_code_shift(&self) -> u32 {
        let (b, frac) = (self.input_bits(), self.fixed.frac_bits);
        if self.fixed.int_bits >= 1 && b - 1 <= frac {
            frac - (b - 1)
        } else {
            0
        }
    }

    /// Bits of one input code: enough for the largest raw input (1.0, or the format's
    /// largest value below it) after the shift.
    pub fn input_code_bits(&self) -> u32 {
        let f = self.format();
        let top = (1i64 << self.fixed.frac_bits).min(f.max() as i64) >> self.input_code_shift();
        (64 - top.leading_zeros()).max(1)
    }

    /// Words of a record's inputs (the label word follows them).
    pub fn packed_input_words(&self) -> usize {
        (self.layers[0] * self.input_code_bits() as usize).div_ceil(16)
    }

    /// Words of one resident sample: its packed inputs and its label.
    pub fn record_words(&self) -> usize {
        self.packed_input_words() + 1
    }

    /// Words of a state (every weight, then every bias): what LOAD_STATE carries.
    pub fn state_words(&self) -> usize {
        self.derived().total_edges + self.layers[1..].iter().sum::<usize>()
    }
}

/// The records of `data`'s samples, in order.
pub fn pack(spec: &Spec, data: &Encoded) -> Vec<u16> {
    let (n0, bits, shift) = (
        spec.layers[0],
        spec.input_code_bits() as usize,
        spec.input_code_shift(),
    );
    let mut words = Vec::with_capacity(data.len() * spec.record_words());
    for (s, &label) in data.labels.iter().enumerate() {
        let mut record = vec![0u16; spec.packed_input_words()];
        for (k, &raw) in data.inputs[s * n0..(s + 1) * n0].iter().enumerate() {
            let code = (raw >> shift) as u32;
            debug_assert!(raw >= 0 && ((code as i32) << shift) == raw && code >> bits == 0);
            for i in 0..bits {
                if code >> i & 1 == 1 {
                    let at = k * bits + i;
                    record[at / 16] |= 1 << (at % 16);
                }
            }
        }
        words.extend_from_slice(&record);
        words.push(label as u16);
    }
    words
}

/// The samples back from their records: what a chip streams into its datapath.
pub fn unpack(spec: &Spec, words: &[u16]) -> Encoded {
    let (n0, bits, shift) = (
        spec.layers[0],
        spec.input_code_bits() as usize,
        spec.input_code_shift(),
    );
    let r = spec.record_words();
    let mut inputs = Vec::with_capacity(words.len() / r * n0);
    let mut labels = Vec::with_capacity(words.len() / r);
    for record in words.chunks_exact(r) {
        for k in 0..n0 {
            let mut code = 0i32;
            for i in 0..bits {
                let at = k * bits + i;
                code |= ((record[at / 16] >> (at % 16) & 1) as i32) << i;
            }
            inputs.push(code << shift);
        }
        labels.push(record[r - 1] as usize);
    }
    Encoded {
        inputs_per_sample: n0,
        inputs,
        labels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dataset;

    fn spec_with(width: u32, int_bits: u32, input_bits: u32) -> Spec {
        let text = format!(
            "name = \"t\"\nlayers = [6, 4, 2]\nfan_out = [2, 1]\nz = [1, 1]\nactivation = \"sigmoid\"\nlearning_rate_shift = 2\nseed = 1\ninput_bits = {input_bits}\n[fixed]\nwidth = {width}\nint_bits = {int_bits}\nfrac_bits = {}\n[pattern]\nkind = \"type1\"\nseed = 1\n",
            width - 1 - int_bits
        );
        Spec::from_toml_str(&text, "test").unwrap()
    }

    #[test]
    fn codes_hold_every_input_of_every_precision() {
        // every precision and format: the records give back exactly the encoded inputs
        for (width, int_bits) in [(16, 3), (10, 2), (8, 0), (12, 1), (16, 0)] {
            for input_bits in 1..=16 {
                let s = spec_with(width, int_bits, input_bits);
                // every value i/64 and some off the grid, six inputs a sample
                let x: Vec<f64> = (0..66 * 6).map(|i| (i % 67) as f64 / 66.0).collect();
                let rows = x.len() / 6;
                let d = Dataset {
                    name: "t".into(),
                    features: 6,
                    classes: 2,
                    x,
                    y: (0..rows).map(|i| i % 2).collect(),
                    full_scale: None,
                    columns: (1..=6).map(|c| format!("column {c}")).collect(),
                };
                let enc = d.encode(&s, &(0..rows).collect::<Vec<_>>()).unwrap();
                let words = pack(&s, &enc);
                assert_eq!(words.len(), rows * s.record_words());
                assert_eq!(
                    unpack(&s, &words),
                    enc,
                    "width {width} int {int_bits} bits {input_bits}"
                );
            }
        }
    }

    #[test]
    fn codes_are_as_narrow_as_the_precision() {
        // 16-bit format, 12 fraction bits: 8-bit inputs are multiples of 2^-7 = 32 raw steps
        let s = spec_with(16, 3, 8);
        assert_eq!((s.input_code_shift(), s.input_code_bits()), (5, 8));
        // six 8-bit codes take 48 bits: three words, then the label
        assert_eq!(s.record_words(), 4);
        // one-bit inputs: 0 or 1.0 (raw 4096), code 0 or 1
        let s = spec_with(16, 3, 1);
        assert_eq!((s.input_code_shift(), s.input_code_bits()), (12, 1));
        // more input bits than the format has: the raw value itself, 1.0 = 2^12 needs 13 bits
        let s = spec_with(16, 3, 16);
        assert_eq!((s.input_code_shift(), s.input_code_bits()), (0, 13));
        // no integer bit: 1.0 saturates to 2^frac − 1, so codes are raw values of frac bits
        let s = spec_with(8, 0, 4);
        assert_eq!((s.input_code_shift(), s.input_code_bits()), (0, 7));
    }

    #[test]
    fn a_record_is_laid_out_little_endian() {
        // codes 1, 2, 3 … at 8 bits: word 0 = 0x0201, word 1 = 0x0403, label last
        let s = spec_with(16, 3, 8);
        let raw: Vec<i32> = (1..=6).map(|c| c << 5).collect();
        let enc = Encoded {
            inputs_per_sample: 6,
            inputs: raw,
            labels: vec![1],
        };
        assert_eq!(pack(&s, &enc), vec![0x0201, 0x0403, 0x0605, 1]);
    }
}
