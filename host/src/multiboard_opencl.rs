//! `edgeflow train --plan … --backend opencl`: one OpenCL device per board of the plan (PoCL's
//! `POCL_DEVICES="pthread pthread pthread pthread"` stands in for four boards), each running its
//! stage (`edgeflow_opencl::OpenClStage`) in windows of block cycles. A window is at most
//! `d + 1` block cycles for the smallest link delay `d` of the plan, so everything a stage needs
//! from its downstream neighbour was produced in an earlier window; the stages of one window run
//! upstream first, so activations flow forward within it. Bit-identical to the reference model
//! with the plan's staleness.

use crate::board::Board;
use crate::multiboard::StageTiming;
use anyhow::{anyhow, bail, Result};
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_opencl::{OpenClStage, Schedule, WindowIo};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub struct OpenClPipeline {
    pub spec: Spec,
    pub stages: Vec<OpenClStage>,
    pub link_delay: Vec<usize>,
    pub timings: Arc<Mutex<Vec<StageTiming>>>,
    names: Vec<String>,
}

impl OpenClPipeline {
    /// Stage `i` of `ranges` (0-based inclusive junctions) on OpenCL device `i`.
    pub fn new(
        spec: &Spec,
        ranges: &[(usize, usize)],
        link_delay: &[usize],
    ) -> Result<OpenClPipeline> {
        let list = edgeflow_opencl::devices()?;
        if list.len() < ranges.len() {
            bail!(
                "the plan has {} boards but only {} OpenCL device(s) are present; with PoCL, set POCL_DEVICES to {} pthread devices, e.g. POCL_DEVICES=\"{}\"",
                ranges.len(),
                list.len(),
                ranges.len(),
                vec!["pthread"; ranges.len()].join(" ")
            );
        }
        let schedule = Schedule::with_links(link_delay);
        let mut stages = Vec::new();
        let mut names = Vec::new();
        for (i, &(a, b)) in ranges.iter().enumerate() {
            let dev = crate::board::opencl::open_device(Some(&i.to_string()))?;
            names.push(format!("{}#{i}", dev.info.name));
            stages.push(OpenClStage::new(dev, spec, a..b + 1, &schedule)?);
        }
        Ok(OpenClPipeline {
            spec: spec.clone(),
            stages,
            link_delay: link_delay.to_vec(),
            timings: Arc::new(Mutex::new(vec![StageTiming::default(); ranges.len()])),
            names,
        })
    }

    fn window(&self) -> usize {
        let ends: Vec<usize> = self.stages.iter().map(|s| s.junctions().end).collect();
        window(&ends, &self.link_delay)
    }
}

/// Block cycles per window for stages ending before layers `ends` (exclusive junction ends):
/// one more than the smallest link delay between stages, so a stage never needs in a window
/// what its downstream neighbour produces in the same window.
pub(crate) fn window(ends: &[usize], link_delay: &[usize]) -> usize {
    let d = ends[..ends.len().saturating_sub(1)]
        .iter()
        .map(|&e| link_delay[e - 1])
        .min();
    d.map_or(usize::MAX / 4, |d| d + 1)
}

/// What window `[t0, t1)` of `st` reads at its boundaries, sample by sample from `get`: the
/// first layer's activations (`get(false, n)`) and the last layer's sums (`get(true, n)`).
pub(crate) fn window_inputs(
    st: &OpenClStage,
    t0: usize,
    t1: usize,
    get: &mut dyn FnMut(bool, usize) -> Result<Vec<i32>>,
) -> Result<(Vec<i32>, Vec<i32>)> {
    let mut a_in = Vec::new();
    for n in st.a_in_samples(t0, t1) {
        a_in.extend(get(false, n)?);
    }
    let mut d_in = Vec::new();
    for n in st.d_in_samples(t0, t1) {
        d_in.extend(get(true, n)?);
    }
    Ok((a_in, d_in))
}

impl Board for OpenClPipeline {
    fn name(&self) -> String {
        format!(
            "opencl x{} devices ({})",
            self.stages.len(),
            self.names.join(", ")
        )
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        for st in &mut self.stages {
            st.load_state(state)?;
        }
        Ok(())
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        let k = self.stages.len();
        let window = self.window();
        for (i, st) in self.stages.iter_mut().enumerate() {
            let labels: &[usize] = if i + 1 == k { &data.labels } else { &[] };
            st.begin_stream(data.len(), labels)?;
        }
        let total = self.stages[0].stream_cycles();
        // fwd[i]/bwd[i]: values crossing the link after stage i, by sample.
        let mut fwd: Vec<HashMap<usize, Vec<i32>>> = vec![HashMap::new(); k];
        let mut bwd: Vec<HashMap<usize, Vec<i32>>> = vec![HashMap::new(); k];
        let mut spent = vec![0.0f64; k];
        let mut t0 = 0;
        while t0 < total {
            let t1 = t0.saturating_add(window).min(total);
            for i in 0..k {
                let st = &mut self.stages[i];
                let (n_in, n_out) = (
                    self.spec.layers[st.junctions().start],
                    self.spec.layers[st.junctions().end],
                );
                let (a_in, d_in) = window_inputs(st, t0, t1, &mut |right, n| {
                    let m = match (right, i) {
                        (false, 0) => return Ok(data.input(n).to_vec()),
                        (false, _) => &mut fwd[i - 1],
                        (true, _) => &mut bwd[i],
                    };
                    m.remove(&n).ok_or_else(|| {
                        anyhow!(
                            "stage {}: sample {n} missing at a boundary (window {t0}..{t1})",
                            i + 1
                        )
                    })
                })?;
                let t = Instant::now();
                let o = st.run_window(
                    t0,
                    t1,
                    &WindowIo {
                        a_in: &a_in,
                        d_in: &d_in,
                    },
                )?;
                spent[i] += t.elapsed().as_secs_f64();
                for (m, n) in o.a_out_samples.clone().enumerate() {
                    fwd[i].insert(n, o.a_out[m * n_out..(m + 1) * n_out].to_vec());
                }
                if i > 0 {
                    for (m, n) in o.d_out_samples.clone().enumerate() {
                        bwd[i - 1].insert(n, o.d_out[m * n_in..(m + 1) * n_in].to_vec());
                    }
                }
            }
            t0 = t1;
        }
        let mut tm = self.timings.lock().unwrap();
        for (acc, s) in tm.iter_mut().zip(spent) {
            acc.compute_seconds += s;
            acc.block_cycles += total as u64;
        }
        Ok(())
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        // Through every device in turn, the whole data set at once.
        let mut a = data.inputs.clone();
        for st in &mut self.stages {
            a = st.infer(&a)?;
        }
        let n = *self.spec.layers.last().unwrap();
        Ok(a.chunks(n).map(edgeflow_reference::argmax).collect())
    }
    fn read_state(&mut self) -> Result<State> {
        let mut s = State::initial(&self.spec);
        for st in &mut self.stages {
            st.read_state(&mut s)?;
        }
        Ok(s)
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.spec.edge_ops_per_sample() as u64
    }
}
