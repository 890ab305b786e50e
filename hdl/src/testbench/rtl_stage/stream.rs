//! One simulated stage's stream on its own, its boundary vectors passing through a
//! [`StageIo`]: the form a stage takes when its neighbours run elsewhere (another process,
//! under MPI), or when it infers a batch alone. Block cycle by block cycle it does what
//! [`RtlChain::run`](super::RtlChain::run) does for each of its stages, in the same order, so
//! with neighbours that do the same the bits are the chain's.

use super::StageSim;
use crate::testbench::error::SimError;
use crate::testing::settle;
use std::time::Instant;

/// Where a stage's boundary vectors come from and go to; `n` is the sample.
pub trait StageIo {
    /// The activations of the stage's first layer (from its left neighbour).
    fn recv_left(&mut self, n: usize) -> Result<Vec<i32>, SimError>;
    /// The activations of the stage's last layer (to its right neighbour).
    fn send_right(&mut self, n: usize, a: Vec<i32>) -> Result<(), SimError>;
    /// The delta sums the right neighbour back-propagated to the stage's last layer.
    fn recv_right(&mut self, n: usize) -> Result<Vec<i32>, SimError>;
    /// The delta sums of the stage's first layer (to its left neighbour).
    fn send_left(&mut self, n: usize, sums: Vec<i32>) -> Result<(), SimError>;
}

impl StageSim {
    /// One stream of `samples`: train (FF, BP, UP) or infer (FF alone). The stage holding the
    /// first junction reads `inputs` (sample-major) and the one holding the last reads
    /// `labels` when training; it also returns every sample's prediction when inferring.
    pub fn stream(
        &mut self,
        samples: usize,
        inputs: &[i32],
        labels: &[usize],
        train: bool,
        io: &mut dyn StageIo,
    ) -> Result<Vec<usize>, SimError> {
        if samples > 65535 {
            return Err(SimError::StreamSamples { samples });
        }
        let l = self.layers.len() - 1;
        let (first, last) = (self.first, self.last);
        let mut pred = vec![0; if train || last + 1 < l { 0 } else { samples }];
        if samples == 0 {
            return Ok(pred);
        }
        let stage_total = if train {
            samples + self.bp[first]
        } else {
            samples + self.ff[last]
        };
        let n0 = self.layers[0];
        self.begin(samples, train);
        // one block cycle more than the stage runs: the readout of its last delta sums
        for t in 0..=stage_total {
            let t0 = Instant::now();
            if train && t > 0 && first > 0 {
                if let Some(n) = self.bp_sample(first, t - 1, samples) {
                    let v = self.read_left();
                    io.send_left(n, v)?;
                }
            }
            if t == stage_total {
                self.stats.seconds += t0.elapsed().as_secs_f64();
                break;
            }
            if train && last + 1 < l {
                if let Some(n) = self.bp_sample(last, t, samples) {
                    let v = io.recv_right(n)?;
                    self.write_right(t, &v);
                }
            }
            if first == 0 {
                if t < samples {
                    self.write_input(t, &inputs[t * n0..(t + 1) * n0]);
                }
            } else if let Some(n) = self.ff_sample(first, t + 1, samples) {
                let v = io.recv_left(n)?;
                self.write_left(&v);
            }
            if last + 1 == l && train {
                if let Some(n) = self.ff_sample(last, t, samples) {
                    self.write_label(n, labels[n]);
                }
            }
            let (out, p) = self.run_block(t)?;
            if let Some(n) = self.ff_sample(last, t, samples) {
                if last + 1 < l {
                    let v = out.ok_or(SimError::NoActivations {
                        first: first + 1,
                        last: last + 1,
                        sample: n,
                        t,
                    })?;
                    io.send_right(n, v)?;
                } else if !train {
                    pred[n] = p;
                }
            }
            self.stats.seconds += t0.elapsed().as_secs_f64();
        }
        settle(self.stage.as_mut());
        let got = self.stage.started.val().to_u32() as usize;
        if got != stage_total {
            return Err(SimError::BlockCycles {
                first: first + 1,
                last: last + 1,
                got,
                want: stage_total,
            });
        }
        Ok(pred)
    }
}
