//! One spec: every backend measured, its boards projected, the table, JSON and chart.

use super::*;
use crate::chart::{self, BarChart};
use crate::report::{emit, Format, Written};
use anyhow::Result;
use edgeflow_core::Spec;
use serde_json::json;
use std::fmt::Write as _;

pub(super) fn single_cmd(a: &BenchArgs, spec: &Spec, boards: &[BoardClocks]) -> Result<()> {
    let (train, data_name) = crate::bench_data::train_samples(spec, a.data.as_deref(), a.scale)?;
    let mb = MiniBatchOpts {
        batch: a.batch,
        threads: a.threads,
    };
    // the test split is loaded before any long work: a data set without one is an error
    let split = match a.to_accuracy {
        Some(_) => Some(crate::bench_data::test_split(
            spec,
            a.data.as_deref(),
            a.scale,
        )?),
        None => None,
    };
    let pb = progress(a.json);
    let mut ctx = Ctx {
        spec,
        train: &train,
        samples: a.samples,
        repeat: a.repeat,
        budget: a.budget,
        minibatch: mb,
        ref_sha: Default::default(),
    };
    let load_before = load_average();
    let mut measured: Vec<Measured> = backend_list(&a.backends, a.sweep.is_some())
        .iter()
        .map(|b| measure(&mut ctx, b, &pb))
        .collect();
    let float = fastest_sparse_float(&measured);
    let dense = measured.iter().find(|m| m.backend == "dense").cloned();
    for m in measured.iter_mut().filter(|m| m.available) {
        m.speedup_vs_float = speedup(rate(m), float.as_ref());
        m.speedup_vs_dense = speedup(rate(m), dense.as_ref());
    }
    let proj = projections(spec, boards, &measured);
    let resident = resident_projections(spec, boards, train.len(), a.epochs, &measured);
    let to_acc = match (a.to_accuracy, &split) {
        (Some(x), Some(split)) => Some(accuracy::to_accuracy(
            spec, split, x, a.epochs, mb, &measured, &proj, &pb,
        )),
        _ => None,
    };
    pb.finish_and_clear();
    let mut mach = machine();
    mach["load_average_before"] = json!(load_before);
    let d = spec.derived();
    let report = json!({
        "spec": spec.name,
        "spec_file": a.spec,
        "layers": spec.layers,
        "edges": d.total_edges,
        "block_cycle_clocks": d.block_cycle_clocks,
        "data": data_name,
        "samples_requested": a.samples,
        "repeat": a.repeat,
        "batch": a.batch,
        "threads": a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        "machine": mach,
        "backends": measured,
        "projections": proj,
        "resident_projections": resident,
        "to_accuracy": to_acc,
        "boards": boards_json(boards),
        "notes": [
            "samples/s: best of `repeat` runs, wall clock; *_cpu: the same run timed by the CPU time of the working thread (CPU backends only)",
            "dense-minibatch: the dense network trained with mini-batch SGD (`batch` samples a step, sgemm) on `threads` threads; with more than one thread its rates are wall clock only",
            "sparse-f32 with --threads above one: Hogwild! (every thread takes every threads-th sample and updates the shared weights without locks), wall clock only",
            "speedup_vs_float / speedup_vs_dense: training samples/s over the faster float implementation of the same sparse network (float f64 or sparse-f32) / the dense f32 network of the same layer sizes (SGD, batch 1, one core); rates are CPU-time rates where there is one (CPU backends), else wall clock",
            "projections: one training (or inference) sample per block cycle at the given clock; they do not check that the design fits the board",
            "resident_projections: end to end with the data set resident on the board: the training samples uploaded once over the UART (every byte at ten bit times, serial frames included), `epochs` epochs on chip (one sample per block cycle or per record feed, whichever is longer), the weights read back; the host's latency between frames is not counted",
        ],
    });
    write_report(a, &report)?;
    for p in &a.plot {
        let mut bars: Vec<(String, f64, usize)> = measured
            .iter()
            .filter(|m| m.available)
            .map(|m| (m.backend.clone(), rate(m), 0))
            .collect();
        for p in &proj {
            bars.push((
                format!(
                    "{} @ {:.0} MHz, {} clk{}",
                    p.board,
                    p.clock_mhz,
                    if (p.clocks_per_sample - p.clocks_per_sample.round()).abs() < 0.05 {
                        format!("{:.0}", p.clocks_per_sample)
                    } else {
                        format!("{:.1}", p.clocks_per_sample)
                    },
                    if p.clocks_source.starts_with("spec") {
                        String::new()
                    } else {
                        format!(" ({})", p.clocks_source.split(':').next().unwrap_or(""))
                    }
                ),
                p.samples_per_second,
                1,
            ));
        }
        chart::bar_chart(
            p,
            &BarChart {
                title: &format!(
                    "{}: training samples/s ({} edges)",
                    spec.name, d.total_edges
                ),
                ylabel: "training samples/s",
                bars: &bars,
                group_names: &[
                    "measured here (CPU backends: thread CPU time)",
                    "board, one sample per block cycle (estimate)",
                ],
                log_y: true,
            },
        )?;
    }
    let mut w = String::new();
    writeln!(w,
        "{}: {} edges, {} edge-ops per training sample, block cycle {} clocks; {} training samples from {} (best of {})",
        spec.name,
        d.total_edges,
        sparse_edge_ops(spec),
        d.block_cycle_clocks,
        a.samples,
        data_name,
        a.repeat
    )?;
    writeln!(
        w,
        "{:<15} {:>8} {:>13} {:>13} {:>13} {:>14} {:>10} {:>10}  bit-exact",
        "backend",
        "samples",
        "train/s",
        "train/s cpu",
        "infer/s",
        "edge-ops/s",
        "vs float",
        "vs dense"
    )?;
    for m in &measured {
        if !m.available {
            writeln!(
                w,
                "{:<15} unavailable: {}",
                m.backend,
                m.unavailable_reason.as_deref().unwrap_or("")
            )?;
            continue;
        }
        writeln!(
            w,
            "{:<15} {:>8} {:>13} {:>13} {:>13} {:>14} {:>10} {:>10}  {}",
            m.backend,
            m.samples,
            fmt_rate(m.train_samples_per_second),
            m.train_samples_per_second_cpu
                .map(fmt_rate)
                .unwrap_or_else(|| "-".into()),
            fmt_rate(m.infer_samples_per_second),
            fmt_rate(m.train_edge_ops_per_second),
            fmt_x(m.speedup_vs_float),
            fmt_x(m.speedup_vs_dense),
            m.bit_exact
                .map(|b| if b { "yes" } else { "NO" })
                .unwrap_or("-")
        )?;
    }
    writeln!(
        w,
        "board projections (one sample per block cycle, training and inference):"
    )?;
    for p in &proj {
        writeln!(w,
            "  {:<12} {:>7.2} MHz / {:>5} clocks = {:>10} samples/s  {:>8} vs float {:>8} vs dense {:>8} vs reference   [{}; clocks from {}]",
            p.board,
            p.clock_mhz,
            p.clocks_per_sample,
            fmt_rate(p.samples_per_second),
            fmt_x(p.speedup_vs_float),
            fmt_x(p.speedup_vs_dense),
            fmt_x(p.speedup_vs_reference),
            p.clock_source,
            p.clocks_source
        )?;
    }
    if !resident.is_empty() {
        writeln!(
            w,
            "end to end, resident ({} training samples uploaded once, {} epochs on chip, weights read back):",
            train.len(),
            a.epochs
        )?;
    }
    for r in &resident {
        if !r.fits {
            writeln!(
                w,
                "  {:<12} the set does not fit: {} samples of {} words, the data memory holds {}",
                r.board, r.train_samples, r.record_words, r.resident_capacity_samples
            )?;
            continue;
        }
        writeln!(w,
            "  {:<12} {:>7.2} MHz, {:>7} baud: {:>10} samples/s  {:>8} vs float   [upload {:.2} s, epochs {:.2} s; {} clocks a sample: block cycle {}, record feed {}]",
            r.board,
            r.clock_mhz,
            r.baud,
            fmt_rate(r.end_to_end_samples_per_second),
            fmt_x(r.speedup_vs_float),
            r.clocks.upload_clocks as f64 / (r.clock_mhz * 1e6),
            r.clocks.train_clocks as f64 / (r.clock_mhz * 1e6),
            (r.block_cycle_clocks as u64).max(r.record_feed_clocks),
            r.block_cycle_clocks,
            r.record_feed_clocks,
        )?;
    }
    for b in boards {
        if let Some(n) = &b.fmax_note {
            writeln!(w, "  {}: {n}", b.name)?;
        }
    }
    if let Some(t) = &to_acc {
        accuracy::print(t, &mut w)?;
    }
    for p in &a.plot {
        writeln!(w, "plot written to {}", p.display())?;
    }
    if let Some(j) = &a.out {
        writeln!(w, "JSON written to {}", j.display())?;
    }
    emit(&Written::new(report, w), Format::json(a.json));
    Ok(())
}
