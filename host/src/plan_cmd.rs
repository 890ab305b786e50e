//! `edgeflow plan`: split a network across boards in a chain (docs/design.md, "Multi-board
//! pipelines").

use crate::report::{emit, Format};
use crate::util::write_atomic;
use anyhow::{anyhow, Context, Result};
use edgeflow_core::Spec;
use edgeflow_planner::report::{plan, PlanFile};
use edgeflow_planner::Board;
use std::path::Path;
use std::time::Instant;

pub fn us(ps: u64) -> String {
    let us = ps as f64 * 1e-6;
    if us >= 1000.0 {
        format!("{:.3} ms", us * 1e-3)
    } else {
        format!("{us:.3} µs")
    }
}

pub fn rate(sps: f64) -> String {
    if sps >= 1e6 {
        format!("{:.3} M samples/s", sps * 1e-6)
    } else if sps >= 1e3 {
        format!("{:.2} k samples/s", sps * 1e-3)
    } else {
        format!("{sps:.1} samples/s")
    }
}

pub fn pct(a: u64, b: u64) -> String {
    format!("{:.0}%", 100.0 * a as f64 / b.max(1) as f64)
}

pub fn plan_cmd(
    spec_path: &Path,
    boards: &str,
    link: Option<&str>,
    order: edgeflow_planner::dp::Order,
    json: bool,
    out: Option<&Path>,
) -> Result<()> {
    let spec = Spec::load(spec_path)?;
    let mut boards = Board::resolve_list(boards)?;
    if let Some(l) = link {
        let l = edgeflow_planner::cost::LinkFigure::resolve(l)?;
        boards.iter_mut().for_each(|b| l.apply(b));
    }
    if order == edgeflow_planner::dp::Order::Every && boards.len() > spec.junctions() {
        return Err(anyhow!(
            "--all-boards: {} boards for the {} junctions of {}: every board holds at least \
             one junction; give at most {} boards, or drop --all-boards",
            boards.len(),
            spec.junctions(),
            spec_path.display(),
            spec.junctions()
        ));
    }
    let t0 = Instant::now();
    let p = plan(&spec, &spec_path.display().to_string(), &boards, order)?;
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(o) = out {
        let text = serde_json::to_string_pretty(&p)?;
        write_atomic(o, text.as_bytes()).with_context(|| format!("writing {}", o.display()))?;
    }
    let r = crate::plan_report::Planned {
        plan: &p,
        planning_seconds: seconds,
        out,
    };
    emit(&r, Format::json(json));
    Ok(())
}

/// The plan's stages as 0-based inclusive junction ranges.
pub(crate) fn stage_ranges(p: &PlanFile) -> Vec<(usize, usize)> {
    p.stages
        .iter()
        .map(|s| (s.junctions[0] - 1, s.junctions[1] - 1))
        .collect()
}

/// Each stage built as its board builds it (registered reads, deep pipeline), so its
/// block cycle is the plan's.
/// `train --plan --backend reference`: one thread per stage.
pub fn reference_pipeline(
    p: &crate::backends::Pipeline,
) -> Result<(Box<dyn crate::board::Board>, crate::backends::Timings)> {
    no_device(p)?;
    let b = crate::multiboard::PipelineBoard::new(p.spec, p.stages.to_vec(), p.link_delay.to_vec());
    let t = b.timings.clone();
    Ok((Box::new(b), t))
}

/// `train --plan --backend opencl`: stage i on OpenCL device i.
pub fn opencl_pipeline(
    p: &crate::backends::Pipeline,
) -> Result<(Box<dyn crate::board::Board>, crate::backends::Timings)> {
    no_device(p)?;
    let b = crate::multiboard_opencl::OpenClPipeline::new(p.spec, p.stages, p.link_delay)?;
    let t = b.timings.clone();
    Ok((Box::new(b), t))
}

/// `train --plan --backend rtl`: one simulated RTL stage per board, built as that board builds.
pub fn rtl_pipeline(
    p: &crate::backends::Pipeline,
) -> Result<(Box<dyn crate::board::Board>, crate::backends::Timings)> {
    no_device(p)?;
    let builds = rtl_builds(p.plan, p.plan_name)?;
    let b = crate::board::rtl_stage::RtlPipeline::new(p.spec, p.stages, p.link_delay, &builds)?;
    let t = b.timings.clone();
    Ok((Box::new(b), t))
}

/// A plan puts stage i on device i: it takes no device of its own.
fn no_device(p: &crate::backends::Pipeline) -> Result<()> {
    match p.arg {
        Some(a) => {
            anyhow::bail!("--backend ...:{a}: a plan puts stage i on device i; drop the ':{a}'")
        }
        None => Ok(()),
    }
}

pub(crate) fn rtl_builds(p: &PlanFile, plan_name: &str) -> Result<Vec<(bool, bool)>> {
    p.stages
        .iter()
        .map(|s| {
            let b = p.boards.get(s.board_index).ok_or_else(|| {
                anyhow!(
                    "plan {plan_name}: stage on board {} of {}; re-run edgeflow plan",
                    s.board_index + 1,
                    p.boards.len()
                )
            })?;
            Ok((b.registered_reads, b.deep_pipeline))
        })
        .collect()
}

/// Open MPI's mpirun started this process (it sets OMPI_COMM_WORLD_SIZE).
fn under_mpirun() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some()
}

/// `edgeflow train --plan`: train across the plan's boards, then report each stage's measured
/// time and the measured bottleneck next to the plan's prediction.
pub struct TrainPlanArgs<'a> {
    pub plan: &'a Path,
    /// Continue from this model (`train --init`); it must hold the plan's network.
    pub init: Option<&'a Path>,
    pub data: &'a str,
    pub label_column: Option<usize>,
    pub scale: Option<edgeflow_core::ScaleKind>,
    pub epochs: usize,
    pub backend: &'a crate::backends::Choice,
    pub out: Option<&'a Path>,
    pub plot: Option<&'a Path>,
    pub json: bool,
    pub verify: bool,
}

pub fn train_plan(a: TrainPlanArgs) -> Result<()> {
    let TrainPlanArgs {
        plan: plan_path,
        init,
        data,
        label_column,
        scale,
        epochs,
        backend,
        out,
        plot,
        json,
        verify,
    } = a;
    use crate::train::{run_from, Trainer};
    backend.check("--backend", crate::backends::Use::Plan)?;
    // Under mpirun every rank runs one stage; rank 0 goes on here, the others serve it.
    #[cfg(feature = "mpi")]
    let mut mpi = match under_mpirun() {
        true => match crate::multiboard_mpi::Session::start()? {
            None => return Ok(()),
            s => s,
        },
        false => None,
    };
    #[cfg(not(feature = "mpi"))]
    if under_mpirun() {
        anyhow::bail!("this edgeflow was built without MPI, so it cannot run a plan under mpirun; build it with `cargo build --release --features mpi` (needs Open MPI and libclang), or run the plan without mpirun in one process");
    }
    let text = std::fs::read_to_string(plan_path)
        .with_context(|| format!("plan {}: cannot be read", plan_path.display()))?;
    let p = PlanFile::from_json(&text, &plan_path.display().to_string())?;
    let init = init.map(crate::train::init::Init::load).transpose()?;
    crate::train::init::check_epochs(epochs, init.is_some())?;
    crate::train::check_plot_path(plot)?;
    let spec = match &init {
        Some(i) => i.spec(Some((&p.spec, "--plan", plan_path)))?,
        None => p.spec.clone(),
    };
    let start = init.as_ref().map_or_else(
        || edgeflow_core::State::initial(&spec),
        |i| i.state().clone(),
    );
    let first = init
        .as_ref()
        .map_or(0, crate::train::init::Init::first_epoch);
    let stages = stage_ranges(&p);
    let link_delay: Vec<usize> = p.link_delay.iter().map(|&d| d as usize).collect();
    let staleness = edgeflow_reference::Schedule::with_links(&link_delay).staleness();
    if staleness.iter().map(|&s| s as u64).collect::<Vec<_>>() != p.staleness {
        anyhow::bail!(
            "plan {}: its staleness {:?} does not follow from its link delays {:?} (expected {:?}); re-run edgeflow plan",
            plan_path.display(),
            p.staleness,
            p.link_delay,
            staleness
        );
    }
    let parts = crate::backends::Pipeline {
        spec: &spec,
        stages: &stages,
        link_delay: &link_delay,
        plan: &p,
        plan_name: &plan_path.display().to_string(),
        arg: backend.arg.as_deref(),
    };
    let open = || (backend.backend.pipeline.expect("checked above"))(&parts);
    #[cfg(feature = "mpi")]
    let opened = match mpi.take() {
        Some(s) => {
            let b = crate::multiboard_mpi::MpiPipeline::new(s, &text, backend.name())?;
            let t = b.timings.clone();
            (Box::new(b) as Box<dyn crate::board::Board>, t)
        }
        None => open()?,
    };
    #[cfg(not(feature = "mpi"))]
    let opened = open()?;
    let (board, timings) = opened;
    let split = crate::train::init::load_data(&spec, init.as_ref(), data, label_column, scale)?;
    let mut trainer = Trainer::Board(board);
    trainer.load_state(&start)?;
    let (rep, _) = run_from(trainer, &split, first, epochs, json)?;
    let state = rep.state.clone().expect("a board returns its state");
    let verified = if verify {
        // The reference model with the plan's staleness, on exactly the streams run() used.
        let mut r =
            edgeflow_reference::Reference::with_state(&spec, start.clone(), staleness.clone())?;
        let mut order = edgeflow_core::order::SampleOrder::new(split.train.len());
        for _ in 0..first {
            order.next_keys();
        }
        for _ in 0..epochs {
            r.train(&split.train.select(&order.next_epoch()));
        }
        if let Some(d) = r.state.first_difference(&state, Some(&r.patterns)) {
            anyhow::bail!(
                "--verify: the {} run differs from the reference model with staleness {staleness:?}: {d} (reference sha256 {}, run {})",
                rep.backend,
                r.state.sha256(),
                state.sha256()
            );
        }
        Some(r.state.sha256())
    } else {
        None
    };
    if let Some(o) = out {
        let mut m = crate::model::ModelFile::new(&spec, &staleness, &state, &split.scaling);
        m.features = Some(split.features);
        m.epochs = Some(first + epochs);
        m.save(o)?;
    }
    if let Some(pl) = plot {
        crate::train::write_curve(pl, &spec.name, &rep)?;
    }
    let timings = timings.lock().unwrap().clone();
    let samples = (epochs * split.train.len()) as f64;
    let measured: Vec<f64> = timings
        .iter()
        .map(|t| t.compute_seconds / samples)
        .collect();
    // A cycle-accurate simulation counts each stage's block cycle in clocks: at the board's
    // clock that is the stage's time per sample on the board, comparable with the plan.
    let simulated: Option<Vec<f64>> = timings
        .iter()
        .zip(&p.stages)
        .map(|(t, s)| {
            t.clocks_per_block_cycle
                .map(|c| c as f64 * 1e6 / p.boards[s.board_index].clock_mhz)
        })
        .collect();
    let (mb, _) = simulated
        .as_ref()
        .unwrap_or(&measured)
        .iter()
        .enumerate()
        .fold(
            (0, 0.0),
            |acc, (i, &x)| if x > acc.1 { (i, x) } else { acc },
        );
    let predicted: Vec<u64> = p.stages.iter().map(|s| s.block_cycle_ps).collect();
    let pb = predicted
        .iter()
        .enumerate()
        .fold(0, |b, (i, &x)| if x > predicted[b] { i } else { b });
    let last = rep.epochs.last().unwrap();
    let stages = p.stages.iter().zip(&timings).zip(&measured).enumerate();
    let r = crate::plan_report::PlanTrained {
        spec: &spec.name,
        backend: rep.backend.clone(),
        stage_count: p.stages.len(),
        plan: plan_path,
        data: &split.name,
        epochs,
        train_accuracy: last.train_accuracy,
        test_accuracy: last.test_accuracy,
        samples_per_second: rep.samples_per_second,
        predicted_samples_per_second: p.figures.samples_per_second,
        staleness: &staleness,
        link_delay: &p.link_delay,
        state_sha256: state.sha256(),
        reference_sha256: verified,
        stages: stages
            .map(|(i, ((s, t), m))| crate::plan_report::StageRun {
                board: &s.board,
                junctions: s.junctions,
                predicted_block_cycle_clocks: s.block_cycle_clocks,
                predicted_block_cycle_ps: s.block_cycle_ps,
                measured_seconds_per_sample: *m,
                measured_wait_seconds: t.wait_seconds,
                measured_block_cycles: t.block_cycles,
                measured_clocks_per_block_cycle: t.clocks_per_block_cycle,
                measured_block_cycle_ps: simulated.as_ref().map(|v| v[i].round() as u64),
            })
            .collect(),
        measured_bottleneck_from: if simulated.is_some() {
            "simulated block cycle at the board's clock"
        } else {
            "compute time on this host"
        },
        predicted_bottleneck: &p.figures.bottleneck,
        predicted_bottleneck_stage: pb + 1,
        measured_bottleneck_stage: mb + 1,
        history: &rep.epochs,
        model: out,
    };
    emit(&r, Format::json(json));
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A board file and the board top of the same name agree on what the board adds to a
    /// block cycle, so a plan predicts the clocks the bitstream builds.
    #[test]
    fn board_files_carry_the_board_tops_pipeline_flags() {
        let mut both = 0;
        for b in edgeflow_hdl::boards::boards() {
            let Ok(f) = edgeflow_planner::Board::resolve(b.name) else {
                continue;
            };
            both += 1;
            assert_eq!(
                (f.registered_reads, f.deep_pipeline),
                (b.registered_reads, b.deep_pipeline),
                "{}",
                b.name
            );
        }
        assert!(both >= 3, "board files found for {both} board tops");
    }
}
