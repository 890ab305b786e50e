//! `edgeflow train --resident --board B`: the data set uploaded once into the board's data
//! memory, every epoch run on chip, the test set inferred on chip, the weights read back.
//! Over a serial port to a real board, or `verilator`: the board top itself (PLL, UART bit by
//! bit, SPRAM from yosys' simulation model, or the board's SDRAM as rust-hdl's simulated chip)
//! in a Verilator co-simulation.

use crate::backends::{Needs, Use};
use crate::board::hostlink::WordLink;
use crate::board::resident::{check_fits, ResidentBoard};
use crate::board::serial::ByteStreamLink;
use crate::model::ModelFile;
use crate::report::{emit, Format};
use crate::train::init::{self, Init};
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::{ScaleKind, Spec, State};
use edgeflow_hdl::board::verilator_uart::{build_cached, sim_sources, UartStream};
use edgeflow_hdl::boards::board;
use edgeflow_hdl::design::{board_top_verilog, Inner};
use edgeflow_reference::accuracy;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct ResidentArgs {
    pub spec: Option<PathBuf>,
    /// Continue from this model (`train --init`): its state is loaded, the chip's sample
    /// order starts at the model's next epoch.
    pub init: Option<PathBuf>,
    pub board: String,
    pub data: String,
    pub label_column: Option<usize>,
    pub scale: Option<ScaleKind>,
    pub epochs: usize,
    pub backend: String,
    pub baud: Option<u32>,
    pub freq: Option<f64>,
    pub out: Option<PathBuf>,
    pub json: bool,
    /// Invert one bit of this byte (from 1) on the simulated line (tests of line errors).
    pub flip_byte: Option<u64>,
}

pub fn train_resident_cmd(a: ResidentArgs) -> Result<()> {
    let (spec, init) = init::spec_and_init(a.spec.as_deref(), a.init.as_deref())?;
    if a.epochs == 0 || a.epochs > 65535 {
        bail!(
            "--epochs: a resident run takes 1 to 65535 epochs, got {}",
            a.epochs
        );
    }
    let b = board(&a.board).map_err(|e| anyhow!("--board: {e}"))?;
    let (kind, words) = edgeflow_hdl::data_memory::for_board(b)?;
    let backend = crate::backends::parse(&a.backend)?;
    backend.check("--backend", Use::Resident)?;
    // a board on a port, else the board top co-simulated
    let on_board = backend.backend.needs == Needs::Board;
    let (port, port_baud) = match on_board {
        false => (None, None),
        true => {
            let s = &a.backend;
            let (p, baud) = crate::board::serial::parse_backend(s).ok_or_else(|| {
                anyhow!(
                    "bad serial backend '{s}'; use serial:/dev/ttyUSB1 or serial:/dev/ttyUSB1@BAUD"
                )
            })?;
            (Some(p), s.contains('@').then_some(baud))
        }
    };
    let baud = match (a.baud, port_baud) {
        (Some(x), Some(y)) if x != y => {
            bail!("--baud {x} and the backend's @{y} differ; give the rate once")
        }
        (Some(x), _) | (None, Some(x)) => x,
        (None, None) => {
            let mhz = edgeflow_hdl::board_top::clock_source(b, a.freq.unwrap_or(b.default_mhz))
                .map_err(|e| anyhow!("--freq: {e}"))?
                .1;
            crate::board::resident::default_baud(mhz)
        }
    };
    let split = init::load_data(&spec, init.as_ref(), &a.data, a.label_column, a.scale)?;
    let start = Start {
        state: init
            .as_ref()
            .map_or_else(|| State::initial(&spec), |i| i.state().clone()),
        first_epoch: init.as_ref().map_or(0, Init::first_epoch),
    };
    let (r, capacity) = (spec.record_words(), words / spec.record_words());
    // checked before anything is built or sent
    check_fits(&spec, words, split.train.len(), split.test.len())
        .with_context(|| format!("data {} on board {}", split.name, b.name))?;
    let inner = Inner::Resident(spec.clone()).for_board(b);
    let Inner::Resident(built) = &inner else {
        unreachable!()
    };
    let want = a.freq.unwrap_or(b.default_mhz);
    let top = board_top_verilog(&inner, b, want, baud)?;
    // the longest a command may run before it answers: the epochs on chip, projected at the
    // board's clock (twice, and ten seconds more), or for a co-simulation at 10,000 clocks a
    // second, slower than any board top runs under Verilator (a simulation that stops
    // ends the byte stream, and is told at once)
    let epoch_clocks = edgeflow_hdl::resident_protocol::train_resident_clocks_estimate(
        built,
        split.train.len().max(split.test.len()),
        a.epochs,
        kind.read_clocks(top.mhz),
    ) as f64;
    let answer_wait = Duration::from_secs_f64(match on_board {
        true => 2.0 * epoch_clocks / (top.mhz * 1e6) + 10.0,
        false => epoch_clocks / 1e4 + 600.0,
    });
    let t0 = Instant::now();
    let run = match port {
        None => {
            let (design, models) = sim_sources(&top)?;
            let pb = crate::ui::spinner(&format!(
                "building the Verilator co-simulation of the {} board top",
                b.name
            ));
            let h =
                build_cached(&design, &models).context("building the board top under Verilator");
            pb.finish_and_clear();
            let h = h?;
            let stream = UartStream::spawn_with_line_error(&h, top.clocks_per_bit, a.flip_byte)?;
            let link = ByteStreamLink::new(
                stream,
                format!("verilator:{}", b.name),
                Duration::from_secs(600),
            );
            run(
                built,
                link,
                answer_wait,
                top.clocks_per_bit,
                words,
                &split,
                &start,
                a.epochs,
            )?
        }
        Some(p) => {
            let link = crate::board::serial::open(&p, baud)?;
            run(
                built,
                link,
                answer_wait,
                top.clocks_per_bit,
                words,
                &split,
                &start,
                a.epochs,
            )?
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    let (state, clocks, test_preds) = run;
    let test_accuracy = accuracy(&test_preds, &split.test.labels);
    let seconds = clocks.total() as f64 / (top.mhz * 1e6);
    let samples = (split.train.len() * a.epochs) as f64;
    if let Some(out) = &a.out {
        let mut m = ModelFile::new(&spec, &spec.default_staleness(), &state, &split.scaling);
        m.features = Some(split.features);
        m.epochs = Some(start.first_epoch + a.epochs);
        m.save(out)?;
    }
    let r = Resident {
        spec: spec.name.clone(),
        board: b.name,
        backend: a.backend,
        data: split.name.clone(),
        epochs: a.epochs,
        train_samples: split.train.len(),
        test_samples: split.test.len(),
        test_accuracy,
        state_sha256: state.sha256(),
        clock_mhz: top.mhz,
        baud,
        record_words: r,
        resident_capacity_samples: capacity,
        clocks,
        end_to_end_seconds: seconds,
        end_to_end_samples_per_second: samples / seconds,
        simulation_seconds: (!on_board).then_some(wall),
        model: a.out,
    };
    emit(&r, Format::json(a.json));
    Ok(())
}

/// `train --resident`'s report.
#[derive(serde::Serialize)]
struct Resident {
    spec: String,
    board: &'static str,
    backend: String,
    data: String,
    epochs: usize,
    train_samples: usize,
    test_samples: usize,
    test_accuracy: f64,
    state_sha256: String,
    clock_mhz: f64,
    baud: u32,
    record_words: usize,
    resident_capacity_samples: usize,
    #[serde(flatten)]
    clocks: crate::board::resident::ResidentClocks,
    end_to_end_seconds: f64,
    end_to_end_samples_per_second: f64,
    /// Wall-clock seconds of a co-simulation.
    simulation_seconds: Option<f64>,
    model: Option<PathBuf>,
}

impl std::fmt::Display for Resident {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        writeln!(
            f,
            "{} on {} ({}, resident): test {:.2}% after {} epochs; {:.0} training samples/s end to end at {} MHz, {} baud",
            self.spec,
            self.board,
            self.backend,
            self.test_accuracy * 100.0,
            self.epochs,
            self.end_to_end_samples_per_second,
            self.clock_mhz,
            self.baud
        )?;
        let c = &self.clocks;
        writeln!(
            f,
            "clocks: upload {}, train {}, infer {}, read-back {}; state sha256 {}",
            c.upload_clocks, c.train_clocks, c.infer_clocks, c.readback_clocks, self.state_sha256
        )?;
        if let Some(o) = &self.model {
            writeln!(f, "model written to {}", o.display())?;
        }
        Ok(())
    }
}

type Run = (State, crate::board::resident::ResidentClocks, Vec<usize>);

/// Where a resident run starts: the spec's initial state at epoch 0, or a model's.
struct Start {
    state: State,
    first_epoch: usize,
}

#[allow(clippy::too_many_arguments)]
fn run<L: WordLink>(
    spec: &Spec,
    link: L,
    answer_wait: Duration,
    clocks_per_bit: u16,
    words: usize,
    split: &crate::train::Split,
    start: &Start,
    epochs: usize,
) -> Result<Run> {
    let mut rb = ResidentBoard::new(spec, link, clocks_per_bit, words);
    rb.answer_wait = answer_wait;
    rb.load_state(&start.state)?;
    let test_at = rb.upload(&split.train, &split.test)?;
    rb.train(split.train.len(), start.first_epoch, epochs)?;
    let preds = rb.infer(test_at, split.test.len())?;
    let state = rb.read_state()?;
    Ok((state, rb.clocks.clone(), preds))
}
