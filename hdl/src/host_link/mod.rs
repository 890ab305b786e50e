//! The host link: decodes the word protocol of hdl/PROTOCOL.md (valid/ready, 16-bit words),
//! walks every weight and bias in LOAD_STATE order to load and read them back, streams the
//! words of TRAIN/INFER samples into the first junction's input copies (and the labels into
//! the controller's label ring), queues the answers (acknowledgements, predictions, clock
//! counts, read-back values) and counts each command's clocks. The block cycles themselves
//! are the controller's (controller.rs).

pub mod host_stream;
pub mod input_lanes;
pub mod link_core;
pub mod resident_protocol;
pub mod uart_frames;
pub mod uart_link;
pub mod uart_rx;
pub mod uart_sim_port;
pub mod uart_tx;
pub mod word_stream;

use crate::controller::CtrlParams;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use link_core::{CoreSizes, LinkCore};
use rust_hdl::core::prelude::*;
use word_stream::{WordSink, WordSource};

pub const OP_LOAD: u16 = 0x0001;
pub const OP_TRAIN: u16 = 0x0002;
pub const OP_INFER: u16 = 0x0003;
pub const OP_READ: u16 = 0x0004;
pub const ACK_LOAD: u16 = 0xA001;
pub const ACK_TRAIN: u16 = 0xA002;
pub const ACK_INFER: u16 = 0xA003;
pub const ACK_READ: u16 = 0xA004;
pub const ERROR_WORD: u16 = 0xEEEE;

#[derive(LogicBlock)]
pub struct HostLink {
    pub clock: Signal<In, Clock>,
    /// The host's words: commands, weights, samples.
    pub host_in: WordSink,
    /// The answers: acknowledgements, predictions, clock counts, read-back values.
    pub host_out: WordSource,
    // to the controller
    /// A TRAIN/INFER stream starts (its sample count was just taken).
    pub go: Signal<Out, Bit>,
    pub go_train: Signal<Out, Bit>,
    pub go_samples: Signal<Out, Bits<16>>,
    /// `loaded > started`: the sample of the controller's next block cycle is loaded.
    pub sample_ready: Signal<Out, Bit>,
    pub lab_we: Signal<Out, Bit>,
    pub lab_copy: Signal<Out, Bits<16>>,
    pub out_busy: Signal<Out, Bit>,
    // from the controller
    /// Block cycles started (the link counts its own readiness with `starting` instead).
    pub started: Signal<In, Bits<32>>,
    /// The controller starts a block cycle at the end of this clock.
    pub starting: Signal<In, Bit>,
    pub done: Signal<In, Bit>,
    pub pred_valid: Signal<In, Bit>,
    pub pred: Signal<In, Bits<16>>,
    // to the junctions: weights and biases, input words
    pub h_sel: Vec<Signal<Out, Bit>>,
    pub h_bias: Signal<Out, Bit>,
    pub h_we: Signal<Out, Bit>,
    pub h_addr: Signal<Out, Bits<16>>,
    pub h_bank: Signal<Out, Bits<16>>,
    pub h_wdata: Signal<Out, Bits<16>>,
    pub h_rdata: Vec<Signal<In, Bits<16>>>,
    pub in_we: Signal<Out, Bit>,
    pub in_copy: Signal<Out, Bits<16>>,
    pub in_addr: Signal<Out, Bits<16>>,
    /// Write enables of input lanes 1 … W-1 (inputs `in_addr + 1 …`; lane 0 is `in_we`).
    pub in_lanes_we: Vec<Signal<Out, Bit>>,
    pub core: LinkCore,
    _p: std::sync::Arc<CtrlParams>,
}

impl HostLink {
    pub fn new(p: CtrlParams) -> HostLink {
        HostLink::with_lanes(p, 1)
    }

    /// A link whose TRAIN/INFER sample words arrive `lanes` per beat (PROTOCOL.md).
    pub fn with_lanes(p: CtrlParams, lanes: usize) -> HostLink {
        assert!(lanes >= 1);
        let l = p.junctions;
        let sizes = CoreSizes {
            inputs: p.inputs,
            lanes,
            copies: p.in_copies,
            junctions: l,
            max_banks: p
                .w_banks
                .iter()
                .chain(&p.b_banks)
                .copied()
                .max()
                .unwrap_or(1),
            max_rows: p.w_rows.iter().chain(&p.b_rows).copied().max().unwrap_or(1),
            start_ends: [p.w_banks[0] == 1, p.w_rows[0] == 1, l == 1],
            max_extra: p.ff.iter().chain(&p.bp).copied().max().unwrap_or(0),
        };
        HostLink {
            clock: Default::default(),
            host_in: Default::default(),
            host_out: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            sample_ready: Default::default(),
            lab_we: Default::default(),
            lab_copy: Default::default(),
            out_busy: Default::default(),
            started: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            pred_valid: Default::default(),
            pred: Default::default(),
            h_sel: crate::sigs(l),
            h_bias: Default::default(),
            h_we: Default::default(),
            h_addr: Default::default(),
            h_bank: Default::default(),
            h_wdata: Default::default(),
            h_rdata: crate::sigs(l),
            in_we: Default::default(),
            in_copy: Default::default(),
            in_addr: Default::default(),
            in_lanes_we: crate::sigs(lanes - 1),
            core: LinkCore::new(&sizes),
            _p: std::sync::Arc::new(p),
        }
    }

    fn wire<W: Wires<Self>>(p: &CtrlParams, lanes: usize, w: &mut W) {
        w.set(to!(core.clock), at!(w, clock));
        crate::wire_words!(w, [host_in], [core.host_in]);
        crate::wire_words!(w, [core.host_out], [host_out]);
        w.set(to!(core.starting), at!(w, starting));
        w.set(to!(core.done), at!(w, done));
        w.set(to!(core.pred_valid), at!(w, pred_valid));
        w.set(to!(core.pred), at!(w, pred));
        w.set(to!(out_busy), at!(w, core.out_busy));
        w.set(to!(go), at!(w, core.go));
        w.set(to!(go_train), at!(w, core.go_train));
        w.set(to!(go_samples), at!(w, host_in.data));
        w.set(to!(sample_ready), at!(w, core.sample_ready));
        w.set(to!(lab_we), at!(w, core.lab_we));
        w.set(to!(lab_copy), at!(w, core.in_copy));
        w.set(to!(h_bias), at!(w, core.bias));
        w.set(to!(h_we), at!(w, core.h_we));
        w.set(to!(h_addr), at!(w, core.row));
        w.set(to!(h_bank), at!(w, core.bank));
        w.set(to!(h_wdata), at!(w, host_in.data));
        w.set(to!(in_we), at!(w, core.in_we));
        w.set(to!(in_copy), at!(w, core.in_copy));
        w.set(to!(in_addr), at!(w, core.word));
        let l = p.junctions;
        let zero = w.lit(0, "16'd0");
        let mut rdata = vec![];
        let (mut last_bank, mut last_row) = (vec![], vec![]);
        let next_bias = at!(w, core.next_bias);
        let lit16 = |w: &W, v: usize| w.lit(v as u64, &format!("16'd{v}"));
        for j in 0..l {
            let sel = w.and(&at!(w, core.walking), &w.eq16(&at!(w, core.junction), j));
            w.set(to!(h_sel[j]), sel);
            rdata.push(at!(w, h_rdata[j]));
            let (bias_bank, weight_bank) = (lit16(w, p.b_banks[j] - 1), lit16(w, p.w_banks[j] - 1));
            last_bank.push(w.mux(&next_bias, &bias_bank, &weight_bank));
            let (bias_row, weight_row) = (lit16(w, p.b_rows[j] - 1), lit16(w, p.w_rows[j] - 1));
            last_row.push(w.mux(&next_bias, &bias_row, &weight_row));
        }
        w.case(to!(core.rdata), at!(w, core.junction), rdata, zero.clone());
        w.case(
            to!(core.next_last_bank),
            at!(w, core.next_junction),
            last_bank,
            zero.clone(),
        );
        w.case(
            to!(core.next_last_row),
            at!(w, core.next_junction),
            last_row,
            zero,
        );
        let inputs = lit16(w, p.inputs);
        for k in 1..lanes {
            let inside = w.gt(&inputs, &w.plus16(&at!(w, core.word), k));
            let we = w.and(&at!(w, core.stream_take), &inside);
            w.set(to!(in_lanes_we[k - 1]), we);
        }
    }
}

impl Logic for HostLink {
    fn update(&mut self) {
        let p = self._p.clone();
        Self::wire(&p, self.in_lanes_we.len() + 1, &mut Sim(self));
    }
    fn connect(&mut self) {
        let p = self._p.clone();
        Self::wire(&p, self.in_lanes_we.len() + 1, &mut Connect(self));
    }
    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(&self._p, self.in_lanes_we.len() + 1, &mut t);
        t.verilog("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, tick, yosys_check};
    use edgeflow_core::Spec;

    fn params() -> CtrlParams {
        CtrlParams::new(
            &Spec::load(
                &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml"),
            )
            .unwrap(),
        )
    }

    /// Drive words into the link alone; collect what it answers and the junction writes.
    fn run(
        h: &mut HostLink,
        words: &[u16],
        clocks: usize,
    ) -> (Vec<u16>, Vec<(usize, bool, usize, usize, u16)>) {
        let (mut out, mut writes, mut i) = (vec![], vec![], 0);
        h.host_out.ready.next = true;
        for _ in 0..clocks {
            h.host_in.valid.next = i < words.len();
            h.host_in.data.next = Bits::<16>::from(*words.get(i).unwrap_or(&0) as u64);
            settle(h);
            if h.host_out.valid.val() {
                out.push(h.host_out.data.val().to_u16());
            }
            if h.h_we.val() {
                let j = h.h_sel.iter().position(|s| s.val()).unwrap();
                writes.push((
                    j,
                    h.h_bias.val(),
                    h.h_bank.val().index(),
                    h.h_addr.val().index(),
                    h.h_wdata.val().to_u16(),
                ));
            }
            if h.host_in.valid.val() && h.host_in.ready.val() {
                i += 1;
            }
            tick(h, |h| &mut h.clock);
        }
        (out, writes)
    }

    #[test]
    fn load_walks_every_weight_and_bias_in_edge_order() {
        let p = params();
        let mut h = HostLink::new(p.clone());
        h.connect_all();
        let n: usize = (0..p.junctions)
            .map(|j| p.w_banks[j] * p.w_rows[j] + p.b_banks[j] * p.b_rows[j])
            .sum();
        let mut words = vec![OP_LOAD];
        words.extend((0..n).map(|v| v as u16 + 100));
        let (out, writes) = run(&mut h, &words, n + 5);
        assert_eq!(out, vec![ACK_LOAD]);
        assert_eq!(writes.len(), n);
        // junction 1 weights: edge e in bank e mod z, row e / z
        for e in 0..16 {
            assert_eq!(writes[e], (0, false, e % 4, e / 4, 100 + e as u16));
        }
        // tiny: weights 16 + 16, then biases of junction 1 (8, 2 per clock) and 2 (4)
        assert_eq!(writes[32], (0, true, 0, 0, 132));
        assert_eq!(writes[33], (0, true, 1, 0, 133));
        assert_eq!(writes[40], (1, true, 0, 0, 140));
    }

    #[test]
    fn unknown_opcodes_answer_eeee_and_junk_is_ignored() {
        let mut h = HostLink::new(params());
        h.connect_all();
        let (out, writes) = run(&mut h, &[0x0009, 0x1234, 0x0000, OP_LOAD, 7], 10);
        assert_eq!(out, vec![ERROR_WORD]);
        assert_eq!(
            writes.len(),
            1,
            "LOAD after the junk runs and takes its first word"
        );
    }

    #[test]
    fn three_lanes_write_a_sample_in_three_beats_then_the_label() {
        // tiny: 8 inputs; beats at inputs 0, 3, 6 (the last one short), then the label
        let mut h = HostLink::with_lanes(params(), 3);
        h.connect_all();
        h.host_out.ready.next = true;
        let beats: [[u16; 3]; 6] = [
            [OP_TRAIN, 0, 0],
            [1, 0, 0],
            [10, 11, 12],
            [13, 14, 15],
            [16, 17, 99],
            [5, 98, 97],
        ];
        let mut seen = vec![];
        for b in beats {
            h.host_in.valid.next = true;
            h.host_in.data.next = Bits::<16>::from(b[0] as u64);
            settle(&mut h);
            assert!(h.host_in.ready.val());
            let we: Vec<bool> = std::iter::once(h.in_we.val())
                .chain(h.in_lanes_we.iter().map(|x| x.val()))
                .collect();
            seen.push((we, h.in_addr.val().index(), h.lab_we.val()));
            tick(&mut h, |h| &mut h.clock);
        }
        let (n, y) = (false, true);
        assert_eq!(
            seen[2..],
            [
                (vec![y, y, y], 0, n),
                (vec![y, y, y], 3, n),
                (vec![y, y, n], 6, n),
                (vec![n, n, n], 9, y),
            ]
        );
        settle(&mut h);
        assert!(h.sample_ready.val(), "the label beat ends the sample");
    }

    #[test]
    fn host_link_verilog_is_clean() {
        yosys_check(&HostLink::new(params()), "host_link");
        yosys_check(&HostLink::with_lanes(params(), 3), "host_link_lanes");
    }
}
