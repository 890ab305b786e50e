//! A board with its data set resident (hdl/PROTOCOL.md, "Resident data"), over any word
//! link: upload the records once, run the epochs on chip, infer over resident records, read
//! the weights back. Every step counts its clocks: the device's own count of each command,
//! plus the time its words spend on a UART line in both directions (ten bit times a byte, in
//! the serial frames of hdl/PROTOCOL.md: a word from the board takes eight bytes).

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

/// The UART rates a resident board top is built for when none is asked, fastest first: the
/// FTDI parts of the iCEBreaker and the ULX3S carry 3 Mbaud; the first one the clock
/// divides to within 2 % is taken.
pub const RESIDENT_BAUDS: [u32; 4] = [3_000_000, 2_000_000, 1_000_000, 115_200];

pub fn default_baud(mhz: f64) -> u32 {
    RESIDENT_BAUDS
        .into_iter()
        .find(|&b| edgeflow_hdl::board_top::clocks_per_bit(mhz, b).is_ok())
        .unwrap_or(115_200)
}

/// Bytes on the line when the host sends `words` in serial frames (hdl/PROTOCOL.md, "Serial
/// framing"): per frame of up to 64 words its length and two sums, and the board's FRAME_OK
/// before the next frame goes.
fn host_bytes(words: usize) -> u64 {
    let frames = words.div_ceil(edgeflow_hdl::uart_frames::FRAME_WORDS) as u64;
    2 * (words as u64 + 3 * frames) + 2 * frames
}

/// Bytes on the line for `words` from the board: each word in a frame of its own (four words).
fn board_bytes(words: usize) -> u64 {
    8 * words as u64
}

impl ResidentClocks {
    /// A resident training run over a UART of `clocks_per_bit`, from a data memory of
    /// `read_clocks` (`DataMemoryKind::read_clocks`), projected without a board or a
    /// simulation: upload `uploaded` samples, `epochs` epochs on chip over the first `train`,
    /// read the weights back (no initial load, no inference). Line time is every byte in both directions at ten bit
    /// times, serial frames and answers included; the epochs are
    /// [`rp::train_resident_clocks_estimate`] for the network as built (`spec` with the
    /// board's pipeline options). The host's own latency between frames is not counted.
    pub fn projected(
        spec: &Spec,
        clocks_per_bit: u64,
        read_clocks: u64,
        uploaded: usize,
        train: usize,
        epochs: usize,
    ) -> ResidentClocks {
        let line = |bytes: u64| bytes * 10 * clocks_per_bit;
        let r = spec.record_words();
        let words = uploaded * r;
        let upload = (0..words.div_ceil(rp::FRAME_WORDS))
            .map(|k| {
                let m = (words - k * rp::FRAME_WORDS).min(rp::FRAME_WORDS);
                line(host_bytes(m + 6) + board_bytes(3))
            })
            .sum();
        let command = rp::train_resident(train, epochs, 0).len();
        ResidentClocks {
            load_clocks: 0,
            upload_clocks: upload,
            train_clocks: line(host_bytes(command) + board_bytes(4))
                + rp::train_resident_clocks_estimate(spec, train, epochs, read_clocks),
            infer_clocks: 0,
            readback_clocks: line(host_bytes(1) + board_bytes(spec.state_words() + 1)),
        }
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
    /// How long TRAIN_RESIDENT and INFER_RESIDENT may run before their first answer word
    /// (the link's own timeout where this is shorter).
    pub answer_wait: std::time::Duration,
    pub clocks: ResidentClocks,
}

impl<L: WordLink> ResidentBoard<L> {
    pub fn new(spec: &Spec, link: L, clocks_per_bit: u16, capacity_words: usize) -> Self {
        ResidentBoard {
            board: HostLinkBoard::with_lanes(spec, link, 1),
            spec: spec.clone(),
            clocks_per_bit: clocks_per_bit as u64,
            capacity_words,
            answer_wait: std::time::Duration::ZERO,
            clocks: ResidentClocks::default(),
        }
    }

    /// Clocks that `bytes` take on the line (ten bit times a byte).
    fn line(&self, bytes: u64) -> u64 {
        bytes * 10 * self.clocks_per_bit
    }

    pub fn load_state(&mut self, s: &State) -> Result<()> {
        self.board.load_state(s)?;
        self.clocks.load_clocks +=
            self.line(host_bytes(1 + self.spec.state_words()) + board_bytes(1));
        Ok(())
    }

    /// Upload `train` then `test` as one resident set (train from address 0, test after it).
    /// Returns the word address of the test records.
    pub fn upload(&mut self, train: &Encoded, test: &Encoded) -> Result<usize> {
        check_fits(&self.spec, self.capacity_words, train.len(), test.len())?;
        let mut words = pack(&self.spec, train);
        let test_at = words.len();
        words.extend(pack(&self.spec, test));
        let frames = rp::upload_frames(0, &words);
        let pb = indicatif::ProgressBar::new(frames.len() as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] frame {pos}/{len} ({per_sec}, eta {eta})",
            )
            .unwrap()
            .progress_chars("=> "),
        );
        pb.set_prefix("upload");
        let pb = crate::ui::show(pb);
        for (k, f) in frames.iter().enumerate() {
            pb.set_position(k as u64);
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
            self.clocks.upload_clocks += self.line(2) + rp::clocks(&c) + self.line(board_bytes(3));
        }
        pb.finish_and_clear();
        Ok(test_at)
    }

    /// `epochs` epochs on chip over the first `n` records, in the reference's order from
    /// epoch `first`.
    pub fn train(&mut self, n: usize, first: usize, epochs: usize) -> Result<()> {
        let w = rp::train_resident(n, epochs, first);
        self.board.link.send(&w)?;
        let pb = crate::ui::spinner(&format!("{epochs} epochs of {n} samples on the board"));
        let a = self
            .board
            .link
            .recv_within(1, self.answer_wait)
            .context("waiting for TRAIN_RESIDENT's answer");
        pb.finish_and_clear();
        let a = a?;
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
        self.clocks.train_clocks += self.line(2) + rp::clocks(&c) + self.line(board_bytes(4));
        Ok(())
    }

    /// Predictions for the `n` records from word address `addr`.
    pub fn infer(&mut self, addr: usize, n: usize) -> Result<Vec<usize>> {
        let w = rp::infer_resident(addr, n);
        self.board.link.send(&w)?;
        let first = self
            .board
            .link
            .recv_within(1, self.answer_wait)
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
        self.clocks.infer_clocks += self.line(2) + rp::clocks(&c) + self.line(board_bytes(4));
        Ok(preds[..n].iter().map(|&p| p as usize).collect())
    }

    pub fn read_state(&mut self) -> Result<State> {
        let s = self.board.read_state()?;
        self.clocks.readback_clocks +=
            self.line(host_bytes(1) + board_bytes(self.spec.state_words() + 1));
        Ok(s)
    }
}
