//! Verilog of a junction, statement for statement the simulation model of junction.rs:
//! one combinational block computes the clock's lanes, sums, activations, deltas and new
//! weights; one clocked block performs the RAM reads for the next clock and every write.
//! Weight and bias banks have one read and one write port each (block-RAM shaped); the
//! left layer's memories are register files read combinationally.

use crate::junction::Junction;
use crate::{act_rom, addr_gen, fixed};
use edgeflow_core::fixed::Activation;
use std::fmt::Write;

pub fn verilog(jn: &Junction) -> String {
    let p = jn.params();
    let prev = jn.prev_groups();
    let (z, g, c, br, left, right) = (p.z, p.groups, p.clocks, p.bias_rows(), p.left, p.right);
    let (ka, ks, cpn, lpg) = (
        p.act_copies,
        p.sp_copies,
        p.clocks_per_neuron,
        p.lanes_per_group,
    );
    let first = p.is_first();
    let last = p.is_last();
    let one = p.format.one();
    let mut v = String::new();
    v += &fixed::verilog_functions(p.format, p.shift);
    v += &act_rom::verilog_function("right", p.right_act, &p.table);
    v += &addr_gen::verilog_functions(p);
    // hidden delta of the right layer (σ′ multiply, or the ReLU gate)
    let hd = match p.right_act {
        Activation::Sigmoid => "hdelta = mul_rs(sp, sat32(acc));",
        Activation::Relu => "hdelta = (sp != 16'sd0) ? sat32(acc) : 16'sd0;",
    };
    let _ = write!(
        v,
        "
function signed [15:0] hdelta;
    input signed [15:0] sp;
    input signed [31:0] acc;
    begin
        {hd}
    end
endfunction
"
    );
    // state
    v += "\n// memories and registers\n";
    for l in 0..z {
        let _ = writeln!(
            v,
            "reg signed [15:0] w_{l} [0:{}];\nreg signed [15:0] wq_{l};",
            c - 1
        );
    }
    for q in 0..g {
        let _ = writeln!(v, "reg signed [15:0] b_{q} [0:{}];\nreg signed [15:0] bq_{q};\nreg signed [31:0] facc_{q};", br - 1);
    }
    let _ = writeln!(v, "reg signed [15:0] amem [0:{}];", ka * left - 1);
    if !first {
        let _ = writeln!(
            v,
            "reg signed [15:0] smem [0:{}];\nreg signed [31:0] dmem [0:{}];",
            ks * left - 1,
            2 * left - 1
        );
    }
    if last {
        let _ = writeln!(v, "reg signed [15:0] omem [0:{}];", 2 * right - 1);
    }
    v += "reg [15:0] ag_s;\nreg [15:0] ag_r;\nreg [15:0] sub;\nreg [15:0] row;\nreg [15:0] a_ff;\nreg [15:0] s_w;\n";
    v += "reg signed [15:0] best_val;\nreg [15:0] best_idx;\n";
    let a_ff0 = (-(p.j as i64)).rem_euclid(ka as i64);
    let s_w0 = (1 - p.j as i64).rem_euclid(ks as i64);
    // power-up contents: zero memories, pointers at their stream-start values
    v += "integer i;\ninitial begin\n";
    for l in 0..z {
        let _ = writeln!(
            v,
            "    for (i = 0; i < {c}; i = i + 1) w_{l}[i] = 16'sd0;\n    wq_{l} = 16'sd0;"
        );
    }
    for q in 0..g {
        let _ = writeln!(v, "    for (i = 0; i < {br}; i = i + 1) b_{q}[i] = 16'sd0;\n    bq_{q} = 16'sd0;\n    facc_{q} = 32'sd0;");
    }
    let _ = writeln!(
        v,
        "    for (i = 0; i < {}; i = i + 1) amem[i] = 16'sd0;",
        ka * left
    );
    if !first {
        let _ = writeln!(
            v,
            "    for (i = 0; i < {}; i = i + 1) smem[i] = 16'sd0;",
            ks * left
        );
        let _ = writeln!(
            v,
            "    for (i = 0; i < {}; i = i + 1) dmem[i] = 32'sd0;",
            2 * left
        );
    }
    if last {
        let _ = writeln!(
            v,
            "    for (i = 0; i < {}; i = i + 1) omem[i] = 16'sd0;",
            2 * right
        );
    }
    let _ = writeln!(
        v,
        "    ag_s = 16'd0; ag_r = 16'd0; sub = 16'd0; row = 16'd0; a_ff = 16'd{a_ff0}; s_w = 16'd{s_w0};\n    best_val = 16'sd0; best_idx = 16'd0;\nend"
    );
    // combinational signals
    v += "\n// this clock\nreg run_ff;\nreg run_bp;\nreg first_sub;\nreg last_sub;\nreg [15:0] a_up;\nreg [15:0] a_w;\nreg [15:0] s_r;\n";
    v += "reg [15:0] nsub;\nreg [15:0] nrow;\nreg [15:0] waddr;\nreg [15:0] baddr;\nreg signed [15:0] cbest_val;\nreg [15:0] cbest_idx;\n";
    for l in 0..z {
        let _ = writeln!(v, "reg [15:0] left_{l};\nreg signed [15:0] nw_{l};\nreg signed [31:0] ct_{l};\nreg we_{l};\nreg [15:0] wa_{l};\nreg signed [15:0] wd_{l};");
    }
    for q in 0..g {
        let _ = writeln!(
            v,
            "reg [15:0] r_{q};\nreg signed [31:0] sum_{q};\nreg [31:0] actv_{q};\nreg signed [15:0] a_{q};\nreg signed [15:0] sp_{q};\nreg signed [15:0] od_{q};\nreg signed [15:0] d_{q};\nreg signed [15:0] nb_{q};\nreg bwe_{q};\nreg [15:0] bwa_{q};\nreg signed [15:0] bwd_{q};"
        );
    }
    v += "\nalways @(*) begin\n";
    let _ = writeln!(
        v,
        "    run_ff = adv && ff_en && (k < 16'd{c});\n    run_bp = adv && bp_en && (k < 16'd{c});"
    );
    let _ = writeln!(
        v,
        "    first_sub = (sub == 16'd0);\n    last_sub = (sub == 16'd{});",
        cpn - 1
    );
    let _ = writeln!(
        v,
        "    a_up = a_ff + 16'd{};\n    if (a_up >= 16'd{ka}) a_up = a_up - 16'd{ka};",
        p.up_offset
    );
    let _ = writeln!(
        v,
        "    a_w = a_ff + 16'd1;\n    if (a_w >= 16'd{ka}) a_w = a_w - 16'd{ka};"
    );
    let _ = writeln!(
        v,
        "    s_r = s_w + 16'd1;\n    if (s_r >= 16'd{ks}) s_r = s_r - 16'd{ks};"
    );
    let _ = writeln!(v, "    cbest_val = best_val;\n    cbest_idx = best_idx;");
    for l in 0..z {
        let _ = writeln!(
            v,
            "    left_{l} = (ag_s < 16'd{}) ? left_of_{l}(ag_s, ag_r) : 16'd0;",
            p.pattern.fan_out
        );
    }
    for q in 0..g {
        let _ = writeln!(v, "    r_{q} = row * 16'd{g} + 16'd{q};");
        // both operands signed: the bias is sign-extended
        let mut sum = format!("    sum_{q} = (first_sub ? bq_{q} : facc_{q})");
        for l in q * lpg..(q + 1) * lpg {
            let _ = write!(
                sum,
                "\n        + mul_rs(wq_{l}, amem[a_ff * {left} + left_{l}])"
            );
        }
        v += &sum;
        v += ";\n";
        let _ = writeln!(v, "    actv_{q} = act_right(sat32(sum_{q}));\n    a_{q} = actv_{q}[31:16];\n    sp_{q} = actv_{q}[15:0];");
        let _ = writeln!(
            v,
            "    od_{q} = sat32(a_{q} - ((r_{q} == label) ? {one} : 0));"
        );
        let _ = writeln!(
            v,
            "    if (run_ff && last_sub && ((r_{q} == 16'd0) || (a_{q} > cbest_val))) begin\n        cbest_val = a_{q};\n        cbest_idx = r_{q};\n    end"
        );
        if last {
            let _ = writeln!(v, "    d_{q} = (r_{q} < 16'd{right}) ? omem[(parity ? 0 : {right}) + r_{q}] : 16'sd0;");
        } else {
            let _ = writeln!(v, "    d_{q} = hdelta(rq_sp${q}, rq_acc${q});");
        }
        let _ = writeln!(v, "    nb_{q} = sat32(bq_{q} - eta(d_{q}));");
    }
    for l in 0..z {
        let q = l / lpg;
        let _ = writeln!(v, "    ct_{l} = mul_rs(wq_{l}, d_{q});");
        let _ = writeln!(
            v,
            "    nw_{l} = sat32(wq_{l} - eta(mul_rs(d_{q}, amem[a_up * {left} + left_{l}])));"
        );
    }
    // next counters, RAM addresses, single write port per bank
    let _ = writeln!(
        v,
        "    nsub = sub;\n    nrow = row;\n    if (last) begin\n        nsub = 16'd0;\n        nrow = 16'd0;\n    end else if (adv) begin\n        if (sub == 16'd{}) begin\n            nsub = 16'd0;\n            nrow = row + 16'd1;\n        end else nsub = sub + 16'd1;\n    end",
        cpn - 1
    );
    let _ = writeln!(
        v,
        "    if (h_sel) begin\n        waddr = h_addr;\n        baddr = h_addr;\n    end else if (adv && !last) begin\n        waddr = (k + 16'd1 < 16'd{c}) ? k + 16'd1 : 16'd0;\n        baddr = (nrow < 16'd{br}) ? nrow : 16'd0;\n    end else begin\n        waddr = 16'd0;\n        baddr = 16'd0;\n    end"
    );
    for l in 0..z {
        let _ = writeln!(
            v,
            "    we_{l} = run_bp || (h_sel && h_we && !h_bias && h_bank == 16'd{l});\n    wa_{l} = h_sel ? h_addr : k;\n    wd_{l} = h_sel ? h_wdata : nw_{l};"
        );
    }
    for q in 0..g {
        let _ = writeln!(
            v,
            "    bwe_{q} = (run_bp && last_sub) || (h_sel && h_we && h_bias && h_bank == 16'd{q});\n    bwa_{q} = h_sel ? h_addr : row;\n    bwd_{q} = h_sel ? h_wdata : nb_{q};"
        );
    }
    // outputs
    v += "    case (h_bank)\n";
    for b in 0..z.max(g) {
        let wv = if b < z {
            format!("wq_{b}")
        } else {
            "16'sd0".into()
        };
        let bv = if b < g {
            format!("bq_{b}")
        } else {
            "16'sd0".into()
        };
        let _ = writeln!(v, "        16'd{b}: h_rdata = h_bias ? {bv} : {wv};");
    }
    v += "        default: h_rdata = 16'd0;\n    endcase\n";
    v += "    pred = cbest_idx;\n";
    if !last {
        for q in 0..g {
            let _ = writeln!(
                v,
                "    rw_en${q} = run_ff && last_sub;\n    rw_addr${q} = r_{q};\n    rw_a${q} = a_{q};\n    rw_sp${q} = sp_{q};\n    rq_addr${q} = r_{q};\n    rq_clear${q} = run_bp && last_sub;"
            );
        }
    }
    for q in 0..prev {
        let _ = writeln!(
            v,
            "    lq_acc${q} = dmem[(parity ? 0 : {left}) + ((lq_addr${q} < 16'd{left}) ? lq_addr${q} : 16'd{})];\n    lq_sp${q} = smem[s_r * {left} + ((lq_addr${q} < 16'd{left}) ? lq_addr${q} : 16'd{})];",
            left - 1,
            left - 1
        );
    }
    v += "end\n";
    // clocked
    v += "\nalways @(posedge clock) begin\n";
    for l in 0..z {
        let _ = writeln!(
            v,
            "    wq_{l} <= w_{l}[waddr];\n    if (we_{l}) w_{l}[wa_{l}] <= wd_{l};"
        );
    }
    for q in 0..g {
        let _ = writeln!(
            v,
            "    bq_{q} <= b_{q}[baddr];\n    if (bwe_{q}) b_{q}[bwa_{q}] <= bwd_{q};"
        );
    }
    if !first {
        v += "    if (run_bp) begin\n";
        for l in 0..z {
            let _ = writeln!(v, "        dmem[(parity ? {left} : 0) + left_{l}] <= dmem[(parity ? {left} : 0) + left_{l}] + ct_{l};");
        }
        v += "    end\n";
    }
    v += "    if (run_ff) begin\n";
    for q in 0..g {
        let _ = writeln!(v, "        facc_{q} <= sum_{q};");
        if last {
            let _ = writeln!(
                v,
                "        if (last_sub) omem[(parity ? {right} : 0) + r_{q}] <= od_{q};"
            );
        }
    }
    v += "        best_val <= cbest_val;\n        best_idx <= cbest_idx;\n    end\n";
    for q in 0..prev {
        let _ = writeln!(
            v,
            "    if (lw_en${q}) begin\n        amem[a_w * {left} + lw_addr${q}] <= lw_a${q};\n        smem[s_w * {left} + lw_addr${q}] <= lw_sp${q};\n    end\n    if (lq_clear${q}) dmem[(parity ? 0 : {left}) + lq_addr${q}] <= 32'sd0;"
        );
    }
    if first {
        let _ = writeln!(v, "    if (in_we && (in_copy < 16'd{ka}) && (in_addr < 16'd{left})) amem[in_copy * {left} + in_addr] <= in_data;");
    }
    v += &addr_gen::verilog_counters(p)
        .replace("always @(posedge clock) begin\n", "")
        .replacen("\nend\n", "\n", 1);
    v += "    sub <= nsub;\n    row <= nrow;\n";
    let _ = writeln!(
        v,
        "    if (restart) begin\n        a_ff <= 16'd{a_ff0};\n        s_w <= 16'd{s_w0};\n    end else if (last) begin\n        a_ff <= (a_ff + 16'd1 == 16'd{ka}) ? 16'd0 : a_ff + 16'd1;\n        s_w <= (s_w + 16'd1 == 16'd{ks}) ? 16'd0 : s_w + 16'd1;\n    end"
    );
    v += "end\n";
    v
}
