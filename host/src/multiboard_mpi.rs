//! `mpirun -np K edgeflow train --plan P --backend B`: the plan's stage `r` runs on MPI rank
//! `r`, on its own host if mpirun places it there (docs/multiboard.md). The ranks exchange the
//! boundary activations forward and the back-propagated sums backward with point-to-point
//! messages, on the plan's schedule (`Schedule::with_links`), so the run has the bits of the
//! one-process runtime and of the reference model with the plan's staleness.
//!
//! Rank 0 reads the plan and the data set and drives the run: it broadcasts each command
//! (set up, train a stream, infer, read or load the state, stop) and the others follow. It
//! feeds the first stage, sends the labels to the last, gets the predictions back and
//! assembles the state from every rank's junctions. A rank whose board fails prints its
//! rank, host and stage and aborts the whole job (MPI_Abort); a rank that dies is reported by
//! mpirun, which ends the others, and rank 0 printed at the start which stage each rank runs.
//!
//! Sends are buffered (MPI_Bsend): a stage runs up to a link delay ahead of its neighbours in
//! both directions, and with blocking sends of large vectors two neighbours would each wait
//! in a send for the other to receive.
//!
//! Test hook: `EDGEFLOW_TEST_RANK_FAULT=RANK:SAMPLES:kill` (or `:error`) makes that rank kill
//! itself (or its board fail) once it has sent `SAMPLES` boundary vectors.

use crate::board::Board;
use crate::multiboard::{StageLinks, StageTiming};
use crate::multiboard_mpi_stage::Local;
use anyhow::{anyhow, bail, Result};
use edgeflow_core::{Encoded, Spec, State};
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CMD_STOP: i64 = 0;
const CMD_SETUP: i64 = 1;
const CMD_TRAIN: i64 = 2;
const CMD_INFER: i64 = 3;
const CMD_READ: i64 = 4;
const CMD_LOAD: i64 = 5;

pub(crate) const TAG_FWD: i32 = 1;
pub(crate) const TAG_BWD: i32 = 2;
const TAG_LABELS: i32 = 3;
const TAG_INFER: i32 = 4;
const TAG_HELLO: i32 = 5;
const TAG_STATE: i32 = 6;

/// Samples per inference message.
const INFER_CHUNK: usize = 4096;

/// This process's part of an MPI job.
pub struct Session {
    // MPI_Finalize when dropped
    universe: Universe,
    world: SimpleCommunicator,
    pub rank: usize,
    pub size: usize,
    pub host: String,
    /// What this rank runs, for messages ("stage 2 of 4 (junctions 3-4, board …)").
    role: String,
    stopped: bool,
}

impl Session {
    /// Start MPI. Rank 0 gets its session back; every other rank serves rank 0's commands
    /// until it is told to stop, and gets `None`.
    pub fn start() -> Result<Option<Session>> {
        let universe = mpi::initialize().ok_or_else(|| anyhow!("MPI is already initialized"))?;
        let world = universe.world();
        let s = Session {
            rank: world.rank() as usize,
            size: world.size() as usize,
            host: mpi::environment::processor_name().unwrap_or_else(|_| "?".into()),
            world,
            universe: universe,
            role: "setting up".into(),
            stopped: false,
        };
        let (rank, host) = (s.rank, s.host.clone());
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            eprintln!(
                "edgeflow: rank {rank} on host {host} panicked; ending the run on every rank"
            );
            previous(info);
            // SAFETY: MPI is initialized; MPI_Abort ends every rank of the job.
            unsafe {
                mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 1);
            }
        }));
        if s.rank == 0 {
            return Ok(Some(s));
        }
        serve(s)?;
        Ok(None)
    }

    fn command(&self, c: &mut [i64; 2]) {
        self.world.process_at_rank(0).broadcast_into(&mut c[..]);
    }

    fn broadcast_vec<T: mpi::datatype::Equivalence + Default + Clone>(&self, v: &mut Vec<T>) {
        let mut n = [v.len() as u64];
        self.world.process_at_rank(0).broadcast_into(&mut n[..]);
        v.resize(n[0] as usize, T::default());
        self.world.process_at_rank(0).broadcast_into(&mut v[..]);
    }

    /// End the job on every rank after a failure here: other ranks may be waiting for this
    /// one in the middle of a stream.
    pub fn die(&self, e: &anyhow::Error) -> ! {
        eprintln!(
            "edgeflow: rank {} on host {}, {}: {e:#}; ending the run on every rank",
            self.rank, self.host, self.role
        );
        self.world.abort(1)
    }

    /// Room for the buffered sends of the boundary vectors a stage may be ahead by.
    fn set_send_buffer(&mut self, bytes: usize) {
        self.universe.set_buffer_size(bytes);
    }

    fn stop(&mut self) {
        if self.rank == 0 && !self.stopped {
            self.command(&mut [CMD_STOP, 0]);
        }
        self.stopped = true;
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // rank 0 returning (done, or an error found before any stream) releases the others
        self.stop();
    }
}

/// Every rank but 0: follow rank 0's commands.
fn serve(mut s: Session) -> Result<()> {
    let mut local: Option<Local> = None;
    loop {
        let mut c = [0i64; 2];
        s.command(&mut c);
        let run = |s: &Session, local: &mut Option<Local>| -> Result<()> {
            let l = local
                .as_mut()
                .ok_or_else(|| anyhow!("no stage was set up on this rank"))?;
            match c[0] {
                CMD_TRAIN => {
                    let n = c[1] as usize;
                    let labels: Vec<usize> = if l.is_last() {
                        let (v, _) = s
                            .world
                            .process_at_rank(0)
                            .receive_vec_with_tag::<i32>(TAG_LABELS);
                        v.into_iter().map(|y| y as usize).collect()
                    } else {
                        Vec::new()
                    };
                    l.train(s, n, &[], &labels)
                }
                CMD_INFER => infer_follow(s, l, c[1] as usize),
                CMD_READ => {
                    let mut st = State::initial(&l.spec);
                    l.read_state(&mut st)?;
                    let mut v = Vec::new();
                    for j in l.first()..=l.last() {
                        v.extend_from_slice(&st.weights[j]);
                        v.extend_from_slice(&st.biases[j]);
                    }
                    let p = s.world.process_at_rank(0);
                    p.send_with_tag(&v[..], TAG_STATE);
                    p.send_with_tag(&timing_to_vec(&l.timing)[..], TAG_STATE);
                    Ok(())
                }
                CMD_LOAD => {
                    let mut v = Vec::new();
                    s.broadcast_vec(&mut v);
                    l.load_state(&unflatten(&l.spec, &v)?)
                }
                other => bail!("unknown command {other} from rank 0"),
            }
        };
        match c[0] {
            CMD_STOP => {
                s.stopped = true;
                return Ok(());
            }
            CMD_SETUP => {
                let mut text = Vec::<u8>::new();
                s.broadcast_vec(&mut text);
                let opened = Local::open(&String::from_utf8_lossy(&text), s.rank, s.size);
                let mut hello = format!("{}\n", s.host);
                match opened {
                    Ok(l) => {
                        s.role = l.role();
                        s.set_send_buffer(l.send_buffer_bytes());
                        local = Some(l);
                    }
                    Err(e) => hello += &format!("{e:#}"),
                }
                s.world
                    .process_at_rank(0)
                    .send_with_tag(hello.as_bytes(), TAG_HELLO);
            }
            _ => {
                if let Err(e) = run(&s, &mut local) {
                    s.die(&e);
                }
            }
        }
    }
}

/// A stage's timing as numbers, for a message to rank 0.
fn timing_to_vec(t: &StageTiming) -> Vec<f64> {
    vec![
        t.compute_seconds,
        t.wait_seconds,
        t.block_cycles as f64,
        t.clocks_per_block_cycle.map_or(-1.0, |c| c as f64),
    ]
}

fn timing_from_vec(v: &[f64]) -> StageTiming {
    StageTiming {
        compute_seconds: v[0],
        wait_seconds: v[1],
        block_cycles: v[2] as u64,
        clocks_per_block_cycle: (v[3] >= 0.0).then_some(v[3] as u64),
    }
}

fn unflatten(spec: &Spec, v: &[i32]) -> Result<State> {
    let mut st = State::initial(spec);
    let mut it = v.iter().copied();
    for x in st.weights.iter_mut().flatten() {
        *x = it
            .next()
            .ok_or_else(|| anyhow!("state message too short"))?;
    }
    for x in st.biases.iter_mut().flatten() {
        *x = it
            .next()
            .ok_or_else(|| anyhow!("state message too short"))?;
    }
    Ok(st)
}

/// A middle or last rank's share of an inference: activations from the left, its stage's
/// output to the right (or, on the last rank, the predicted classes to rank 0).
fn infer_follow(s: &Session, l: &mut Local, count: usize) -> Result<()> {
    let width = l.spec.layers[l.first()];
    let mut done = 0;
    while done < count {
        let (a, _) = s
            .world
            .process_at_rank(s.rank as i32 - 1)
            .receive_vec_with_tag::<i32>(TAG_INFER);
        done += a.len() / width;
        let out = l.infer(&a)?;
        let to = if l.is_last() { 0 } else { s.rank as i32 + 1 };
        s.world
            .process_at_rank(to)
            .send_with_tag(&out[..], TAG_INFER);
    }
    Ok(())
}

/// The boundary vectors of one rank's stage, as MPI messages `[first sample, count, values…]`
/// to and from the neighbouring ranks; what arrives is kept by sample until the stage needs it.
pub(crate) struct MpiLinks<'a> {
    world: &'a SimpleCommunicator,
    rank: usize,
    from_left: Inbox,
    from_right: Inbox,
    pub wait: Duration,
    /// Boundary vectors this rank has sent since it was set up (the fault hook counts them).
    pub sent: &'a mut usize,
    fault: Option<(usize, bool)>,
}

#[derive(Default)]
struct Inbox {
    values: BTreeMap<usize, Vec<i32>>,
    next: usize,
}

impl<'a> MpiLinks<'a> {
    pub(crate) fn new(s: &'a Session, sent: &'a mut usize) -> Result<MpiLinks<'a>> {
        Ok(MpiLinks {
            world: &s.world,
            rank: s.rank,
            from_left: Inbox::default(),
            from_right: Inbox::default(),
            wait: Duration::ZERO,
            sent,
            fault: test_fault(s.rank)?,
        })
    }

    /// Samples `first..` (`values` holds them one after another) to the right (forward) or
    /// to the left (backward).
    pub(crate) fn send(
        &mut self,
        right: bool,
        first: usize,
        count: usize,
        values: &[i32],
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        if let Some((after, kill)) = self.fault {
            if *self.sent >= after {
                if kill {
                    // SAFETY: raising a signal on this process has no memory effects.
                    unsafe {
                        libc::raise(libc::SIGKILL);
                    }
                }
                bail!("test fault: the board stopped after {after} boundary vectors");
            }
        }
        let mut msg = Vec::with_capacity(2 + values.len());
        msg.extend_from_slice(&[first as i32, count as i32]);
        msg.extend_from_slice(values);
        let (to, tag) = if right {
            (self.rank + 1, TAG_FWD)
        } else {
            (self.rank - 1, TAG_BWD)
        };
        self.world
            .process_at_rank(to as i32)
            .buffered_send_with_tag(&msg[..], tag);
        *self.sent += count;
        Ok(())
    }

    /// Sample `n`'s vector from the left (activations) or the right (sums).
    pub(crate) fn recv(&mut self, right: bool, n: usize) -> Result<Vec<i32>> {
        let (inbox, from, tag) = if right {
            (&mut self.from_right, self.rank + 1, TAG_BWD)
        } else {
            (&mut self.from_left, self.rank - 1, TAG_FWD)
        };
        let t0 = Instant::now();
        while !inbox.values.contains_key(&n) {
            if inbox.next > n {
                bail!("sample {n} from rank {from} was already used");
            }
            let (msg, _) = self
                .world
                .process_at_rank(from as i32)
                .receive_vec_with_tag::<i32>(tag);
            let (first, count) = (msg[0] as usize, msg[1] as usize);
            if first != inbox.next || count == 0 || (msg.len() - 2) % count != 0 {
                bail!(
                    "rank {from} sent samples {first}..{} where sample {} was next",
                    first + count,
                    inbox.next
                );
            }
            let w = (msg.len() - 2) / count;
            for (k, v) in msg[2..].chunks(w).enumerate() {
                inbox.values.insert(first + k, v.to_vec());
            }
            inbox.next = first + count;
        }
        self.wait += t0.elapsed();
        Ok(inbox.values.remove(&n).unwrap())
    }
}

impl StageLinks for MpiLinks<'_> {
    fn recv_left(&mut self, n: usize) -> Result<Vec<i32>> {
        self.recv(false, n)
    }
    fn send_right(&mut self, n: usize, a: &[i32]) -> Result<()> {
        self.send(true, n, 1, a)
    }
    fn recv_right(&mut self, n: usize) -> Result<Vec<i32>> {
        self.recv(true, n)
    }
    fn send_left(&mut self, n: usize, sums: &[i32]) -> Result<()> {
        self.send(false, n, 1, sums)
    }
}

fn test_fault(rank: usize) -> Result<Option<(usize, bool)>> {
    let Ok(v) = std::env::var("EDGEFLOW_TEST_RANK_FAULT") else {
        return Ok(None);
    };
    let p: Vec<&str> = v.split(':').collect();
    let bad = || {
        anyhow!("EDGEFLOW_TEST_RANK_FAULT={v}: expected RANK:SAMPLES:kill or RANK:SAMPLES:error")
    };
    if p.len() != 3 || !matches!(p[2], "kill" | "error") {
        return Err(bad());
    }
    let r: usize = p[0].parse().map_err(|_| bad())?;
    let after: usize = p[1].parse().map_err(|_| bad())?;
    Ok((r == rank).then_some((after, p[2] == "kill")))
}

/// Rank 0's view of the job: a board whose stages are the ranks.
pub struct MpiPipeline {
    s: Session,
    local: Local,
    pub timings: Arc<Mutex<Vec<StageTiming>>>,
    name: String,
}

impl MpiPipeline {
    /// Set up stage `r` of the plan (`plan_text`, as read from its file) on every rank `r`
    /// with `backend`; fails, naming the rank, host and stage, if any rank cannot open its board.
    pub fn new(mut s: Session, plan_text: &str, backend: &str) -> Result<MpiPipeline> {
        let setup = serde_json::json!({"plan": plan_text, "backend": backend}).to_string();
        let peek = Local::peek(&setup)?;
        if peek.stages != s.size {
            bail!(
                "the plan has {} stages but mpirun started {} ranks; run it with mpirun -np {}",
                peek.stages,
                s.size,
                peek.stages
            );
        }
        s.command(&mut [CMD_SETUP, 0]);
        s.broadcast_vec(&mut setup.clone().into_bytes());
        let mine = Local::open(&setup, 0, s.size);
        let mut errors = Vec::new();
        let mut lines = Vec::new();
        let roles = peek.roles;
        match &mine {
            Ok(_) => lines.push(format!("{} runs on rank 0, host {}", roles[0], s.host)),
            Err(e) => errors.push(format!("rank 0 on host {}, {}: {e:#}", s.host, roles[0])),
        }
        for r in 1..s.size {
            let (msg, _) = s
                .world
                .process_at_rank(r as i32)
                .receive_vec_with_tag::<u8>(TAG_HELLO);
            let msg = String::from_utf8_lossy(&msg).to_string();
            let (host, err) = msg.split_once('\n').unwrap_or((&msg, ""));
            if err.is_empty() {
                lines.push(format!("{} runs on rank {r}, host {host}", roles[r]));
            } else {
                errors.push(format!("rank {r} on host {host}, {}: {err}", roles[r]));
            }
        }
        if !errors.is_empty() {
            bail!("{}", errors.join("\n"));
        }
        for l in &lines {
            eprintln!("edgeflow: {l}");
        }
        let local = mine?;
        s.role = local.role();
        s.set_send_buffer(local.send_buffer_bytes());
        Ok(MpiPipeline {
            name: format!("{} x{} MPI ranks", local.backend, s.size),
            timings: Arc::new(Mutex::new(vec![StageTiming::default(); s.size])),
            s,
            local,
        })
    }

    fn or_die<T>(&self, r: Result<T>) -> T {
        r.unwrap_or_else(|e| self.s.die(&e))
    }
}

impl Board for MpiPipeline {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        state.check_shape(&self.local.spec)?;
        self.s.command(&mut [CMD_LOAD, 0]);
        let mut v: Vec<i32> = state
            .weights
            .iter()
            .chain(&state.biases)
            .flatten()
            .copied()
            .collect();
        self.s.broadcast_vec(&mut v);
        let r = self.local.load_state(state);
        self.or_die(r);
        Ok(())
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        self.s.command(&mut [CMD_TRAIN, data.len() as i64]);
        if self.s.size > 1 {
            let labels: Vec<i32> = data.labels.iter().map(|&y| y as i32).collect();
            self.s
                .world
                .process_at_rank(self.s.size as i32 - 1)
                .send_with_tag(&labels[..], TAG_LABELS);
        }
        let r = self
            .local
            .train(&self.s, data.len(), &data.inputs, &data.labels);
        self.or_die(r);
        Ok(())
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        self.s.command(&mut [CMD_INFER, data.len() as i64]);
        let mut pred = Vec::with_capacity(data.len());
        let w = data.inputs_per_sample;
        for chunk in data.inputs.chunks(INFER_CHUNK * w) {
            let r = self.local.infer(chunk);
            let out = self.or_die(r);
            if self.s.size == 1 {
                pred.extend(out.iter().map(|&p| p as usize));
                continue;
            }
            self.s
                .world
                .process_at_rank(1)
                .send_with_tag(&out[..], TAG_INFER);
            let (p, _) = self
                .s
                .world
                .process_at_rank(self.s.size as i32 - 1)
                .receive_vec_with_tag::<i32>(TAG_INFER);
            pred.extend(p.iter().map(|&p| p as usize));
        }
        Ok(pred)
    }
    fn read_state(&mut self) -> Result<State> {
        self.s.command(&mut [CMD_READ, 0]);
        let mut st = State::initial(&self.local.spec);
        let r = self.local.read_state(&mut st);
        self.or_die(r);
        let mut tm = self.timings.lock().unwrap();
        tm[0] = self.local.timing.clone();
        for (r, range) in self.local.ranges.clone().into_iter().enumerate().skip(1) {
            let p = self.s.world.process_at_rank(r as i32);
            let (v, _) = p.receive_vec_with_tag::<i32>(TAG_STATE);
            let (t, _) = p.receive_vec_with_tag::<f64>(TAG_STATE);
            let mut it = v.into_iter();
            for j in range.0..=range.1 {
                for x in st.weights[j].iter_mut().chain(st.biases[j].iter_mut()) {
                    *x = it
                        .next()
                        .ok_or_else(|| anyhow!("rank {r} sent a short state"))?;
                }
            }
            tm[r] = timing_from_vec(&t);
        }
        Ok(st)
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.local.spec.edge_ops_per_sample() as u64
    }
}
