//! The resident network next to its data memory, with the host-link ports: on chip (the
//! UP5K's SPRAM, block RAM) or in the board's SDRAM, whose pins then leave the block.

use crate::data_memory::{DataMemory, DataMemoryKind};
use crate::resident::ResidentNetwork;
use crate::sdram_memory::SdramMemory;
use edgeflow_core::Spec;
use rust_hdl::prelude::*;
use rust_hdl::widgets::sdram::SDRAMDriver;

/// Declare `$name`: the resident network and a memory of type `$mem` with the data memory's
/// port, wired together; `$pins`, if given, names the SDRAM pins passed up from the memory.
macro_rules! resident_with {
    ($name:ident, $mem:ty $(, $pins:ident)?) => {
        #[derive(LogicBlock)]
        pub struct $name {
            pub clock: Signal<In, Clock>,
            pub in_data: Signal<In, Bits<16>>,
            pub in_valid: Signal<In, Bit>,
            pub in_ready: Signal<Out, Bit>,
            pub out_data: Signal<Out, Bits<16>>,
            pub out_valid: Signal<Out, Bit>,
            pub out_ready: Signal<In, Bit>,
            $(pub $pins: SDRAMDriver<16>,)?
            pub net: ResidentNetwork,
            pub mem: $mem,
        }

        impl Logic for $name {
            #[hdl_gen]
            fn update(&mut self) {
                self.net.clock.next = self.clock.val();
                self.mem.clock.next = self.clock.val();
                self.net.in_data.next = self.in_data.val();
                self.net.in_valid.next = self.in_valid.val();
                self.in_ready.next = self.net.in_ready.val();
                self.out_data.next = self.net.out_data.val();
                self.out_valid.next = self.net.out_valid.val();
                self.net.out_ready.next = self.out_ready.val();
                self.mem.addr.next = self.net.mem_addr.val();
                self.mem.we.next = self.net.mem_we.val();
                self.mem.wdata.next = self.net.mem_wdata.val();
                self.mem.re.next = self.net.mem_re.val();
                self.net.mem_rdata.next = self.mem.rdata.val();
                self.net.mem_ready.next = self.mem.ready.val();
                self.net.mem_rvalid.next = self.mem.rvalid.val();
                $(
                    SDRAMDriver::<16>::link(&mut self.$pins, &mut self.mem.$pins);
                )?
            }
        }

        impl crate::host_stream::HostLinkPorts for $name {
            crate::host_link_ports_impl!();
        }
    };
}

resident_with!(ResidentOnChip, DataMemory);
resident_with!(ResidentSdram, SdramMemory, sdram);

impl ResidentOnChip {
    /// Over `words` words of on-chip memory of `kind`.
    pub fn new(spec: &Spec, kind: DataMemoryKind, words: usize) -> ResidentOnChip {
        ResidentOnChip {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            net: ResidentNetwork::new(spec, words, kind.read_clocks(1.0)),
            mem: DataMemory::new(kind, words),
        }
    }
}

impl ResidentSdram {
    /// Over the board's SDRAM, its timings counted at `clock_mhz`.
    pub fn new(spec: &Spec, clock_mhz: f64) -> ResidentSdram {
        ResidentSdram {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            sdram: Default::default(),
            net: ResidentNetwork::new(
                spec,
                crate::sdram_memory::SDRAM_WORDS,
                crate::sdram_memory::read_clocks(clock_mhz),
            ),
            mem: SdramMemory::new(clock_mhz),
        }
    }
}
