//! A family of specs grown from one (`--sweep width|density|z`): cost per sample against edges.

use super::*;
use crate::chart::{self, Axes, LineChart};
use crate::plot::Series;
use anyhow::{bail, Result};
use edgeflow_core::Spec;
use serde::Serialize;
use serde_json::json;

/// A spec with the `z` of each junction moved to the valid value nearest (by ratio) to what
/// it asks for, or `None` when no junction can be made valid.
pub(super) fn with_valid_z(mut s: Spec) -> Option<Spec> {
    for j in 0..s.junctions() {
        let left = s.layers[j];
        if left == 0 || s.layers[j + 1] == 0 || (left * s.fan_out[j]) % s.layers[j + 1] != 0 {
            return None;
        }
        let fi = s.fan_in(j);
        let want = s.z[j].max(1) as f64;
        let best = (1..=left)
            .filter(|&z| left % z == 0 && (fi % z == 0 || z % fi == 0))
            .min_by(|&x, &y| {
                ((x as f64 / want).ln().abs())
                    .partial_cmp(&(y as f64 / want).ln().abs())
                    .unwrap()
                    .then(y.cmp(&x))
            })?;
        s.z[j] = best;
    }
    s.validate("sweep").ok()?;
    Some(s)
}

/// The specs of a sweep, each with a short label; duplicates and invalid ones left out.
pub fn sweep_specs(base: &Spec, sweep: Sweep) -> Vec<(String, Spec)> {
    let l = base.junctions();
    let mut out: Vec<(String, Spec)> = Vec::new();
    let factors: &[f64] = match sweep {
        Sweep::Width => &[0.5, 1.0, 2.0, 4.0, 8.0, 16.0],
        Sweep::Density => &[0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
        Sweep::Z => &[0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
    };
    for &k in factors {
        let mut s = base.clone();
        let scale = |x: usize| ((x as f64 * k).round() as usize).max(1);
        match sweep {
            Sweep::Width => {
                for i in 1..l {
                    s.layers[i] = scale(base.layers[i]);
                }
                // constant density: fan-out grows with the right layer
                for j in 0..l {
                    if j + 1 < l {
                        s.fan_out[j] = scale(base.fan_out[j]).min(s.layers[j + 1]);
                    }
                }
            }
            Sweep::Density => {
                for j in 0..l {
                    s.fan_out[j] = scale(base.fan_out[j]).min(s.layers[j + 1]);
                }
            }
            Sweep::Z => {
                for j in 0..l {
                    s.z[j] = scale(base.z[j]).min(s.layers[j]);
                }
            }
        }
        s.name = format!("{}-{}x{k}", base.name, format!("{sweep:?}").to_lowercase());
        let Some(v) = (if sweep == Sweep::Z {
            s.validate("sweep").ok().map(|_| s)
        } else {
            with_valid_z(s)
        }) else {
            continue;
        };
        if out
            .iter()
            .any(|(_, o)| o.layers == v.layers && o.fan_out == v.fan_out && o.z == v.z)
        {
            continue;
        }
        out.push((format!("x{k}"), v));
    }
    out
}

#[derive(Serialize)]
struct SweepPoint {
    label: String,
    layers: Vec<usize>,
    fan_out: Vec<usize>,
    z: Vec<usize>,
    edges: usize,
    edge_ops_per_sample: u64,
    dense_weights: usize,
    multipliers: usize,
    block_cycle_clocks: usize,
    backends: Vec<Measured>,
    projections: Vec<Projection>,
}

pub(super) fn sweep_cmd(
    a: &BenchArgs,
    base: &Spec,
    sweep: Sweep,
    boards: &[BoardClocks],
    json_stdout: bool,
) -> Result<()> {
    let specs = sweep_specs(base, sweep);
    if specs.len() < 2 {
        bail!("sweep {sweep:?} of {}: fewer than 2 valid specs; start from a spec with room to grow (e.g. specs/dey-mnist.toml)", base.name);
    }
    let (train, data_name) = crate::bench_data::train_samples(base, a.data.as_deref(), a.scale)?;
    let pb = progress(json_stdout);
    let load_before = load_average();
    let mut points = Vec::new();
    for (i, (label, s)) in specs.iter().enumerate() {
        pb.set_prefix(format!("{}/{}", i + 1, specs.len()));
        let mut ctx = Ctx {
            spec: s,
            train: &train,
            samples: a.samples,
            repeat: a.repeat,
            budget: a.budget,
            minibatch: MiniBatchOpts {
                batch: a.batch,
                threads: a.threads,
            },
            ref_sha: Default::default(),
        };
        let measured: Vec<Measured> = backend_list(&a.backends, a.sweep.is_some())
            .iter()
            .map(|b| measure(&mut ctx, b, &pb))
            .collect();
        let d = s.derived();
        points.push(SweepPoint {
            label: label.clone(),
            layers: s.layers.clone(),
            fan_out: s.fan_out.clone(),
            z: s.z.clone(),
            edges: d.total_edges,
            edge_ops_per_sample: sparse_edge_ops(s),
            dense_weights: s.layers.windows(2).map(|w| w[0] * w[1]).sum(),
            multipliers: d.multipliers,
            block_cycle_clocks: d.block_cycle_clocks,
            projections: projections(s, boards, &measured),
            backends: measured,
        });
    }
    pb.finish_and_clear();
    let (xname, xof): (&str, fn(&SweepPoint) -> f64) = match sweep {
        Sweep::Z => ("multipliers (FF + BP + UP lanes)", |p| p.multipliers as f64),
        _ => ("edges (weights of the sparse network)", |p| p.edges as f64),
    };
    // one series per measured backend and per board clock
    let mut series: Vec<Series> = Vec::new();
    let names: Vec<String> = points[0]
        .backends
        .iter()
        .filter(|m| m.available)
        .map(|m| m.backend.clone())
        .collect();
    for n in &names {
        let cpu_timed = points[0]
            .backends
            .iter()
            .any(|m| &m.backend == n && m.train_samples_per_second_cpu.is_some());
        series.push(Series {
            name: format!(
                "{n} ({})",
                if cpu_timed {
                    "thread CPU time"
                } else {
                    "wall clock"
                }
            ),
            points: points
                .iter()
                .filter_map(|p| {
                    p.backends
                        .iter()
                        .find(|m| &m.backend == n && m.available)
                        .map(|m| (xof(p), 1e6 / rate(m)))
                })
                .collect(),
        });
    }
    for (bi, pr) in points[0]
        .projections
        .iter()
        .enumerate()
        .filter(|(_, p)| p.clocks_source.starts_with("spec"))
    {
        series.push(Series {
            name: format!("{} @ {:.0} MHz", pr.board, pr.clock_mhz),
            points: points
                .iter()
                .filter_map(|p| {
                    p.projections
                        .get(bi)
                        .map(|q| (xof(p), 1e6 / q.samples_per_second))
                })
                .collect(),
        });
    }
    for p in &a.plot {
        chart::line_chart(
            p,
            &LineChart {
                title: &format!(
                    "{}: cost per training sample, {} sweep",
                    base.name,
                    format!("{sweep:?}").to_lowercase()
                ),
                xlabel: xname,
                ylabel: "µs per training sample",
                series: &series,
                axes: Axes::LogLog,
            },
        )?;
    }
    let mut mach = machine();
    mach["load_average_before"] = json!(load_before);
    emit_json(
        a,
        &json!({
            "sweep": format!("{sweep:?}").to_lowercase(),
            "base_spec": base.name,
            "data": data_name,
            "samples_requested": a.samples,
            "repeat": a.repeat,
            "machine": mach,
            "x_axis": xname,
            "points": points,
        }),
    )?;
    if json_stdout {
        return Ok(());
    }
    println!(
        "{} sweep of {} (µs per training sample; boards projected at one sample per block cycle)",
        format!("{sweep:?}").to_lowercase(),
        base.name
    );
    print!(
        "{:<7} {:<18} {:<10} {:<10} {:>8} {:>6} {:>7}",
        "point", "layers", "fan_out", "z", "edges", "mults", "clocks"
    );
    for s in &series {
        print!(" {:>22}", s.name);
    }
    println!();
    for (i, p) in points.iter().enumerate() {
        let fmtv = |v: &[usize]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        print!(
            "{:<7} {:<18} {:<10} {:<10} {:>8} {:>6} {:>7}",
            p.label,
            fmtv(&p.layers),
            fmtv(&p.fan_out),
            fmtv(&p.z),
            p.edges,
            p.multipliers,
            p.block_cycle_clocks
        );
        for s in &series {
            let x = xof(p);
            // series points are in point order; find this point's value
            let v = s
                .points
                .iter()
                .filter(|q| q.0 == x)
                .nth(points[..i].iter().filter(|o| xof(o) == x).count())
                .map(|q| q.1);
            print!(
                " {:>22}",
                v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
            );
        }
        println!();
    }
    for m in points
        .iter()
        .flat_map(|p| &p.backends)
        .filter(|m| !m.available)
    {
        println!(
            "{} unavailable: {}",
            m.backend,
            m.unavailable_reason.as_deref().unwrap_or("")
        );
    }
    for p in &a.plot {
        println!("plot written to {}", p.display());
    }
    Ok(())
}
