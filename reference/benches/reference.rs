//! Criterion micro-benchmarks of the reference model (one core): each pass alone (FF, UP,
//! BP+UP of one junction), a whole training stream next to the sparse `f32` trainer's on the
//! same network, inference, and the pattern generator; then training on 1, 2, … threads up
//! to the machine's cores, in wall-clock time.
//! Throughput is in edge operations (one FF, BP or UP on one edge), so `Melem/s` reads as
//! millions of edge-ops per second.
//!
//! Time is the CPU time of the benchmarking thread (`CLOCK_THREAD_CPUTIME_ID`), so other load
//! on a shared machine does not count; `EDGEFLOW_WALL=1` measures wall-clock time instead.
//!
//! Run: `cargo bench -p edgeflow-reference --bench reference` (add a filter, e.g. `-- dey-mnist`).

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{black_box, criterion_main, BenchmarkId, Criterion, Throughput};
use edgeflow_core::{Dataset, Encoded, JunctionPattern, PatternKind, Spec};
use edgeflow_reference::{Reference, SparseF32};
use std::path::PathBuf;
use std::time::Duration;

/// CPU time of the calling thread, or wall-clock time with `EDGEFLOW_WALL=1`.
struct ThreadTime {
    wall: bool,
}

fn now(wall: bool) -> Duration {
    if wall {
        return std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

impl Measurement for ThreadTime {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        now(self.wall)
    }
    fn end(&self, i: Duration) -> Duration {
        now(self.wall).saturating_sub(i)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        static W: WallTime = WallTime;
        W.formatter()
    }
}

type C = Criterion<ThreadTime>;

fn spec(name: &str) -> Spec {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../specs")
        .join(format!("{name}.toml"));
    Spec::load(&p).expect("bundled spec")
}

/// The bundled digits, encoded for the spec (zero-padded to its input layer).
fn digits(spec: &Spec, n: usize) -> Encoded {
    let d = Dataset::digits().expect("bundled digits");
    let idx: Vec<usize> = (0..n).map(|i| i % d.len()).collect();
    d.encode(spec, &idx).expect("digits fit every bundled spec")
}

fn passes(c: &mut C) {
    for name in ["digits", "dey-mnist"] {
        let sp = spec(name);
        let data = digits(&sp, 1);
        let mut r = Reference::new(&sp);
        // activations, σ′ and deltas of one real sample, layer by layer
        let mut a = vec![data.input(0).to_vec()];
        let mut s = vec![vec![0; sp.layers[0]]];
        for j in 0..sp.junctions() {
            let mut out = vec![0; sp.layers[j + 1]];
            let mut sd = vec![0; sp.layers[j + 1]];
            r.ff(j, &a[j], &mut out, &mut sd);
            a.push(out);
            s.push(sd);
        }
        let mut g = c.benchmark_group(format!("reference/{name}"));
        g.measurement_time(Duration::from_secs(3))
            .warm_up_time(Duration::from_secs(1));
        for j in 0..sp.junctions() {
            let edges = r.patterns[j].edges() as u64;
            g.throughput(Throughput::Elements(edges));
            g.bench_function(BenchmarkId::new("ff", j + 1), |b| {
                let mut out = vec![0; sp.layers[j + 1]];
                let mut sd = vec![0; sp.layers[j + 1]];
                b.iter(|| r.ff(j, black_box(&a[j]), &mut out, &mut sd))
            });
            // small deltas so repeated updates keep the weights in range, as training does
            let d: Vec<i32> = (0..sp.layers[j + 1]).map(|k| (k as i32 % 7) - 3).collect();
            g.bench_function(BenchmarkId::new("up", j + 1), |b| {
                b.iter(|| r.bp_up(j, black_box(&d), &a[j], &s[j], None))
            });
            if j > 0 {
                g.throughput(Throughput::Elements(2 * edges));
                let mut dl = vec![0; sp.layers[j]];
                g.bench_function(BenchmarkId::new("bp+up", j + 1), |b| {
                    b.iter(|| r.bp_up(j, black_box(&d), &a[j], &s[j], Some(&mut dl)))
                });
            }
        }
        g.finish();
    }
}

fn streams(c: &mut C) {
    for name in ["digits", "dey-mnist"] {
        let sp = spec(name);
        let n = 512;
        let data = digits(&sp, n);
        let mut r = Reference::new(&sp).with_threads(1);
        let ops = r.clone().train(&data).edge_ops;
        let mut g = c.benchmark_group(format!("reference/{name}"));
        g.measurement_time(Duration::from_secs(5))
            .warm_up_time(Duration::from_secs(1))
            .sample_size(20);
        g.throughput(Throughput::Elements(ops));
        g.bench_function(format!("train {n} samples"), |b| {
            b.iter(|| r.train(black_box(&data)))
        });
        // the fastest float trainer of the same sparse network, for the same edge operations
        let mut f = SparseF32::new(&sp);
        g.bench_function(format!("sparse-f32 train {n} samples"), |b| {
            b.iter(|| f.train(black_box(&data)))
        });
        let ff_ops: u64 = r.patterns.iter().map(|p| p.edges() as u64).sum::<u64>() * n as u64;
        g.throughput(Throughput::Elements(ff_ops));
        g.bench_function(format!("infer {n} samples"), |b| {
            b.iter(|| r.infer_threads(black_box(&data), 1))
        });
        g.finish();
    }
}

fn patterns(c: &mut C) {
    let mut g = c.benchmark_group("pattern");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for (kind, dither) in [
        (PatternKind::Type1, true),
        (PatternKind::Type2, false),
        (PatternKind::Type3, false),
    ] {
        let mut sp = spec("dey-mnist");
        sp.pattern.kind = kind;
        sp.pattern.dither = dither;
        let edges = sp.derived().total_edges as u64;
        g.throughput(Throughput::Elements(edges));
        g.bench_function(
            format!("dey-mnist {kind:?}{}", if dither { "+dither" } else { "" }),
            |b| b.iter(|| JunctionPattern::all(black_box(&sp))),
        );
    }
    g.finish();
}

/// Training streams on every thread count up to the cores (wall clock: the threads' time).
fn threads(c: &mut C) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for name in ["digits", "dey-mnist"] {
        let sp = spec(name);
        let n = 4096;
        let data = digits(&sp, n);
        let mut g = c.benchmark_group(format!("reference/{name} threads"));
        g.measurement_time(Duration::from_secs(5))
            .warm_up_time(Duration::from_secs(1))
            .sample_size(10);
        g.throughput(Throughput::Elements((n * sp.edge_ops_per_sample()) as u64));
        for t in 1..=cores {
            let mut r = Reference::new(&sp).with_threads(t);
            g.bench_function(format!("train {n} samples, {t} threads"), |b| {
                b.iter(|| r.train(black_box(&data)))
            });
        }
        g.finish();
    }
}

fn benches() {
    let wall = std::env::var("EDGEFLOW_WALL").is_ok_and(|v| v == "1");
    let mut c = Criterion::default()
        .with_measurement(ThreadTime { wall })
        .configure_from_args();
    passes(&mut c);
    streams(&mut c);
    patterns(&mut c);
    let mut wall_clock = Criterion::default()
        .with_measurement(ThreadTime { wall: true })
        .configure_from_args();
    threads(&mut wall_clock);
}

criterion_main!(benches);
