//! The stochastic-rounding streams of one junction: one xorshift32 generator per lane
//! (`edgeflow_core::rounding`). Each lane's `word` is its generator's next word, offered
//! combinationally; the clock edge after an update (`advance`) makes it the new state, and a
//! host write of the weights (`restart`) puts every lane back at its seed, as setting the
//! weights does in the reference model.

use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::rounding::LaneRng;
use rust_hdl::core::prelude::*;
use rust_hdl::widgets::dff_setup;
use rust_hdl::widgets::prelude::DFF;

/// One lane's xorshift32 generator (13, 17, 5): wiring and XOR gates, written for rust-hdl to
/// simulate and to emit as Verilog from the same `update`.
#[derive(LogicBlock)]
pub struct LaneGenerator {
    pub clock: Signal<In, Clock>,
    pub advance: Signal<In, Bit>,
    pub restart: Signal<In, Bit>,
    /// The state stepped once: the word this clock's update uses.
    pub word: Signal<Out, Bits<32>>,
    seed: Constant<Bits<32>>,
    /// The state XOR the seed: it starts at zero (as rust-hdl's flip-flops do), so the state
    /// starts at the seed, and a restart is a synchronous clear.
    offset: DFF<Bits<32>>,
    state: Signal<Local, Bits<32>>,
    /// The first and second xorshift steps of the state.
    shifted: Signal<Local, Bits<32>>,
    twice: Signal<Local, Bits<32>>,
    next: Signal<Local, Bits<32>>,
}

impl LaneGenerator {
    pub fn new(seed: u32) -> LaneGenerator {
        LaneGenerator {
            clock: Default::default(),
            advance: Default::default(),
            restart: Default::default(),
            word: Default::default(),
            seed: Constant::new((seed as u64).into()),
            offset: Default::default(),
            state: Default::default(),
            shifted: Default::default(),
            twice: Default::default(),
            next: Default::default(),
        }
    }
}

impl Logic for LaneGenerator {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, offset);
        self.state.next = self.offset.q.val() ^ self.seed.val();
        self.shifted.next = self.state.val() ^ (self.state.val() << 13);
        self.twice.next = self.shifted.val() ^ (self.shifted.val() >> 17);
        self.next.next = self.twice.val() ^ (self.twice.val() << 5);
        self.word.next = self.next.val();
        if self.restart.val() {
            self.offset.d.next = 0.into();
        } else if self.advance.val() {
            self.offset.d.next = self.next.val() ^ self.seed.val();
        }
    }
}

#[derive(LogicBlock)]
pub struct LaneStreams {
    pub clock: Signal<In, Clock>,
    /// This clock performs an update in every lane: step on the next edge.
    pub advance: Signal<In, Bit>,
    /// The host writes the weights: back to the seeds on the next edge (wins over `advance`).
    pub restart: Signal<In, Bit>,
    /// Per lane, the word this clock's update uses: the generator's state stepped once.
    pub word: Vec<Signal<Out, Bits<32>>>,
    pub lane: Vec<LaneGenerator>,
}

impl LaneStreams {
    /// The lanes of junction `junction` (global index) with `lanes` lanes, for a spec seed.
    pub fn new(seed: u64, junction: usize, lanes: usize) -> LaneStreams {
        LaneStreams {
            clock: Default::default(),
            advance: Default::default(),
            restart: Default::default(),
            word: crate::sigs(lanes),
            lane: (0..lanes)
                .map(|l| LaneGenerator::new(LaneRng::seeded(seed, junction, l).0))
                .collect(),
        }
    }

    /// Every lane's generator on the shared controls, its word out.
    fn wire<W: Wires<Self>>(lanes: usize, w: &mut W) {
        let (clock, advance, restart) = (at!(w, clock), at!(w, advance), at!(w, restart));
        for l in 0..lanes {
            w.set(to!(lane[l].clock), clock.clone());
            w.set(to!(lane[l].advance), advance.clone());
            w.set(to!(lane[l].restart), restart.clone());
            w.set(to!(word[l]), at!(w, lane[l].word));
        }
    }
}

impl Logic for LaneStreams {
    fn update(&mut self) {
        let lanes = self.lane.len();
        Self::wire(lanes, &mut Sim(self));
    }
    fn connect(&mut self) {
        let lanes = self.lane.len();
        Self::wire(lanes, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(self.lane.len(), &mut t);
        t.verilog("")
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
        let module = generate_verilog_unchecked(&LaneStreams::new(3, 1, 2));
        // advance on cycles 0-4, restart on 5, advance on 6-7
        let tb = format!(
            "{module}
module tb;
reg clock = 0; reg advance = 0; reg restart = 0;
wire [31:0] w0; wire [31:0] w1;
top d(.clock(clock), .advance(advance), .restart(restart), .word$0(w0), .word$1(w1));
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
