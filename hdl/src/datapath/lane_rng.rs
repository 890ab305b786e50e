//! The stochastic-rounding streams of one junction: one xorshift32 generator per lane
//! (`edgeflow_core::rounding`). Each lane's `word` is its generator's next word, offered
//! combinationally; the clock edge after an update (`advance`) makes it the new state, and a
//! host write of the weights (`restart`) puts every lane back at its seed, as setting the
//! weights does in the reference model.

use edgeflow_core::rounding::LaneRng;
use rust_hdl::core::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock)]
pub struct LaneStreams {
    pub clock: Signal<In, Clock>,
    /// This clock performs an update in every lane: step on the next edge.
    pub advance: Signal<In, Bit>,
    /// The host writes the weights: back to the seeds on the next edge (wins over `advance`).
    pub restart: Signal<In, Bit>,
    /// Per lane, the word this clock's update uses: the generator's state stepped once.
    pub word: Vec<Signal<Out, Bits<32>>>,
    _seeds: Vec<u32>,
    _state: Vec<u32>,
}

impl LaneStreams {
    /// The lanes of junction `junction` (global index) with `lanes` lanes, for a spec seed.
    pub fn new(seed: u64, junction: usize, lanes: usize) -> LaneStreams {
        let seeds: Vec<u32> = (0..lanes)
            .map(|l| LaneRng::seeded(seed, junction, l).0)
            .collect();
        LaneStreams {
            clock: Default::default(),
            advance: Default::default(),
            restart: Default::default(),
            word: crate::sigs(lanes),
            _state: seeds.clone(),
            _seeds: seeds,
        }
    }
}

fn step(x: u32) -> u32 {
    LaneRng(x).next_word()
}

impl Logic for LaneStreams {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.restart.val() {
                self._state.clone_from(&self._seeds);
            } else if self.advance.val() {
                for s in self._state.iter_mut() {
                    *s = step(*s);
                }
            }
        }
        for (o, &s) in self.word.iter_mut().zip(self._state.iter()) {
            o.next = Bits::<32>::from(step(s) as u64);
        }
    }
    fn connect(&mut self) {
        self.word.iter_mut().for_each(|x| x.connect());
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        if self._seeds.is_empty() {
            return Verilog::Custom(v);
        }
        for (l, seed) in self._seeds.iter().enumerate() {
            // xorshift32 (13, 17, 5): wiring and XOR gates only
            let _ = writeln!(
                v,
                "reg [31:0] s_{l};\ninitial s_{l} = 32'd{seed};\n\
                 wire [31:0] t_{l} = s_{l} ^ (s_{l} << 13);\n\
                 wire [31:0] u_{l} = t_{l} ^ (t_{l} >> 17);\n\
                 wire [31:0] n_{l} = u_{l} ^ (u_{l} << 5);\n\
                 always @(posedge clock) if (restart) s_{l} <= 32'd{seed}; else if (advance) s_{l} <= n_{l};"
            );
        }
        v += "always @(*) begin\n";
        for l in 0..self._seeds.len() {
            let _ = writeln!(v, "    word${l} = n_{l};");
        }
        v += "end\n";
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{icarus_rows, icarus_run, settle, tick, yosys_check};

    fn words(s: &LaneStreams) -> Vec<u32> {
        s.word.iter().map(|w| w.val().index() as u32).collect()
    }

    /// The model steps each lane exactly on `advance`, restarts on `restart`, and offers
    /// the word the reference's `LaneRng` draws next.
    #[test]
    fn lanes_follow_their_reference_streams() {
        let mut s = LaneStreams::new(11, 2, 3);
        s.connect_all();
        let mut want: Vec<LaneRng> = (0..3).map(|l| LaneRng::seeded(11, 2, l)).collect();
        let mut r = edgeflow_core::rng::SplitMix64::new(5);
        let mut stepped = 0;
        for _ in 0..200 {
            let (adv, restart) = (r.below(2) == 1, r.below(17) == 0);
            s.advance.next = adv;
            s.restart.next = restart;
            settle(&mut s);
            let offered: Vec<u32> = want.iter().map(|g| g.clone().next_word()).collect();
            assert_eq!(words(&s), offered);
            tick(&mut s, |x| &mut x.clock);
            if restart {
                want = (0..3).map(|l| LaneRng::seeded(11, 2, l)).collect();
            } else if adv {
                want.iter_mut().for_each(|g| {
                    g.next_word();
                });
                stepped += 1;
            }
        }
        assert!(stepped > 50, "the test must step the lanes");
    }

    /// The Verilog steps and restarts as the model does (Icarus).
    #[test]
    fn verilog_matches_the_model() {
        let s = LaneStreams::new(3, 1, 2);
        let module = match s.hdl() {
            Verilog::Custom(body) => format!(
                "module lanes(input clock, input advance, input restart, output reg [31:0] word$0, output reg [31:0] word$1);\n{body}endmodule\n"
            ),
            _ => unreachable!(),
        };
        // advance on cycles 0-4, restart on 5, advance on 6-7
        let tb = format!(
            "{module}
module tb;
reg clock = 0; reg advance = 0; reg restart = 0;
wire [31:0] w0; wire [31:0] w1;
lanes d(.clock(clock), .advance(advance), .restart(restart), .word$0(w0), .word$1(w1));
integer i;
initial begin
  for (i = 0; i < 8; i = i + 1) begin
    advance = (i != 5); restart = (i == 5);
    #1 $display(\"%0d %0d\", $signed(w0), $signed(w1));
    clock = 1; #1 clock = 0;
  end
  $finish;
end
endmodule
"
        );
        let Some(out) = icarus_run(&tb, "lane_rng") else {
            return;
        };
        let rows = icarus_rows(&out, 2);
        assert_eq!(rows.len(), 8, "{out}");
        let mut g: Vec<LaneRng> = (0..2).map(|l| LaneRng::seeded(3, 1, l)).collect();
        for (i, row) in rows.iter().enumerate() {
            let want: Vec<i64> = g.iter().map(|x| x.clone().next_word() as i64).collect();
            let got: Vec<i64> = row.iter().map(|&x| x as u32 as i64).collect();
            assert_eq!(got, want, "cycle {i}");
            if i == 5 {
                g = (0..2).map(|l| LaneRng::seeded(3, 1, l)).collect();
            } else {
                g.iter_mut().for_each(|x| {
                    x.next_word();
                });
            }
        }
        yosys_check(&LaneStreams::new(3, 1, 2), "lane_rng");
    }
}
