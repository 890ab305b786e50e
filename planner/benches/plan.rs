//! Planning a 64-junction network on 16 different boards (the issue asks for under 1 s).

use criterion::{criterion_group, criterion_main, Criterion};
use edgeflow_planner::dp::{optimize, Order};
use edgeflow_planner::instances::{deep_net, mixed_boards};

fn bench(c: &mut Criterion) {
    let net = deep_net(64);
    let boards = mixed_boards(16);
    let mut g = c.benchmark_group("plan");
    g.sample_size(10);
    g.bench_function("64 junctions x 16 boards, chain", |b| {
        b.iter(|| optimize(&net, &boards, Order::Chain).expect("the instance fits"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
