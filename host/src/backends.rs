//! Opening a board by its backend name (`--backend`). Each backend adds its arm here.

use crate::board::{reference::ReferenceBoard, Board};
use anyhow::{bail, Result};
use edgeflow_core::Spec;

pub const BACKENDS: &str = "reference, float, rtl";

pub fn open_board(spec: &Spec, backend: &str) -> Result<Box<dyn Board>> {
    match backend {
        "reference" => Ok(Box::new(ReferenceBoard::new(spec, spec.default_staleness())?)),
        "rtl" => Ok(Box::new(crate::board::rtl::RtlBoard::new(spec)?)),
        other => bail!("unknown backend '{other}'; available: {BACKENDS}"),
    }
}
