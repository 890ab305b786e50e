//! `edgeflow sim`: the RTL against the reference model, in rust-hdl or Verilator; with
//! `--plan --linked`, a chain of boards joined by their own links.

use crate::paths::Paths;
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["spec", "plan"])))]
pub struct Args {
    /// Spec file (TOML).
    #[arg(long)]
    spec: Option<PathBuf>,
    /// A plan (from `edgeflow plan -o`): simulate its boards, each stage with its
    /// board-to-board links (needs --linked and --engine verilator).
    #[arg(long, requires = "linked")]
    plan: Option<PathBuf>,
    /// With --plan: the boards joined by their own links, each on its own clock, the host
    /// feeding the first board and reading the last.
    #[arg(long, requires = "plan")]
    linked: bool,
    /// With --linked: each board's clock is the previous one's slowed by this many parts
    /// per million, as separate oscillators differ.
    #[arg(long, default_value_t = 300.0, requires = "linked")]
    ppm: f64,
    /// Training samples (one TRAIN stream), then inferred.
    #[arg(long, default_value_t = 16)]
    samples: usize,
    /// `digits`, a CSV file, an MNIST file, or `random` (default: digits when the spec
    /// takes 64 inputs, random samples otherwise).
    #[arg(long)]
    data: Option<String>,
    /// How a CSV's values are brought into [0, 1], as for `edgeflow train`.
    #[arg(long, default_value = "feature")]
    scale: edgeflow_core::ScaleKind,
    /// Write every signal's waveform to this VCD file.
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// `rust-hdl` (the blocks' simulation models) or `verilator` (the emitted Verilog,
    /// compiled with a generated harness; far faster).
    #[arg(long, default_value = "rust-hdl")]
    engine: String,
    /// Sample words the host link takes per clock (1 to z_1), or `auto`: the fewest with
    /// which a sample's words fit in a block cycle (hdl/PROTOCOL.md, input lanes).
    #[arg(long, default_value = "auto")]
    input_lanes: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn paths(&self) -> Paths {
        Paths::new()
            .input("--spec", self.spec.as_deref())
            .input("--plan", self.plan.as_deref())
            .data("--data", self.data.as_deref())
            .output("--vcd", self.vcd.as_deref())
    }

    pub fn exec(self) -> Result<()> {
        if let Some(plan) = &self.plan {
            if self.engine != "verilator" {
                anyhow::bail!("--plan --linked runs under Verilator; add --engine verilator");
            }
            if self.vcd.is_some() {
                anyhow::bail!("--vcd is for the rust-hdl engine; the linked boards do not trace");
            }
            return crate::sim_linked::sim_linked(
                plan,
                self.samples,
                self.data.as_deref(),
                self.scale,
                self.ppm,
                self.json,
            );
        }
        let spec = self.spec.as_deref().expect("clap: --spec or --plan");
        match self.engine.as_str() {
            "verilator" => crate::sim_verilator::sim_cmd(
                spec,
                self.samples,
                self.data.as_deref(),
                self.scale,
                self.vcd.is_some(),
                &self.input_lanes,
                self.json,
            ),
            "rust-hdl" => crate::sim_cmd::sim_cmd(
                spec,
                self.samples,
                self.data.as_deref(),
                self.scale,
                self.vcd.as_deref(),
                &self.input_lanes,
                self.json,
            ),
            other => anyhow::bail!("unknown --engine '{other}'; use rust-hdl or verilator"),
        }
    }
}
