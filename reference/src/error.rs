//! Why a staleness vector or a starting state cannot be used by the model.

use edgeflow_core::state::ShapeError;

/// Why a staleness vector cannot come from any schedule.
#[derive(Debug, thiserror::Error)]
pub enum StalenessError {
    #[error("staleness has {entries} entries, the network has {junctions} junctions")]
    Entries { entries: usize, junctions: usize },
    #[error("the last junction's staleness must be at least 1 (its BP follows its FF)")]
    LastBelowOne,
    #[error("staleness of junction {junction} ({staleness}) must exceed junction {next}'s ({next_staleness}) by at least 2: its FF is one block cycle earlier and its BP one later")]
    TooClose {
        junction: usize,
        staleness: usize,
        next: usize,
        next_staleness: usize,
    },
}

/// Why a model cannot start from a given state and schedule.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error(transparent)]
    Staleness(#[from] StalenessError),
}
