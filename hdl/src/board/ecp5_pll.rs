//! The ECP5 PLL (EHXPLLL) in the feedback mode `ecppll` writes (CLKOP fed back): the divider
//! search over the sysCLOCK limits, and the primitive's Verilog. The board top holds it in a
//! `ClockSource` (ice40_pll.rs), which passes the reference clock through in simulation.

/// Divider settings of one EHXPLLL: output = input · `clkfb_div` / `clki_div`, the VCO at
/// output · `clkop_div`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ecp5PllParams {
    pub clki_div: u32,
    pub clkfb_div: u32,
    pub clkop_div: u32,
    pub achieved_mhz: f64,
}

/// The sysCLOCK limits `ecppll` checks (MHz): input, phase detector, VCO, output.
const INPUT: (f64, f64) = (8.0, 400.0);
const PFD: (f64, f64) = (3.125, 400.0);
const VCO: (f64, f64) = (400.0, 800.0);
const OUTPUT: (f64, f64) = (10.0, 400.0);

/// The settings whose output is closest to `want_mhz` without exceeding it (timing closure is
/// checked at the requested frequency, so overshooting would void it); among equal outputs
/// the smallest input divider, and the VCO nearest 600 MHz.
pub fn ecp5_pll_params(fin_mhz: f64, want_mhz: f64) -> Option<Ecp5PllParams> {
    let within = |x: f64, r: (f64, f64)| x >= r.0 - 1e-9 && x <= r.1 + 1e-9;
    if !within(fin_mhz, INPUT) {
        return None;
    }
    let mut best: Option<Ecp5PllParams> = None;
    for clki_div in 1..=128u32 {
        let pfd = fin_mhz / clki_div as f64;
        if !within(pfd, PFD) {
            continue;
        }
        for clkfb_div in 1..=80u32 {
            let fout = pfd * clkfb_div as f64;
            if !within(fout, OUTPUT) || fout > want_mhz + 1e-9 {
                continue;
            }
            // the VCO nearest the middle of its range, as ecppll chooses
            let Some(clkop_div) = (1..=128u32)
                .filter(|d| within(fout * *d as f64, VCO))
                .min_by(|a, b| {
                    let off = |d: &u32| (fout * *d as f64 - 600.0).abs();
                    off(a).total_cmp(&off(b))
                })
            else {
                continue;
            };
            if best.map_or(true, |b| fout > b.achieved_mhz + 1e-9) {
                best = Some(Ecp5PllParams {
                    clki_div,
                    clkfb_div,
                    clkop_div,
                    achieved_mhz: fout,
                });
            }
        }
    }
    best
}

/// The EHXPLLL with its reference on `clock_in`, CLKOP (fed back) driving `out`.
pub fn ehxplll_verilog(p: &Ecp5PllParams, out: &str) -> String {
    format!(
        "(* FREQUENCY_PIN_CLKI=\"{fin}\", FREQUENCY_PIN_CLKOP=\"{fout:.6}\", ICP_CURRENT=\"12\", LPF_RESISTOR=\"8\", MFG_ENABLE_FILTEROPAMP=\"1\", MFG_GMCREF_SEL=\"2\" *)\n\
EHXPLLL #(.PLLRST_ENA(\"DISABLED\"), .INTFB_WAKE(\"DISABLED\"), .STDBY_ENABLE(\"DISABLED\"), .DPHASE_SOURCE(\"DISABLED\"),\n\
  .OUTDIVIDER_MUXA(\"DIVA\"), .OUTDIVIDER_MUXB(\"DIVB\"), .OUTDIVIDER_MUXC(\"DIVC\"), .OUTDIVIDER_MUXD(\"DIVD\"),\n\
  .CLKI_DIV({}), .CLKOP_ENABLE(\"ENABLED\"), .CLKOP_DIV({}), .CLKOP_CPHASE({}), .CLKOP_FPHASE(0),\n\
  .FEEDBK_PATH(\"CLKOP\"), .CLKFB_DIV({})) pll_i (\n\
  .RST(1'b0), .STDBY(1'b0), .CLKI(clock_in), .CLKOP({out}), .CLKFB({out}), .CLKINTFB(),\n\
  .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1), .PHASESTEP(1'b1), .PHASELOADREG(1'b1),\n\
  .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK(locked));\n",
        p.clki_div,
        p.clkop_div,
        p.clkop_div - 1,
        p.clkfb_div,
        fin = p.achieved_mhz * p.clki_div as f64 / p.clkfb_div as f64,
        fout = p.achieved_mhz,
    )
}

/// A behavioural EHXPLLL for Verilator: the output is the reference clock, always locked.
pub const EHXPLLL_SIM_MODEL: &str = "module EHXPLLL #(parameter PLLRST_ENA = \"DISABLED\", parameter INTFB_WAKE = \"DISABLED\",\n\
  parameter STDBY_ENABLE = \"DISABLED\", parameter DPHASE_SOURCE = \"DISABLED\", parameter OUTDIVIDER_MUXA = \"DIVA\",\n\
  parameter OUTDIVIDER_MUXB = \"DIVB\", parameter OUTDIVIDER_MUXC = \"DIVC\", parameter OUTDIVIDER_MUXD = \"DIVD\",\n\
  parameter CLKI_DIV = 1, parameter CLKOP_ENABLE = \"ENABLED\", parameter CLKOP_DIV = 1, parameter CLKOP_CPHASE = 0,\n\
  parameter CLKOP_FPHASE = 0, parameter FEEDBK_PATH = \"CLKOP\", parameter CLKFB_DIV = 1) (\n\
  input RST, input STDBY, input CLKI, output CLKOP, input CLKFB, output CLKINTFB, input PHASESEL0,\n\
  input PHASESEL1, input PHASEDIR, input PHASESTEP, input PHASELOADREG, input PLLWAKESYNC, input ENCLKOP,\n\
  output LOCK);\n\
  assign CLKOP = CLKI;\n  assign CLKINTFB = 1'b0;\n  assign LOCK = 1'b1;\n\
  wire _unused = &{1'b0, RST, STDBY, CLKFB, PHASESEL0, PHASESEL1, PHASEDIR, PHASESTEP, PHASELOADREG, PLLWAKESYNC, ENCLKOP};\n\
endmodule\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dividers_meet_the_sysclock_limits_and_the_request() {
        for want in [12.5, 20.0, 28.125, 30.0, 50.0, 62.5, 75.0, 100.0] {
            let p = ecp5_pll_params(25.0, want).unwrap();
            let pfd = 25.0 / p.clki_div as f64;
            let fout = pfd * p.clkfb_div as f64;
            let vco = fout * p.clkop_div as f64;
            assert!((400.0..=800.0).contains(&vco), "{want}: vco {vco}");
            assert!((fout - p.achieved_mhz).abs() < 1e-9);
            assert!(
                p.achieved_mhz <= want + 1e-9 && p.achieved_mhz > want * 0.98,
                "{want}: {p:?}"
            );
        }
        // 25 MHz · 2 = 50 MHz exactly, the VCO at 50 · 12 = 600 MHz
        let p = ecp5_pll_params(25.0, 50.0).unwrap();
        assert_eq!((p.clki_div, p.clkfb_div, p.clkop_div), (1, 2, 12));
        assert_eq!(p.achieved_mhz, 50.0);
        assert!(
            ecp5_pll_params(25.0, 5.0).is_none(),
            "below the output range"
        );
        let v = ehxplll_verilog(&p, "clock_out");
        assert!(
            v.contains(".CLKI_DIV(1)")
                && v.contains(".CLKFB_DIV(2)")
                && v.contains(".CLKOP_DIV(12)"),
            "{v}"
        );
        assert!(v.contains(".CLKOP_CPHASE(11)"), "{v}");
        // 33.3 MHz: 25 · 4 / 3 = 33.33 overshoots, and the phase detector's 3.125 MHz floor
        // allows input dividers up to 8 only: 25 · 9 / 7 is the fastest below
        let p = ecp5_pll_params(25.0, 33.3).unwrap();
        assert_eq!((p.clki_div, p.clkfb_div), (7, 9));
        assert!((p.achieved_mhz - 25.0 * 9.0 / 7.0).abs() < 1e-9);
    }

    /// The dividers agree with Project Trellis' `ecppll` wherever it can hit the request
    /// exactly (it picks the nearest output, above or below).
    #[test]
    fn dividers_match_ecppll() {
        use edgeflow_flow::tools::{tool_for_test, ECPPLL};
        if !tool_for_test(ECPPLL) {
            return;
        }
        let dir = std::env::temp_dir().join(format!("edgeflow-ecppll-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for want in ["50", "30", "62.5", "75", "40"] {
            ECPPLL
                .run(
                    &["-i", "25", "-o", want, "-f", "pll.v"],
                    &dir,
                    &dir.join("ecppll.log"),
                )
                .unwrap();
            let v = std::fs::read_to_string(dir.join("pll.v")).unwrap();
            let param = |k: &str| -> u32 {
                let at = v
                    .find(&format!(".{k}("))
                    .unwrap_or_else(|| panic!("{k} in {v}"));
                let rest = &v[at + k.len() + 2..];
                rest[..rest.find(')').unwrap()].trim().parse().unwrap()
            };
            let p = ecp5_pll_params(25.0, want.parse().unwrap()).unwrap();
            assert_eq!(
                (p.clki_div, p.clkfb_div, p.clkop_div),
                (param("CLKI_DIV"), param("CLKFB_DIV"), param("CLKOP_DIV")),
                "{want} MHz"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
