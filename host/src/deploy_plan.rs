//! `edgeflow deploy --plan P --dir DIR`: every stage's bitstream (`bitstream --plan P -o DIR`)
//! onto its board with openFPGALoader, in chain order. Identical boards on one host are told
//! apart by their FTDI bridge's serial number (`--serials`, one per stage).

use crate::deploy_cmd::{check_bitstream, usb_ids};
use crate::flow::bitstream_plan::{bit_ext, stage_stem};
use crate::report::{emit, Format};
use crate::ui::spinner;
use anyhow::{bail, Context, Result};
use edgeflow_flow::tools::OPENFPGALOADER;
use edgeflow_hdl::boards::board;
use edgeflow_planner::report::PlanFile;
use std::path::Path;

#[derive(serde::Serialize)]
struct StageLoad {
    stage: usize,
    board: String,
    bitstream: String,
    command: String,
}

#[derive(serde::Serialize)]
struct PlanDeployed {
    plan: String,
    dry_run: bool,
    stages: Vec<StageLoad>,
}

impl std::fmt::Display for PlanDeployed {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        for s in &self.stages {
            if self.dry_run {
                writeln!(
                    f,
                    "stage {} ({}): would run: {}",
                    s.stage, s.board, s.command
                )?;
            } else {
                writeln!(f, "stage {} ({}): loaded {}", s.stage, s.board, s.bitstream)?;
            }
        }
        Ok(())
    }
}

pub fn deploy_plan_cmd(
    plan: &Path,
    dir: &Path,
    serials: &[String],
    dry_run: bool,
    flash: bool,
    json: bool,
) -> Result<()> {
    let text = std::fs::read_to_string(plan)
        .with_context(|| format!("plan {}: cannot be read", plan.display()))?;
    let name = plan.display().to_string();
    let p = PlanFile::from_json(&text, &name)?;
    if !serials.is_empty() && serials.len() != p.stages.len() {
        bail!(
            "--serials: {} given for the plan's {} stages; give one FTDI serial per stage, in chain order",
            serials.len(),
            p.stages.len()
        );
    }
    let mut stages = vec![];
    for (i, s) in p.stages.iter().enumerate() {
        let b = board(&s.board)?;
        let file = dir.join(format!(
            "{}.{}",
            stage_stem(&p.spec.name, i, b.name),
            bit_ext(b)
        ));
        if !file.exists() {
            bail!(
                "stage {}: no bitstream {}; build them with `edgeflow bitstream --plan {} -o {}`",
                i + 1,
                file.display(),
                plan.display(),
                dir.display()
            );
        }
        check_bitstream(b, &file)?;
        let mut args = vec!["-b".to_string(), b.loader_board.to_string()];
        if let Some(serial) = serials.get(i) {
            args.push("--ftdi-serial".into());
            args.push(serial.clone());
        }
        if flash {
            args.push("-f".into());
        }
        args.push(file.display().to_string());
        stages.push((b, args, file));
    }
    let report = |loaded: &[(
        &'static edgeflow_hdl::boards::BoardInfo,
        Vec<String>,
        std::path::PathBuf,
    )]| PlanDeployed {
        plan: name.clone(),
        dry_run,
        stages: loaded
            .iter()
            .enumerate()
            .map(|(i, (b, args, file))| StageLoad {
                stage: i + 1,
                board: b.name.to_string(),
                bitstream: file.display().to_string(),
                command: format!("openFPGALoader {}", args.join(" ")),
            })
            .collect(),
    };
    if dry_run {
        emit(&report(&stages), Format::json(json));
        return Ok(());
    }
    OPENFPGALOADER.require()?;
    let attached = usb_ids();
    for (b, _, _) in &stages {
        let want = stages.iter().filter(|x| x.0.usb_id == b.usb_id).count();
        let have = attached.iter().filter(|id| *id == b.usb_id).count();
        if have < want {
            bail!(
                "the plan needs {want} boards with the USB bridge {} ({}); {have} attached",
                b.usb_id,
                b.name
            );
        }
        if want > 1 && serials.is_empty() {
            bail!(
                "{want} {} boards attached: give --serials with each stage's FTDI serial number, in chain order (`openFPGALoader --scan-usb` lists them)",
                b.name
            );
        }
    }
    for (i, (_, args, _)) in stages.iter().enumerate() {
        let cmd = format!("openFPGALoader {}", args.join(" "));
        let pb = spinner(&format!("stage {}: {cmd}", i + 1));
        let out = std::process::Command::new(OPENFPGALOADER.program)
            .args(args)
            .output()
            .context("cannot start openFPGALoader")?;
        pb.finish_and_clear();
        if !out.status.success() {
            bail!(
                "stage {}: {cmd} failed ({}):\n{}{}",
                i + 1,
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    emit(&report(&stages), Format::json(json));
    Ok(())
}
