//! `edgeflow devices` and `edgeflow kernels build`: what OpenCL offers, and the device binary
//! of the kernels for boards that load a precompiled program.

use crate::util::{print_json, write_atomic};
use anyhow::{Context, Result};
use edgeflow_opencl::{devices, kernel_source_sha256, Device};
use serde_json::json;
use std::path::Path;

pub fn devices_cmd(json: bool) -> Result<()> {
    let list = devices()?;
    if json {
        print_json(&json!({ "devices": list }));
        return Ok(());
    }
    if list.is_empty() {
        println!("an OpenCL runtime is installed but it reports no device (install pocl-opencl-icd for CPU devices)");
        return Ok(());
    }
    println!(
        "{:>3}  {:<28} {:<12} {:>4} {:>10} {:>6}  {:<14} platform",
        "#", "device", "type", "CUs", "memory", "MHz", "driver"
    );
    for d in &list {
        println!(
            "{:>3}  {:<28} {:<12} {:>4} {:>7} MiB {:>6}  {:<14} {}",
            d.index,
            d.name,
            d.kind,
            d.compute_units,
            d.global_memory_bytes >> 20,
            d.max_clock_mhz,
            d.driver_version,
            d.platform
        );
    }
    println!("use one with `--backend opencl:INDEX` or `--backend opencl:NAME`");
    Ok(())
}

pub fn kernels_build_cmd(device: Option<&str>, out: &Path, json: bool) -> Result<()> {
    let pb = crate::ui::spinner("building the OpenCL kernels");
    let dev = Device::open(device);
    pb.finish_and_clear();
    let dev = dev?;
    let bin = dev.export_binary()?;
    write_atomic(out, &bin).with_context(|| format!("writing kernel binary {}", out.display()))?;
    if json {
        print_json(&json!({
            "device": dev.info,
            "file": out,
            "bytes": bin.len(),
            "kernels_sha256": kernel_source_sha256(),
        }));
    } else {
        println!(
            "kernel binary for device {} '{}' ({}, driver {}): {} bytes written to {}",
            dev.info.index,
            dev.info.name,
            dev.info.platform,
            dev.info.driver_version,
            bin.len(),
            out.display()
        );
        println!(
            "load it with `--kernel-binary {}` (same device only)",
            out.display()
        );
    }
    Ok(())
}
