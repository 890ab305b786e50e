//! Instances for the benchmark and the speed test: a deep chain of junctions on many
//! different boards.

use crate::catalog::{built_in_names, Board};
use crate::cost::Net;
use edgeflow_core::Activation;

/// A network of `junctions` junctions whose layers cycle through 128, 256, 64 and 128
/// neurons with fan-ins of 16 to 64, 10-bit values.
pub fn deep_net(junctions: usize) -> Net {
    let cycle = [128u64, 256, 64, 128];
    let layers: Vec<u64> = (0..=junctions).map(|i| cycle[i % cycle.len()]).collect();
    let fan_out = (0..junctions)
        .map(|j| {
            let (left, right) = (layers[j], layers[j + 1]);
            // the first fan-out giving a fan-in of at least 16 that divides the left layer
            (1..=right)
                .find(|&f| {
                    (left * f) % right == 0
                        && left * f / right >= 16
                        && left % (left * f / right) == 0
                })
                .unwrap()
        })
        .collect();
    Net::new("deep", layers, fan_out, 10, Activation::Sigmoid, false)
}

/// `count` boards, all different: the built-in boards in turn, each copy with its clock and
/// link bandwidth scaled a little so no two are alike.
pub fn mixed_boards(count: usize) -> Vec<Board> {
    let names = built_in_names();
    (0..count)
        .map(|i| {
            let mut b = Board::built_in(names[i % names.len()]).unwrap();
            let scale = 1.0 + 0.05 * i as f64;
            b.name = format!("{}-{i}", b.name);
            b.clock_mhz *= scale;
            b.link_mbps *= scale;
            b
        })
        .collect()
}
