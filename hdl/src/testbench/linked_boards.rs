//! Several boards of a linked chain as the host drives them: each board's host-link words
//! (hdl/PROTOCOL.md, "Linked boards") in and out, every board on its own clock, the links
//! carried pin by pin between them (linked_chain.rs carries them the same way). What the
//! board tops add around these ports is the UART bridge every board top has.

use super::linked_chain::{carry_wires, feed};
use crate::host_link::host_stream::StreamError;
use crate::host_link::{OP_INFER, OP_LOAD, OP_READ, OP_TRAIN};
use crate::link::linked_board::LinkedBoard;
use crate::link::linked_stage::boundary_params;
use crate::testing::settle;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_reference::Schedule;
use rust_hdl::prelude::*;

/// A linked board with the smallest link FIFO.
pub type Board9<const W: usize> = LinkedBoard<W, 9, 10>;

pub struct BoardChain<const W: usize> {
    pub spec: Spec,
    pub ranges: Vec<(usize, usize)>,
    pub schedule: Schedule,
    pub boards: Vec<Box<Board9<W>>>,
    half_ps: Vec<u64>,
    next_ps: Vec<u64>,
    high: Vec<bool>,
    /// Rising edges per board so far.
    pub clocks: Vec<u64>,
}

/// What the host sends one board in an exchange and how it reads the answers: `expect`
/// words, at most one every `every` clocks (a host slower than the board).
pub struct Talk {
    pub send: Vec<u16>,
    pub expect: usize,
    pub every: u64,
}

impl<const W: usize> BoardChain<W> {
    /// As `LinkedChain::new`, with a link timeout of `timeout` receiver clocks.
    pub fn new(
        spec: &Spec,
        stages: &[(usize, usize)],
        link_delay: &[usize],
        periods_ps: &[u64],
        timeout: u32,
    ) -> Self {
        let schedule = Schedule::with_links(link_delay);
        let boards = stages
            .iter()
            .map(|&(a, b)| {
                let mut x = Box::new(Board9::<W>::new(
                    spec,
                    a..=b,
                    &schedule.ff,
                    &schedule.bp,
                    timeout,
                ));
                x.connect_all();
                settle(x.as_mut());
                x
            })
            .collect();
        let k = stages.len();
        BoardChain {
            spec: spec.clone(),
            ranges: stages.to_vec(),
            schedule,
            boards,
            half_ps: periods_ps.iter().map(|&p| p / 2).collect(),
            next_ps: (0..k as u64).map(|i| 1000 + 7919 * i).collect(),
            high: vec![false; k],
            clocks: vec![0; k],
        }
    }

    /// Every board exchanges its words at once, each on its own clock, until each has
    /// answered what its host expects; the answers per board.
    pub fn exchange(
        &mut self,
        talk: &[Talk],
        max_clocks: u64,
    ) -> Result<Vec<Vec<u16>>, StreamError> {
        let k = self.boards.len();
        assert_eq!(talk.len(), k);
        let mut sent = vec![0usize; k];
        let mut got: Vec<Vec<u16>> = vec![vec![]; k];
        let start = self.clocks.clone();
        while (0..k).any(|i| got[i].len() < talk[i].expect) {
            let i = (0..k).min_by_key(|&i| self.next_ps[i]).unwrap();
            self.next_ps[i] += self.half_ps[i];
            let rising = !self.high[i];
            self.high[i] = rising;
            let b = self.boards[i].as_mut();
            if rising {
                let t = &talk[i];
                let w = t.send.get(sent[i]).copied();
                b.in_valid.next = w.is_some();
                b.in_data.next = (w.unwrap_or(0) as u64).into();
                b.out_ready.next =
                    got[i].len() < t.expect && (self.clocks[i] - start[i]) % t.every == 0;
                settle(b);
                if b.in_valid.val() && b.in_ready.val() {
                    sent[i] += 1;
                }
                if b.out_valid.val() && b.out_ready.val() {
                    got[i].push(b.out_data.val().index() as u16);
                }
                b.clock.next = true.into();
                self.clocks[i] += 1;
            } else {
                b.clock.next = false.into();
            }
            settle(b);
            for l in [i.checked_sub(1), (i + 1 < k).then_some(i)]
                .into_iter()
                .flatten()
            {
                let (left, right) = self.boards.split_at_mut(l + 1);
                for forward in [true, false] {
                    carry_wires::<W, _>(left[l].as_mut(), right[0].as_mut(), forward, |_| {});
                }
            }
            if self.clocks[i] - start[i] > max_clocks {
                return Err(StreamError::NoAnswer {
                    max_clocks,
                    sent: sent[i],
                    words: talk[i].send.len(),
                    received: got[i].len(),
                    expect: talk[i].expect,
                });
            }
        }
        Ok(got)
    }

    /// LOAD_STATE words of board `i`: its junctions' weights, then their biases.
    pub fn load_words(&self, i: usize, state: &State) -> Vec<u16> {
        let (a, b) = self.ranges[i];
        let mut w = vec![OP_LOAD];
        w.extend(state.weights[a..=b].iter().flatten().map(|&v| v as u16));
        w.extend(state.biases[a..=b].iter().flatten().map(|&v| v as u16));
        w
    }

    /// Words board `i` answers READ_STATE with before its acknowledgement.
    pub fn state_words(&self, i: usize) -> usize {
        let (a, b) = self.ranges[i];
        (a..=b)
            .map(|j| self.spec.layers[j] * self.spec.fan_out[j] + self.spec.layers[j + 1])
            .sum()
    }

    /// Board `i`'s read-back words written into `st` at its junctions.
    pub fn put_state(&self, i: usize, words: &[u16], st: &mut State) {
        let (a, b) = self.ranges[i];
        let mut it = words.iter().map(|&w| w as i16 as i32);
        for j in a..=b {
            st.weights[j] = it.by_ref().take(st.weights[j].len()).collect();
        }
        for j in a..=b {
            st.biases[j] = it.by_ref().take(st.biases[j].len()).collect();
        }
    }

    /// TRAIN or INFER words of board `i` over `data`: the opcode, the sample count and what
    /// its sequencer takes from the host.
    pub fn stream_words(&self, i: usize, data: &Encoded, train: bool) -> Vec<u16> {
        let (a, b) = self.ranges[i];
        let p = boundary_params(&self.spec, &(a..=b), &self.schedule.ff, &self.schedule.bp);
        let mut w = vec![if train { OP_TRAIN } else { OP_INFER }, data.len() as u16];
        w.extend(feed(&p, data, train));
        w
    }

    pub fn read_words(&self) -> Vec<u16> {
        vec![OP_READ]
    }
}

#[cfg(test)]
#[path = "linked_boards/tests.rs"]
mod tests;
