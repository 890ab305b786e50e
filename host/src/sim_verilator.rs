//! `edgeflow sim --engine verilator`: the emitted Verilog, compiled by Verilator with the
//! generated harness, run through a whole host-link session and held against the reference
//! model bit for bit. Much faster than the rust-hdl simulation, and it checks the Verilog
//! itself rather than the rust-hdl models.

use crate::report::{emit, Format, Written};
use anyhow::{anyhow, bail, Result};
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_flow::verilator;
use edgeflow_hdl::testbench::rtl::check_stream_lanes;
use edgeflow_reference::Reference;
use serde_json::json;
use std::fmt::Write as _;

pub fn sim_verilator(spec: &Spec, data: &Encoded, lanes: usize, json_out: bool) -> Result<()> {
    let (words, reply) = check_stream_lanes(spec, data, lanes);
    let pb = crate::ui::spinner(&format!("building the Verilator model of '{}'", spec.name));
    let dir = std::env::temp_dir().join(format!(
        "edgeflow-sim-verilator-{}-{}",
        spec.name,
        std::process::id()
    ));
    let built = verilator::build(&dir, &edgeflow_hdl::verilog_lanes(spec, lanes));
    pb.set_message(format!(
        "simulating '{}': load, train {}, infer, read back",
        spec.name,
        data.len()
    ));
    let run = built
        .as_ref()
        .map_err(|e| anyhow!("{e:#}"))
        .and_then(|h| h.run_batch(&words, reply, 0, u64::MAX / 2));
    pb.finish_and_clear();
    let h = built?;
    let got = run?;
    let _ = std::fs::remove_dir_all(&dir);
    let n = data.len();
    let state_words = reply - 8 - n;
    let w = &got.words;
    let acks = [
        (0, 0xA001u16),
        (1, 0xA002),
        (4 + n, 0xA003),
        (reply - 1, 0xA004),
    ];
    if let Some((i, a)) = acks.iter().find(|(i, a)| w[*i] != *a) {
        bail!(
            "Verilator answer word {i}: expected acknowledgement {a:#06x}, got {:#06x}",
            w[*i]
        );
    }
    let train_clocks = w[2] as u64 | (w[3] as u64) << 16;
    let infer_clocks = w[5 + n] as u64 | (w[6 + n] as u64) << 16;
    let preds: Vec<usize> = w[4..4 + n].iter().map(|&p| p as usize).collect();
    let mut it = w[7 + n..7 + n + state_words]
        .iter()
        .map(|&v| v as i16 as i32);
    let l = spec.junctions();
    let state = State {
        weights: (0..l)
            .map(|j| it.by_ref().take(spec.layers[j] * spec.fan_out[j]).collect())
            .collect(),
        biases: (0..l)
            .map(|j| it.by_ref().take(spec.layers[j + 1]).collect())
            .collect(),
    };
    let mut r = Reference::new(spec);
    r.train(data);
    let mut diff = r.state.first_difference(&state, Some(&r.patterns));
    if diff.is_none() {
        diff =
            edgeflow_hdl::testbench::rtl::first_prediction_difference(&r.infer(data), &preds[..n]);
    }
    let cps = got.clocks as f64 / got.seconds.max(1e-9);
    let mut w = String::new();
    writeln!(
        w,
        "spec '{}' in Verilator: {n} samples trained, inferred and read back",
        spec.name
    )?;
    writeln!(
        w,
        "  training               {train_clocks} device clocks ({:.1} per sample)",
        train_clocks as f64 / n as f64
    )?;
    writeln!(
        w,
        "  inference              {infer_clocks} device clocks ({:.1} per sample)",
        infer_clocks as f64 / n as f64
    )?;
    writeln!(w, "  input lanes            {lanes} sample words per clock")?;
    writeln!(
        w,
        "  simulated              {} clocks at {cps:.0} clocks/s (build {:.1} s)",
        got.clocks, h.build_seconds
    )?;
    writeln!(w, "  state sha256           {}", state.sha256())?;
    writeln!(
        w,
        "  bit-exact with the reference model: {}",
        if diff.is_none() { "yes" } else { "NO" }
    )?;
    emit(
        &Written {
            value: json!({
                "spec": spec.name, "engine": "verilator", "bit_exact": diff.is_none(), "first_difference": diff,
                "samples": n, "input_lanes": lanes, "train_clocks": train_clocks,
                "train_clocks_per_sample": train_clocks as f64 / n as f64,
                "infer_clocks_per_sample": infer_clocks as f64 / n as f64, "infer_clocks": infer_clocks, "clocks": got.clocks,
                "state_sha256": state.sha256(), "sim_clocks_per_second": cps.round(),
                "verilator_build_seconds": h.build_seconds,
            }),
            text: w,
        },
        Format::json(json_out),
    );
    if let Some(d) = diff {
        bail!("the Verilog in Verilator differs from the reference model: {d}");
    }
    Ok(())
}

/// The `edgeflow sim --engine verilator` entry: the same samples `edgeflow sim` would use.
pub fn sim_cmd(
    spec: &std::path::Path,
    samples: usize,
    data: Option<&str>,
    scale: edgeflow_core::ScaleKind,
    vcd: bool,
    input_lanes: &str,
    json_out: bool,
) -> Result<()> {
    if vcd {
        bail!("--vcd is for the rust-hdl engine; the Verilator engine does not trace");
    }
    let spec = Spec::load(spec)?;
    let lanes = edgeflow_hdl::input_lanes::parse_lanes(&spec, input_lanes)?;
    let data = sim_data(&spec, samples, data, scale)?;
    sim_verilator(&spec, &data, lanes, json_out)
}

/// The samples `edgeflow sim` trains on: `--data` (digits by default when the spec takes 64
/// inputs, random samples otherwise), the first `samples` of them.
pub fn sim_data(
    spec: &Spec,
    samples: usize,
    data: Option<&str>,
    scale: edgeflow_core::ScaleKind,
) -> Result<Encoded> {
    if samples == 0 || samples > 65535 {
        bail!("--samples = {samples}: must be between 1 and 65535 (one TRAIN command of the host link)");
    }
    Ok(match data {
        Some("random") | None if data.is_some() || spec.layers[0] != 64 => {
            edgeflow_hdl::testbench::rtl::random_data(spec, samples, 1)
        }
        Some(d) => {
            let (ds, ..) = crate::train::load_scaled(d, None, crate::train::Scale::Fit(scale))?;
            if ds.len() < samples {
                bail!(
                    "--data {d} has {} samples, --samples asks for {samples}",
                    ds.len()
                );
            }
            ds.encode(spec, &(0..samples).collect::<Vec<_>>())?
        }
        None => {
            let ds = edgeflow_core::Dataset::digits()?;
            ds.encode(spec, &(0..samples.min(ds.len())).collect::<Vec<_>>())?
        }
    })
}
