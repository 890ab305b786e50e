//! edgeflow on OpenCL devices: the same junction-pipelined datapath as the reference model,
//! bit for bit, on any OpenCL device (PoCL on a CPU, a GPU driver, or an FPGA board's runtime
//! loading a precompiled kernel binary).
//!
//! # Layers
//!
//! - [`Device`]: one OpenCL device with its context, queue and built program. Programs are
//!   cached per process ([`Device::open`]), since building the kernels takes seconds on PoCL.
//!   The program comes from the embedded source (`kernels/edgeflow.cl`, `include_str!`) or
//!   from a device binary exported earlier ([`Device::open_with_binary`]) — the path a
//!   bitstream-backed board takes, where the runtime cannot compile source at all.
//! - [`OpenClStage`]: a contiguous junction range `[j0, j1)` of a network on one device, run
//!   window by window of block cycles under a global [`Schedule`]. This is the unit a multi-board
//!   runtime chains: it exchanges boundary buffers (activations forward, back-propagated sums
//!   backward) between the windows of neighbouring stages.
//! - [`OpenClNetwork`]: the whole network on one device, the stage `[0, L)` with no boundaries.
//!
//! # Binary format
//!
//! [`Device::export_binary`] wraps the driver's program binary in a small container: a magic
//! line, the device, platform and driver it was built for, the SHA-256 of the kernel source, and
//! the driver's bytes. Loading checks all of them, so a binary for another device, for other
//! kernels or a corrupt file is a clear error rather than a driver crash.
//!
//! # Without an OpenCL runtime
//!
//! `libOpenCL.so.1` is loaded at run time (opencl3's `dynamic` feature), so code that never
//! touches OpenCL runs anywhere; asking for a device there returns [`no_runtime_error`].

mod buffer;
mod network;
mod stage;

pub use network::OpenClNetwork;
pub use stage::{OpenClStage, WindowIo, WindowOutput};

use anyhow::{anyhow, bail, Context as _, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device as ClDev, CL_DEVICE_TYPE_ALL};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

pub use edgeflow_reference::Schedule;

/// The kernel source, embedded so the binary is self-contained.
pub const KERNEL_SOURCE: &str = include_str!("../../kernels/edgeflow.cl");

/// Build options: the kernels are plain OpenCL C 1.2.
const BUILD_OPTIONS: &str = "-cl-std=CL1.2";

const BINARY_MAGIC: &str = "EDGEFLOW-OPENCL-BINARY 1";

/// SHA-256 of the embedded kernel source (hex), recorded in exported binaries.
pub fn kernel_source_sha256() -> String {
    hex(&Sha256::digest(KERNEL_SOURCE.as_bytes()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The error for a machine without an OpenCL runtime or without any device.
pub fn no_runtime_error(what: &str) -> anyhow::Error {
    anyhow!(
        "{what}. The OpenCL backend needs an OpenCL runtime (libOpenCL.so.1) and at least one device: \
on Debian/Ubuntu install them with `sudo apt-get install pocl-opencl-icd ocl-icd-libopencl1` \
(PoCL gives CPU devices; `POCL_DEVICES=\"pthread pthread\"` makes several), then check with `edgeflow devices`"
    )
}

/// One OpenCL device as `edgeflow devices` lists it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    /// Index in the flattened list of all devices of all platforms (`--backend opencl:INDEX`).
    pub index: usize,
    pub platform: String,
    pub platform_version: String,
    pub name: String,
    pub vendor: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub compute_units: u32,
    pub max_clock_mhz: u32,
    pub global_memory_bytes: u64,
    pub max_allocation_bytes: u64,
    pub driver_version: String,
    pub opencl_version: String,
    #[serde(skip)]
    id: usize,
}

fn cl_err(what: &str) -> impl Fn(opencl3::error_codes::ClError) -> anyhow::Error + '_ {
    move |e| {
        if e.0 == opencl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED {
            no_runtime_error("no OpenCL runtime found (libOpenCL.so.1 could not be loaded)")
        } else {
            anyhow!("OpenCL {what} failed: {e} ({})", e.0)
        }
    }
}

/// Every device of every platform, in a stable order. An empty list when the runtime loads
/// but has no platform; an error naming the packages to install when there is no runtime.
/// Queried once per process: PoCL's device queries are not safe while another thread builds
/// a program on the device.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    static LIST: OnceLock<std::result::Result<Vec<DeviceInfo>, String>> = OnceLock::new();
    LIST.get_or_init(|| query_devices().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

fn query_devices() -> Result<Vec<DeviceInfo>> {
    let platforms = match get_platforms() {
        Ok(p) => p,
        // The ICD loader reports "no platform" as an error code.
        Err(e) if e.0 == opencl3::error_codes::CL_PLATFORM_NOT_FOUND_KHR => return Ok(Vec::new()),
        Err(e) => return Err(cl_err("platform query")(e)),
    };
    let mut out = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_default();
        let pver = p.version().unwrap_or_default();
        let ids = match p.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(_) => continue,
        };
        for id in ids {
            let d = ClDev::new(id);
            let t = d.dev_type().unwrap_or(0);
            let kind = match t {
                t if t & opencl3::device::CL_DEVICE_TYPE_CPU != 0 => "cpu",
                t if t & opencl3::device::CL_DEVICE_TYPE_GPU != 0 => "gpu",
                t if t & opencl3::device::CL_DEVICE_TYPE_ACCELERATOR != 0 => "accelerator",
                _ => "other",
            };
            out.push(DeviceInfo {
                index: out.len(),
                platform: pname.clone(),
                platform_version: pver.clone(),
                name: d.name().unwrap_or_default(),
                vendor: d.vendor().unwrap_or_default(),
                kind: kind.into(),
                compute_units: d.max_compute_units().unwrap_or(0),
                max_clock_mhz: d.max_clock_frequency().unwrap_or(0),
                global_memory_bytes: d.global_mem_size().unwrap_or(0),
                max_allocation_bytes: d.max_mem_alloc_size().unwrap_or(0),
                driver_version: d.driver_version().unwrap_or_default(),
                opencl_version: d.version().unwrap_or_default(),
                id: id as usize,
            });
        }
    }
    Ok(out)
}

/// Pick a device: `None` or empty for the first, a number for that index, otherwise the
/// first device whose name or platform contains the text (case-insensitive).
pub fn select_device(which: Option<&str>) -> Result<DeviceInfo> {
    let all = devices()?;
    if all.is_empty() {
        return Err(no_runtime_error(
            "the OpenCL runtime is installed but reports no device",
        ));
    }
    let list = || {
        all.iter()
            .map(|d| format!("  {}: {} ({})", d.index, d.name, d.platform))
            .collect::<Vec<_>>()
            .join("\n")
    };
    match which.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(all[0].clone()),
        Some(s) => {
            if let Ok(i) = s.parse::<usize>() {
                return all.get(i).cloned().ok_or_else(|| {
                    anyhow!(
                        "OpenCL device index {i} does not exist; the devices are:\n{}",
                        list()
                    )
                });
            }
            let low = s.to_lowercase();
            all.iter()
                .find(|d| {
                    d.name.to_lowercase().contains(&low) || d.platform.to_lowercase().contains(&low)
                })
                .cloned()
                .ok_or_else(|| {
                    anyhow!(
                        "no OpenCL device matches '{s}'; the devices are:\n{}",
                        list()
                    )
                })
        }
    }
}

/// A device with its context, queue and built program, shared by every stage on it.
pub struct Device {
    pub info: DeviceInfo,
    pub(crate) context: Context,
    pub(crate) queue: CommandQueue,
    pub(crate) program: Program,
    /// Where the program came from: `source` or the binary file.
    pub origin: String,
}

type Cache = Mutex<HashMap<(usize, String), Arc<Device>>>;

fn cache() -> &'static Cache {
    static C: OnceLock<Cache> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Device {
    /// The device `which` (see [`select_device`]) with the program built from the embedded
    /// source; built once per process and device.
    pub fn open(which: Option<&str>) -> Result<Arc<Device>> {
        let info = select_device(which)?;
        let key = (info.id, "source".to_string());
        let mut c = cache().lock().unwrap();
        if let Some(d) = c.get(&key) {
            return Ok(d.clone());
        }
        let (context, queue) = context_queue(&info)?;
        let mut program = Program::create_from_source(&context, KERNEL_SOURCE)
            .map_err(cl_err("program creation"))?;
        if let Err(e) = program.build(context.devices(), BUILD_OPTIONS) {
            let log = program
                .get_build_log(context.devices()[0])
                .unwrap_or_default();
            bail!(
                "building the OpenCL kernels for {} failed ({e}):\n{log}",
                info.name
            );
        }
        let d = Arc::new(Device {
            info,
            context,
            queue,
            program,
            origin: "source".into(),
        });
        c.insert(key, d.clone());
        Ok(d)
    }

    /// The device `which` with the program loaded from a binary written by
    /// [`Device::export_binary`] (`--kernel-binary FILE`).
    pub fn open_with_binary(which: Option<&str>, file: &std::path::Path) -> Result<Arc<Device>> {
        let info = select_device(which)?;
        let bytes = std::fs::read(file)
            .with_context(|| format!("reading kernel binary {}", file.display()))?;
        let driver_bytes = check_container(&bytes, &info).with_context(|| {
            format!(
                "kernel binary {} cannot be loaded on '{}'",
                file.display(),
                info.name
            )
        })?;
        let key = (info.id, hex(&Sha256::digest(&bytes)));
        let mut c = cache().lock().unwrap();
        if let Some(d) = c.get(&key) {
            return Ok(d.clone());
        }
        let (context, queue) = context_queue(&info)?;
        let mut program = unsafe { Program::create_from_binary(&context, context.devices(), &[driver_bytes]) }
            .map_err(|e| {
                anyhow!(
                    "kernel binary {}: the OpenCL driver rejected it ({e}); rebuild it with `edgeflow kernels build --device {} -o FILE`",
                    file.display(),
                    info.index
                )
            })?;
        if let Err(e) = program.build(context.devices(), BUILD_OPTIONS) {
            let log = program
                .get_build_log(context.devices()[0])
                .unwrap_or_default();
            bail!(
                "kernel binary {}: the OpenCL driver could not build it ({e}):\n{log}",
                file.display()
            );
        }
        let d = Arc::new(Device {
            info,
            context,
            queue,
            program,
            origin: file.display().to_string(),
        });
        c.insert(key, d.clone());
        Ok(d)
    }

    /// The program's device binary in edgeflow's container (see the crate docs).
    pub fn export_binary(&self) -> Result<Vec<u8>> {
        let bins = self
            .program
            .get_binaries()
            .map_err(cl_err("binary export"))?;
        let bin = bins
            .into_iter()
            .next()
            .filter(|b| !b.is_empty())
            .ok_or_else(|| {
                anyhow!(
                    "the OpenCL driver of '{}' returned no program binary",
                    self.info.name
                )
            })?;
        let header = format!(
            "{BINARY_MAGIC}\ndevice={}\nplatform={}\ndriver={}\nkernels_sha256={}\nbytes={}\nbinary_sha256={}\n\n",
            self.info.name,
            self.info.platform,
            self.info.driver_version,
            kernel_source_sha256(),
            bin.len(),
            hex(&Sha256::digest(&bin)),
        );
        let mut out = header.into_bytes();
        out.extend_from_slice(&bin);
        Ok(out)
    }
}

fn context_queue(info: &DeviceInfo) -> Result<(Context, CommandQueue)> {
    let dev = ClDev::new(info.id as opencl3::types::cl_device_id);
    let context = Context::from_device(&dev).map_err(cl_err("context creation"))?;
    #[allow(deprecated)]
    let queue =
        unsafe { CommandQueue::create(&context, dev.id(), 0) }.map_err(cl_err("queue creation"))?;
    Ok((context, queue))
}

/// Validate an exported binary against the device and the embedded kernels; the driver bytes.
fn check_container<'a>(bytes: &'a [u8], info: &DeviceInfo) -> Result<&'a [u8]> {
    let not_ours = || {
        anyhow!("not an edgeflow kernel binary (it must start with '{BINARY_MAGIC}'; write one with `edgeflow kernels build`)")
    };
    let end = bytes
        .windows(2)
        .position(|w| w == b"\n\n")
        .ok_or_else(not_ours)?;
    let header = std::str::from_utf8(&bytes[..end]).map_err(|_| not_ours())?;
    let mut lines = header.lines();
    if lines.next() != Some(BINARY_MAGIC) {
        return Err(not_ours());
    }
    let fields: HashMap<&str, &str> = lines.filter_map(|l| l.split_once('=')).collect();
    let get = |k: &str| {
        fields
            .get(k)
            .copied()
            .ok_or_else(|| anyhow!("corrupt header: field '{k}' is missing"))
    };
    let body = &bytes[end + 2..];
    let n: usize = get("bytes")?
        .parse()
        .map_err(|_| anyhow!("corrupt header: 'bytes' is not a number"))?;
    if body.len() != n {
        bail!(
            "corrupt or truncated file: the header promises {n} bytes of binary, the file holds {}",
            body.len()
        );
    }
    if get("binary_sha256")? != hex(&Sha256::digest(body)) {
        bail!("corrupt file: the binary's SHA-256 does not match its header");
    }
    if get("kernels_sha256")? != kernel_source_sha256() {
        bail!("it was built from other kernels than this edgeflow's; rebuild it with `edgeflow kernels build`");
    }
    let (dev, plat, drv) = (get("device")?, get("platform")?, get("driver")?);
    if dev != info.name || plat != info.platform || drv != info.driver_version {
        bail!(
            "it was built for device '{dev}' ({plat}, driver {drv}), not for '{}' ({}, driver {}); \
build one for this device with `edgeflow kernels build --device {} -o FILE`",
            info.name,
            info.platform,
            info.driver_version,
            info.index
        );
    }
    Ok(body)
}

/// The device for tests: `None` (skip, with a notice) when there is no OpenCL runtime or no
/// device and `CI` is not `true`; a panic under `CI=true`. A device whose program fails to
/// build is always a panic: that is a bug, not a missing tool.
pub fn device_for_tests() -> Option<Arc<Device>> {
    if let Err(e) = select_device(None) {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but no OpenCL device: {e:#}");
        }
        eprintln!("skipping: no OpenCL device ({e:#})");
        return None;
    }
    Some(Device::open(None).unwrap_or_else(|e| panic!("{e:#}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str) -> DeviceInfo {
        DeviceInfo {
            index: 0,
            platform: "P".into(),
            platform_version: "1".into(),
            name: name.into(),
            vendor: "V".into(),
            kind: "cpu".into(),
            compute_units: 1,
            max_clock_mhz: 1,
            global_memory_bytes: 1,
            max_allocation_bytes: 1,
            driver_version: "9".into(),
            opencl_version: "OpenCL 3.0".into(),
            id: 0,
        }
    }

    fn container(dev: &str, kernels: &str, body: &[u8]) -> Vec<u8> {
        let mut v = format!(
            "{BINARY_MAGIC}\ndevice={dev}\nplatform=P\ndriver=9\nkernels_sha256={kernels}\nbytes={}\nbinary_sha256={}\n\n",
            body.len(),
            hex(&Sha256::digest(body))
        )
        .into_bytes();
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn container_checks_device_kernels_and_integrity() {
        let body = b"\x00\x01driver bytes\n\n with blank lines";
        let good = container("D", &kernel_source_sha256(), body);
        assert_eq!(check_container(&good, &info("D")).unwrap(), body);
        let e = format!("{:#}", check_container(&good, &info("E")).unwrap_err());
        assert!(
            e.contains("built for device 'D'") && e.contains("not for 'E'"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            check_container(&container("D", "abc", body), &info("D")).unwrap_err()
        );
        assert!(e.contains("other kernels"), "{e}");
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(
            format!("{:#}", check_container(&flipped, &info("D")).unwrap_err()).contains("corrupt")
        );
        let e = format!(
            "{:#}",
            check_container(&good[..good.len() - 3], &info("D")).unwrap_err()
        );
        assert!(e.contains("truncated"), "{e}");
        for junk in [&b""[..], b"ELF", b"EDGEFLOW-OPENCL-BINARY 2\n\nxx"] {
            let e = format!("{:#}", check_container(junk, &info("D")).unwrap_err());
            assert!(e.contains("not an edgeflow kernel binary"), "{e}");
        }
    }

    #[test]
    fn no_runtime_error_names_the_packages() {
        let e = no_runtime_error("x").to_string();
        assert!(e.contains("pocl-opencl-icd") && e.contains("ocl-icd-libopencl1"));
    }
}
