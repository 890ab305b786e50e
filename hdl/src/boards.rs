//! The boards edgeflow builds bitstreams or project scripts for: part, oscillator, host-link
//! pins and the constraint files, all written from these facts (docs/hardware.md).

/// An FPGA board with a UART host link on its USB serial bridge.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardInfo {
    pub name: &'static str,
    /// The synthesis target of its FPGA (`flow::targets`).
    pub target: &'static str,
    pub osc_mhz: f64,
    /// Top-level port → package pin.
    pub pins: &'static [(&'static str, &'static str)],
    /// Board LEDs light on a low level.
    pub led_active_low: bool,
    /// The oscillator pin is the PLL's dedicated input pad (SB_PLL40_PAD).
    pub pll_pad: bool,
    /// openFPGALoader's name for the board (`-b`).
    pub loader_board: &'static str,
    /// USB id of the board's FTDI bridge, to tell whether one is attached.
    pub usb_id: &'static str,
    pub default_mhz: f64,
    /// Build with every memory read registered (`Spec::registered_reads`): the part's
    /// multipliers are combinational and slow (the UP5K's MAC16 takes 9 ns), so a memory read
    /// and a multiply in one clock would set the clock.
    pub registered_reads: bool,
    /// Build with the deep pipeline (`Spec::deep_pipeline`): every product in the MAC16's own
    /// output register, the multiply and what follows it then get a clock each.
    pub deep_pipeline: bool,
}

/// Ports of every board top: the oscillator, the two UART lines (named from the FPGA's
/// side) and an error LED (sticky link overflow or framing error).
pub const TOP_PORTS: [&str; 4] = ["clk_osc", "uart_rx", "uart_tx", "led_error"];

pub const BOARDS: &[BoardInfo] = &[
    BoardInfo {
        name: "icebreaker",
        target: "ice40-up5k",
        osc_mhz: 12.0,
        // 12 MHz oscillator on pin 35 (the PLL pad); FT2232H channel B UART: FPGA RX on 6,
        // TX on 9; red LED on 11 (active low).
        pins: &[
            ("clk_osc", "35"),
            ("uart_rx", "6"),
            ("uart_tx", "9"),
            ("led_error", "11"),
        ],
        led_active_low: true,
        pll_pad: true,
        loader_board: "ice40_generic",
        usb_id: "0403:6010",
        // 30 MHz from the PLL (12 MHz × 80/32): the clock digits meets with registered reads
        // and the deep pipeline, in static timing with the MAC16 multiplies counted
        // (flow/sta.rs; host/tests/bitstream_digits.rs holds it). `--freq` asks for another.
        default_mhz: 30.0,
        registered_reads: true,
        deep_pipeline: true,
    },
    BoardInfo {
        name: "alchitry-cu",
        target: "ice40-hx8k",
        osc_mhz: 100.0,
        // 100 MHz oscillator on P7; FT2232 UART: FPGA RX on P14, TX on M9; LED 0 on J11.
        pins: &[
            ("clk_osc", "P7"),
            ("uart_rx", "P14"),
            ("uart_tx", "M9"),
            ("led_error", "J11"),
        ],
        led_active_low: false,
        pll_pad: false,
        loader_board: "ice40_generic",
        usb_id: "0403:6010",
        default_mhz: 100.0,
        registered_reads: false,
        deep_pipeline: false,
    },
    BoardInfo {
        name: "nexys4-ddr",
        target: "xc7a100t",
        osc_mhz: 100.0,
        // 100 MHz on E3; FT2232 USB-UART: FPGA RX (UART_TXD_IN) C4, TX (UART_RXD_OUT) D4;
        // LED0 on H17.
        pins: &[
            ("clk_osc", "E3"),
            ("uart_rx", "C4"),
            ("uart_tx", "D4"),
            ("led_error", "H17"),
        ],
        led_active_low: false,
        pll_pad: false,
        loader_board: "nexys_a7_100",
        usb_id: "0403:6010",
        default_mhz: 100.0,
        registered_reads: false,
        deep_pipeline: false,
    },
];

pub fn board(name: &str) -> Result<&'static BoardInfo, String> {
    BOARDS.iter().find(|b| b.name == name).ok_or_else(|| {
        let names: Vec<_> = BOARDS.iter().map(|b| b.name).collect();
        format!("unknown board '{name}'; known boards: {}", names.join(", "))
    })
}

/// The iCE40 pin constraint file (nextpnr `--pcf`).
pub fn pcf(b: &BoardInfo) -> String {
    let mut s = format!(
        "# {} pins for the edgeflow board top (written by edgeflow)\n",
        b.name
    );
    for (port, pin) in b.pins {
        s += &format!("set_io {port} {pin}\n");
    }
    s
}

/// The Xilinx constraint file (Vivado XDC) at the clock the design runs.
pub fn xdc(b: &BoardInfo, mhz: f64) -> String {
    let mut s = format!(
        "## {} pins for the edgeflow board top (written by edgeflow)\n",
        b.name
    );
    for (port, pin) in b.pins {
        s += &format!("set_property -dict {{ PACKAGE_PIN {pin} IOSTANDARD LVCMOS33 }} [get_ports {{ {port} }}]\n");
    }
    s += &format!(
        "create_clock -name clk_osc -period {:.3} [get_ports {{ clk_osc }}]\n",
        1000.0 / mhz
    );
    s += "set_false_path -from [get_ports { uart_rx }]\nset_false_path -to [get_ports { uart_tx led_error }]\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_board_constrains_every_top_port() {
        for b in BOARDS {
            let c = if b.target.starts_with("ice40") {
                pcf(b)
            } else {
                xdc(b, b.default_mhz)
            };
            for p in TOP_PORTS {
                assert!(
                    c.contains(&format!(" {p} ")),
                    "{}: {p} missing in\n{c}",
                    b.name
                );
            }
        }
        assert!(pcf(board("icebreaker").unwrap()).contains("set_io uart_rx 6\n"));
        assert!(board("nope").unwrap_err().contains("icebreaker"));
    }
}
