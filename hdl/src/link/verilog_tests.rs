//! The link's Verilog: yosys' checks, its size on the iCE40, and a run of both sides in
//! Icarus with their own clocks.

use super::rx::LinkRx;
use super::tx::LinkTx;
use super::ERR_CHECKSUM;
use crate::testing::{icarus_run, yosys_check};
use edgeflow_flow::targets::target;
use edgeflow_flow::tools::{tool_for_test, YOSYS};
use rust_hdl::prelude::*;

/// Both sides wired pin to pin, each on its own clock input.
#[derive(LogicBlock)]
struct LinkPair {
    pub tx_clock: Signal<In, Clock>,
    pub rx_clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub good: Signal<Out, Bit>,
    pub error: Signal<Out, Bits<5>>,
    /// Data pins flipped on the wire (a mask: one expression, so the update does not write
    /// the pins twice in a pass, which Icarus would re-run against the receiver's update).
    pub flip: Signal<In, Bits<4>>,
    tx: LinkTx<4>,
    rx: LinkRx<4, 5, 6>,
}

impl Logic for LinkPair {
    #[hdl_gen]
    fn update(&mut self) {
        self.tx.clock.next = self.tx_clock.val();
        self.rx.clock.next = self.rx_clock.val();
        self.tx.words.data.next = self.in_data.val();
        self.tx.words.valid.next = self.in_valid.val();
        self.in_ready.next = self.tx.words.ready.val();
        self.rx.link_clock.next = self.tx.link_clock.val();
        self.rx.link_data.next = self.tx.link_data.val() ^ self.flip.val();
        self.rx.link_valid.next = self.tx.link_valid.val();
        self.rx.link_start.next = self.tx.link_start.val();
        self.tx.link_credit.next = self.rx.link_credit.val();
        self.out_data.next = self.rx.words.data.val();
        self.out_valid.next = self.rx.words.valid.val();
        self.rx.words.ready.next = self.out_ready.val();
        self.rx.awaiting.next = false;
        self.good.next = self.rx.good.val();
        self.error.next = self.rx.error.val();
    }
}

const LEN: usize = 24;

fn pair() -> LinkPair {
    let mut p = LinkPair {
        tx_clock: Default::default(),
        rx_clock: Default::default(),
        in_data: Default::default(),
        in_valid: Default::default(),
        in_ready: Default::default(),
        out_data: Default::default(),
        out_valid: Default::default(),
        out_ready: Default::default(),
        good: Default::default(),
        error: Default::default(),
        flip: Default::default(),
        tx: LinkTx::new(LEN as u16, 32),
        rx: LinkRx::new(LEN as u16, 5000),
    };
    p.connect_all();
    p
}

#[test]
fn link_verilog_passes_yosys_checks() {
    let mut tx = LinkTx::<4>::new(64, 32);
    tx.connect_all();
    yosys_check(&tx, "link_tx");
    let mut rx = LinkRx::<4, 5, 6>::new(64, 5000);
    rx.connect_all();
    yosys_check(&rx, "link_rx");
    yosys_check(&pair(), "link_pair");
}

/// LUTs and flip-flops of each side, each on its own as a top, through `synth_ice40`.
#[test]
fn link_sides_synthesize_for_the_ice40() {
    if !tool_for_test(YOSYS) {
        return;
    }
    let t = target("ice40-up5k").unwrap();
    let mut tx = LinkTx::<4>::new(64, 32);
    tx.connect_all();
    let mut rx = LinkRx::<4, 5, 6>::new(64, 1 << 20);
    rx.connect_all();
    for (name, v) in [("tx", generate_verilog(&tx)), ("rx", generate_verilog(&rx))] {
        let dir = std::env::temp_dir().join(format!("edgeflow-link-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("top.v"), &v).unwrap();
        let r = edgeflow_flow::yosys::synthesize(t, &dir, "top.v", false).unwrap();
        let used = |res: &str| {
            r.table
                .rows
                .iter()
                .find(|row| row.resource == res)
                .map(|row| row.used)
                .unwrap()
        };
        let (luts, ffs) = (used("LUT"), used("FF"));
        eprintln!("link {name} (W=4, 32-entry FIFO) on the iCE40 UP5K: {luts} LUT4, {ffs} flip-flops, cells {:?}", r.table.cells);
        // A link must leave the datapath its board: a few percent of the UP5K at most.
        assert!(luts > 0.0 && luts < 400.0, "{name}: {luts} LUTs");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Icarus: 300 ppm apart, random words, a consumer that stalls; the words printed back are
/// the words sent. A second run flips a data pin for one beat: a checksum error.
#[test]
fn link_pair_runs_in_icarus_with_clocks_300_ppm_apart() {
    let v = generate_verilog(&pair());
    let mut seed = 0x1234_5678u32;
    let words: Vec<u16> = (0..3 * LEN)
        .map(|_| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 16) as u16
        })
        .collect();
    for flip_at in [None, Some(1_700_000u64)] {
        let mut init = String::new();
        for (i, w) in words.iter().enumerate() {
            init += &format!("    words[{i}] = 16'h{w:04x};\n");
        }
        let flip = match flip_at {
            Some(t) => format!("#{t} flip = 1; #33334 flip = 0;"),
            None => String::new(),
        };
        let n = words.len();
        let tb = format!(
            "`timescale 1ps/1ps\n{v}\nmodule tb;\n\
             reg tx_clock = 0, rx_clock = 0; reg [3:0] flip = 0;\n\
             reg [15:0] words [0:{last}];\n\
             integer idx = 0, k = 0, goods = 0;\n\
             wire in_ready, out_valid, good; wire [15:0] out_data; wire [4:0] error;\n\
             wire out_ready = (k % 3) != 1;\n\
             top dut(.tx_clock(tx_clock), .rx_clock(rx_clock), .in_data(words[idx]),\n\
               .in_valid(idx < {n}), .in_ready(in_ready), .out_data(out_data),\n\
               .out_valid(out_valid), .out_ready(out_ready), .good(good), .error(error),\n\
               .flip(flip));\n\
             always #16667 tx_clock = ~tx_clock;\n\
             initial begin #5000; forever #16672 rx_clock = ~rx_clock; end\n\
             always @(posedge tx_clock) if (idx < {n} && in_ready) idx <= idx + 1;\n\
             always @(posedge rx_clock) begin\n\
               k <= k + 1;\n\
               if (out_valid && out_ready) $display(\"w %0d\", out_data);\n\
               if (good) goods = goods + 1;\n\
             end\n\
             initial begin\n{init}    {flip}\n\
               #20000000 $display(\"g %0d\", goods); $display(\"e %0d\", error); $finish;\n\
             end\nendmodule\n",
            last = n - 1
        );
        std::fs::write("/tmp/link_tb.v", &tb).unwrap();
        if std::env::var("DUMP_ONLY").is_ok() {
            return;
        }
        let Some(out) = icarus_run(&tb, "link") else {
            return;
        };
        let field = |tag: &str| -> Vec<u64> {
            out.lines()
                .filter_map(|l| l.strip_prefix(tag))
                .map(|x| x.trim().parse().unwrap())
                .collect()
        };
        let got: Vec<u16> = field("w ").iter().map(|&x| x as u16).collect();
        let (goods, error) = (field("g ")[0], field("e ")[0]);
        match flip_at {
            None => {
                assert_eq!(got, words, "words through Icarus");
                assert_eq!((goods, error), (3, 0));
            }
            Some(_) => {
                assert_eq!(error, ERR_CHECKSUM, "flipped pin");
                assert!(goods < 3);
            }
        }
    }
}

/// Steps the Verilated pair on two clocks 300 ppm apart (half periods in ps), feeding the
/// words of `words.txt` and printing what comes out, as the Icarus bench does.
const PAIR_HARNESS: &str = r#"#include "Vtop.h"
#include "verilated.h"
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    std::vector<uint16_t> words;
    unsigned w;
    FILE* f = fopen("words.txt", "r");
    if (!f) return 2;
    while (fscanf(f, "%u", &w) == 1) words.push_back((uint16_t)w);
    fclose(f);
    const unsigned transfers = TRANSFERS;
    Vtop* top = new Vtop;
    const uint64_t tx_half = 16667, rx_half = 16672;
    uint64_t next_tx = tx_half, next_rx = tx_half + 5000, k = 0;
    size_t idx = 0;
    unsigned goods = 0;
    top->eval();
    for (uint64_t step = 0; step < 10000000 && goods < transfers && top->error == 0; step++) {
        if (next_tx <= next_rx) {
            if (!top->tx_clock) {
                top->in_valid = idx < words.size();
                top->in_data = idx < words.size() ? words[idx] : 0;
                top->eval();
                bool took = top->in_valid && top->in_ready;
                top->tx_clock = 1;
                top->eval();
                if (took) idx++;
            } else {
                top->tx_clock = 0;
                top->eval();
            }
            next_tx += tx_half;
        } else {
            if (!top->rx_clock) {
                top->out_ready = (k % 3) != 1;
                top->eval();
                if (top->out_valid && top->out_ready) printf("w %u\n", (unsigned)top->out_data);
                if (top->good) goods++;
                top->rx_clock = 1;
                top->eval();
                k++;
            } else {
                top->rx_clock = 0;
                top->eval();
            }
            next_rx += rx_half;
        }
    }
    printf("g %u\ne %u\n", goods, (unsigned)top->error);
    top->final();
    delete top;
    return 0;
}
"#;

#[test]
fn link_pair_runs_in_verilator_with_clocks_300_ppm_apart() {
    use edgeflow_flow::tools::VERILATOR;
    if !tool_for_test(VERILATOR) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("edgeflow-link-verilator-{}", std::process::id()));
    let harness = PAIR_HARNESS.replace("TRANSFERS", "3");
    let h = edgeflow_flow::verilator::build_with(
        &dir,
        &generate_verilog(&pair()),
        &harness,
        "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0",
    )
    .unwrap();
    let mut seed = 0x9E37_79B9u32;
    let words: Vec<u16> = (0..3 * LEN)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u16
        })
        .collect();
    let text: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    std::fs::write(dir.join("words.txt"), text.join("\n")).unwrap();
    let out = std::process::Command::new(&h.exe)
        .current_dir(&dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    let field = |tag: &str| -> Vec<u64> {
        out.lines()
            .filter_map(|l| l.strip_prefix(tag))
            .map(|x| x.trim().parse().unwrap())
            .collect()
    };
    let got: Vec<u16> = field("w ").iter().map(|&x| x as u16).collect();
    assert_eq!(got, words, "words through Verilator");
    assert_eq!((field("g ")[0], field("e ")[0]), (3, 0));
    let _ = std::fs::remove_dir_all(&dir);
}
