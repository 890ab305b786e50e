//! The junction's sequencer: which clocks of the block cycle do FF and BP/UP work, where a
//! right neuron starts and ends (`fi/z` clocks per neuron when `z < fi`), the row of right
//! neurons, the weight and bias RAM addresses of the next clock (prefetch, or the host's
//! address), and the rotating copy pointers of the left layer's memories:
//! FF reads activations copy `a_ff` (sample `t - j`), the previous junction writes
//! `a_ff + 1`, UP reads `a_ff + up_offset` (sample `t - (2L-1-j)`); σ′ is written to `s_w`
//! and read back by the previous junction's BP from `s_w + 1`.

use crate::fixed::b16;
use crate::params::JunctionParams;
use rust_hdl::core::prelude::*;

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
    _p: Box<JunctionParams>,
    _s: [usize; 4],
}

impl Sequencer {
    pub fn new(p: &JunctionParams) -> Sequencer {
        let mut s = Sequencer {
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
            _p: Box::new(p.clone()),
            _s: [0; 4],
        };
        let (a, w) = s.start_pointers();
        s._s[2] = a;
        s._s[3] = w;
        s
    }

    /// Copy pointers at the start of a stream (block cycle 0).
    pub fn start_pointers(&self) -> (usize, usize) {
        let p = &self._p;
        (
            (-(p.ff_offset as i64)).rem_euclid(p.act_copies as i64) as usize,
            (1 - p.ff_offset as i64).rem_euclid(p.sp_copies as i64) as usize,
        )
    }

    /// Sub-clock and row after this clock.
    fn next_sub_row(&self) -> (usize, usize) {
        let [sub, row, _, _] = self._s;
        if self.last.val() {
            (0, 0)
        } else if self.adv.val() && self.k.val().index() < self._p.clocks {
            // past the end of the pass (a shorter junction waits for the block cycle to end)
            // the counters stand still, so `row` never exceeds the bias rows
            if sub + 1 == self._p.clocks_per_neuron {
                (0, row + 1)
            } else {
                (sub + 1, row)
            }
        } else {
            (sub, row)
        }
    }
}

impl Logic for Sequencer {
    fn update(&mut self) {
        let (clocks, act_copies, sp_copies, up_offset, bias_rows) = (
            self._p.clocks,
            self._p.act_copies,
            self._p.sp_copies,
            self._p.up_offset,
            self._p.bias_rows(),
        );
        if self.clock.pos_edge() {
            let (sub, row) = self.next_sub_row();
            let (mut a_ff, mut s_w) = (self._s[2], self._s[3]);
            if self.restart.val() {
                (a_ff, s_w) = self.start_pointers();
            } else if self.last.val() {
                a_ff = (a_ff + 1) % act_copies;
                s_w = (s_w + 1) % sp_copies;
            }
            self._s = [sub, row, a_ff, s_w];
        }
        let [sub, row, a_ff, s_w] = self._s;
        let k = self.k.val().index();
        let active = self.adv.val() && k < clocks;
        self.run_ff.next = active && self.ff_en.val();
        self.run_bp.next = active && self.bp_en.val();
        self.first.next = sub == 0;
        self.last_sub.next = sub + 1 == self._p.clocks_per_neuron;
        self.row.next = b16(row as i32);
        let (_, nrow) = self.next_sub_row();
        let (wa, ba) = if self.h_sel.val() {
            let h = self.h_addr.val().index();
            (h, h)
        } else if self.step.val() {
            // past the end of the pass the RAMs read row 0
            (
                if k + 1 < clocks { k + 1 } else { 0 },
                if nrow < bias_rows { nrow } else { 0 },
            )
        } else {
            (0, 0)
        };
        self.waddr.next = b16(wa as i32);
        self.baddr.next = b16(ba as i32);
        let h = self.h_sel.val();
        self.w_ok.next = !h || wa < clocks;
        self.b_ok.next = !h || ba < bias_rows;
        self.a_ff.next = b16(a_ff as i32);
        self.a_w.next = b16(((a_ff + 1) % act_copies) as i32);
        self.a_up.next = b16(((a_ff + up_offset) % act_copies) as i32);
        self.s_w.next = b16(s_w as i32);
        self.s_r.next = b16(((s_w + 1) % sp_copies) as i32);
    }
    fn connect(&mut self) {
        self.run_ff.connect();
        self.run_bp.connect();
        self.first.connect();
        self.last_sub.connect();
        self.row.connect();
        self.waddr.connect();
        self.baddr.connect();
        self.w_ok.connect();
        self.b_ok.connect();
        self.a_ff.connect();
        self.a_w.connect();
        self.a_up.connect();
        self.s_w.connect();
        self.s_r.connect();
    }
    fn hdl(&self) -> Verilog {
        let p = &self._p;
        let (a0, s0) = self.start_pointers();
        let (c, cpn, br, ka, ks) = (
            p.clocks,
            p.clocks_per_neuron,
            p.bias_rows(),
            p.act_copies,
            p.sp_copies,
        );
        // Exact register widths: yosys keeps a register's declared width, and 16-bit
        // counters with 16-bit comparisons cost carry chains an iCE40 UP5K cannot spare.
        let bits = |max: usize| (usize::BITS - max.leading_zeros()).max(1);
        let (sw_, rw_, aw, pw) = (bits(cpn - 1), bits(br), bits(ka - 1), bits(ks - 1));
        let pad = |w: u32, e: &str| {
            if w >= 16 {
                e.to_string()
            } else {
                format!("{{{}'d0, {e}}}", 16 - w)
            }
        };
        Verilog::Custom(crate::below::with_guards(&format!(
            "
reg [{sm}:0] sub;
reg [{rm}:0] rw;
reg [{am}:0] aff;
reg [{pm}:0] sw;
reg [{sm}:0] nsub;
reg [{rm}:0] nrow;
reg [{am}:0] aw1;
reg [{am}:0] aup;
reg [{pm}:0] sr1;
reg [15:0] wnext;
reg [{rm}:0] rinc;
reg [{rm}:0] rkeep;
initial begin
    sub = {sw_}'d0; rw = {rw_}'d0; aff = {aw}'d{a0}; sw = {pw}'d{s0};
end
always @(*) begin
    nsub = sub;
    nrow = rw;
    if (last) begin
        nsub = {sw_}'d0;
        nrow = {rw_}'d0;
    end else if (adv && (k < 16'd{c})) begin
        if (sub == {sw_}'d{cm}) begin
            nsub = {sw_}'d0;
            nrow = rw + {rw_}'d1;
        end else nsub = sub + {sw_}'d1;
    end
    run_ff = adv && (k < 16'd{c}) && ff_en;
    run_bp = adv && (k < 16'd{c}) && bp_en;
    first = (sub == {sw_}'d0);
    last_sub = (sub == {sw_}'d{cm});
    row = {row16};
    // the prefetch addresses' arithmetic on registers only, the control signals last
    wnext = (k < 16'd{cm1}) ? k + 16'd1 : 16'd0;
    rinc = (rw < {rw_}'d{brm1}) ? rw + {rw_}'d1 : {rw_}'d0;
    rkeep = (rw < {rw_}'d{br}) ? rw : {rw_}'d0;
    // the sequencer's own rows are in range; only the host's row is checked
    w_ok = h_sel ? (h_addr < 16'd{c}) : 1'b1;
    b_ok = h_sel ? (h_addr < 16'd{br}) : 1'b1;
    if (h_sel) begin
        waddr = h_addr;
        baddr = h_addr;
    end else if (step) begin
        waddr = wnext;
        baddr = (sub == {sw_}'d{cm} && (k < 16'd{c})) ? {rinc16} : {rkeep16};
    end else begin
        waddr = 16'd0;
        baddr = 16'd0;
    end
    aw1 = (aff == {aw}'d{kam}) ? {aw}'d0 : aff + {aw}'d1;
    aup = (aff >= {aw}'d{upw}) ? aff - {aw}'d{upw} : aff + {aw}'d{uo};
    sr1 = (sw == {pw}'d{ksm}) ? {pw}'d0 : sw + {pw}'d1;
    a_ff = {aff16};
    a_w = {aw16};
    a_up = {aup16};
    s_w = {sw16};
    s_r = {sr16};
end
always @(posedge clock) begin
    sub <= nsub;
    rw <= nrow;
    if (restart) begin
        aff <= {aw}'d{a0};
        sw <= {pw}'d{s0};
    end else if (last) begin
        aff <= aw1;
        sw <= sr1;
    end
end
",
            sm = sw_ - 1,
            rm = rw_ - 1,
            am = aw - 1,
            pm = pw - 1,
            kam = ka - 1,
            ksm = ks - 1,
            upw = ka - p.up_offset % ka,
            row16 = pad(rw_, "rw"),
            rinc16 = pad(rw_, "rinc"),
            rkeep16 = pad(rw_, "rkeep"),
            cm1 = c - 1,
            brm1 = br - 1,
            aff16 = pad(aw, "aff"),
            aw16 = pad(aw, "aw1"),
            aup16 = pad(aw, "aup"),
            sw16 = pad(pw, "sw"),
            sr16 = pad(pw, "sr1"),
            cm = cpn - 1,
            uo = p.up_offset,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
