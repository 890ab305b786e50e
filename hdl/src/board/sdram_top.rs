//! The board top of a resident design whose data memory is the board's SDRAM: the shell of
//! every board top (clock, power-on hold, UART host link: board_top.rs) and the SDRAM's
//! pins, named as the board file's `[sdram.pins]` (`sdram_a[0]` …), with the data bus
//! driven through a tristate buffer at the pads.

use crate::board_top::BoardShell;
use crate::ice40_pll::ClockSource;
use crate::with_memory::ResidentSdram;
use rust_hdl::prelude::*;
use rust_hdl::sim::sdr_sdram::chip::SDRAMSimulator;

/// The ports and the shell's wiring are those of `board_top!` (board_top.rs), which cannot
/// take more pins: rust-hdl's `#[hdl_gen]` loses `self` in a macro's caller-written lines.
#[derive(LogicBlock)]
pub struct ResidentSdramBoardTop {
    pub clk_osc: Signal<In, Clock>,
    pub uart_rx: Signal<In, Bit>,
    pub uart_tx: Signal<Out, Bit>,
    pub led_error: Signal<Out, Bit>,
    pub sdram_clk: Signal<Out, Clock>,
    /// Clock enable, always high; the byte masks, always low (whole words move).
    pub sdram_cke: Signal<Out, Bit>,
    pub sdram_dqm: Signal<Out, Bits<2>>,
    pub sdram_csn: Signal<Out, Bit>,
    pub sdram_wen: Signal<Out, Bit>,
    pub sdram_rasn: Signal<Out, Bit>,
    pub sdram_casn: Signal<Out, Bit>,
    pub sdram_ba: Signal<Out, Bits<2>>,
    pub sdram_a: Signal<Out, Bits<13>>,
    pub sdram_d: Signal<InOut, Bits<16>>,
    pub shell: BoardShell,
    pub net: ResidentSdram,
    pub dq: TristateBuffer<Bits<16>>,
    led_low: Constant<Bit>,
}

impl ResidentSdramBoardTop {
    pub fn new(
        net: ResidentSdram,
        source: ClockSource,
        clocks_per_bit: u16,
        led_active_low: bool,
    ) -> Self {
        Self {
            clk_osc: Default::default(),
            uart_rx: Default::default(),
            uart_tx: Default::default(),
            led_error: Default::default(),
            sdram_clk: Default::default(),
            sdram_cke: Default::default(),
            sdram_dqm: Default::default(),
            sdram_csn: Default::default(),
            sdram_wen: Default::default(),
            sdram_rasn: Default::default(),
            sdram_casn: Default::default(),
            sdram_ba: Default::default(),
            sdram_a: Default::default(),
            sdram_d: Default::default(),
            shell: BoardShell::new(source, clocks_per_bit),
            net,
            dq: Default::default(),
            led_low: Constant::new(led_active_low),
        }
    }
}

impl Logic for ResidentSdramBoardTop {
    #[hdl_gen]
    fn update(&mut self) {
        self.shell.clk_osc.next = self.clk_osc.val();
        self.shell.uart_rx.next = self.uart_rx.val();
        self.uart_tx.next = self.shell.uart_tx.val();
        self.net.clock.next = self.shell.clock.val();
        self.net.in_data.next = self.shell.host_in.data.val();
        self.net.in_valid.next = self.shell.host_in.valid.val();
        self.shell.host_in.ready.next = self.net.in_ready.val();
        self.shell.host_out.data.next = self.net.out_data.val();
        self.shell.host_out.valid.next = self.net.out_valid.val();
        self.net.out_ready.next = self.shell.host_out.ready.val();
        self.led_error.next = self.shell.overflow.val() ^ self.led_low.val();
        self.sdram_clk.next = self.net.sdram.clk.val();
        self.sdram_cke.next = true;
        self.sdram_dqm.next = 0.into();
        self.sdram_csn.next = self.net.sdram.cs_not.val();
        self.sdram_wen.next = self.net.sdram.we_not.val();
        self.sdram_rasn.next = self.net.sdram.ras_not.val();
        self.sdram_casn.next = self.net.sdram.cas_not.val();
        self.sdram_ba.next = self.net.sdram.bank.val();
        self.sdram_a.next = self.net.sdram.address.val();
        Signal::<InOut, Bits<16>>::link(&mut self.sdram_d, &mut self.dq.bus);
        self.dq.write_enable.next = self.net.sdram.write_enable.val();
        self.dq.write_data.next = self.net.sdram.write_data.val();
        self.net.sdram.read_data.next = self.dq.read_data.val();
    }
}

/// The board's SDRAM in a co-simulation: rust-hdl's simulated chip (its timing checks
/// included) at the design clock, Verilog module `sdram_chip`.
pub fn sdram_chip_verilog(clock_mhz: f64) -> String {
    use crate::sdram_memory::{timings, COLUMN_BITS, ROW_BITS};
    let mut c: SDRAMSimulator<ROW_BITS, COLUMN_BITS, { ROW_BITS + COLUMN_BITS }, 16> =
        SDRAMSimulator::new(timings(clock_mhz));
    c.sdram.link_connect_dest();
    c.connect_all();
    generate_verilog_unchecked(&c)
        .replace("module top(", "module sdram_chip(")
        .replace("top$", "sdram_chip$")
}

/// A board top with an SDRAM, made a co-simulation: the board top itself (renamed
/// `board_top`), the chip, and a module `top` with the board's UART pins that wires the two
/// and lets the chip drive the data bus on the clocks its banks put a word out. A command
/// that breaks the part's timing, or the board driving the bus while the chip does, stops
/// the simulation with a message.
pub fn with_simulated_sdram(board_top_verilog: &str, clock_mhz: f64) -> String {
    let board = board_top_verilog.replacen("module top(", "module board_top(", 1);
    let chip = sdram_chip_verilog(clock_mhz);
    let wrapper = r#"
module top(clk_osc, uart_rx, uart_tx, led_error);
    input wire clk_osc;
    input wire uart_rx;
    output wire uart_tx;
    output wire led_error;
    wire sdram_clk, sdram_cke, sdram_csn, sdram_wen, sdram_rasn, sdram_casn;
    wire [1:0] sdram_ba;
    wire [1:0] sdram_dqm;
    wire [12:0] sdram_a;
    wire [15:0] sdram_d;
    wire [15:0] chip_q;
    wire chip_error, chip_ready;
    board_top board(.clk_osc(clk_osc), .uart_rx(uart_rx), .uart_tx(uart_tx),
        .led_error(led_error), .sdram_clk(sdram_clk), .sdram_cke(sdram_cke),
        .sdram_dqm(sdram_dqm), .sdram_csn(sdram_csn), .sdram_wen(sdram_wen),
        .sdram_rasn(sdram_rasn), .sdram_casn(sdram_casn), .sdram_ba(sdram_ba),
        .sdram_a(sdram_a), .sdram_d(sdram_d));
    sdram_chip chip(.sdram$clk(sdram_clk), .sdram$we_not(sdram_wen),
        .sdram$cas_not(sdram_casn), .sdram$ras_not(sdram_rasn), .sdram$cs_not(sdram_csn),
        .sdram$bank(sdram_ba), .sdram$address(sdram_a), .sdram$write_data(sdram_d),
        .sdram$read_data(chip_q), .sdram$write_enable(1'b1), .test_error(chip_error),
        .test_ready(chip_ready));
    wire chip_drives = chip.banks$0$read_valid | chip.banks$1$read_valid
        | chip.banks$2$read_valid | chip.banks$3$read_valid;
    assign sdram_d = chip_drives ? chip_q : 16'bz;
    always @(posedge sdram_clk) if (chip_error) begin
        $display("SDRAM chip model: a command broke the part's timing rules");
        $finish;
    end
    always @(posedge sdram_clk) if (chip_drives & board.dq$write_enable) begin
        $display("SDRAM data bus: the board drives it while the part puts out a word"); $finish; end
endmodule
"#;
    format!("{board}\n{chip}\n{wrapper}")
}
