//! One pipeline stage on one OpenCL device: junctions `[j0, j1)` of a network, run in windows
//! of block cycles under a global [`Schedule`].
//!
//! # Semantics
//!
//! Block cycle `t` of the global schedule runs, for every junction `j` of the stage in order,
//! `FF_j(t - ff[j])` and then `BP_j(t - bp[j])` + `UP_j(t - bp[j])` — the reference model's loop
//! restricted to the stage. A stream of `S` samples occupies block cycles `0 .. S + bp[0]`
//! ([`OpenClStage::stream_cycles`]); a stage is idle outside `ff[j0] .. bp[j0] + S`, so a runtime
//! may simply run every stage over the whole range.
//!
//! Between launches everything stays on the device: weights, biases, the stochastic-rounding
//! lane streams of the stage's junctions (restarted with the weights by
//! [`OpenClStage::load_state`]) and a ring of
//! `bp[j0] - ff[j0] + 1` per-sample slots holding the activations, σ′ and deltas of every layer
//! of the stage. Splitting `0 .. stream_cycles()` into any windows gives the same bits as one
//! window.
//!
//! # Boundaries (for a chain of stages)
//!
//! Per window `[t0, t1)` ([`OpenClStage::run_window`]):
//!
//! - **in, forward** (`j0 > 0`; for `j0 = 0` the data's inputs): activations of layer `j0` of the
//!   samples [`OpenClStage::a_in_samples`] `= (t0..t1) - ff[j0]` — what the upstream stage
//!   produced as its `a_out`.
//! - **in, backward** (`j1 < L`): the back-propagated sums of layer `j1` (saturated, *before*
//!   the σ′ factor, which this stage holds) of the samples [`OpenClStage::d_in_samples`]
//!   `= (t0..t1) - bp[j1-1]` — what the downstream stage produced as its `d_out`.
//! - **out, forward** (`j1 < L`): activations of layer `j1`, samples `(t0..t1) - ff[j1-1]`.
//! - **out, backward** (`j0 > 0`): back-propagated sums of layer `j0`, samples
//!   `(t0..t1) - bp[j0]`.
//!
//! All ranges are clipped to the stream's samples. With a link of `d` block cycles between
//! stages (`Schedule::with_links`), a sum leaves the downstream stage `d + 1` block cycles
//! before the upstream stage needs it, so a runtime that runs the stages' windows one after
//! the other, upstream first, needs windows of at most `d + 1` block cycles; activations flow
//! forward within the same window.
//!
//! The labels (for the output delta) are given per stream, to the stage that ends with the
//! output layer.
//!
//! # Example: two stages, two devices, one link
//!
//! ```no_run
//! # use edgeflow_opencl::{Device, OpenClStage, Schedule, WindowIo};
//! # use std::collections::HashMap;
//! # fn run(spec: &edgeflow_core::Spec, data: &edgeflow_core::Encoded) -> anyhow::Result<()> {
//! let l = spec.junctions();
//! let schedule = Schedule::with_links(&{ let mut d = vec![0; l - 1]; d[0] = 2; d }); // link after junction 1
//! let mut up = OpenClStage::new(Device::open(Some("0"))?, spec, 0..1, &schedule)?;
//! let mut down = OpenClStage::new(Device::open(Some("1"))?, spec, 1..l, &schedule)?;
//! up.begin_stream(data.len(), &[])?;
//! down.begin_stream(data.len(), &data.labels)?;
//! let (mut fwd, mut bwd) = (HashMap::new(), HashMap::new()); // sample -> boundary values
//! let n = spec.layers[1];
//! for t0 in (0..up.stream_cycles()).step_by(3) {             // windows of link delay + 1
//!     let t1 = (t0 + 3).min(up.stream_cycles());
//!     let a: Vec<i32> = up.a_in_samples(t0, t1).flat_map(|s| data.input(s).to_vec()).collect();
//!     let d: Vec<i32> = up.d_in_samples(t0, t1).flat_map(|s| bwd.remove(&s).unwrap()).collect();
//!     let o = up.run_window(t0, t1, &WindowIo { a_in: &a, d_in: &d })?;
//!     for (k, s) in o.a_out_samples.enumerate() { fwd.insert(s, o.a_out[k * n..(k + 1) * n].to_vec()); }
//!     let a: Vec<i32> = down.a_in_samples(t0, t1).flat_map(|s| fwd.remove(&s).unwrap()).collect();
//!     let o = down.run_window(t0, t1, &WindowIo { a_in: &a, d_in: &[] })?;
//!     for (k, s) in o.d_out_samples.enumerate() { bwd.insert(s, o.d_out[k * n..(k + 1) * n].to_vec()); }
//! }
//! // bit-identical to Reference::with_state(spec, State::initial(spec), schedule.staleness())
//! # Ok(()) }
//! ```

use crate::buffer::{alloc, read, write, Buf};
use crate::{cl_err, Device};
use anyhow::{bail, Result};
use edgeflow_core::{JunctionPattern, LaneRng, Rounding, Spec, State};
use edgeflow_reference::Schedule;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::Buffer;
use opencl3::types::{cl_int, cl_short, cl_uint, cl_ushort};
use std::ops::Range;
use std::sync::Arc;

use crate::layout::*;

/// Boundary inputs of one window (see the module docs for which samples each holds).
#[derive(Default)]
pub struct WindowIo<'a> {
    /// Activations of layer `j0`, `a_in_samples(t0, t1).len() × N_j0`, sample-major.
    pub a_in: &'a [i32],
    /// Back-propagated sums of layer `j1`, `d_in_samples(t0, t1).len() × N_j1` (empty if `j1 = L`).
    pub d_in: &'a [i32],
}

/// Boundary outputs of one window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WindowOutput {
    /// Samples of `a_out` (empty when the stage ends with the output layer).
    pub a_out_samples: Range<usize>,
    /// Activations of layer `j1`, sample-major.
    pub a_out: Vec<i32>,
    /// Samples of `d_out` (empty when the stage starts with the inputs).
    pub d_out_samples: Range<usize>,
    /// Back-propagated sums of layer `j0`, sample-major.
    pub d_out: Vec<i32>,
}

pub struct OpenClStage {
    dev: Arc<Device>,
    spec: Spec,
    j0: usize,
    j1: usize,
    schedule: Schedule,
    cfg: Vec<cl_int>,
    woff: Vec<usize>,
    boff: Vec<usize>,
    widest: usize,
    samples: usize,
    w: Buffer<cl_short>,
    bias: Buffer<cl_short>,
    left: Buffer<cl_ushort>,
    tsig: Buffer<cl_short>,
    tsp: Buffer<cl_short>,
    cfg_buf: Buffer<cl_int>,
    ring: Buffer<cl_short>,
    acc: Buffer<cl_int>,
    /// The lane streams of junctions `j0..j1`, one after the other.
    streams: Buffer<cl_uint>,
    tmp: Buffer<cl_short>,
    labels: Buf<cl_int>,
    a_in: Buf<cl_short>,
    d_in: Buf<cl_short>,
    a_out: Buf<cl_short>,
    d_out: Buf<cl_short>,
    train_k: Kernel,
    infer_k: Kernel,
}

fn to_short(v: &[i32]) -> Vec<cl_short> {
    v.iter().map(|&x| x as cl_short).collect()
}

fn clip(r: Range<i64>, samples: usize) -> Range<usize> {
    let lo = r.start.clamp(0, samples as i64) as usize;
    let hi = r.end.clamp(0, samples as i64) as usize;
    lo..hi.max(lo)
}

impl OpenClStage {
    /// Junctions `junctions` (0-based, `j0..j1`) of `spec` on `dev`, with the global schedule
    /// `schedule` (offsets of every junction of the network) and the spec's initial weights.
    pub fn new(
        dev: Arc<Device>,
        spec: &Spec,
        junctions: Range<usize>,
        schedule: &Schedule,
    ) -> Result<Self> {
        let l = spec.junctions();
        let (j0, j1) = (junctions.start, junctions.end);
        if j0 >= j1 || j1 > l {
            bail!(
                "stage junctions {j0}..{j1} are not a non-empty range within the network's 0..{l}"
            );
        }
        if schedule.ff.len() != l || schedule.bp.len() != l {
            bail!(
                "the schedule has {} entries, the network {l} junctions",
                schedule.ff.len()
            );
        }
        edgeflow_reference::check_staleness(&schedule.staleness(), l)?;
        if schedule.bp[0] >= i32::MAX as usize / 2 {
            bail!("schedule offsets too large");
        }
        let format = spec.format();
        // every junction's right-layer table, one after the other (ReLU's are empty)
        let tables: Vec<_> = (j0..j1).map(|j| spec.activation_table(j + 1)).collect();
        let table = &tables[0];
        let patterns: Vec<JunctionPattern> = (j0..j1)
            .map(|j| JunctionPattern::generate(spec, j))
            .collect();
        let layers = &spec.layers[j0..=j1];
        let widest = *layers.iter().max().unwrap();
        // ring slot: for every layer of the stage, activations, σ′ and deltas
        let mut layer_off = Vec::new();
        let mut stride = 0;
        for &n in layers {
            layer_off.push(stride);
            stride += 3 * n;
        }
        let depth = schedule.bp[j0] - schedule.ff[j0] + 1;
        let mut cfg = vec![0; C_JUNC + C_JSIZE * (j1 - j0)];
        cfg[C_NJ] = (j1 - j0) as i32;
        cfg[C_FRAC] = format.frac_bits as i32;
        cfg[C_VMIN] = format.min();
        cfg[C_VMAX] = format.max();
        cfg[C_SHIFT] = spec.learning_rate_shift as i32;
        cfg[C_DROP] = table.drop_bits() as i32;
        cfg[C_IBITS] = table.index_bits as i32;
        cfg[C_DEPTH] = depth as i32;
        cfg[C_STRIDE] = stride as i32;
        cfg[C_LAST] = (j1 == l) as i32;
        cfg[C_HIDDEN] = !spec.activation.is_table() as i32;
        cfg[C_ONE] = format.one();
        cfg[C_FIRST] = (j0 == 0) as i32;
        cfg[C_ROUNDING] = (spec.rounding() == Rounding::Stochastic) as i32;
        cfg[C_FF_SAT] = (spec.ff_products == edgeflow_core::FfProducts::Saturated) as i32;
        // step 6's table ends; a value no short can hold where the rule is off
        let ends = spec.output_delta_ends();
        let (first, last) = ends.unwrap_or((i32::MIN, i32::MIN));
        cfg[C_OUT_FIRST] = first;
        cfg[C_OUT_LAST] = last;
        let (mut woff, mut boff) = (Vec::new(), Vec::new());
        let (mut we, mut be, mut lanes) = (0, 0, 0);
        let mut left = Vec::new();
        for (r, p) in patterns.iter().enumerate() {
            let j = j0 + r;
            let c = &mut cfg[C_JUNC + r * C_JSIZE..C_JUNC + (r + 1) * C_JSIZE];
            c[J_NL] = p.left as i32;
            c[J_NR] = p.right as i32;
            c[J_FI] = p.fan_in as i32;
            c[J_Z] = p.z as i32;
            c[J_WOFF] = we as i32;
            c[J_BOFF] = be as i32;
            c[J_FF] = schedule.ff[j] as i32;
            c[J_BP] = schedule.bp[j] as i32;
            c[J_ACT] = if tables[r].activation.is_table() {
                0
            } else {
                1 + (spec.relu_gate == edgeflow_core::ReluGate::Clipped) as i32
            };
            c[J_TAB] = tables[..r].iter().map(|t| t.sigma.len()).sum::<usize>() as i32;
            c[J_AL] = layer_off[r] as i32;
            c[J_SPL] = (layer_off[r] + p.left) as i32;
            c[J_DL] = (layer_off[r] + 2 * p.left) as i32;
            c[J_AR] = layer_off[r + 1] as i32;
            c[J_SPR] = (layer_off[r + 1] + p.right) as i32;
            c[J_DR] = (layer_off[r + 1] + 2 * p.right) as i32;
            c[J_LOFF] = lanes as i32;
            lanes += p.z;
            woff.push(we);
            boff.push(be);
            we += p.edges();
            be += p.right;
            left.extend(p.left_of_edge.iter().map(|&k| k as cl_ushort));
        }
        let d = &*dev;
        let mut left_buf = alloc::<cl_ushort>(d, we)?;
        write(d, &mut left_buf, &left)?;
        // (one entry at least: a device buffer cannot be empty)
        let mut sigma: Vec<i32> = tables.iter().flat_map(|t| t.sigma.clone()).collect();
        let mut sigma_prime: Vec<i32> = tables.iter().flat_map(|t| t.sigma_prime.clone()).collect();
        sigma.resize(sigma.len().max(1), 0);
        sigma_prime.resize(sigma.len(), 0);
        let mut tsig = alloc::<cl_short>(d, sigma.len())?;
        write(d, &mut tsig, &to_short(&sigma))?;
        let mut tsp = alloc::<cl_short>(d, sigma_prime.len())?;
        write(d, &mut tsp, &to_short(&sigma_prime))?;
        let mut cfg_buf = alloc::<cl_int>(d, cfg.len())?;
        write(d, &mut cfg_buf, &cfg)?;
        let mut ring = alloc::<cl_short>(d, depth * stride)?;
        write(d, &mut ring, &vec![0; depth * stride])?;
        let train_k =
            Kernel::create(&dev.program, "train_window").map_err(cl_err("kernel train_window"))?;
        let infer_k =
            Kernel::create(&dev.program, "infer_chunk").map_err(cl_err("kernel infer_chunk"))?;
        let mut st = OpenClStage {
            w: alloc(d, we)?,
            bias: alloc(d, be)?,
            left: left_buf,
            tsig,
            tsp,
            cfg_buf,
            ring,
            acc: alloc(d, widest)?,
            streams: alloc(d, lanes)?,
            tmp: alloc(d, 3 * widest)?,
            labels: Buf::new(d, 1)?,
            a_in: Buf::new(d, 1)?,
            d_in: Buf::new(d, 1)?,
            a_out: Buf::new(d, 1)?,
            d_out: Buf::new(d, 1)?,
            train_k,
            infer_k,
            spec: spec.clone(),
            j0,
            j1,
            schedule: schedule.clone(),
            cfg,
            woff,
            boff,
            widest,
            samples: 0,
            dev,
        };
        st.load_state(&State::initial(spec))?;
        Ok(st)
    }

    pub fn junctions(&self) -> Range<usize> {
        self.j0..self.j1
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    /// Write the stage's junctions of `state` (a complete network state) to the device, and
    /// start their lane streams again (new weights start a training run).
    pub fn load_state(&mut self, state: &State) -> Result<()> {
        state.check_shape(&self.spec)?;
        let f = self.spec.format();
        for j in self.j0..self.j1 {
            let bad = state.weights[j]
                .iter()
                .chain(&state.biases[j])
                .find(|&&x| x < f.min() || x > f.max());
            if let Some(x) = bad {
                bail!(
                    "junction {}: value {x} is outside the {}-bit format's range {}..={}; the state does not belong to this spec",
                    j + 1,
                    f.width,
                    f.min(),
                    f.max()
                );
            }
        }
        let mut w = Vec::new();
        let mut b = Vec::new();
        for j in self.j0..self.j1 {
            w.extend(to_short(&state.weights[j]));
            b.extend(to_short(&state.biases[j]));
        }
        let seeded = LaneRng::all_seeded(self.spec.seed, &self.spec.z);
        let streams: Vec<cl_uint> = seeded[self.j0..self.j1]
            .iter()
            .flatten()
            .map(|g| g.0)
            .collect();
        let dev = self.dev.clone();
        write(&dev, &mut self.w, &w)?;
        write(&dev, &mut self.streams, &streams)?;
        write(&dev, &mut self.bias, &b)
    }

    /// The lane streams of the stage's junctions where they stand now, `[j - j0][lane]`.
    pub fn read_lanes(&self) -> Result<Vec<Vec<LaneRng>>> {
        let z = &self.spec.z[self.j0..self.j1];
        let mut flat = vec![0 as cl_uint; z.iter().sum()];
        read(&self.dev, &self.streams, &mut flat)?;
        let mut it = flat.into_iter().map(LaneRng);
        Ok(z.iter().map(|&n| it.by_ref().take(n).collect()).collect())
    }

    /// Read the stage's junctions back into `state` (other junctions untouched).
    pub fn read_state(&mut self, state: &mut State) -> Result<()> {
        state.check_shape(&self.spec)?;
        let nw: usize = (self.j0..self.j1).map(|j| state.weights[j].len()).sum();
        let nb: usize = (self.j0..self.j1).map(|j| state.biases[j].len()).sum();
        let mut w = vec![0 as cl_short; nw];
        let mut b = vec![0 as cl_short; nb];
        read(&self.dev, &self.w, &mut w)?;
        read(&self.dev, &self.bias, &mut b)?;
        for (r, j) in (self.j0..self.j1).enumerate() {
            let (wo, bo) = (self.woff[r], self.boff[r]);
            for (x, &y) in state.weights[j].iter_mut().zip(&w[wo..]) {
                *x = y as i32;
            }
            for (x, &y) in state.biases[j].iter_mut().zip(&b[bo..]) {
                *x = y as i32;
            }
        }
        Ok(())
    }

    /// Start a stream of `samples` samples. `labels` (one per sample) are needed by the stage
    /// that ends with the output layer; other stages may pass an empty slice.
    pub fn begin_stream(&mut self, samples: usize, labels: &[usize]) -> Result<()> {
        if self.j1 == self.spec.junctions() && labels.len() != samples {
            bail!(
                "the output stage needs one label per sample: {} labels for {samples} samples",
                labels.len()
            );
        }
        let classes = self.spec.layers[self.spec.junctions()];
        if let Some(&bad) = labels.iter().find(|&&y| y >= classes) {
            bail!("label {bad} is not below the network's {classes} outputs");
        }
        if samples >= i32::MAX as usize / 2 {
            bail!("a stream of {samples} samples is too long; split it");
        }
        self.samples = samples;
        self.cfg[C_SAMPLES] = samples as i32;
        let dev = self.dev.clone();
        write(&dev, &mut self.cfg_buf, &self.cfg)?;
        let lab: Vec<cl_int> = labels.iter().map(|&y| y as cl_int).collect();
        self.labels.ensure(&dev, lab.len())?;
        write(&dev, &mut self.labels.buf, &lab)
    }

    /// Block cycles of the current stream: `S + bp[0]`.
    pub fn stream_cycles(&self) -> usize {
        self.samples + self.schedule.bp[0]
    }

    fn off_samples(&self, t0: usize, t1: usize, off: usize) -> Range<usize> {
        clip(t0 as i64 - off as i64..t1 as i64 - off as i64, self.samples)
    }

    /// Samples whose layer-`j0` activations window `[t0, t1)` reads.
    pub fn a_in_samples(&self, t0: usize, t1: usize) -> Range<usize> {
        self.off_samples(t0, t1, self.schedule.ff[self.j0])
    }

    /// Samples whose layer-`j1` sums window `[t0, t1)` reads (empty for the output stage).
    pub fn d_in_samples(&self, t0: usize, t1: usize) -> Range<usize> {
        if self.j1 == self.spec.junctions() {
            return 0..0;
        }
        self.off_samples(t0, t1, self.schedule.bp[self.j1 - 1])
    }

    /// Samples whose layer-`j1` activations window `[t0, t1)` writes (empty for the output stage).
    pub fn a_out_samples(&self, t0: usize, t1: usize) -> Range<usize> {
        if self.j1 == self.spec.junctions() {
            return 0..0;
        }
        self.off_samples(t0, t1, self.schedule.ff[self.j1 - 1])
    }

    /// Samples whose layer-`j0` sums window `[t0, t1)` writes (empty for the input stage).
    pub fn d_out_samples(&self, t0: usize, t1: usize) -> Range<usize> {
        if self.j0 == 0 {
            return 0..0;
        }
        self.off_samples(t0, t1, self.schedule.bp[self.j0])
    }

    /// Run block cycles `[t0, t1)` of the current stream with the given boundary inputs.
    pub fn run_window(&mut self, t0: usize, t1: usize, io: &WindowIo) -> Result<WindowOutput> {
        let (n0, n1) = (self.spec.layers[self.j0], self.spec.layers[self.j1]);
        let ai = self.a_in_samples(t0, t1);
        let di = self.d_in_samples(t0, t1);
        if io.a_in.len() != ai.len() * n0 {
            bail!(
                "window {t0}..{t1}: a_in holds {} values, samples {ai:?} × {n0} need {}",
                io.a_in.len(),
                ai.len() * n0
            );
        }
        if io.d_in.len() != di.len() * n1 {
            bail!(
                "window {t0}..{t1}: d_in holds {} values, samples {di:?} × {n1} need {}",
                io.d_in.len(),
                di.len() * n1
            );
        }
        self.upload_a_in(&to_short(io.a_in))?;
        let dev = self.dev.clone();
        self.d_in.ensure(&dev, io.d_in.len())?;
        write(&dev, &mut self.d_in.buf, &to_short(io.d_in))?;
        let ao = self.a_out_samples(t0, t1);
        let dout = self.d_out_samples(t0, t1);
        self.launch_train(t0, t1, ai.start, di.start, ao.start, dout.start)?;
        let mut a = vec![0 as cl_short; ao.len() * n1];
        let mut d = vec![0 as cl_short; dout.len() * n0];
        read(&dev, &self.a_out.buf, &mut a)?;
        read(&dev, &self.d_out.buf, &mut d)?;
        Ok(WindowOutput {
            a_out_samples: ao,
            a_out: a.into_iter().map(i32::from).collect(),
            d_out_samples: dout,
            d_out: d.into_iter().map(i32::from).collect(),
        })
    }

    pub(crate) fn upload_a_in(&mut self, a: &[cl_short]) -> Result<()> {
        let dev = self.dev.clone();
        self.a_in.ensure(&dev, a.len())?;
        write(&dev, &mut self.a_in.buf, a)
    }

    /// One launch of the training kernel over `[t0, t1)`; boundary buffers already uploaded.
    pub(crate) fn launch_train(
        &mut self,
        t0: usize,
        t1: usize,
        a_in_base: usize,
        d_in_base: usize,
        a_out_base: usize,
        d_out_base: usize,
    ) -> Result<()> {
        if t1 <= t0 {
            return Ok(());
        }
        let dev = self.dev.clone();
        let (n0, n1) = (self.spec.layers[self.j0], self.spec.layers[self.j1]);
        self.a_out
            .ensure(&dev, self.a_out_samples(t0, t1).len() * n1)?;
        self.d_out
            .ensure(&dev, self.d_out_samples(t0, t1).len() * n0)?;
        let args: [cl_int; 6] = [
            t0 as i32,
            t1 as i32,
            a_in_base as i32,
            d_in_base as i32,
            a_out_base as i32,
            d_out_base as i32,
        ];
        unsafe {
            ExecuteKernel::new(&self.train_k)
                .set_arg(&self.w)
                .set_arg(&self.bias)
                .set_arg(&self.left)
                .set_arg(&self.tsig)
                .set_arg(&self.tsp)
                .set_arg(&self.cfg_buf)
                .set_arg(&self.ring)
                .set_arg(&self.acc)
                .set_arg(&self.streams)
                .set_arg(&self.a_in.buf)
                .set_arg(&self.labels.buf)
                .set_arg(&self.d_in.buf)
                .set_arg(&self.a_out.buf)
                .set_arg(&self.d_out.buf)
                .set_arg(&args[0])
                .set_arg(&args[1])
                .set_arg(&args[2])
                .set_arg(&args[3])
                .set_arg(&args[4])
                .set_arg(&args[5])
                .set_global_work_size(1)
                .set_local_work_size(1)
                .enqueue_nd_range(&dev.queue)
        }
        .map_err(cl_err("train_window launch"))?;
        dev.queue.finish().map_err(cl_err("train_window"))?;
        Ok(())
    }

    /// Inference through the stage with the current weights: layer-`j0` activations of
    /// `count` samples (sample-major) in, layer-`j1` activations out.
    pub fn infer(&mut self, a_in: &[i32]) -> Result<Vec<i32>> {
        let (n0, n1) = (self.spec.layers[self.j0], self.spec.layers[self.j1]);
        if !a_in.len().is_multiple_of(n0) {
            bail!(
                "inference input of {} values is not a whole number of {n0}-value samples",
                a_in.len()
            );
        }
        let out = self.infer_short(&to_short(a_in), a_in.len() / n0)?;
        debug_assert_eq!(out.len(), a_in.len() / n0 * n1);
        Ok(out.into_iter().map(i32::from).collect())
    }

    pub(crate) fn infer_short(&mut self, a_in: &[cl_short], count: usize) -> Result<Vec<cl_short>> {
        let n1 = self.spec.layers[self.j1];
        if count == 0 {
            return Ok(Vec::new());
        }
        self.upload_a_in(a_in)?;
        let dev = self.dev.clone();
        self.a_out.ensure(&dev, count * n1)?;
        let widest = self.widest as cl_int;
        let count_arg = count as cl_int;
        unsafe {
            ExecuteKernel::new(&self.infer_k)
                .set_arg(&self.w)
                .set_arg(&self.bias)
                .set_arg(&self.left)
                .set_arg(&self.tsig)
                .set_arg(&self.tsp)
                .set_arg(&self.cfg_buf)
                .set_arg(&self.tmp)
                .set_arg(&widest)
                .set_arg(&self.a_in.buf)
                .set_arg(&self.a_out.buf)
                .set_arg(&count_arg)
                .set_global_work_size(1)
                .set_local_work_size(1)
                .enqueue_nd_range(&dev.queue)
        }
        .map_err(cl_err("infer_chunk launch"))?;
        let mut out = vec![0 as cl_short; count * n1];
        read(&dev, &self.a_out.buf, &mut out)?;
        Ok(out)
    }
}
