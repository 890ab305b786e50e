//! The resident-data network (hdl/src/resident/mod.rs) in rust-hdl's simulation, driven through
//! its host link only: upload, epochs on chip, inference over resident records and the read
//! back, against the reference model trained on the same samples in the reference's order.

use edgeflow_core::order::epoch_order;
use edgeflow_core::resident::pack;
use edgeflow_core::{Spec, State};
use edgeflow_hdl::data_memory::DataMemoryKind;
use edgeflow_hdl::host_link::{ACK_LOAD, ACK_READ, OP_LOAD, OP_READ};
use edgeflow_hdl::host_stream::{run_words, HostLinkPorts};
use edgeflow_hdl::resident::*;
use edgeflow_hdl::resident_protocol as rp;
use edgeflow_hdl::sdram_memory::{timings, COLUMN_BITS, ROW_BITS};
use edgeflow_hdl::with_memory::{ResidentOnChip, ResidentSdram};
use edgeflow_reference::random::{random_data, random_spec};
use edgeflow_reference::Reference;
use rust_hdl::prelude::*;
use rust_hdl::sim::sdr_sdram::chip::SDRAMSimulator;
use rust_hdl::widgets::sdram::SDRAMDriver;

struct Device<B: HostLinkPorts> {
    uut: Box<B>,
    spec: Spec,
}

impl Device<ResidentOnChip> {
    fn new(spec: &Spec, words: usize) -> Self {
        let mut uut = Box::new(ResidentOnChip::new(spec, DataMemoryKind::Array, words));
        uut.connect_all();
        Device {
            uut,
            spec: spec.clone(),
        }
    }
}

/// The resident network over the SDRAM, the SDRAM being rust-hdl's simulated chip (which
/// flags any command that breaks the part's timing rules).
#[derive(LogicBlock)]
struct OverSdram {
    clock: Signal<In, Clock>,
    in_data: Signal<In, Bits<16>>,
    in_valid: Signal<In, Bit>,
    in_ready: Signal<Out, Bit>,
    out_data: Signal<Out, Bits<16>>,
    out_valid: Signal<Out, Bit>,
    out_ready: Signal<In, Bit>,
    dut: ResidentSdram,
    chip: SDRAMSimulator<ROW_BITS, COLUMN_BITS, 22, 16>,
}

impl Logic for OverSdram {
    #[hdl_gen]
    fn update(&mut self) {
        self.dut.clock.next = self.clock.val();
        self.dut.in_data.next = self.in_data.val();
        self.dut.in_valid.next = self.in_valid.val();
        self.in_ready.next = self.dut.in_ready.val();
        self.out_data.next = self.dut.out_data.val();
        self.out_valid.next = self.dut.out_valid.val();
        self.dut.out_ready.next = self.out_ready.val();
        SDRAMDriver::<16>::join(&mut self.dut.sdram, &mut self.chip.sdram);
    }
}

impl HostLinkPorts for OverSdram {
    edgeflow_hdl::host_link_ports_impl!();
}

impl Device<OverSdram> {
    fn over_sdram(spec: &Spec, mhz: f64) -> Self {
        let mut uut = Box::new(OverSdram {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            dut: ResidentSdram::new(spec, mhz),
            chip: SDRAMSimulator::new(timings(mhz)),
        });
        uut.connect_all();
        Device {
            uut,
            spec: spec.clone(),
        }
    }

    fn chip_error(&self) -> bool {
        self.uut.chip.test_error.val()
    }
}

impl<B: HostLinkPorts> Device<B> {
    fn run(&mut self, words: &[u16], expect: usize) -> Vec<u16> {
        run_words(self.uut.as_mut(), words, expect, 3, 20_000_000)
            .unwrap()
            .0
    }

    fn load(&mut self, s: &State) {
        let mut w = vec![OP_LOAD];
        w.extend(s.weights.iter().flatten().map(|&v| v as u16));
        w.extend(s.biases.iter().flatten().map(|&v| v as u16));
        assert_eq!(self.run(&w, 1), vec![ACK_LOAD]);
    }

    fn read(&mut self) -> State {
        let n = self.spec.state_words();
        let got = self.run(&[OP_READ], n + 1);
        assert_eq!(got[n], ACK_READ);
        let mut it = got.iter().map(|&w| w as i16 as i32);
        let sp = &self.spec;
        let weights = (0..sp.junctions())
            .map(|j| it.by_ref().take(sp.layers[j] * sp.fan_out[j]).collect())
            .collect();
        let biases = (0..sp.junctions())
            .map(|j| it.by_ref().take(sp.layers[j + 1]).collect())
            .collect();
        State { weights, biases }
    }

    fn upload(&mut self, addr: usize, words: &[u16]) {
        for f in rp::upload_frames(addr, words) {
            assert_eq!(self.run(&f, 3)[0], ACK_UPLOAD);
        }
    }
}

#[test]
fn resident_training_matches_the_reference_on_random_specs() {
    for seed in 1..=6u64 {
        let spec = random_spec(seed);
        let (n, tests, epochs) = (5 + seed as usize * 3, 4, 2);
        let data = random_data(&spec, n + tests, seed);
        let train = data.select(&(0..n).collect::<Vec<_>>());
        let test = data.select(&(n..n + tests).collect::<Vec<_>>());
        let r = spec.record_words();
        let mut dev = Device::new(&spec, 4096);
        dev.load(&State::initial(&spec));
        dev.upload(0, &pack(&spec, &train));
        dev.upload(n * r, &pack(&spec, &test));
        let got = dev.run(&rp::train_resident(n, epochs, 0), 4);
        assert_eq!(got[0], ACK_TRAIN_RESIDENT, "spec seed {seed}");
        // the projection `edgeflow bench` makes without simulating stays near the RTL's count
        // (within 10 %: on networks this small the record walker's search, which the
        // estimate leaves out, can outlast a record's feed)
        let (counted, estimate) = (
            rp::clocks(&got[1..]) as f64,
            rp::train_resident_clocks_estimate(&spec, n, epochs, 1) as f64,
        );
        assert!(
            (estimate - counted).abs() <= 0.10 * counted,
            "spec seed {seed}: TRAIN_RESIDENT counted {counted} clocks, the estimate is {estimate}"
        );
        let preds = dev.run(&rp::infer_resident(n * r, tests), tests + 4);
        assert_eq!(preds[tests], ACK_INFER_RESIDENT);

        let mut reference = Reference::new(&spec);
        for e in 0..epochs {
            reference.train(&train.select(&epoch_order(n, e)));
        }
        assert_eq!(
            dev.read(),
            reference.state,
            "spec seed {seed}: state after {epochs} epochs"
        );
        let want: Vec<u16> = reference.infer(&test).iter().map(|&p| p as u16).collect();
        assert_eq!(&preds[..tests], &want[..], "spec seed {seed}: predictions");
    }
}

#[test]
fn a_corrupt_frame_is_refused_and_nothing_trains_on_it() {
    let spec = random_spec(3);
    let data = random_data(&spec, 6, 3);
    let mut dev = Device::new(&spec, 1024);
    dev.load(&State::initial(&spec));
    let mut frame = rp::upload_frame(0, &pack(&spec, &data));
    frame[5] ^= 0x0100;
    assert_eq!(dev.run(&frame, 1), vec![ERROR_FRAME]);
    assert_eq!(
        dev.run(&rp::train_resident(6, 1, 0), 1),
        vec![ERROR_REFUSED]
    );
    assert_eq!(dev.read(), State::initial(&spec), "nothing was trained");
    // a frame beyond the memory is refused too; a new set from address 0 clears the mark
    let r = spec.record_words();
    assert_eq!(
        dev.run(&rp::upload_frame(1024 - r, &pack(&spec, &data)), 1),
        vec![ERROR_FRAME]
    );
    dev.upload(0, &pack(&spec, &data));
    assert_eq!(
        dev.run(&rp::train_resident(6, 1, 0), 4)[0],
        ACK_TRAIN_RESIDENT
    );
}

/// The same run over the SDRAM: every word of the set goes through the controller to the
/// simulated chip and back, and the chip sees no command that breaks its timing.
#[test]
fn resident_training_over_the_sdram_matches_the_reference() {
    for seed in 1..=4u64 {
        let spec = random_spec(seed);
        let (n, tests, epochs) = (9, 3, 2);
        let data = random_data(&spec, n + tests, seed);
        let train = data.select(&(0..n).collect::<Vec<_>>());
        let test = data.select(&(n..n + tests).collect::<Vec<_>>());
        let r = spec.record_words();
        let mut dev = Device::over_sdram(&spec, 28.125);
        dev.load(&State::initial(&spec));
        dev.upload(0, &pack(&spec, &train));
        dev.upload(n * r, &pack(&spec, &test));
        let got = dev.run(&rp::train_resident(n, epochs, 0), 4);
        assert_eq!(got[0], ACK_TRAIN_RESIDENT);
        // the projection, with the SDRAM's pace, against the count (as on chip, within 10 %)
        let read = edgeflow_hdl::sdram_memory::read_clocks(28.125);
        let (counted, estimate) = (
            rp::clocks(&got[1..]) as f64,
            rp::train_resident_clocks_estimate(&spec, n, epochs, read) as f64,
        );
        assert!(
            (estimate - counted).abs() <= 0.10 * counted,
            "spec seed {seed}: TRAIN_RESIDENT counted {counted} clocks over the SDRAM, the estimate is {estimate}"
        );
        let preds = dev.run(&rp::infer_resident(n * r, tests), tests + 4);
        assert_eq!(preds[tests], ACK_INFER_RESIDENT);
        assert!(
            !dev.chip_error(),
            "spec seed {seed}: the SDRAM's timing was broken"
        );
        let mut reference = Reference::new(&spec);
        for e in 0..epochs {
            reference.train(&train.select(&epoch_order(n, e)));
        }
        assert_eq!(dev.read(), reference.state, "spec seed {seed}: state");
        let want: Vec<u16> = reference.infer(&test).iter().map(|&p| p as u16).collect();
        assert_eq!(&preds[..tests], &want[..], "spec seed {seed}: predictions");
    }
}
