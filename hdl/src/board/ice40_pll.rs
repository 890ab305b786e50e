//! The iCE40 PLL (SB_PLL40_PAD / SB_PLL40_CORE) as a rust-hdl wrapper, with the divider
//! search `icepll` does, written from the iCE40 sysCLOCK limits. In simulation it passes the
//! reference clock through: the design is synchronous to one clock, so only the cycle
//! sequence matters, not the period.

use rust_hdl::prelude::*;

/// Divider settings of the iCE40 PLL in SIMPLE feedback mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PllParams {
    pub divr: u8,
    pub divf: u8,
    pub divq: u8,
    pub filter_range: u8,
    pub achieved_mhz: f64,
}

/// The settings whose output is closest to `want_mhz` without exceeding it (timing closure
/// is checked at the requested frequency, so overshooting would void it).
pub fn pll_params(fin_mhz: f64, want_mhz: f64) -> Option<PllParams> {
    let mut best: Option<PllParams> = None;
    for divr in 0..16u8 {
        let pfd = fin_mhz / (divr as f64 + 1.0);
        if !(10.0..=133.0).contains(&pfd) {
            continue;
        }
        for divf in 0..128u8 {
            let vco = pfd * (divf as f64 + 1.0);
            if !(533.0..=1066.0).contains(&vco) {
                continue;
            }
            for divq in 1..7u8 {
                let fout = vco / f64::from(1u32 << divq);
                if !(16.0..=275.0).contains(&fout) || fout > want_mhz + 1e-9 {
                    continue;
                }
                if best.map_or(true, |b| fout > b.achieved_mhz + 1e-9) {
                    let filter_range = match pfd {
                        p if p < 17.0 => 1,
                        p if p < 26.0 => 2,
                        p if p < 44.0 => 3,
                        p if p < 66.0 => 4,
                        p if p < 101.0 => 5,
                        _ => 6,
                    };
                    best = Some(PllParams {
                        divr,
                        divf,
                        divq,
                        filter_range,
                        achieved_mhz: fout,
                    });
                }
            }
        }
    }
    best
}

/// How the board clock reaches the design.
#[derive(Clone, Debug, PartialEq)]
pub enum ClockSource {
    /// The oscillator drives the design directly.
    Direct,
    /// SB_PLL40_PAD: the oscillator pin is the PLL's dedicated pad (iCEBreaker pin 35).
    PllPad(PllParams),
    /// SB_PLL40_CORE: the oscillator enters the fabric first (Alchitry Cu, pin P7).
    PllCore(PllParams),
    /// Xilinx 7-series MMCME2_BASE + BUFG: (multiplier, input divider, output divider).
    Mmcm(u32, u32, u32),
    /// ECP5 EHXPLLL (ecp5_pll.rs).
    Ecp5Pll(crate::ecp5_pll::Ecp5PllParams),
    /// Another source divided by an even number in the fabric (a counter's top bit on a global
    /// buffer): the iCE40 PLL makes nothing below 16 MHz, and a design whose real Fmax is lower
    /// still has to run on the board.
    Divided(Box<ClockSource>, u32),
}

/// MMCM settings from a 100 MHz-class input: VCO 600–1200 MHz (speed grade -1), output
/// closest to `want_mhz` without exceeding it. Returns (M, D, O, achieved MHz).
pub fn mmcm_params(fin_mhz: f64, want_mhz: f64) -> Option<(u32, u32, u32, f64)> {
    let mut best: Option<(u32, u32, u32, f64)> = None;
    for d in 1..=10u32 {
        for m in 2..=64u32 {
            let vco = fin_mhz * m as f64 / d as f64;
            if !(600.0..=1200.0).contains(&vco) {
                continue;
            }
            for o in 1..=128u32 {
                let f = vco / o as f64;
                if f <= want_mhz + 1e-9 && best.map_or(true, |b| f > b.3 + 1e-9) {
                    best = Some((m, d, o, f));
                }
            }
        }
    }
    best
}

#[derive(LogicBlock)]
pub struct Ice40Pll {
    pub clock_in: Signal<In, Clock>,
    pub clock_out: Signal<Out, Clock>,
    pub locked: Signal<Out, Bit>,
    source: ClockSource,
}

impl Ice40Pll {
    pub fn new(source: ClockSource) -> Self {
        Self {
            clock_in: Default::default(),
            clock_out: Default::default(),
            locked: Default::default(),
            source,
        }
    }
}

impl Logic for Ice40Pll {
    fn update(&mut self) {
        self.clock_out.next = self.clock_in.val();
        self.locked.next = true;
    }
    fn connect(&mut self) {
        self.clock_out.connect();
        self.locked.connect();
    }
    fn hdl(&self) -> Verilog {
        let code = source_verilog(&self.source, "clock_out");
        // No black-box declaration: yosys' synth_ice40 knows the primitives, and simulators
        // get the behavioural model from `pll_sim_model`.
        Verilog::Wrapper(Wrapper {
            code,
            cores: String::new(),
        })
    }
}

/// An iCE40 PLL primitive with its reference on `input` and its global output driving `out`.
fn pll_instance(prim: &str, input: &str, out: &str, p: &PllParams, extra: &str) -> String {
    format!(
        "{prim} #(.FEEDBACK_PATH(\"SIMPLE\"),{extra} .DIVR(4'd{}), .DIVF(7'd{}), .DIVQ(3'd{}), .FILTER_RANGE(3'd{})) pll_i (\n  .{input}(clock_in), .PLLOUTGLOBAL({out}), .LOCK(locked), .RESETB(1'b1), .BYPASS(1'b0));\n",
        p.divr, p.divf, p.divq, p.filter_range
    )
}

/// The Verilog of a clock source driving `out` (and `locked`) from `clock_in`.
fn source_verilog(src: &ClockSource, out: &str) -> String {
    match src {
        ClockSource::Direct => format!("assign {out} = clock_in;\nassign locked = 1'b1;\n"),
        ClockSource::PllPad(p) => pll_instance("SB_PLL40_PAD", "PACKAGEPIN", out, p, ""),
        ClockSource::PllCore(p) => pll_instance(
            "SB_PLL40_CORE",
            "REFERENCECLK",
            out,
            p,
            " .PLLOUT_SELECT(\"GENCLK\"),",
        ),
        ClockSource::Mmcm(m, d, o) => format!(
            "wire clk_fb, clk_unbuf;\nMMCME2_BASE #(.CLKIN1_PERIOD(10.0), .CLKFBOUT_MULT_F({m}), .DIVCLK_DIVIDE({d}), .CLKOUT0_DIVIDE_F({o})) mmcm_i (\n  .CLKIN1(clock_in), .CLKFBIN(clk_fb), .CLKFBOUT(clk_fb), .CLKOUT0(clk_unbuf), .LOCKED(locked), .RST(1'b0), .PWRDWN(1'b0));\nBUFG bufg_i (.I(clk_unbuf), .O({out}));\n"
        ),
        ClockSource::Ecp5Pll(p) => crate::ecp5_pll::ehxplll_verilog(p, out),
        ClockSource::Divided(inner, n) => {
            assert!(*n >= 2 && n % 2 == 0, "an even divider keeps a 50% duty cycle");
            let bits = (32 - (n / 2 - 1).leading_zeros()).max(1);
            format!(
                "wire clock_fast;\n{}reg [{hi}:0] div_count = 0;\nreg div_q = 1'b0;\n\
                 always @(posedge clock_fast) begin\n  if (div_count == {top}) begin div_count <= 0; div_q <= ~div_q; end\n  else div_count <= div_count + 1'b1;\nend\n\
                 SB_GB div_gb (.USER_SIGNAL_TO_GLOBAL_BUFFER(div_q), .GLOBAL_BUFFER_OUTPUT({out}));\n",
                source_verilog(inner, "clock_fast"),
                hi = bits - 1,
                top = n / 2 - 1,
            )
        }
    }
}

/// A behavioural stand-in for the PLL primitives so Verilator can simulate a board top: the
/// output clock is the input clock and the PLL is locked.
pub fn pll_sim_model() -> &'static str {
    "// Simulation model: the PLL passes its reference clock through (one clock domain).\n\
module SB_PLL40_PAD #(parameter FEEDBACK_PATH = \"SIMPLE\", parameter DIVR = 4'd0, parameter DIVF = 7'd0,\n\
  parameter DIVQ = 3'd0, parameter FILTER_RANGE = 3'd0) (\n\
  input PACKAGEPIN, output PLLOUTGLOBAL, output LOCK, input RESETB, input BYPASS);\n\
  assign PLLOUTGLOBAL = PACKAGEPIN;\n  assign LOCK = 1'b1;\n\
  wire _unused = &{1'b0, RESETB, BYPASS};\nendmodule\n\
module SB_PLL40_CORE #(parameter FEEDBACK_PATH = \"SIMPLE\", parameter PLLOUT_SELECT = \"GENCLK\",\n\
  parameter DIVR = 4'd0, parameter DIVF = 7'd0, parameter DIVQ = 3'd0, parameter FILTER_RANGE = 3'd0) (\n\
  input REFERENCECLK, output PLLOUTGLOBAL, output LOCK, input RESETB, input BYPASS);\n\
  assign PLLOUTGLOBAL = REFERENCECLK;\n  assign LOCK = 1'b1;\n\
  wire _unused = &{1'b0, RESETB, BYPASS};\nendmodule\n\
module SB_GB (input USER_SIGNAL_TO_GLOBAL_BUFFER, output GLOBAL_BUFFER_OUTPUT);\n\
  assign GLOBAL_BUFFER_OUTPUT = USER_SIGNAL_TO_GLOBAL_BUFFER;\nendmodule\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dividers_meet_the_sysclock_limits_and_the_request() {
        for want in [20.0, 25.0, 30.0, 33.3, 48.0, 50.0, 60.0, 100.0] {
            let p = pll_params(12.0, want).unwrap();
            let pfd = 12.0 / (p.divr as f64 + 1.0);
            let vco = pfd * (p.divf as f64 + 1.0);
            assert!((533.0..=1066.0).contains(&vco), "{want}: vco {vco}");
            assert!((vco / f64::from(1u32 << p.divq) - p.achieved_mhz).abs() < 1e-9);
            assert!(
                p.achieved_mhz <= want + 1e-9 && p.achieved_mhz > want * 0.97,
                "{want}: {p:?}"
            );
        }
        // 12 MHz × 5 / 2 = 30 MHz exactly: VCO 960 MHz, DIVQ 5 (÷32) needs DIVF 79.
        let p = pll_params(12.0, 30.0).unwrap();
        assert_eq!(p.achieved_mhz, 30.0);
        assert!(
            pll_params(12.0, 5.0).is_none(),
            "below the PLL's output range"
        );
    }

    #[test]
    fn verilog_instantiates_the_primitive() {
        let p = pll_params(12.0, 30.0).unwrap();
        let mut pll = Ice40Pll::new(ClockSource::PllPad(p));
        pll.connect_all();
        let v = generate_verilog(&pll);
        assert!(
            v.contains("SB_PLL40_PAD") && v.contains(&format!("DIVF(7'd{})", p.divf)),
            "{v}"
        );
    }

    #[test]
    fn a_divided_clock_synthesizes_to_a_counter_on_a_global_buffer() {
        // the PLL at 130.5 MHz divided by 14 (the iCEBreaker's fastest clock ≤ 9.35 MHz)
        let p = pll_params(12.0, 130.5).unwrap();
        let mut pll = Ice40Pll::new(ClockSource::Divided(Box::new(ClockSource::PllPad(p)), 14));
        pll.connect_all();
        let v = generate_verilog(&pll);
        assert!(v.contains("div_count == 6"), "{v}");
        if !edgeflow_flow::tools::YOSYS.available() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "yosys is required under CI"
            );
            return;
        }
        let dir = std::env::temp_dir().join(format!("edgeflow-divclk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.v"), &v).unwrap();
        let out = edgeflow_flow::tools::YOSYS
            .run(
                &["-p", "read_verilog t.v; synth_ice40 -top top; stat"],
                &dir,
                &dir.join("yosys.log"),
            )
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        for cell in ["SB_PLL40_PAD", "SB_GB", "SB_DFF"] {
            assert!(out.contains(cell), "{cell} missing:\n{out}");
        }
    }
}

// The clock plan is configuration, not hardware: a leaf "block" with no signals, so the
// derived `Block` of `Ice40Pll` can hold it (derive requires every field to be a block).
impl Logic for ClockSource {
    fn update(&mut self) {}
    fn connect(&mut self) {}
    fn hdl(&self) -> Verilog {
        Verilog::Empty
    }
}

impl Block for ClockSource {
    fn connect_all(&mut self) {}
    fn update_all(&mut self) {}
    fn has_changed(&self) -> bool {
        false
    }
    fn accept(&self, _name: &str, _probe: &mut dyn Probe) {}
}
