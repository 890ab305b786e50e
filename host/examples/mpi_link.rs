//! The MPI link between two ranks as the multi-board runtime uses it (buffered sends of
//! `[first sample, count, values…]`, received whole): round trips of boundary vectors of
//! several widths, timed; the one-way time against the message size gives the link's latency
//! and bandwidth for the planner's link model (docs/hardware.md, "Across hosts with MPI").
//!
//!     mpirun -np 2 target/release/examples/mpi_link [ROUND_TRIPS]
//!
//! Rank 0 prints one JSON object: per width the median one-way time, and the least-squares
//! latency (µs) and bandwidth (Mbit/s).

use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;
use std::time::Instant;

fn main() {
    let mut universe = mpi::initialize().expect("MPI starts");
    let world = universe.world();
    let rank = world.rank();
    if world.size() != 2 {
        if rank == 0 {
            eprintln!("mpi_link: run it on 2 ranks (mpirun -np 2)");
        }
        world.abort(2);
    }
    let trips: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("ROUND_TRIPS is a number"))
        .unwrap_or(2000);
    // boundary layers of the bundled specs and plans: 8 up to 1024 neurons
    let widths = [8usize, 64, 256, 1024, 4096];
    universe.set_buffer_size(4 * (4 * 4096 + 1024 + 8));
    let other = world.process_at_rank(1 - rank);
    let mut rows = Vec::new();
    for &w in &widths {
        let mut msg = vec![0i32; 2 + w];
        let mut times = Vec::with_capacity(trips);
        for n in 0..trips + 100 {
            msg[0] = n as i32;
            msg[1] = 1;
            let t0 = Instant::now();
            if rank == 0 {
                other.buffered_send_with_tag(&msg[..], 1);
                let (back, _) = other.receive_vec_with_tag::<i32>(2);
                assert_eq!(back[0], n as i32);
            } else {
                let (got, _) = other.receive_vec_with_tag::<i32>(1);
                other.buffered_send_with_tag(&got[..], 2);
            }
            // the first round trips set up the connection
            if n >= 100 {
                times.push(t0.elapsed().as_secs_f64() / 2.0);
            }
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        rows.push((w, 4 * (2 + w), times[times.len() / 2]));
    }
    if rank == 0 {
        // one-way time = latency + bytes · 8 / bandwidth, least squares over the widths
        let n = rows.len() as f64;
        let (sx, sy) = rows
            .iter()
            .fold((0.0, 0.0), |(a, b), r| (a + r.1 as f64, b + r.2));
        let (mx, my) = (sx / n, sy / n);
        let sxy: f64 = rows.iter().map(|r| (r.1 as f64 - mx) * (r.2 - my)).sum();
        let sxx: f64 = rows.iter().map(|r| (r.1 as f64 - mx).powi(2)).sum();
        let per_byte = sxy / sxx;
        let latency = my - per_byte * mx;
        let v = serde_json::json!({
            "round_trips": trips,
            "one_way": rows.iter().map(|r| serde_json::json!({
                "values": r.0, "bytes": r.1, "seconds": r.2,
            })).collect::<Vec<_>>(),
            "latency_us": latency * 1e6,
            "mbps": 8.0 / per_byte / 1e6,
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap());
    }
}
