//! One MPI rank's stage of a plan (`multiboard_mpi`): the reference arithmetic, an OpenCL
//! device or a simulated RTL stage, trained stream by stream with its neighbours on other
//! ranks, on the same schedule as the one-process runtimes.

use crate::multiboard::{Stage, StageTiming};
use crate::multiboard_mpi::{MpiLinks, Session};
use anyhow::{anyhow, bail, Result};
use edgeflow_core::{LaneRng, Spec, State};
use edgeflow_hdl::testbench::error::SimError;
use edgeflow_hdl::testbench::rtl_stage::StageIo;
use edgeflow_opencl::{OpenClStage, WindowIo};
use edgeflow_planner::report::PlanFile;
use edgeflow_reference::Schedule;
use std::time::Instant;

enum Backend {
    Reference(Box<Stage>),
    OpenCl(Box<OpenClStage>),
    Rtl(Box<edgeflow_hdl::testbench::rtl_stage::StageSim>),
}

/// The stage of one rank, with what it needs to know of the whole chain.
pub(crate) struct Local {
    pub spec: Spec,
    /// Every stage's junctions (0-based, inclusive); this rank runs `ranges[rank]`.
    pub ranges: Vec<(usize, usize)>,
    pub backend: String,
    pub timing: StageTiming,
    /// Boundary vectors sent since set-up.
    pub sent: usize,
    rank: usize,
    schedule: Schedule,
    /// Block cycles per OpenCL window (`multiboard_opencl::window`).
    window: usize,
    roles: Vec<String>,
    stage: Backend,
}

/// What rank 0 learns of a set-up before it is sent.
pub(crate) struct Peek {
    pub stages: usize,
    /// Per stage: "stage 2 of 4 (junctions 3-4, board nexys4-ddr)".
    pub roles: Vec<String>,
}

fn parse(setup: &str) -> Result<(PlanFile, String, Vec<String>)> {
    let v: serde_json::Value = serde_json::from_str(setup)?;
    let text = v["plan"]
        .as_str()
        .ok_or_else(|| anyhow!("set-up without a plan"))?;
    let p = PlanFile::from_json(text, "the plan from rank 0")?;
    let k = p.stages.len();
    let roles = p
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "stage {} of {k} (junctions {}-{}, board {})",
                i + 1,
                s.junctions[0],
                s.junctions[1],
                s.board
            )
        })
        .collect();
    Ok((p, v["backend"].as_str().unwrap_or("").to_string(), roles))
}

impl Local {
    pub fn peek(setup: &str) -> Result<Peek> {
        let (p, _, roles) = parse(setup)?;
        Ok(Peek {
            stages: p.stages.len(),
            roles,
        })
    }

    /// Open this rank's stage: its board is the plan's stage `rank`.
    pub fn open(setup: &str, rank: usize, size: usize) -> Result<Local> {
        let (p, backend, roles) = parse(setup)?;
        if p.stages.len() != size {
            bail!("the plan has {} stages for {size} ranks", p.stages.len());
        }
        let spec = p.spec.clone();
        let ranges = crate::plan_cmd::stage_ranges(&p);
        let link_delay: Vec<usize> = p.link_delay.iter().map(|&d| d as usize).collect();
        let schedule = Schedule::with_links(&link_delay);
        let ends: Vec<usize> = ranges.iter().map(|r| r.1 + 1).collect();
        let window = crate::multiboard_opencl::window(&ends, &link_delay);
        let (a, b) = ranges[rank];
        let stage = match backend.as_str() {
            "reference" => Backend::Reference(Box::new(Stage::new(
                &spec,
                &State::initial(&spec),
                &LaneRng::all_seeded(spec.seed, &spec.z),
                (a, b),
            ))),
            "opencl" => {
                // one device per rank of a host, as one board per process
                let local = std::env::var("OMPI_COMM_WORLD_LOCAL_RANK").unwrap_or(rank.to_string());
                let dev = crate::board::opencl::open_device(Some(&local))?;
                let mut st = OpenClStage::new(dev, &spec, a..b + 1, &schedule)?;
                st.load_state(&State::initial(&spec))?;
                Backend::OpenCl(Box::new(st))
            }
            "rtl" => {
                let builds = crate::plan_cmd::rtl_builds(&p, "the plan")?;
                let mut built = spec.clone();
                built.registered_reads |= builds[rank].0;
                built.deep_pipeline |= builds[rank].1;
                let mut st =
                    edgeflow_hdl::testbench::rtl_stage::StageSim::new(&built, a, b, &schedule);
                st.load_state(&State::initial(&spec));
                Backend::Rtl(Box::new(st))
            }
            other => bail!("no MPI stage for backend '{other}'"),
        };
        Ok(Local {
            spec,
            ranges,
            backend,
            timing: StageTiming::default(),
            sent: 0,
            rank,
            schedule,
            window,
            roles,
            stage,
        })
    }

    pub fn role(&self) -> String {
        self.roles[self.rank].clone()
    }
    pub fn first(&self) -> usize {
        self.ranges[self.rank].0
    }
    pub fn last(&self) -> usize {
        self.ranges[self.rank].1
    }
    pub fn is_last(&self) -> bool {
        self.rank + 1 == self.ranges.len()
    }

    /// Bytes of buffered sends a stream may have in flight from this rank: a stage runs at
    /// most the chain's depth plus twice a link delay (rounded up to OpenCL windows) ahead of
    /// a neighbour, in either direction.
    pub fn send_buffer_bytes(&self) -> usize {
        if self.ranges.len() < 2 {
            return 0;
        }
        let depth = self.schedule.bp[0] - self.schedule.ff[0] + 1;
        let samples = depth + 4 * self.window.min(1 << 20) + 8;
        let mut widths = Vec::new();
        if !self.is_last() {
            widths.push(self.spec.layers[self.last() + 1]);
        }
        if self.rank > 0 {
            widths.push(self.spec.layers[self.first()]);
        }
        // each message: its values, a two-word header and MPI's own bookkeeping
        widths.iter().map(|w| samples * (4 * w + 8 + 1024)).sum()
    }

    /// Train one stream of `count` samples; `inputs` on the first rank, `labels` on the last.
    pub fn train(
        &mut self,
        s: &Session,
        count: usize,
        inputs: &[i32],
        labels: &[usize],
    ) -> Result<()> {
        let mut links = MpiLinks::new(s, &mut self.sent)?;
        let t = match &mut self.stage {
            Backend::Reference(st) => st.run(count, inputs, labels, &self.schedule, &mut links)?,
            Backend::OpenCl(st) => {
                let t0 = Instant::now();
                let n_in = self.spec.layers[self.ranges[self.rank].0];
                let blocks =
                    train_window(st, &mut links, self.window, n_in, (count, inputs, labels))?;
                let total = t0.elapsed().as_secs_f64();
                StageTiming {
                    compute_seconds: total - links.wait.as_secs_f64(),
                    wait_seconds: links.wait.as_secs_f64(),
                    block_cycles: blocks,
                    clocks_per_block_cycle: None,
                }
            }
            Backend::Rtl(st) => {
                let before = st.stats.clone();
                st.stream(count, inputs, labels, true, &mut RtlLinks(&mut links))?;
                StageTiming {
                    compute_seconds: st.stats.seconds - before.seconds - links.wait.as_secs_f64(),
                    wait_seconds: links.wait.as_secs_f64(),
                    block_cycles: st.stats.block_cycles - before.block_cycles,
                    clocks_per_block_cycle: Some(st.stats.clocks_per_block_cycle),
                }
            }
        };
        self.timing.compute_seconds += t.compute_seconds;
        self.timing.wait_seconds += t.wait_seconds;
        self.timing.block_cycles += t.block_cycles;
        if t.clocks_per_block_cycle.is_some() {
            self.timing.clocks_per_block_cycle = t.clocks_per_block_cycle;
        }
        Ok(())
    }

    /// FF through the stage for whole samples of its first layer: the last layer's
    /// activations, or on the last rank each sample's predicted class.
    pub fn infer(&mut self, a_in: &[i32]) -> Result<Vec<i32>> {
        let out = match &mut self.stage {
            Backend::Reference(st) => st.infer(a_in),
            Backend::OpenCl(st) => st.infer(a_in)?,
            Backend::Rtl(st) => {
                // the stage alone on the batch: inference has no backward dependence
                let n_in = self.spec.layers[st.first];
                let mut io = Batch {
                    a_in,
                    n_in,
                    out: Vec::new(),
                };
                let pred = st.stream(a_in.len() / n_in, a_in, &[], false, &mut io)?;
                if self.is_last() {
                    return Ok(pred.into_iter().map(|p| p as i32).collect());
                }
                io.out
            }
        };
        Ok(if self.is_last() {
            let classes = *self.spec.layers.last().unwrap();
            out.chunks(classes)
                .map(|o| edgeflow_reference::argmax(o) as i32)
                .collect()
        } else {
            out
        })
    }

    /// The stage's junctions into `state`.
    pub fn read_state(&mut self, state: &mut State) -> Result<()> {
        match &mut self.stage {
            Backend::Reference(st) => {
                for (k, j) in (st.first..=st.last).enumerate() {
                    state.weights[j] = st.weights[k].clone();
                    state.biases[j] = st.biases[k].clone();
                }
            }
            Backend::OpenCl(st) => st.read_state(state)?,
            Backend::Rtl(st) => st.read_state(state),
        }
        Ok(())
    }

    /// New weights: a new training run, so the lane streams start again.
    pub fn load_state(&mut self, state: &State) -> Result<()> {
        match &mut self.stage {
            Backend::Reference(st) => {
                let lanes = LaneRng::all_seeded(self.spec.seed, &self.spec.z);
                **st = Stage::new(&self.spec, state, &lanes, (st.first, st.last));
            }
            Backend::OpenCl(st) => st.load_state(state)?,
            Backend::Rtl(st) => st.load_state(state),
        }
        Ok(())
    }
}

/// An OpenCL stage's stream in windows of block cycles, its boundaries over MPI; returns the
/// block cycles run.
fn train_window(
    st: &mut OpenClStage,
    links: &mut MpiLinks,
    window: usize,
    n_in: usize,
    (count, inputs, labels): (usize, &[i32], &[usize]),
) -> Result<u64> {
    let j = st.junctions();
    st.begin_stream(count, labels)?;
    let total = st.stream_cycles();
    let mut t0 = 0;
    while t0 < total {
        let t1 = t0.saturating_add(window).min(total);
        let (a_in, d_in) = crate::multiboard_opencl::window_inputs(st, t0, t1, &mut |right, n| {
            if !right && j.start == 0 {
                Ok(inputs[n * n_in..(n + 1) * n_in].to_vec())
            } else {
                links.recv(right, n)
            }
        })?;
        let o = st.run_window(
            t0,
            t1,
            &WindowIo {
                a_in: &a_in,
                d_in: &d_in,
            },
        )?;
        links.send(true, o.a_out_samples.start, o.a_out_samples.len(), &o.a_out)?;
        links.send(
            false,
            o.d_out_samples.start,
            o.d_out_samples.len(),
            &o.d_out,
        )?;
        t0 = t1;
    }
    Ok(total as u64)
}

/// A simulated stage's boundaries over MPI.
struct RtlLinks<'a, 'b>(&'a mut MpiLinks<'b>);

impl StageIo for RtlLinks<'_, '_> {
    fn recv_left(&mut self, n: usize) -> Result<Vec<i32>, SimError> {
        self.0.recv(false, n).map_err(link)
    }
    fn send_right(&mut self, n: usize, a: Vec<i32>) -> Result<(), SimError> {
        self.0.send(true, n, 1, &a).map_err(link)
    }
    fn recv_right(&mut self, n: usize) -> Result<Vec<i32>, SimError> {
        self.0.recv(true, n).map_err(link)
    }
    fn send_left(&mut self, n: usize, sums: Vec<i32>) -> Result<(), SimError> {
        self.0.send(false, n, 1, &sums).map_err(link)
    }
}

/// An MPI link's failure with its whole context chain, as the stage's error.
fn link(e: anyhow::Error) -> SimError {
    SimError::Link(format!("{e:#}"))
}

/// A batch's activations into a simulated stage inferring alone, its outputs collected.
struct Batch<'a> {
    a_in: &'a [i32],
    n_in: usize,
    out: Vec<i32>,
}

impl StageIo for Batch<'_> {
    fn recv_left(&mut self, n: usize) -> Result<Vec<i32>, SimError> {
        Ok(self.a_in[n * self.n_in..(n + 1) * self.n_in].to_vec())
    }
    fn send_right(&mut self, _: usize, a: Vec<i32>) -> Result<(), SimError> {
        self.out.extend(a);
        Ok(())
    }
    fn recv_right(&mut self, n: usize) -> Result<Vec<i32>, SimError> {
        Err(inferring(n))
    }
    fn send_left(&mut self, n: usize, _: Vec<i32>) -> Result<(), SimError> {
        Err(inferring(n))
    }
}

fn inferring(n: usize) -> SimError {
    SimError::Link(format!("sample {n}: no delta sums while inferring"))
}
