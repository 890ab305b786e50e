//! The host side of the host-link protocol (hdl/PROTOCOL.md) over any word transport: the
//! serial port to a real board, the Verilator co-simulation and the in-process RTL
//! simulation all carry the same words, so one implementation of [`Board`] serves them all.

use super::Board;
use anyhow::{bail, Context, Result};
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_hdl::input_lanes::{beats_per_sample, push_inputs, push_word, push_words};

pub const LOAD_STATE: u16 = 0x0001;
pub const TRAIN: u16 = 0x0002;
pub const INFER: u16 = 0x0003;
pub const READ_STATE: u16 = 0x0004;
pub const ERROR: u16 = 0xEEEE;

/// An answer from the device arrived corrupted (a serial frame failed its sums) and the rest
/// of it was discarded: a command that changes nothing on the device may simply run again.
#[derive(Debug)]
pub struct AnswerCorrupted(pub String);

impl std::fmt::Display for AnswerCorrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AnswerCorrupted {}

/// Times a command that changes nothing (LOAD_STATE, INFER, READ_STATE) runs again after its
/// answer arrived corrupted.
pub const ANSWER_RETRIES: usize = 2;

/// Run `f` again while it fails with [`AnswerCorrupted`], at most [`ANSWER_RETRIES`] times.
fn retried<T>(what: &str, mut f: impl FnMut() -> Result<T>) -> Result<T> {
    let mut tries = 0;
    loop {
        match f() {
            Err(e) if e.downcast_ref::<AnswerCorrupted>().is_some() && tries < ANSWER_RETRIES => {
                tries += 1;
                crate::ui::note(format!("{e:#}; running {what} again"));
            }
            r => return r,
        }
    }
}

/// Moves 16-bit words to and from a device.
pub trait WordLink {
    /// Send one command's words (a command goes in one call).
    fn send(&mut self, words: &[u16]) -> Result<()>;
    /// Receive exactly `n` words, or fail with a reason (timeout, closed link).
    fn recv(&mut self, n: usize) -> Result<Vec<u16>>;
    /// [`WordLink::recv`], waiting up to `wait` for the first word where the link's own
    /// timeout is shorter (a command that runs for long on the board before it answers).
    fn recv_within(&mut self, n: usize, wait: std::time::Duration) -> Result<Vec<u16>> {
        let _ = wait;
        self.recv(n)
    }
    fn describe(&self) -> String;
}

/// The words of each command, given the spec both sides were built from.
pub struct Codec {
    pub spec: Spec,
    /// Input lanes of the device: every command goes in beats of this many words
    /// (hdl::input_lanes; 1 = the plain word stream, what a UART carries).
    pub lanes: usize,
}

fn word(v: i32, what: &str) -> Result<u16> {
    if !(i16::MIN as i32..=i16::MAX as i32).contains(&v) {
        bail!("{what} value {v} does not fit the 16-bit host link");
    }
    Ok(v as i16 as u16)
}

impl Codec {
    pub fn load_state(&self, state: &State) -> Result<Vec<u16>> {
        state.check_shape(&self.spec)?;
        let mut w = vec![LOAD_STATE];
        for j in &state.weights {
            for &v in j {
                w.push(word(v, "weight")?);
            }
        }
        for j in &state.biases {
            for &v in j {
                w.push(word(v, "bias")?);
            }
        }
        Ok(self.command(&w))
    }

    /// Words that each go in a beat of their own.
    pub fn command(&self, words: &[u16]) -> Vec<u16> {
        let mut b = Vec::with_capacity(words.len() * self.lanes);
        push_words(&mut b, self.lanes, words);
        b
    }

    fn samples(&self, op: u16, data: &Encoded, labels: bool) -> Result<Vec<u16>> {
        let n = data.len();
        if n == 0 || n > 65535 {
            bail!("a host-link command carries 1 to 65535 samples, got {n}");
        }
        if data.inputs_per_sample != self.spec.layers[0] {
            bail!(
                "samples have {} inputs, the spec's first layer has {}",
                data.inputs_per_sample,
                self.spec.layers[0]
            );
        }
        let lanes = self.lanes;
        let mut w = Vec::with_capacity(
            lanes * (2 + n * beats_per_sample(data.inputs_per_sample, lanes, labels)),
        );
        push_words(&mut w, lanes, &[op, n as u16]);
        let mut x = Vec::with_capacity(data.inputs_per_sample);
        for s in 0..n {
            x.clear();
            for &v in &data.inputs[s * data.inputs_per_sample..(s + 1) * data.inputs_per_sample] {
                x.push(word(v, "input")?);
            }
            push_inputs(&mut w, lanes, &x);
            if labels {
                push_word(&mut w, lanes, data.labels[s] as u16);
            }
        }
        Ok(w)
    }

    pub fn train(&self, data: &Encoded) -> Result<Vec<u16>> {
        self.samples(TRAIN, data, true)
    }

    pub fn infer(&self, data: &Encoded) -> Result<Vec<u16>> {
        self.samples(INFER, data, false)
    }

    pub fn state_words(&self) -> usize {
        self.spec.state_words()
    }

    /// A state from READ_STATE's answer (without its trailing acknowledgement).
    pub fn parse_state(&self, words: &[u16]) -> State {
        let mut it = words.iter().map(|&w| w as i16 as i32);
        let l = self.spec.junctions();
        let weights = (0..l)
            .map(|j| {
                it.by_ref()
                    .take(self.spec.layers[j] * self.spec.fan_out[j])
                    .collect()
            })
            .collect();
        let biases = (0..l)
            .map(|j| it.by_ref().take(self.spec.layers[j + 1]).collect())
            .collect();
        State { weights, biases }
    }
}

fn expect_ack(got: u16, ack: u16, what: &str) -> Result<()> {
    if got == ERROR {
        bail!("the device rejected the {what} command (answered 0xEEEE)");
    }
    if got != ack {
        bail!("{what}: expected acknowledgement {ack:#06x}, device sent {got:#06x}");
    }
    Ok(())
}

/// A board reached through the host-link protocol.
pub struct HostLinkBoard<L: WordLink> {
    pub link: L,
    pub codec: Codec,
    /// Clocks the device reported for its last TRAIN / INFER command (32-bit counter).
    pub last_clocks: Option<u64>,
    last_train_samples: usize,
    last_train_clocks: Option<u64>,
}

impl<L: WordLink> HostLinkBoard<L> {
    /// A device built with `lanes` input lanes (its link carries beats of that many words).
    pub fn with_lanes(spec: &Spec, link: L, lanes: usize) -> Self {
        HostLinkBoard {
            link,
            codec: Codec {
                spec: spec.clone(),
                lanes,
            },
            last_clocks: None,
            last_train_samples: 0,
            last_train_clocks: None,
        }
    }

    /// Open with the spec's initial state loaded, as every other backend starts.
    pub fn with_initial_state(spec: &Spec, link: L) -> Result<Self> {
        Self::with_initial_state_lanes(spec, link, 1)
    }

    pub fn with_initial_state_lanes(spec: &Spec, link: L, lanes: usize) -> Result<Self> {
        let mut b = Self::with_lanes(spec, link, lanes);
        b.load_state(&State::initial(spec))?;
        Ok(b)
    }
}

impl<L: WordLink> Board for HostLinkBoard<L> {
    fn name(&self) -> String {
        self.link.describe()
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        let w = self.codec.load_state(state)?;
        retried("LOAD_STATE", || {
            self.link.send(&w)?;
            let a = self
                .link
                .recv(1)
                .context("waiting for LOAD_STATE's acknowledgement")?;
            expect_ack(a[0], 0xA001, "LOAD_STATE")
        })
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        let w = self.codec.train(data)?;
        self.link.send(&w)?;
        let a = self
            .link
            .recv(3)
            .context("waiting for TRAIN's acknowledgement")?;
        expect_ack(a[0], 0xA002, "TRAIN")?;
        let clocks = a[1] as u64 | (a[2] as u64) << 16;
        self.last_clocks = Some(clocks);
        self.last_train_clocks = Some(clocks);
        self.last_train_samples = data.len();
        Ok(())
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        let mut out = Vec::with_capacity(data.len());
        // One INFER command carries at most 65535 samples; inference carries no state over.
        for start in (0..data.len()).step_by(65535) {
            let idx: Vec<usize> = (start..data.len().min(start + 65535)).collect();
            let part = data.select(&idx);
            let w = self.codec.infer(&part)?;
            let n = part.len();
            let a = retried("INFER", || {
                self.link.send(&w)?;
                self.link
                    .recv(n + 3)
                    .context("waiting for INFER's predictions")
            })?;
            expect_ack(a[n], 0xA003, "INFER")?;
            self.last_clocks = Some(a[n + 1] as u64 | (a[n + 2] as u64) << 16);
            out.extend(a[..n].iter().map(|&p| p as usize));
        }
        Ok(out)
    }
    fn read_state(&mut self) -> Result<State> {
        let n = self.codec.state_words();
        let w = self.codec.command(&[READ_STATE]);
        let a = retried("READ_STATE", || {
            self.link.send(&w)?;
            self.link
                .recv(n + 1)
                .context("waiting for READ_STATE's words")
        })?;
        expect_ack(a[n], 0xA004, "READ_STATE")?;
        Ok(self.codec.parse_state(&a[..n]))
    }
    /// Device clocks of the last TRAIN command per sample (pipeline fill and drain included).
    fn clocks_per_sample(&self) -> Option<f64> {
        match (self.last_train_clocks, self.last_train_samples) {
            (Some(c), n) if n > 0 => Some(c as f64 / n as f64),
            _ => None,
        }
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.codec.spec.edge_ops_per_sample() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_through_the_words() {
        let spec = Spec::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../specs/tiny.toml"
        )))
        .unwrap();
        let c = Codec {
            spec: spec.clone(),
            lanes: 1,
        };
        let mut s = State::initial(&spec);
        s.biases[1][2] = -5;
        let w = c.load_state(&s).unwrap();
        assert_eq!(w[0], LOAD_STATE);
        assert_eq!(w.len(), 1 + c.state_words());
        let back = c.parse_state(&w[1..]);
        assert_eq!(back.sha256(), s.sha256());
    }
}
