//! A board's SDRAM as the resident data memory, for data sets larger than its block RAM (the
//! ULX3S carries 32 MiB: 4 banks × 8,192 rows × 512 columns of 16 bits). The command side is
//! rust-hdl's single-word SDRAM controller; this block gives it the data memory's port
//! (memory/data_memory.rs): a request is taken while `ready`, and a read's word comes back
//! with `rvalid` some clocks later (activate, CAS latency, precharge: about ten clocks, more
//! when a refresh comes first). The resident network keeps one read in flight, so a word
//! every ten clocks or so feeds it at full speed while a word holds at least that many input
//! codes (16 codes of `input_bits = 1`).

use rust_hdl::prelude::*;
use rust_hdl::widgets::sdram::SDRAMDriver;

/// Row and column address bits of the SDRAM part (the ULX3S's 32 MiB IS42S16160).
pub const ROW_BITS: usize = 13;
pub const COLUMN_BITS: usize = 9;
/// Words the data memory addresses (its 20-bit word address): 2 MiB of the part.
pub const SDRAM_WORDS: usize = 1 << 20;
/// CAS latency in clocks: 3 is allowed at every clock the part runs.
pub const CAS_LATENCY: u32 = 3;

/// The part's timings in nanoseconds (ISSI IS42S16 -7 speed grade) at the design clock.
pub fn timings(clock_mhz: f64) -> MemoryTimings {
    MemoryTimings::is42s16320f7(clock_mhz * 1e6)
}

/// Clocks from one read request to the next the controller takes, when no refresh comes
/// between: the request and its latch (2), ACTIVE (1), the row's tRCD, READ and its hand-over
/// to recovery (2), the recovery's tWR and one clock, PRECHARGE's tRP and one clock, and the
/// idle clock that takes the next request. The word itself is back before then.
pub fn read_clocks(clock_mhz: f64) -> u64 {
    let t = timings(clock_mhz);
    (2 + 1 + t.t_rcd() + 2 + t.t_wr() + 1 + t.t_rp() + 1) as u64
}

#[derive(LogicBlock)]
pub struct SdramMemory {
    pub clock: Signal<In, Clock>,
    pub addr: Signal<In, Bits<20>>,
    pub we: Signal<In, Bit>,
    pub wdata: Signal<In, Bits<16>>,
    pub re: Signal<In, Bit>,
    pub rdata: Signal<Out, Bits<16>>,
    pub ready: Signal<Out, Bit>,
    pub rvalid: Signal<Out, Bit>,
    /// The SDRAM's pins (the data bus split into its two directions and an output enable).
    pub sdram: SDRAMDriver<16>,
    pub controller: SDRAMBaseController<ROW_BITS, COLUMN_BITS, 16, 16>,
}

impl SdramMemory {
    pub fn new(clock_mhz: f64) -> SdramMemory {
        SdramMemory {
            clock: Default::default(),
            addr: Default::default(),
            we: Default::default(),
            wdata: Default::default(),
            re: Default::default(),
            rdata: Default::default(),
            ready: Default::default(),
            rvalid: Default::default(),
            sdram: Default::default(),
            controller: SDRAMBaseController::new(
                CAS_LATENCY,
                timings(clock_mhz),
                OutputBuffer::Wired,
            ),
        }
    }
}

impl Logic for SdramMemory {
    #[hdl_gen]
    fn update(&mut self) {
        self.controller.clock.next = self.clock.val();
        self.controller.cmd_address.next = bit_cast::<32, 20>(self.addr.val());
        self.controller.data_in.next = self.wdata.val();
        self.controller.write_not_read.next = self.we.val();
        self.controller.cmd_strobe.next =
            (self.we.val() | self.re.val()) & !self.controller.busy.val();
        self.ready.next = !self.controller.busy.val();
        self.rdata.next = self.controller.data_out.val();
        self.rvalid.next = self.controller.data_valid.val();
        SDRAMDriver::<16>::link(&mut self.sdram, &mut self.controller.sdram);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_hdl::sim::sdr_sdram::chip::SDRAMSimulator;

    #[derive(LogicBlock)]
    struct WithChip {
        clock: Signal<In, Clock>,
        mem: SdramMemory,
        chip: SDRAMSimulator<ROW_BITS, COLUMN_BITS, { ROW_BITS + COLUMN_BITS }, 16>,
    }

    impl Logic for WithChip {
        #[hdl_gen]
        fn update(&mut self) {
            self.mem.clock.next = self.clock.val();
            SDRAMDriver::<16>::join(&mut self.mem.sdram, &mut self.chip.sdram);
        }
    }

    /// Words written then read back at scattered addresses come back in order and unchanged,
    /// a read request is taken every `read_clocks` clocks (no refresh between), and the chip
    /// model sees no command that breaks the part's timing.
    #[test]
    fn reads_return_what_was_written_at_the_stated_pace() {
        let mhz = 28.125;
        let mut uut = WithChip {
            clock: Default::default(),
            mem: SdramMemory::new(mhz),
            chip: SDRAMSimulator::new(timings(mhz)),
        };
        uut.mem.addr.connect();
        uut.mem.we.connect();
        uut.mem.wdata.connect();
        uut.mem.re.connect();
        uut.connect_all();
        let addrs: Vec<u64> = (0..40u64).map(|k| (k * 7919 + 13) % (1 << 20)).collect();
        let tick = |u: &mut WithChip| {
            u.clock.next = true.into();
            assert!(simulate(u, 1000));
            u.clock.next = false.into();
            assert!(simulate(u, 1000));
        };
        let mut starts = vec![];
        let mut got = vec![];
        let (mut wrote, mut asked, mut clock) = (0usize, 0usize, 0u64);
        while got.len() < addrs.len() {
            assert!(clock < 100_000, "no answer");
            let writing = wrote < addrs.len();
            let k = if writing {
                wrote
            } else {
                asked.min(addrs.len() - 1)
            };
            uut.mem.addr.next = addrs[k].into();
            uut.mem.wdata.next = ((addrs[k] * 31) as u16 as u64).into();
            uut.mem.we.next = writing;
            uut.mem.re.next = !writing && asked < addrs.len();
            assert!(simulate(&mut uut, 1000));
            if uut.mem.ready.val() {
                if writing {
                    wrote += 1;
                } else if asked < addrs.len() {
                    asked += 1;
                    starts.push(clock);
                }
            }
            if uut.mem.rvalid.val() {
                got.push(uut.mem.rdata.val().index() as u16);
            }
            tick(&mut uut);
            clock += 1;
            assert!(!uut.chip.test_error.val(), "timing broken at clock {clock}");
        }
        let want: Vec<u16> = addrs.iter().map(|a| (a * 31) as u16).collect();
        assert_eq!(got, want);
        let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(*gaps.iter().min().unwrap(), read_clocks(mhz), "{gaps:?}");
    }
}
