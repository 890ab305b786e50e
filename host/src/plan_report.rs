//! What `edgeflow plan` and `edgeflow train --plan` report, as JSON and as text
//! ([`crate::report`]).

use crate::plan_cmd::{pct, rate, us};
use crate::train::EpochReport;
use edgeflow_planner::report::PlanFile;
use serde::Serialize;
use std::fmt;
use std::path::Path;

/// `edgeflow plan`'s report: the plan, and how long planning took.
#[derive(Serialize)]
pub struct Planned<'a> {
    #[serde(flatten)]
    pub plan: &'a PlanFile,
    pub planning_seconds: f64,
    #[serde(skip)]
    pub out: Option<&'a Path>,
}

impl fmt::Display for Planned<'_> {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        plan_text(w, self.plan, self.planning_seconds)?;
        if let Some(o) = self.out {
            writeln!(
                w,
                "plan written to {}; train with: edgeflow train --plan {}",
                o.display(),
                o.display()
            )?;
        }
        Ok(())
    }
}

fn plan_text(w: &mut fmt::Formatter, p: &PlanFile, seconds: f64) -> fmt::Result {
    writeln!(
        w,
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
    )?;
    for (i, s) in p.stages.iter().enumerate() {
        let u = &s.utilisation;
        writeln!(
            w,
            "  board {} {:<14} junctions {}-{}  z = {:?}  block cycle {} clocks = {}",
            s.board_index + 1,
            s.board,
            s.junctions[0],
            s.junctions[1],
            s.z,
            s.block_cycle_clocks,
            us(s.block_cycle_ps)
        )?;
        writeln!(
            w,
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
        )?;
        if s.near_limit {
            writeln!(
                w,
                "      NEAR THE LIMIT: logic within the model's {:.0}% error of the part; \
                 `edgeflow synth --board {}` on this stage's spec decides",
                u.logic_error * 100.0,
                s.board
            )?;
        }
        if let Some(l) = p.links.get(i) {
            writeln!(w,
                "  link after junction {} ({} -> {}): transfer {}, latency {}, delay {} block cycles each way",
                l.after_junction,
                l.from_board,
                l.to_board,
                us(l.transfer_ps),
                us(l.latency_ps),
                l.delay_block_cycles
            )?;
        }
    }
    writeln!(
        w,
        "staleness {:?}  link delays {:?}",
        p.staleness, p.link_delay
    )?;
    writeln!(
        w,
        "predicted {} (block cycle {}); bottleneck: {}",
        rate(p.figures.samples_per_second),
        us(p.figures.period_ps),
        p.figures.bottleneck
    )?;
    writeln!(
        w,
        "lower bound: block cycle ≥ {}, at most {} ({}); gap {:.1}%",
        us(p.lower_bound.period_ps),
        rate(p.lower_bound.samples_per_second),
        p.lower_bound.binding,
        p.gap * 100.0
    )?;
    writeln!(w, "baselines:")?;
    for b in &p.baselines {
        let groups: Vec<String> = b
            .groups
            .iter()
            .map(|g| format!("{}-{}", g[0], g[1]))
            .collect();
        match &b.figures {
            Some(f) => writeln!(
                w,
                "  {:<22} [{}]: {} ({:.2}x of plan); bottleneck: {}",
                b.name,
                groups.join(", "),
                rate(f.samples_per_second),
                f.samples_per_second / p.figures.samples_per_second,
                f.bottleneck
            )?,
            None => writeln!(w, "  {:<22} [{}]: does not fit", b.name, groups.join(", "))?,
        }
    }
    Ok(())
}

/// `edgeflow train --plan`: the run, each stage's measured figures beside the plan's.
#[derive(Serialize)]
pub struct PlanTrained<'a> {
    pub spec: &'a str,
    pub backend: String,
    #[serde(skip)]
    pub stage_count: usize,
    pub plan: &'a Path,
    pub data: &'a str,
    pub epochs: usize,
    pub train_accuracy: f64,
    pub test_accuracy: f64,
    pub samples_per_second: f64,
    pub predicted_samples_per_second: f64,
    pub staleness: &'a [usize],
    pub link_delay: &'a [u64],
    pub state_sha256: String,
    /// With `--verify`: the reference model's state, equal to the run's.
    pub reference_sha256: Option<String>,
    pub stages: Vec<StageRun<'a>>,
    pub measured_bottleneck_from: &'static str,
    pub predicted_bottleneck: &'a str,
    pub predicted_bottleneck_stage: usize,
    pub measured_bottleneck_stage: usize,
    pub history: &'a [EpochReport],
    pub model: Option<&'a Path>,
}

#[derive(Serialize)]
pub struct StageRun<'a> {
    pub board: &'a str,
    pub junctions: [usize; 2],
    pub predicted_block_cycle_clocks: u64,
    pub predicted_block_cycle_ps: u64,
    pub measured_seconds_per_sample: f64,
    pub measured_wait_seconds: f64,
    pub measured_block_cycles: u64,
    pub measured_clocks_per_block_cycle: Option<u64>,
    /// A cycle-accurate simulation's block cycle at the board's clock.
    pub measured_block_cycle_ps: Option<u64>,
}

impl fmt::Display for PlanTrained<'_> {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        let simulated = self
            .stages
            .iter()
            .all(|s| s.measured_block_cycle_ps.is_some());
        writeln!(w,
        "{} on {} across {} boards ({}): train {:.2}%, test {:.2}% after {} epochs; {:.0} samples/s on this host",
        self.spec,
        self.data,
        self.stage_count,
        self.backend,
        self.train_accuracy * 100.0,
        self.test_accuracy * 100.0,
        self.epochs,
        self.samples_per_second
    )?;
        writeln!(
            w,
            "staleness {:?} from link delays {:?}; state sha256 {}",
            self.staleness, self.link_delay, self.state_sha256
        )?;
        if self.reference_sha256.is_some() {
            writeln!(
                w,
                "verified: bit-identical to the reference model with the plan's staleness"
            )?;
        }
        writeln!(w, "stage  board            junctions  predicted block cycle  measured compute/sample  waiting")?;
        for (i, s) in self.stages.iter().enumerate() {
            writeln!(
                w,
                "{:>5}  {:<15}  {:>4}-{:<4}  {:>21}  {:>20.1} µs  {:>6.3} s",
                i + 1,
                s.board,
                s.junctions[0],
                s.junctions[1],
                us(s.predicted_block_cycle_ps),
                s.measured_seconds_per_sample * 1e6,
                s.measured_wait_seconds
            )?;
        }
        if simulated {
            writeln!(
                w,
                "stage  simulated block cycle  at the board's clock  plan (clocks, time)"
            )?;
            for (i, s) in self.stages.iter().enumerate() {
                writeln!(
                    w,
                    "{:>5}  {:>14} clocks  {:>20}  {} clocks, {}",
                    i + 1,
                    s.measured_clocks_per_block_cycle.unwrap_or(0),
                    us(s.measured_block_cycle_ps.unwrap_or(0)),
                    s.predicted_block_cycle_clocks,
                    us(s.predicted_block_cycle_ps)
                )?;
            }
        }
        writeln!(w,
        "bottleneck: predicted stage {} ({}), measured stage {} ({}); predicted {} on the boards",
        self.predicted_bottleneck_stage,
        self.predicted_bottleneck,
        self.measured_bottleneck_stage,
        if simulated {
            "simulated block cycle"
        } else {
            "compute on this host"
        },
        rate(self.predicted_samples_per_second)
    )?;
        if let Some(o) = self.model {
            writeln!(w, "model written to {}", o.display())?;
        }
        Ok(())
    }
}
