//! `edgeflow sim --plan P --engine verilator --linked`: a plan's boards as their Verilog, each
//! stage with its board-to-board links (hdl/src/link/linked_stage.rs), all in one Verilator
//! model, each board on its own clock (the plan's board clock, board `i` slower by
//! `i × ppm`), the host feeding the first board and reading the last. Held against the
//! reference model with the plan's staleness bit for bit, and the measured samples/s set
//! next to the plan's prediction.

use crate::plan_cmd::stage_ranges;
use crate::report::{emit, Format};
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::State;
use edgeflow_hdl::link::linked_stage::LINK_TIMEOUT_CLOCKS;
use edgeflow_hdl::testbench::linked_verilator::LinkedVerilator;
use edgeflow_planner::report::PlanFile;
use serde::Serialize;
use std::fmt;
use std::path::Path;

#[derive(Serialize)]
struct LinkedSim {
    plan: String,
    spec: String,
    samples: usize,
    bit_exact: bool,
    first_difference: Option<String>,
    state_sha256: String,
    reference_sha256: String,
    staleness: Vec<usize>,
    link_delay: Vec<usize>,
    link_width: u64,
    ppm: f64,
    boards: Vec<LinkedBoard>,
    /// Training samples over the simulated time of the whole stream (fill and drain too).
    samples_per_second: f64,
    /// Over the middle half of the stream: the pipeline's rate.
    steady_samples_per_second: Option<f64>,
    predicted_samples_per_second: f64,
    /// `steady_samples_per_second / predicted_samples_per_second`.
    measured_over_predicted: Option<f64>,
    build_seconds: f64,
}

#[derive(Serialize)]
struct LinkedBoard {
    board: String,
    junctions: [usize; 2],
    clock_mhz: f64,
    clock_period_ps: u64,
    clocks: u64,
    clocks_per_sample: f64,
}

impl fmt::Display for LinkedSim {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            w,
            "{}: {} boards linked ({}-pin links, clocks {} ppm apart), {} training samples",
            self.spec,
            self.boards.len(),
            self.link_width,
            self.ppm,
            self.samples
        )?;
        for (i, b) in self.boards.iter().enumerate() {
            writeln!(
                w,
                "  board {} {:<12} junctions {}-{}  {:.4} MHz  {} clocks, {:.1} per sample",
                i + 1,
                b.board,
                b.junctions[0],
                b.junctions[1],
                b.clock_mhz,
                b.clocks,
                b.clocks_per_sample
            )?;
        }
        match &self.first_difference {
            None => writeln!(
                w,
                "bit-exact with the reference model (staleness {:?}): state sha256 {}",
                self.staleness, self.state_sha256
            )?,
            Some(d) => writeln!(w, "NOT bit-exact: {d}")?,
        }
        let steady = self
            .steady_samples_per_second
            .map_or("-".to_string(), |s| format!("{:.0}", s));
        writeln!(
            w,
            "measured {steady} samples/s in the stream's middle half ({:.0} over the whole stream); the plan predicts {:.0}",
            self.samples_per_second, self.predicted_samples_per_second
        )
    }
}

/// Clock period of a board at `mhz`, slowed by `ppm`, in even picoseconds.
fn period_ps(mhz: f64, ppm: f64) -> u64 {
    let ps = 1e6 / mhz * (1.0 + ppm * 1e-6);
    2 * (ps / 2.0).round() as u64
}

/// Reads the plan once and checks it and `--ppm` before the data set is loaded or anything
/// is built.
pub fn sim_linked(
    plan_path: &Path,
    samples: usize,
    data: Option<&str>,
    scale: edgeflow_core::ScaleKind,
    ppm: f64,
    json: bool,
) -> Result<()> {
    let text = std::fs::read_to_string(plan_path)
        .with_context(|| format!("plan {}: cannot be read", plan_path.display()))?;
    let name = plan_path.display().to_string();
    let p = PlanFile::from_json(&text, &name)?;
    if !(0.0..=10_000.0).contains(&ppm) {
        bail!("--ppm {ppm}: give the boards' clock difference in parts per million, 0 to 10000");
    }
    let stages = stage_ranges(&p);
    let LinkedBoards {
        builds,
        width,
        boards,
    } = linked_boards(&p, &name)?;
    let data = &crate::sim_verilator::sim_data(&p.spec, samples, data, scale)?;
    let link_delay: Vec<usize> = p.link_delay.iter().map(|&d| d as usize).collect();
    let periods: Vec<u64> = boards
        .iter()
        .enumerate()
        .map(|(i, b)| period_ps(b.2, ppm * i as f64))
        .collect();
    let pb = crate::ui::spinner(&format!(
        "building the Verilator model of '{}' on {} linked boards",
        p.spec.name,
        boards.len()
    ));
    let dir = std::env::temp_dir().join(format!(
        "edgeflow-sim-linked-{}-{}",
        p.spec.name,
        std::process::id()
    ));
    let t0 = std::time::Instant::now();
    let built = LinkedVerilator::build(
        &dir,
        &p.spec,
        &builds,
        &stages,
        &link_delay,
        width as usize,
        LINK_TIMEOUT_CLOCKS,
    );
    let build_seconds = t0.elapsed().as_secs_f64();
    pb.set_message(format!(
        "simulating '{}' on {} linked boards: train {}, infer",
        p.spec.name,
        boards.len(),
        data.len()
    ));
    let report = built.and_then(|v| {
        v.check(&State::initial(&p.spec), data, &periods)
            .map_err(|e| anyhow!("{e}"))
    });
    pb.finish_and_clear();
    let _ = std::fs::remove_dir_all(&dir);
    let r = report?;
    let predicted = p.figures.samples_per_second;
    let out = LinkedSim {
        plan: name,
        spec: p.spec.name.clone(),
        samples: data.len(),
        bit_exact: r.first_difference.is_none() && r.state_sha256 == r.reference_sha256,
        first_difference: r.first_difference.clone(),
        state_sha256: r.state_sha256.clone(),
        reference_sha256: r.reference_sha256.clone(),
        staleness: r.staleness.clone(),
        link_delay,
        link_width: width,
        ppm,
        boards: boards
            .iter()
            .zip(&r.boards)
            .map(|((board, junctions, _), run)| LinkedBoard {
                board: board.clone(),
                junctions: *junctions,
                clock_mhz: 1e6 / run.clock_period_ps as f64,
                clock_period_ps: run.clock_period_ps,
                clocks: run.clocks,
                clocks_per_sample: run.clocks as f64 / data.len() as f64,
            })
            .collect(),
        samples_per_second: r.train_samples_per_second,
        steady_samples_per_second: r.steady_samples_per_second,
        predicted_samples_per_second: predicted,
        measured_over_predicted: r.steady_samples_per_second.map(|s| s / predicted),
        build_seconds,
    };
    let bit_exact = out.bit_exact;
    emit(&out, Format::json(json));
    if !bit_exact {
        bail!("the linked boards differ from the reference model");
    }
    Ok(())
}

/// A plan's boards as a linked chain: each stage's build (registered reads, deep pipeline),
/// the link width they share, and per board its name, junctions (1-based) and clock.
pub(crate) struct LinkedBoards {
    pub builds: Vec<(bool, bool)>,
    pub width: u64,
    pub boards: Vec<(String, [usize; 2], f64)>,
}

/// Checks that every board of plan `p` (named `name`) has its own link, of one width.
pub(crate) fn linked_boards(p: &PlanFile, name: &str) -> Result<LinkedBoards> {
    if p.stages.len() < 2 {
        bail!(
            "plan {name}: one board, so nothing is linked; run `edgeflow sim --spec` for one board"
        );
    }
    let mut builds = vec![];
    let mut width = None;
    let mut boards = vec![];
    for (i, s) in p.stages.iter().enumerate() {
        let b = p.boards.get(s.board_index).ok_or_else(|| {
            anyhow!(
                "plan {name}: stage {} names board {} of {}; re-run edgeflow plan",
                i + 1,
                s.board_index + 1,
                p.boards.len()
            )
        })?;
        let link = b.link.as_ref().ok_or_else(|| {
            anyhow!(
                "plan {name}: board {} ({}) has no [link] in its board file; --linked needs boards with their own board-to-board link (icebreaker, ulx3s-*)",
                i + 1,
                b.name
            )
        })?;
        match width {
            None => width = Some(link.width),
            Some(w) if w != link.width => bail!(
                "plan {name}: board {} ({}) has a {}-pin link, the boards before it {w}; a linked chain needs one width",
                i + 1,
                b.name,
                link.width
            ),
            _ => {}
        }
        builds.push((b.registered_reads, b.deep_pipeline));
        boards.push((b.name.clone(), s.junctions, b.clock_mhz));
    }
    let width = width.ok_or_else(|| anyhow!("plan {name}: no stages"))?;
    Ok(LinkedBoards {
        builds,
        width,
        boards,
    })
}
