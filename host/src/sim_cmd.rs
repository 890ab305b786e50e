//! `edgeflow sim`: the RTL network in simulation against the reference model.

use crate::report::{emit, Format};
use anyhow::{bail, Context, Result};
use edgeflow_core::{Dataset, Spec};
use edgeflow_hdl::testbench::rtl::{check_lanes, random_data};
use serde::Serialize;
use std::fmt;
use std::path::Path;

pub fn sim_cmd(
    spec: &Path,
    samples: usize,
    data: Option<&str>,
    scale: edgeflow_core::ScaleKind,
    vcd: Option<&Path>,
    input_lanes: &str,
    json_out: bool,
) -> Result<()> {
    let spec = Spec::load(spec)?;
    let lanes = edgeflow_hdl::input_lanes::parse_lanes(&spec, input_lanes)?;
    if samples == 0 || samples > 65535 {
        bail!("--samples = {samples}: must be between 1 and 65535 (one TRAIN command of the host link)");
    }
    let data = match data {
        Some("random") => random_data(&spec, samples, 1),
        Some(d) => {
            let (ds, ..) = crate::train::load_scaled(d, None, crate::train::Scale::Fit(scale))?;
            if ds.len() < samples {
                bail!(
                    "--data {d} has {} samples, --samples asks for {samples}",
                    ds.len()
                );
            }
            let idx: Vec<usize> = (0..samples).collect();
            ds.encode(&spec, &idx)
                .with_context(|| format!("--data {d} does not fit spec '{}'", spec.name))?
        }
        None => {
            // The bundled digits when the spec takes 8x8 images, random samples otherwise.
            match Dataset::digits().ok().and_then(|ds| {
                ds.encode(&spec, &(0..samples.min(ds.len())).collect::<Vec<_>>())
                    .ok()
            }) {
                Some(d) if d.len() == samples => d,
                _ => random_data(&spec, samples, 1),
            }
        }
    };
    let bar = crate::ui::spinner(&format!(
        "simulating '{}' ({lanes} input lanes): load, train {samples}, infer, read back",
        spec.name
    ));
    // the waveform goes to a temporary file beside --vcd and replaces it only when complete
    let tmp = vcd
        .map(|v| edgeflow_flow::temp_beside(v, "vcd"))
        .transpose()?;
    if let Some(t) = &tmp {
        crate::util::remove_on_interrupt(t);
    }
    let rep = check_lanes(&spec, &data, tmp.as_deref(), lanes);
    crate::util::forget_on_interrupt();
    let rep = match (rep, &tmp, vcd) {
        (Ok(rep), Some(t), Some(v)) => edgeflow_flow::commit_temp(t, v).map(|_| rep)?,
        (Ok(rep), _, _) => rep,
        (Err(e), t, _) => {
            if let Some(t) = t {
                let _ = std::fs::remove_file(t);
            }
            bail!("{e}")
        }
    };
    bar.finish_and_clear();
    let r = Simulated {
        spec: &spec.name,
        bit_exact: rep.bit_exact,
        first_difference: rep.first_difference.as_deref(),
        samples: rep.samples,
        clocks: rep.clocks,
        train_clocks: rep.train_clocks,
        infer_clocks: rep.infer_clocks,
        clocks_per_sample: rep.train_steady_clocks_per_sample,
        infer_clocks_per_sample: rep.infer_steady_clocks_per_sample,
        block_cycle_clocks: rep.block_cycle_clocks,
        input_lanes: rep.input_lanes,
        state_sha256: &rep.state_sha256,
        sim_clocks_per_second: rep.sim_clocks_per_second.round(),
        vcd,
    };
    emit(&r, Format::json(json_out));
    if let Some(d) = rep.first_difference {
        bail!("RTL differs from the reference model: {d}");
    }
    Ok(())
}

/// `edgeflow sim`'s report: the RTL's run and its comparison with the reference model.
#[derive(Serialize)]
struct Simulated<'a> {
    spec: &'a str,
    bit_exact: bool,
    first_difference: Option<&'a str>,
    samples: usize,
    clocks: u64,
    train_clocks: u64,
    infer_clocks: u64,
    /// Steady-state training clocks per sample.
    clocks_per_sample: u64,
    infer_clocks_per_sample: u64,
    block_cycle_clocks: usize,
    input_lanes: usize,
    state_sha256: &'a str,
    sim_clocks_per_second: f64,
    #[serde(skip)]
    vcd: Option<&'a Path>,
}

impl fmt::Display for Simulated<'_> {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            w,
            "spec '{}': {} samples trained, inferred and read back",
            self.spec, self.samples
        )?;
        writeln!(
            w,
            "  block cycle            {} clocks (C = max C_i)",
            self.block_cycle_clocks
        )?;
        writeln!(
            w,
            "  input lanes            {} sample words per clock",
            self.input_lanes
        )?;
        writeln!(
            w,
            "  training, steady state {} clocks/sample ({} clocks for the whole stream)",
            self.clocks_per_sample, self.train_clocks
        )?;
        writeln!(
            w,
            "  inference              {} clocks/sample ({} clocks)",
            self.infer_clocks_per_sample, self.infer_clocks
        )?;
        writeln!(
            w,
            "  simulated              {} clocks at {:.0} clocks/s",
            self.clocks, self.sim_clocks_per_second
        )?;
        writeln!(w, "  state sha256           {}", self.state_sha256)?;
        if let Some(v) = self.vcd {
            writeln!(w, "  waveform               {}", v.display())?;
        }
        writeln!(
            w,
            "  bit-exact with the reference model: {}",
            if self.bit_exact { "yes" } else { "NO" }
        )
    }
}
