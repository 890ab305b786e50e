//! `edgeflow sim`: the RTL network in simulation against the reference model.

use crate::util::print_json;
use anyhow::{bail, Context, Result};
use edgeflow_core::{Dataset, Spec};
use edgeflow_sim::rtl::{check_lanes, random_data};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
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
    let lanes = edgeflow_hdl::input_lanes::parse_lanes(&spec, input_lanes)
        .map_err(|e| anyhow::anyhow!(e))?;
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
    let bar = ProgressBar::new_spinner();
    if !json_out {
        bar.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap());
        bar.set_message(format!(
            "simulating '{}' ({lanes} input lanes): load, train {samples}, infer, read back",
            spec.name
        ));
    }
    let bar = if json_out { bar } else { crate::ui::show(bar) };
    // the waveform goes to a temporary file beside --vcd and replaces it only when complete
    let tmp = vcd
        .map(|v| edgeflow_hdl::flow::temp_beside(v, "vcd"))
        .transpose()?;
    if let Some(t) = &tmp {
        crate::util::remove_on_interrupt(t);
    }
    let rep = check_lanes(&spec, &data, tmp.as_deref(), lanes);
    crate::util::forget_on_interrupt();
    let rep = match (rep, &tmp, vcd) {
        (Ok(rep), Some(t), Some(v)) => edgeflow_hdl::flow::commit_temp(t, v).map(|_| rep)?,
        (Ok(rep), _, _) => rep,
        (Err(e), t, _) => {
            if let Some(t) = t {
                let _ = std::fs::remove_file(t);
            }
            bail!("{e}")
        }
    };
    bar.finish_and_clear();
    if json_out {
        print_json(&json!({
            "spec": spec.name,
            "bit_exact": rep.bit_exact,
            "first_difference": rep.first_difference,
            "samples": rep.samples,
            "clocks": rep.clocks,
            "train_clocks": rep.train_clocks,
            "infer_clocks": rep.infer_clocks,
            "clocks_per_sample": rep.train_steady_clocks_per_sample,
            "infer_clocks_per_sample": rep.infer_steady_clocks_per_sample,
            "block_cycle_clocks": rep.block_cycle_clocks,
            "input_lanes": rep.input_lanes,
            "state_sha256": rep.state_sha256,
            "sim_clocks_per_second": rep.sim_clocks_per_second.round(),
        }));
    } else {
        println!(
            "spec '{}': {} samples trained, inferred and read back",
            spec.name, rep.samples
        );
        println!(
            "  block cycle            {} clocks (C = max C_i)",
            rep.block_cycle_clocks
        );
        println!(
            "  input lanes            {} sample words per clock",
            rep.input_lanes
        );
        println!(
            "  training, steady state {} clocks/sample ({} clocks for the whole stream)",
            rep.train_steady_clocks_per_sample, rep.train_clocks
        );
        println!(
            "  inference              {} clocks/sample ({} clocks)",
            rep.infer_steady_clocks_per_sample, rep.infer_clocks
        );
        println!(
            "  simulated              {} clocks at {:.0} clocks/s",
            rep.clocks, rep.sim_clocks_per_second
        );
        println!("  state sha256           {}", rep.state_sha256);
        if let Some(v) = vcd {
            println!("  waveform               {}", v.display());
        }
        println!(
            "  bit-exact with the reference model: {}",
            if rep.bit_exact { "yes" } else { "NO" }
        );
    }
    if let Some(d) = rep.first_difference {
        bail!("RTL differs from the reference model: {d}");
    }
    Ok(())
}
