//! `edgeflow verilog --plan plan.json -o DIR`: the Verilog of every stage of a plan (module
//! `top` in `<spec>_stage<i>.v`): the stage's junctions on the plan's schedule, with the
//! boundary ports of hdl/src/datapath/stage.rs, each checked by yosys when it is installed.
//! With `--linked`, each stage with its board-to-board links and their sequencer instead
//! (hdl/src/link/linked_stage.rs).

use crate::report::{emit, Format};
use crate::util::write_atomic;
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_planner::report::PlanFile;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

pub fn stage_verilog_cmd(plan: &Path, out: &Path, linked: bool, json: bool) -> Result<()> {
    let text = std::fs::read_to_string(plan)
        .with_context(|| format!("plan {}: cannot be read", plan.display()))?;
    let p = PlanFile::from_json(&text, &plan.display().to_string())?;
    let names: Vec<String> = (1..=p.stages.len())
        .map(|i| format!("{}_stage{i}.v", p.spec.name))
        .collect();
    crate::paths::Paths::new()
        .input("--plan", Some(plan))
        .out_dir("--out", out, &names)
        .check()?;
    std::fs::create_dir_all(out)
        .with_context(|| format!("--out {}: cannot be created", out.display()))?;
    let delays: Vec<usize> = p.link_delay.iter().map(|&d| d as usize).collect();
    let sched = edgeflow_reference::Schedule::with_links(&delays);
    let plan_name = plan.display().to_string();
    let link = if linked {
        let l = crate::sim_linked::linked_boards(&p, &plan_name)?;
        let fifo = edgeflow_hdl::link::linked_stage::link_fifo_bits(&p.spec, &delays)
            .ok_or_else(|| anyhow!("plan {plan_name}: a link carries more than 4096 words in flight; the link FIFO holds at most that"))?;
        Some((l.width as usize, fifo))
    } else {
        None
    };
    let mut stages = Vec::new();
    for (i, s) in p.stages.iter().enumerate() {
        let (a, b) = (s.junctions[0] - 1, s.junctions[1] - 1);
        // the stage as its board builds it (registered reads, deep pipeline), as the
        // plan's block cycle assumes
        let board = p.boards.get(s.board_index).ok_or_else(|| {
            anyhow!(
                "plan {}: stage {} on board {} of {}; re-run edgeflow plan",
                plan.display(),
                i + 1,
                s.board_index + 1,
                p.boards.len()
            )
        })?;
        let mut built = p.spec.clone();
        built.registered_reads |= board.registered_reads;
        built.deep_pipeline |= board.deep_pipeline;
        let v = match link {
            Some((width, fifo)) => edgeflow_hdl::link::linked_stage::verilog_for(
                &built,
                a..=b,
                &sched.ff,
                &sched.bp,
                edgeflow_hdl::link::linked_stage::LINK_TIMEOUT_CLOCKS,
                width,
                fifo,
            )
            .map_err(|e| anyhow!(e))?,
            None => edgeflow_hdl::stage::verilog(&built, a..=b, &sched.ff, &sched.bp),
        };
        let name = format!("{}_stage{}", p.spec.name, i + 1);
        let lint = match edgeflow_hdl::testing::yosys_lint(&v, &name) {
            Ok(Some(())) => "yosys: clean".to_string(),
            Ok(None) => "yosys not installed: not checked".to_string(),
            Err(e) => bail!("{e}"),
        };
        let file = out.join(format!("{name}.v"));
        write_atomic(&file, v.as_bytes())?;
        stages.push(StageFile {
            stage: i + 1,
            board: s.board.clone(),
            junctions: s.junctions,
            file,
            lint,
        });
    }
    let r = Stages {
        spec: p.spec.name.clone(),
        link_delay: p.link_delay.clone(),
        staleness: sched.staleness(),
        stages,
    };
    emit(&r, Format::json(json));
    Ok(())
}

/// `edgeflow verilog --plan`'s report: a file per stage.
#[derive(Serialize)]
struct Stages {
    spec: String,
    link_delay: Vec<u64>,
    staleness: Vec<usize>,
    stages: Vec<StageFile>,
}

#[derive(Serialize)]
struct StageFile {
    stage: usize,
    board: String,
    junctions: [usize; 2],
    file: PathBuf,
    lint: String,
}

impl fmt::Display for Stages {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        for s in &self.stages {
            writeln!(
                w,
                "wrote {} (stage {}, junctions {}-{}, {}): {}",
                s.file.display(),
                s.stage,
                s.junctions[0],
                s.junctions[1],
                s.board,
                s.lint
            )?;
        }
        Ok(())
    }
}
