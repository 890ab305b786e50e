//! A rotating copy pointer. A layer's memories hold several samples in flight as rotating
//! copies (copy_memory.rs); each port that uses them names its copy by a pointer that steps
//! to the next copy at the end of every block cycle and goes back to its start when the host
//! writes the weights, as the reference's schedule does.

use rust_hdl::core::prelude::*;
use rust_hdl::widgets::dff_setup;
use rust_hdl::widgets::prelude::DFF;

#[derive(LogicBlock)]
pub struct CopyPointer {
    pub clock: Signal<In, Clock>,
    /// Step to the next copy at this clock edge (the block cycle's last clock).
    pub rotate: Signal<In, Bit>,
    /// Back to the start copy at this clock edge (wins over `rotate`).
    pub restart: Signal<In, Bit>,
    pub copy: Signal<Out, Bits<16>>,
    /// The copy after `copy`, in rotation order.
    pub next_copy: Signal<Out, Bits<16>>,
    /// The copy XOR the start copy: the flip-flops start at zero, as rust-hdl's do, and a
    /// restart is a synchronous clear.
    from_start: DFF<Bits<16>>,
    start: Constant<Bits<16>>,
    last_copy: Constant<Bits<16>>,
    /// The bits that hold `0..copies`, as a mask on every value: the bits above are constant
    /// zero and yosys removes them (a 16-bit counter costs a carry chain).
    copy_bits: Constant<Bits<16>>,
}

impl CopyPointer {
    /// A pointer over `copies` copies that starts (and restarts) at `start`.
    pub fn new(copies: usize, start: usize) -> CopyPointer {
        assert!(start < copies && copies <= 1 << 15);
        CopyPointer {
            clock: Default::default(),
            rotate: Default::default(),
            restart: Default::default(),
            copy: Default::default(),
            next_copy: Default::default(),
            from_start: Default::default(),
            start: Constant::new((start as u64).into()),
            last_copy: Constant::new((copies as u64 - 1).into()),
            copy_bits: Constant::new(crate::mask_for(copies - 1).into()),
        }
    }
}

impl Logic for CopyPointer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, from_start);
        self.copy.next = (self.from_start.q.val() ^ self.start.val()) & self.copy_bits.val();
        self.next_copy.next = (self.copy.val() + 1) & self.copy_bits.val();
        if self.copy.val() == self.last_copy.val() {
            self.next_copy.next = 0.into();
        }
        if self.restart.val() {
            self.from_start.d.next = 0.into();
        } else if self.rotate.val() {
            self.from_start.d.next = self.next_copy.val() ^ self.start.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{icarus_rows, icarus_run, settle, tick, yosys_check};

    /// The model and its Verilog (Icarus) step through the copies on `rotate`, wrap after
    /// the last, and go back to the start on `restart`, against a plain count.
    #[test]
    fn the_pointer_rotates_and_restarts() {
        // (copies, start): a power of two, a count that is not, one copy, the last as start
        for (copies, start) in [(4usize, 1usize), (5, 3), (1, 0), (7, 6)] {
            let mut p = CopyPointer::new(copies, start);
            p.connect_all();
            let mut r = edgeflow_core::rng::SplitMix64::new(copies as u64);
            let steps: Vec<(bool, bool)> = (0..40)
                .map(|_| (r.below(3) != 0, r.below(11) == 0))
                .collect();
            let mut want = start;
            let mut expected = vec![];
            for &(rotate, restart) in &steps {
                p.rotate.next = rotate;
                p.restart.next = restart;
                settle(&mut p);
                assert_eq!(p.copy.val().index(), want, "{copies} copies from {start}");
                assert_eq!(p.next_copy.val().index(), (want + 1) % copies);
                expected.push(vec![want as i32, ((want + 1) % copies) as i32]);
                tick(&mut p, |p| &mut p.clock);
                if restart {
                    want = start;
                } else if rotate {
                    want = (want + 1) % copies;
                }
            }
            let stim: String = steps
                .iter()
                .map(|&(ro, re)| {
                    format!(
                        "  rotate = {}; restart = {}; #1 $display(\"%0d %0d\", copy, next_copy); clock = 1; #1 clock = 0;\n",
                        ro as u8, re as u8
                    )
                })
                .collect();
            let tb = format!(
                "{}\nmodule tb;\nreg clock = 0; reg rotate = 0; reg restart = 0;\nwire [15:0] copy; wire [15:0] next_copy;\ntop d(.clock(clock), .rotate(rotate), .restart(restart), .copy(copy), .next_copy(next_copy));\ninitial begin\n{stim}  $finish;\nend\nendmodule\n",
                generate_verilog_unchecked(&p)
            );
            let Some(out) = icarus_run(&tb, &format!("copy-pointer-{copies}")) else {
                return;
            };
            assert_eq!(
                icarus_rows(&out, 2),
                expected,
                "{copies} copies from {start}"
            );
        }
        yosys_check(&CopyPointer::new(5, 3), "copy_pointer");
    }
}
