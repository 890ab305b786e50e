//! Several RTL-simulated boards trained as one pipeline: each board is an `hdl::stage::Stage`
//! (a junction range on the chain's schedule, with boundary ports) clocked in rust-hdl's
//! signal-level simulation, and this runtime carries the links between them.
//!
//! Every block cycle `t` of the chain, in this order:
//! 1. each stage with a left port reads out (and clears) the delta sums its first junction
//!    accumulated in block cycle `t - 1`; they enter the backward link;
//! 2. stage by stage, upstream first: between block cycles it receives the delta sums its
//!    last junction's BP needs in `t` (from the backward link), the activations its first
//!    junction's FF needs in `t + 1` (from the forward link), the input sample and label of
//!    block cycle `t`; then it runs block cycle `t`, and the activations its last junction
//!    produced enter the forward link.
//!
//! A link of `d` block cycles hands a vector over exactly `d` block cycles after it entered
//! (checked for every vector), which is `sim::Schedule::with_links`: the run is bit-identical
//! to the reference model with the chain's staleness vector. With `d = 0` the upstream-first
//! order of step 2 and the readout of step 1 make the hand-over happen within the block
//! cycle, as the wires of one board would.

use crate::reference::Schedule;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_hdl::fixed::{b16, s16, s32};
use edgeflow_hdl::params::JunctionParams;
use edgeflow_hdl::stage::Stage;
use edgeflow_hdl::testing::settle;
use rust_hdl::core::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

mod stream;
pub use stream::StageIo;

/// What one simulated stage measured over a stream.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StageStats {
    /// Block cycles the stage ran.
    pub block_cycles: u64,
    /// Clocks inside block cycles (the datapath working).
    pub block_clocks: u64,
    /// Clocks spent between block cycles on the boundary ports and loading samples.
    pub port_clocks: u64,
    /// The stage's block cycle, in clocks, as its controller ran it (largest seen).
    pub clocks_per_block_cycle: u64,
    /// Wall-clock seconds simulating this stage.
    pub seconds: f64,
    /// Delta sums the left port saturated on their way onto the link.
    pub saturated_sums: u64,
}

/// One board of the chain: a stage in simulation.
pub struct StageSim {
    pub stage: Box<Stage>,
    pub first: usize,
    pub last: usize,
    ff: Vec<usize>,
    bp: Vec<usize>,
    ps: Vec<JunctionParams>,
    layers: Vec<usize>,
    in_copies: usize,
    lab_copies: usize,
    pub stats: StageStats,
    /// Clock edges simulated so far.
    pub clocks: u64,
    /// With [`StageSim::record`]: every clock's input and output ports just before its rising
    /// edge, to replay on the stage's Verilog.
    pub trace: Option<Vec<(Vec<u64>, Vec<u64>)>>,
}

impl StageSim {
    pub fn new(spec: &Spec, first: usize, last: usize, sched: &Schedule) -> StageSim {
        let mut stage = Box::new(Stage::new(spec, first..=last, &sched.ff, &sched.bp));
        stage.connect_all();
        settle(stage.as_mut());
        let ps: Vec<JunctionParams> = (first..=last)
            .map(|j| JunctionParams::with_schedule(spec, j, &sched.ff, &sched.bp))
            .collect();
        StageSim {
            first,
            last,
            ff: sched.ff.clone(),
            bp: sched.bp.clone(),
            in_copies: ps[0].act_copies,
            lab_copies: sched.bp[0] - sched.ff[0] + 3,
            ps,
            layers: spec.layers.clone(),
            stage,
            stats: StageStats::default(),
            clocks: 0,
            trace: None,
        }
    }

    /// Record every clock from now on (`trace`).
    pub fn record(&mut self) {
        self.trace = Some(Vec::new());
    }

    fn tick(&mut self) {
        if let Some(tr) = self.trace.as_mut() {
            let (i, o) = ports(&self.stage);
            tr.push((
                i.iter().map(|p| p.2).collect(),
                o.iter().map(|p| p.2).collect(),
            ));
        }
        let s = self.stage.as_mut();
        s.clock.next = Clock { clk: true };
        settle(s);
        s.clock.next = Clock { clk: false };
        // nothing happens on a falling edge; it settles together with the next inputs
        self.clocks += 1;
    }

    /// A clock between block cycles (the ports' work).
    fn port_tick(&mut self) {
        settle(self.stage.as_mut());
        self.tick();
        self.stats.port_clocks += 1;
    }

    /// Write every weight and bias of the stage's junctions from `state`.
    pub fn load_state(&mut self, state: &State) {
        let t0 = Instant::now();
        for (k, j) in (self.first..=self.last).enumerate() {
            let p = self.ps[k].clone();
            self.stage.h_sel[k].next = true;
            self.stage.h_we.next = true;
            for (bias, vals, banks) in [
                (false, &state.weights[j], p.z),
                (true, &state.biases[j], p.groups),
            ] {
                for (i, &v) in vals.iter().enumerate() {
                    let s = self.stage.as_mut();
                    s.h_bias.next = bias;
                    s.h_bank.next = b16((i % banks) as i32);
                    s.h_addr.next = b16((i / banks) as i32);
                    s.h_wdata.next = b16(v);
                    self.port_tick();
                }
            }
            self.stage.h_we.next = false;
            self.stage.h_sel[k].next = false;
        }
        settle(self.stage.as_mut());
        self.stats.seconds += t0.elapsed().as_secs_f64();
    }

    /// Read every weight and bias of the stage's junctions into `state`.
    pub fn read_state(&mut self, state: &mut State) {
        let t0 = Instant::now();
        for (k, j) in (self.first..=self.last).enumerate() {
            let p = self.ps[k].clone();
            self.stage.h_sel[k].next = true;
            for (bias, banks) in [(false, p.z), (true, p.groups)] {
                let vals = if bias {
                    &mut state.biases[j]
                } else {
                    &mut state.weights[j]
                };
                for (i, v) in vals.iter_mut().enumerate() {
                    let s = self.stage.as_mut();
                    s.h_bias.next = bias;
                    s.h_bank.next = b16((i % banks) as i32);
                    s.h_addr.next = b16((i / banks) as i32);
                    // synchronous-read RAM: the address is taken at this edge
                    self.port_tick();
                    settle(self.stage.as_mut());
                    *v = s16(self.stage.h_rdata[k].val());
                }
            }
            self.stage.h_sel[k].next = false;
        }
        settle(self.stage.as_mut());
        self.stats.seconds += t0.elapsed().as_secs_f64();
    }

    /// Start a stream of `samples` (train or infer): the stage waits before block cycle 0.
    pub fn begin(&mut self, samples: usize, train: bool) {
        let s = self.stage.as_mut();
        s.allow.next = Bits::<32>::from(0u64);
        s.go.next = true;
        s.go_train.next = train;
        s.go_samples.next = b16(samples as i32);
        self.port_tick();
        self.stage.go.next = false;
        settle(self.stage.as_mut());
    }

    /// Input sample `n` into the first junction's copy for it.
    fn write_input(&mut self, n: usize, x: &[i32]) {
        let c = n % self.in_copies;
        for (i, &v) in x.iter().enumerate() {
            let s = self.stage.as_mut();
            s.in_we.next = true;
            s.in_copy.next = b16(c as i32);
            s.in_addr.next = b16(i as i32);
            s.in_data.next = b16(v);
            self.port_tick();
        }
        self.stage.in_we.next = false;
    }

    fn write_label(&mut self, n: usize, label: usize) {
        let s = self.stage.as_mut();
        s.lab_we.next = true;
        s.lab_copy.next = b16((n % self.lab_copies) as i32);
        s.lab_data.next = b16(label as i32);
        self.port_tick();
        self.stage.lab_we.next = false;
    }

    /// Left port: activations of the sample the first junction's FF runs next block cycle,
    /// `g` neurons per clock as the previous junction's FF would write them.
    fn write_left(&mut self, a: &[i32]) {
        let g = self.stage.lw_en.len();
        for row in 0..a.len() / g {
            for q in 0..g {
                let s = self.stage.as_mut();
                s.lw_en[q].next = true;
                s.lw_addr[q].next = b16((row * g + q) as i32);
                s.lw_a[q].next = b16(a[row * g + q]);
            }
            self.port_tick();
        }
        for q in 0..g {
            self.stage.lw_en[q].next = false;
        }
    }

    /// Left port: the delta sums the first junction's BP accumulated in the last block cycle,
    /// read and cleared.
    fn read_left(&mut self) -> Vec<i32> {
        let g = self.stage.lq_addr.len();
        let n = self.layers[self.first];
        let mut out = vec![0; n];
        for row in 0..n / g {
            for q in 0..g {
                let s = self.stage.as_mut();
                s.lq_addr[q].next = b16((row * g + q) as i32);
                s.lq_clear[q].next = true;
            }
            settle(self.stage.as_mut());
            for q in 0..g {
                out[row * g + q] = s16(self.stage.lq_sum[q].val());
                let wide = s32(self.stage.junctions[0].lq_acc[q].val());
                self.stats.saturated_sums += (wide != out[row * g + q] as i64) as u64;
            }
            self.port_tick();
        }
        for q in 0..g {
            self.stage.lq_clear[q].next = false;
        }
        out
    }

    /// Right port: the delta sums of the sample the last junction's BP runs next.
    fn write_right(&mut self, d: &[i32]) {
        for (i, &v) in d.iter().enumerate() {
            let s = self.stage.as_mut();
            s.d_we.next = true;
            s.d_addr.next = b16(i as i32);
            s.d_data.next = b16(v);
            self.port_tick();
        }
        self.stage.d_we.next = false;
    }

    /// Run block cycle `t`; returns the activations the last junction's FF wrote to the right
    /// port (if it ran and the stage has one) and the prediction at the block cycle's end
    /// (the output layer's first largest activation, when this stage holds it).
    fn run_block(&mut self, t: usize) -> Result<(Option<Vec<i32>>, usize), String> {
        let s = self.stage.as_mut();
        s.allow.next = Bits::<32>::from((t + 1) as u64);
        settle(s);
        let n_right = self.layers[self.last + 1];
        let g = self.stage.rw_en.len();
        let mut out = vec![0; n_right];
        let mut wrote = 0;
        let mut clocks = 0u64;
        let limit = 4 + 2 * self.stage.block_cycle_clocks() as u64;
        let mut waited = 0;
        loop {
            settle(self.stage.as_mut());
            let s = &*self.stage;
            if s.adv.val() {
                clocks += 1;
                for q in 0..g {
                    if s.rw_en[q].val() {
                        out[s.rw_addr[q].val().index()] = s16(s.rw_a[q].val());
                        wrote += 1;
                    }
                }
                if s.last.val() {
                    let pred = s.pred.val().index();
                    self.tick();
                    self.stats.block_clocks += clocks;
                    self.stats.block_cycles += 1;
                    self.stats.clocks_per_block_cycle =
                        self.stats.clocks_per_block_cycle.max(clocks);
                    let out = if wrote == 0 {
                        None
                    } else if wrote == n_right {
                        Some(out)
                    } else {
                        return Err(format!(
                            "stage {}-{}: block cycle {t} wrote {wrote} of {n_right} right-layer activations",
                            self.first + 1,
                            self.last + 1
                        ));
                    };
                    return Ok((out, pred));
                }
                self.tick();
            } else {
                waited += 1;
                if waited > limit || clocks > 0 {
                    return Err(format!(
                        "stage {}-{}: block cycle {t} did not run (started {})",
                        self.first + 1,
                        self.last + 1,
                        s.started.val().to_u32()
                    ));
                }
                self.port_tick();
            }
        }
    }

    /// Sample whose FF junction `j` runs in block cycle `t`, if any.
    fn ff_sample(&self, j: usize, t: usize, samples: usize) -> Option<usize> {
        (t >= self.ff[j] && t - self.ff[j] < samples).then(|| t - self.ff[j])
    }

    fn bp_sample(&self, j: usize, t: usize, samples: usize) -> Option<usize> {
        (t >= self.bp[j] && t - self.bp[j] < samples).then(|| t - self.bp[j])
    }
}

type Port = (String, usize, u64);

/// The stage's input and output ports (name, bits, value), clock excluded.
pub fn ports(s: &Stage) -> (Vec<Port>, Vec<Port>) {
    fn p<const N: usize>(v: &mut Vec<Port>, name: &str, x: Bits<N>) {
        v.push((name.to_string(), N, x.to_u64()));
    }
    fn b(v: &mut Vec<Port>, name: &str, x: bool) {
        v.push((name.to_string(), 1, x as u64));
    }
    let (mut i, mut o) = (Vec::new(), Vec::new());
    b(&mut i, "go", s.go.val());
    b(&mut i, "go_train", s.go_train.val());
    p(&mut i, "go_samples", s.go_samples.val());
    p(&mut i, "allow", s.allow.val());
    b(&mut i, "lab_we", s.lab_we.val());
    p(&mut i, "lab_copy", s.lab_copy.val());
    p(&mut i, "lab_data", s.lab_data.val());
    b(&mut i, "in_we", s.in_we.val());
    p(&mut i, "in_copy", s.in_copy.val());
    p(&mut i, "in_addr", s.in_addr.val());
    p(&mut i, "in_data", s.in_data.val());
    for (k, x) in s.h_sel.iter().enumerate() {
        b(&mut i, &format!("h_sel${k}"), x.val());
    }
    b(&mut i, "h_bias", s.h_bias.val());
    b(&mut i, "h_we", s.h_we.val());
    p(&mut i, "h_addr", s.h_addr.val());
    p(&mut i, "h_bank", s.h_bank.val());
    p(&mut i, "h_wdata", s.h_wdata.val());
    for q in 0..s.lw_en.len() {
        b(&mut i, &format!("lw_en${q}"), s.lw_en[q].val());
        p(&mut i, &format!("lw_addr${q}"), s.lw_addr[q].val());
        p(&mut i, &format!("lw_a${q}"), s.lw_a[q].val());
        p(&mut i, &format!("lq_addr${q}"), s.lq_addr[q].val());
        b(&mut i, &format!("lq_clear${q}"), s.lq_clear[q].val());
    }
    b(&mut i, "d_we", s.d_we.val());
    p(&mut i, "d_addr", s.d_addr.val());
    p(&mut i, "d_data", s.d_data.val());
    p(&mut o, "started", s.started.val());
    b(&mut o, "done", s.done.val());
    b(&mut o, "adv", s.adv.val());
    b(&mut o, "last", s.last.val());
    for (k, x) in s.h_rdata.iter().enumerate() {
        p(&mut o, &format!("h_rdata${k}"), x.val());
    }
    for (q, x) in s.lq_sum.iter().enumerate() {
        p(&mut o, &format!("lq_sum${q}"), x.val());
    }
    for q in 0..s.rw_en.len() {
        b(&mut o, &format!("rw_en${q}"), s.rw_en[q].val());
        p(&mut o, &format!("rw_addr${q}"), s.rw_addr[q].val());
        p(&mut o, &format!("rw_a${q}"), s.rw_a[q].val());
    }
    p(&mut o, "pred", s.pred.val());
    (i, o)
}

/// Replay a recorded trace on the stage's Verilog in Icarus Verilog: the same inputs every
/// clock, and the outputs compared with the recording just before every rising edge.
/// `Ok(None)` when iverilog is not installed; `Err` names the first differing output.
pub fn iverilog_replay(
    stage: &Stage,
    verilog: &str,
    trace: &[(Vec<u64>, Vec<u64>)],
    name: &str,
) -> Result<Option<()>, String> {
    use std::fmt::Write;
    use std::process::Command;
    if Command::new("iverilog").arg("-V").output().is_err() {
        return Ok(None);
    }
    let dir = std::env::temp_dir().join(format!("edgeflow-stage-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (ins, outs) = ports(stage);
    let width: usize = ins.iter().map(|p| p.1).sum();
    let mut stim = String::new();
    for (iv, _) in trace {
        // one hex word per clock, the first input in the most significant bits
        let mut bits = Vec::with_capacity(width);
        for (p, &v) in ins.iter().zip(iv) {
            for k in (0..p.1).rev() {
                bits.push((v >> k) & 1 == 1);
            }
        }
        while bits.len() % 4 != 0 {
            bits.insert(0, false);
        }
        for c in bits.chunks(4) {
            let d = c.iter().fold(0, |a, &x| a * 2 + x as u32);
            stim.push(char::from_digit(d, 16).unwrap());
        }
        stim.push('\n');
    }
    std::fs::write(dir.join("stim.hex"), stim).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("top.v"), verilog).map_err(|e| e.to_string())?;
    let mut tb = String::from("`timescale 1ns/1ps\nmodule tb;\nreg clock = 1'b0;\n");
    for (k, p) in ins.iter().enumerate() {
        let _ = writeln!(tb, "reg [{}:0] i{k};", p.1 - 1);
    }
    for (k, p) in outs.iter().enumerate() {
        let _ = writeln!(tb, "wire [{}:0] o{k};", p.1 - 1);
    }
    let _ = writeln!(
        tb,
        "reg [{}:0] stim [0:{}];\ninteger c;",
        width.div_ceil(4) * 4 - 1,
        trace.len().max(1) - 1
    );
    let mut conn = vec![".clock(clock)".to_string()];
    conn.extend(
        ins.iter()
            .enumerate()
            .map(|(k, p)| format!(".{}(i{k})", p.0)),
    );
    conn.extend(
        outs.iter()
            .enumerate()
            .map(|(k, p)| format!(".{}(o{k})", p.0)),
    );
    let _ = writeln!(tb, "top dut({});", conn.join(", "));
    let all_in: Vec<String> = (0..ins.len()).map(|k| format!("i{k}")).collect();
    let fmt: Vec<&str> = outs.iter().map(|_| "%h").collect();
    let all_out: Vec<String> = (0..outs.len()).map(|k| format!("o{k}")).collect();
    let _ = writeln!(
        tb,
        "initial begin
    $readmemh(\"stim.hex\", stim);
    for (c = 0; c < {n}; c = c + 1) begin
        #1 {{{ins}}} = stim[c];
        #4 clock = 1'b0;
        #4 $display(\"{fmt}\", {outs});
        #1 clock = 1'b1;
    end
    $finish;
end
endmodule",
        n = trace.len(),
        ins = all_in.join(", "),
        fmt = fmt.join(" "),
        outs = all_out.join(", "),
    );
    std::fs::write(dir.join("tb.v"), tb).map_err(|e| e.to_string())?;
    let text = crate::rtl::icarus(&dir)?;
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("VCD") && !l.contains("$finish"))
        .collect();
    if lines.len() != trace.len() {
        return Err(format!(
            "{name}: the Verilog printed {} clocks of {} ({})",
            lines.len(),
            trace.len(),
            dir.display()
        ));
    }
    for (c, (line, (_, want))) in lines.iter().zip(trace).enumerate() {
        for ((p, &w), got) in outs.iter().zip(want).zip(line.split_whitespace()) {
            if u64::from_str_radix(got, 16).ok() != Some(w) {
                return Err(format!(
                    "{name}: clock {c}: output {} is {got} in the Verilog, {w:x} in the model ({})",
                    p.0,
                    dir.display()
                ));
            }
        }
    }
    if std::env::var("EDGEFLOW_KEEP_IVERILOG").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(Some(()))
}

/// The boards of a chain, each a simulated stage, and the links between them.
pub struct RtlChain {
    pub spec: Spec,
    pub stages: Vec<StageSim>,
    pub link_delay: Vec<usize>,
    pub schedule: Schedule,
}

/// A vector in flight on a link: the block cycle it entered, its values.
type Link<T> = HashMap<usize, (usize, Vec<T>)>;

fn take<T>(link: &mut Link<T>, n: usize, t: usize, d: usize, what: &str) -> Result<Vec<T>, String> {
    let (t0, v) = link
        .remove(&n)
        .ok_or_else(|| format!("{what} of sample {n} missing in block cycle {t}"))?;
    if t - t0 != d {
        return Err(format!(
            "{what} of sample {n} took {} block cycles, the link has {d}",
            t - t0
        ));
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
    ) -> Result<RtlChain, String> {
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
    ) -> Result<RtlChain, String> {
        let l = spec.junctions();
        if builds.len() != stages.len() {
            return Err(format!(
                "{} builds for {} stages",
                builds.len(),
                stages.len()
            ));
        }
        if link_delay.len() + 1 != l {
            return Err(format!(
                "link delays: {} entries for {l} junctions (need {})",
                link_delay.len(),
                l - 1
            ));
        }
        let mut next = 0;
        for &(a, b) in stages {
            if a != next || b < a || b >= l {
                return Err(format!(
                    "stages {stages:?} do not cover junctions 1..{l} in order"
                ));
            }
            next = b + 1;
        }
        if next != l {
            return Err(format!("stages {stages:?} do not cover all {l} junctions"));
        }
        for (j, &d) in link_delay.iter().enumerate() {
            if d > 0 && !stages.iter().any(|&(_, b)| b == j) {
                return Err(format!(
                    "link delay {d} between junctions {} and {} inside a stage",
                    j + 1,
                    j + 2
                ));
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

    pub fn load_state(&mut self, state: &State) -> Result<(), String> {
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
    pub fn run(&mut self, data: &Encoded, train: bool) -> Result<Vec<usize>, String> {
        let samples = data.len();
        if samples > 65535 {
            return Err(format!(
                "one stream carries at most 65535 samples, got {samples}"
            ));
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
                        st.write_right(&v);
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
                        let v = out.ok_or_else(|| {
                            format!(
                                "stage {}-{}: no activations for sample {n} in block cycle {t}",
                                first + 1,
                                last + 1
                            )
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
                return Err(format!(
                    "stage {}-{} ran {got} block cycles of its stream's {want}",
                    s.first + 1,
                    s.last + 1
                ));
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
) -> Result<ChainReport, String> {
    check_chain_from(spec, &State::initial(spec), stages, link_delay, data)
}

/// [`check_chain`] from the state `init`.
pub fn check_chain_from(
    spec: &Spec,
    init: &State,
    stages: &[(usize, usize)],
    link_delay: &[usize],
    data: &Encoded,
) -> Result<ChainReport, String> {
    let mut chain = RtlChain::new(spec, stages, link_delay)?;
    let init = init.clone();
    chain.load_state(&init)?;
    let staleness = chain.schedule.staleness();
    let mut reference = crate::Reference::with_state(spec, init.clone(), staleness.clone())?;
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
        first_difference = crate::rtl::first_prediction_difference(&reference.infer(data), &pred);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtl::{random_data, random_spec};

    fn tiny() -> Spec {
        Spec::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"))
            .unwrap()
    }

    fn assert_exact(r: &ChainReport, what: &str) {
        assert_eq!(r.first_difference, None, "{what}: {r:?}");
        assert_eq!(r.state_sha256, r.reference_sha256, "{what}");
        eprintln!(
            "{what}: stages {:?} delays {:?} staleness {:?}: {} samples, {} block cycles, sha256 {}",
            r.stages, r.link_delay, r.staleness, r.samples, r.block_cycles, r.state_sha256
        );
    }

    /// One stage of every junction, no links: the single-board schedule and its bits.
    #[test]
    fn one_stage_is_the_single_board_network() {
        let sp = tiny();
        let d = random_data(&sp, 24, 3);
        let r = check_chain(&sp, &[(0, 1)], &[0], &d).unwrap();
        assert_eq!(r.staleness, sp.default_staleness());
        assert_exact(&r, "tiny, one stage");
        // the longest pass (8 clocks) plus the 2 clocks of the FF pipeline
        assert_eq!(r.stage_stats[0].clocks_per_block_cycle, 8 + 2);
    }

    /// tiny on two boards, with a link of 0 and of 2 block cycles: the reference model with
    /// the chain's staleness, every bit; the delayed link really changes the bits.
    #[test]
    fn tiny_on_two_boards_is_bit_exact() {
        let sp = tiny();
        let d = random_data(&sp, 30, 5);
        let mut single = crate::Reference::new(&sp);
        single.train(&d);
        for delay in [0, 2] {
            let r = check_chain(&sp, &[(0, 0), (1, 1)], &[delay], &d).unwrap();
            assert_exact(&r, &format!("tiny, 2 boards, link {delay}"));
            assert_eq!(r.staleness, vec![3 + 2 * delay, 1]);
            assert_eq!(
                r.state_sha256 == single.state.sha256(),
                delay == 0,
                "a link of {delay} block cycles must change the result exactly when it is not 0"
            );
            // each board's block cycle is its own junction's pass (4 and 8 clocks) plus the
            // 2 clocks of the FF pipeline
            assert_eq!(r.stage_stats[0].clocks_per_block_cycle, 4 + 2);
            assert_eq!(r.stage_stats[1].clocks_per_block_cycle, 8 + 2);
        }
    }

    /// Stages built with registered reads and the deep pipeline (what an iCEBreaker builds):
    /// the same bits, each block cycle three clocks longer.
    #[test]
    fn stages_with_the_deep_pipeline_are_bit_exact() {
        let mut sp = tiny();
        sp.registered_reads = true;
        sp.deep_pipeline = true;
        let d = random_data(&sp, 30, 5);
        for delay in [0, 2] {
            let r = check_chain(&sp, &[(0, 0), (1, 1)], &[delay], &d).unwrap();
            assert_exact(&r, &format!("tiny, deep pipeline, 2 boards, link {delay}"));
            assert_eq!(r.stage_stats[0].clocks_per_block_cycle, 4 + 5);
            assert_eq!(r.stage_stats[1].clocks_per_block_cycle, 8 + 5);
        }
        // one board building with them next to one building without (iCEBreaker and Nexys)
        let sp = tiny();
        let mut chain = RtlChain::with_builds(
            &sp,
            &[(0, 0), (1, 1)],
            &[1],
            &[(true, true), (false, false)],
        )
        .unwrap();
        chain.load_state(&State::initial(&sp)).unwrap();
        chain.run(&d, true).unwrap();
        let mut reference =
            crate::Reference::with_state(&sp, State::initial(&sp), chain.schedule.staleness())
                .unwrap();
        reference.train(&d);
        assert_eq!(chain.read_state().sha256(), reference.state.sha256());
        assert_eq!(chain.stages[0].stats.clocks_per_block_cycle, 4 + 5);
        assert_eq!(chain.stages[1].stats.clocks_per_block_cycle, 8 + 2);
        for seed in [3u64, 8, 21] {
            let mut sp = random_spec(seed);
            sp.registered_reads = true;
            sp.deep_pipeline = true;
            let l = sp.junctions();
            let stages: Vec<(usize, usize)> = (0..l).map(|j| (j, j)).collect();
            let d = random_data(&sp, 12, seed);
            let r = check_chain(&sp, &stages, &vec![1; l - 1], &d).unwrap();
            assert_exact(&r, &format!("seed {seed}, deep pipeline, {l} boards"));
        }
    }

    /// Random specs of 3 and 4 junctions on three boards with mixed link delays: both
    /// activations, both depths, and a stage of two junctions in the middle or at an end.
    #[test]
    fn random_specs_on_three_boards_are_bit_exact() {
        let mut seen = std::collections::BTreeSet::new();
        let mut done = 0;
        for seed in 0..200u64 {
            let sp = random_spec(seed);
            let l = sp.junctions();
            let relu = sp.activation == edgeflow_core::Activation::Relu;
            if l < 3 || seen.contains(&(l, relu)) && done >= 4 {
                continue;
            }
            let (stages, delays) = match (l, seed % 2) {
                (3, _) => (vec![(0, 0), (1, 1), (2, 2)], vec![1 + seed as usize % 2, 0]),
                (_, 0) => (
                    vec![(0, 1), (2, 2), (3, 3)],
                    vec![0, seed as usize % 3, 1 + seed as usize % 2],
                ),
                _ => (
                    vec![(0, 0), (1, 2), (3, 3)],
                    vec![seed as usize % 3, 0, 1 + seed as usize % 2],
                ),
            };
            let d = random_data(&sp, 16, seed);
            let r = check_chain(&sp, &stages, &delays, &d).unwrap();
            assert_eq!(r.first_difference, None, "seed {seed}\n{}", sp.to_toml());
            assert_exact(&r, &format!("seed {seed} ({l} junctions, relu {relu})"));
            seen.insert((l, relu));
            done += 1;
            if seen.len() == 4 {
                break;
            }
        }
        assert_eq!(
            seen.len(),
            4,
            "3 and 4 junctions, sigmoid and ReLU: {seen:?}"
        );
    }

    /// Weights at the format's maximum make the boundary's delta sums overflow the value
    /// format: the link carries them saturated, and the bits still match.
    #[test]
    fn saturated_boundary_sums_stay_bit_exact() {
        let sp = tiny();
        let mut st = State::initial(&sp);
        let max = sp.format().max();
        st.weights.iter_mut().flatten().for_each(|w| *w = max);
        let d = random_data(&sp, 12, 8);
        let r = check_chain_from(&sp, &st, &[(0, 0), (1, 1)], &[1], &d).unwrap();
        assert_exact(&r, "tiny, weights at the maximum");
        assert!(
            r.stage_stats[1].saturated_sums > 0,
            "no boundary sum saturated: {:?}",
            r.stage_stats
        );
    }

    /// Every stage's generated Verilog, replayed in Icarus Verilog on the inputs the chain gave
    /// its rust-hdl model (load, a training stream, read-back, an inference stream), gives
    /// the same outputs at every clock.
    #[test]
    fn stage_verilog_replays_like_the_model() {
        // tiny from its initial state and with every weight at the maximum (the boundary's
        // delta sums saturate), and a random spec
        let cases = [
            (tiny(), vec![(0, 0), (1, 1)], vec![1], false),
            (tiny(), vec![(0, 0), (1, 1)], vec![0], true),
            (random_spec(2), vec![], vec![], false),
        ];
        for (sp, stages, delays, at_max) in cases {
            let mut init = State::initial(&sp);
            if at_max {
                let max = sp.format().max();
                init.weights.iter_mut().flatten().for_each(|w| *w = max);
            }
            let (stages, delays) = if stages.is_empty() {
                // a random spec: one stage per junction, links of 0, 1, 2 … block cycles
                let l = sp.junctions();
                ((0..l).map(|j| (j, j)).collect(), (0..l - 1).collect())
            } else {
                (stages, delays)
            };
            let mut chain = RtlChain::new(&sp, &stages, &delays).unwrap();
            chain.stages.iter_mut().for_each(|s| s.record());
            chain.load_state(&init).unwrap();
            let d = random_data(&sp, 10, 4);
            chain.run(&d, true).unwrap();
            let got = chain.read_state();
            chain.run(&d, false).unwrap();
            if at_max {
                assert!(chain.stages[1].stats.saturated_sums > 0);
            }
            let mut want =
                crate::Reference::with_state(&sp, init, chain.schedule.staleness()).unwrap();
            want.train(&d);
            assert_eq!(want.state.first_difference(&got, None), None);
            for st in &chain.stages {
                let v = edgeflow_hdl::stage::verilog(
                    &sp,
                    st.first..=st.last,
                    &chain.schedule.ff,
                    &chain.schedule.bp,
                );
                let name = format!(
                    "{}{}-{}-{}",
                    sp.name,
                    if at_max { "-max" } else { "" },
                    st.first + 1,
                    st.last + 1
                );
                let trace = st.trace.as_ref().unwrap();
                match iverilog_replay(&st.stage, &v, trace, &name).unwrap() {
                    Some(()) if st.first == 0 => {
                        // the comparison is live: one flipped output bit is found
                        let mut bad = trace.clone();
                        let c = bad.len() / 2;
                        bad[c].1[0] ^= 1;
                        let e = iverilog_replay(&st.stage, &v, &bad, &name).unwrap_err();
                        assert!(e.contains(&format!("clock {c}: output started")), "{e}");
                        eprintln!("{name}: {} clocks replayed, every output equal; a flipped bit is caught", trace.len());
                    }
                    Some(()) => eprintln!(
                        "{name}: {} clocks replayed, every output equal",
                        trace.len()
                    ),
                    None => {
                        if std::env::var("CI").as_deref() == Ok("true") {
                            panic!("iverilog is required under CI=true");
                        }
                        eprintln!("skipping the Verilog replay: iverilog is not installed");
                        return;
                    }
                }
            }
        }
    }

    #[test]
    fn bad_chains_are_rejected() {
        let sp = tiny();
        assert!(RtlChain::new(&sp, &[(0, 0)], &[0])
            .err()
            .unwrap()
            .contains("cover"));
        assert!(RtlChain::new(&sp, &[(0, 1)], &[1])
            .err()
            .unwrap()
            .contains("inside"));
        assert!(RtlChain::new(&sp, &[(0, 0), (1, 1)], &[])
            .err()
            .unwrap()
            .contains("link delays"));
    }
}
