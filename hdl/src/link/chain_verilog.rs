//! One Verilog design of a whole chain, for co-simulation: every board's linked stage (its
//! own module tree, renamed `board<i>`), joined by the link wires as the cables join the
//! boards, each board on its own clock input. Per board the top's ports are the board's
//! own, prefixed `b<i>_` (`b0_clock`, `b0_feed_data`, `b0_h_sel_0`, …). Per link `l`
//! (boards `l` and `l + 1`) and direction (`f` activations, `b` delta sums) the top has
//! fault inputs that act on the wires between the boards: `l<l>_<d>_flip` (XOR onto the data
//! pins) and `l<l>_<d>_drop` (the beat never arrives), and `l<l>_<d>_beat`, the sender's
//! `valid`, for a harness that counts beats.

use super::linked_stage::{boundary_params, verilog_for};
use edgeflow_core::Spec;
use edgeflow_reference::Schedule;
use std::fmt::Write;

/// Rename the module tree of one board's Verilog: `top` → `board<i>`, `top$…` → `board<i>$…`.
fn rename(v: &str, i: usize) -> String {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let bytes = v.as_bytes();
    let mut out = String::with_capacity(v.len() + v.len() / 50);
    let mut from = 0;
    for (k, _) in v.match_indices("top") {
        let whole = (k == 0 || !ident(bytes[k - 1]))
            && matches!(bytes.get(k + 3), Some(b'$') | Some(b'(') | Some(b' '));
        if whole {
            out.push_str(&v[from..k]);
            let _ = write!(out, "board{i}");
            from = k + 3;
        }
    }
    out.push_str(&v[from..]);
    out
}

/// The chain's Verilog (top module `top`) for `width` data pins per link direction and link
/// FIFOs of `2^fifo_bits` words; `built[i]` is the spec as board `i` builds it (its pipeline
/// options; the same network), `timeout` as
/// [`LinkedStage::new`](super::linked_stage::LinkedStage::new)'s.
pub fn chain_verilog(
    built: &[Spec],
    stages: &[(usize, usize)],
    link_delay: &[usize],
    timeout: u32,
    width: usize,
    fifo_bits: usize,
) -> Result<String, String> {
    let sched = Schedule::with_links(link_delay);
    let k = stages.len();
    let mut v = String::new();
    let mut ports = vec![];
    let mut body = String::new();
    assert_eq!(built.len(), k, "one built spec per stage");
    for (i, &(a, b)) in stages.iter().enumerate() {
        let spec = &built[i];
        v.push_str(&rename(
            &verilog_for(spec, a..=b, &sched.ff, &sched.bp, timeout, width, fifo_bits)?,
            i,
        ));
        let p = boundary_params(spec, &(a..=b), &sched.ff, &sched.bp);
        let n = b - a + 1;
        let pre = format!("b{i}_");
        for (dir, width, name) in [
            ("input", 1, "clock"),
            ("input", 1, "go"),
            ("input", 1, "go_train"),
            ("input", 16, "go_samples"),
            ("input", 16, "feed_data"),
            ("input", 1, "feed_valid"),
            ("output", 1, "feed_ready"),
            ("output", 1, "done"),
            ("output", 1, "failed"),
            ("output", 32, "started"),
            ("output", 16, "pred"),
            ("output", 1, "pred_valid"),
            ("output", 5, "prev_error"),
            ("output", 5, "next_error"),
            ("input", 1, "h_bias"),
            ("input", 1, "h_we"),
            ("input", 16, "h_addr"),
            ("input", 16, "h_bank"),
            ("input", 16, "h_wdata"),
        ] {
            ports.push(port(dir, width, &format!("{pre}{name}")));
        }
        let _ = writeln!(body, "  board{i} u{i} (");
        let mut conns: Vec<String> = [
            "clock",
            "go",
            "go_train",
            "go_samples",
            "done",
            "failed",
            "started",
            "pred",
            "pred_valid",
            "prev_error",
            "next_error",
            "h_bias",
            "h_we",
            "h_addr",
            "h_bank",
            "h_wdata",
        ]
        .iter()
        .map(|s| format!(".{s}({pre}{s})"))
        .collect();
        conns.push(".hold(1'b0)".into());
        for f in ["data", "valid", "ready"] {
            conns.push(format!(".feed${f}({pre}feed_{f})"));
        }
        for j in 0..n {
            ports.push(port("input", 1, &format!("{pre}h_sel_{j}")));
            ports.push(port("output", 16, &format!("{pre}h_rdata_{j}")));
            conns.push(format!(".h_sel${j}({pre}h_sel_{j})"));
            conns.push(format!(".h_rdata${j}({pre}h_rdata_{j})"));
        }
        // link pins: the sender's side drives the wires, the receiver reads them through
        // the fault gates
        let pins = |side: &str, link: usize, d: &str, sender: bool| -> Vec<String> {
            let w = format!("l{link}_{d}");
            if sender {
                ["clock", "data", "valid", "start", "credit"]
                    .iter()
                    .map(|s| format!(".{side}$0${s}({w}_{s})"))
                    .collect()
            } else {
                vec![
                    format!(".{side}$0$clock({w}_clock)"),
                    format!(".{side}$0$data({w}_data ^ {w}_flip)"),
                    format!(".{side}$0$valid({w}_valid & ~{w}_drop)"),
                    format!(".{side}$0$start({w}_start & ~{w}_drop)"),
                    format!(".{side}$0$credit({w}_credit)"),
                ]
            }
        };
        if p.has_left {
            conns.extend(pins("from_prev", i - 1, "f", false));
            conns.extend(pins("to_prev", i - 1, "b", true));
        }
        if p.has_right {
            conns.extend(pins("to_next", i, "f", true));
            conns.extend(pins("from_next", i, "b", false));
        }
        let _ = write!(body, "    {}\n  );\n", conns.join(",\n    "));
    }
    let mut wires = String::new();
    for l in 0..k.saturating_sub(1) {
        for d in ["f", "b"] {
            let w = format!("l{l}_{d}");
            for (name, width) in [
                ("clock", 1),
                ("data", width),
                ("valid", 1),
                ("start", 1),
                ("credit", 1),
            ] {
                let _ = writeln!(wires, "  wire {}{w}_{name};", range(width));
            }
            ports.push(port("input", width, &format!("{w}_flip")));
            ports.push(port("input", 1, &format!("{w}_drop")));
            ports.push(port("output", 1, &format!("{w}_beat")));
            let _ = writeln!(wires, "  assign {w}_beat = {w}_valid;");
        }
    }
    let _ = write!(
        v,
        "\nmodule top(\n  {}\n);\n{wires}{body}endmodule\n",
        ports.join(",\n  ")
    );
    Ok(v)
}

fn range(width: usize) -> String {
    if width > 1 {
        format!("[{}:0] ", width - 1)
    } else {
        String::new()
    }
}

fn port(dir: &str, width: usize, name: &str) -> String {
    format!("{dir} wire {}{name}", range(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_module_names_only() {
        let v = "module top(clock,stop$x);\n  top$a$b a$b(.x(stop$x));\nendmodule\nmodule top$a$b(x);\n";
        assert_eq!(
            rename(v, 2),
            "module board2(clock,stop$x);\n  board2$a$b a$b(.x(stop$x));\nendmodule\nmodule board2$a$b(x);\n"
        );
    }
}
