//! The resident data memory of a board top: 16-bit words, one port that either writes or
//! reads each clock, the read data registered (it appears the clock after its address). On
//! the iCE40 UP5K it is the four SB_SPRAM256KA single-port RAMs (16 K words each), which
//! yosys does not infer from an array; elsewhere an array that synthesis maps to block RAM.
//! Its port is the one the resident network speaks (`ready`, `rvalid`), which the SDRAM
//! behind a board's data memory (memory/sdram_memory.rs) also has: on chip every request is
//! taken at once and its word is back the next clock.

use rust_hdl::core::prelude::*;
use std::fmt::Write;

/// Words in one SB_SPRAM256KA.
pub const SPRAM_WORDS: usize = 16 * 1024;

/// What a data memory is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataMemoryKind {
    /// iCE40 UP5K single-port RAMs, `words / 16384` of them (at most 4).
    Spram,
    /// An inferred array (block RAM on the ECP5 and the 7 series).
    Array,
    /// The board's SDRAM (sdram_memory.rs), `SDRAM_WORDS` words of it.
    Sdram,
}

impl DataMemoryKind {
    /// Clocks from one read request to the next at a design clock of `mhz`: every clock on
    /// chip; the SDRAM's activate, read and precharge.
    pub fn read_clocks(self, mhz: f64) -> u64 {
        match self {
            DataMemoryKind::Sdram => crate::sdram_memory::read_clocks(mhz),
            DataMemoryKind::Spram | DataMemoryKind::Array => 1,
        }
    }
}

/// The resident data memory a board offers next to the network: its SDRAM where it has
/// one; all four SPRAMs of the UP5K; on parts with block RAM only, what the largest bundled
/// networks leave free.
pub fn for_board(
    b: &crate::boards::BoardInfo,
) -> Result<(DataMemoryKind, usize), crate::boards::BoardError> {
    if b.sdram.is_some() {
        return Ok((DataMemoryKind::Sdram, crate::sdram_memory::SDRAM_WORDS));
    }
    Ok(match b.target {
        "ice40-up5k" => (DataMemoryKind::Spram, 4 * SPRAM_WORDS),
        "ecp5-85k" | "ecp5-45k" | "xc7a100t" => (DataMemoryKind::Array, 64 * 1024),
        "ecp5-25k" | "ecp5-12k" => (DataMemoryKind::Array, 16 * 1024),
        "ice40-hx8k" => (DataMemoryKind::Array, 2 * 1024),
        t => {
            return Err(crate::boards::BoardError::NoDataMemory {
                board: b.name.to_string(),
                target: t.to_string(),
            })
        }
    })
}

#[derive(LogicBlock)]
pub struct DataMemory {
    pub clock: Signal<In, Clock>,
    /// Word address; addresses at or above the depth wrap (only the low bits are decoded).
    pub addr: Signal<In, Bits<20>>,
    pub we: Signal<In, Bit>,
    pub wdata: Signal<In, Bits<16>>,
    /// A read request; its word is in `rdata` the next clock, with `rvalid`.
    pub re: Signal<In, Bit>,
    /// The word at the address of the previous clock, if that clock did not write.
    pub rdata: Signal<Out, Bits<16>>,
    /// Always high: every request is taken.
    pub ready: Signal<Out, Bit>,
    pub rvalid: Signal<Out, Bit>,
    _kind: DataMemoryKind,
    _mem: Vec<u16>,
    _q: u16,
    _read: bool,
}

impl DataMemory {
    pub fn new(kind: DataMemoryKind, words: usize) -> DataMemory {
        assert!(words.is_power_of_two() && words <= 1 << 20);
        assert!(
            kind != DataMemoryKind::Sdram,
            "the SDRAM is sdram_memory::SdramMemory"
        );
        if kind == DataMemoryKind::Spram {
            assert!(words % SPRAM_WORDS == 0 && words <= 4 * SPRAM_WORDS);
        }
        DataMemory {
            clock: Default::default(),
            addr: Default::default(),
            we: Default::default(),
            wdata: Default::default(),
            re: Default::default(),
            rdata: Default::default(),
            ready: Default::default(),
            rvalid: Default::default(),
            _kind: kind,
            _mem: vec![0; words],
            _q: 0,
            _read: false,
        }
    }

    pub fn words(&self) -> usize {
        self._mem.len()
    }
}

impl Logic for DataMemory {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let a = self.addr.val().to_u64() as usize & (self._mem.len() - 1);
            if self.we.val() {
                self._mem[a] = self.wdata.val().to_u64() as u16;
            } else {
                self._q = self._mem[a];
            }
            self._read = self.re.val() & !self.we.val();
        }
        self.rdata.next = (self._q as u64).into();
        self.ready.next = true;
        self.rvalid.next = self._read;
    }

    fn connect(&mut self) {
        self.rdata.connect();
        self.ready.connect();
        self.rvalid.connect();
    }

    fn hdl(&self) -> Verilog {
        let words = self._mem.len();
        let abits = words.trailing_zeros();
        let mut v = String::from(
            "initial rvalid = 1'b0;\nalways @(posedge clock) rvalid <= re & !we;\nalways @(*) ready = 1'b1;\n",
        );
        match self._kind {
            DataMemoryKind::Array => {
                let _ = writeln!(
                    v,
                    "reg [15:0] mem [0:{}];\nalways @(posedge clock) begin\n    if (we) mem[addr[{}:0]] <= wdata;\n    else rdata <= mem[addr[{}:0]];\nend",
                    words - 1,
                    abits - 1,
                    abits - 1
                );
            }
            DataMemoryKind::Sdram => unreachable!("checked in DataMemory::new"),
            DataMemoryKind::Spram => {
                let banks = words / SPRAM_WORDS;
                let _ = writeln!(v, "reg [1:0] bank_q;\ninitial bank_q = 2'd0;");
                for b in 0..banks {
                    // the bank that was read is the one whose output the next clock uses
                    let _ = writeln!(
                        v,
                        "wire [15:0] q{b};\nSB_SPRAM256KA spram{b} (.ADDRESS(addr[13:0]), .DATAIN(wdata), .MASKWREN(4'b1111), .WREN(we), .CHIPSELECT({cs}), .CLOCK(clock), .STANDBY(1'b0), .SLEEP(1'b0), .POWEROFF(1'b1), .DATAOUT(q{b}));",
                        cs = if banks == 1 {
                            "1'b1".to_string()
                        } else {
                            format!("addr[15:14] == 2'd{b}")
                        }
                    );
                }
                v += "always @(posedge clock) if (!we) bank_q <= addr[15:14];\nalways @(*) begin\n    case (bank_q)\n";
                for b in 0..banks {
                    let _ = writeln!(v, "        2'd{b}: rdata = q{b};");
                }
                v += "        default: rdata = 16'd0;\n    endcase\nend\n";
            }
        }
        Verilog::Custom(v)
    }
}

/// Why yosys' SPRAM simulation model cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum SpramModelError {
    #[error("{file}: no module SB_SPRAM256KA")]
    NoModule { file: String },
    #[error("{file}: SB_SPRAM256KA has no endmodule")]
    NoEndmodule { file: String },
    #[error("yosys' iCE40 simulation models not found (tried {tried}); install yosys")]
    NotFound { tried: String },
}

/// Yosys' own simulation model of SB_SPRAM256KA (from its `ice40/cells_sim.v`), for
/// simulators of a board top that instantiates it.
pub fn spram_sim_model() -> Result<String, SpramModelError> {
    let dirs = ["/usr/share/yosys", "/usr/local/share/yosys"];
    let mut tried = vec![];
    let mut candidates: Vec<std::path::PathBuf> =
        dirs.iter().map(std::path::PathBuf::from).collect();
    if let Ok(out) = std::process::Command::new("yosys-config")
        .arg("--datdir")
        .output()
    {
        let d = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !d.is_empty() {
            candidates.insert(0, d.into());
        }
    }
    for d in candidates {
        let p = d.join("ice40/cells_sim.v");
        tried.push(p.display().to_string());
        if let Ok(text) = std::fs::read_to_string(&p) {
            let start =
                text.find("module SB_SPRAM256KA")
                    .ok_or_else(|| SpramModelError::NoModule {
                        file: p.display().to_string(),
                    })?;
            let end =
                text[start..]
                    .find("endmodule")
                    .ok_or_else(|| SpramModelError::NoEndmodule {
                        file: p.display().to_string(),
                    })?;
            return Ok(text[start..start + end + "endmodule".len()].to_string() + "\n");
        }
    }
    Err(SpramModelError::NotFound {
        tried: tried.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spram_model_is_yosys_own() {
        if !edgeflow_flow::tools::tool_for_test(edgeflow_flow::tools::YOSYS) {
            return;
        }
        let m = spram_sim_model().unwrap();
        assert!(m.starts_with("module SB_SPRAM256KA") && m.trim_end().ends_with("endmodule"));
        assert!(m.contains("DATAOUT <= mem[ADDRESS]"));
    }

    #[test]
    fn spram_banks_follow_the_depth() {
        let mut m = DataMemory::new(DataMemoryKind::Spram, 2 * SPRAM_WORDS);
        m.connect_all();
        let Verilog::Custom(v) = m.hdl() else {
            panic!("custom Verilog expected")
        };
        assert_eq!(v.matches("SB_SPRAM256KA spram").count(), 2);
        assert!(v.contains(".CHIPSELECT(addr[15:14] == 2'd1)"));
    }
}
