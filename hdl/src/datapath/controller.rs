//! The network controller: runs the block cycles of a TRAIN or INFER stream. It keeps the
//! block-cycle counter `t` (block cycles started) and the clock `k` within the block cycle,
//! derives each junction's FF and BP/UP enables from `t` and the stream length (FF of
//! junction `j` on sample `t - j`, BP/UP on sample `t - (2L-1-j)`, BP/UP off in infer mode),
//! the parity of the delta buffers, and the label delay line: a ring of labels indexed like
//! the input copies, read for the sample the last junction's FF is on (`t - (L-1)`).
//!
//! A block cycle starts as soon as the previous one has ended and its sample is loaded, so
//! in the steady state a sample takes exactly `T = C + 2` clocks (`C` the longest pass plus
//! the FF pipeline's latency, params.rs; or the `N_0 + 1`
//! clocks its words take on the link, when that is longer). The host link (host_link.rs)
//! takes input for sample `m` once block cycle `m - 3` is done, so the host streams up to
//! two samples ahead. In infer mode the block cycle that produces a prediction does not end
//! while the previous prediction still waits in the host link's output register.

use crate::control_core::{BlockCycles, LabelSlot};
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;

/// What the controller and host link need to know about the network.
#[derive(Clone, Debug)]
pub struct CtrlParams {
    pub junctions: usize,
    pub inputs: usize,
    /// Neurons of the network's output layer (a label names one of them).
    pub outputs: usize,
    /// Block-cycle length in clocks.
    pub t: usize,
    /// Input copies (`2L + 2`).
    pub in_copies: usize,
    /// Per junction: weight banks (z) and rows (C_j), bias banks (groups) and rows.
    pub w_banks: Vec<usize>,
    pub w_rows: Vec<usize>,
    pub b_banks: Vec<usize>,
    pub b_rows: Vec<usize>,
    /// Block cycle of each junction's FF and BP/UP of sample 0: `j` and `2L - 1 - j` on one
    /// board; a stage of a chain (stage.rs) has the chain's offsets of its junctions.
    pub ff: Vec<usize>,
    pub bp: Vec<usize>,
    /// Every block cycle waits for `sample_ready` (a stage waits for its links), not only those
    /// that take a new sample.
    pub wait_all: bool,
    /// The label the last junction's FF compares with is registered: its read from the
    /// label ring (one slot per input copy, many in a stage of a long chain) then does not
    /// share a clock with the output delta. The label of a block cycle is first used after
    /// the pipeline's fill, so a clock's delay costs nothing.
    pub registered_label: bool,
}

impl CtrlParams {
    pub fn new(spec: &Spec) -> CtrlParams {
        let l = spec.junctions();
        let ps: Vec<_> = (0..l)
            .map(|j| crate::params::JunctionParams::new(spec, j))
            .collect();
        CtrlParams {
            junctions: l,
            inputs: spec.layers[0],
            outputs: *spec.layers.last().unwrap(),
            t: spec.block_cycle_clocks(),
            in_copies: 2 * l + 2,
            w_banks: ps.iter().map(|p| p.z).collect(),
            w_rows: ps.iter().map(|p| p.clocks).collect(),
            b_banks: ps.iter().map(|p| p.groups).collect(),
            b_rows: ps.iter().map(|p| p.bias_rows()).collect(),
            ff: (0..l).collect(),
            bp: (0..l).map(|j| 2 * l - 1 - j).collect(),
            wait_all: false,
            registered_label: false,
        }
    }

    /// `B_j`: the block cycle offset of BP/UP of junction `j` (0-based), `2L - 1 - j` on one
    /// board.
    pub fn bp_offset(&self, j: usize) -> usize {
        self.bp[j]
    }

    /// Label ring position at block cycle 0: sample `-F_last` (`-(L-1)` on one board).
    fn label_start(&self) -> usize {
        (-(self.ff[self.junctions - 1] as i64)).rem_euclid(self.in_copies as i64) as usize
    }
}

#[derive(LogicBlock)]
pub struct Controller {
    pub clock: Signal<In, Clock>,
    // from the host link
    pub go: Signal<In, Bit>,
    pub go_train: Signal<In, Bit>,
    pub go_samples: Signal<In, Bits<16>>,
    /// The sample of the block cycle that would start next is loaded (`loaded > started`):
    /// the host link keeps it as a flag, so a start compares no counters.
    pub sample_ready: Signal<In, Bit>,
    pub lab_we: Signal<In, Bit>,
    pub lab_copy: Signal<In, Bits<16>>,
    pub lab_data: Signal<In, Bits<16>>,
    pub out_busy: Signal<In, Bit>,
    // to the host link
    pub started: Signal<Out, Bits<32>>,
    /// A block cycle starts at the end of this clock (`started` counts it from the next).
    pub starting: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub pred_valid: Signal<Out, Bit>,
    // to every junction
    pub adv: Signal<Out, Bit>,
    pub k: Signal<Out, Bits<16>>,
    pub last: Signal<Out, Bit>,
    /// `adv && !last`, without the host link's `out_busy` in front (the output stall needs
    /// the block cycle's last clock): the junctions' prefetch addresses use it.
    pub step: Signal<Out, Bit>,
    pub parity: Signal<Out, Bit>,
    pub label: Signal<Out, Bits<16>>,
    pub ff_en: Vec<Signal<Out, Bit>>,
    pub bp_en: Vec<Signal<Out, Bit>>,
    pub cycles: BlockCycles,
    /// The label ring: one slot per input copy, read for the sample the last junction's FF
    /// is on.
    pub labels: Vec<LabelSlot>,
    /// The registered label (`CtrlParams::registered_label`), or none.
    label_reg: Vec<rust_hdl::widgets::prelude::DFF<Bits<16>>>,
    _p: std::rc::Rc<CtrlParams>,
}

impl Controller {
    pub fn new(p: CtrlParams) -> Controller {
        let l = p.junctions;
        let last_offset = p.ff.iter().chain(p.bp.iter()).copied().max().unwrap_or(0);
        Controller {
            clock: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            sample_ready: Default::default(),
            lab_we: Default::default(),
            lab_copy: Default::default(),
            lab_data: Default::default(),
            out_busy: Default::default(),
            started: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            pred_valid: Default::default(),
            adv: Default::default(),
            k: Default::default(),
            last: Default::default(),
            step: Default::default(),
            parity: Default::default(),
            label: Default::default(),
            ff_en: crate::sigs(l),
            bp_en: crate::sigs(l),
            cycles: BlockCycles::new(
                p.t,
                p.in_copies,
                p.label_start(),
                (p.bp[0], p.ff[l - 1]),
                last_offset,
                p.wait_all,
                p.outputs,
            ),
            labels: (0..p.in_copies).map(LabelSlot::new).collect(),
            label_reg: (0..usize::from(p.registered_label))
                .map(|_| Default::default())
                .collect(),
            _p: std::rc::Rc::new(p),
        }
    }

    pub fn params(&self) -> &CtrlParams {
        &self._p
    }

    /// The controller's connections (`ff`, `bp`: each junction's block-cycle offsets).
    fn wire<W: Wires<Self>>(
        ff: &[usize],
        bp: &[usize],
        copies: usize,
        registered_label: bool,
        w: &mut W,
    ) {
        let l = ff.len();
        let clock = at!(w, clock);
        w.set(to!(cycles.clock), clock.clone());
        w.set(to!(cycles.go), at!(w, go));
        w.set(to!(cycles.go_train), at!(w, go_train));
        w.set(to!(cycles.go_samples), at!(w, go_samples));
        w.set(to!(cycles.sample_ready), at!(w, sample_ready));
        w.set(to!(cycles.out_busy), at!(w, out_busy));
        // FF of junction j is on the sample of F_j block cycles back, BP/UP on that of B_j
        let history = at!(w, cycles.history);
        let ff_en: Vec<_> = ff.iter().map(|&f| w.bits(&history, f, f)).collect();
        let train = at!(w, cycles.train);
        w.set(to!(cycles.ff_last), ff_en[l - 1].clone());
        w.set(to!(cycles.lab_we), at!(w, lab_we));
        w.set(to!(cycles.lab_copy), at!(w, lab_copy));
        w.set(to!(cycles.lab_data), at!(w, lab_data));
        w.set(to!(started), at!(w, cycles.started));
        w.set(to!(starting), at!(w, cycles.starting));
        w.set(to!(done), at!(w, cycles.done));
        w.set(to!(pred_valid), at!(w, cycles.pred_valid));
        w.set(to!(adv), at!(w, cycles.adv));
        w.set(to!(k), at!(w, cycles.k));
        w.set(to!(last), at!(w, cycles.last));
        w.set(to!(step), at!(w, cycles.step));
        w.set(to!(parity), at!(w, cycles.parity));
        for (j, ff_on) in ff_en.into_iter().enumerate() {
            w.set(to!(ff_en[j]), ff_on);
            let bp_on = w.bits(&history, bp[j], bp[j]);
            w.set(to!(bp_en[j]), w.and(&train, &bp_on));
        }
        let mut arms = vec![];
        for c in 0..copies {
            w.set(to!(labels[c].clock), clock.clone());
            w.set(to!(labels[c].write), at!(w, cycles.lab_write));
            w.set(to!(labels[c].copy), at!(w, cycles.lab_write_copy));
            w.set(to!(labels[c].data), at!(w, cycles.lab_write_data));
            arms.push(at!(w, labels[c].label));
        }
        let zero = w.lit(0, "16'd0");
        if registered_label {
            w.set(to!(label_reg[0].clock), clock);
            w.case(to!(label_reg[0].d), at!(w, cycles.lab_ptr), arms, zero);
            w.set(to!(label), at!(w, label_reg[0].q));
        } else {
            w.case(to!(label), at!(w, cycles.lab_ptr), arms, zero);
        }
    }
}

impl Logic for Controller {
    fn update(&mut self) {
        let (p, copies) = (self._p.clone(), self.labels.len());
        Self::wire(&p.ff, &p.bp, copies, p.registered_label, &mut Sim(self));
    }
    fn connect(&mut self) {
        let (p, copies) = (self._p.clone(), self.labels.len());
        Self::wire(&p.ff, &p.bp, copies, p.registered_label, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        let p = &self._p;
        Self::wire(&p.ff, &p.bp, self.labels.len(), p.registered_label, &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::b16;
    use crate::testing::{settle, tick, yosys_check};

    fn params() -> CtrlParams {
        CtrlParams::new(
            &Spec::load(
                &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
            )
            .unwrap(),
        )
    }

    #[test]
    fn block_cycles_enables_and_label_delay() {
        // tiny: L = 2, T = 8. Train 3 samples, all loaded up front: 3 + 3 block cycles.
        let p = params();
        let mut c = Controller::new(p.clone());
        c.connect_all();
        for (n, lab) in [3u16, 1, 2].iter().enumerate() {
            c.lab_we.next = true;
            c.lab_copy.next = b16(n as i32);
            c.lab_data.next = Bits::<16>::from(*lab as u64);
            tick(&mut c, |c| &mut c.clock);
        }
        c.lab_we.next = false;
        c.go.next = true;
        c.go_train.next = true;
        c.go_samples.next = b16(3);
        tick(&mut c, |c| &mut c.clock);
        c.go.next = false;
        let mut cycles = vec![];
        for _ in 0..80 {
            // all three samples loaded up front
            c.sample_ready.next = c.started.val().index() < 3;
            settle(&mut c);
            if c.adv.val() && c.k.val().index() == 0 {
                let ff: Vec<bool> = c.ff_en.iter().map(|x| x.val()).collect();
                let bp: Vec<bool> = c.bp_en.iter().map(|x| x.val()).collect();
                cycles.push((ff, bp, c.label.val().to_u16(), c.parity.val()));
            }
            if c.done.val() {
                break;
            }
            tick(&mut c, |c| &mut c.clock);
        }
        assert_eq!(cycles.len(), 3 + 3);
        // FF_j on t - j, BP_j on t - (3 - j); the last junction's FF sees label of sample t - 1
        let want_ff = |t: usize, j: usize| t >= j && t - j < 3;
        let want_bp = |t: usize, j: usize| t >= 3 - j && t - (3 - j) < 3;
        for (t, (ff, bp, label, parity)) in cycles.iter().enumerate() {
            for j in 0..2 {
                assert_eq!(ff[j], want_ff(t, j), "t={t} j={j}");
                assert_eq!(bp[j], want_bp(t, j), "t={t} j={j}");
            }
            if (1..=3).contains(&t) {
                assert_eq!(*label, [3, 1, 2][t - 1]);
            }
            assert_eq!(*parity, t % 2 == 1);
        }
        assert!(c.done.val());
    }

    #[test]
    fn controller_verilog_is_clean() {
        yosys_check(&Controller::new(params()), "controller");
    }
}
