//! A chain of OpenCL stages driven the way a multi-board runtime drives it: windows of block
//! cycles, upstream stage first, boundary values handed on by sample.

use edgeflow_core::Encoded;
use edgeflow_opencl::{OpenClStage, WindowIo};
use std::collections::HashMap;

/// Train one stream of `data` through `stages` (contiguous junction ranges, in order, built
/// with one global schedule) in windows of `window` block cycles; `window` must not exceed the
/// smallest link delay + 1 (see `OpenClStage`).
pub fn train_stream(stages: &mut [OpenClStage], data: &Encoded, window: usize) {
    let k = stages.len();
    for (i, st) in stages.iter_mut().enumerate() {
        let labels: &[usize] = if i + 1 == k { &data.labels } else { &[] };
        st.begin_stream(data.len(), labels).unwrap();
    }
    // fwd[i]: activations entering stage i; bwd[i]: sums leaving stage i, by sample
    let mut fwd: Vec<HashMap<usize, Vec<i32>>> = vec![HashMap::new(); k];
    let mut bwd: Vec<HashMap<usize, Vec<i32>>> = vec![HashMap::new(); k];
    let total = stages[0].stream_cycles();
    let mut t0 = 0;
    while t0 < total {
        let t1 = (t0 + window).min(total);
        for i in 0..k {
            let st = &mut stages[i];
            let a_in: Vec<i32> = st
                .a_in_samples(t0, t1)
                .flat_map(|n| match i {
                    0 => data.input(n).to_vec(),
                    _ => fwd[i].remove(&n).expect("activations from upstream"),
                })
                .collect();
            let d_in: Vec<i32> = st
                .d_in_samples(t0, t1)
                .flat_map(|n| bwd[i + 1].remove(&n).expect("sums from downstream"))
                .collect();
            let io = WindowIo {
                a_in: &a_in,
                d_in: &d_in,
            };
            let out = st.run_window(t0, t1, &io).unwrap();
            let width = |v: &[i32], r: &std::ops::Range<usize>| v.len() / r.len().max(1);
            let n1 = width(&out.a_out, &out.a_out_samples);
            for (j, n) in out.a_out_samples.clone().enumerate() {
                fwd[i + 1].insert(n, out.a_out[j * n1..(j + 1) * n1].to_vec());
            }
            let n0 = width(&out.d_out, &out.d_out_samples);
            for (j, n) in out.d_out_samples.clone().enumerate() {
                bwd[i].insert(n, out.d_out[j * n0..(j + 1) * n0].to_vec());
            }
        }
        t0 = t1;
    }
}
