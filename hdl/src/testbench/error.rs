//! Why an RTL simulation could not run or finish: bad arguments, a device that stopped or
//! answered out of protocol, or a tool (Icarus Verilog) that failed.

use crate::input_lanes::LanesError;
use edgeflow_core::state::ShapeError;
use edgeflow_reference::ModelError;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Lanes(#[from] LanesError),
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The io error is quoted, so not also the `source` (a printed chain would repeat it).
    #[error("cannot create {path}: {error}")]
    CreateVcd { path: String, error: std::io::Error },
    #[error("a beat stream of {words} words is not a whole number of {lanes}-word beats")]
    PartialBeat { words: usize, lanes: usize },
    #[error("the device stopped: {taken} of {beats} beats taken, {got} of {reply} reply words after {idle} idle clocks")]
    Stopped {
        taken: usize,
        beats: usize,
        got: usize,
        reply: usize,
        idle: u64,
    },
    #[error("{command}: expected acknowledgement {ack:#06x}, the device answered {got:04x?}")]
    NoAck {
        command: String,
        ack: u16,
        got: Vec<u16>,
    },
    #[error("READ_STATE: expected {words} words and {ack:#06x}, got {got} words")]
    ReadState { words: usize, ack: u16, got: usize },
    #[error("one {command} command carries at most 65535 samples, got {samples}")]
    CommandSamples {
        command: &'static str,
        samples: usize,
    },
    #[error("INFER: expected {predictions} predictions and {ack:#06x}, got {got:04x?}")]
    InferReply {
        predictions: usize,
        ack: u16,
        got: Vec<u16>,
    },
    #[error("iverilog failed on {dir}: {stderr}")]
    Iverilog { dir: String, stderr: String },
    #[error("the Verilog stopped answering after {words} words")]
    VerilogStopped { words: usize },
    #[error("the Verilog answered an undefined word ({word}) after {words} words")]
    VerilogUndefined { word: String, words: usize },
    #[error("board {board} stopped on a link error (from the previous board: {prev_error:#x}, from the next: {next_error:#x}; bits as in hdl/src/link/mod.rs)")]
    LinkFailed {
        board: usize,
        prev_error: u64,
        next_error: u64,
    },
    #[error("the linked boards did not finish within {clocks} clocks of the first (done per board: {done:?})")]
    LinkedStopped { clocks: u64, done: Vec<bool> },
    #[error("{what} of sample {sample} missing in block cycle {t}")]
    LinkMissing {
        what: String,
        sample: usize,
        t: usize,
    },
    #[error("{what} of sample {sample} took {took} block cycles, the link has {delay}")]
    LinkDelay {
        what: String,
        sample: usize,
        took: usize,
        delay: usize,
    },
    #[error("{builds} builds for {stages} stages")]
    Builds { builds: usize, stages: usize },
    #[error("link delays: {entries} entries for {junctions} junctions (need {need})")]
    LinkDelays {
        entries: usize,
        junctions: usize,
        need: usize,
    },
    #[error("stages {stages:?} do not cover junctions 1..{junctions} in order")]
    StageOrder {
        stages: Vec<(usize, usize)>,
        junctions: usize,
    },
    #[error("stages {stages:?} do not cover all {junctions} junctions")]
    StageCover {
        stages: Vec<(usize, usize)>,
        junctions: usize,
    },
    #[error("link delay {delay} between junctions {left} and {right} inside a stage")]
    DelayInsideStage {
        delay: usize,
        left: usize,
        right: usize,
    },
    #[error("one stream carries at most 65535 samples, got {samples}")]
    StreamSamples { samples: usize },
    /// Stages are named by their 1-based first and last junctions.
    #[error("stage {first}-{last}: no activations for sample {sample} in block cycle {t}")]
    NoActivations {
        first: usize,
        last: usize,
        sample: usize,
        t: usize,
    },
    #[error("stage {first}-{last} ran {got} block cycles of its stream's {want}")]
    BlockCycles {
        first: usize,
        last: usize,
        got: usize,
        want: usize,
    },
    #[error(
        "stage {first}-{last}: block cycle {t} wrote {wrote} of {right} right-layer activations"
    )]
    PartialWrite {
        first: usize,
        last: usize,
        t: usize,
        wrote: usize,
        right: usize,
    },
    #[error("stage {first}-{last}: block cycle {t} did not run (started {started})")]
    NotRun {
        first: usize,
        last: usize,
        t: usize,
        started: u32,
    },
    #[error("{name}: the Verilog printed {printed} clocks of {clocks} ({dir})")]
    ReplayClocks {
        name: String,
        printed: usize,
        clocks: usize,
        dir: String,
    },
    #[error("{name}: clock {clock}: output {port} is {got} in the Verilog, {want:x} in the model ({dir})")]
    ReplayOutput {
        name: String,
        clock: usize,
        port: String,
        got: String,
        want: u64,
        dir: String,
    },
    /// A stage's neighbour link (another process, a batch) failed; its own words.
    #[error("{0}")]
    Link(String),
}
