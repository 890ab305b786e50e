//! The network controller: runs the block cycles of a TRAIN or INFER stream. It keeps the
//! block-cycle counter `t` (block cycles started) and the clock `k` within the block cycle,
//! derives each junction's FF and BP/UP enables from `t` and the stream length (FF of
//! junction `j` on sample `t - j`, BP/UP on sample `t - (2L-1-j)`, BP/UP off in infer mode),
//! the parity of the delta buffers, and the label delay line: a ring of labels indexed like
//! the input copies, read for the sample the last junction's FF is on (`t - (L-1)`).
//!
//! A block cycle starts as soon as the previous one has ended and its sample is loaded, so
//! in the steady state a sample takes exactly `T = C + 2` clocks (`C` the longest pass plus
//! the FF pipeline's latency, params.rs; or the `N_0 + 1`
//! clocks its words take on the link, when that is longer). The host link (host_link.rs)
//! takes input for sample `m` once block cycle `m - 3` is done, so the host streams up to
//! two samples ahead. In infer mode the block cycle that produces a prediction does not end
//! while the previous prediction still waits in the host link's output register.

use crate::fixed::b16;
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

/// What the controller and host link need to know about the network.
#[derive(Clone, Debug)]
pub struct CtrlParams {
    pub junctions: usize,
    pub inputs: usize,
    /// Block-cycle length in clocks.
    pub t: usize,
    /// Input copies (`2L + 2`).
    pub in_copies: usize,
    /// Per junction: weight banks (z) and rows (C_j), bias banks (groups) and rows.
    pub w_banks: Vec<usize>,
    pub w_rows: Vec<usize>,
    pub b_banks: Vec<usize>,
    pub b_rows: Vec<usize>,
    /// Block cycle of each junction's FF and BP/UP of sample 0: `j` and `2L - 1 - j` on one
    /// board; a stage of a chain (stage.rs) has the chain's offsets of its junctions.
    pub ff: Vec<usize>,
    pub bp: Vec<usize>,
    /// Every block cycle waits for `sample_ready` (a stage waits for its links), not only those
    /// that take a new sample.
    pub wait_all: bool,
}

impl CtrlParams {
    pub fn new(spec: &Spec) -> CtrlParams {
        let l = spec.junctions();
        let ps: Vec<_> = (0..l)
            .map(|j| crate::params::JunctionParams::new(spec, j))
            .collect();
        CtrlParams {
            junctions: l,
            inputs: spec.layers[0],
            t: spec.block_cycle_clocks(),
            in_copies: 2 * l + 2,
            w_banks: ps.iter().map(|p| p.z).collect(),
            w_rows: ps.iter().map(|p| p.clocks).collect(),
            b_banks: ps.iter().map(|p| p.groups).collect(),
            b_rows: ps.iter().map(|p| p.bias_rows()).collect(),
            ff: (0..l).collect(),
            bp: (0..l).map(|j| 2 * l - 1 - j).collect(),
            wait_all: false,
        }
    }

    /// `B_j`: the block cycle offset of BP/UP of junction `j` (0-based), `2L - 1 - j` on one
    /// board.
    pub fn bp_offset(&self, j: usize) -> usize {
        self.bp[j]
    }

    /// Label ring position at block cycle 0: sample `-F_last` (`-(L-1)` on one board).
    fn label_start(&self) -> usize {
        (-(self.ff[self.junctions - 1] as i64)).rem_euclid(self.in_copies as i64) as usize
    }
}

#[derive(Clone, Debug, Default)]
pub struct CState {
    active: bool,
    train: bool,
    samples: usize,
    started: usize,
    running: bool,
    k: usize,
    ff_en: Vec<bool>,
    bp_en: Vec<bool>,
    parity: bool,
    labels: Vec<u16>,
    /// A label write waits a clock in a register (copy, label): the take of the link's label
    /// beat is late in the clock, and the copy it goes to is read block cycles later.
    lab_wait: Option<(usize, u16)>,
    lab_ptr: usize,
    /// Block cycles completed since power-up (for throughput measurement).
    pub block_cycles: u64,
}

#[derive(LogicBlock)]
pub struct Controller {
    pub clock: Signal<In, Clock>,
    // from the host link
    pub go: Signal<In, Bit>,
    pub go_train: Signal<In, Bit>,
    pub go_samples: Signal<In, Bits<16>>,
    /// The sample of the block cycle that would start next is loaded (`loaded > started`):
    /// the host link keeps it as a flag, so a start compares no counters.
    pub sample_ready: Signal<In, Bit>,
    pub lab_we: Signal<In, Bit>,
    pub lab_copy: Signal<In, Bits<16>>,
    pub lab_data: Signal<In, Bits<16>>,
    pub out_busy: Signal<In, Bit>,
    // to the host link
    pub started: Signal<Out, Bits<32>>,
    /// A block cycle starts at the end of this clock (`started` counts it from the next).
    pub starting: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub pred_valid: Signal<Out, Bit>,
    // to every junction
    pub adv: Signal<Out, Bit>,
    pub k: Signal<Out, Bits<16>>,
    pub last: Signal<Out, Bit>,
    /// `adv && !last`: the block cycle moves on within itself. In the Verilog it is
    /// `running && !at_end_r`, which is the same (the output stall needs `at_end_r`) without
    /// the host link's `out_busy` in front: the junctions' prefetch addresses use it.
    pub step: Signal<Out, Bit>,
    pub parity: Signal<Out, Bit>,
    pub label: Signal<Out, Bits<16>>,
    pub ff_en: Vec<Signal<Out, Bit>>,
    pub bp_en: Vec<Signal<Out, Bit>>,
    _p: Box<CtrlParams>,
    pub _s: Box<CState>,
}

/// Combinational decisions of one clock.
struct Now {
    can_start: bool,
    adv: bool,
    last: bool,
    need_out: bool,
    done: bool,
}

impl Controller {
    pub fn new(p: CtrlParams) -> Controller {
        let l = p.junctions;
        let s = CState {
            ff_en: vec![false; l],
            bp_en: vec![false; l],
            labels: vec![0; p.in_copies],
            lab_wait: None,
            lab_ptr: p.label_start(),
            ..Default::default()
        };
        Controller {
            clock: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            sample_ready: Default::default(),
            lab_we: Default::default(),
            lab_copy: Default::default(),
            lab_data: Default::default(),
            out_busy: Default::default(),
            started: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            pred_valid: Default::default(),
            adv: Default::default(),
            k: Default::default(),
            last: Default::default(),
            step: Default::default(),
            parity: Default::default(),
            label: Default::default(),
            ff_en: crate::sigs(l),
            bp_en: crate::sigs(l),
            _p: Box::new(p),
            _s: Box::new(s),
        }
    }

    pub fn params(&self) -> &CtrlParams {
        &self._p
    }

    fn total_block_cycles(&self) -> usize {
        let s = &self._s;
        if s.samples == 0 {
            0
        } else if s.train {
            s.samples + self._p.bp[0]
        } else {
            s.samples + self._p.ff[self._p.junctions - 1]
        }
    }

    fn now(&self) -> Now {
        let s = &self._s;
        let total = self.total_block_cycles();
        let can_start = s.active
            && s.started < total
            && ((!self._p.wait_all && s.started >= s.samples) || self.sample_ready.val());
        let need_out = !s.train && s.ff_en[self._p.junctions - 1];
        let at_end = s.k + 1 == self._p.t;
        // the Verilog's adv leaves out `active`: a block cycle never runs without it
        assert!(!s.running || s.active, "a block cycle runs while inactive");
        let adv = s.active && s.running && !(at_end && need_out && self.out_busy.val());
        Now {
            can_start,
            adv,
            last: adv && at_end,
            need_out,
            done: s.active && !s.running && s.started == total,
        }
    }

    fn start_block(&mut self) {
        let p = &self._p;
        let s = &mut *self._s;
        let t = s.started;
        for j in 0..p.junctions {
            let f = p.ff[j];
            s.ff_en[j] = t >= f && t - f < s.samples;
            let b = p.bp_offset(j);
            s.bp_en[j] = s.train && t >= b && t - b < s.samples;
        }
        s.running = true;
        s.k = 0;
        s.started += 1;
    }

    fn commit(&mut self, n: &Now) {
        let (copies, lab0) = (self._p.in_copies, self._p.label_start());
        if let Some((c, l)) = self._s.lab_wait.take() {
            self._s.labels[c] = l;
        }
        if self.lab_we.val() {
            let c = self.lab_copy.val().index();
            if c < copies {
                self._s.lab_wait = Some((c, self.lab_data.val().to_u16()));
            }
        }
        if self.go.val() {
            let s = &mut *self._s;
            s.active = true;
            s.train = self.go_train.val();
            s.samples = self.go_samples.val().index();
            s.started = 0;
            s.running = false;
            s.parity = false;
            s.lab_ptr = lab0;
        } else if n.adv {
            if n.last {
                let s = &mut *self._s;
                s.parity = !s.parity;
                s.lab_ptr = (s.lab_ptr + 1) % copies;
                s.block_cycles += 1;
                s.running = false;
                if n.can_start {
                    self.start_block();
                }
            } else {
                self._s.k += 1;
            }
        } else if !self._s.running && n.can_start {
            self.start_block();
        } else if n.done && !self.out_busy.val() {
            self._s.active = false;
        }
    }

    fn drive(&mut self, n: &Now) {
        let s = &*self._s;
        self.started.next = Bits::<32>::from(s.started as u64);
        // the branches of `commit` that call `start_block`
        self.starting.next =
            !self.go.val() && n.can_start && if n.adv { n.last } else { !s.running };
        self.done.next = n.done;
        self.pred_valid.next = n.last && n.need_out;
        self.adv.next = n.adv;
        self.k.next = b16(s.k as i32);
        self.last.next = n.last;
        self.step.next = n.adv && !n.last;
        self.parity.next = s.parity;
        self.label.next = Bits::<16>::from(s.labels[s.lab_ptr] as u64);
        for j in 0..self._p.junctions {
            self.ff_en[j].next = s.ff_en[j];
            self.bp_en[j].next = s.bp_en[j];
        }
    }
}

impl Logic for Controller {
    fn update(&mut self) {
        let n = self.now();
        if self.clock.pos_edge() {
            self.commit(&n);
            let n = self.now();
            self.drive(&n);
        } else {
            self.drive(&n);
        }
    }

    fn connect(&mut self) {
        for x in [
            &mut self.done,
            &mut self.starting,
            &mut self.pred_valid,
            &mut self.adv,
            &mut self.last,
            &mut self.step,
            &mut self.parity,
        ] {
            x.connect();
        }
        self.started.connect();
        self.k.connect();
        self.label.connect();
        self.ff_en.iter_mut().for_each(|x| x.connect());
        self.bp_en.iter_mut().for_each(|x| x.connect());
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(crate::below::with_guards(&verilog(&self._p)))
    }
}

fn verilog(p: &CtrlParams) -> String {
    let l = p.junctions;
    let k0 = p.in_copies;
    let lab0 = p.label_start();
    // Exact widths (a wide counter's comparisons are carry chains): a stream has at most
    // 65535 samples (`go_samples` is 16 bits), so `started` stays at most 65535 plus the
    // largest FF or BP offset.
    let bits = crate::bits_for;
    let last_offset = p.ff.iter().chain(p.bp.iter()).copied().max().unwrap_or(0);
    let (cw, kw, lw) = (bits(65535 + last_offset + 1), bits(p.t - 1), bits(k0 - 1));
    let mut v = format!(
        "
reg active;
reg train;
reg [15:0] samples;
reg [{cm}:0] started_r;
reg running;
reg [{kwm}:0] kk;
reg [{lm}:0] ffe;
reg [{lm}:0] bpe;
reg parity_r;
reg [15:0] labels [0:{km}];
// the label write, a clock late (see `lab_wait` in the model)
reg lw_en;
reg [15:0] lw_copy;
reg [15:0] lw_data;
initial begin lw_en = 1'b0; lw_copy = 16'd0; lw_data = 16'd0; end
reg [{lwm}:0] lab_ptr;
integer i;
initial begin
    active = 1'b0; train = 1'b0; samples = 16'd0; started_r = {cw}'d0; running = 1'b0; kk = {kw}'d0;
    ffe = {l}'d0; bpe = {l}'d0; parity_r = 1'b0; lab_ptr = {lw}'d{lab0};
    for (i = 0; i < {k0}; i = i + 1) labels[i] = 16'd0;
end
reg [{cm}:0] total;
initial total = {cw}'d0;
// started_r < total and started_r >= samples, kept as flags with started_r (set at `go`,
// updated at each start): no counter comparison in front of a start
reg lt_total;
reg ge_samples;
initial begin lt_total = 1'b0; ge_samples = 1'b0; end
// a junction's FF (BP) runs in block cycle t when offset <= t < samples + offset: the upper
// bound registered at `go`, so a start compares registers (a subtraction before the
// comparison was 15 LUT levels)
{lims}
reg can_start;
reg need_out;
reg at_end;
// kk == T - 1, kept with kk (T >= 3): no comparison in front of adv
reg at_end_r;
initial at_end_r = 1'b0;
// at_end_r && need_out, kept with at_end_r (train and ffe hold still within a block cycle):
// the output stall in front of adv is then one flag and the link's `out_busy`
reg end_out_r;
initial end_out_r = 1'b0;
reg adv_c;
reg last_c;
reg done_c;
always @(*) begin
    can_start = active && lt_total && ({free}ge_samples || sample_ready);
    need_out = !train && ffe[{lm}];
    at_end = at_end_r;
    // `running` implies `active` (a start needs `active`, which clears only when not
    // running), so adv waits on `running` alone
    adv_c = running && !(end_out_r && out_busy);
    last_c = adv_c && at_end;
    done_c = active && !running && !lt_total;
    started = {{{cpad}'d0, started_r}};
    starting = !go && can_start && (adv_c ? last_c : !running);
    done = done_c;
    pred_valid = last_c && need_out;
    adv = adv_c;
    k = {kpad};
    last = last_c;
    step = running && !at_end_r;
    parity = parity_r;
    label = labels[lab_ptr];
",
        lm = l - 1,
        km = k0 - 1,
        cm = cw - 1,
        kwm = kw - 1,
        lwm = lw - 1,
        cpad = 32 - cw,
        kpad = if kw >= 16 { "kk".to_string() } else { format!("{{{}'d0, kk}}", 16 - kw) },
        free = if p.wait_all { "1'b0 && " } else { "" },
        lims = (0..l)
            .map(|j| format!(
                "reg [{m}:0] ff_lim_{j};\nreg [{m}:0] bp_lim_{j};\ninitial begin ff_lim_{j} = {cw}'d0; bp_lim_{j} = {cw}'d0; end\n",
                m = cw - 1
            ))
            .collect::<String>(),
    );
    for j in 0..l {
        let _ = writeln!(v, "    ff_en${j} = ffe[{j}];\n    bp_en${j} = bpe[{j}];");
    }
    v += "end\n";
    let last_copy = k0 - 1;
    let (tt, ti) = (p.bp[0], p.ff[l - 1]);
    assert!(p.t >= 3, "the block cycle includes the FF pipeline");
    let te1 = p.t - 2;
    let mut start = String::from("begin\n");
    for j in 0..l {
        let (b, f) = (p.bp_offset(j), p.ff[j]);
        let _ = writeln!(
            start,
            "            ffe[{j}] <= (started_r >= {cw}'d{f}) && (started_r < ff_lim_{j});\n            bpe[{j}] <= train && (started_r >= {cw}'d{b}) && (started_r < bp_lim_{j});"
        );
    }
    let set_lims: String = (0..l)
        .map(|j| {
            format!(
                "        ff_lim_{j} <= go_samples + {cw}'d{};\n        bp_lim_{j} <= go_samples + {cw}'d{};\n",
                p.ff[j],
                p.bp_offset(j)
            )
        })
        .collect();
    start +=
        &format!("            running <= 1'b1; kk <= {kw}'d0; at_end_r <= 1'b0; end_out_r <= 1'b0; started_r <= started_r + {cw}'d1;\n            lt_total <= (started_r + {cw}'d1 < total); ge_samples <= (started_r + {cw}'d1 >= samples);\n        end");
    let _ = writeln!(
        v,
        "
always @(posedge clock) begin
    lw_en <= lab_we && (lab_copy < 16'd{k0});
    lw_copy <= lab_copy;
    lw_data <= lab_data;
    if (lw_en) labels[lw_copy] <= lw_data;
    if (go) begin
        active <= 1'b1; train <= go_train; samples <= go_samples;
        // block cycles of the stream, registered: no adder before the comparisons
        if (go_samples == 16'd0) total <= {cw}'d0;
        else if (go_train) total <= go_samples + {cw}'d{tt};
        else total <= go_samples + {cw}'d{ti};
{set_lims}        lt_total <= (go_samples != 16'd0); ge_samples <= (go_samples == 16'd0);
        started_r <= {cw}'d0; running <= 1'b0; parity_r <= 1'b0; lab_ptr <= {lw}'d{lab0};
    end else if (adv_c) begin
        if (last_c) begin
            parity_r <= !parity_r;
            lab_ptr <= (lab_ptr == {lw}'d{last_copy}) ? {lw}'d0 : lab_ptr + {lw}'d1;
            running <= 1'b0;
            if (can_start) {start}
        end else begin
            kk <= kk + {kw}'d1;
            at_end_r <= (kk == {kw}'d{te1});
            end_out_r <= (kk == {kw}'d{te1}) && need_out;
        end
    end else if (!running && can_start) {start}
    else if (done_c && !out_busy) active <= 1'b0;
end"
    );
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};

    fn params() -> CtrlParams {
        CtrlParams::new(
            &Spec::load(
                &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
            )
            .unwrap(),
        )
    }

    #[test]
    fn block_cycles_enables_and_label_delay() {
        // tiny: L = 2, T = 8. Train 3 samples, all loaded up front: 3 + 3 block cycles.
        let p = params();
        let mut c = Controller::new(p.clone());
        c.connect_all();
        for (n, lab) in [3u16, 1, 2].iter().enumerate() {
            c.lab_we.next = true;
            c.lab_copy.next = b16(n as i32);
            c.lab_data.next = Bits::<16>::from(*lab as u64);
            tick(&mut c, |c| &mut c.clock);
        }
        c.lab_we.next = false;
        c.go.next = true;
        c.go_train.next = true;
        c.go_samples.next = b16(3);
        tick(&mut c, |c| &mut c.clock);
        c.go.next = false;
        let mut cycles = vec![];
        for _ in 0..80 {
            // all three samples loaded up front
            c.sample_ready.next = c.started.val().index() < 3;
            settle(&mut c);
            if c.adv.val() && c.k.val().index() == 0 {
                let ff: Vec<bool> = c.ff_en.iter().map(|x| x.val()).collect();
                let bp: Vec<bool> = c.bp_en.iter().map(|x| x.val()).collect();
                cycles.push((ff, bp, c.label.val().to_u16(), c.parity.val()));
            }
            if c.done.val() {
                break;
            }
            tick(&mut c, |c| &mut c.clock);
        }
        assert_eq!(cycles.len(), 3 + 3);
        // FF_j on t - j, BP_j on t - (3 - j); the last junction's FF sees label of sample t - 1
        let want_ff = |t: usize, j: usize| t >= j && t - j < 3;
        let want_bp = |t: usize, j: usize| t >= 3 - j && t - (3 - j) < 3;
        for (t, (ff, bp, label, parity)) in cycles.iter().enumerate() {
            for j in 0..2 {
                assert_eq!(ff[j], want_ff(t, j), "t={t} j={j}");
                assert_eq!(bp[j], want_bp(t, j), "t={t} j={j}");
            }
            if (1..=3).contains(&t) {
                assert_eq!(*label, [3, 1, 2][t - 1]);
            }
            assert_eq!(*parity, t % 2 == 1);
        }
        assert!(c.done.val());
    }

    #[test]
    fn controller_verilog_is_clean() {
        yosys_check(&Controller::new(params()), "controller");
    }
}
