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

/// Upload `n` training and `tests` test records, train `epochs` epochs on chip, infer over the
/// test records, and compare the state and the predictions with the reference model trained
/// on the same samples in the reference's order. The clock count of TRAIN_RESIDENT must stay
/// within 10 % of the projection `edgeflow bench` makes without simulating (on networks this
/// small the record walker's search, which the estimate leaves out, can outlast a record's
/// feed), for a memory that takes a read every `read_clocks`.
fn check_against_reference<B: HostLinkPorts>(
    dev: &mut Device<B>,
    (n, tests, epochs): (usize, usize, usize),
    seed: u64,
    read_clocks: u64,
    what: &str,
) {
    let spec = dev.spec.clone();
    let data = random_data(&spec, n + tests, seed);
    let train = data.select(&(0..n).collect::<Vec<_>>());
    let test = data.select(&(n..n + tests).collect::<Vec<_>>());
    let r = spec.record_words();
    dev.load(&State::initial(&spec));
    dev.upload(0, &pack(&spec, &train));
    dev.upload(n * r, &pack(&spec, &test));
    let got = dev.run(&rp::train_resident(n, epochs, 0), 4);
    assert_eq!(got[0], ACK_TRAIN_RESIDENT, "{what}");
    let (counted, estimate) = (
        rp::clocks(&got[1..]) as f64,
        rp::train_resident_clocks_estimate(&spec, n, epochs, read_clocks) as f64,
    );
    assert!(
        (estimate - counted).abs() <= 0.10 * counted,
        "{what}: TRAIN_RESIDENT counted {counted} clocks, the estimate is {estimate}"
    );
    let preds = dev.run(&rp::infer_resident(n * r, tests), tests + 4);
    assert_eq!(preds[tests], ACK_INFER_RESIDENT, "{what}");
    let mut reference = Reference::new(&spec);
    for e in 0..epochs {
        reference.train(&train.select(&epoch_order(n, e)));
    }
    assert_eq!(
        dev.read(),
        reference.state,
        "{what}: state after {epochs} epochs"
    );
    let want: Vec<u16> = reference.infer(&test).iter().map(|&p| p as u16).collect();
    assert_eq!(&preds[..tests], &want[..], "{what}: predictions");
}

#[test]
fn resident_training_matches_the_reference_on_random_specs() {
    for seed in 1..=6u64 {
        let spec = random_spec(seed);
        let mut dev = Device::new(&spec, 4096);
        let what = format!("spec seed {seed}");
        check_against_reference(&mut dev, (5 + seed as usize * 3, 4, 2), seed, 1, &what);
    }
}

/// A network whose first layer is wider than its block cycle (`N_0 = 64`, a block cycle of a
/// dozen clocks), with codes of `b` bits: the feeder hands it beats of several codes on its
/// input lanes. `b = 3` leaves codes across word boundaries and a short last beat.
fn wide_spec(input_bits: u32) -> Spec {
    let t = format!(
        "name='wide{input_bits}'\nlayers=[64,8,4]\nfan_out=[2,4]\nz=[16,4]\nactivation='sigmoid'\nlearning_rate_shift=3\ninput_bits={input_bits}\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type2'\ndither=false\nseed=1\n"
    );
    Spec::from_toml_str(&t, "wide").unwrap()
}

#[test]
fn wide_inputs_fed_on_lanes_match_the_reference() {
    for (k, bits) in [1u32, 2, 3, 5].into_iter().enumerate() {
        let spec = wide_spec(bits);
        let lanes = feed_lanes(&spec, 1);
        assert!(lanes > 1, "{bits}-bit codes: one lane");
        let mut dev = Device::new(&spec, 4096);
        assert_eq!(dev.uut.net.lanes(), lanes);
        let what = format!("{bits}-bit codes on {lanes} lanes");
        check_against_reference(&mut dev, (11, 3, 2), 40 + k as u64, 1, &what);
    }
}

/// With more than one lane a host word is not a beat: the host's own TRAIN is refused, its
/// words dropped, and the network is left as it was.
#[test]
fn a_streamed_train_is_refused_when_the_network_takes_beats() {
    let spec = wide_spec(1);
    let mut dev = Device::new(&spec, 4096);
    dev.load(&State::initial(&spec));
    let data = random_data(&spec, 2, 5);
    let mut words = vec![edgeflow_hdl::host_link::OP_TRAIN, 2];
    for s in 0..2 {
        words.extend(data.inputs[s * 64..(s + 1) * 64].iter().map(|&v| v as u16));
        words.push(data.labels[s] as u16);
    }
    assert_eq!(dev.run(&words, 1), vec![ERROR_REFUSED]);
    assert_eq!(dev.read(), State::initial(&spec), "nothing was trained");
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

/// The same runs over the SDRAM: every word of the set goes through the controller to the
/// simulated chip and back, and the chip sees no command that breaks its timing.
#[test]
fn resident_training_over_the_sdram_matches_the_reference() {
    let read = edgeflow_hdl::sdram_memory::read_clocks(28.125);
    let specs = (1..=4u64)
        .map(|seed| (random_spec(seed), seed))
        .chain([(wide_spec(1), 51), (wide_spec(3), 52)]);
    for (spec, seed) in specs {
        let mut dev = Device::over_sdram(&spec, 28.125);
        let what = format!("{} (seed {seed}) over the SDRAM", spec.name);
        check_against_reference(&mut dev, (40, 3, 2), seed, read, &what);
        assert!(!dev.chip_error(), "{what}: the SDRAM's timing was broken");
    }
}
