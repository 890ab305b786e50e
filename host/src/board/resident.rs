//! A board with its data set resident (hdl/PROTOCOL.md, "Resident data"), over any word
//! link: upload the records once, run the epochs on chip, infer over resident records, read
//! the weights back. Every step counts its clocks: the device's own count of each command,
//! plus the time its words spend on a UART line (ten bit times a byte) in both directions.

use super::hostlink::{HostLinkBoard, WordLink};
use super::Board;
use anyhow::{bail, Context, Result};
use edgeflow_core::resident::pack;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_hdl::resident::*;
use edgeflow_hdl::resident_protocol as rp;

/// Clocks spent by each phase of a resident run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ResidentClocks {
    pub load_clocks: u64,
    pub upload_clocks: u64,
    pub train_clocks: u64,
    pub infer_clocks: u64,
    pub readback_clocks: u64,
}

impl ResidentClocks {
    pub fn total(&self) -> u64 {
        self.load_clocks
            + self.upload_clocks
            + self.train_clocks
            + self.infer_clocks
            + self.readback_clocks
    }
}

/// Whether `train` and `test` samples fit a data memory of `words` words, as records of
/// `spec` and within one command's 65,535 samples each; the error names the capacity.
pub fn check_fits(spec: &Spec, words: usize, train: usize, test: usize) -> Result<()> {
    let r = spec.record_words();
    let capacity = words / r;
    if train + test > capacity {
        bail!(
            "{} samples ({train} training, {test} test) at {r} words each do not fit the board's data memory of {words} words ({capacity} samples); use fewer samples or a smaller input_bits in the spec",
            train + test
        );
    }
    if train > 65535 || test > 65535 {
        bail!("a resident run takes at most 65535 training and 65535 test samples");
    }
    Ok(())
}

pub struct ResidentBoard<L: WordLink> {
    pub board: HostLinkBoard<L>,
    spec: Spec,
    /// Clocks per UART bit; 0 for a link without a line (the word-level simulation).
    clocks_per_bit: u64,
    capacity_words: usize,
    pub clocks: ResidentClocks,
}

impl<L: WordLink> ResidentBoard<L> {
    pub fn new(spec: &Spec, link: L, clocks_per_bit: u16, capacity_words: usize) -> Self {
        ResidentBoard {
            board: HostLinkBoard::with_lanes(spec, link, 1),
            spec: spec.clone(),
            clocks_per_bit: clocks_per_bit as u64,
            capacity_words,
            clocks: ResidentClocks::default(),
        }
    }

    /// Clocks that `words` take on the line (two bytes a word, ten bits a byte).
    fn line(&self, words: usize) -> u64 {
        words as u64 * 20 * self.clocks_per_bit
    }

    pub fn load_state(&mut self, s: &State) -> Result<()> {
        self.board.load_state(s)?;
        self.clocks.load_clocks += self.line(1 + self.spec.state_words() + 1);
        Ok(())
    }

    /// Upload `train` then `test` as one resident set (train from address 0, test after it).
    /// Returns the word address of the test records.
    pub fn upload(&mut self, train: &Encoded, test: &Encoded) -> Result<usize> {
        check_fits(&self.spec, self.capacity_words, train.len(), test.len())?;
        let mut words = pack(&self.spec, train);
        let test_at = words.len();
        words.extend(pack(&self.spec, test));
        for (k, f) in rp::upload_frames(0, &words).iter().enumerate() {
            self.board.link.send(f)?;
            let a = self
                .board
                .link
                .recv(1)
                .with_context(|| format!("waiting for UPLOAD frame {}'s answer", k + 1))?;
            if a[0] == ERROR_FRAME {
                bail!(
                    "UPLOAD frame {} of {} (words {}…{}) arrived corrupted (checksum mismatch): the board marked its data set corrupt and trains on none of it. Check the serial line, or use a lower --baud",
                    k + 1,
                    words.len().div_ceil(rp::FRAME_WORDS),
                    k * rp::FRAME_WORDS,
                    (k * rp::FRAME_WORDS + rp::FRAME_WORDS).min(words.len()) - 1
                );
            }
            if a[0] != ACK_UPLOAD {
                bail!("UPLOAD frame {}: expected {ACK_UPLOAD:#06x}, the board answered {:#06x}; is the resident bitstream loaded?", k + 1, a[0]);
            }
            let c = self.board.link.recv(2)?;
            self.clocks.upload_clocks += self.line(1) + rp::clocks(&c) + self.line(3);
        }
        Ok(test_at)
    }

    /// `epochs` epochs on chip over the first `n` records, in the reference's order from
    /// epoch `first`.
    pub fn train(&mut self, n: usize, first: usize, epochs: usize) -> Result<()> {
        let w = rp::train_resident(n, epochs, first);
        self.board.link.send(&w)?;
        let a = self
            .board
            .link
            .recv(1)
            .context("waiting for TRAIN_RESIDENT's answer")?;
        if a[0] == ERROR_REFUSED {
            bail!("the board refused TRAIN_RESIDENT: its resident data set is marked corrupt");
        }
        if a[0] != ACK_TRAIN_RESIDENT {
            bail!(
                "TRAIN_RESIDENT: expected {ACK_TRAIN_RESIDENT:#06x}, the board answered {:#06x}",
                a[0]
            );
        }
        let c = self.board.link.recv(3)?;
        self.clocks.train_clocks += self.line(1) + rp::clocks(&c) + self.line(4);
        Ok(())
    }

    /// Predictions for the `n` records from word address `addr`.
    pub fn infer(&mut self, addr: usize, n: usize) -> Result<Vec<usize>> {
        let w = rp::infer_resident(addr, n);
        self.board.link.send(&w)?;
        let first = self
            .board
            .link
            .recv(1)
            .context("waiting for INFER_RESIDENT's answer")?;
        if first[0] == ERROR_REFUSED {
            bail!("the board refused INFER_RESIDENT: its resident data set is marked corrupt");
        }
        let mut preds = first;
        preds.extend(self.board.link.recv(n)?);
        if preds[n] != ACK_INFER_RESIDENT {
            bail!(
                "INFER_RESIDENT: expected {n} predictions and {ACK_INFER_RESIDENT:#06x}, got {:#06x} after them",
                preds[n]
            );
        }
        let c = self.board.link.recv(3)?;
        // the predictions leave while the run goes on: the device count includes them
        self.clocks.infer_clocks += self.line(1) + rp::clocks(&c) + self.line(4);
        Ok(preds[..n].iter().map(|&p| p as usize).collect())
    }

    pub fn read_state(&mut self) -> Result<State> {
        let s = self.board.read_state()?;
        self.clocks.readback_clocks += self.line(1 + self.spec.state_words() + 1);
        Ok(s)
    }
}
