//! `edgeflow plan`: split a network across boards in a chain (docs/design.md, "Multi-board
//! pipelines").

use crate::util::{print_json, write_atomic};
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

fn pct(a: u64, b: u64) -> String {
    format!("{:.0}%", 100.0 * a as f64 / b.max(1) as f64)
}

pub fn plan_cmd(
    spec_path: &Path,
    boards: &str,
    link: Option<&str>,
    permute: bool,
    json: bool,
    out: Option<&Path>,
) -> Result<()> {
    let spec = Spec::load(spec_path)?;
    let mut boards = Board::resolve_list(boards).map_err(|e| anyhow!(e))?;
    if let Some(l) = link {
        let l = edgeflow_planner::cost::LinkFigure::resolve(l).map_err(|e| anyhow!(e))?;
        boards.iter_mut().for_each(|b| l.apply(b));
    }
    let t0 = Instant::now();
    let p =
        plan(&spec, &spec_path.display().to_string(), &boards, permute).map_err(|e| anyhow!(e))?;
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(o) = out {
        let text = serde_json::to_string_pretty(&p)?;
        write_atomic(o, text.as_bytes()).with_context(|| format!("writing {}", o.display()))?;
    }
    if json {
        let mut v = serde_json::to_value(&p)?;
        v["planning_seconds"] = seconds.into();
        print_json(&v);
    } else {
        print_text(&p, seconds);
        if let Some(o) = out {
            println!(
                "plan written to {}; train with: edgeflow train --plan {}",
                o.display(),
                o.display()
            );
        }
    }
    Ok(())
}

fn print_text(p: &PlanFile, seconds: f64) {
    println!(
        "{}: {} junctions on {} of {} boards ({}), planned in {:.1} ms",
        p.spec.name,
        p.spec.junctions(),
        p.stages.len(),
        p.boards.len(),
        if p.permute {
            "any order"
        } else {
            "chain order"
        },
        seconds * 1e3
    );
    for (i, s) in p.stages.iter().enumerate() {
        let u = &s.utilisation;
        println!(
            "  board {} {:<14} junctions {}-{}  z = {:?}  block cycle {} clocks = {}",
            s.board_index + 1,
            s.board,
            s.junctions[0],
            s.junctions[1],
            s.z,
            s.block_cycle_clocks,
            us(s.block_cycle_ps)
        );
        println!(
            "      DSP {}/{}{}  logic {}/{} ({})  RAM {}/{} bits ({})  {}/{} blocks ({})",
            u.dsp,
            u.dsp_available,
            if u.lut_multipliers > 0 {
                format!(" + {} LUT multipliers", u.lut_multipliers)
            } else {
                String::new()
            },
            u.logic,
            u.logic_available,
            pct(u.logic, u.logic_available),
            u.ram_bits,
            u.ram_bits_available,
            pct(u.ram_bits, u.ram_bits_available),
            u.ram_blocks,
            u.ram_blocks_available,
            pct(u.ram_blocks, u.ram_blocks_available)
        );
        if let Some(l) = p.links.get(i) {
            println!(
                "  link after junction {} ({} -> {}): transfer {}, latency {}, delay {} block cycles each way",
                l.after_junction,
                l.from_board,
                l.to_board,
                us(l.transfer_ps),
                us(l.latency_ps),
                l.delay_block_cycles
            );
        }
    }
    println!(
        "staleness {:?}  link delays {:?}",
        p.staleness, p.link_delay
    );
    println!(
        "predicted {} (block cycle {}); bottleneck: {}",
        rate(p.figures.samples_per_second),
        us(p.figures.period_ps),
        p.figures.bottleneck
    );
    println!(
        "lower bound: block cycle ≥ {}, at most {} ({}); gap {:.1}%",
        us(p.lower_bound.period_ps),
        rate(p.lower_bound.samples_per_second),
        p.lower_bound.binding,
        p.gap * 100.0
    );
    println!("baselines:");
    for b in &p.baselines {
        let groups: Vec<String> = b
            .groups
            .iter()
            .map(|g| format!("{}-{}", g[0], g[1]))
            .collect();
        match &b.figures {
            Some(f) => println!(
                "  {:<22} [{}]: {} ({:.2}x of plan); bottleneck: {}",
                b.name,
                groups.join(", "),
                rate(f.samples_per_second),
                f.samples_per_second / p.figures.samples_per_second,
                f.bottleneck
            ),
            None => println!("  {:<22} [{}]: does not fit", b.name, groups.join(", ")),
        }
    }
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
    pub backend: &'a str,
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
    use crate::multiboard::PipelineBoard;
    use crate::train::{run_from, Trainer};
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
    let p = PlanFile::from_json(&text, &plan_path.display().to_string()).map_err(|e| anyhow!(e))?;
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
    let staleness = edgeflow_sim::Schedule::with_links(&link_delay).staleness();
    if staleness.iter().map(|&s| s as u64).collect::<Vec<_>>() != p.staleness {
        anyhow::bail!(
            "plan {}: its staleness {:?} does not follow from its link delays {:?} (expected {:?}); re-run edgeflow plan",
            plan_path.display(),
            p.staleness,
            p.link_delay,
            staleness
        );
    }
    let (board, timings): (Box<dyn crate::board::Board>, _) = match backend {
        #[cfg(feature = "mpi")]
        "reference" | "opencl" | "rtl" if mpi.is_some() => {
            let s = mpi.take().expect("checked");
            let b = crate::multiboard_mpi::MpiPipeline::new(s, &text, backend)?;
            let t = b.timings.clone();
            (Box::new(b), t)
        }
        "reference" => {
            let b = PipelineBoard::new(&spec, stages.clone(), link_delay.clone());
            let t = b.timings.clone();
            (Box::new(b), t)
        }
        "opencl" => {
            let b = crate::multiboard_opencl::OpenClPipeline::new(&spec, &stages, &link_delay)?;
            let t = b.timings.clone();
            (Box::new(b), t)
        }
        "rtl" => {
            let builds = rtl_builds(&p, &plan_path.display().to_string())?;
            let b =
                crate::board::rtl_stage::RtlPipeline::new(&spec, &stages, &link_delay, &builds)?;
            let t = b.timings.clone();
            (Box::new(b), t)
        }
        other => anyhow::bail!(
            "--plan runs on backend reference (one thread per stage), opencl (stage i on OpenCL device i) or rtl (one simulated RTL stage per board), not '{other}'"
        ),
    };
    let split = crate::train::init::load_data(&spec, init.as_ref(), data, label_column, scale)?;
    let mut trainer = Trainer::Board(board);
    trainer.load_state(&start)?;
    let (rep, _) = run_from(trainer, &split, first, epochs, json)?;
    let state = rep.state.clone().expect("a board returns its state");
    let verified = if verify {
        // The reference model with the plan's staleness, on exactly the streams run() used.
        let mut r = edgeflow_sim::Reference::with_state(&spec, start.clone(), staleness.clone())
            .map_err(|e| anyhow!(e))?;
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
    if json {
        print_json(&serde_json::json!({
            "spec": spec.name,
            "backend": rep.backend,
            "plan": plan_path,
            "data": split.name,
            "epochs": epochs,
            "train_accuracy": last.train_accuracy,
            "test_accuracy": last.test_accuracy,
            "samples_per_second": rep.samples_per_second,
            "predicted_samples_per_second": p.figures.samples_per_second,
            "staleness": staleness,
            "link_delay": p.link_delay,
            "state_sha256": state.sha256(),
            "reference_sha256": verified,
            "stages": p.stages.iter().zip(&timings).zip(&measured).enumerate().map(|(i, ((s, t), m))| serde_json::json!({
                "board": s.board,
                "junctions": s.junctions,
                "predicted_block_cycle_clocks": s.block_cycle_clocks,
                "predicted_block_cycle_ps": s.block_cycle_ps,
                "measured_seconds_per_sample": m,
                "measured_wait_seconds": t.wait_seconds,
                "measured_block_cycles": t.block_cycles,
                "measured_clocks_per_block_cycle": t.clocks_per_block_cycle,
                "measured_block_cycle_ps": simulated.as_ref().map(|v| v[i].round() as u64),
            })).collect::<Vec<_>>(),
            "measured_bottleneck_from": if simulated.is_some() { "simulated block cycle at the board's clock" } else { "compute time on this host" },
            "predicted_bottleneck": p.figures.bottleneck,
            "predicted_bottleneck_stage": pb + 1,
            "measured_bottleneck_stage": mb + 1,
            "history": rep.epochs,
            "model": out,
        }));
    } else {
        println!(
            "{} on {} across {} boards ({}): train {:.2}%, test {:.2}% after {epochs} epochs; {:.0} samples/s on this host",
            spec.name,
            split.name,
            p.stages.len(),
            rep.backend,
            last.train_accuracy * 100.0,
            last.test_accuracy * 100.0,
            rep.samples_per_second
        );
        println!(
            "staleness {staleness:?} from link delays {:?}; state sha256 {}",
            p.link_delay,
            state.sha256()
        );
        if verified.is_some() {
            println!("verified: bit-identical to the reference model with the plan's staleness");
        }
        println!("stage  board            junctions  predicted block cycle  measured compute/sample  waiting");
        for (i, ((s, t), m)) in p.stages.iter().zip(&timings).zip(&measured).enumerate() {
            println!(
                "{:>5}  {:<15}  {:>4}-{:<4}  {:>21}  {:>20.1} µs  {:>6.3} s",
                i + 1,
                s.board,
                s.junctions[0],
                s.junctions[1],
                us(s.block_cycle_ps),
                m * 1e6,
                t.wait_seconds
            );
        }
        if let Some(sim) = &simulated {
            println!("stage  simulated block cycle  at the board's clock  plan (clocks, time)");
            for (i, ((s, t), x)) in p.stages.iter().zip(&timings).zip(sim).enumerate() {
                println!(
                    "{:>5}  {:>14} clocks  {:>20}  {} clocks, {}",
                    i + 1,
                    t.clocks_per_block_cycle.unwrap_or(0),
                    us(x.round() as u64),
                    s.block_cycle_clocks,
                    us(s.block_cycle_ps)
                );
            }
        }
        println!(
            "bottleneck: predicted stage {} ({}), measured stage {} ({}); predicted {} on the boards",
            pb + 1,
            p.figures.bottleneck,
            mb + 1,
            if simulated.is_some() {
                "simulated block cycle"
            } else {
                "compute on this host"
            },
            rate(p.figures.samples_per_second)
        );
        if let Some(o) = out {
            println!("model written to {}", o.display());
        }
    }
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
