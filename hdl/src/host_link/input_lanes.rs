//! Input lanes: how many 16-bit words of a TRAIN/INFER sample the host link takes per clock
//! (hdl/PROTOCOL.md, "Input lanes"), and the beat streams that carry them.
//!
//! With one word per clock a spec whose first layer is wider than its block cycle
//! (`N_0 + 1 > C`) is link-bound: dey-mnist needs 1025 clocks per training sample for
//! `C = 32`. A beat of `W` words writes `W` consecutive inputs of a sample at once; they land in
//! `W` distinct write banks of the first junction's input memory (bank = input mod `W`), so
//! the write never clashes. The label and every other word of the protocol stay one word per
//! beat, on lane 0.
//!
//! A beat stream is a flat `Vec<u16>` of `W` words per beat (beat `b` = words
//! `b·W … b·W + W-1`); with `W = 1` it is exactly the word stream of the 16-bit protocol.

use edgeflow_core::Spec;

/// The smallest `W` with which the link keeps up with the longest pass `C = max C_i`:
/// `⌈N_0/W⌉ ≤ C`, so a sample's beats (one more for the label when training) fit in the block
/// cycle of `C + 2` clocks (params.rs). `W = z_1` always suffices (`N_0/z_1 = C_1 ≤ C`), so the result
/// never exceeds `z_1`; the bus stays as narrow as the throughput allows.
pub fn auto_lanes(spec: &Spec) -> usize {
    let n0 = spec.layers[0];
    let c = spec.max_pass_clocks().max(2);
    let z1 = spec.z[0].max(1);
    (1..=z1).find(|&w| n0.div_ceil(w) <= c).unwrap_or(z1)
}

/// `auto` or a number from 1 to `z_1` (a beat of at most `z_1` consecutive inputs hits distinct
/// banks of the first junction's left layer; more lanes could not make the link faster than
/// `W = z_1` already does).
/// Why an input lane count cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LanesError {
    #[error("--input-lanes '{text}': expected 'auto' or a number of 16-bit words per clock")]
    NotANumber { text: String },
    #[error("input lanes = {lanes}: spec '{spec}' allows 1 to z_1 = {z1} (W = z_1 already takes a sample in C_1 clocks); use --input-lanes auto ({auto})")]
    OutOfRange {
        lanes: usize,
        spec: String,
        z1: usize,
        auto: usize,
    },
}

pub fn parse_lanes(spec: &Spec, text: &str) -> Result<usize, LanesError> {
    let t = text.trim();
    if t == "auto" {
        return Ok(auto_lanes(spec));
    }
    let w: usize = t.parse().map_err(|_| LanesError::NotANumber {
        text: text.to_string(),
    })?;
    check_lanes(spec, w)?;
    Ok(w)
}

/// `W` must be between 1 and `z_1`.
pub fn check_lanes(spec: &Spec, w: usize) -> Result<(), LanesError> {
    let z1 = spec.z[0];
    if w == 0 || w > z1 {
        return Err(LanesError::OutOfRange {
            lanes: w,
            spec: spec.name.clone(),
            z1,
            auto: auto_lanes(spec),
        });
    }
    Ok(())
}

/// Beats the host sends per sample: `⌈N_0/W⌉` input beats, plus one label beat when training.
pub fn beats_per_sample(n0: usize, w: usize, train: bool) -> usize {
    n0.div_ceil(w) + train as usize
}

/// Append `word` as one beat (lane 0; the other lanes 0).
pub fn push_word(out: &mut Vec<u16>, w: usize, word: u16) {
    out.push(word);
    out.extend(std::iter::repeat(0).take(w - 1));
}

/// Append every word as a beat of its own (commands, counts, labels, LOAD_STATE values).
pub fn push_words(out: &mut Vec<u16>, w: usize, words: &[u16]) {
    for &x in words {
        push_word(out, w, x);
    }
}

/// Append a sample's inputs, `W` per beat; the lanes after the last input of the last beat
/// are 0 (the device ignores them).
pub fn push_inputs(out: &mut Vec<u16>, w: usize, inputs: &[u16]) {
    for c in inputs.chunks(w) {
        out.extend_from_slice(c);
        out.extend(std::iter::repeat(0).take(w - c.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> Spec {
        Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../specs")
                .join(format!("{name}.toml")),
        )
        .unwrap()
    }

    #[test]
    fn auto_is_the_narrowest_bus_that_keeps_up() {
        // dey-mnist: N_0 = 1024, C = 32: 31 lanes would need 34 beats, 32 lanes need 32
        let d = spec("dey-mnist");
        assert_eq!(auto_lanes(&d), 32);
        assert_eq!(beats_per_sample(1024, 31, false), 34);
        // tiny (N_0 = 8, C = 8) and digits (N_0 = 64, C = 640) keep up with one word per clock
        assert_eq!(auto_lanes(&spec("tiny")), 1);
        assert_eq!(auto_lanes(&spec("digits")), 1);
        assert_eq!(parse_lanes(&d, "auto").unwrap(), 32);
        assert_eq!(parse_lanes(&d, "7").unwrap(), 7);
        assert!(parse_lanes(&d, "129")
            .unwrap_err()
            .to_string()
            .contains("z_1 = 128"));
        assert!(parse_lanes(&d, "0").is_err());
        assert!(parse_lanes(&d, "wide").is_err());
    }

    #[test]
    fn the_verilator_harness_finds_the_lanes_in_the_top_ports() {
        let t = spec("tiny");
        let lanes_of = edgeflow_flow::verilator::input_lanes_of;
        assert_eq!(lanes_of(&crate::verilog(&t)), 1);
        assert_eq!(lanes_of(&crate::verilog_lanes(&t, 3)), 3);
    }

    #[test]
    fn beats_pad_the_last_lanes() {
        let mut s = vec![];
        push_word(&mut s, 3, 0x0002);
        push_inputs(&mut s, 3, &[1, 2, 3, 4]);
        push_words(&mut s, 3, &[9]);
        assert_eq!(s, vec![2, 0, 0, 1, 2, 3, 4, 0, 0, 9, 0, 0]);
        let mut one = vec![];
        push_inputs(&mut one, 1, &[5, 6]);
        assert_eq!(one, vec![5, 6]);
    }
}
