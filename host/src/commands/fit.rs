//! `edgeflow fit`.

use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Spec file (TOML): its network stays as it is; only its hardware choices are searched.
    #[arg(long)]
    spec: PathBuf,
    /// icebreaker, alchitry-cu, nexys4-ddr, ulx3s-85f, ulx3s-45f or ulx3s-12f.
    #[arg(long)]
    board: String,
    /// Write the chosen design's spec here (the verified one with --verify): the input spec
    /// with only z (and the pipeline choices the board leaves open) changed.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Build the listed designs with the real flow, best first, until one fits and meets
    /// timing: yosys, nextpnr and static timing on iCE40 and ECP5; yosys alone on XC7.
    #[arg(long)]
    verify: bool,
    /// Design clock in MHz the samples/s are counted at and --verify builds for (default: the
    /// board's), as `edgeflow bitstream --freq`.
    #[arg(long, value_parser = super::parse_mhz)]
    freq: Option<f64>,
    /// How many of the ranked designs to list (and at most to build with --verify).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    top: u64,
    /// nextpnr placement seed of --verify, 0 to 2147483647.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(..=i32::MAX as i64))]
    seed: u32,
    /// At most N multipliers in DSP cells in every design searched, the rest in logic (the
    /// spec's `dsp_multipliers`; written to --out): for parts whose router cannot reach all
    /// of a full design's DSPs (docs/ecp5.md).
    #[arg(long, value_name = "N")]
    dsp_multipliers: Option<usize>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", Some(&self.spec))
            .output("--out", self.out.as_deref())
    }

    pub fn exec(self) -> Result<()> {
        crate::fit_cmd::fit_cmd(crate::fit_cmd::FitArgs {
            spec: self.spec,
            board: self.board,
            out: self.out,
            verify: self.verify,
            freq: self.freq,
            top: self.top as usize,
            seed: self.seed,
            dsp_multipliers: self.dsp_multipliers,
            json: self.json,
        })
    }
}
