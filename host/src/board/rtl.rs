//! The RTL simulation as a board: the rust-hdl network built from the spec, driven through
//! its host link exactly as a real board would be.

use super::Board;
use anyhow::Result;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_hdl::testbench::rtl::RtlSim;

pub struct RtlBoard {
    pub sim: RtlSim,
}

impl RtlBoard {
    /// The network with the spec's automatic input lanes (hdl::input_lanes).
    pub fn new(spec: &Spec) -> Result<Self> {
        let lanes = edgeflow_hdl::input_lanes::auto_lanes(spec);
        let mut sim = RtlSim::with_lanes(spec, None, lanes)?;
        sim.load_state(&State::initial(spec))?;
        Ok(RtlBoard { sim })
    }
}

impl Board for RtlBoard {
    fn name(&self) -> String {
        "rtl".into()
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        Ok(self.sim.load_state(state)?)
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        self.sim.train(data)?;
        Ok(())
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        let mut out = Vec::with_capacity(data.len());
        // One INFER command carries at most 65535 samples.
        for start in (0..data.len()).step_by(65535) {
            let idx: Vec<usize> = (start..data.len().min(start + 65535)).collect();
            out.extend(self.sim.infer(&data.select(&idx))?.0);
        }
        Ok(out)
    }
    fn read_state(&mut self) -> Result<State> {
        Ok(self.sim.read_state()?)
    }
    /// The steady-state block cycle of the last stream command, as the simulation counted it.
    fn clocks_per_sample(&self) -> Option<f64> {
        let e = &self.sim.block_ends;
        e.windows(2)
            .skip(1)
            .map(|w| w[1] - w[0])
            .max()
            .map(|c| c as f64)
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.sim.spec.edge_ops_per_sample() as u64
    }
}
