//! The junction's sequencer: which clocks of the block cycle do FF and BP/UP work, where a
//! right neuron starts and ends (`fi/z` clocks per neuron when `z < fi`), the row of right
//! neurons, the weight and bias RAM addresses of the next clock (prefetch, or the host's
//! address), and the rotating copy pointers of the left layer's memories:
//! FF reads activations copy `a_ff` (sample `t - j`), the previous junction writes
//! `a_ff + 1`, UP reads `a_ff + up_offset` (sample `t - (2L-1-j)`); σ′ is written to `s_w`
//! and read back by the previous junction's BP from `s_w + 1`.

use crate::below::Below;
use crate::params::JunctionParams;
use rust_hdl::core::prelude::*;
use rust_hdl::widgets::dff_setup;
use rust_hdl::widgets::prelude::DFF;

#[derive(LogicBlock)]
pub struct Sequencer {
    pub clock: Signal<In, Clock>,
    pub adv: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    /// `adv && !last` (the controller's `step`): when the prefetch addresses follow the pass.
    pub step: Signal<In, Bit>,
    pub k: Signal<In, Bits<16>>,
    pub restart: Signal<In, Bit>,
    pub ff_en: Signal<In, Bit>,
    pub bp_en: Signal<In, Bit>,
    pub h_sel: Signal<In, Bit>,
    pub h_addr: Signal<In, Bits<16>>,
    pub run_ff: Signal<Out, Bit>,
    pub run_bp: Signal<Out, Bit>,
    pub first: Signal<Out, Bit>,
    pub last_sub: Signal<Out, Bit>,
    pub row: Signal<Out, Bits<16>>,
    pub waddr: Signal<Out, Bits<16>>,
    pub baddr: Signal<Out, Bits<16>>,
    /// `waddr` / `baddr` is in range: always for the sequencer's own rows, checked for the
    /// host's (banked_ram.rs `rok`)
    pub w_ok: Signal<Out, Bit>,
    pub b_ok: Signal<Out, Bit>,
    pub a_ff: Signal<Out, Bits<16>>,
    pub a_w: Signal<Out, Bits<16>>,
    pub a_up: Signal<Out, Bits<16>>,
    pub s_w: Signal<Out, Bits<16>>,
    pub s_r: Signal<Out, Bits<16>>,
    /// The clock within the current right neuron (`0..clocks_per_neuron`).
    sub: DFF<Bits<16>>,
    /// The current row of right neurons.
    neuron_row: DFF<Bits<16>>,
    /// FF's activation copy, XOR its value at the start of a stream (so that the flip-flops
    /// start at zero as rust-hdl's do, and a restart is a synchronous clear). The copy the
    /// previous junction writes is the next.
    act_copy: DFF<Bits<16>>,
    /// The σ′ copy written now, XOR its start value; the previous junction's BP reads the
    /// next.
    sp_copy: DFF<Bits<16>>,
    /// The registers' widths as masks on every value they hold or derive: the bits above are
    /// constant zero, and yosys removes them (16-bit counters cost carry chains the iCE40
    /// UP5K cannot spare).
    sub_bits: Constant<Bits<16>>,
    row_bits: Constant<Bits<16>>,
    act_bits: Constant<Bits<16>>,
    sp_bits: Constant<Bits<16>>,
    last_sub_index: Constant<Bits<16>>,
    last_bias_row: Constant<Bits<16>>,
    bias_rows: Constant<Bits<16>>,
    last_act_copy: Constant<Bits<16>>,
    last_sp_copy: Constant<Bits<16>>,
    act_start: Constant<Bits<16>>,
    sp_start: Constant<Bits<16>>,
    /// UP's activation copy (`a_ff + up_offset` modulo the copies), XOR its start: a pointer
    /// of its own that rotates with `act_copy`, so no adder sits in front of UP's read
    /// address (the activation memory reads at the falling edge, in half a clock).
    up_copy: DFF<Bits<16>>,
    up_start: Constant<Bits<16>>,
    /// `k` is within the pass, `k + 1` too; the host's row is a weight row, a bias row.
    k_in_pass: Below,
    next_in_pass: Below,
    host_weight_row: Below,
    host_bias_row: Below,
    active: Signal<Local, Bit>,
    act: Signal<Local, Bits<16>>,
    sp: Signal<Local, Bits<16>>,
    act_next: Signal<Local, Bits<16>>,
    up: Signal<Local, Bits<16>>,
    up_next: Signal<Local, Bits<16>>,
    sp_next: Signal<Local, Bits<16>>,
    row_next: Signal<Local, Bits<16>>,
    row_kept: Signal<Local, Bits<16>>,
}

impl Sequencer {
    pub fn new(p: &JunctionParams) -> Sequencer {
        let (a0, s0) = (
            (-(p.ff_offset as i64)).rem_euclid(p.act_copies as i64) as u64,
            (1 - p.ff_offset as i64).rem_euclid(p.sp_copies as i64) as u64,
        );
        let bias_rows = p.bias_rows();
        let c = |v: u64| Constant::new(v.into());
        let up = (p.up_offset % p.act_copies) as u64;
        Sequencer {
            clock: Default::default(),
            adv: Default::default(),
            last: Default::default(),
            step: Default::default(),
            k: Default::default(),
            restart: Default::default(),
            ff_en: Default::default(),
            bp_en: Default::default(),
            h_sel: Default::default(),
            h_addr: Default::default(),
            run_ff: Default::default(),
            run_bp: Default::default(),
            first: Default::default(),
            last_sub: Default::default(),
            row: Default::default(),
            waddr: Default::default(),
            baddr: Default::default(),
            w_ok: Default::default(),
            b_ok: Default::default(),
            a_ff: Default::default(),
            a_w: Default::default(),
            a_up: Default::default(),
            s_w: Default::default(),
            s_r: Default::default(),
            sub: Default::default(),
            neuron_row: Default::default(),
            act_copy: Default::default(),
            sp_copy: Default::default(),
            sub_bits: c(crate::mask_for(p.clocks_per_neuron - 1)),
            row_bits: c(crate::mask_for(bias_rows)),
            act_bits: c(crate::mask_for(p.act_copies - 1)),
            sp_bits: c(crate::mask_for(p.sp_copies - 1)),
            last_sub_index: c(p.clocks_per_neuron as u64 - 1),
            last_bias_row: c(bias_rows as u64 - 1),
            bias_rows: c(bias_rows as u64),
            last_act_copy: c(p.act_copies as u64 - 1),
            last_sp_copy: c(p.sp_copies as u64 - 1),
            act_start: c(a0),
            sp_start: c(s0),
            up_copy: Default::default(),
            up_start: c((a0 + up) % p.act_copies as u64),
            k_in_pass: Below::new(p.clocks),
            next_in_pass: Below::new(p.clocks - 1),
            host_weight_row: Below::new(p.clocks),
            host_bias_row: Below::new(bias_rows),
            active: Default::default(),
            act: Default::default(),
            sp: Default::default(),
            act_next: Default::default(),
            up: Default::default(),
            up_next: Default::default(),
            sp_next: Default::default(),
            row_next: Default::default(),
            row_kept: Default::default(),
        }
    }
}

impl Logic for Sequencer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sub, neuron_row, act_copy, up_copy, sp_copy);
        self.k_in_pass.a.next = self.k.val();
        self.next_in_pass.a.next = self.k.val();
        self.host_weight_row.a.next = self.h_addr.val();
        self.host_bias_row.a.next = self.h_addr.val();
        self.active.next = self.adv.val() & self.k_in_pass.ok.val();
        self.run_ff.next = self.active.val() & self.ff_en.val();
        self.run_bp.next = self.active.val() & self.bp_en.val();
        self.first.next = self.sub.q.val() == 0;
        self.last_sub.next = self.sub.q.val() == self.last_sub_index.val();
        self.row.next = self.neuron_row.q.val();
        // the next neuron's row (wrapping past the last), or this one (0 past the bias rows)
        self.row_next.next = (self.neuron_row.q.val() + 1) & self.row_bits.val();
        if self.neuron_row.q.val() >= self.last_bias_row.val() {
            self.row_next.next = 0.into();
        }
        self.row_kept.next = self.neuron_row.q.val();
        if self.neuron_row.q.val() >= self.bias_rows.val() {
            self.row_kept.next = 0.into();
        }
        // past the end of the pass (a shorter junction waits for the block cycle to end)
        // the counters stand still, so the row never exceeds the bias rows
        if self.last.val() {
            self.sub.d.next = 0.into();
            self.neuron_row.d.next = 0.into();
        } else if self.active.val() {
            if self.sub.q.val() == self.last_sub_index.val() {
                self.sub.d.next = 0.into();
                self.neuron_row.d.next = (self.neuron_row.q.val() + 1) & self.row_bits.val();
            } else {
                self.sub.d.next = (self.sub.q.val() + 1) & self.sub_bits.val();
            }
        }
        // the sequencer's own rows are in range; only the host's row is checked
        self.w_ok.next = !self.h_sel.val() | self.host_weight_row.ok.val();
        self.b_ok.next = !self.h_sel.val() | self.host_bias_row.ok.val();
        if self.h_sel.val() {
            self.waddr.next = self.h_addr.val();
            self.baddr.next = self.h_addr.val();
        } else if self.step.val() {
            // past the end of the pass the RAMs read row 0
            self.waddr.next = 0.into();
            if self.next_in_pass.ok.val() {
                self.waddr.next = self.k.val() + 1;
            }
            self.baddr.next = self.row_kept.val();
            if (self.sub.q.val() == self.last_sub_index.val()) & self.k_in_pass.ok.val() {
                self.baddr.next = self.row_next.val();
            }
        } else {
            self.waddr.next = 0.into();
            self.baddr.next = 0.into();
        }
        // the copy pointers rotate once per block cycle, as a `CopyPointer` does; written
        // out here, the activation read address maps one LUT level shallower on the iCE40
        self.act.next = (self.act_copy.q.val() ^ self.act_start.val()) & self.act_bits.val();
        self.sp.next = (self.sp_copy.q.val() ^ self.sp_start.val()) & self.sp_bits.val();
        self.act_next.next = (self.act.val() + 1) & self.act_bits.val();
        if self.act.val() == self.last_act_copy.val() {
            self.act_next.next = 0.into();
        }
        self.sp_next.next = (self.sp.val() + 1) & self.sp_bits.val();
        if self.sp.val() == self.last_sp_copy.val() {
            self.sp_next.next = 0.into();
        }
        self.up.next = (self.up_copy.q.val() ^ self.up_start.val()) & self.act_bits.val();
        self.up_next.next = (self.up.val() + 1) & self.act_bits.val();
        if self.up.val() == self.last_act_copy.val() {
            self.up_next.next = 0.into();
        }
        self.a_up.next = self.up.val();
        self.a_ff.next = self.act.val();
        self.a_w.next = self.act_next.val();
        self.s_w.next = self.sp.val();
        self.s_r.next = self.sp_next.val();
        if self.restart.val() {
            self.act_copy.d.next = 0.into();
            self.up_copy.d.next = 0.into();
            self.sp_copy.d.next = 0.into();
        } else if self.last.val() {
            self.act_copy.d.next = self.act_next.val() ^ self.act_start.val();
            self.up_copy.d.next = self.up_next.val() ^ self.up_start.val();
            self.sp_copy.d.next = self.sp_next.val() ^ self.sp_start.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::b16;
    use crate::testing::{settle, tick, yosys_check};
    use edgeflow_core::Spec;

    fn params(j: usize) -> JunctionParams {
        let s = Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
        )
        .unwrap();
        JunctionParams::new(&s, j)
    }

    #[test]
    fn neurons_rows_prefetch_and_copy_pointers() {
        let p = params(1); // C = 8, 2 clocks per neuron, 3 activation copies, 4 σ′ copies
        let mut s = Sequencer::new(&p);
        s.connect_all();
        s.ff_en.next = true;
        for t in 0..4 {
            for k in 0..8 {
                s.adv.next = true;
                s.k.next = b16(k);
                s.last.next = k == 7;
                s.step.next = k != 7;
                settle(&mut s);
                assert!(s.run_ff.val() && !s.run_bp.val());
                assert_eq!(s.first.val(), k % 2 == 0);
                assert_eq!(s.last_sub.val(), k % 2 == 1);
                assert_eq!(s.row.val().index(), k as usize / 2);
                assert_eq!(
                    s.waddr.val().index(),
                    if k == 7 { 0 } else { k as usize + 1 }
                );
                assert_eq!(
                    s.baddr.val().index(),
                    if k == 7 { 0 } else { (k as usize + 1) / 2 }
                );
                // t - j mod 3 with j = 1; σ′ written for t - j + 1 mod 4
                assert!(s.w_ok.val() && s.b_ok.val(), "its own rows are in range");
                assert_eq!(s.a_ff.val().index(), (t + 2) % 3);
                assert_eq!(s.a_w.val().index(), (t + 3) % 3);
                assert_eq!(s.a_up.val().index(), (t + 1) % 3, "UP reads sample t - 2");
                assert_eq!(s.s_w.val().index(), t % 4);
                assert_eq!(
                    s.s_r.val().index(),
                    (t + 1) % 4,
                    "BP of junction 1 reads sample t - 3"
                );
                tick(&mut s, |s| &mut s.clock);
            }
        }
        // the host's row is checked: 8 weight rows, 4 bias rows
        s.h_sel.next = true;
        for (h, w_ok, b_ok) in [(3, true, true), (4, true, false), (8, false, false)] {
            s.h_addr.next = b16(h);
            settle(&mut s);
            assert_eq!((s.w_ok.val(), s.b_ok.val()), (w_ok, b_ok), "host row {h}");
        }
    }

    #[test]
    fn sequencer_verilog_is_clean() {
        yosys_check(&Sequencer::new(&params(0)), "sequencer");
    }
}
