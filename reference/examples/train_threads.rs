//! The reference model's training rate on 1, 2, … threads, with the state's SHA-256 of each
//! (random data of the spec's shape; every thread count must end in the same state). One JSON
//! object per thread count on standard output (docs/bench/threads.sh collects them):
//! `cargo run --release -p edgeflow-reference --example train_threads -- SPEC SAMPLES THREADS...`
use edgeflow_core::Spec;
use edgeflow_reference::random::random_data;
use edgeflow_reference::Reference;

/// Runs per thread count; the fastest is reported (the least disturbed by other work).
const RUNS: usize = 9;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: train_threads SPEC SAMPLES THREADS...");
        std::process::exit(2);
    }
    let spec = Spec::load(std::path::Path::new(&args[1])).expect("spec");
    let n: usize = args[2].parse().expect("sample count");
    let data = random_data(&spec, n, 1);
    for t in &args[3..] {
        let threads: usize = t.parse().expect("thread count");
        let mut best = f64::MAX;
        let mut sha = String::new();
        for _ in 0..RUNS {
            let mut r = Reference::new(&spec).with_threads(threads);
            let start = std::time::Instant::now();
            r.train(&data);
            best = best.min(start.elapsed().as_secs_f64());
            sha = r.state.sha256();
        }
        let used = Reference::new(&spec)
            .with_threads(threads)
            .thread_plan()
            .threads;
        let line = serde_json::json!({
            "spec": spec.name,
            "samples": n,
            "threads": threads,
            "threads_used": used,
            "seconds": best,
            "samples_per_second": n as f64 / best,
            "edge_ops_per_second": (n * spec.edge_ops_per_sample()) as f64 / best,
            "state_sha256": sha,
        });
        println!("{line}");
    }
}
