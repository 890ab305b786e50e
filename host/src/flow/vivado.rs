//! `edgeflow vivado`: a Vivado project script (TCL, XDC, Verilog) for a Xilinx board.

use super::*;
use crate::report::{emit, Format};
use crate::util::write_atomic;
use anyhow::{bail, Result};
use edgeflow_hdl::boards::{board, boards, xdc};
use edgeflow_hdl::design::board_top_verilog;
use std::path::Path;

pub fn vivado_cmd(
    spec: Option<&Path>,
    standin: Option<&str>,
    bname: &str,
    out: &Path,
    freq: Option<f64>,
    baud: u32,
    json: bool,
) -> Result<()> {
    let b = board(bname)?;
    let inner = inner(spec, standin)?.for_board(b);
    if b.target != "xc7a100t" {
        let x: Vec<_> = boards()
            .iter()
            .filter(|b| b.target == "xc7a100t")
            .map(|b| b.name)
            .collect();
        bail!("the Vivado export is for Xilinx boards ({}); {} builds its bitstream in the open flow: use `edgeflow bitstream --board {}`", x.join(", "), b.name, b.name);
    }
    let mhz = crate::flow::check::clock_mhz(b, freq)?;
    let top = board_top_verilog(&inner, b, mhz, baud)?;
    let name = format!("{}-{}", inner.name(), b.name);
    check_out_files(
        spec,
        out,
        &[
            "top.v".into(),
            format!("{}.xdc", b.name),
            "build.tcl".into(),
        ],
    )?;
    write_atomic(&out.join("top.v"), top.verilog.as_bytes())?;
    write_atomic(
        &out.join(format!("{}.xdc", b.name)),
        xdc(b, b.osc_mhz).as_bytes(),
    )?;
    let tcl = format!(
        "# Vivado batch build for {name} (written by edgeflow). Run: vivado -mode batch -source build.tcl\n\
# The design runs at {:.3} MHz from the board's {} MHz oscillator through an MMCM.\n\
set here [file dirname [file normalize [info script]]]\n\
create_project -force {name} $here/vivado -part xc7a100tcsg324-1\n\
add_files -norecurse $here/top.v\n\
add_files -fileset constrs_1 -norecurse $here/{}.xdc\n\
set_property top top [current_fileset]\n\
launch_runs synth_1 -jobs 4\nwait_on_run synth_1\n\
launch_runs impl_1 -to_step write_bitstream -jobs 4\nwait_on_run impl_1\n\
open_run impl_1\n\
report_utilization -file $here/utilization.rpt\n\
report_timing_summary -file $here/timing.rpt\n\
file copy -force $here/vivado/{name}.runs/impl_1/top.bit $here/{name}.bit\n\
puts \"edgeflow: wrote $here/{name}.bit\"\n",
        top.mhz,
        b.osc_mhz,
        b.name
    );
    write_atomic(&out.join("build.tcl"), tcl.as_bytes())?;
    let files = [
        "top.v".to_string(),
        format!("{}.xdc", b.name),
        "build.tcl".into(),
    ];
    let r = Exported {
        design: inner.name(),
        board: b.name,
        clock_mhz: top.mhz,
        dir: out.display().to_string(),
        files: files.to_vec(),
        osc_mhz: b.osc_mhz,
    };
    emit(&r, Format::json(json));
    Ok(())
}

/// `edgeflow vivado`'s report: the project's files.
#[derive(serde::Serialize)]
struct Exported {
    design: String,
    board: &'static str,
    clock_mhz: f64,
    dir: String,
    files: Vec<String>,
    #[serde(skip)]
    osc_mhz: f64,
}

impl std::fmt::Display for Exported {
    fn fmt(&self, w: &mut std::fmt::Formatter) -> std::fmt::Result {
        writeln!(w, "wrote a Vivado project script to {} ({}); build with: cd {} && vivado -mode batch -source build.tcl", self.dir, self.files.join(", "), self.dir)?;
        writeln!(
            w,
            "the design runs at {:.3} MHz (MMCM from {} MHz)",
            self.clock_mhz, self.osc_mhz
        )
    }
}
