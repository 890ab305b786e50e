//! RTL testbench harness: the network built from a spec, clocked in rust-hdl's
//! signal-level simulation (blocks' `update`, settle, clock edges), driven only through the
//! host link of hdl/PROTOCOL.md, with optional VCD output.
//!
//! The clocking loop is the one rust-hdl's `Simulation` runs (update until nothing changes,
//! toggle the clock), without its thread-per-testbench channels, which dominate its cost.

use crate::host_link::*;
use crate::input_lanes::{push_inputs, push_word, push_words};
use crate::network::Network;
use crate::testbench::error::SimError;
use crate::testing::settle;
use edgeflow_core::{Encoded, Spec, State};
use rust_hdl::core::prelude::*;
use rust_hdl::core::vcd_probe::VCDProbe;
use std::fs::File;
use std::io::BufWriter;

pub struct RtlSim {
    pub spec: Spec,
    pub net: Box<Network>,
    /// Clock edges simulated so far.
    pub clocks: u64,
    vcd: Option<VCDProbe<BufWriter<File>>>,
    /// Clock at the end of every block cycle of the last stream command.
    pub block_ends: Vec<u64>,
    /// Wall-clock seconds spent simulating.
    pub seconds: f64,
    /// Input lanes `W`: words per beat of the host link (hdl::input_lanes).
    pub lanes: usize,
}

/// Result of one TRAIN or INFER command.
#[derive(Clone, Debug)]
pub struct CommandStats {
    /// The device's own clock count of the command.
    pub device_clocks: u64,
    /// Largest distance between two consecutive block-cycle ends after the first (clocks).
    pub steady_clocks_per_sample: u64,
}

impl RtlSim {
    pub fn new(spec: &Spec, vcd: Option<&std::path::Path>) -> Result<RtlSim, SimError> {
        RtlSim::with_lanes(spec, vcd, 1)
    }

    /// The network built with `lanes` input lanes; every command goes in beats of that width.
    pub fn with_lanes(
        spec: &Spec,
        vcd: Option<&std::path::Path>,
        lanes: usize,
    ) -> Result<RtlSim, SimError> {
        crate::input_lanes::check_lanes(spec, lanes)?;
        let mut net = Box::new(Network::with_input_lanes(spec, lanes));
        net.connect_all();
        let vcd = match vcd {
            Some(p) => {
                let f = File::create(p).map_err(|error| SimError::CreateVcd {
                    path: p.display().to_string(),
                    error,
                })?;
                Some(write_vcd_header(BufWriter::new(f), net.as_ref()))
            }
            None => None,
        };
        net.out_ready.next = true;
        settle(net.as_mut());
        Ok(RtlSim {
            spec: spec.clone(),
            net,
            clocks: 0,
            vcd,
            block_ends: Vec::new(),
            seconds: 0.0,
            lanes,
        })
    }

    pub fn block_cycle_clocks(&self) -> usize {
        self.spec.block_cycle_clocks()
    }

    fn tick(&mut self) {
        let n = self.net.as_mut();
        n.clock.next = Clock { clk: true };
        settle(n);
        if let Some(v) = self.vcd.take() {
            let mut v = v;
            let _ = v.timestamp(self.clocks * 2 + 1);
            self.vcd = Some(write_vcd_change(v, self.net.as_ref()));
        }
        let n = self.net.as_mut();
        n.clock.next = Clock { clk: false };
        // Nothing happens on a falling edge: without a waveform to record, it travels down
        // the hierarchy together with the next inputs (one settle instead of two).
        if self.vcd.is_some() {
            settle(n);
        }
        self.clocks += 1;
        if let Some(v) = self.vcd.take() {
            let mut v = v;
            let _ = v.timestamp(self.clocks * 2);
            self.vcd = Some(write_vcd_change(v, self.net.as_ref()));
        }
    }

    /// Send a beat stream (`lanes` words per beat), then keep clocking until `reply` words
    /// came back (or `limit` clocks).
    fn exchange(&mut self, beats: &[u16], reply: usize) -> Result<Vec<u16>, SimError> {
        let w = self.lanes;
        if beats.len() % w != 0 {
            return Err(SimError::PartialBeat {
                words: beats.len(),
                lanes: w,
            });
        }
        let words: Vec<&[u16]> = beats.chunks(w).collect();
        let t0 = std::time::Instant::now();
        let mut out = Vec::with_capacity(reply);
        let mut i = 0;
        let mut idle = 0u64;
        let limit = 200 * self.block_cycle_clocks() as u64 + 10_000;
        self.block_ends.clear();
        while i < words.len() || out.len() < reply {
            let n = self.net.as_mut();
            n.in_valid.next = i < words.len();
            let beat = words.get(i).copied().unwrap_or(&[]);
            n.in_data.next = Bits::<16>::from(*beat.first().unwrap_or(&0) as u64);
            for k in 0..n.in_lanes.len() {
                n.in_lanes[k].next = Bits::<16>::from(*beat.get(k + 1).unwrap_or(&0) as u64);
            }
            n.out_ready.next = true;
            settle(n);
            let took = n.in_valid.val() && n.in_ready.val();
            if n.out_valid.val() {
                out.push(n.out_data.val().to_u16());
            }
            if n.ctrl.last.val() {
                self.block_ends.push(self.clocks);
            }
            self.tick();
            if took {
                i += 1;
                idle = 0;
            } else {
                idle += 1;
                if idle > limit {
                    return Err(SimError::Stopped {
                        taken: i,
                        beats: words.len(),
                        got: out.len(),
                        reply,
                        idle,
                    });
                }
            }
        }
        self.net.in_valid.next = false;
        settle(self.net.as_mut());
        self.seconds += t0.elapsed().as_secs_f64();
        Ok(out)
    }

    fn expect(&self, got: &[u16], ack: u16, what: &str) -> Result<(), SimError> {
        match got.iter().position(|&w| w == ack || w == ERROR_WORD) {
            Some(i) if got[i] == ack => Ok(()),
            _ => Err(SimError::NoAck {
                command: what.to_string(),
                ack,
                got: got.to_vec(),
            }),
        }
    }

    pub fn load_state(&mut self, state: &State) -> Result<(), SimError> {
        state.check_shape(&self.spec)?;
        let mut words = vec![OP_LOAD];
        words.extend(state.weights.iter().flatten().map(|&v| v as u16));
        words.extend(state.biases.iter().flatten().map(|&v| v as u16));
        let mut beats = vec![];
        push_words(&mut beats, self.lanes, &words);
        let got = self.exchange(&beats, 1)?;
        self.expect(&got, ACK_LOAD, "LOAD_STATE")
    }

    pub fn read_state(&mut self) -> Result<State, SimError> {
        let n = self.spec.state_words();
        let mut beats = vec![];
        push_word(&mut beats, self.lanes, OP_READ);
        let got = self.exchange(&beats, n + 1)?;
        if got.len() != n + 1 || got[n] != ACK_READ {
            return Err(SimError::ReadState {
                words: n + 1,
                ack: ACK_READ,
                got: got.len(),
            });
        }
        let mut it = got.iter().map(|&w| w as i16 as i32);
        let mut st = State {
            weights: vec![],
            biases: vec![],
        };
        for j in 0..self.spec.junctions() {
            st.weights.push(
                it.by_ref()
                    .take(self.spec.layers[j] * self.spec.fan_out[j])
                    .collect(),
            );
        }
        for j in 0..self.spec.junctions() {
            st.biases
                .push(it.by_ref().take(self.spec.layers[j + 1]).collect());
        }
        Ok(st)
    }

    fn stats(&self, lo: u16, hi: u16) -> CommandStats {
        let steady = self
            .block_ends
            .windows(2)
            .skip(1)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        CommandStats {
            device_clocks: lo as u64 | (hi as u64) << 16,
            steady_clocks_per_sample: steady,
        }
    }

    /// Train on one stream (pipeline filled and drained), like `Reference::train`.
    pub fn train(&mut self, data: &Encoded) -> Result<CommandStats, SimError> {
        if data.len() > 65535 {
            return Err(SimError::CommandSamples {
                command: "TRAIN",
                samples: data.len(),
            });
        }
        let got = self.exchange(&sample_beats(OP_TRAIN, data, self.lanes), 3)?;
        self.expect(&got, ACK_TRAIN, "TRAIN")?;
        Ok(self.stats(got[1], got[2]))
    }

    /// Predicted class of every sample with the current weights.
    pub fn infer(&mut self, data: &Encoded) -> Result<(Vec<usize>, CommandStats), SimError> {
        if data.len() > 65535 {
            return Err(SimError::CommandSamples {
                command: "INFER",
                samples: data.len(),
            });
        }
        let got = self.exchange(&sample_beats(OP_INFER, data, self.lanes), data.len() + 3)?;
        if got.len() != data.len() + 3 || got[data.len()] != ACK_INFER {
            return Err(SimError::InferReply {
                predictions: data.len(),
                ack: ACK_INFER,
                got,
            });
        }
        Ok((
            got[..data.len()].iter().map(|&w| w as usize).collect(),
            self.stats(got[data.len() + 1], got[data.len() + 2]),
        ))
    }

    /// Send a raw beat stream (`lanes` words per beat; plain words when `lanes` is 1) and
    /// collect `reply` words (protocol tests).
    pub fn raw(&mut self, words: &[u16], reply: usize) -> Result<Vec<u16>, SimError> {
        self.exchange(words, reply)
    }
}

/// The beats of a TRAIN (`op` = OP_TRAIN, labels included) or INFER command: opcode and count
/// one word per beat, each sample's inputs `lanes` per beat, the label a beat of its own.
pub fn sample_beats(op: u16, data: &Encoded, lanes: usize) -> Vec<u16> {
    let mut b = vec![];
    push_words(&mut b, lanes, &[op, data.len() as u16]);
    for n in 0..data.len() {
        let x: Vec<u16> = data.input(n).iter().map(|&v| v as u16).collect();
        push_inputs(&mut b, lanes, &x);
        if op == OP_TRAIN {
            push_word(&mut b, lanes, data.labels[n] as u16);
        }
    }
    b
}

impl Drop for RtlSim {
    fn drop(&mut self) {
        if let Some(v) = self.vcd.take() {
            drop(v);
        }
    }
}

/// Result of `check`: the complete comparison of a run with the reference model.
#[derive(Clone, Debug)]
pub struct CheckReport {
    pub bit_exact: bool,
    pub first_difference: Option<String>,
    pub samples: usize,
    pub train_clocks: u64,
    pub infer_clocks: u64,
    pub clocks: u64,
    pub block_cycle_clocks: usize,
    pub train_steady_clocks_per_sample: u64,
    pub infer_steady_clocks_per_sample: u64,
    pub state_sha256: String,
    pub sim_clocks_per_second: f64,
    pub input_lanes: usize,
}

/// Load the spec's initial state, train on `data` (one stream), infer on it, read back
/// everything and compare with the reference model.
pub fn check(
    spec: &Spec,
    data: &Encoded,
    vcd: Option<&std::path::Path>,
) -> Result<CheckReport, SimError> {
    check_lanes(spec, data, vcd, 1)
}

/// `check` with the network built for `lanes` input lanes.
pub fn check_lanes(
    spec: &Spec,
    data: &Encoded,
    vcd: Option<&std::path::Path>,
    lanes: usize,
) -> Result<CheckReport, SimError> {
    let mut sim = RtlSim::with_lanes(spec, vcd, lanes)?;
    let init = State::initial(spec);
    sim.load_state(&init)?;
    let mut reference = edgeflow_reference::Reference::new(spec);
    let loaded = sim.read_state()?;
    let mut first_difference = init
        .first_difference(&loaded, Some(&reference.patterns))
        .map(|d| format!("after LOAD_STATE: {d}"));
    let tr = sim.train(data)?;
    reference.train(data);
    let (pred, inf) = sim.infer(data)?;
    let got = sim.read_state()?;
    if first_difference.is_none() {
        first_difference = reference
            .state
            .first_difference(&got, Some(&reference.patterns));
    }
    if first_difference.is_none() {
        first_difference = first_prediction_difference(&reference.infer(data), &pred);
    }
    Ok(CheckReport {
        bit_exact: first_difference.is_none(),
        first_difference,
        samples: data.len(),
        train_clocks: tr.device_clocks,
        infer_clocks: inf.device_clocks,
        clocks: sim.clocks,
        block_cycle_clocks: sim.block_cycle_clocks(),
        train_steady_clocks_per_sample: tr.steady_clocks_per_sample,
        infer_steady_clocks_per_sample: inf.steady_clocks_per_sample,
        state_sha256: got.sha256(),
        sim_clocks_per_second: sim.clocks as f64 / sim.seconds.max(1e-9),
        input_lanes: lanes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgeflow_core::Dataset;

    fn spec(path: &str) -> Spec {
        Spec::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(path),
        )
        .unwrap()
    }

    #[test]
    fn tiny_is_bit_exact() {
        let sp = spec("specs/tiny.toml");
        let mut r = edgeflow_core::rng::SplitMix64::new(3);
        let n = 24;
        let inputs = (0..n * sp.layers[0]).map(|_| r.below(129) as i32).collect();
        let labels = (0..n).map(|_| r.below(sp.layers[sp.junctions()])).collect();
        let data = Encoded {
            inputs_per_sample: sp.layers[0],
            inputs,
            labels,
        };
        let rep = check(&sp, &data, None).unwrap();
        println!("{rep:?}");
        assert!(rep.bit_exact, "{}", rep.first_difference.unwrap());
        let _ = Dataset::digits;
    }
}

pub use edgeflow_reference::random::{random_data, random_input_bits, random_spec};

/// Icarus on `tb.v` and `top.v` in `dir`: what the testbench printed.
pub(crate) fn icarus(dir: &std::path::Path) -> Result<String, SimError> {
    let c = std::process::Command::new("iverilog")
        .current_dir(dir)
        .args(["-g2005", "-o", "sim.vvp", "tb.v", "top.v"])
        .output()?;
    if !c.status.success() {
        return Err(SimError::Iverilog {
            dir: dir.display().to_string(),
            stderr: String::from_utf8_lossy(&c.stderr).into_owned(),
        });
    }
    let r = std::process::Command::new("vvp")
        .current_dir(dir)
        .args(["-n", "sim.vvp"])
        .output()?;
    Ok(String::from_utf8_lossy(&r.stdout).into_owned())
}

#[cfg(test)]
mod random_tests {
    use super::*;

    #[test]
    fn random_specs_are_bit_exact() {
        // A quick sample; tests/tests/rtl.rs runs 24 specs and asserts their coverage.
        for seed in 0..8u64 {
            let sp = random_spec(seed);
            let data = random_data(&sp, 12, seed);
            let rep = check(&sp, &data, None).unwrap();
            assert!(
                rep.bit_exact,
                "seed {seed}: {}\n{}",
                rep.first_difference.unwrap(),
                sp.to_toml()
            );
        }
    }
}

/// The host-link words of a full check (LOAD, TRAIN, INFER, READ) and how many words the
/// device answers, so the same stream can drive the model and the generated Verilog.
pub fn check_stream(spec: &Spec, data: &Encoded) -> (Vec<u16>, usize) {
    check_stream_lanes(spec, data, 1)
}

/// `check_stream` as beats of `lanes` words (hdl::input_lanes).
pub fn check_stream_lanes(spec: &Spec, data: &Encoded, lanes: usize) -> (Vec<u16>, usize) {
    let st = State::initial(spec);
    let mut lw = vec![OP_LOAD];
    lw.extend(st.weights.iter().flatten().map(|&v| v as u16));
    lw.extend(st.biases.iter().flatten().map(|&v| v as u16));
    let mut w = vec![];
    push_words(&mut w, lanes, &lw);
    w.extend(sample_beats(OP_TRAIN, data, lanes));
    w.extend(sample_beats(OP_INFER, data, lanes));
    push_word(&mut w, lanes, OP_READ);
    let values: usize = st.weights.iter().map(|x| x.len()).sum::<usize>()
        + st.biases.iter().map(|x| x.len()).sum::<usize>();
    (w, 1 + 3 + data.len() + 3 + values + 1)
}

/// Run the generated Verilog of `spec` in Icarus Verilog on a host-link word stream and
/// return the words it answers; `Ok(None)` when iverilog is not installed.
pub fn iverilog_run(
    spec: &Spec,
    words: &[u16],
    reply: usize,
    max_clocks: u64,
) -> Result<Option<Vec<u16>>, SimError> {
    iverilog_run_lanes(spec, words, 1, reply, max_clocks)
}

/// `iverilog_run` on the network with `lanes` input lanes, fed a beat stream.
pub fn iverilog_run_lanes(
    spec: &Spec,
    beats: &[u16],
    lanes: usize,
    reply: usize,
    max_clocks: u64,
) -> Result<Option<Vec<u16>>, SimError> {
    use std::process::Command;
    if beats.len() % lanes != 0 {
        return Err(SimError::PartialBeat {
            words: beats.len(),
            lanes,
        });
    }
    if Command::new("iverilog").arg("-V").output().is_err() {
        return Ok(None);
    }
    let dir = std::env::temp_dir().join(format!(
        "edgeflow-iverilog-{}-{}-{lanes}",
        spec.name,
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    // one line per beat, lane W-1 first (the most significant 16 bits of the memory word)
    let hex: String = beats
        .chunks(lanes)
        .map(|b| {
            b.iter()
                .rev()
                .map(|w| format!("{w:04x}"))
                .collect::<String>()
                + "\n"
        })
        .collect();
    let nbeats = beats.len() / lanes;
    std::fs::write(dir.join("in.hex"), hex)?;
    std::fs::write(dir.join("top.v"), crate::verilog_lanes(spec, lanes))?;
    let lane_ports: String = (1..lanes)
        .map(|k| {
            format!(
                ", .in_lanes${}(words[i][{}:{}])",
                k - 1,
                16 * k + 15,
                16 * k
            )
        })
        .collect();
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
reg clock = 1'b0;
reg [15:0] in_data;
reg in_valid;
wire in_ready;
wire [15:0] out_data;
wire out_valid;
reg out_ready = 1'b1;
top dut(.clock(clock), .in_data(in_data), .in_valid(in_valid), .in_ready(in_ready), .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready){lane_ports});
reg [{bw}:0] words [0:{nw1}];
integer i = 0;
integer got = 0;
integer cyc = 0;
initial $readmemh(\"in.hex\", words);
always #5 clock = ~clock;
always @(*) begin
    in_valid = (i < {nw});
    in_data = (i < {nw}) ? words[i][15:0] : 16'd0;
end
always @(posedge clock) begin
    if (in_valid && in_ready) i = i + 1;
    if (out_valid && out_ready) begin
        $display(\"%04x\", out_data);
        got = got + 1;
        if (got == {reply}) $finish;
    end
    cyc = cyc + 1;
    if (cyc > {max_clocks}) begin
        $display(\"TIMEOUT\");
        $finish;
    end
end
endmodule
",
        nw1 = nbeats.max(1) - 1,
        nw = nbeats,
        bw = 16 * lanes - 1,
    );
    std::fs::write(dir.join("tb.v"), tb)?;
    let out = icarus(&dir)?;
    let mut got = Vec::new();
    for line in out.lines() {
        let t = line.trim();
        if t == "TIMEOUT" {
            return Err(SimError::VerilogStopped { words: got.len() });
        }
        if t.len() == 4
            && t.chars()
                .all(|c| c.is_ascii_hexdigit() || "xXzZ".contains(c))
        {
            match u16::from_str_radix(t, 16) {
                Ok(v) => got.push(v),
                Err(_) => {
                    return Err(SimError::VerilogUndefined {
                        word: t.to_string(),
                        words: got.len(),
                    })
                }
            }
        }
    }
    if std::env::var("EDGEFLOW_KEEP_IVERILOG").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(Some(got))
}

/// The first sample whose predicted class differs from the reference's, as a message naming
/// the sample, the expected and the received class.
pub fn first_prediction_difference<T: PartialEq + std::fmt::Display>(
    want: &[T],
    got: &[T],
) -> Option<String> {
    want.iter().zip(got).position(|(w, g)| w != g).map(|n| {
        format!(
            "prediction of sample {n}: expected class {}, got {}",
            want[n], got[n]
        )
    })
}
