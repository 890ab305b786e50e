//! Training throughput, OpenCL against the reference model on the same machine: one stream of
//! the bundled digits (its 80% training split) per iteration, for specs/digits.toml and
//! specs/dey-mnist.toml (digits zero-padded to 1024 inputs). Criterion reports samples/s.
//!
//! cargo bench -p edgeflow-opencl --bench train

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use edgeflow_core::{Dataset, Spec};
use edgeflow_opencl::{Device, OpenClNetwork};
use edgeflow_reference::Reference;
use std::path::PathBuf;

fn bench(c: &mut Criterion) {
    let dev = match Device::open(None) {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("OpenCL part skipped: {e:#}");
            None
        }
    };
    for name in ["digits", "dey-mnist"] {
        let spec = Spec::load(&PathBuf::from(format!(
            "{}/../specs/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        )))
        .unwrap();
        let d = Dataset::digits().unwrap();
        let (train, _) = d.split(2024);
        let data = d.encode(&spec, &train).unwrap();
        let mut g = c.benchmark_group(format!("train/{name}"));
        g.throughput(Throughput::Elements(data.len() as u64));
        g.sample_size(10);
        g.bench_function("reference", |b| {
            let mut r = Reference::new(&spec);
            b.iter(|| r.train(&data))
        });
        if let Some(dev) = &dev {
            g.bench_function(format!("opencl:{}", dev.info.name), |b| {
                let mut o =
                    OpenClNetwork::new(dev.clone(), &spec, spec.default_staleness()).unwrap();
                b.iter(|| o.train(&data).unwrap())
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
