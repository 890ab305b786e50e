//! One training stream of the reference model on the bundled digits, for profilers
//! (`valgrind --tool=callgrind`): `cargo run --release --example train_stream -- SPEC N`.
use edgeflow_core::{Dataset, Spec};
use edgeflow_reference::{Reference, SparseF32};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = Spec::load(std::path::Path::new(&args[1])).expect("spec");
    let n: usize = args[2].parse().expect("sample count");
    let sparse = args.get(3).is_some_and(|a| a == "sparse-f32");
    let d = Dataset::digits().expect("digits");
    let idx: Vec<usize> = (0..n).map(|i| i % d.len()).collect();
    let data = d.encode(&spec, &idx).expect("digits fit");
    if sparse {
        let mut s = SparseF32::new(&spec);
        s.train(&data);
        println!("{}", s.weights[0][0]);
    } else {
        let mut r = Reference::new(&spec);
        let w = r.train(&data);
        println!("{} edge-ops, w0 {}", w.edge_ops, r.state.weights[0][0]);
    }
}
