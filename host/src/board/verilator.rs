//! The Verilator co-simulation as a word link: the emitted Verilog of the network, compiled
//! with the generated harness, speaks the host-link protocol like a board.

use super::hostlink::{HostLinkBoard, WordLink};
use anyhow::{anyhow, Context, Result};
use edgeflow_core::Spec;
use edgeflow_flow::verilator::{build, Live};
use std::thread::JoinHandle;

pub struct VerilatorLink {
    live: Option<Live>,
    writers: Vec<JoinHandle<std::io::Result<()>>>,
}

impl WordLink for VerilatorLink {
    fn send(&mut self, words: &[u16]) -> Result<()> {
        let live = self
            .live
            .as_mut()
            .context("the Verilator simulation has ended")?;
        self.writers.push(live.send(words)?);
        Ok(())
    }
    fn recv(&mut self, n: usize) -> Result<Vec<u16>> {
        let live = self
            .live
            .as_mut()
            .context("the Verilator simulation has ended")?;
        let w = live.recv(n)?;
        for h in self.writers.drain(..) {
            h.join()
                .map_err(|_| anyhow!("harness writer panicked"))?
                .context("writing to the Verilator harness")?;
        }
        Ok(w)
    }
    fn describe(&self) -> String {
        "verilator".into()
    }
}

impl VerilatorLink {
    /// Stop the simulation; returns the clocks it ran and its wall time.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn finish(&mut self) -> Result<(u64, f64)> {
        self.live.take().context("already finished")?.finish()
    }
}

impl Drop for VerilatorLink {
    fn drop(&mut self) {
        if let Some(l) = self.live.take() {
            let _ = l.finish();
        }
    }
}

/// Build (in a cache directory keyed by the Verilog's hash) and start the co-simulation of
/// the network with the spec's automatic input lanes (hdl::input_lanes).
pub fn open(spec: &Spec) -> Result<HostLinkBoard<VerilatorLink>> {
    let lanes = edgeflow_hdl::input_lanes::auto_lanes(spec);
    let v = edgeflow_hdl::verilog_lanes(spec, lanes);
    let link = open_verilog(&v)?;
    HostLinkBoard::with_initial_state_lanes(spec, link, lanes)
}

pub fn open_verilog(v: &str) -> Result<VerilatorLink> {
    use sha2::Digest;
    let hash = hex(&sha2::Sha256::digest(v.as_bytes())[..8]);
    let dir = std::env::temp_dir().join(format!("edgeflow-verilator-{hash}"));
    let exe = dir.join("obj").join("harness");
    let h =
        if exe.is_file() && std::fs::read_to_string(dir.join("top.v")).ok().as_deref() == Some(v) {
            edgeflow_flow::verilator::Harness {
                dir: dir.clone(),
                exe,
                build_seconds: 0.0,
            }
        } else {
            let pb = crate::ui::spinner("building the Verilator co-simulation");
            let h = build(&dir, v);
            pb.finish_and_clear();
            h?
        };
    Ok(VerilatorLink {
        live: Some(h.spawn()?),
        writers: vec![],
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgeflow_hdl::design::{inner_verilog, Inner};

    #[test]
    fn the_echo_standin_answers_over_the_verilator_link() {
        if !edgeflow_flow::tools::tool_for_test(edgeflow_flow::tools::VERILATOR) {
            return;
        }
        let v = inner_verilog(&Inner::Echo).unwrap();
        let mut link = open_verilog(&v).unwrap();
        for k in 0..3u16 {
            let words: Vec<u16> = (0..1000u16)
                .map(|i| i.wrapping_mul(7).wrapping_add(k))
                .collect();
            link.send(&words).unwrap();
            let back = link.recv(words.len()).unwrap();
            assert!(back
                .iter()
                .zip(&words)
                .all(|(b, w)| *b == w.wrapping_add(1)));
        }
        let (clocks, _) = link.finish().unwrap();
        assert!(clocks >= 3000);
    }
}
