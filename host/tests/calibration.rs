//! The cost model held to real synthesis. docs/calibration/reproduce.sh synthesizes a set of
//! small networks alone (`runs/`, at least five per logic family) and tiny and digits inside
//! every board's board top (`boards/`). These tests check that those runs are of the Verilog
//! this tree generates (a run of an older datapath would prove nothing), that the model is
//! within its stated band of every run, that its fit verdict is the real one on every board,
//! and, with the tools installed, that yosys gives today exactly what a run recorded.

mod common;

use common::{have, root};
use edgeflow_core::Spec;
use edgeflow_hdl::design::{board_top_verilog, inner_verilog, Inner};
use edgeflow_planner::cost::{single_board_usage, Net};
use edgeflow_planner::Board;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// One recorded run: its spec (with the run's z), the board of the model, and the report.
struct Run {
    name: String,
    spec: Spec,
    board: String,
    /// Board top (`edgeflow synth --board`) rather than the network alone.
    top: bool,
    synth: Value,
}

/// `NAME[@zA-B][@dspN]-TARGET` in runs/ or `NAME[@zA-B]-BOARD` in boards/: the spec from
/// specs/ or docs/calibration/specs/ with that z and DSP budget, and the board from the run's
/// cost report.
fn runs(dir: &str) -> Vec<Run> {
    let d = root().join("docs/calibration").join(dir);
    let mut out = vec![];
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".synth.json"))
        .collect();
    paths.sort();
    for p in paths {
        let name = p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".synth.json")
            .to_string();
        let cost: Value = read_json(&p.with_file_name(format!("{name}.cost.json")));
        let synth = read_json(&p);
        let spec_name = cost["spec"].as_str().unwrap().to_string();
        let file = ["specs", "docs/calibration/specs"]
            .iter()
            .map(|d| root().join(d).join(format!("{spec_name}.toml")))
            .find(|f| f.exists())
            .unwrap_or_else(|| panic!("{name}: no spec file for {spec_name}"));
        let mut spec = Spec::load(&file).unwrap();
        for tag in name.split('@').skip(1) {
            let numbers =
                |t: &str| -> Vec<usize> { t.split('-').map_while(|t| t.parse().ok()).collect() };
            if let Some(z) = tag.strip_prefix('z') {
                spec.z = numbers(z).into_iter().take(spec.z.len()).collect();
            } else if let Some(dsp) = tag.strip_prefix("dsp") {
                spec.dsp_multipliers = numbers(dsp).first().copied();
            }
        }
        assert_eq!(
            cost["z"],
            serde_json::json!(spec.z),
            "{name}: z of the cost report"
        );
        out.push(Run {
            name,
            spec,
            board: cost["board"].as_str().unwrap().to_string(),
            top: dir == "boards",
            synth,
        });
    }
    out
}

fn read_json(p: &Path) -> Value {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn key(verilog: &str) -> String {
    Sha256::digest(verilog.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Run {
    fn verilog(&self) -> String {
        let inner = Inner::Network(self.spec.clone());
        if self.top {
            let b = edgeflow_hdl::boards::board(&self.board).unwrap();
            board_top_verilog(&inner.for_board(b), b, b.default_mhz, 115_200)
                .unwrap()
                .verilog
        } else {
            inner_verilog(&inner).unwrap()
        }
    }

    fn used(&self, resource: &str) -> Option<(f64, f64)> {
        self.synth["table"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == resource)
            .map(|r| {
                (
                    r["used"].as_f64().unwrap(),
                    r["available"].as_f64().unwrap(),
                )
            })
    }

    /// What the part's logic is counted in: packed logic cells on the iCE40, else LUTs.
    fn logic(&self) -> f64 {
        self.used("LC").or_else(|| self.used("LUT")).unwrap().0
    }

    /// The real verdict: nothing synthesis mapped is over what the part has.
    fn fits(&self) -> bool {
        self.synth["table"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["used"].as_f64().unwrap() <= r["available"].as_f64().unwrap())
    }

    fn model(&self) -> edgeflow_planner::cost::Usage {
        let board = self.board_file();
        let z: Vec<u64> = self.spec.z.iter().map(|&z| z as u64).collect();
        single_board_usage(&Net::from_spec(&self.spec), &board, &z)
    }

    /// The board as its file in boards/ says (the suite runs outside the repository root).
    fn board_file(&self) -> Board {
        let f = root().join("boards").join(format!("{}.toml", self.board));
        Board::resolve(f.to_str().unwrap()).unwrap()
    }

    fn family(&self) -> &str {
        let t = self.synth["table"]["target"].as_str().unwrap();
        t.split('-').next().unwrap()
    }
}

#[test]
fn every_run_is_of_todays_verilog() {
    let all: Vec<Run> = runs("runs").into_iter().chain(runs("boards")).collect();
    let stale: Vec<String> = all
        .iter()
        .filter(|r| r.synth["verilog_key"].as_str() != Some(&key(&r.verilog())))
        .map(|r| r.name.clone())
        .collect();
    assert!(
        stale.is_empty(),
        "calibration runs of another Verilog than this tree's: {stale:?}; rerun \
         docs/calibration/reproduce.sh (and refit with `edgeflow cost --fit`)"
    );
}

/// The model's logic (LUTs, or packed logic cells on the iCE40) is within the error its
/// board file states (`[fit] logic_error`, what the fit verdict's margin is made of) of
/// synthesis on every run, the networks alone and inside the board tops.
#[test]
fn the_model_is_within_its_stated_error_of_synthesis_on_every_run() {
    let nets = runs("runs");
    for family in ["ice40", "ecp5", "xc7a100t"] {
        let n = nets.iter().filter(|r| r.family() == family).count();
        assert!(n >= 5, "{n} calibration runs of family {family}");
    }
    let mut off = vec![];
    for r in nets.iter().chain(&runs("boards")) {
        let b = r.board_file();
        // the network alone has no board top, and so none of its UART bridge
        let link = if r.top { 0 } else { b.fit.logic_serial_link };
        let predicted = r.model().logic.saturating_sub(link) as f64;
        let error = predicted / r.logic() - 1.0;
        if error.abs() > b.fit.logic_error {
            off.push(format!(
                "{}: {predicted} predicted, {} synthesized ({:+.0}%, the board file states {:.0}%)",
                r.name,
                r.logic(),
                error * 100.0,
                b.fit.logic_error * 100.0
            ));
        }
    }
    assert!(off.is_empty(), "{off:#?}");
}

/// `cost`'s verdict on every run (tiny and digits inside every board file's board top, and
/// the networks alone) is synthesis' own or "near the limit", never the opposite.
#[test]
fn the_fit_verdict_is_never_the_opposite_of_synthesis() {
    let runs = runs("boards");
    let boards: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.board.as_str()).collect();
    let files = std::fs::read_dir(root().join("boards")).unwrap();
    for f in files {
        let name = f.unwrap().file_name().to_string_lossy().to_string();
        let b = name.trim_end_matches(".toml");
        // an OpenCL device has no board top
        if b == "opencl-device" {
            continue;
        }
        for spec in ["tiny", "digits"] {
            assert!(
                runs.iter()
                    .any(|r| r.board == b && r.name == format!("{spec}-{b}")),
                "no board-top run of {spec} on {b}"
            );
        }
    }
    let mut wrong = vec![];
    // the networks alone too, against the same parts without the board top's logic
    let nets = self::runs("runs");
    for r in runs.iter().chain(&nets) {
        let mut u = r.model();
        if !r.top {
            u.logic -= r.board_file().fit.logic_serial_link;
        }
        // near the limit (None) the model makes no claim; otherwise it must be the real one
        if u.verdict() == Some(!r.fits()) {
            wrong.push(format!(
                "{}: the model says {} (logic {} of {}), synthesis {} (logic {})",
                r.name,
                if r.fits() { "does not fit" } else { "fits" },
                u.logic,
                u.logic_available,
                if r.fits() { "fits" } else { "does not fit" },
                r.logic()
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // the set holds real fits and real misses that the model calls so: a model that always
    // said "fits", "does not fit" or "near the limit" would fail here
    let called = |fit: bool| {
        runs.iter()
            .any(|r| r.fits() == fit && r.model().verdict() == Some(fit))
    };
    assert!(called(true) && called(false), "{boards:?}");
}

/// yosys (and nextpnr's packer on the iCE40) give today exactly what the recorded run of the
/// smallest network says, on each family: the runs are real and reproducible with the tools
/// the suite installs.
#[test]
fn yosys_gives_today_what_a_recorded_run_says() {
    if !(have("yosys", "yosys") && have("nextpnr-ice40", "nextpnr-ice40")) {
        return;
    }
    let spec = root().join("docs/calibration/specs/small-c.toml");
    for target in ["ice40-up5k", "ecp5-85k", "xc7a100t"] {
        let got = common::ok_json(&[
            "synth",
            "--spec",
            spec.to_str().unwrap(),
            "--target",
            target,
            "--json",
        ]);
        let want = read_json(
            &root()
                .join("docs/calibration/runs")
                .join(format!("small-c-{target}.synth.json")),
        );
        assert_eq!(got["verilog_key"], want["verilog_key"], "{target}");
        assert_eq!(got["table"]["rows"], want["table"]["rows"], "{target}");
    }
}

/// On the ECP5 the model counts a block RAM per lane's bank (`ram_bank_min_rows`): within two
/// blocks or a tenth of the DP16KD that the routed dey-mnist on the ULX3S 85F uses
/// (docs/ecp5). Under dither (tiny and digits on every ULX3S) a lane's replica of the left
/// activations holds the banks its pattern visits, which the model does not know: it counts
/// the whole layer, so it may count more than synthesis maps, never fewer by more than that
/// margin.
#[test]
fn ecp5_block_rams_are_counted_per_bank() {
    let mut cases: Vec<(String, f64, u64)> = vec![];
    let mut dither = 0;
    for r in runs("boards")
        .iter()
        .filter(|r| r.board.starts_with("ulx3s"))
    {
        let (real, model) = (r.used("BRAM").unwrap().0, r.model().ram_blocks);
        if r.spec.pattern.dither {
            let low = real - (0.1 * real).max(2.0);
            assert!(model as f64 >= low, "{}: {model} for {real} DP16KD", r.name);
            dither += 1;
        } else {
            cases.push((r.name.clone(), real, model));
        }
    }
    assert!(dither >= 6, "{dither} ULX3S runs under dither");
    let routed = read_json(&root().join("docs/ecp5/dey-mnist-ulx3s-85f.json"));
    let used = routed["resources"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "BRAM")
        .unwrap()["used"]
        .as_f64()
        .unwrap();
    let spec = Spec::load(&root().join("specs/dey-mnist-ulx3s.toml")).unwrap();
    let board = Board::resolve(root().join("boards/ulx3s-85f.toml").to_str().unwrap()).unwrap();
    let z: Vec<u64> = spec.z.iter().map(|&z| z as u64).collect();
    let model = single_board_usage(&Net::from_spec(&spec), &board, &z).ram_blocks;
    cases.push(("dey-mnist-ulx3s routed".into(), used, model));
    let off: Vec<_> = cases
        .iter()
        .filter(|(_, real, model)| (*model as f64 - real).abs() > (0.1 * real).max(2.0))
        .collect();
    assert!(off.is_empty(), "(case, DP16KD, model): {off:?}");
}

/// On the iCE40 (no LUT RAM) the model counts every memory of the board's Verilog as yosys
/// maps it (planner/src/memories.rs). On every board-top run it is never below the EBR that
/// synthesis maps, so a plan it says fits has the blocks it needs; on digits, which fills the
/// UP5K's 30, it is exact. Where the pattern's dither leaves a lane's banks open the model
/// takes the largest layout (tiny: 22 counted, 16 mapped).
#[test]
fn ice40_block_rams_are_counted_per_memory() {
    let cases: Vec<(String, f64, u64)> = runs("boards")
        .iter()
        .filter(|r| r.board == "icebreaker" || r.board == "alchitry-cu")
        .map(|r| {
            (
                r.name.clone(),
                r.used("BRAM").unwrap().0,
                r.model().ram_blocks,
            )
        })
        .collect();
    assert!(cases.len() >= 5, "{cases:?}");
    let under: Vec<_> = cases
        .iter()
        .filter(|(_, real, model)| (*model as f64) < *real)
        .collect();
    assert!(
        under.is_empty(),
        "(case, EBR, model) below synthesis: {under:?}"
    );
    let over: Vec<_> = cases
        .iter()
        .filter(|(_, real, model)| *model as f64 > real + 6.0)
        .collect();
    assert!(
        over.is_empty(),
        "(case, EBR, model) over by more than 6: {over:?}"
    );
    for digits in ["digits-icebreaker", "digits-alchitry-cu"] {
        let (_, real, model) = cases.iter().find(|c| c.0 == digits).unwrap();
        assert_eq!(*model as f64, *real, "{digits}");
    }
}
