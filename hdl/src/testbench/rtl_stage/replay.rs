//! A stage's boundary ports and its Verilog replayed in Icarus against the rust-hdl run.

use super::*;
use crate::stage::Stage;

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
    for q in 0..s.left.len() {
        b(&mut i, &format!("left${q}$w_en"), s.left[q].w_en.val());
        p(&mut i, &format!("left${q}$w_addr"), s.left[q].w_addr.val());
        p(&mut i, &format!("left${q}$w_a"), s.left[q].w_a.val());
        p(&mut i, &format!("left${q}$q_addr"), s.left[q].q_addr.val());
        b(
            &mut i,
            &format!("left${q}$q_clear"),
            s.left[q].q_clear.val(),
        );
    }
    b(&mut i, "d_we", s.d_we.val());
    p(&mut i, "d_copy", s.d_copy.val());
    p(&mut i, "d_addr", s.d_addr.val());
    p(&mut i, "d_data", s.d_data.val());
    p(&mut o, "started", s.started.val());
    b(&mut o, "done", s.done.val());
    b(&mut o, "adv", s.adv.val());
    b(&mut o, "last", s.last.val());
    for (k, x) in s.h_rdata.iter().enumerate() {
        p(&mut o, &format!("h_rdata${k}"), x.val());
    }
    for (q, x) in s.left.iter().enumerate() {
        p(&mut o, &format!("left${q}$q_sum"), x.q_sum.val());
    }
    for q in 0..s.right.len() {
        b(&mut o, &format!("right${q}$w_en"), s.right[q].w_en.val());
        p(
            &mut o,
            &format!("right${q}$w_addr"),
            s.right[q].w_addr.val(),
        );
        p(&mut o, &format!("right${q}$w_a"), s.right[q].w_a.val());
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
) -> Result<Option<()>, SimError> {
    use std::fmt::Write;
    use std::process::Command;
    if Command::new("iverilog").arg("-V").output().is_err() {
        return Ok(None);
    }
    let dir = std::env::temp_dir().join(format!("edgeflow-stage-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
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
    std::fs::write(dir.join("stim.hex"), stim)?;
    std::fs::write(dir.join("top.v"), verilog)?;
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
    std::fs::write(dir.join("tb.v"), tb)?;
    let text = crate::testbench::rtl::icarus(&dir)?;
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("VCD") && !l.contains("$finish"))
        .collect();
    if lines.len() != trace.len() {
        return Err(SimError::ReplayClocks {
            name: name.to_string(),
            printed: lines.len(),
            clocks: trace.len(),
            dir: dir.display().to_string(),
        });
    }
    for (c, (line, (_, want))) in lines.iter().zip(trace).enumerate() {
        for ((p, &w), got) in outs.iter().zip(want).zip(line.split_whitespace()) {
            if u64::from_str_radix(got, 16).ok() != Some(w) {
                return Err(SimError::ReplayOutput {
                    name: name.to_string(),
                    clock: c,
                    port: p.0.to_string(),
                    got: got.to_string(),
                    want: w,
                    dir: dir.display().to_string(),
                });
            }
        }
    }
    if std::env::var("EDGEFLOW_KEEP_IVERILOG").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(Some(()))
}
