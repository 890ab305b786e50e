//! `edgeflow devices` and `edgeflow kernels build`: what OpenCL offers, and the device binary
//! of the kernels for boards that load a precompiled program.

use crate::report::{emit, Format};
use crate::util::write_atomic;
use anyhow::{Context, Result};
use edgeflow_opencl::{devices, kernel_source_sha256, Device, DeviceInfo};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// `edgeflow devices`' report.
#[derive(Serialize)]
struct Devices {
    devices: Vec<DeviceInfo>,
}

impl fmt::Display for Devices {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        if self.devices.is_empty() {
            return writeln!(w, "an OpenCL runtime is installed but it reports no device (install pocl-opencl-icd for CPU devices)");
        }
        writeln!(
            w,
            "{:>3}  {:<28} {:<12} {:>4} {:>10} {:>6}  {:<14} platform",
            "#", "device", "type", "CUs", "memory", "MHz", "driver"
        )?;
        for d in &self.devices {
            writeln!(
                w,
                "{:>3}  {:<28} {:<12} {:>4} {:>7} MiB {:>6}  {:<14} {}",
                d.index,
                d.name,
                d.kind,
                d.compute_units,
                d.global_memory_bytes >> 20,
                d.max_clock_mhz,
                d.driver_version,
                d.platform
            )?;
        }
        writeln!(
            w,
            "use one with `--backend opencl:INDEX` or `--backend opencl:NAME`"
        )
    }
}

pub fn devices_cmd(json: bool) -> Result<()> {
    emit(
        &Devices {
            devices: devices()?,
        },
        Format::json(json),
    );
    Ok(())
}

/// `edgeflow kernels build`'s report.
#[derive(Serialize)]
struct KernelBinary {
    device: DeviceInfo,
    file: PathBuf,
    bytes: usize,
    kernels_sha256: String,
}

impl fmt::Display for KernelBinary {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        let d = &self.device;
        writeln!(
            w,
            "kernel binary for device {} '{}' ({}, driver {}): {} bytes written to {}",
            d.index,
            d.name,
            d.platform,
            d.driver_version,
            self.bytes,
            self.file.display()
        )?;
        writeln!(
            w,
            "load it with `--kernel-binary {}` (same device only)",
            self.file.display()
        )
    }
}

pub fn kernels_build_cmd(device: Option<&str>, out: &Path, json: bool) -> Result<()> {
    let pb = crate::ui::spinner("building the OpenCL kernels");
    let dev = Device::open(device);
    pb.finish_and_clear();
    let dev = dev?;
    let bin = dev.export_binary()?;
    write_atomic(out, &bin).with_context(|| format!("writing kernel binary {}", out.display()))?;
    let r = KernelBinary {
        device: dev.info.clone(),
        file: out.to_path_buf(),
        bytes: bin.len(),
        kernels_sha256: kernel_source_sha256(),
    };
    emit(&r, Format::json(json));
    Ok(())
}
