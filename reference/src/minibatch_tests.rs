use super::*;
use edgeflow_core::rng::SplitMix64;

fn spec(activation: &str) -> Spec {
    let t = format!("name='m'\nlayers=[5,3,2]\nfan_out=[3,2]\nz=[5,3]\nactivation='{activation}'\nlearning_rate_shift=2\nseed=7\n[fixed]\nwidth=16\nint_bits=3\nfrac_bits=12\n[pattern]\nkind='type2'\n");
    Spec::from_toml_str(&t, "m").unwrap()
}

fn data(n: usize, seed: u64) -> Encoded {
    let mut r = SplitMix64::new(seed);
    Encoded {
        inputs_per_sample: 5,
        inputs: (0..5 * n).map(|_| r.below(4097) as i32).collect(),
        labels: (0..n).map(|_| r.below(2)).collect(),
    }
}

/// One step on a batch of three, against the gradient written out by hand in f64: per sample
/// h = W·x + b, a = f(h), output delta a − onehot, hidden delta (W₂ᵀ·δ)·f'(h), gradients
/// summed over the batch and applied with 2^-2·√3 / 3.
#[test]
fn one_batch_step_is_the_hand_computed_mean_gradient_step() {
    for act in ["sigmoid", "relu"] {
        let s = spec(act);
        let mut m = DenseMiniBatch::new(&s, 3, 1);
        let (w0, b0) = (m.weights.clone(), m.biases.clone());
        // hidden biases away from zero, so relu has neurons on both sides
        m.biases[0] = vec![0.3, -0.6, 0.1];
        let b0 = vec![m.biases[0].clone(), b0[1].clone()];
        let d = data(3, 1);
        m.train(&d);
        let w = |j: usize, r: usize, k: usize| w0[j][r * s.layers[j] + k] as f64;
        let (mut gw, mut gb) = (
            vec![vec![0.0f64; 15], vec![0.0; 6]],
            vec![vec![0.0f64; 3], vec![0.0; 2]],
        );
        for n in 0..3 {
            let x: Vec<f64> = d.input(n).iter().map(|&v| v as f64 / 4096.0).collect();
            let h1: Vec<f64> = (0..3)
                .map(|r| b0[0][r] as f64 + (0..5).map(|k| w(0, r, k) * x[k]).sum::<f64>())
                .collect();
            let (a1, f1): (Vec<f64>, Vec<f64>) = h1
                .iter()
                .map(|&h| {
                    if act == "relu" {
                        (h.max(0.0), if h > 0.0 { 1.0 } else { 0.0 })
                    } else {
                        let s = 1.0 / (1.0 + (-h).exp());
                        (s, s * (1.0 - s))
                    }
                })
                .unzip();
            let a2: Vec<f64> = (0..2)
                .map(|r| {
                    let h = b0[1][r] as f64 + (0..3).map(|k| w(1, r, k) * a1[k]).sum::<f64>();
                    1.0 / (1.0 + (-h).exp())
                })
                .collect();
            let d2: Vec<f64> = (0..2)
                .map(|r| a2[r] - (r == d.labels[n]) as u8 as f64)
                .collect();
            let d1: Vec<f64> = (0..3)
                .map(|k| (0..2).map(|r| w(1, r, k) * d2[r]).sum::<f64>() * f1[k])
                .collect();
            for r in 0..2 {
                for k in 0..3 {
                    gw[1][r * 3 + k] += d2[r] * a1[k];
                }
                gb[1][r] += d2[r];
            }
            for r in 0..3 {
                for k in 0..5 {
                    gw[0][r * 5 + k] += d1[r] * x[k];
                }
                gb[0][r] += d1[r];
            }
        }
        let step = 0.25 * 3f64.sqrt() / 3.0;
        let mut moved = 0.0;
        for j in 0..2 {
            for (i, &g) in gw[j].iter().enumerate() {
                let want = w0[j][i] as f64 - step * g;
                let got = m.weights[j][i] as f64;
                assert!(
                    (want - got).abs() < 1e-6,
                    "{act}: junction {j} weight {i}: by hand {want}, stepped {got}"
                );
                moved += (got - w0[j][i] as f64).abs();
            }
            for (r, &g) in gb[j].iter().enumerate() {
                let want = b0[j][r] as f64 - step * g;
                let got = m.biases[j][r] as f64;
                assert!(
                    (want - got).abs() < 1e-6,
                    "{act}: junction {j} bias {r}: by hand {want}, stepped {got}"
                );
            }
        }
        assert!(moved > 1e-3, "{act}: the step moved the weights ({moved})");
    }
}

/// Rows and right neurons split over threads: every weight the same bits as on one thread,
/// with a last batch shorter than the rest.
#[test]
fn the_thread_count_does_not_change_the_bits() {
    let s = spec("sigmoid");
    let d = data(50, 2);
    let mut one = DenseMiniBatch::new(&s, 7, 1);
    let mut three = DenseMiniBatch::new(&s, 7, 3);
    // split however small the pass
    three.min_work_per_thread = 1;
    for _ in 0..3 {
        one.train(&d);
        three.train(&d);
    }
    assert_eq!(one.weights, three.weights);
    assert_eq!(one.biases, three.biases);
    assert_ne!(one.weights, DenseMiniBatch::new(&s, 7, 1).weights);
    assert_eq!(one.infer(&d), three.infer(&d));
    assert_eq!(one.edge_ops_per_sample(), 15 * 2 + 6 * 3);
}
