//! The boards edgeflow builds bitstreams or project scripts for: part, oscillator, host-link
//! pins and the constraint files, all written from these facts (docs/hardware.md). Every
//! board is read from its board file: the `[fpga]` table of `boards/*.toml`, the clock and the
//! pipeline options at its top (`edgeflow_core::boards`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// An FPGA board with a UART host link on its USB serial bridge.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardInfo {
    pub name: &'static str,
    /// The synthesis target of its FPGA (`flow::targets`).
    pub target: &'static str,
    /// nextpnr's package name of the FPGA.
    pub package: &'static str,
    /// Speed grade (nextpnr-ecp5 `--speed`); 0 where the flow takes none.
    pub speed: u8,
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
    /// The board-to-board link's pins (`[link]` of the board file), if it has one.
    pub link: Option<&'static LinkPins>,
    /// The SDRAM's pins (`[sdram]` of the board file), if it has one: a resident data set
    /// is then kept there (memory/sdram_memory.rs).
    pub sdram: Option<&'static SdramPins>,
}

/// The pins of a board's SDRAM (a 16-bit part of 4 banks, 13 row and 9 column bits), named
/// as the board top's ports.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SdramPins {
    pub clk: String,
    pub cke: String,
    pub csn: String,
    pub wen: String,
    pub rasn: String,
    pub casn: String,
    pub ba: [String; 2],
    pub dqm: [String; 2],
    pub a: [String; 13],
    pub d: [String; 16],
}

impl SdramPins {
    /// Every pin with its board-top port (`sdram_a[0]` for bit 0 of `sdram_a`).
    pub fn pins(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = [
            ("clk", &self.clk),
            ("cke", &self.cke),
            ("csn", &self.csn),
            ("wen", &self.wen),
            ("rasn", &self.rasn),
            ("casn", &self.casn),
        ]
        .iter()
        .map(|(n, p)| (format!("sdram_{n}"), p.to_string()))
        .collect();
        for (bus, balls) in [
            ("ba", &self.ba[..]),
            ("dqm", &self.dqm[..]),
            ("a", &self.a[..]),
            ("d", &self.d[..]),
        ] {
            for (k, p) in balls.iter().enumerate() {
                v.push((format!("sdram_{bus}[{k}]"), p.clone()));
            }
        }
        v
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SdramTable {
    pins: SdramPins,
}

/// A board's link pins: the data width and, per neighbour, the pins of both directions.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkPins {
    pub previous: LinkSide,
    pub next: LinkSide,
}

/// The pins towards one neighbour: its activations (in from the previous board, out to the
/// next) and its deltas (the other way).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSide {
    pub activations: LinkWires,
    pub deltas: LinkWires,
}

/// One direction of a link: the forwarded clock, valid, start, the credit wire back, and the
/// data pins (`data[0]` first).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkWires {
    pub clock: String,
    pub valid: String,
    pub start: String,
    pub credit: String,
    pub data: Vec<String>,
}

impl LinkWires {
    /// Every pin with its signal's name (`data[k]` for the data pins).
    pub fn pins(&self) -> Vec<(String, &str)> {
        let mut v = vec![
            ("clock".to_string(), self.clock.as_str()),
            ("valid".to_string(), self.valid.as_str()),
            ("start".to_string(), self.start.as_str()),
            ("credit".to_string(), self.credit.as_str()),
        ];
        for (k, d) in self.data.iter().enumerate() {
            v.push((format!("data[{k}]"), d.as_str()));
        }
        v
    }
}

impl LinkSide {
    pub fn pins(&self) -> Vec<(String, &str)> {
        let mut v = vec![];
        for (dir, w) in [("activations", &self.activations), ("deltas", &self.deltas)] {
            v.extend(w.pins().into_iter().map(|(n, p)| (format!("{dir}.{n}"), p)));
        }
        v
    }
}

/// `[link]` of a board file as the flow reads it (the planner reads its figures).
#[derive(serde::Deserialize)]
struct LinkTable {
    width: usize,
    pins: Option<LinkPins>,
}

/// Ports of every board top: the oscillator, the two UART lines (named from the FPGA's
/// side) and an error LED (sticky: a UART framing error, or a serial frame that failed its
/// sums).
pub const TOP_PORTS: [&str; 4] = ["clk_osc", "uart_rx", "uart_tx", "led_error"];

/// What a board file says about the board for the flow (the cost model reads the rest).
#[derive(serde::Deserialize)]
struct BoardFile {
    name: String,
    clock_mhz: f64,
    #[serde(default)]
    registered_reads: bool,
    #[serde(default)]
    deep_pipeline: bool,
    /// Absent for a board the flow does not build (an OpenCL device).
    fpga: Option<FpgaTable>,
    link: Option<LinkTable>,
    sdram: Option<SdramTable>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FpgaTable {
    target: String,
    package: String,
    speed: u8,
    osc_mhz: f64,
    loader_board: String,
    usb_id: String,
    led_active_low: bool,
    pll_pad: bool,
    /// Top-level port → package pin.
    pins: BTreeMap<String, String>,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Why a board cannot be used: its board file is wrong, or no board has the name.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// The toml message is quoted, so the error is not also the `source` (a printed chain
    /// would repeat it).
    #[error("board file {file}: {}", .error.message())]
    Toml {
        file: String,
        error: toml::de::Error,
    },
    #[error("board file {file}: [fpga.pins] names {port}, not a board top port ({ports})")]
    NotAPort {
        file: String,
        port: String,
        ports: String,
    },
    #[error("board file {file}: [fpga.pins] has no pin for the board top's port {port}")]
    NoPin { file: String, port: String },
    #[error("unknown board '{name}'; known boards: {known}")]
    Unknown { name: String, known: String },
    #[error("board file {file}: no [fpga] table (what the FPGA flow needs: target, package, oscillator, pins)")]
    NoFpga { file: String },
    #[error("board {board}: no resident data memory is known for {target}")]
    NoDataMemory { board: String, target: String },
    #[error(
        "board file {file}: [link.pins.{side}.{dir}] has {got} data pins; the link is {width} wide"
    )]
    LinkWidth {
        file: String,
        side: String,
        dir: String,
        got: usize,
        width: usize,
    },
    #[error("board file {file}: [link.pins.{side}] puts {a} and {b} on pin {pin}")]
    LinkPinTwice {
        file: String,
        side: String,
        a: String,
        b: String,
        pin: String,
    },
}

/// A board from its board file's `[fpga]` table; `source` names the file in errors.
pub fn from_file(source: &str, text: &str) -> Result<BoardInfo, BoardError> {
    from_file_if_fpga(source, text)?.ok_or_else(|| BoardError::NoFpga {
        file: source.to_string(),
    })
}

/// [`from_file`], or `None` when the board file has no `[fpga]` table.
fn from_file_if_fpga(source: &str, text: &str) -> Result<Option<BoardInfo>, BoardError> {
    let f: BoardFile = toml::from_str(text).map_err(|error| BoardError::Toml {
        file: source.to_string(),
        error,
    })?;
    let Some(fpga) = f.fpga else {
        return Ok(None);
    };
    if let Some(extra) = fpga.pins.keys().find(|k| !TOP_PORTS.contains(&k.as_str())) {
        return Err(BoardError::NotAPort {
            file: source.to_string(),
            port: extra.clone(),
            ports: TOP_PORTS.join(", "),
        });
    }
    for p in TOP_PORTS {
        if !fpga.pins.contains_key(p) {
            return Err(BoardError::NoPin {
                file: source.to_string(),
                port: p.to_string(),
            });
        }
    }
    let link = match f.link {
        Some(LinkTable {
            width,
            pins: Some(pins),
        }) => {
            check_link_pins(source, width, &pins)?;
            Some(&*Box::leak(Box::new(pins)))
        }
        _ => None,
    };
    let pins: Vec<(&'static str, &'static str)> = TOP_PORTS
        .iter()
        .map(|p| (*p, leak(fpga.pins[*p].clone())))
        .collect();
    Ok(Some(BoardInfo {
        name: leak(f.name),
        target: leak(fpga.target),
        package: leak(fpga.package),
        speed: fpga.speed,
        osc_mhz: fpga.osc_mhz,
        pins: Box::leak(pins.into_boxed_slice()),
        led_active_low: fpga.led_active_low,
        pll_pad: fpga.pll_pad,
        loader_board: leak(fpga.loader_board),
        usb_id: leak(fpga.usb_id),
        default_mhz: f.clock_mhz,
        registered_reads: f.registered_reads,
        deep_pipeline: f.deep_pipeline,
        link,
        sdram: f.sdram.map(|t| &*Box::leak(Box::new(t.pins))),
    }))
}

/// Every direction has `width` data pins, and no pin carries two signals of one side.
fn check_link_pins(file: &str, width: usize, pins: &LinkPins) -> Result<(), BoardError> {
    for (side, s) in [("previous", &pins.previous), ("next", &pins.next)] {
        for (dir, w) in [("activations", &s.activations), ("deltas", &s.deltas)] {
            if w.data.len() != width {
                return Err(BoardError::LinkWidth {
                    file: file.into(),
                    side: side.into(),
                    dir: dir.into(),
                    got: w.data.len(),
                    width,
                });
            }
        }
        let all = s.pins();
        for (i, (a, p)) in all.iter().enumerate() {
            if let Some((b, _)) = all[i + 1..].iter().find(|(_, q)| q == p) {
                return Err(BoardError::LinkPinTwice {
                    file: file.into(),
                    side: side.into(),
                    a: a.clone(),
                    b: b.clone(),
                    pin: p.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Every board the flow knows.
pub fn boards() -> &'static [BoardInfo] {
    static ALL: OnceLock<Vec<BoardInfo>> = OnceLock::new();
    ALL.get_or_init(|| {
        edgeflow_core::boards::carried()
            .filter_map(|(n, t)| {
                from_file_if_fpga(&format!("boards/{n}.toml"), t)
                    .expect("built-in board files are valid")
            })
            .collect()
    })
}

pub fn board(name: &str) -> Result<&'static BoardInfo, BoardError> {
    boards()
        .iter()
        .find(|b| b.name == name)
        .ok_or_else(|| BoardError::Unknown {
            name: name.to_string(),
            known: boards()
                .iter()
                .map(|b| b.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The iCE40 pin constraint file (nextpnr `--pcf`): the board top's ports and `extra`
/// (port, pin) pairs (a linked board's link pins).
pub fn pcf(b: &BoardInfo, extra: &[(String, String)]) -> String {
    let mut s = format!(
        "# {} pins for the edgeflow board top (written by edgeflow)\n",
        b.name
    );
    for (port, pin) in all_pins(b, extra) {
        s += &format!("set_io {port} {pin}\n");
    }
    s
}

fn all_pins<'a>(b: &'a BoardInfo, extra: &'a [(String, String)]) -> Vec<(&'a str, &'a str)> {
    b.pins
        .iter()
        .copied()
        .chain(extra.iter().map(|(a, p)| (a.as_str(), p.as_str())))
        .collect()
}

/// The ECP5 constraint file (nextpnr-ecp5 `--lpf`): pins, 3.3 V I/O, the oscillator's
/// frequency (nextpnr derives the PLL output's constraint from it); `extra` as for [`pcf`].
pub fn lpf(b: &BoardInfo, extra: &[(String, String)]) -> String {
    let mut s = format!(
        "# {} pins for the edgeflow board top (written by edgeflow)\n",
        b.name
    );
    for (port, pin) in all_pins(b, extra) {
        let io = match port {
            "clk_osc" => "PULLMODE=NONE IO_TYPE=LVCMOS33",
            "uart_rx" => "PULLMODE=UP IO_TYPE=LVCMOS33",
            "uart_tx" => "PULLMODE=UP IO_TYPE=LVCMOS33 DRIVE=4",
            _ => "PULLMODE=NONE IO_TYPE=LVCMOS33 DRIVE=4",
        };
        s += &format!("LOCATE COMP \"{port}\" SITE \"{pin}\";\nIOBUF PORT \"{port}\" {io};\n");
    }
    s += &format!("FREQUENCY PORT \"clk_osc\" {} MHZ;\n", b.osc_mhz);
    s
}

/// The constraint file of a board and its file extension; `extra` as for [`pcf`].
pub fn constraints_with(b: &BoardInfo, extra: &[(String, String)]) -> (String, &'static str) {
    if b.target.starts_with("ice40") {
        (pcf(b, extra), "pcf")
    } else if b.target.starts_with("ecp5") {
        (lpf(b, extra), "lpf")
    } else {
        (xdc(b, b.osc_mhz), "xdc")
    }
}

/// The constraint file of a board top and its file extension.
pub fn constraints(b: &BoardInfo) -> (String, &'static str) {
    constraints_with(b, &[])
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
        for b in boards() {
            let (c, _) = constraints(b);
            for p in TOP_PORTS {
                assert!(
                    c.contains(&format!(" {p} ")) || c.contains(&format!(" \"{p}\" ")),
                    "{}: {p} missing in\n{c}",
                    b.name
                );
            }
        }
        assert!(pcf(board("icebreaker").unwrap(), &[]).contains("set_io uart_rx 6\n"));
        assert!(board("nope")
            .unwrap_err()
            .to_string()
            .contains("icebreaker"));
    }

    /// The ULX3S facts come from the board file: the FT231X's lines as the ULX3S v2/v3
    /// constraints name them from the FTDI's side (`ftdi_txd` M1 is the FPGA's receive line,
    /// `ftdi_rxd` L4 its transmit line), the 25 MHz oscillator on G2, LED 0 on B2.
    #[test]
    fn ulx3s_boards_are_read_from_their_board_files() {
        for (name, target) in [
            ("ulx3s-85f", "ecp5-85k"),
            ("ulx3s-45f", "ecp5-45k"),
            ("ulx3s-12f", "ecp5-12k"),
        ] {
            let b = board(name).unwrap();
            assert_eq!((b.target, b.package, b.speed), (target, "CABGA381", 6));
            assert_eq!((b.osc_mhz, b.loader_board), (25.0, "ulx3s"));
            let l = lpf(b, &[]);
            for want in [
                "LOCATE COMP \"uart_rx\" SITE \"M1\";",
                "LOCATE COMP \"uart_tx\" SITE \"L4\";",
                "LOCATE COMP \"clk_osc\" SITE \"G2\";",
                "LOCATE COMP \"led_error\" SITE \"B2\";",
                "FREQUENCY PORT \"clk_osc\" 25 MHZ;",
            ] {
                assert!(l.contains(want), "{name}: {want} missing in\n{l}");
            }
        }
        let good = edgeflow_core::boards::BUNDLED[0].1;
        let e = from_file("x.toml", &good.replace("led_error = \"B2\"", ""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("led_error") && e.contains("x.toml"), "{e}");
        let e = from_file("x.toml", &good.replace("led_error =", "led_eror ="))
            .unwrap_err()
            .to_string();
        assert!(e.contains("led_eror"), "{e}");
    }

    /// The link pins come from `[link.pins]`: a data pin too few, or a pin given two signals
    /// of one side, is named with its table; a board whose sides share pins takes one side at
    /// a time.
    #[test]
    fn link_pins_are_read_and_checked() {
        use crate::linked_top::link_port_pins;
        let ulx = board("ulx3s-85f").unwrap();
        let both = link_port_pins(ulx, true, true).unwrap();
        assert_eq!(both.len(), 4 * 12);
        assert!(both.contains(&("from_prev$0$clock".into(), "B11".into())));
        assert!(both.contains(&("from_next$0$data[7]".into(), "E14".into())));
        let ice = board("icebreaker").unwrap();
        assert_eq!(link_port_pins(ice, false, true).unwrap().len(), 2 * 8);
        let e = link_port_pins(ice, true, true).unwrap_err();
        assert!(
            e.contains("icebreaker") && e.contains("first or the last"),
            "{e}"
        );
        let good = edgeflow_core::boards::BUNDLED[0].1;
        assert!(
            good.contains("data = [\"B15\", \"C15\""),
            "the ULX3S 85F is bundled first"
        );
        let e = from_file(
            "x.toml",
            &good.replace("data = [\"B15\", \"C15\",", "data = ["),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("[link.pins.next.deltas] has 6 data pins"), "{e}");
        let e = from_file(
            "x.toml",
            &good.replace("valid = \"L17\"", "valid = \"B15\""),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("[link.pins.next]") && e.contains("B15"), "{e}");
    }
}
