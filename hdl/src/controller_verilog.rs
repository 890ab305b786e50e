//! Verilog of the controller and host link, statement for statement the simulation model
//! of controller.rs (`now` is the combinational block, `commit` the clocked one).

use crate::controller::*;
use std::fmt::Write;

pub fn verilog(p: &CtrlParams) -> String {
    let l = p.junctions;
    let k0 = p.in_copies;
    let lab0 = (-(l as i64 - 1)).rem_euclid(k0 as i64);
    let mut v = String::new();
    let _ = writeln!(
        v,
        "
localparam M_IDLE = 3'd0, M_ERR = 3'd1, M_LOAD = 3'd2, M_COUNT = 3'd3, M_STREAM = 3'd4, M_READ = 3'd5;
reg [2:0] mode;
reg train;
reg [15:0] msg0;
reg [15:0] msg1;
reg [15:0] msg2;
reg [1:0] msg_n;
reg [1:0] msg_i;
reg [31:0] cycles;
reg [15:0] lj;
reg bias;
reg [15:0] bank;
reg [15:0] row;
reg read_phase;
reg [31:0] samples;
reg [31:0] started;
reg [31:0] loaded;
reg [15:0] widx;
reg [15:0] in_copy_r;
reg running;
reg [15:0] kk;
reg [{lm}:0] ffe;
reg [{lm}:0] bpe;
reg parity_r;
reg [15:0] labels [0:{km}];
reg [15:0] lab_ptr;
integer i;
initial begin
    mode = M_IDLE; train = 1'b0; msg0 = 16'd0; msg1 = 16'd0; msg2 = 16'd0; msg_n = 2'd0; msg_i = 2'd0;
    cycles = 32'd0; lj = 16'd0; bias = 1'b0; bank = 16'd0; row = 16'd0; read_phase = 1'b0;
    samples = 32'd0; started = 32'd0; loaded = 32'd0; widx = 16'd0; in_copy_r = 16'd0; running = 1'b0;
    kk = 16'd0; ffe = {l}'d0; bpe = {l}'d0; parity_r = 1'b0; lab_ptr = 16'd0;
    for (i = 0; i <= {km}; i = i + 1) labels[i] = 16'd0;
end

reg pending;
reg in_ready_c;
reg take;
reg [31:0] total;
reg can_start;
reg need_out;
reg at_end;
reg adv_c;
reg last_c;
reg [15:0] banks;
reg [15:0] rows;
reg [15:0] nb;
reg [15:0] nr;
reg [15:0] nl;
reg nbias;
reg wdone;
reg [15:0] rdata;
reg [31:0] cyc1;
",
        lm = l - 1,
        km = k0 - 1,
    );
    v += "\nalways @(*) begin\n";
    v += "    pending = (msg_i < msg_n);\n";
    v += "    case (mode)\n        M_IDLE, M_ERR: in_ready_c = !pending;\n        M_LOAD, M_COUNT: in_ready_c = 1'b1;\n        M_STREAM: in_ready_c = (loaded < samples) && (loaded <= started + 32'd1);\n        default: in_ready_c = 1'b0;\n    endcase\n";
    v += "    take = in_ready_c && in_valid;\n";
    let _ = writeln!(
        v,
        "    if (samples == 32'd0) total = 32'd0;\n    else if (train) total = samples + 32'd{};\n    else total = samples + 32'd{};",
        2 * l - 1,
        l - 1
    );
    v += "    can_start = (mode == M_STREAM) && (started < total) && ((started >= samples) || (loaded > started));\n";
    let _ = writeln!(v, "    need_out = !train && ffe[{}];", l - 1);
    let _ = writeln!(v, "    at_end = (kk == 16'd{});", p.t - 1);
    v += "    adv_c = (mode == M_STREAM) && running && !(at_end && need_out && pending);\n    last_c = adv_c && at_end;\n";
    // walk over (junction, weights/biases, row, bank)
    v += "    case (lj)\n";
    for j in 0..l {
        let _ = writeln!(
            v,
            "        16'd{j}: begin banks = bias ? 16'd{} : 16'd{}; rows = bias ? 16'd{} : 16'd{}; rdata = h_rdata${j}; end",
            p.b_banks[j], p.w_banks[j], p.b_rows[j], p.w_rows[j]
        );
    }
    v += "        default: begin banks = 16'd1; rows = 16'd1; rdata = 16'd0; end\n    endcase\n";
    let _ = writeln!(
        v,
        "    nb = bank + 16'd1; nr = row; nl = lj; nbias = bias; wdone = 1'b0;
    if (nb == banks) begin
        nb = 16'd0;
        nr = row + 16'd1;
        if (nr == rows) begin
            nr = 16'd0;
            nl = lj + 16'd1;
            if (nl == 16'd{l}) begin
                nl = 16'd0;
                if (bias) begin
                    nbias = 1'b0;
                    wdone = 1'b1;
                end else nbias = 1'b1;
            end
        end
    end"
    );
    v += "    cyc1 = cycles + 32'd1;\n";
    // outputs
    v += "    in_ready = in_ready_c;\n    out_valid = pending;\n";
    v += "    case (msg_i)\n        2'd0: out_data = pending ? msg0 : 16'd0;\n        2'd1: out_data = pending ? msg1 : 16'd0;\n        default: out_data = pending ? msg2 : 16'd0;\n    endcase\n";
    v += "    adv = adv_c;\n    k = kk;\n    last = last_c;\n    parity = parity_r;\n    restart = (mode == M_COUNT) && take;\n    label = labels[lab_ptr];\n";
    for j in 0..l {
        let _ = writeln!(v, "    ff_en${j} = ffe[{j}];\n    bp_en${j} = bpe[{j}];\n    h_sel${j} = (lj == 16'd{j}) && ((mode == M_LOAD) || (mode == M_READ));");
    }
    v += "    h_bias = bias;\n    h_we = (mode == M_LOAD) && take;\n    h_addr = row;\n    h_bank = bank;\n    h_wdata = in_data;\n";
    let _ = writeln!(v, "    in_we = (mode == M_STREAM) && (widx < 16'd{}) && take;\n    in_copy = in_copy_r;\n    in_addr = widx;", p.inputs);
    v += "end\n";
    // clocked
    let opcode = format!(
        "begin
                cycles <= 32'd0; lj <= 16'd0; bias <= 1'b0; bank <= 16'd0; row <= 16'd0; read_phase <= 1'b0;
                case (in_data)
                    16'd{OP_LOAD}: mode <= M_LOAD;
                    16'd{OP_TRAIN}: begin mode <= M_COUNT; train <= 1'b1; end
                    16'd{OP_INFER}: begin mode <= M_COUNT; train <= 1'b0; end
                    16'd{OP_READ}: mode <= M_READ;
                    default: begin mode <= M_ERR; msg0 <= 16'h{ERROR_WORD:04x}; msg_n <= 2'd1; msg_i <= 2'd0; end
                endcase
            end"
    );
    let walk = "begin bank <= nb; row <= nr; lj <= nl; bias <= nbias; end";
    let mut start = String::from("begin\n");
    for j in 0..l {
        let b = p.bp_offset(j);
        let _ = writeln!(
            start,
            "                    ffe[{j}] <= (started >= 32'd{j}) && (started - 32'd{j} < samples);\n                    bpe[{j}] <= train && (started >= 32'd{b}) && (started - 32'd{b} < samples);"
        );
    }
    start += "                    running <= 1'b1; kk <= 16'd0; started <= started + 32'd1;\n                end";
    let words = format!("(16'd{} + (train ? 16'd1 : 16'd0))", p.inputs);
    let _ = writeln!(
        v,
        "
always @(posedge clock) begin
    if (pending && out_ready) msg_i <= msg_i + 2'd1;
    cycles <= cycles + 32'd1;
    case (mode)
        M_IDLE: if (take) {opcode}
        M_ERR: if (take && (in_data >= 16'd{OP_LOAD}) && (in_data <= 16'd{OP_READ})) {opcode}
        M_LOAD: if (take) begin
            bank <= nb; row <= nr; lj <= nl; bias <= nbias;
            if (wdone) begin
                msg0 <= 16'h{ACK_LOAD:04x}; msg_n <= 2'd1; msg_i <= 2'd0;
                mode <= M_IDLE;
            end
        end
        M_COUNT: if (take) begin
            samples <= {{16'd0, in_data}}; started <= 32'd0; loaded <= 32'd0; widx <= 16'd0; in_copy_r <= 16'd0;
            running <= 1'b0; parity_r <= 1'b0; lab_ptr <= 16'd{lab0}; mode <= M_STREAM;
        end
        M_STREAM: begin
            if (take) begin
                if (widx == 16'd{inputs}) labels[in_copy_r] <= in_data;
                if (widx + 16'd1 == {words}) begin
                    widx <= 16'd0;
                    loaded <= loaded + 32'd1;
                    in_copy_r <= (in_copy_r + 16'd1 == 16'd{k0}) ? 16'd0 : in_copy_r + 16'd1;
                end else widx <= widx + 16'd1;
            end
            if (adv_c) begin
                if (last_c) begin
                    parity_r <= !parity_r;
                    lab_ptr <= (lab_ptr + 16'd1 == 16'd{k0}) ? 16'd0 : lab_ptr + 16'd1;
                    running <= 1'b0;
                    if (need_out) begin msg0 <= pred; msg_n <= 2'd1; msg_i <= 2'd0; end
                    if (can_start) {start}
                end else kk <= kk + 16'd1;
            end else if (!running && can_start) {start}
            else if (!running && (started == total) && !pending) begin
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
                {walk}
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
    );
    v
}
