//! The network controller and host link: decodes the word protocol of hdl/PROTOCOL.md,
//! loads and reads back weights and biases, streams samples into the first junction's
//! input copies with their labels (the label delay line is a ring indexed like the input
//! copies), and runs block cycles: the block-cycle counter `t`, the clock counter `k`
//! within it, per-junction FF/BP enables from `t` and the stream length, the parity of the
//! delta buffers, train and infer modes, and the clock count of each command.
//!
//! A block cycle starts as soon as the previous one has ended and its sample is loaded, so
//! in the steady state a sample takes exactly `T = max(C, 2)` clocks (or the `N_0 + 1`
//! clocks its words take on the link, when that is longer). Input for sample `m` is accepted
//! once block cycle `m - 3` is done (its input copy is free again): the host streams up to
//! two samples ahead of the block cycle in progress.

use crate::fixed::b16;
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;

pub const OP_LOAD: u16 = 0x0001;
pub const OP_TRAIN: u16 = 0x0002;
pub const OP_INFER: u16 = 0x0003;
pub const OP_READ: u16 = 0x0004;
pub const ACK_LOAD: u16 = 0xA001;
pub const ACK_TRAIN: u16 = 0xA002;
pub const ACK_INFER: u16 = 0xA003;
pub const ACK_READ: u16 = 0xA004;
pub const ERROR_WORD: u16 = 0xEEEE;

/// What the controller needs to know about each junction.
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
            t: crate::params::block_cycle_clocks(spec),
            in_copies: 2 * l + 2,
            w_banks: ps.iter().map(|p| p.z).collect(),
            w_rows: ps.iter().map(|p| p.clocks).collect(),
            b_banks: ps.iter().map(|p| p.groups).collect(),
            b_rows: ps.iter().map(|p| p.bias_rows()).collect(),
        }
    }

    /// `B_j`: the block cycle offset of BP/UP of junction `j` (0-based), `2L - 1 - j`.
    pub fn bp_offset(&self, j: usize) -> usize {
        2 * self.junctions - 1 - j
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Idle,
    Error,
    Load,
    Count,
    Stream,
    Read,
}

#[derive(Clone, Debug, Default)]
pub struct CState {
    pub mode: Mode,
    train: bool,
    // message queue (one message of up to 3 words at a time)
    msg: [u16; 3],
    msg_n: usize,
    msg_i: usize,
    cycles: u32,
    // load / read walk
    lj: usize,
    bias: bool,
    bank: usize,
    row: usize,
    read_phase: bool,
    // stream
    samples: usize,
    started: usize,
    loaded: usize,
    widx: usize,
    in_copy: usize,
    running: bool,
    k: usize,
    ff_en: Vec<bool>,
    bp_en: Vec<bool>,
    parity: bool,
    labels: Vec<u16>,
    lab_ptr: usize,
    /// Block cycles completed (for throughput measurement).
    pub block_cycles: u64,
}

#[derive(LogicBlock)]
pub struct Controller {
    pub clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    // to every junction
    pub adv: Signal<Out, Bit>,
    pub k: Signal<Out, Bits<16>>,
    pub last: Signal<Out, Bit>,
    pub parity: Signal<Out, Bit>,
    pub restart: Signal<Out, Bit>,
    pub label: Signal<Out, Bits<16>>,
    pub ff_en: Vec<Signal<Out, Bit>>,
    pub bp_en: Vec<Signal<Out, Bit>>,
    pub h_sel: Vec<Signal<Out, Bit>>,
    pub h_bias: Signal<Out, Bit>,
    pub h_we: Signal<Out, Bit>,
    pub h_addr: Signal<Out, Bits<16>>,
    pub h_bank: Signal<Out, Bits<16>>,
    pub h_wdata: Signal<Out, Bits<16>>,
    pub h_rdata: Vec<Signal<In, Bits<16>>>,
    pub in_we: Signal<Out, Bit>,
    pub in_copy: Signal<Out, Bits<16>>,
    pub in_addr: Signal<Out, Bits<16>>,
    pub pred: Signal<In, Bits<16>>,
    _p: Box<CtrlParams>,
    pub _s: Box<CState>,
}

/// Combinational decisions of one clock.
struct Now {
    in_ready: bool,
    take: bool,
    out_valid: bool,
    can_start: bool,
    adv: bool,
    last: bool,
    need_out: bool,
}

fn sigs<D: Direction, T: Synth>(n: usize) -> Vec<Signal<D, T>> {
    (0..n).map(|_| Default::default()).collect()
}

impl Controller {
    pub fn new(p: CtrlParams) -> Controller {
        let l = p.junctions;
        let s = CState {
            ff_en: vec![false; l],
            bp_en: vec![false; l],
            labels: vec![0; p.in_copies],
            ..Default::default()
        };
        Controller {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            adv: Default::default(),
            k: Default::default(),
            last: Default::default(),
            parity: Default::default(),
            restart: Default::default(),
            label: Default::default(),
            ff_en: sigs(l),
            bp_en: sigs(l),
            h_sel: sigs(l),
            h_bias: Default::default(),
            h_we: Default::default(),
            h_addr: Default::default(),
            h_bank: Default::default(),
            h_wdata: Default::default(),
            h_rdata: sigs(l),
            in_we: Default::default(),
            in_copy: Default::default(),
            in_addr: Default::default(),
            pred: Default::default(),
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
            s.samples + 2 * self._p.junctions - 1
        } else {
            s.samples + self._p.junctions - 1
        }
    }

    fn sample_words(&self) -> usize {
        self._p.inputs + self._s.train as usize
    }

    fn now(&self) -> Now {
        let s = &self._s;
        let p = &self._p;
        let pending = s.msg_i < s.msg_n;
        let in_ready = match s.mode {
            Mode::Idle | Mode::Error => !pending,
            Mode::Load | Mode::Count => true,
            Mode::Stream => s.loaded < s.samples && s.loaded <= s.started + 1,
            Mode::Read => false,
        };
        let total = self.total_block_cycles();
        let can_start = s.mode == Mode::Stream
            && s.started < total
            && (s.started >= s.samples || s.loaded > s.started);
        let l = p.junctions;
        let need_out = !s.train && s.ff_en[l - 1];
        let at_end = s.k + 1 == p.t;
        let adv = s.mode == Mode::Stream && s.running && !(at_end && need_out && pending);
        Now {
            in_ready,
            take: in_ready && self.in_valid.val(),
            out_valid: pending,
            can_start,
            adv,
            last: adv && at_end,
            need_out,
        }
    }

    fn walk_next(&mut self) -> bool {
        // Advance the (junction, weights/biases, row, bank) walk; true when it is complete.
        let p = self._p.clone();
        let s = &mut *self._s;
        let (banks, rows) = if s.bias {
            (&p.b_banks, &p.b_rows)
        } else {
            (&p.w_banks, &p.w_rows)
        };
        s.bank += 1;
        if s.bank == banks[s.lj] {
            s.bank = 0;
            s.row += 1;
            if s.row == rows[s.lj] {
                s.row = 0;
                s.lj += 1;
                if s.lj == p.junctions {
                    s.lj = 0;
                    if s.bias {
                        s.bias = false;
                        return true;
                    }
                    s.bias = true;
                }
            }
        }
        false
    }

    fn send(&mut self, words: &[u16]) {
        let s = &mut *self._s;
        s.msg[..words.len()].copy_from_slice(words);
        s.msg_n = words.len();
        s.msg_i = 0;
    }

    fn start_block(&mut self) {
        let p = self._p.clone();
        let s = &mut *self._s;
        let t = s.started;
        for j in 0..p.junctions {
            s.ff_en[j] = t >= j && t - j < s.samples;
            let b = p.bp_offset(j);
            s.bp_en[j] = s.train && t >= b && t - b < s.samples;
        }
        s.running = true;
        s.k = 0;
        s.started += 1;
    }

    fn opcode(&mut self, w: u16) {
        let s = &mut *self._s;
        s.cycles = 0;
        s.lj = 0;
        s.bias = false;
        s.bank = 0;
        s.row = 0;
        s.read_phase = false;
        match w {
            OP_LOAD => s.mode = Mode::Load,
            OP_TRAIN | OP_INFER => {
                s.mode = Mode::Count;
                s.train = w == OP_TRAIN;
            }
            OP_READ => s.mode = Mode::Read,
            _ => {
                s.mode = Mode::Error;
                self.send(&[ERROR_WORD]);
            }
        }
    }

    fn commit(&mut self, n: &Now) {
        let p = self._p.clone();
        let w = self.in_data.val().to_u16();
        if n.out_valid && self.out_ready.val() {
            self._s.msg_i += 1;
        }
        self._s.cycles = self._s.cycles.wrapping_add(1);
        match self._s.mode {
            Mode::Idle => {
                if n.take {
                    self.opcode(w);
                }
            }
            Mode::Error => {
                if n.take && (OP_LOAD..=OP_READ).contains(&w) {
                    self.opcode(w);
                }
            }
            Mode::Load => {
                if n.take && self.walk_next() {
                    self.send(&[ACK_LOAD]);
                    self._s.mode = Mode::Idle;
                }
            }
            Mode::Count => {
                if n.take {
                    let s = &mut *self._s;
                    s.samples = w as usize;
                    s.started = 0;
                    s.loaded = 0;
                    s.widx = 0;
                    s.in_copy = 0;
                    s.running = false;
                    s.parity = false;
                    s.lab_ptr = (-(p.junctions as i64 - 1)).rem_euclid(p.in_copies as i64) as usize;
                    s.mode = Mode::Stream;
                }
            }
            Mode::Stream => {
                if n.take {
                    let words = self.sample_words();
                    let s = &mut *self._s;
                    if s.widx == p.inputs {
                        s.labels[s.in_copy] = w;
                    }
                    s.widx += 1;
                    if s.widx == words {
                        s.widx = 0;
                        s.loaded += 1;
                        s.in_copy = (s.in_copy + 1) % p.in_copies;
                    }
                }
                if n.adv {
                    if n.last {
                        let pred = self.pred.val().to_u16();
                        let s = &mut *self._s;
                        s.parity = !s.parity;
                        s.lab_ptr = (s.lab_ptr + 1) % p.in_copies;
                        s.block_cycles += 1;
                        s.running = false;
                        if n.need_out {
                            self.send(&[pred]);
                        }
                        if n.can_start {
                            self.start_block();
                        }
                    } else {
                        self._s.k += 1;
                    }
                } else if !self._s.running && n.can_start {
                    self.start_block();
                } else if !self._s.running
                    && self._s.started == self.total_block_cycles()
                    && !n.out_valid
                {
                    let s = &mut *self._s;
                    let ack = if s.train { ACK_TRAIN } else { ACK_INFER };
                    let c = s.cycles;
                    s.mode = Mode::Idle;
                    self.send(&[ack, c as u16, (c >> 16) as u16]);
                }
            }
            Mode::Read => {
                if !self._s.read_phase {
                    self._s.read_phase = true;
                } else if !n.out_valid {
                    let lj = self._s.lj;
                    let v = self.h_rdata[lj].val().to_u16();
                    self.send(&[v]);
                    self._s.read_phase = false;
                    if self.walk_next() {
                        self._s.mode = Mode::Idle;
                        // The acknowledgement follows the last value.
                        self._s.msg[1] = ACK_READ;
                        self._s.msg_n = 2;
                    }
                }
            }
        }
    }

    fn drive(&mut self, n: &Now) {
        let p = &*self._p;
        let s = &*self._s;
        self.in_ready.next = n.in_ready;
        self.out_valid.next = n.out_valid;
        self.out_data.next = Bits::<16>::from(if n.out_valid { s.msg[s.msg_i] } else { 0 } as u64);
        self.adv.next = n.adv;
        self.k.next = b16(s.k as i32);
        self.last.next = n.last;
        self.parity.next = s.parity;
        self.restart.next = s.mode == Mode::Count && n.take;
        self.label.next = Bits::<16>::from(s.labels[s.lab_ptr] as u64);
        for j in 0..p.junctions {
            self.ff_en[j].next = s.ff_en[j];
            self.bp_en[j].next = s.bp_en[j];
            self.h_sel[j].next = s.lj == j && matches!(s.mode, Mode::Load | Mode::Read);
        }
        self.h_bias.next = s.bias;
        self.h_we.next = s.mode == Mode::Load && n.take;
        self.h_addr.next = b16(s.row as i32);
        self.h_bank.next = b16(s.bank as i32);
        self.h_wdata.next = self.in_data.val();
        let loading = s.mode == Mode::Stream && s.widx < p.inputs;
        self.in_we.next = loading && n.take;
        self.in_copy.next = b16(s.in_copy as i32);
        self.in_addr.next = b16(s.widx as i32);
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
        self.in_ready.connect();
        self.out_data.connect();
        self.out_valid.connect();
        self.adv.connect();
        self.k.connect();
        self.last.connect();
        self.parity.connect();
        self.restart.connect();
        self.label.connect();
        for v in [&mut self.ff_en, &mut self.bp_en, &mut self.h_sel] {
            for x in v.iter_mut() {
                x.connect();
            }
        }
        self.h_bias.connect();
        self.h_we.connect();
        self.h_addr.connect();
        self.h_bank.connect();
        self.h_wdata.connect();
        self.in_we.connect();
        self.in_copy.connect();
        self.in_addr.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(crate::controller_verilog::verilog(&self._p))
    }
}
