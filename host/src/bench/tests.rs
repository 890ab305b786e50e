use super::*;
use edgeflow_core::Encoded;

fn spec(name: &str) -> Spec {
    Spec::load(
        &PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs"))
            .join(format!("{name}.toml")),
    )
    .unwrap()
}

#[test]
fn sweeps_grow_the_network_and_stay_valid() {
    let base = spec("dey-mnist");
    let w = sweep_specs(&base, Sweep::Width);
    assert!(w.len() >= 5, "{}", w.len());
    let edges: Vec<usize> = w.iter().map(|(_, s)| s.derived().total_edges).collect();
    assert!(
        edges.windows(2).all(|e| e[0] < e[1]),
        "width sweep grows the edges: {edges:?}"
    );
    assert!(
        w.iter()
            .any(|(_, s)| (&s.layers, &s.fan_out, &s.z) == (&base.layers, &base.fan_out, &base.z)),
        "the base spec is one point"
    );
    for (_, s) in &w {
        s.validate("t").unwrap();
        assert_eq!(
            (s.layers[0], s.layers[2]),
            (1024, 32),
            "inputs and outputs stay"
        );
        // constant density in the first junction
        assert_eq!(s.fan_out[0] * 64, 4 * s.layers[1]);
    }
    let d = sweep_specs(&base, Sweep::Density);
    let edges: Vec<usize> = d.iter().map(|(_, s)| s.derived().total_edges).collect();
    assert!(
        d.len() >= 4 && edges.windows(2).all(|e| e[0] < e[1]),
        "{edges:?}"
    );
    let z = sweep_specs(&base, Sweep::Z);
    assert!(z.len() >= 4);
    assert!(z
        .iter()
        .all(|(_, s)| s.derived().total_edges == base.derived().total_edges));
    let clocks: Vec<usize> = z
        .iter()
        .map(|(_, s)| s.derived().max_junction_clocks)
        .collect();
    assert!(
        clocks.windows(2).all(|c| c[0] >= c[1]) && clocks[0] > clocks[clocks.len() - 1],
        "more lanes, fewer clocks: {clocks:?}"
    );
}

#[test]
fn a_synth_report_fmax_is_projected_with_its_kind() {
    let dir = std::env::temp_dir().join(format!("edgeflow-bench-fmax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("synth.json");
    std::fs::write(
        &p,
        r#"{"design":"dey-mnist","fits":true,"fmax_kind":"pre-route estimate","fmax_mhz":42.5,"timing":{"full_cycle_mhz":85.0}}"#,
    )
    .unwrap();
    assert_eq!(fmax_from_report(&p).unwrap(), (42.5, None));
    assert_eq!(report_fmax_kind(&p).as_deref(), Some("pre-route estimate"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nexys4_projection_includes_the_published_clock() {
    let b = board_clocks("nexys4-ddr").unwrap();
    assert!(b
        .clocks
        .iter()
        .any(|(mhz, src, _)| *mhz == 15.0 && src.contains("published")));
    let s = spec("dey-mnist");
    let p = projections(&s, &[b], &[]);
    let published = p.iter().find(|p| p.clock_mhz == 15.0).unwrap();
    // 15 MHz over C + overhead clocks per sample, straight from the spec
    let c = (s.derived().max_junction_clocks + s.block_cycle_overhead()) as f64;
    assert_eq!(published.clocks_per_sample, c);
    assert!((published.samples_per_second - 15e6 / c).abs() < 1e-6);
    assert!(board_clocks("no-such-board")
        .unwrap_err()
        .to_string()
        .contains("unknown board 'no-such-board'"));
}

#[test]
fn fmax_is_read_from_a_report() {
    let dir = std::env::temp_dir().join(format!("edgeflow-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("r.json");
    std::fs::write(&p, r#"{"target":"xc7a100t","timing":{"fmax_mhz":87.5}}"#).unwrap();
    assert_eq!(fmax_from_report(&p).unwrap(), (87.5, None));
    std::fs::write(&p, r#"{"board":"icebreaker","fmax_mhz":31.2}"#).unwrap();
    assert_eq!(
        fmax_from_report(&p).unwrap(),
        (31.2, Some("icebreaker".into()))
    );
    std::fs::write(&p, r#"{"luts":3}"#).unwrap();
    assert!(fmax_from_report(&p)
        .unwrap_err()
        .to_string()
        .contains("fmax"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_backend_is_reported_and_the_reference_is_bit_exact_with_itself() {
    let s = spec("tiny");
    let data = Encoded {
        inputs_per_sample: 8,
        inputs: (0..8 * 40).map(|i| (i * 37 % 129) as i32).collect(),
        labels: (0..40).map(|i| i % 4).collect(),
    };
    let mut ctx = Ctx {
        spec: &s,
        train: &data,
        samples: 40,
        repeat: 2,
        budget: 5.0,
        minibatch: MiniBatchOpts {
            batch: 8,
            threads: Some(2),
        },
        ref_sha: Default::default(),
    };
    let pb = ProgressBar::hidden();
    let r = measure(&mut ctx, "reference", &pb);
    assert!(r.available && r.samples == 40 && r.train_samples_per_second > 0.0);
    assert_eq!(r.bit_exact, Some(true));
    assert_eq!(r.edge_ops_per_sample, sparse_edge_ops(&s));
    let d = measure(&mut ctx, "dense", &pb);
    assert!(d.available && d.bit_exact.is_none() && d.infer_samples_per_second > 0.0);
    let n = measure(&mut ctx, "no-such-backend", &pb);
    assert!(!n.available && n.unavailable_reason.unwrap().contains("no-such-backend"));
    assert_eq!(
        backend_list(&Some(vec!["reference,opencl".into()]), false),
        vec![
            "reference",
            "float",
            "sparse-f32",
            "dense",
            "dense-minibatch",
            "opencl"
        ]
    );
}

/// The mini-batch baseline learns: five epochs on digits in `edgeflow train`'s sample order,
/// on two threads, put at least 90 % of the test split right (counted here).
#[test]
fn the_minibatch_baseline_learns_digits() {
    let s = spec("digits");
    let split = crate::bench_data::test_split(&s, None, edgeflow_core::ScaleKind::Feature).unwrap();
    let mut m = edgeflow_reference::DenseMiniBatch::new(&s, 32, 2);
    let mut order = edgeflow_core::order::SampleOrder::new(split.train.len());
    for _ in 0..5 {
        m.train(&split.train.select(&order.next_epoch()));
    }
    let pred = m.infer(&split.test);
    assert_eq!(pred.len(), split.test.len());
    let right = pred
        .iter()
        .zip(&split.test.labels)
        .filter(|(p, l)| p == l)
        .count();
    assert!(
        right * 10 >= split.test.len() * 9,
        "{right} of {} test samples right after five epochs",
        split.test.len()
    );
}

#[test]
fn resident_rows_are_bounded_by_the_line_and_the_datapath() {
    let boards: Vec<_> = ["icebreaker", "ulx3s-12f", "ulx3s-85f"]
        .iter()
        .map(|b| board_clocks(b).unwrap())
        .collect();
    let digits = spec("digits");
    let rows = resident_projections(&digits, &boards, 1438, 30, &[]);
    let ice = rows.iter().find(|r| r.board == "icebreaker").unwrap();
    assert!(ice.fits);
    assert_eq!((ice.clock_mhz, ice.baud), (30.0, 3_000_000));
    // the iCEBreaker builds with registered reads and the deep pipeline: 640 + 5 clocks
    assert_eq!(ice.block_cycle_clocks, 645);
    // never faster than the datapath, and the upload never beats its bytes on the line
    assert!(ice.end_to_end_samples_per_second < 30e6 / 645.0);
    let bytes = (1438 * 33 * 2) as f64;
    assert!(ice.clocks.upload_clocks as f64 >= bytes * 10.0 * 10.0);
    assert!(ice.clocks.train_clocks >= 30 * 1438 * 645);
    // every ULX3S keeps the set in its SDRAM: 2^20 words, 31,775 digits records of 33
    // words; a record starting anywhere in a 32-word line touches 2 lines, each filled in
    // 43 clocks at 28.125 MHz (tRCD = tWR = tRP = 1 clock), 45 with the refreshes' share:
    // hidden under the block cycle
    let small = rows.iter().find(|r| r.board == "ulx3s-12f").unwrap();
    assert!(small.fits);
    assert_eq!(small.resident_capacity_samples, (1 << 20) / 33);
    assert_eq!(edgeflow_hdl::sdram_memory::fill_clocks(28.125), 43);
    assert_eq!(edgeflow_hdl::sdram_memory::read_clocks(28.125), 45);
    assert_eq!(small.record_feed_clocks, 2 * 45);
    assert!(small.clocks.train_clocks >= 30 * 1438 * small.block_cycle_clocks as u64);
    // a 1024-input network of 8-bit codes needs 513 words a record (17 or 18 lines) from
    // the SDRAM: the fills, not the block cycle, set its pace
    let dey = spec("dey-mnist");
    let rows = resident_projections(&dey, &boards[2..], 500, 1, &[]);
    let u = &rows[0];
    assert_eq!(dey.record_words(), 513);
    assert!(u.record_feed_clocks >= 17 * 45 && u.block_cycle_clocks < 100);
    assert!(u.clocks.train_clocks >= 500 * 17 * 45);
}

/// A routed design's Fmax is projected at that design's own clocks per sample: the ULX3S
/// report of dey-mnist at z = [32, 8] (133 clocks) does not make the published z = [128, 32]
/// (37 clocks as the board builds it) run at its 42.40 MHz.
#[test]
fn a_routed_fmax_is_projected_at_its_own_design_clocks() {
    let mut b = board_clocks("ulx3s-85f").unwrap();
    b.clocks.push((42.4, "report".into(), Some(133.0)));
    let s = spec("dey-mnist");
    let p = projections(&s, &[b], &[]);
    let at = |mhz: f64| -> Vec<f64> {
        p.iter()
            .filter(|p| p.clock_mhz == mhz)
            .map(|p| p.clocks_per_sample)
            .collect()
    };
    assert_eq!(at(42.4), vec![133.0]);
    // the board file's clock keeps the spec's own block cycle, with the board's pipeline
    assert_eq!(at(28.125), vec![37.0]);
    let routed = p.iter().find(|p| p.clock_mhz == 42.4).unwrap();
    assert!((routed.samples_per_second - 42.4e6 / 133.0).abs() < 1e-6);
    assert!(routed.clocks_source.contains("routed design"), "{routed:?}");
}
