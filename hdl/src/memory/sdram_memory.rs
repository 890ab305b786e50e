//! A board's SDRAM as the resident data memory, for data sets larger than its block RAM (the
//! ULX3S carries 32 MiB: 4 banks × 8,192 rows × 512 columns of 16 bits). The command side is
//! rust-hdl's burst controller, which opens a row, reads or writes `LINE_WORDS` consecutive
//! words one a clock and closes the row again; this block puts a one-line write-back buffer
//! in front of it and gives it the data memory's port (memory/data_memory.rs). A request in
//! the buffered line is taken at once and a read's word comes back the next clock, as on
//! chip. A request outside it first writes the line back if it was written, then reads the
//! line the request falls in (a fill); a read waits only until its own word of the fill has
//! arrived. A record streamed word by word thus costs one fill per line it touches, each
//! fill's words arriving one a clock.

use rust_hdl::prelude::*;
use rust_hdl::widgets::sdram::SDRAMDriver;

/// Row and column address bits of the SDRAM part (the ULX3S's 32 MiB IS42S16160).
pub const ROW_BITS: usize = 13;
pub const COLUMN_BITS: usize = 9;
/// Words the data memory addresses (its 20-bit word address): 2 MiB of the part.
pub const SDRAM_WORDS: usize = 1 << 20;
/// CAS latency in clocks: 3 is allowed at every clock the part runs.
pub const CAS_LATENCY: u32 = 3;
/// Words of a line: one burst, never across a row (512 columns hold 16 lines), the longest
/// rust-hdl's controller makes. Each fill pays the row's opening and closing once, so longer
/// lines stream faster: a 65-word record touches 3 lines of 32 (5 of 16). The controller
/// refreshes only between bursts, once 70 % of the part's refresh interval has passed, so a
/// burst must fit in the other 30 % ([`min_clock_mhz`]).
pub const LINE_WORDS: usize = 32;
const LINE_BITS: usize = 5;
const TAG_BITS: usize = 20 - LINE_BITS;

/// The part's timings in nanoseconds at the design clock: rust-hdl's ISSI IS42S16 -7 speed
/// grade, with the refresh interval of the IS42S16160's commercial and industrial grades
/// (8,192 refreshes every 64 ms; the preset assumes 4,096 every 16 ms).
pub fn timings(clock_mhz: f64) -> MemoryTimings {
    MemoryTimings {
        t_refresh_max_interval_nanoseconds: 64e6 / 8192.0,
        ..MemoryTimings::is42s16320f7(clock_mhz * 1e6)
    }
}

/// Clocks from one fill's request to the next's when no refresh comes between: the
/// request's latch and the controller's idle clock (2), ACTIVE and the row's tRCD (2 + tRCD),
/// one READ a clock (`LINE_WORDS`), the hand-over to recovery (1), tWR and PRECHARGE's tRP
/// (one clock each more), and this block's return to idle (1). A fill's first word arrives
/// CAS latency and two registers after its READ.
pub fn fill_clocks(clock_mhz: f64) -> u64 {
    let t = timings(clock_mhz);
    (2 + 2 + t.t_rcd() + LINE_WORDS as u16 + 1 + t.t_wr() + 1 + t.t_rp() + 1 + 1) as u64
}

/// The clocks a fill takes on average, the refreshes' share included: the pace of the
/// SDRAM as the data memory (`DataMemoryKind::read_clocks`).
pub fn read_clocks(clock_mhz: f64) -> u64 {
    (fill_clocks(clock_mhz) as f64 * (1.0 + refresh_share(clock_mhz))).round() as u64
}

/// The share of clocks the refreshes take from the fills: once 70 % of the part's refresh
/// interval has passed, the controller refreshes at its next idle clock, twice in a row (its
/// request flag is still set on the clock that clears it), each refresh tRFC and two clocks.
pub fn refresh_share(clock_mhz: f64) -> f64 {
    let t = timings(clock_mhz);
    let every = (t.t_refresh_max() as u64 * 7 / 10) as f64;
    2.0 * (t.t_rfc() as f64 + 2.0) / every
}

/// Whether a fill fits in the 30 % of the refresh interval the controller leaves it.
fn fill_fits(clock_mhz: f64) -> bool {
    let t = timings(clock_mhz).t_refresh_max() as u64;
    fill_clocks(clock_mhz) + 2 <= t - t * 7 / 10
}

/// The slowest design clock at which a fill fits between refreshes (to 0.1 MHz).
pub fn min_clock_mhz() -> f64 {
    (100..2000)
        .map(|k| k as f64 / 10.0)
        .find(|&m| (0..50).all(|d| fill_fits(m + d as f64)))
        .unwrap_or(200.0)
}

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum LineState {
    Idle,
    /// Writing the buffered line back: the command, then its words on the controller's
    /// strobes.
    FlushIssue,
    Flushing,
    /// Reading the requested line into the buffer.
    FillIssue,
    Filling,
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
    pub controller: SDRAMBurstController<ROW_BITS, COLUMN_BITS, 32, 16>,
    /// The buffered line's words.
    line: RAM<Bits<16>, LINE_BITS>,
    state: DFF<LineState>,
    /// Which line the buffer holds (the word address's high bits), whether it holds one, and
    /// whether it was written since its fill.
    tag: DFF<Bits<TAG_BITS>>,
    held: DFF<Bit>,
    /// The line of the request that missed, filled next.
    miss: DFF<Bits<TAG_BITS>>,
    dirty: DFF<Bit>,
    /// Words of the current fill in the buffer; words of a write-back handed to the controller.
    filled: DFF<Bits<6>>,
    flushed: DFF<Bits<5>>,
    answer: DFF<Bit>,
    hit: Signal<Local, Bit>,
}

impl SdramMemory {
    /// The memory at a design clock of `clock_mhz`, at which a fill must fit between the
    /// controller's refreshes ([`min_clock_mhz`]).
    pub fn new(clock_mhz: f64) -> SdramMemory {
        assert_eq!(1 << LINE_BITS, LINE_WORDS);
        assert!(
            clock_mhz >= min_clock_mhz(),
            "the SDRAM's line fills need a clock of at least {:.1} MHz, not {clock_mhz}",
            min_clock_mhz()
        );
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
            controller: SDRAMBurstController::new(
                CAS_LATENCY,
                timings(clock_mhz),
                OutputBuffer::Wired,
            ),
            line: Default::default(),
            state: Default::default(),
            tag: Default::default(),
            held: Default::default(),
            miss: Default::default(),
            dirty: Default::default(),
            filled: Default::default(),
            flushed: Default::default(),
            answer: Default::default(),
            hit: Default::default(),
        }
    }
}

impl Logic for SdramMemory {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, tag, held, miss, dirty, filled, flushed, answer);
        self.controller.clock.next = self.clock.val();
        self.line.read_clock.next = self.clock.val();
        self.line.write_clock.next = self.clock.val();
        self.sdram.clk.next = self.controller.sdram.clk.val();
        self.sdram.we_not.next = self.controller.sdram.we_not.val();
        self.sdram.cas_not.next = self.controller.sdram.cas_not.val();
        self.sdram.ras_not.next = self.controller.sdram.ras_not.val();
        self.sdram.cs_not.next = self.controller.sdram.cs_not.val();
        self.sdram.bank.next = self.controller.sdram.bank.val();
        self.sdram.address.next = self.controller.sdram.address.val();
        self.sdram.write_data.next = self.controller.sdram.write_data.val();
        self.controller.sdram.read_data.next = self.sdram.read_data.val();
        // The controller also drives the data bus in its recovery after a read burst, while
        // the part still puts out the burst's last words: drive it only for a write-back.
        self.sdram.write_enable.next = self.controller.sdram.write_enable.val()
            & ((self.state.q.val() == LineState::FlushIssue)
                | (self.state.q.val() == LineState::Flushing));
        self.controller.cmd_strobe.next = false;
        self.controller.write_not_read.next = false;
        self.controller.cmd_address.next = bit_cast::<32, 15>(self.tag.q.val()) << 5;
        self.controller.data_in.next = self.line.read_data.val();
        self.line.read_address.next = self.addr.val().get_bits::<5>(0);
        self.line.write_address.next = self.addr.val().get_bits::<5>(0);
        self.line.write_data.next = self.wdata.val();
        self.line.write_enable.next = false;
        self.rdata.next = self.line.read_data.val();
        self.rvalid.next = self.answer.q.val();
        self.answer.d.next = false;
        // a request in the buffered line, its word there (a fill brings its words in order)
        self.hit.next = self.held.q.val()
            & (self.tag.q.val() == self.addr.val().get_bits::<15>(5))
            & ((self.state.q.val() == LineState::Idle)
                | ((self.state.q.val() == LineState::Filling)
                    & !self.we.val()
                    & (bit_cast::<6, 5>(self.addr.val().get_bits::<5>(0)) < self.filled.q.val())));
        self.ready.next = self.hit.val();
        if self.hit.val() & self.we.val() {
            self.line.write_enable.next = true;
            self.dirty.d.next = true;
        }
        if self.hit.val() & self.re.val() {
            self.answer.d.next = true;
        }
        match self.state.q.val() {
            LineState::Idle => {
                if (self.we.val() | self.re.val()) & !self.hit.val() {
                    self.miss.d.next = self.addr.val().get_bits::<15>(5);
                    self.state.d.next = LineState::FillIssue;
                    if self.held.q.val() & self.dirty.q.val() {
                        self.flushed.d.next = 0.into();
                        self.state.d.next = LineState::FlushIssue;
                    }
                }
            }
            LineState::FlushIssue => {
                self.line.read_address.next = self.flushed.q.val();
                if !self.controller.busy.val() {
                    self.controller.cmd_strobe.next = true;
                    self.controller.write_not_read.next = true;
                    self.state.d.next = LineState::Flushing;
                }
            }
            LineState::Flushing => {
                // the word on `data_in` is taken on each strobe; the buffer's read is a clock
                // late, so the address runs one word ahead while strobed
                self.line.read_address.next = self.flushed.q.val();
                if self.controller.data_strobe.val() {
                    self.flushed.d.next = self.flushed.q.val() + 1;
                    self.line.read_address.next = self.flushed.q.val() + 1;
                }
                if !self.controller.busy.val() {
                    self.dirty.d.next = false;
                    self.state.d.next = LineState::FillIssue;
                }
            }
            LineState::FillIssue => {
                if !self.controller.busy.val() {
                    self.tag.d.next = self.miss.q.val();
                    self.controller.cmd_address.next = bit_cast::<32, 15>(self.miss.q.val()) << 5;
                    self.controller.cmd_strobe.next = true;
                    self.held.d.next = true;
                    self.dirty.d.next = false;
                    self.filled.d.next = 0.into();
                    self.state.d.next = LineState::Filling;
                }
            }
            LineState::Filling => {
                if self.controller.data_valid.val() {
                    self.line.write_address.next = self.filled.q.val().get_bits::<5>(0);
                    self.line.write_data.next = self.controller.data_out.val();
                    self.line.write_enable.next = true;
                    self.filled.d.next = self.filled.q.val() + 1;
                }
                if (self.filled.q.val() == 32) & !self.controller.busy.val() {
                    self.state.d.next = LineState::Idle;
                }
            }
        }
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
            self.chip.sdram.clk.next = self.mem.sdram.clk.val();
            self.chip.sdram.we_not.next = self.mem.sdram.we_not.val();
            self.chip.sdram.cas_not.next = self.mem.sdram.cas_not.val();
            self.chip.sdram.ras_not.next = self.mem.sdram.ras_not.val();
            self.chip.sdram.cs_not.next = self.mem.sdram.cs_not.val();
            self.chip.sdram.bank.next = self.mem.sdram.bank.val();
            self.chip.sdram.address.next = self.mem.sdram.address.val();
            self.chip.sdram.write_data.next = self.mem.sdram.write_data.val();
            self.chip.sdram.write_enable.next = self.mem.sdram.write_enable.val();
            // a pad the FPGA drives reads back what it drives, not what the part puts out
            self.mem.sdram.read_data.next = self.chip.sdram.read_data.val();
            if self.mem.sdram.write_enable.val() {
                self.mem.sdram.read_data.next = self.mem.sdram.write_data.val();
            }
        }
    }

    fn with_chip(mhz: f64) -> WithChip {
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
        uut
    }

    /// Present `requests` in order (address, `Some(word)` to write, `None` to read), each held
    /// until taken; returns the words read, and for each the clock its answer came.
    fn run(uut: &mut WithChip, requests: &[(u64, Option<u16>)]) -> Vec<(u16, u64)> {
        let tick = |u: &mut WithChip| {
            u.clock.next = true.into();
            assert!(simulate(u, 1000));
            u.clock.next = false.into();
            assert!(simulate(u, 1000));
        };
        let reads = requests.iter().filter(|r| r.1.is_none()).count();
        let (mut got, mut at, mut clock) = (vec![], 0usize, 0u64);
        while got.len() < reads {
            assert!(clock < 1_000_000, "no answer");
            let (addr, write) = requests.get(at).copied().unwrap_or((0, None));
            let asking = at < requests.len();
            uut.mem.addr.next = addr.into();
            uut.mem.wdata.next = (write.unwrap_or(0) as u64).into();
            uut.mem.we.next = asking && write.is_some();
            uut.mem.re.next = asking && write.is_none();
            assert!(simulate(uut, 1000));
            if asking && uut.mem.ready.val() {
                at += 1;
            }
            if uut.mem.rvalid.val() {
                got.push((uut.mem.rdata.val().index() as u16, clock));
            }
            tick(uut);
            clock += 1;
            assert!(!uut.chip.test_error.val(), "timing broken at clock {clock}");
        }
        got
    }

    #[test]
    fn sdram_memory_verilog_is_clean() {
        let mut m = SdramMemory::new(28.125);
        m.connect_all();
        crate::testing::yosys_check(&m, "sdram_memory");
    }

    /// Words written at scattered addresses (each in a line of its own: every write writes
    /// the last line back and fills a new one), some written twice, come back unchanged when
    /// read at scattered addresses, and the chip model sees no command that breaks the part's
    /// timing.
    #[test]
    fn scattered_words_come_back_as_written() {
        let mut uut = with_chip(28.125);
        let addrs: Vec<u64> = (0..40u64).map(|k| (k * 7919 + 13) % (1 << 20)).collect();
        let value = |a: u64, round: u64| (a * 31 + round * 7) as u16;
        let mut requests: Vec<(u64, Option<u16>)> =
            addrs.iter().map(|&a| (a, Some(value(a, 0)))).collect();
        requests.extend(addrs.iter().step_by(3).map(|&a| (a, Some(value(a, 1)))));
        requests.extend(addrs.iter().rev().map(|&a| (a, None)));
        let got: Vec<u16> = run(&mut uut, &requests).iter().map(|g| g.0).collect();
        let want: Vec<u16> = addrs
            .iter()
            .enumerate()
            .rev()
            .map(|(k, &a)| value(a, (k % 3 == 0) as u64))
            .collect();
        assert_eq!(got, want);
    }

    /// Four lines written word by word and read back in order: every word right, and a new
    /// line's first word every `fill_clocks` (no refresh between), a line's other words on
    /// the clocks after it.
    #[test]
    fn lines_stream_at_the_stated_pace() {
        let mhz = 28.125;
        let mut uut = with_chip(mhz);
        let base = 5 * LINE_WORDS as u64;
        let words = 4 * LINE_WORDS as u64;
        let mut requests: Vec<(u64, Option<u16>)> = (0..words)
            .map(|k| (base + k, Some((k * 977 + 1) as u16)))
            .collect();
        requests.extend((0..words).map(|k| (base + k, None)));
        let got = run(&mut uut, &requests);
        let values: Vec<u16> = got.iter().map(|g| g.0).collect();
        let want: Vec<u16> = (0..words).map(|k| (k * 977 + 1) as u16).collect();
        assert_eq!(values, want);
        let starts: Vec<u64> = got.iter().step_by(LINE_WORDS).map(|g| g.1).collect();
        let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(*gaps.iter().min().unwrap(), fill_clocks(mhz), "{gaps:?}");
        for line in got.chunks(LINE_WORDS) {
            assert_eq!(line[LINE_WORDS - 1].1 - line[0].1, LINE_WORDS as u64 - 1);
        }
    }
}
