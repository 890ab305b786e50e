//! An OpenCL device as a board: the whole network as one stage on one device
//! (`edgeflow_opencl::OpenClNetwork`), bit-exact with the reference model.

use super::Board;
use anyhow::Result;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_opencl::{Device, OpenClNetwork};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// `--kernel-binary FILE`, set once by `main` for every OpenCL board the command opens.
static KERNEL_BINARY: Mutex<Option<PathBuf>> = Mutex::new(None);

pub fn set_kernel_binary(path: Option<PathBuf>) {
    *KERNEL_BINARY.lock().unwrap() = path;
}

/// The device `which` (index or name; `None` = first) with its program from the embedded
/// source, or from `--kernel-binary` when given.
pub fn open_device(which: Option<&str>) -> Result<Arc<Device>> {
    // An empty name would match every device by substring and silently pick the first.
    if which.is_some_and(|w| w.trim().is_empty()) {
        anyhow::bail!(
            "--backend opencl: names no device; write opencl (the first device), opencl:INDEX or opencl:NAME as `edgeflow devices` lists them"
        );
    }
    let pb = crate::ui::spinner("preparing the OpenCL device");
    let d = match KERNEL_BINARY.lock().unwrap().clone() {
        Some(p) => Device::open_with_binary(which, &p),
        None => Device::open(which),
    };
    pb.finish_and_clear();
    d
}

pub struct OpenClBoard {
    pub net: OpenClNetwork,
}

impl OpenClBoard {
    pub fn new(spec: &Spec, staleness: Vec<usize>, which: Option<&str>) -> Result<Self> {
        Ok(OpenClBoard {
            net: OpenClNetwork::new(open_device(which)?, spec, staleness)?,
        })
    }
}

impl Board for OpenClBoard {
    fn name(&self) -> String {
        format!("opencl:{}", self.net.device().info.name)
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        self.net.load_state(state)
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        self.net.train(data)
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        self.net.infer(data)
    }
    fn read_state(&mut self) -> Result<State> {
        self.net.read_state()
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.net.edge_ops_per_sample()
    }
}
