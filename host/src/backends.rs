//! Opening a board by its backend name (`--backend`). Each backend adds its arm here.

use crate::board::{reference::ReferenceBoard, Board};
use anyhow::{bail, Result};
use edgeflow_core::Spec;

pub const BACKENDS: &str =
    "reference, float, opencl[:DEVICE], rtl, verilator, serial:/dev/ttyUSBn[@BAUD]";

/// An OpenCL backend name: `opencl` or `opencl:DEVICE`.
pub fn is_opencl(backend: &str) -> bool {
    backend == "opencl" || backend.starts_with("opencl:")
}

pub fn open_board(spec: &Spec, backend: &str) -> Result<Box<dyn Board>> {
    match backend {
        "reference" => Ok(Box::new(ReferenceBoard::new(
            spec,
            spec.default_staleness(),
        )?)),
        "opencl" => Ok(Box::new(crate::board::opencl::OpenClBoard::new(
            spec,
            spec.default_staleness(),
            None,
        )?)),
        b if b.starts_with("opencl:") => Ok(Box::new(crate::board::opencl::OpenClBoard::new(
            spec,
            spec.default_staleness(),
            Some(&b[7..]),
        )?)),
        "rtl" => Ok(Box::new(crate::board::rtl::RtlBoard::new(spec)?)),
        "verilator" => Ok(Box::new(crate::board::verilator::open(spec)?)),
        s if s.starts_with("serial:") => {
            let (port, baud) = crate::board::serial::parse_backend(s).ok_or_else(|| {
                anyhow::anyhow!(
                    "bad serial backend '{s}'; use serial:/dev/ttyUSB1 or serial:/dev/ttyUSB1@BAUD"
                )
            })?;
            let link = crate::board::serial::open(&port, baud)?;
            Ok(Box::new(
                crate::board::hostlink::HostLinkBoard::with_initial_state(spec, link)?,
            ))
        }
        other => bail!("unknown backend '{other}'; available: {BACKENDS}"),
    }
}

/// `bench --backends`: every name one `bench` can measure (the boards above and the CPU
/// baselines), so a typo is an error instead of a row marked unavailable.
pub fn check_bench_names<'a>(lists: impl Iterator<Item = &'a String>) -> Result<()> {
    let named = lists.flat_map(|s| s.split(','));
    for b in named.map(str::trim).filter(|b| !b.is_empty()) {
        let known = matches!(
            b,
            "reference"
                | "float"
                | "sparse-f32"
                | "dense"
                | "dense-minibatch"
                | "opencl"
                | "rtl"
                | "verilator"
        ) || b.starts_with("opencl:")
            || b.starts_with("serial:");
        if !known {
            bail!(
                "--backends: unknown backend '{b}'; the names are reference, float, sparse-f32, dense, dense-minibatch, opencl[:DEVICE], rtl, verilator and serial:PORT[@BAUD]"
            );
        }
    }
    Ok(())
}
