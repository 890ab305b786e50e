//! Per-spec throughput of the RTL (one line per spec): `cargo run --release --example throughput`.
//! Each spec runs with its automatic input lanes W (hdl::input_lanes).
use edgeflow_hdl::testbench::rtl::{check_lanes, random_data, random_spec};

fn main() {
    println!("spec        L  N0   C   W  train clk/sample  infer clk/sample  bit-exact");
    for seed in 100..124u64 {
        let sp = random_spec(seed);
        let w = edgeflow_hdl::input_lanes::auto_lanes(&sp);
        let rep = check_lanes(&sp, &random_data(&sp, 10, seed), None, w).unwrap();
        println!(
            "{:<10} {:>2} {:>3} {:>3} {:>3} {:>17} {:>17}  {}",
            sp.name,
            sp.junctions(),
            sp.layers[0],
            rep.block_cycle_clocks,
            w,
            rep.train_steady_clocks_per_sample,
            rep.infer_steady_clocks_per_sample,
            rep.bit_exact
        );
    }
}
