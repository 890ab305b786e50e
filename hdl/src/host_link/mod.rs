//! The host link: decodes the word protocol of hdl/PROTOCOL.md (valid/ready, 16-bit words),
//! walks every weight and bias in LOAD_STATE order to load and read them back, streams the
//! words of TRAIN/INFER samples into the first junction's input copies (and the labels into
//! the controller's label ring), queues the answers (acknowledgements, predictions, clock
//! counts, read-back values) and counts each command's clocks. The block cycles themselves
//! are the controller's (controller.rs).

pub mod host_stream;
pub mod input_lanes;
pub mod resident_protocol;
pub mod uart_frames;
pub mod uart_link;
pub mod uart_rx;
pub mod uart_sim_port;
pub mod uart_tx;

use crate::controller::CtrlParams;
use crate::fixed::b16;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

pub const OP_LOAD: u16 = 0x0001;
pub const OP_TRAIN: u16 = 0x0002;
pub const OP_INFER: u16 = 0x0003;
pub const OP_READ: u16 = 0x0004;
pub const ACK_LOAD: u16 = 0xA001;
pub const ACK_TRAIN: u16 = 0xA002;
pub const ACK_INFER: u16 = 0xA003;
pub const ACK_READ: u16 = 0xA004;
pub const ERROR_WORD: u16 = 0xEEEE;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Idle,
    Error,
    Load,
    Count,
    Stream,
    Read,
}

#[derive(Clone, Debug, Default)]
struct LState {
    mode: Mode,
    train: bool,
    msg: [u16; 3],
    msg_n: usize,
    msg_i: usize,
    cycles: u32,
    lj: usize,
    bias: bool,
    bank: usize,
    row: usize,
    read_phase: bool,
    samples: usize,
    loaded: usize,
    widx: usize,
    in_copy: usize,
}

#[derive(LogicBlock)]
pub struct HostLink {
    pub clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    // to the controller
    /// A TRAIN/INFER stream starts (its sample count was just taken).
    pub go: Signal<Out, Bit>,
    pub go_train: Signal<Out, Bit>,
    pub go_samples: Signal<Out, Bits<16>>,
    /// `loaded > started`: the sample of the controller's next block cycle is loaded.
    pub sample_ready: Signal<Out, Bit>,
    pub lab_we: Signal<Out, Bit>,
    pub lab_copy: Signal<Out, Bits<16>>,
    pub out_busy: Signal<Out, Bit>,
    // from the controller
    pub started: Signal<In, Bits<32>>,
    /// The controller starts a block cycle at the end of this clock: the Verilog keeps
    /// `started + 1 - loaded` in a register with it (the model compares directly).
    pub starting: Signal<In, Bit>,
    pub done: Signal<In, Bit>,
    pub pred_valid: Signal<In, Bit>,
    pub pred: Signal<In, Bits<16>>,
    // to the junctions: weights and biases, input words
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
    /// Write enables of input lanes 1 … W-1 (inputs `in_addr + 1 …`; lane 0 is `in_we`).
    pub in_lanes_we: Vec<Signal<Out, Bit>>,
    _p: Box<CtrlParams>,
    /// Input lanes `W`: sample words per beat (input_lanes.rs).
    _lanes: usize,
    _s: Box<LState>,
}

struct Now {
    pending: bool,
    in_ready: bool,
    take: bool,
}

impl HostLink {
    pub fn new(p: CtrlParams) -> HostLink {
        HostLink::with_lanes(p, 1)
    }

    /// A link whose TRAIN/INFER sample words arrive `lanes` per beat (PROTOCOL.md).
    pub fn with_lanes(p: CtrlParams, lanes: usize) -> HostLink {
        assert!(lanes >= 1);
        let l = p.junctions;
        HostLink {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            sample_ready: Default::default(),
            lab_we: Default::default(),
            lab_copy: Default::default(),
            out_busy: Default::default(),
            started: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            pred_valid: Default::default(),
            pred: Default::default(),
            h_sel: crate::sigs(l),
            h_bias: Default::default(),
            h_we: Default::default(),
            h_addr: Default::default(),
            h_bank: Default::default(),
            h_wdata: Default::default(),
            h_rdata: crate::sigs(l),
            in_we: Default::default(),
            in_copy: Default::default(),
            in_addr: Default::default(),
            in_lanes_we: crate::sigs(lanes - 1),
            _p: Box::new(p),
            _lanes: lanes,
            _s: Box::default(),
        }
    }

    fn now(&self) -> Now {
        let s = &self._s;
        let pending = s.msg_i < s.msg_n;
        let started = self.started.val().to_u32() as usize;
        let in_ready = match s.mode {
            Mode::Idle | Mode::Error => !pending,
            Mode::Load | Mode::Count => true,
            Mode::Stream => s.loaded < s.samples && s.loaded <= started + 1,
            Mode::Read => false,
        };
        Now {
            pending,
            in_ready,
            take: in_ready && self.in_valid.val(),
        }
    }

    /// Advance the (junction, weights/biases, row, bank) walk; true when it is complete.
    fn walk_next(&mut self) -> bool {
        let p = &self._p;
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
        let (inputs, copies, lanes) = (self._p.inputs, self._p.in_copies, self._lanes);
        let w = self.in_data.val().to_u16();
        if n.pending && self.out_ready.val() {
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
                    s.loaded = 0;
                    s.widx = 0;
                    s.in_copy = 0;
                    s.mode = Mode::Stream;
                }
            }
            Mode::Stream => {
                if n.take {
                    let s = &mut *self._s;
                    // an input beat moves `widx` by W; the label beat (training) follows the
                    // last input beat and ends the sample, as the last input beat does in INFER
                    let next = s.widx + lanes;
                    if s.widx >= inputs || (!s.train && next >= inputs) {
                        s.widx = 0;
                        s.loaded += 1;
                        s.in_copy = (s.in_copy + 1) % copies;
                    } else {
                        s.widx = next;
                    }
                }
                if self.pred_valid.val() {
                    let pred = self.pred.val().to_u16();
                    self.send(&[pred]);
                } else if self.done.val() && !n.pending {
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
                } else if !n.pending {
                    let v = self.h_rdata[self._s.lj].val().to_u16();
                    self.send(&[v]);
                    self._s.read_phase = false;
                    if self.walk_next() {
                        self._s.mode = Mode::Idle;
                        // the acknowledgement follows the last value
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
        self.out_valid.next = n.pending;
        self.out_busy.next = n.pending;
        self.out_data.next = Bits::<16>::from(if n.pending { s.msg[s.msg_i] } else { 0 } as u64);
        let go = s.mode == Mode::Count && n.take;
        self.go.next = go;
        self.go_train.next = s.train;
        self.go_samples.next = self.in_data.val();
        self.sample_ready.next = s.loaded > self.started.val().to_u32() as usize;
        let streaming = s.mode == Mode::Stream && n.take;
        self.lab_we.next = streaming && s.widx >= p.inputs;
        self.lab_copy.next = b16(s.in_copy as i32);
        for j in 0..p.junctions {
            self.h_sel[j].next = s.lj == j && matches!(s.mode, Mode::Load | Mode::Read);
        }
        self.h_bias.next = s.bias;
        self.h_we.next = s.mode == Mode::Load && n.take;
        self.h_addr.next = b16(s.row as i32);
        self.h_bank.next = b16(s.bank as i32);
        self.h_wdata.next = self.in_data.val();
        self.in_we.next = streaming && s.widx < p.inputs;
        self.in_copy.next = b16(s.in_copy as i32);
        self.in_addr.next = b16(s.widx as i32);
        for k in 0..self.in_lanes_we.len() {
            self.in_lanes_we[k].next = streaming && s.widx + k + 1 < p.inputs;
        }
    }
}

impl Logic for HostLink {
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
            &mut self.in_ready,
            &mut self.out_valid,
            &mut self.go,
            &mut self.go_train,
            &mut self.lab_we,
            &mut self.out_busy,
            &mut self.sample_ready,
            &mut self.h_bias,
            &mut self.h_we,
            &mut self.in_we,
        ] {
            x.connect();
        }
        for x in [
            &mut self.out_data,
            &mut self.go_samples,
            &mut self.lab_copy,
            &mut self.h_addr,
            &mut self.h_bank,
            &mut self.h_wdata,
            &mut self.in_copy,
            &mut self.in_addr,
        ] {
            x.connect();
        }
        self.h_sel.iter_mut().for_each(|x| x.connect());
        self.in_lanes_we.iter_mut().for_each(|x| x.connect());
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(verilog(&self._p, self._lanes))
    }
}

fn verilog(p: &CtrlParams, lanes: usize) -> String {
    let l = p.junctions;
    let lm1 = l - 1;
    let k0 = p.in_copies;
    // the walk's end flags {last bank, last row, last junction} of a walk position
    let mut walk_ends = String::from(
        "function [2:0] walk_ends;\n    input [15:0] b;\n    input [15:0] r;\n    input [15:0] j;\n    input bi;\n    reg [15:0] lb;\n    reg [15:0] lr;\n    begin\n        case (j)\n",
    );
    for j in 0..l {
        let _ = writeln!(
            walk_ends,
            "            16'd{j}: begin lb = bi ? 16'd{} : 16'd{}; lr = bi ? 16'd{} : 16'd{}; end",
            p.b_banks[j] - 1,
            p.w_banks[j] - 1,
            p.b_rows[j] - 1,
            p.w_rows[j] - 1
        );
    }
    let _ = writeln!(
        walk_ends,
        "            default: begin lb = 16'd0; lr = 16'd0; end\n        endcase\n        walk_ends = {{b == lb, r == lr, j == 16'd{lm1}}};\n    end\nendfunction"
    );
    let ends0 = format!(
        "3'b{}{}{}",
        (p.w_banks[0] == 1) as u8,
        (p.w_rows[0] == 1) as u8,
        (lm1 == 0) as u8
    );
    let mut v = walk_ends;
    // the walk's junction in as few bits as there are junctions: `h_sel` is then one LUT
    let ljm = crate::bits_for(lm1) - 1;
    let _ = writeln!(v, "reg [{ljm}:0] lj;\nreg [{ljm}:0] nl;");
    v += "
localparam M_IDLE = 3'd0, M_ERR = 3'd1, M_LOAD = 3'd2, M_COUNT = 3'd3, M_STREAM = 3'd4, M_READ = 3'd5;
reg [2:0] mode;
reg train;
reg [15:0] msg0;
reg [15:0] msg1;
reg [15:0] msg2;
reg [1:0] msg_n;
reg [1:0] msg_i;
reg [31:0] cycles;
reg bias;
reg [15:0] bank;
reg [15:0] row;
reg read_phase;
// a stream has at most 65535 samples (16-bit count), so the sample counters are 16 bits:
// their comparisons sit in the stream's ready handshake
reg [15:0] samples;
reg [15:0] loaded_r;
// widx is at the label (training) / past the inputs: kept with widx, off the handshake
reg wlab;
// this beat is the sample's last input beat (widx + lanes >= inputs), kept with widx too
reg wlast;
// the stream's readiness, loaded <= started + 1 and loaded < samples, as registers:
// ahead = started + 1 - loaded (17 bits, signed), counted with the controller's starts
// and the loaded samples, instead of comparing counters in front of every take
reg signed [17:0] ahead;
wire signed [17:0] ahead_inc = ahead + 18'sd1;
wire signed [17:0] ahead_dec = ahead - 18'sd1;
reg more;
reg [15:0] widx;
reg [15:0] in_copy_r;
initial begin
    mode = M_IDLE; train = 1'b0; msg0 = 16'd0; msg1 = 16'd0; msg2 = 16'd0; msg_n = 2'd0; msg_i = 2'd0;
    cycles = 32'd0; lj = 16'd0; bias = 1'b0; bank = 16'd0; row = 16'd0; read_phase = 1'b0;
    samples = 16'd0; loaded_r = 16'd0; widx = 16'd0; in_copy_r = 16'd0; wlab = 1'b0;
    ahead = 18'sd1; more = 1'b0;
end
reg pending;
reg in_ready_c;
reg take;
reg wrap;
reg bank_end;
reg row_end;
reg lj_end;
// the walk's end flags, registered with the walk: {bank, row, junction} at its last value
reg [2:0] ends_r;
reg [15:0] nb;
reg [15:0] nr;
reg nbias;
reg wdone;
reg [15:0] rdata;
reg [31:0] cyc1;
always @(*) begin
    pending = (msg_i < msg_n);
    case (mode)
        M_IDLE, M_ERR: in_ready_c = !pending;
        M_LOAD, M_COUNT: in_ready_c = 1'b1;
        M_STREAM: in_ready_c = more && !ahead[17];
        default: in_ready_c = 1'b0;
    endcase
    take = in_ready_c && in_valid;
    case (lj)
";
    for j in 0..l {
        let _ = writeln!(v, "        16'd{j}: rdata = h_rdata${j};");
    }
    let _ = writeln!(
        v,
        "        default: rdata = 16'd0;
    endcase
    // the walk's end flags come registered (walk_ends), not from comparisons behind the step
    bank_end = ends_r[2];
    row_end = ends_r[1];
    lj_end = ends_r[0];
    nb = bank_end ? 16'd0 : bank + 16'd1;
    nr = bank_end ? (row_end ? 16'd0 : row + 16'd1) : row;
    nl = (bank_end && row_end) ? (lj_end ? 16'd0 : lj + 16'd1) : lj;
    nbias = (bank_end && row_end && lj_end) ? !bias : bias;
    wdone = bank_end && row_end && lj_end && bias;
    cyc1 = cycles + 32'd1;
    in_ready = in_ready_c;
    out_valid = pending;
    out_busy = pending;
    case (msg_i)
        2'd0: out_data = pending ? msg0 : 16'd0;
        2'd1: out_data = pending ? msg1 : 16'd0;
        default: out_data = pending ? msg2 : 16'd0;
    endcase
    go = (mode == M_COUNT) && take;
    go_train = train;
    go_samples = in_data;
    sample_ready = ahead[17] || (ahead == 18'sd0);
    lab_we = (mode == M_STREAM) && take && wlab;
    lab_copy = in_copy_r;"
    );
    for j in 0..l {
        let _ = writeln!(
            v,
            "    h_sel${j} = (lj == 16'd{j}) && ((mode == M_LOAD) || (mode == M_READ));"
        );
    }
    let _ = writeln!(
        v,
        "    h_bias = bias;
    h_we = (mode == M_LOAD) && in_valid;
    h_addr = row;
    h_bank = bank;
    h_wdata = in_data;
    in_we = (mode == M_STREAM) && take && !wlab;
    in_copy = in_copy_r;
    in_addr = widx;"
    );
    for k in 1..lanes {
        let _ = writeln!(
            v,
            "    in_lanes_we${} = (mode == M_STREAM) && take && (({{16'd0, widx}} + 32'd{k}) < 32'd{});",
            k - 1,
            p.inputs
        );
    }
    v += "end\n";
    // a sample of at most `lanes` inputs ends at its first beat
    let wlast0 = if lanes >= p.inputs { "1'b1" } else { "1'b0" };
    let opcode = format!(
        "begin
                cycles <= 32'd0; lj <= 16'd0; bias <= 1'b0; bank <= 16'd0; row <= 16'd0; read_phase <= 1'b0;
                ends_r <= walk_ends(16'd0, 16'd0, 16'd0, 1'b0);
                case (in_data)
                    16'd{OP_LOAD}: mode <= M_LOAD;
                    16'd{OP_TRAIN}: begin mode <= M_COUNT; train <= 1'b1; end
                    16'd{OP_INFER}: begin mode <= M_COUNT; train <= 1'b0; end
                    16'd{OP_READ}: mode <= M_READ;
                    default: begin mode <= M_ERR; msg0 <= 16'h{ERROR_WORD:04x}; msg_n <= 2'd1; msg_i <= 2'd0; end
                endcase
            end"
    );
    let _ = writeln!(
        v,
        "
always @(*) wrap = (mode == M_STREAM) && take && (wlab || (!train && wlast));
always @(posedge clock) begin
    if ((mode == M_COUNT) && take) begin
        ahead <= 18'sd1;
        more <= (in_data != 16'd0);
    end else begin
        // both neighbours on the register alone, the controller's `starting` choosing last
        if (starting && !wrap) ahead <= ahead_inc;
        else if (wrap && !starting) ahead <= ahead_dec;
        if (wrap) more <= ({{1'b0, loaded_r}} + 17'd1 < {{1'b0, samples}});
    end
end
always @(posedge clock) begin
    if (pending && out_ready) msg_i <= msg_i + 2'd1;
    cycles <= cycles + 32'd1;
    case (mode)
        M_IDLE: if (take) {opcode}
        M_ERR: if (take && (in_data >= 16'd{OP_LOAD}) && (in_data <= 16'd{OP_READ})) {opcode}
        M_LOAD: if (take) begin
            bank <= nb; row <= nr; lj <= nl; bias <= nbias;
            ends_r <= walk_ends(nb, nr, nl, nbias);
            if (wdone) begin
                msg0 <= 16'h{ACK_LOAD:04x}; msg_n <= 2'd1; msg_i <= 2'd0;
                mode <= M_IDLE;
            end
        end
        M_COUNT: if (take) begin
            samples <= in_data; loaded_r <= 16'd0; widx <= 16'd0; in_copy_r <= 16'd0; wlab <= 1'b0;
            wlast <= {wlast0};
            mode <= M_STREAM;
        end
        M_STREAM: begin
            if (take) begin
                if (wlab || (!train && wlast)) begin
                    widx <= 16'd0;
                    wlab <= 1'b0;
                    wlast <= {wlast0};
                    loaded_r <= loaded_r + 16'd1;
                    in_copy_r <= (in_copy_r + 16'd1 == 16'd{k0}) ? 16'd0 : in_copy_r + 16'd1;
                end else begin
                    widx <= widx + 16'd{lanes};
                    wlab <= wlast;
                    wlast <= (({{16'd0, widx}} + 32'd{lanes2}) >= 32'd{inputs});
                end
            end
            if (pred_valid) begin
                msg0 <= pred; msg_n <= 2'd1; msg_i <= 2'd0;
            end else if (done && !pending) begin
                msg0 <= train ? 16'h{ACK_TRAIN:04x} : 16'h{ACK_INFER:04x};
                msg1 <= cyc1[15:0];
                msg2 <= cyc1[31:16];
                msg_n <= 2'd3; msg_i <= 2'd0;
                mode <= M_IDLE;
            end
        end
        M_READ: begin
            if (!read_phase) read_phase <= 1'b1;
            else if (!pending) begin
                msg0 <= rdata; msg_n <= 2'd1; msg_i <= 2'd0;
                read_phase <= 1'b0;
                bank <= nb; row <= nr; lj <= nl; bias <= nbias;
                ends_r <= walk_ends(nb, nr, nl, nbias);
                if (wdone) begin
                    mode <= M_IDLE;
                    msg1 <= 16'h{ACK_READ:04x}; msg_n <= 2'd2;
                end
            end
        end
        default: mode <= M_IDLE;
    endcase
end",
        inputs = p.inputs,
        lanes2 = 2 * lanes,
        wlast0 = wlast0,
    );
    let _ = writeln!(v, "initial ends_r = {ends0};");
    let _ = writeln!(v, "initial wlast = {wlast0};");
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};
    use edgeflow_core::Spec;

    fn params() -> CtrlParams {
        CtrlParams::new(
            &Spec::load(
                &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
            )
            .unwrap(),
        )
    }

    /// Drive words into the link alone; collect what it answers and the junction writes.
    fn run(
        h: &mut HostLink,
        words: &[u16],
        clocks: usize,
    ) -> (Vec<u16>, Vec<(usize, bool, usize, usize, u16)>) {
        let (mut out, mut writes, mut i) = (vec![], vec![], 0);
        h.out_ready.next = true;
        for _ in 0..clocks {
            h.in_valid.next = i < words.len();
            h.in_data.next = Bits::<16>::from(*words.get(i).unwrap_or(&0) as u64);
            settle(h);
            if h.out_valid.val() {
                out.push(h.out_data.val().to_u16());
            }
            if h.h_we.val() {
                let j = h.h_sel.iter().position(|s| s.val()).unwrap();
                writes.push((
                    j,
                    h.h_bias.val(),
                    h.h_bank.val().index(),
                    h.h_addr.val().index(),
                    h.h_wdata.val().to_u16(),
                ));
            }
            if h.in_valid.val() && h.in_ready.val() {
                i += 1;
            }
            tick(h, |h| &mut h.clock);
        }
        (out, writes)
    }

    #[test]
    fn load_walks_every_weight_and_bias_in_edge_order() {
        let p = params();
        let mut h = HostLink::new(p.clone());
        h.connect_all();
        let n: usize = (0..p.junctions)
            .map(|j| p.w_banks[j] * p.w_rows[j] + p.b_banks[j] * p.b_rows[j])
            .sum();
        let mut words = vec![OP_LOAD];
        words.extend((0..n).map(|v| v as u16 + 100));
        let (out, writes) = run(&mut h, &words, n + 5);
        assert_eq!(out, vec![ACK_LOAD]);
        assert_eq!(writes.len(), n);
        // junction 1 weights: edge e in bank e mod z, row e / z
        for e in 0..16 {
            assert_eq!(writes[e], (0, false, e % 4, e / 4, 100 + e as u16));
        }
        // tiny: weights 16 + 16, then biases of junction 1 (8, 2 per clock) and 2 (4)
        assert_eq!(writes[32], (0, true, 0, 0, 132));
        assert_eq!(writes[33], (0, true, 1, 0, 133));
        assert_eq!(writes[40], (1, true, 0, 0, 140));
    }

    #[test]
    fn unknown_opcodes_answer_eeee_and_junk_is_ignored() {
        let mut h = HostLink::new(params());
        h.connect_all();
        let (out, writes) = run(&mut h, &[0x0009, 0x1234, 0x0000, OP_LOAD, 7], 10);
        assert_eq!(out, vec![ERROR_WORD]);
        assert_eq!(
            writes.len(),
            1,
            "LOAD after the junk runs and takes its first word"
        );
    }

    #[test]
    fn three_lanes_write_a_sample_in_three_beats_then_the_label() {
        // tiny: 8 inputs; beats at inputs 0, 3, 6 (the last one short), then the label
        let mut h = HostLink::with_lanes(params(), 3);
        h.connect_all();
        h.out_ready.next = true;
        let beats: [[u16; 3]; 6] = [
            [OP_TRAIN, 0, 0],
            [1, 0, 0],
            [10, 11, 12],
            [13, 14, 15],
            [16, 17, 99],
            [5, 98, 97],
        ];
        let mut seen = vec![];
        for b in beats {
            h.in_valid.next = true;
            h.in_data.next = Bits::<16>::from(b[0] as u64);
            settle(&mut h);
            assert!(h.in_ready.val());
            let we: Vec<bool> = std::iter::once(h.in_we.val())
                .chain(h.in_lanes_we.iter().map(|x| x.val()))
                .collect();
            seen.push((we, h.in_addr.val().index(), h.lab_we.val()));
            tick(&mut h, |h| &mut h.clock);
        }
        let (n, y) = (false, true);
        assert_eq!(
            seen[2..],
            [
                (vec![y, y, y], 0, n),
                (vec![y, y, y], 3, n),
                (vec![y, y, n], 6, n),
                (vec![n, n, n], 9, y),
            ]
        );
        assert_eq!(h._s.loaded, 1, "the label beat ends the sample");
    }

    #[test]
    fn host_link_verilog_is_clean() {
        yosys_check(&HostLink::new(params()), "host_link");
        yosys_check(&HostLink::with_lanes(params(), 3), "host_link_lanes");
    }
}
