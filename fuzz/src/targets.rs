//! The targets of the library crates, each through the entry point the CLI calls, seeded
//! from the repository's own files. The CLI's model file and serial replies are fuzzed in
//! the host crate (host/src/fuzz_targets.rs) with the same runner.

use crate::run::Target;
use edgeflow_core::{Dataset, ScaleKind, Scaling, Spec};
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file of `dir` ending in `ext`, sorted.
pub fn files(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .expect("seed dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).expect("seed"))
        .collect()
}

pub fn seed(name: &str) -> Vec<u8> {
    std::fs::read(repo().join("fuzz/seeds").join(name)).expect("seed file")
}

/// A per-process, per-target scratch dir: parsers that take a path get the input there. In
/// memory where the system offers it: a disk write per input would set the pace.
pub fn scratch(target: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let d = base.join(format!("edgeflow-fuzz-{}", std::process::id()));
    let d = d.join(target);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Remove this process's scratch dirs.
pub fn clean_scratch() {
    let _ = std::fs::remove_dir_all(scratch("x").parent().unwrap());
}

fn gz(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// The first lines of the bundled digits, and a small CSV with a header.
fn csv_seeds() -> Vec<Vec<u8>> {
    let mut text = String::new();
    let raw = std::fs::read(repo().join("data/digits.csv.gz")).expect("digits");
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut text)
        .expect("digits gz");
    let head: Vec<&str> = text.lines().take(24).collect();
    vec![(head.join("\n") + "\n").into_bytes(), seed("small.csv")]
}

fn spec(b: &[u8]) {
    let Ok(t) = std::str::from_utf8(b) else {
        return;
    };
    if let Ok(s) = Spec::from_toml_str(t, "fuzz.toml") {
        // What `spec check` and every command derive from a valid spec.
        let _ = s.derived();
        let _ = s.default_staleness();
        for layer in 1..=s.junctions() {
            let _ = s.activation_table(layer);
        }
        let _ = s.learning_advice();
        let _ = Spec::from_toml_str(&s.to_toml(), "round trip");
        // What `train` builds first, for networks that build in microseconds: validation
        // bounds the size of the rest (spec::MAX_EDGES), and building one per input would
        // set the pace.
        let edges: usize = (0..s.junctions()).map(|j| s.layers[j] * s.fan_out[j]).sum();
        if edges <= 1 << 16 {
            let _ = edgeflow_core::JunctionPattern::all(&s);
            let _ = edgeflow_core::State::initial(&s);
        }
    }
}

/// A loaded data set as `train` takes it: split, scaled by every kind.
fn use_data(d: Dataset) {
    let (tr, _) = d.split(1);
    for kind in [ScaleKind::Feature, ScaleKind::Global, ScaleKind::None] {
        if let Ok(f) = Scaling::fit(kind, &d, &tr) {
            let _ = f.scaling.apply(&d);
        }
    }
}

fn data_file(target: &str, name: &str, b: &[u8], label: Option<usize>) {
    let path = scratch(target).join(name);
    std::fs::write(&path, b).expect("scratch write");
    if let Ok(d) = Dataset::load(path.to_str().unwrap(), label) {
        use_data(d);
    }
}

fn csv(b: &[u8]) {
    // Odd lengths also try an explicit label column.
    let label = (b.len() % 2 == 1).then_some(0);
    data_file("csv", "fuzz.csv", b, label);
}

fn csv_gz(b: &[u8]) {
    data_file("csv-gz", "fuzz.csv.gz", b, None);
}

/// An input for `idx`: a 4-byte big-endian length of the images file, then it, then the
/// labels file.
fn idx_pair(images: &[u8], labels: &[u8]) -> Vec<u8> {
    let mut v = (images.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(images);
    v.extend_from_slice(labels);
    v
}

fn idx_seeds() -> Vec<Vec<u8>> {
    let (n, rows, cols) = (5u32, 3u32, 4u32);
    let mut images = [0x0803u32, n, rows, cols]
        .iter()
        .flat_map(|w| w.to_be_bytes())
        .collect::<Vec<u8>>();
    images.extend((0..n * rows * cols).map(|i| (i * 37 % 256) as u8));
    let mut labels = [0x0801u32, n]
        .iter()
        .flat_map(|w| w.to_be_bytes())
        .collect::<Vec<u8>>();
    labels.extend((0..n).map(|i| (i % 3) as u8));
    vec![idx_pair(&images, &labels)]
}

fn idx(b: &[u8]) {
    if b.len() < 4 {
        return;
    }
    let n = (u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize).min(b.len() - 4);
    let (images, labels) = b[4..].split_at(n);
    let dir = scratch("idx");
    let path = dir.join("fuzz-images-idx3-ubyte");
    std::fs::write(&path, images).expect("scratch write");
    std::fs::write(dir.join("fuzz-labels-idx1-ubyte"), labels).expect("scratch write");
    if let Ok(d) = Dataset::load(path.to_str().unwrap(), None) {
        use_data(d);
    }
}

fn plan(b: &[u8]) {
    let Ok(t) = std::str::from_utf8(b) else {
        return;
    };
    let _ = edgeflow_planner::report::PlanFile::from_json(t, "fuzz.json");
}

fn board_catalog(b: &[u8]) {
    let Ok(t) = std::str::from_utf8(b) else {
        return;
    };
    let _ = edgeflow_planner::Board::from_toml_str(t, "fuzz.toml");
}

fn board_fpga(b: &[u8]) {
    let Ok(t) = std::str::from_utf8(b) else {
        return;
    };
    if let Ok(info) = edgeflow_hdl::boards::from_file("fuzz.toml", t) {
        let _ = edgeflow_hdl::boards::constraints(&info);
        let _ = edgeflow_hdl::boards::xdc(&info, info.default_mhz);
    }
}

/// A word stream into the simulated RTL of specs/tiny.toml, fresh for every input (the words
/// of hdl/PROTOCOL.md, little-endian; at most 256).
fn link_rtl(b: &[u8]) {
    thread_local! {
        static TINY: Spec = Spec::from_toml_str(
            &String::from_utf8(files("specs", "tiny.toml").remove(0)).unwrap(),
            "specs/tiny.toml",
        )
        .unwrap();
    }
    let words: Vec<u16> = b
        .chunks_exact(2)
        .take(256)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    TINY.with(|spec| {
        let mut sim = edgeflow_hdl::testbench::rtl::RtlSim::new(spec, None).expect("tiny builds");
        let _ = sim.raw(&words, 0);
    });
}

/// Every command of hdl/PROTOCOL.md as a working host sends it to specs/tiny.toml's network.
fn link_seeds() -> Vec<Vec<u8>> {
    let words = |w: &[u16]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    // LOAD_STATE: 8·2 + 8·2 weights, then 8 + 4 biases.
    let mut load = vec![1u16];
    load.extend((0..44).map(|i| (i * 5 % 64) as u16));
    let mut train = vec![2u16, 2];
    for s in 0..2u16 {
        train.extend((0..8).map(|i| (i * 9 + s * 3) % 128));
        train.push(s);
    }
    let mut infer = vec![3u16, 1];
    infer.extend(0..8);
    vec![
        words(&load),
        words(&train),
        words(&infer),
        words(&[4]),
        words(&[7, 4]),
    ]
}

/// Targets that cost milliseconds per input.
pub fn slow() -> Vec<Target> {
    vec![Target {
        name: "link-rtl",
        text: false,
        seeds: link_seeds(),
        run: link_rtl,
    }]
}

/// The targets that cost microseconds per input.
pub fn cheap() -> Vec<Target> {
    let ulx3s: Vec<Vec<u8>> = files("boards", ".toml")
        .into_iter()
        .filter(|b| String::from_utf8_lossy(b).contains("[fpga]"))
        .collect();
    vec![
        Target {
            name: "spec",
            text: true,
            seeds: files("specs", ".toml"),
            run: spec,
        },
        Target {
            name: "csv",
            text: true,
            seeds: csv_seeds(),
            run: csv,
        },
        Target {
            name: "csv-gz",
            text: false,
            seeds: csv_seeds().iter().map(|s| gz(s)).collect(),
            run: csv_gz,
        },
        Target {
            name: "idx",
            text: false,
            seeds: idx_seeds(),
            run: idx,
        },
        Target {
            name: "plan",
            text: true,
            seeds: vec![seed("plan.json")],
            run: plan,
        },
        Target {
            name: "board-catalog",
            text: true,
            seeds: files("boards", ".toml"),
            run: board_catalog,
        },
        Target {
            name: "board-fpga",
            text: true,
            seeds: ulx3s,
            run: board_fpga,
        },
    ]
}
