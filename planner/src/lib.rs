//! Partitioning a network across boards in a chain (docs/design.md, "Multi-board pipelines"):
//! the board catalog,
//! the cost model, the exact planner, an exhaustive checker, the baselines users know and the
//! report `edgeflow plan` prints. No hardware dependencies.

pub mod calibrate;
pub mod catalog;
pub mod cost;
pub mod dp;
pub mod error;
pub mod exhaustive;
pub mod instances;
pub mod memories;
pub mod report;

pub use catalog::{Board, Fit};
pub use cost::{Net, Ps};
pub use dp::{optimize, Order, Solution, StagePlan};
pub use error::{CatalogError, PlanFailure, PlanFileError};
