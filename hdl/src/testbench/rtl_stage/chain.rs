//! Several simulated stages joined by links of the plan's delays, checked against the
//! reference model under the chain's schedule.

use super::*;
use crate::testing::settle;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_reference::Schedule;
use std::collections::HashMap;
use std::time::Instant;

/// The boards of a chain, each a simulated stage, and the links between them.
pub struct RtlChain {
    pub spec: Spec,
    pub stages: Vec<StageSim>,
    pub link_delay: Vec<usize>,
    pub schedule: Schedule,
}

/// A vector in flight on a link: the block cycle it entered, its values.
type Link<T> = HashMap<usize, (usize, Vec<T>)>;

fn take<T>(
    link: &mut Link<T>,
    n: usize,
    t: usize,
    d: usize,
    what: &str,
) -> Result<Vec<T>, SimError> {
    let (t0, v) = link.remove(&n).ok_or_else(|| SimError::LinkMissing {
        what: what.to_string(),
        sample: n,
        t,
    })?;
    if t - t0 != d {
        return Err(SimError::LinkDelay {
            what: what.to_string(),
            sample: n,
            took: t - t0,
            delay: d,
        });
    }
    Ok(v)
}

impl RtlChain {
    /// `stages`: 0-based inclusive junction ranges covering the network in order;
    /// `link_delay[j]`: block cycles between junction `j` and `j+1` (0 inside a stage).
    pub fn new(
        spec: &Spec,
        stages: &[(usize, usize)],
        link_delay: &[usize],
    ) -> Result<RtlChain, SimError> {
        Self::with_builds(
            spec,
            stages,
            link_delay,
            &vec![(false, false); stages.len()],
        )
    }

    /// [`RtlChain::new`] with each stage built as its board builds: `builds[i]` turns on
    /// registered reads and the deep pipeline for stage `i` (or-ed with the spec's), as a
    /// board top does (a longer block cycle, the same bits).
    pub fn with_builds(
        spec: &Spec,
        stages: &[(usize, usize)],
        link_delay: &[usize],
        builds: &[(bool, bool)],
    ) -> Result<RtlChain, SimError> {
        let l = spec.junctions();
        if builds.len() != stages.len() {
            return Err(SimError::Builds {
                builds: builds.len(),
                stages: stages.len(),
            });
        }
        if link_delay.len() + 1 != l {
            return Err(SimError::LinkDelays {
                entries: link_delay.len(),
                junctions: l,
                need: l - 1,
            });
        }
        let mut next = 0;
        for &(a, b) in stages {
            if a != next || b < a || b >= l {
                return Err(SimError::StageOrder {
                    stages: stages.to_vec(),
                    junctions: l,
                });
            }
            next = b + 1;
        }
        if next != l {
            return Err(SimError::StageCover {
                stages: stages.to_vec(),
                junctions: l,
            });
        }
        for (j, &d) in link_delay.iter().enumerate() {
            if d > 0 && !stages.iter().any(|&(_, b)| b == j) {
                return Err(SimError::DelayInsideStage {
                    delay: d,
                    left: j + 1,
                    right: j + 2,
                });
            }
        }
        let schedule = Schedule::with_links(link_delay);
        let stages = stages
            .iter()
            .zip(builds)
            .map(|(&(a, b), &(rr, deep))| {
                let mut built = spec.clone();
                built.registered_reads |= rr;
                built.deep_pipeline |= deep;
                StageSim::new(&built, a, b, &schedule)
            })
            .collect();
        Ok(RtlChain {
            spec: spec.clone(),
            stages,
            link_delay: link_delay.to_vec(),
            schedule,
        })
    }

    pub fn load_state(&mut self, state: &State) -> Result<(), SimError> {
        state.check_shape(&self.spec)?;
        for s in &mut self.stages {
            s.load_state(state);
        }
        Ok(())
    }

    pub fn read_state(&mut self) -> State {
        let mut st = State::initial(&self.spec);
        for s in &mut self.stages {
            s.read_state(&mut st);
        }
        st
    }

    /// One stream: train (FF, BP, UP; fill and drain) or infer (FF alone). Returns the
    /// prediction of every sample (inference) or an empty list (training).
    pub fn run(&mut self, data: &Encoded, train: bool) -> Result<Vec<usize>, SimError> {
        let samples = data.len();
        if samples > 65535 {
            return Err(SimError::StreamSamples { samples });
        }
        if samples == 0 {
            return Ok(vec![]);
        }
        let (l, k) = (self.spec.junctions(), self.stages.len());
        let sched = self.schedule.clone();
        let total = if train {
            samples + sched.bp[0]
        } else {
            samples + sched.ff[l - 1]
        };
        for s in &mut self.stages {
            s.begin(samples, train);
        }
        // fwd[i]: activations leaving stage i; bwd[i]: delta sums arriving at stage i
        let mut fwd: Vec<Link<i32>> = (0..k).map(|_| HashMap::new()).collect();
        let mut bwd: Vec<Link<i32>> = (0..k).map(|_| HashMap::new()).collect();
        let mut pred = vec![0; if train { 0 } else { samples }];
        for t in 0..total {
            if train && t > 0 {
                for i in 1..k {
                    let st = &mut self.stages[i];
                    if let Some(n) = st.bp_sample(st.first, t - 1, samples) {
                        let t0 = Instant::now();
                        let v = st.read_left();
                        st.stats.seconds += t0.elapsed().as_secs_f64();
                        bwd[i - 1].insert(n, (t, v));
                    }
                }
            }
            for i in 0..k {
                let st = &mut self.stages[i];
                let (first, last) = (st.first, st.last);
                let stage_total = if train {
                    samples + sched.bp[first]
                } else {
                    samples + sched.ff[last]
                };
                if t >= stage_total {
                    continue;
                }
                let t0 = Instant::now();
                if train && last + 1 < l {
                    if let Some(n) = st.bp_sample(last, t, samples) {
                        let v = take(&mut bwd[i], n, t, self.link_delay[last], "delta sums")?;
                        st.write_right(t, &v);
                    }
                }
                if first == 0 {
                    if t < samples {
                        st.write_input(t, data.input(t));
                    }
                } else if let Some(n) = st.ff_sample(first, t + 1, samples) {
                    let v = take(
                        &mut fwd[i - 1],
                        n,
                        t,
                        self.link_delay[first - 1],
                        "activations",
                    )?;
                    st.write_left(&v);
                }
                if last + 1 == l {
                    if let Some(n) = st.ff_sample(last, t, samples) {
                        st.write_label(n, data.labels[n]);
                    }
                }
                let (out, p) = st.run_block(t)?;
                if let Some(n) = st.ff_sample(last, t, samples) {
                    if last + 1 < l {
                        let v = out.ok_or(SimError::NoActivations {
                            first: first + 1,
                            last: last + 1,
                            sample: n,
                            t,
                        })?;
                        fwd[i].insert(n, (t, v));
                    } else if !train {
                        pred[n] = p;
                    }
                }
                st.stats.seconds += t0.elapsed().as_secs_f64();
            }
        }
        for s in &mut self.stages {
            settle(s.stage.as_mut());
            let want = if train {
                samples + sched.bp[s.first]
            } else {
                samples + sched.ff[s.last]
            };
            let got = s.stage.started.val().to_u32() as usize;
            if got != want {
                return Err(SimError::BlockCycles {
                    first: s.first + 1,
                    last: s.last + 1,
                    got,
                    want,
                });
            }
        }
        Ok(pred)
    }
}

/// Result of [`check_chain`]: a chain's run against the reference model with its staleness.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChainReport {
    pub stages: Vec<(usize, usize)>,
    pub link_delay: Vec<usize>,
    pub staleness: Vec<usize>,
    pub samples: usize,
    /// Block cycles of the training stream (fill and drain).
    pub block_cycles: usize,
    /// `None` when every weight, bias and prediction matches.
    pub first_difference: Option<String>,
    pub state_sha256: String,
    pub reference_sha256: String,
    pub stage_stats: Vec<StageStats>,
}

/// Load the spec's initial state into a chain of simulated stages, train one stream on
/// `data`, infer on it, read everything back and compare with the reference model run with
/// the chain's staleness vector.
pub fn check_chain(
    spec: &Spec,
    stages: &[(usize, usize)],
    link_delay: &[usize],
    data: &Encoded,
) -> Result<ChainReport, SimError> {
    check_chain_from(spec, &State::initial(spec), stages, link_delay, data)
}

/// [`check_chain`] from the state `init`.
pub fn check_chain_from(
    spec: &Spec,
    init: &State,
    stages: &[(usize, usize)],
    link_delay: &[usize],
    data: &Encoded,
) -> Result<ChainReport, SimError> {
    let mut chain = RtlChain::new(spec, stages, link_delay)?;
    let init = init.clone();
    chain.load_state(&init)?;
    let staleness = chain.schedule.staleness();
    let mut reference =
        edgeflow_reference::Reference::with_state(spec, init.clone(), staleness.clone())?;
    let mut first_difference = init
        .first_difference(&chain.read_state(), Some(&reference.patterns))
        .map(|d| format!("after loading: {d}"));
    chain.run(data, true)?;
    reference.train(data);
    let got = chain.read_state();
    if first_difference.is_none() {
        first_difference = reference
            .state
            .first_difference(&got, Some(&reference.patterns));
    }
    let pred = chain.run(data, false)?;
    if first_difference.is_none() {
        first_difference =
            crate::testbench::rtl::first_prediction_difference(&reference.infer(data), &pred);
    }
    Ok(ChainReport {
        stages: stages.to_vec(),
        link_delay: link_delay.to_vec(),
        block_cycles: chain.schedule.block_cycles(data.len()),
        staleness,
        samples: data.len(),
        first_difference,
        state_sha256: got.sha256(),
        reference_sha256: reference.state.sha256(),
        stage_stats: chain.stages.iter().map(|s| s.stats.clone()).collect(),
    })
}
