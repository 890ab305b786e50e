//! Why a board, link, plan file, plan or fit cannot be had; each message names the file or
//! flag, the rule, and what to do.
//!
//! A lower error (toml, JSON, io) quoted inside a sentence is kept as a field, not as the
//! `source`: the CLI prints an error with its chain (`{:#}`), which would repeat it.

use crate::catalog::MAX_BOARDS;
use crate::dp::MAX_PERMUTE_STATES;
use crate::report::PLAN_FORMAT;
use edgeflow_core::SpecError;

/// A board file that cannot be read or is wrong, or a `--boards` list that names no usable
/// boards.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("board file {file}: {}; see boards/nexys4-ddr.toml for a complete board file", .error.message().trim())]
    Toml {
        file: String,
        error: toml::de::Error,
    },
    #[error("invalid board file {file}:\n  - {}", .problems.join("\n  - "))]
    Invalid { file: String, problems: Vec<String> },
    #[error("board file {file} cannot be read: {error}; built-in boards: {built_in}")]
    Read {
        file: String,
        error: std::io::Error,
        built_in: String,
    },
    #[error("unknown board '{name}': not a built-in board ({built_in}) and no {name}.toml in $EDGEFLOW_BOARDS or ./boards/; write one like boards/nexys4-ddr.toml and pass its path")]
    Unknown { name: String, built_in: String },
    #[error("--boards item '{item}': {error}")]
    Count {
        item: String,
        error: std::num::ParseIntError,
    },
    #[error("--boards item '{item}': a count of {count} boards; NAMExK repeats a board K times, 1 ≤ K ≤ {}", MAX_BOARDS)]
    CountRange { item: String, count: usize },
    #[error("--boards lists {count} boards; at most {} are planned", MAX_BOARDS)]
    TooMany { count: usize },
    #[error("--boards is empty; name at least one board, e.g. --boards nexys4-ddr,nexys4-ddr")]
    Empty,
}

/// A `--link` name that is not one of the named link figures.
#[derive(Debug, thiserror::Error)]
#[error("--link {name}: no such link; the named links are {known}")]
pub struct UnknownLink {
    pub name: String,
    pub known: String,
}

/// A plan file that is not what `edgeflow plan` writes.
#[derive(Debug, thiserror::Error)]
pub enum PlanFileError {
    #[error("plan file {file}: {error}; {hint}: re-run edgeflow plan -o {file}")]
    Json {
        file: String,
        error: serde_json::Error,
        hint: &'static str,
    },
    #[error(
        "plan file {file}: format '{format}' is not {}; re-run edgeflow plan",
        PLAN_FORMAT
    )]
    Format { file: String, format: String },
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("plan file {file}: link_delay needs {link_delays} entries and staleness {junctions}")]
    Lengths {
        file: String,
        link_delays: usize,
        junctions: usize,
    },
    #[error("plan file {file}: {problem}; re-run edgeflow plan")]
    Stages { file: String, problem: StageProblem },
}

/// Why a plan file's stages are not what `plan` writes (junctions and stages from 1, list
/// indices from 0, as the file holds them).
#[derive(Debug, thiserror::Error)]
pub enum StageProblem {
    #[error("stages is empty; a plan needs at least one stage")]
    Empty,
    #[error("stages[{index}].junctions = [{first}, {last}]: stages must cover junctions 1 to {junctions} in order without gaps, so this stage must start at junction {next}")]
    Cover {
        index: usize,
        first: usize,
        last: usize,
        junctions: usize,
        next: usize,
    },
    #[error("stages[{index}].board_index = {board_index}: the plan offers only {boards} boards")]
    BoardIndex {
        index: usize,
        board_index: usize,
        boards: usize,
    },
    #[error(
        "stages[{index}].z = {z:?} differs from the spec's z {want:?} for junctions {first}-{last}"
    )]
    Z {
        index: usize,
        z: Vec<u64>,
        want: Vec<u64>,
        first: usize,
        last: usize,
    },
    #[error("link_delay[{index}] = {delay}: junctions {left} and {right} share board stage {stage}, so there is no link between them and the delay must be 0")]
    DelayInsideStage {
        index: usize,
        delay: u64,
        left: usize,
        right: usize,
        stage: usize,
    },
    #[error("the stages end at junction {end} but the spec has {junctions} junctions")]
    End { end: usize, junctions: usize },
}

/// Why no plan came out.
#[derive(Debug, thiserror::Error)]
pub enum PlanFailure {
    #[error("{spec} does not fit: {why}")]
    NoFit { spec: String, why: String },
    #[error("no boards given")]
    NoBoards,
    #[error("--permute over these boards needs {states} planner states (limit {}): boards of the same kind share states, so name fewer distinct kinds, or drop --permute and give the chain order", MAX_PERMUTE_STATES)]
    TooManyStates { states: usize },
    #[error("internal: planned z invalid: {0}")]
    PlannedZ(SpecError),
}

/// Too few synthesized cases to fit a board's logic model.
#[derive(Debug, thiserror::Error)]
#[error("{cases} synthesized case(s) for board {board}: the fit needs at least 3 (run docs/calibration/reproduce.sh for this board's target)")]
pub struct TooFewCases {
    pub cases: usize,
    pub board: String,
}
