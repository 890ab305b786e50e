//! The whole network on one OpenCL device: the stage `[0, L)` with no boundaries, inputs from
//! the data and output deltas from the labels.

use crate::{Device, OpenClStage};
use anyhow::Result;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_reference::{argmax, check_staleness, Schedule};
use opencl3::types::cl_short;
use std::sync::Arc;

/// Block cycles per training launch unless told otherwise: long enough that launch overhead
/// vanishes, short enough that a chunk's inputs stay small.
pub const DEFAULT_CHUNK_CYCLES: usize = 512;
/// Samples per inference launch.
const INFER_CHUNK: usize = 1024;

pub struct OpenClNetwork {
    pub spec: Spec,
    pub staleness: Vec<usize>,
    stage: OpenClStage,
    /// Block cycles per training launch.
    pub chunk_cycles: usize,
    /// Seconds spent in the last `train` call.
    pub last_train_seconds: f64,
}

impl OpenClNetwork {
    /// The network with the spec's initial weights and the schedule of `staleness` (the
    /// reference model's parameter: `ff[j] = j`, `bp[j] = j + s[j]`).
    pub fn new(dev: Arc<Device>, spec: &Spec, staleness: Vec<usize>) -> Result<Self> {
        let l = spec.junctions();
        check_staleness(&staleness, l)?;
        let schedule = Schedule {
            ff: (0..l).collect(),
            bp: (0..l).map(|j| j + staleness[j]).collect(),
        };
        Ok(OpenClNetwork {
            stage: OpenClStage::new(dev, spec, 0..l, &schedule)?,
            spec: spec.clone(),
            staleness,
            chunk_cycles: DEFAULT_CHUNK_CYCLES,
            last_train_seconds: 0.0,
        })
    }

    pub fn device(&self) -> &Arc<Device> {
        self.stage.device()
    }

    pub fn load_state(&mut self, state: &State) -> Result<()> {
        self.stage.load_state(state)
    }

    pub fn read_state(&mut self) -> Result<State> {
        let mut s = State::initial(&self.spec);
        self.stage.read_state(&mut s)?;
        Ok(s)
    }

    /// The lane streams where they stand now, `[j][lane]`.
    pub fn read_lanes(&self) -> Result<Vec<Vec<edgeflow_core::LaneRng>>> {
        self.stage.read_lanes()
    }

    /// Train on one stream (fill, run, drain), `chunk_cycles` block cycles per launch.
    pub fn train(&mut self, data: &Encoded) -> Result<()> {
        let t = std::time::Instant::now();
        let n0 = self.spec.layers[0];
        if data.inputs_per_sample != n0 {
            anyhow::bail!(
                "the data has {} inputs per sample, the network {n0}",
                data.inputs_per_sample
            );
        }
        self.stage.begin_stream(data.len(), &data.labels)?;
        let total = self.stage.stream_cycles();
        let chunk = self.chunk_cycles.max(1);
        let mut t0 = 0;
        while t0 < total {
            let t1 = (t0 + chunk).min(total);
            let s = self.stage.a_in_samples(t0, t1);
            let a: Vec<cl_short> = data.inputs[s.start * n0..s.end * n0]
                .iter()
                .map(|&x| x as cl_short)
                .collect();
            self.stage.upload_a_in(&a)?;
            self.stage.launch_train(t0, t1, s.start, 0, 0, 0)?;
            t0 = t1;
        }
        self.last_train_seconds = t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Output-layer activations of every sample.
    pub fn forward(&mut self, data: &Encoded) -> Result<Vec<i32>> {
        let n0 = self.spec.layers[0];
        let mut out = Vec::with_capacity(data.len() * self.spec.layers[self.spec.junctions()]);
        for c in (0..data.len()).step_by(INFER_CHUNK) {
            let e = (c + INFER_CHUNK).min(data.len());
            let a: Vec<cl_short> = data.inputs[c * n0..e * n0]
                .iter()
                .map(|&x| x as cl_short)
                .collect();
            out.extend(
                self.stage
                    .infer_short(&a, e - c)?
                    .into_iter()
                    .map(i32::from),
            );
        }
        Ok(out)
    }

    /// Predicted class of every sample (first largest output, the reference model's rule).
    pub fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        let nl = self.spec.layers[self.spec.junctions()];
        Ok(self.forward(data)?.chunks(nl).map(argmax).collect())
    }

    /// Edge operations per training sample (FF and UP everywhere, BP except junction 1).
    pub fn edge_ops_per_sample(&self) -> u64 {
        self.spec.edge_ops_per_sample() as u64
    }
}
