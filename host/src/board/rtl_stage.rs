//! `edgeflow train --plan … --backend rtl`: one simulated RTL stage (`hdl::stage::Stage`) per
//! board of the plan, joined by links of the plan's delays (`sim::rtl_stage::RtlChain`).
//! Bit-identical to the reference model with the plan's staleness; each stage reports the
//! block cycle its controller ran, in clocks, next to the plan's prediction.

use super::Board;
use crate::multiboard::StageTiming;
use anyhow::Result;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_hdl::testbench::rtl_stage::RtlChain;
use std::sync::{Arc, Mutex};

pub struct RtlPipeline {
    pub chain: RtlChain,
    /// Per stage, summed over training streams; `clocks_per_block_cycle` as simulated.
    pub timings: Arc<Mutex<Vec<StageTiming>>>,
}

impl RtlPipeline {
    /// Stage `i` of `ranges` (0-based inclusive junctions) as simulated board `i`, built as
    /// that board builds (`builds[i]`: registered reads, deep pipeline), loaded with the
    /// spec's initial state.
    pub fn new(
        spec: &Spec,
        ranges: &[(usize, usize)],
        link_delay: &[usize],
        builds: &[(bool, bool)],
    ) -> Result<Self> {
        let mut chain = RtlChain::with_builds(spec, ranges, link_delay, builds)?;
        chain.load_state(&State::initial(spec))?;
        Ok(RtlPipeline {
            timings: Arc::new(Mutex::new(vec![StageTiming::default(); ranges.len()])),
            chain,
        })
    }
}

impl Board for RtlPipeline {
    fn name(&self) -> String {
        format!("rtl x{} stages", self.chain.stages.len())
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        Ok(self.chain.load_state(state)?)
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        let before: Vec<_> = self.chain.stages.iter().map(|s| s.stats.clone()).collect();
        // One stream, like the reference model's `train` (a stream fills and drains the
        // pipeline once); `edgeflow train` shows the progress per epoch.
        self.chain.run(data, true)?;
        let mut tm = self.timings.lock().unwrap();
        for ((acc, s), b) in tm.iter_mut().zip(&self.chain.stages).zip(before) {
            acc.compute_seconds += s.stats.seconds - b.seconds;
            acc.block_cycles += s.stats.block_cycles - b.block_cycles;
            acc.clocks_per_block_cycle = Some(s.stats.clocks_per_block_cycle);
        }
        Ok(())
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        let mut out = Vec::with_capacity(data.len());
        for chunk in (0..data.len()).collect::<Vec<_>>().chunks(65535) {
            out.extend(self.chain.run(&data.select(chunk), false)?);
        }
        Ok(out)
    }
    fn read_state(&mut self) -> Result<State> {
        Ok(self.chain.read_state())
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.chain.spec.edge_ops_per_sample() as u64
    }
}
