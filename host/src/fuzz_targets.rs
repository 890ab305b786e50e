//! The CLI's own parsers under the fuzz runner of edgeflow-fuzz (docs/fuzz/README.md): the
//! model file as `infer`/`eval` load it, and the serial replies of a board as the host-link
//! board reads them.

use crate::board::hostlink::HostLinkBoard;
use crate::board::reference::ReferenceBoard;
use crate::board::serial::ByteStreamLink;
use crate::board::Board;
use crate::model::ModelFile;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_fuzz::run::Guard;
use edgeflow_fuzz::targets::{scratch, seed};
use edgeflow_fuzz::Target;
use edgeflow_hdl::uart_frames::{frame, FRAME_OK, FRAME_WORDS};
use std::io::{Read, Write};
use std::time::Duration;

#[global_allocator]
static GUARD: Guard = Guard;

/// `infer` on a model file. Odd-length inputs get their state checksum recomputed, so
/// mutated weights get past it to the range checks and the reference model.
fn model(b: &[u8]) {
    let path = scratch("model").join("fuzz.model");
    let restamped = (b.len() % 2 == 1).then(|| restamp(b)).flatten();
    std::fs::write(&path, restamped.as_deref().unwrap_or(b)).expect("scratch write");
    if let Ok((spec, m)) = ModelFile::load(&path) {
        let _ = m.check_features(&path, "fuzz", spec.layers[0]);
        let _ = m.check_scale(&path, None);
        if let Ok(mut board) = ReferenceBoard::new(&spec, m.staleness.clone()) {
            let _ = board
                .load_state(&m.state)
                .and_then(|_| board.infer(&samples(&spec)));
        }
    }
}

fn restamp(b: &[u8]) -> Option<Vec<u8>> {
    let mut v: serde_json::Value = serde_json::from_slice(b).ok()?;
    let state: State = serde_json::from_value(v.get("state")?.clone()).ok()?;
    v["state_sha256"] = state.sha256().into();
    serde_json::to_vec(&v).ok()
}

/// A device that answers with the fuzz input, then falls silent.
struct Replies<'a>(&'a [u8]);

impl Read for Replies<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Replies<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn tiny() -> Spec {
    Spec::from_toml_str(
        &String::from_utf8(edgeflow_fuzz::targets::files("specs", "tiny.toml").remove(0)).unwrap(),
        "specs/tiny.toml",
    )
    .unwrap()
}

/// Three samples in the spec's shape, labels within its classes.
fn samples(spec: &Spec) -> Encoded {
    let n0 = spec.layers[0];
    let classes = *spec.layers.last().unwrap();
    Encoded {
        inputs_per_sample: n0,
        inputs: (0..3 * n0).map(|i| (i as i32 * 13) % 128).collect(),
        labels: (0..3).map(|i| i % classes).collect(),
    }
}

/// LOAD_STATE, TRAIN, INFER and READ_STATE against the replies, as a session runs them.
fn serial(b: &[u8]) {
    thread_local! {
        static SPEC: Spec = tiny();
    }
    SPEC.with(|spec| {
        let link = ByteStreamLink::new(Replies(b), "fuzz", Duration::ZERO);
        let mut board = HostLinkBoard::with_lanes(spec, link, 1);
        let data = samples(spec);
        let _ = board
            .load_state(&State::initial(spec))
            .and_then(|_| board.train(&data))
            .and_then(|_| board.infer(&data))
            .and_then(|_| board.read_state());
        let _ = board.clocks_per_sample();
    });
}

/// What a working device answers to [`serial`]'s session.
fn serial_seed() -> Vec<u8> {
    let spec = tiny();
    let n = HostLinkBoard::with_lanes(
        &spec,
        ByteStreamLink::new(Replies(&[]), String::new(), Duration::ZERO),
        1,
    )
    .codec
    .state_words();
    // each command goes in one frame: FRAME_OK, then its answer in frames
    let mut state: Vec<u16> = (0..n).map(|i| (i as u16).wrapping_mul(7)).collect();
    state.push(0xA004);
    let answers: [&[u16]; 4] = [
        &[0xA001],
        &[0xA002, 1234, 0],
        &[0, 1, 3, 0xA003, 99, 0],
        &state,
    ];
    let mut w = vec![];
    for a in answers {
        w.push(FRAME_OK);
        for c in a.chunks(FRAME_WORDS) {
            w.extend(frame(c));
        }
    }
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `--kernel-binary FILE` on the first OpenCL device: the container's header (magic,
/// device, driver, kernels, length, checksum) and, for a consistent one, the driver.
fn kernel_binary(b: &[u8]) {
    let path = scratch("kernel-binary").join("fuzz.bin");
    std::fs::write(&path, b).expect("scratch write");
    let _ = edgeflow_opencl::Device::open_with_binary(None, &path);
}

/// A container that matches the device in every field, around a body no driver takes.
fn kernel_binary_seed(info: &edgeflow_opencl::DeviceInfo) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let body = b"not a driver binary";
    let mut v = format!(
        "EDGEFLOW-OPENCL-BINARY 1\ndevice={}\nplatform={}\ndriver={}\nkernels_sha256={}\nbytes={}\nbinary_sha256={}\n\n",
        info.name,
        info.platform,
        info.driver_version,
        edgeflow_opencl::kernel_source_sha256(),
        body.len(),
        edgeflow_core::data::hex(&Sha256::digest(body))
    )
    .into_bytes();
    v.extend_from_slice(body);
    v
}

/// The kernel-binary target needs an OpenCL device: skipped without one, except under
/// CI=true, where a missing runtime is a failure.
fn kernel_binary_target() -> Option<Target> {
    match edgeflow_opencl::select_device(None) {
        Ok(info) => Some(Target {
            name: "kernel-binary",
            text: false,
            seeds: vec![kernel_binary_seed(&info)],
            run: kernel_binary,
        }),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("{e:#}"),
        Err(e) => {
            eprintln!("kernel-binary target skipped: {e:#}");
            None
        }
    }
}

fn targets() -> Vec<Target> {
    let mut t = vec![
        Target {
            name: "model",
            text: true,
            seeds: vec![seed("tiny.model")],
            run: model,
        },
        Target {
            name: "serial",
            text: false,
            seeds: vec![serial_seed()],
            run: serial,
        },
    ];
    t.extend(kernel_binary_target());
    t
}

fn check(outcomes: &[edgeflow_fuzz::Outcome], execs: u64) {
    edgeflow_fuzz::targets::clean_scratch();
    let bad: Vec<String> = outcomes
        .iter()
        .filter(|o| o.panics + o.hangs > 0)
        .map(|o| o.json())
        .collect();
    assert!(bad.is_empty(), "findings (inputs above): {bad:?}");
    for o in outcomes {
        assert_eq!(o.execs, execs, "{}", o.json());
    }
}

#[test]
fn fuzz_host_parsers_survive_mutated_inputs() {
    check(&edgeflow_fuzz::run_all(&targets(), 3000, 7), 3000);
}

/// docs/fuzz/run.sh: `EDGEFLOW_FUZZ_EXECS`, `EDGEFLOW_FUZZ_SEED`, `EDGEFLOW_FUZZ_JSON`.
#[test]
#[ignore]
fn fuzz_long() {
    let var = |k: &str| std::env::var(k).ok();
    let execs = var("EDGEFLOW_FUZZ_EXECS").map_or(1_000_000, |v| v.parse().unwrap());
    let seed = var("EDGEFLOW_FUZZ_SEED").map_or(1, |v| v.parse().unwrap());
    let outcomes = edgeflow_fuzz::run_all(&targets(), execs, seed);
    for o in &outcomes {
        println!(
            "{:<14} {:>9} executions {:>7.1} s {:>4} panics {:>2} hangs",
            o.name, o.execs, o.secs, o.panics, o.hangs
        );
    }
    if let Some(path) = var("EDGEFLOW_FUZZ_JSON") {
        let lines: Vec<String> = outcomes.iter().map(|o| o.json()).collect();
        std::fs::write(path, lines.join("\n") + "\n").unwrap();
    }
    check(&outcomes, execs);
}
