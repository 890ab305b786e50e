//! One junction: weight and bias memories, the interleaver, the FF lanes with their adder
//! tree (z ≥ fi) or multi-clock accumulator (z < fi), the activation ROM, the BP and UP
//! lanes, and the left layer's memories (rotating activation and σ′ copies, double-buffered
//! delta accumulators). It runs one FF pass and one BP/UP pass per block cycle, both over the
//! edges in edge order, clock `k` handling edges `k·z … k·z+z-1`.
//!
//! Timing (clock `k` of a block cycle, `C_j` clocks per pass):
//! - weights and biases are synchronous-read RAMs whose address for clock `k` is presented in
//!   clock `k-1` (prefetch), so FF, BP and UP of clock `k` share one read of `w_e`;
//! - FF, BP and UP compute within clock `k` and write at its closing edge: UP writes `w_e`
//!   after FF and BP have read it (BP reads a weight before UP writes it), and FF of the next
//!   block cycle sees every write of this one, so a block cycle is `C = max C_j` clocks;
//! - the left layer's memories are read combinationally, so a delta accumulator read in clock
//!   `k+1` already holds the sum written at the end of clock `k`: the read-modify-write hazard
//!   across a sweep boundary cannot occur, no forwarding is needed.
//!
//! Sample bookkeeping: with `t` the block cycle, FF reads the left activations of sample
//! `t - j` (copy `a_ff`), the previous junction writes sample `t - j + 1` (copy `a_ff + 1`),
//! UP reads sample `t - (2L-1-j)` (copy `a_ff + 2`, since there are `2L - 2j + 1` copies;
//! the input layer has one copy more, so there it is `a_ff + 3`).
//! σ′ is written for sample `t - j + 1` (copy `s_w`) and read by the previous junction's BP
//! for sample `t - (2L - j)` (copy `s_w + 1` of `2L - 2j + 2`). Delta accumulators alternate
//! by the block cycle's parity: BP writes buffer `p`, the previous junction reads (and
//! clears) buffer `1 - p`. The output layer's deltas do the same in the last junction.

use crate::addr_gen::Counters;
use crate::fixed::{b16, b32, mul, round_shift, s16, s32, sat};
use crate::params::JunctionParams;
use edgeflow_core::fixed::{activate, hidden_delta};
use rust_hdl::core::prelude::*;

#[derive(LogicBlock)]
pub struct Junction {
    pub clock: Signal<In, Clock>,
    // controller
    pub adv: Signal<In, Bit>,
    pub k: Signal<In, Bits<16>>,
    pub last: Signal<In, Bit>,
    pub ff_en: Signal<In, Bit>,
    pub bp_en: Signal<In, Bit>,
    pub parity: Signal<In, Bit>,
    pub restart: Signal<In, Bit>,
    pub label: Signal<In, Bits<16>>,
    // host access to weights and biases
    pub h_sel: Signal<In, Bit>,
    pub h_bias: Signal<In, Bit>,
    pub h_we: Signal<In, Bit>,
    pub h_addr: Signal<In, Bits<16>>,
    pub h_bank: Signal<In, Bits<16>>,
    pub h_wdata: Signal<In, Bits<16>>,
    pub h_rdata: Signal<Out, Bits<16>>,
    // input samples (first junction)
    pub in_we: Signal<In, Bit>,
    pub in_copy: Signal<In, Bits<16>>,
    pub in_addr: Signal<In, Bits<16>>,
    pub in_data: Signal<In, Bits<16>>,
    // left layer, written by the previous junction's FF
    pub lw_en: Vec<Signal<In, Bit>>,
    pub lw_addr: Vec<Signal<In, Bits<16>>>,
    pub lw_a: Vec<Signal<In, Bits<16>>>,
    pub lw_sp: Vec<Signal<In, Bits<16>>>,
    // left layer deltas, read (and cleared) by the previous junction's BP
    pub lq_addr: Vec<Signal<In, Bits<16>>>,
    pub lq_clear: Vec<Signal<In, Bit>>,
    pub lq_acc: Vec<Signal<Out, Bits<32>>>,
    pub lq_sp: Vec<Signal<Out, Bits<16>>>,
    // right layer (to the next junction)
    pub rw_en: Vec<Signal<Out, Bit>>,
    pub rw_addr: Vec<Signal<Out, Bits<16>>>,
    pub rw_a: Vec<Signal<Out, Bits<16>>>,
    pub rw_sp: Vec<Signal<Out, Bits<16>>>,
    pub rq_addr: Vec<Signal<Out, Bits<16>>>,
    pub rq_clear: Vec<Signal<Out, Bit>>,
    pub rq_acc: Vec<Signal<In, Bits<32>>>,
    pub rq_sp: Vec<Signal<In, Bits<16>>>,
    /// Index of the first largest output so far (last junction): the prediction.
    pub pred: Signal<Out, Bits<16>>,
    _p: Box<JunctionParams>,
    _s: Box<JState>,
}

#[derive(Clone, Debug)]
struct JState {
    ctr: Counters,
    sub: usize,
    row: usize,
    w: Vec<Vec<i32>>,
    wq: Vec<i32>,
    b: Vec<Vec<i32>>,
    bq: Vec<i32>,
    facc: Vec<i64>,
    amem: Vec<i32>,
    a_ff: usize,
    smem: Vec<i32>,
    s_w: usize,
    dmem: Vec<i64>,
    omem: Vec<i32>,
    best_val: i32,
    best_idx: usize,
}

/// Everything the current clock computes (combinational), before the closing edge commits it.
#[derive(Default)]
struct Comb {
    run_ff: bool,
    run_bp: bool,
    last_sub: bool,
    left: Vec<usize>,
    /// Per group: right neuron, FF sum, activation, σ′, output delta.
    r: Vec<usize>,
    sum: Vec<i64>,
    a: Vec<i32>,
    sp: Vec<i32>,
    out_delta: Vec<i32>,
    best: (i32, usize),
    /// Per group: the right delta BP and UP use; per lane: new weight, delta contribution.
    delta: Vec<i32>,
    new_w: Vec<i32>,
    contrib: Vec<i64>,
    new_b: Vec<i32>,
}

fn sigs<D: Direction, T: Synth>(n: usize) -> Vec<Signal<D, T>> {
    (0..n).map(|_| Default::default()).collect()
}

impl Junction {
    /// Junction `p.j`, holding `weights` (edge order) and `biases`.
    pub fn new(p: &JunctionParams, prev_groups: usize) -> Junction {
        let hidden_left = !p.is_first();
        let next = if p.is_last() { 0 } else { p.groups };
        let prev = if p.is_first() { 0 } else { prev_groups };
        let s = JState {
            ctr: Counters::default(),
            sub: 0,
            row: 0,
            w: vec![vec![0; p.clocks]; p.z],
            wq: vec![0; p.z],
            b: vec![vec![0; p.bias_rows()]; p.groups],
            bq: vec![0; p.groups],
            facc: vec![0; p.groups],
            amem: vec![0; p.act_copies * p.left],
            a_ff: 0,
            smem: if hidden_left {
                vec![0; p.sp_copies * p.left]
            } else {
                vec![]
            },
            s_w: 0,
            dmem: if hidden_left {
                vec![0; 2 * p.left]
            } else {
                vec![]
            },
            omem: if p.is_last() {
                vec![0; 2 * p.right]
            } else {
                vec![]
            },
            best_val: 0,
            best_idx: 0,
        };
        let mut j = Junction {
            clock: Default::default(),
            adv: Default::default(),
            k: Default::default(),
            last: Default::default(),
            ff_en: Default::default(),
            bp_en: Default::default(),
            parity: Default::default(),
            restart: Default::default(),
            label: Default::default(),
            h_sel: Default::default(),
            h_bias: Default::default(),
            h_we: Default::default(),
            h_addr: Default::default(),
            h_bank: Default::default(),
            h_wdata: Default::default(),
            h_rdata: Default::default(),
            in_we: Default::default(),
            in_copy: Default::default(),
            in_addr: Default::default(),
            in_data: Default::default(),
            lw_en: sigs(prev),
            lw_addr: sigs(prev),
            lw_a: sigs(prev),
            lw_sp: sigs(prev),
            lq_addr: sigs(prev),
            lq_clear: sigs(prev),
            lq_acc: sigs(prev),
            lq_sp: sigs(prev),
            rw_en: sigs(next),
            rw_addr: sigs(next),
            rw_a: sigs(next),
            rw_sp: sigs(next),
            rq_addr: sigs(next),
            rq_clear: sigs(next),
            rq_acc: sigs(next),
            rq_sp: sigs(next),
            pred: Default::default(),
            _p: Box::new(p.clone()),
            _s: Box::new(s),
        };
        j.restart_pointers();
        j
    }

    pub fn params(&self) -> &JunctionParams {
        &self._p
    }

    fn restart_pointers(&mut self) {
        let p = &self._p;
        let s = &mut self._s;
        s.a_ff = (-(p.j as i64)).rem_euclid(p.act_copies as i64) as usize;
        s.s_w = (1 - p.j as i64).rem_euclid(p.sp_copies as i64) as usize;
    }

    fn comb(&self) -> Comb {
        let p = &*self._p;
        let s = &*self._s;
        let f = p.format;
        let k = self.k.val().index();
        let active = self.adv.val() && k < p.clocks;
        let mut c = Comb {
            run_ff: active && self.ff_en.val(),
            run_bp: active && self.bp_en.val(),
            last_sub: s.sub + 1 == p.clocks_per_neuron,
            best: (s.best_val, s.best_idx),
            ..Default::default()
        };
        c.left = (0..p.z).map(|l| s.ctr.left(p, l)).collect();
        let first = s.sub == 0;
        let par = self.parity.val() as usize;
        let a_ff = s.a_ff * p.left;
        let a_up = ((s.a_ff + p.up_offset) % p.act_copies) * p.left;
        let lpg = p.lanes_per_group;
        for q in 0..p.groups {
            let r = s.row * p.groups + q;
            c.r.push(r);
            // FF: products, adder tree over the group's lanes, accumulator across clocks.
            let mut sum = if first { s.bq[q] as i64 } else { s.facc[q] };
            for l in q * lpg..(q + 1) * lpg {
                sum += mul(f, s.wq[l], s.amem[a_ff + c.left[l]]) as i64;
            }
            c.sum.push(sum);
            let (a, sp) = activate(p.right_act, &p.table, sat(f, sum));
            c.a.push(a);
            c.sp.push(sp);
            let y = if r == self.label.val().index() {
                f.one()
            } else {
                0
            };
            c.out_delta.push(sat(f, a as i64 - y as i64));
            if c.run_ff && c.last_sub && (r == 0 || a > c.best.0) {
                c.best = (a, r);
            }
            // BP/UP: the right neuron's delta.
            let d = if p.is_last() {
                s.omem.get((1 - par) * p.right + r).copied().unwrap_or(0)
            } else {
                hidden_delta(
                    p.right_act,
                    p.format,
                    s16(self.rq_sp[q].val()),
                    sat(f, s32(self.rq_acc[q].val())),
                )
            };
            c.delta.push(d);
            c.new_b
                .push(sat(f, s.bq[q] as i64 - round_shift(d as i64, p.shift)));
        }
        for l in 0..p.z {
            let d = c.delta[l / lpg];
            let w = s.wq[l];
            c.contrib.push(mul(f, w, d) as i64);
            let up = round_shift(mul(f, d, s.amem[a_up + c.left[l]]) as i64, p.shift);
            c.new_w.push(sat(f, w as i64 - up));
        }
        c
    }

    fn commit(&mut self, c: &Comb) {
        let p = self._p.clone();
        let k = self.k.val().index();
        let par = self.parity.val() as usize;
        let (adv, last) = (self.adv.val(), self.last.val());
        let h_sel = self.h_sel.val();
        let h_addr = self.h_addr.val().index();
        let h_bank = self.h_bank.val().index();
        let s = &mut *self._s;
        // Synchronous reads of the weight and bias RAMs (old contents), for the next clock.
        let mut next = s.ctr;
        next.step(&p, adv, last);
        let (mut nsub, mut nrow) = (s.sub, s.row);
        if last {
            nsub = 0;
            nrow = 0;
        } else if adv {
            nsub += 1;
            if nsub == p.clocks_per_neuron {
                nsub = 0;
                nrow += 1;
            }
        }
        let (waddr, baddr) = if h_sel {
            (h_addr, h_addr)
        } else if adv && !last {
            (k + 1, nrow)
        } else {
            (0, 0)
        };
        for l in 0..p.z {
            s.wq[l] = s.w[l].get(waddr).copied().unwrap_or(0);
        }
        for q in 0..p.groups {
            s.bq[q] = s.b[q].get(baddr).copied().unwrap_or(0);
        }
        // Writes.
        if c.run_bp {
            for l in 0..p.z {
                s.w[l][k] = c.new_w[l];
                if !p.is_first() {
                    s.dmem[par * p.left + c.left[l]] += c.contrib[l];
                }
            }
            if c.last_sub {
                for q in 0..p.groups {
                    s.b[q][s.row] = c.new_b[q];
                }
            }
        }
        if h_sel && self.h_we.val() {
            let v = s16(self.h_wdata.val());
            if self.h_bias.val() {
                if let Some(x) = s.b.get_mut(h_bank).and_then(|b| b.get_mut(h_addr)) {
                    *x = v;
                }
            } else if let Some(x) = s.w.get_mut(h_bank).and_then(|b| b.get_mut(h_addr)) {
                *x = v;
            }
        }
        if c.run_ff {
            for q in 0..p.groups {
                s.facc[q] = c.sum[q];
                if p.is_last() && c.last_sub {
                    s.omem[par * p.right + c.r[q]] = c.out_delta[q];
                }
            }
            s.best_val = c.best.0;
            s.best_idx = c.best.1;
        }
        let a_w = ((s.a_ff + 1) % p.act_copies) * p.left;
        for q in 0..self.lw_en.len() {
            if self.lw_en[q].val() {
                let addr = self.lw_addr[q].val().index();
                s.amem[a_w + addr] = s16(self.lw_a[q].val());
                s.smem[s.s_w * p.left + addr] = s16(self.lw_sp[q].val());
            }
            if self.lq_clear[q].val() {
                s.dmem[(1 - par) * p.left + self.lq_addr[q].val().index()] = 0;
            }
        }
        if p.is_first() && self.in_we.val() {
            let i = self.in_copy.val().index() * p.left + self.in_addr.val().index();
            if i < s.amem.len() {
                s.amem[i] = s16(self.in_data.val());
            }
        }
        s.ctr = next;
        s.sub = nsub;
        s.row = nrow;
        if self.restart.val() {
            self.restart_pointers();
        } else if last {
            let s = &mut *self._s;
            s.a_ff = (s.a_ff + 1) % p.act_copies;
            if !p.is_first() {
                s.s_w = (s.s_w + 1) % p.sp_copies;
            }
        }
    }

    fn drive(&mut self, c: &Comb) {
        let p = &*self._p;
        let s = &*self._s;
        let par = self.parity.val() as usize;
        let bank = self.h_bank.val().index();
        self.h_rdata.next = b16(if self.h_bias.val() {
            s.bq.get(bank).copied().unwrap_or(0)
        } else {
            s.wq.get(bank).copied().unwrap_or(0)
        });
        self.pred.next = b16(c.best.1 as i32);
        for q in 0..self.rw_en.len() {
            self.rw_en[q].next = c.run_ff && c.last_sub;
            self.rw_addr[q].next = b16(c.r[q] as i32);
            self.rw_a[q].next = b16(c.a[q]);
            self.rw_sp[q].next = b16(c.sp[q]);
            self.rq_addr[q].next = b16(c.r[q] as i32);
            self.rq_clear[q].next = c.run_bp && c.last_sub;
        }
        let s_r = ((s.s_w + 1) % p.sp_copies) * p.left;
        for q in 0..self.lq_addr.len() {
            let addr = self.lq_addr[q].val().index().min(p.left - 1);
            self.lq_acc[q].next = b32(s.dmem[(1 - par) * p.left + addr]);
            self.lq_sp[q].next = b16(s.smem[s_r + addr]);
        }
    }
}

impl Logic for Junction {
    fn update(&mut self) {
        let c = self.comb();
        if self.clock.pos_edge() {
            self.commit(&c);
            let c = self.comb();
            self.drive(&c);
        } else {
            self.drive(&c);
        }
    }

    fn connect(&mut self) {
        self.h_rdata.connect();
        self.pred.connect();
        for v in [
            &mut self.lq_sp,
            &mut self.rw_addr,
            &mut self.rw_a,
            &mut self.rw_sp,
            &mut self.rq_addr,
        ] {
            for x in v.iter_mut() {
                x.connect();
            }
        }
        for x in self.lq_acc.iter_mut() {
            x.connect();
        }
        for v in [&mut self.rw_en, &mut self.rq_clear] {
            for x in v.iter_mut() {
                x.connect();
            }
        }
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(crate::junction_verilog::verilog(self))
    }
}
