//! The reference model's training rate on 1, 2, … threads, with the state's SHA-256 of each:
//! `cargo run --release -p edgeflow-sim --example train_threads -- SPEC SAMPLES THREADS...`
//! (random data of the spec's shape; every thread count must print the same SHA-256).
use edgeflow_core::Spec;
use edgeflow_sim::random::random_data;
use edgeflow_sim::Reference;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = Spec::load(std::path::Path::new(&args[1])).expect("spec");
    let n: usize = args[2].parse().expect("sample count");
    let data = random_data(&spec, n, 1);
    for t in &args[3..] {
        let threads: usize = t.parse().expect("thread count");
        let mut best = f64::MAX;
        let mut sha = String::new();
        for _ in 0..9 {
            let mut r = Reference::new(&spec).with_threads(threads);
            let start = std::time::Instant::now();
            r.train(&data);
            best = best.min(start.elapsed().as_secs_f64());
            sha = r.state.sha256();
        }
        let plan = Reference::new(&spec)
            .with_threads(threads)
            .thread_plan()
            .threads;
        println!(
            "{threads} threads ({plan} used): {:.0} samples/s, {:.3} G edge-ops/s, sha {}",
            n as f64 / best,
            (n * spec.edge_ops_per_sample()) as f64 / best / 1e9,
            &sha[..16]
        );
    }
}
