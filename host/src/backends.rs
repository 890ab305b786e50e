//! Opening a board by its backend name (`--backend`). Each backend adds its arm here.

use crate::board::{reference::ReferenceBoard, Board};
use anyhow::{bail, Result};
use edgeflow_core::Spec;

pub const BACKENDS: &str = "reference, float, opencl[:DEVICE]";

pub fn open_board(spec: &Spec, backend: &str) -> Result<Box<dyn Board>> {
    match backend {
        "reference" => Ok(Box::new(ReferenceBoard::new(spec, spec.default_staleness())?)),
        "opencl" => Ok(Box::new(crate::board::opencl::OpenClBoard::new(spec, spec.default_staleness(), None)?)),
        b if b.starts_with("opencl:") => {
            Ok(Box::new(crate::board::opencl::OpenClBoard::new(spec, spec.default_staleness(), Some(&b[7..]))?))
        }
        other => bail!("unknown backend '{other}'; available: {BACKENDS}"),
    }
}
