use edgeflow_core::resident::pack;
use edgeflow_core::{Dataset, Spec, State};
use edgeflow_hdl::data_memory::DataMemoryKind;
use edgeflow_hdl::host_link::{ACK_LOAD, OP_LOAD};
use edgeflow_hdl::host_stream::run_words;
use edgeflow_hdl::resident::*;
use edgeflow_hdl::resident_protocol as rp;
use rust_hdl::prelude::*;

#[test]
fn dbg() {
    let mut spec = Spec::load(std::path::Path::new("../specs/digits.toml")).unwrap();
    spec.registered_reads = true;
    spec.deep_pipeline = true;
    let d = Dataset::digits().unwrap();
    let (tr, _) = d.split(2024);
    let enc = d.encode(&spec, &tr).unwrap();
    let mut uut = Box::new(ResidentNetwork::new(&spec, DataMemoryKind::Spram, 65536));
    uut.connect_all();
    let s = State::initial(&spec);
    let mut w = vec![OP_LOAD];
    w.extend(s.weights.iter().flatten().map(|&v| v as u16));
    w.extend(s.biases.iter().flatten().map(|&v| v as u16));
    let (got, c) = run_words(uut.as_mut(), &w, 1, 0, 100_000).unwrap();
    eprintln!("load {got:x?} {c}");
    assert_eq!(got, vec![ACK_LOAD]);
    let words = pack(&spec, &enc);
    for (k, f) in rp::upload_frames(0, &words).iter().enumerate() {
        let (got, c) = run_words(uut.as_mut(), f, 3, 0, 100_000).unwrap();
        eprintln!("frame {k} {got:x?} {c}");
    }
    let (got, c) = run_words(uut.as_mut(), &rp::train_resident(enc.len(), 1, 0), 4, 0, 3_000_000).unwrap();
    eprintln!("train {got:x?} {c}");
}
