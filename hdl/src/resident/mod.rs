//! The network with its data set resident on the board (hdl/PROTOCOL.md, "Resident data"):
//! between the host link and the network sits a block that passes the network's commands
//! through and executes three of its own. UPLOAD writes checksummed frames of packed sample
//! records into the data memory; TRAIN_RESIDENT runs epochs on chip, each one TRAIN stream of
//! the network in the reference's sample order (record_walker.rs); INFER_RESIDENT streams
//! consecutive records and passes the predictions back. The feeder (feeder.rs) unpacks each
//! record into beats of `W` input codes, which reach the network on its `W` input lanes
//! (host_link/input_lanes.rs) as raw 16-bit words, one beat a clock.

pub mod feeder;
pub mod record_walker;
pub mod with_memory;

pub use feeder::{
    ResidentFeeder, ACK_INFER_RESIDENT, ACK_TRAIN_RESIDENT, ACK_UPLOAD, ERROR_FRAME, ERROR_REFUSED,
    OP_INFER_RESIDENT, OP_TRAIN_RESIDENT, OP_UPLOAD,
};

use crate::network::Network;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::Spec;
use rust_hdl::core::prelude::*;

/// Clocks a record costs the feeder besides its beats, with a memory that answers the next
/// clock: taking the record's address, the first word's read and arrival, and the label's
/// read, arrival and hand-over.
pub const RECORD_OVERHEAD_CLOCKS: usize = 6;

/// Input lanes of a resident network: how many `b`-bit codes the feeder hands the network per
/// clock. A beat never takes more than one 16-bit word's bits (`W·b ≤ 16`) nor more lanes
/// than the first junction has (`W ≤ z_1`). The fewest lanes with which a record's beats fit
/// the block cycle; but when one lane is not enough and the memory is the SDRAM
/// (`read_clocks > 1`), whose words come in bursts with gaps between them, the most, so
/// that a burst's words are taken as fast as they arrive.
pub fn feed_lanes(spec: &Spec, read_clocks: u64) -> usize {
    let n0 = spec.layers[0];
    let most = (16 / spec.input_code_bits() as usize).clamp(1, spec.z[0].max(1));
    let cycle = spec.block_cycle_clocks();
    let fewest = (1..=most)
        .find(|&w| n0.div_ceil(w) + RECORD_OVERHEAD_CLOCKS <= cycle)
        .unwrap_or(most);
    if read_clocks > 1 && fewest > 1 {
        most
    } else {
        fewest
    }
}

#[derive(LogicBlock)]
pub struct ResidentNetwork {
    pub clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// The data memory's port (memory/data_memory.rs): a request (`mem_we` or `mem_re`) at
    /// `mem_addr` is taken on a clock with `mem_ready`; read words come back in order, each
    /// on a clock with `mem_rvalid`, one clock later at the earliest.
    pub mem_addr: Signal<Out, Bits<20>>,
    pub mem_we: Signal<Out, Bit>,
    pub mem_wdata: Signal<Out, Bits<16>>,
    pub mem_re: Signal<Out, Bit>,
    pub mem_rdata: Signal<In, Bits<16>>,
    pub mem_ready: Signal<In, Bit>,
    pub mem_rvalid: Signal<In, Bit>,
    pub feeder: ResidentFeeder,
    pub net: Network,
    /// Input lanes `W`, bits of a code, and the left shift from a code to its raw word.
    _lanes: (usize, usize, usize),
}

impl ResidentNetwork {
    /// The resident network over a data memory of `words` 16-bit words that takes a read
    /// request every `read_clocks` clocks (memory/data_memory.rs).
    pub fn new(spec: &Spec, words: usize, read_clocks: u64) -> ResidentNetwork {
        let lanes = feed_lanes(spec, read_clocks);
        ResidentNetwork {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            mem_addr: Default::default(),
            mem_we: Default::default(),
            mem_wdata: Default::default(),
            mem_re: Default::default(),
            mem_rdata: Default::default(),
            mem_ready: Default::default(),
            mem_rvalid: Default::default(),
            feeder: ResidentFeeder::new(spec, lanes, words),
            net: Network::with_input_lanes(spec, lanes),
            _lanes: (
                lanes,
                spec.input_code_bits() as usize,
                spec.input_code_shift() as usize,
            ),
        }
    }

    /// Input lanes of the network inside.
    pub fn lanes(&self) -> usize {
        self._lanes.0
    }

    /// The connections: host and memory ports to the feeder, the feeder to the network; lane
    /// `k ≥ 1` of a beat is code `k` of the feeder's buffer, shifted to its raw word.
    fn wire<W: Wires<Self>>((lanes, bits, shift): (usize, usize, usize), w: &mut W) {
        w.set(to!(feeder.clock), at!(w, clock));
        w.set(to!(net.clock), at!(w, clock));
        w.set(to!(feeder.in_data), at!(w, in_data));
        w.set(to!(feeder.in_valid), at!(w, in_valid));
        w.set(to!(in_ready), at!(w, feeder.in_ready));
        w.set(to!(out_data), at!(w, feeder.out_data));
        w.set(to!(out_valid), at!(w, feeder.out_valid));
        w.set(to!(feeder.out_ready), at!(w, out_ready));
        w.set(to!(mem_addr), at!(w, feeder.mem_addr));
        w.set(to!(mem_we), at!(w, feeder.mem_we));
        w.set(to!(mem_wdata), at!(w, feeder.mem_wdata));
        w.set(to!(mem_re), at!(w, feeder.mem_re));
        w.set(to!(feeder.mem_rdata), at!(w, mem_rdata));
        w.set(to!(feeder.mem_ready), at!(w, mem_ready));
        w.set(to!(feeder.mem_rvalid), at!(w, mem_rvalid));
        w.set(to!(net.in_data), at!(w, feeder.net_in_data));
        w.set(to!(net.in_valid), at!(w, feeder.net_in_valid));
        w.set(to!(feeder.net_in_ready), at!(w, net.in_ready));
        w.set(to!(feeder.net_out_data), at!(w, net.out_data));
        w.set(to!(feeder.net_out_valid), at!(w, net.out_valid));
        w.set(to!(net.out_ready), at!(w, feeder.net_out_ready));
        for k in 1..lanes {
            let beat = at!(w, feeder.beat);
            let code = w.bits(&beat, k * bits, k * bits + bits - 1);
            let raw = w.times_plus16(&code, 1 << shift, 0);
            w.set(to!(net.in_lanes[k - 1]), raw);
        }
    }
}

impl Logic for ResidentNetwork {
    fn update(&mut self) {
        Self::wire(self._lanes, &mut Sim(self));
    }

    fn connect(&mut self) {
        Self::wire(self._lanes, &mut Connect(self));
    }

    fn hdl(&self) -> Verilog {
        let mut t = Text::default();
        Self::wire(self._lanes, &mut t);
        t.verilog("")
    }
}

impl crate::host_stream::HostLinkPorts for ResidentNetwork {
    crate::host_link_ports_impl!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_verilog_is_clean() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/tiny.toml");
        let spec = Spec::load(&path).unwrap();
        let mut r = crate::resident::with_memory::ResidentOnChip::new(
            &spec,
            crate::data_memory::DataMemoryKind::Array,
            4096,
        );
        r.connect_all();
        crate::testing::yosys_check(&r, "resident_tiny");
    }

    /// A first layer wider than the block cycle gets lanes on chip, and the most a word's
    /// bits allow from the SDRAM; with a yosys check of the lanes' wiring.
    #[test]
    fn wide_inputs_are_fed_on_lanes() {
        let t = "name='w'\nlayers=[64,8,4]\nfan_out=[2,4]\nz=[8,4]\nactivation='sigmoid'\nlearning_rate_shift=3\ninput_bits=1\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type2'\ndither=false\nseed=1\n";
        let spec = Spec::from_toml_str(t, "w").unwrap();
        let cycle = spec.block_cycle_clocks();
        let on_chip = feed_lanes(&spec, 1);
        assert!(on_chip > 1 && 64usize.div_ceil(on_chip) + RECORD_OVERHEAD_CLOCKS <= cycle);
        assert!(64usize.div_ceil(on_chip - 1) + RECORD_OVERHEAD_CLOCKS > cycle);
        assert_eq!(feed_lanes(&spec, 10), 8);
        let mut r = crate::resident::with_memory::ResidentOnChip::new(
            &spec,
            crate::data_memory::DataMemoryKind::Array,
            4096,
        );
        r.connect_all();
        assert_eq!(r.net.lanes(), on_chip);
        crate::testing::yosys_check(&r, "resident_lanes");
    }
}
