//! Models that travel, end to end through the `edgeflow` binary: `export` to ONNX run by
//! onnxruntime (agreement with the float evaluation of the same weights and with the
//! bit-exact predictions), `export` to NPZ and `import` back to the same state, weights off
//! the pattern and wrong shapes named, and `train --init` continuing on every backend.

mod common;

use common::{edgeflow, ok_json, path_str, refused, tmpdir};
use serde_json::Value;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

fn sha(v: &Value) -> String {
    v["state_sha256"]
        .as_str()
        .unwrap_or_else(|| panic!("no state_sha256 in {v}"))
        .to_string()
}

fn train(args: &[&str]) -> Value {
    let mut a = vec!["train", "--json"];
    a.extend_from_slice(args);
    ok_json(&a)
}

/// A Python with numpy and onnxruntime (./test.sh installs them): the user's site, or the
/// workspace's .venv. Under CI=true their absence fails the test.
fn python() -> Option<PathBuf> {
    let venv = common::root().join(".venv/bin/python3");
    for p in [PathBuf::from("python3"), venv] {
        let ok = Command::new(&p)
            .args(["-c", "import numpy, onnxruntime"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(p);
        }
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true but no python3 with numpy and onnxruntime (pip install numpy onnxruntime; ./test.sh does)");
    }
    eprintln!("skipping: no python3 with numpy and onnxruntime (pip install numpy onnxruntime)");
    None
}

#[test]
fn onnx_runs_in_onnxruntime_and_agrees_with_float_and_bit_exact() {
    onnx_agrees("sigmoid", 20);
}

/// A tanh hidden layer is ONNX's Tanh, and the worked example's float network knows it.
#[test]
fn onnx_with_tanh_hidden_layers_agrees_too() {
    onnx_agrees("tanh", 10);
}

/// Digits with hidden `activation`, trained `epochs` epochs, exported and run in onnxruntime.
fn onnx_agrees(activation: &str, epochs: usize) {
    let Some(py) = python() else { return };
    let d = tmpdir(&format!("export-onnx-{activation}"));
    let spec = d.join("digits.toml");
    let text = std::fs::read_to_string(common::root().join("specs/digits.toml")).unwrap();
    let text = text.replace(
        "activation = \"sigmoid\"",
        &format!("activation = \"{activation}\""),
    );
    assert!(text.contains(&format!("activation = \"{activation}\"")));
    std::fs::write(&spec, text).unwrap();
    let m = d.join("digits.model");
    let trained = train(&[
        "--spec",
        path_str(&spec),
        "--epochs",
        &epochs.to_string(),
        "--out",
        path_str(&m),
    ]);
    let (onnx, npz, pred) = (d.join("d.onnx"), d.join("d.npz"), d.join("pred.csv"));
    let e = ok_json(&[
        "export",
        "--model",
        path_str(&m),
        "-o",
        path_str(&onnx),
        "--json",
    ]);
    assert_eq!(e["format"], "onnx");
    assert_eq!(
        e["bytes"].as_u64(),
        Some(std::fs::metadata(&onnx).unwrap().len())
    );
    ok_json(&[
        "export",
        "--model",
        path_str(&m),
        "-o",
        path_str(&npz),
        "--json",
    ]);
    let o = edgeflow(&["infer", "--model", path_str(&m), "-o", path_str(&pred)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // the worked example of docs/export.md, as a user runs it
    let o = Command::new(&py)
        .arg(common::root().join("docs/export_example.py"))
        .args([&onnx, &npz, &common::root().join("data/digits.csv.gz")])
        .args(["--full-scale", "16", "--json", "--bit-exact"])
        .arg(&pred)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let float = r["onnx_agrees_with_float"].as_f64().unwrap();
    let exact = r["onnx_agrees_with_bit_exact"].as_f64().unwrap();
    let acc = r["onnx_accuracy"].as_f64().unwrap();
    println!(
        "digits ({activation}), {epochs} epochs, {} samples: onnxruntime agrees with the float evaluation on {:.2}% and with the bit-exact predictions on {:.2}%; accuracy {:.2}% (bit-exact training reported test {:.2}%)",
        r["samples"],
        float * 100.0,
        exact * 100.0,
        acc * 100.0,
        trained["test_accuracy"].as_f64().unwrap() * 100.0
    );
    assert_eq!(r["samples"], 1797);
    assert!(float >= 0.995, "agreement with float {float}");
    assert!(exact >= 0.99, "agreement with bit-exact {exact}");

    // the metadata carries what the input needs and which state it is
    let o = Command::new(&py)
        .args([
            "-c",
            "import sys, onnxruntime as o; m = o.InferenceSession(sys.argv[1]).get_modelmeta().custom_metadata_map; print(m['edgeflow.state_sha256'], m['edgeflow.input_bits'], m['edgeflow.scaling'])",
        ])
        .arg(&onnx)
        .output()
        .unwrap();
    let meta = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(meta.starts_with(&format!("{} 8 ", sha(&trained))), "{meta}");
    assert!(meta.contains("\"kind\":\"feature\""), "{meta}");
    std::fs::remove_dir_all(&d).ok();
}

/// The arrays of an NPZ archive, by name, as stored (`NAME.npy` bytes).
fn read_npz(p: &Path) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(p).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut b = Vec::new();
            f.read_to_end(&mut b).unwrap();
            (f.name().unwrap().trim_end_matches(".npy").to_string(), b)
        })
        .collect()
}

fn write_npz(p: &Path, arrays: &[(String, Vec<u8>)]) {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in arrays {
        z.start_file(
            format!("{name}.npy"),
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        z.write_all(bytes).unwrap();
    }
    std::fs::write(p, z.finish().unwrap().into_inner()).unwrap();
}

fn npy(bytes: &[u8]) -> npyz::NpyFile<&[u8]> {
    npyz::NpyFile::new(bytes).unwrap()
}

fn f32_npy(shape: &[u64], data: &[f32]) -> Vec<u8> {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut out)
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
    out
}

#[test]
fn npz_round_trips_exactly_and_bad_weights_are_named() {
    let d = tmpdir("export-npz");
    let m = d.join("digits.model");
    let trained = train(&[
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "2",
        "--out",
        path_str(&m),
    ]);
    let npz = d.join("d.npz");
    ok_json(&[
        "export",
        "--model",
        path_str(&m),
        "--format",
        "npz",
        "-o",
        path_str(&npz),
        "--json",
    ]);
    let back = d.join("back.model");
    let imp = ok_json(&[
        "import",
        "--spec",
        "specs/digits.toml",
        "--npz",
        path_str(&npz),
        "-o",
        path_str(&back),
        "--json",
    ]);
    assert_eq!(sha(&imp), sha(&trained));
    assert_eq!(imp["saturated"], 0);
    // the imported model predicts as the original (its own checksum is checked on load)
    let a = ok_json(&["eval", "--model", path_str(&m), "--json"]);
    let b = ok_json(&["eval", "--model", path_str(&back), "--json"]);
    assert_eq!(
        (a["test_accuracy"].clone(), sha(&a)),
        (b["test_accuracy"].clone(), sha(&b))
    );

    let arrays = read_npz(&npz);
    let get = |n: &str| arrays.iter().find(|(k, _)| k == n).unwrap().1.clone();
    // masks: 80 × 64 and 10 × 80, 16 ones (the fan-in) in every row
    for (n, rows, cols) in [("mask1", 80, 64), ("mask2", 10, 80)] {
        let bytes = get(n);
        let f = npy(&bytes);
        assert_eq!(f.shape(), &[rows, cols]);
        let mask: Vec<u8> = f.into_vec().unwrap();
        for r in mask.chunks(cols as usize) {
            assert_eq!(r.iter().map(|&v| v as usize).sum::<usize>(), 16, "{n}");
        }
    }
    // the float weights are the integers over 2^12, zero off the pattern
    let wi: Vec<i16> = npy(&get("weight2_int")).into_vec().unwrap();
    let wf: Vec<f32> = npy(&get("weight2")).into_vec().unwrap();
    let mask: Vec<u8> = npy(&get("mask2")).into_vec().unwrap();
    for i in 0..wi.len() {
        assert_eq!(wf[i], wi[i] as f32 / 4096.0);
        assert!(mask[i] == 1 || wi[i] == 0);
    }
    assert_eq!(
        npy(&get("format")).into_vec::<i64>().unwrap(),
        vec![16, 3, 12]
    );

    let with = |name: &str, bytes: Vec<u8>| -> Vec<(String, Vec<u8>)> {
        arrays
            .iter()
            .map(|(k, v)| (k.clone(), if k == name { bytes.clone() } else { v.clone() }))
            .collect()
    };
    let bad = d.join("bad.npz");
    let out = d.join("never.model");
    let import = |npz: &Path| {
        vec![
            "import".to_string(),
            "--spec".into(),
            "specs/digits.toml".into(),
            "--npz".into(),
            path_str(npz).into(),
            "-o".into(),
            path_str(&out).into(),
        ]
    };
    let args = import(&bad);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // one weight off the pattern: named by junction, row and column
    let off = mask.iter().position(|&v| v == 0).unwrap();
    let mut w = wf.clone();
    w[off] = 0.5;
    write_npz(&bad, &with("weight2", f32_npy(&[10, 80], &w)));
    let (r, c) = (off / 80, off % 80);
    let want =
        format!("junction 2: weight at row {r} (right neuron), column {c} (left neuron) is 0.5");
    refused(&args, &[path_str(&bad), &want], &[&bad]);
    assert!(!out.exists());

    // a wrong shape names the array and the shape the spec needs
    write_npz(
        &bad,
        &with("weight1", f32_npy(&[64, 80], &vec![0.0; 64 * 80])),
    );
    refused(
        &args,
        &["array `weight1` has shape [64, 80], the spec needs [80, 64]"],
        &[&bad],
    );
    // a missing array is named
    let fewer: Vec<_> = arrays
        .iter()
        .filter(|(k, _)| k != "bias2")
        .cloned()
        .collect();
    write_npz(&bad, &fewer);
    refused(&args, &["no array `bias2`"], &[&bad]);
    // another spec's shapes
    refused(
        &[
            "import",
            "--spec",
            "specs/tiny.toml",
            "--npz",
            path_str(&npz),
            "-o",
            path_str(&out),
        ],
        &["array `weight1` has shape [80, 64], the spec needs [8, 8]"],
        &[&npz],
    );
    // the output never replaces an input; an unknown extension needs --format
    refused(
        &[
            "import",
            "--spec",
            "specs/digits.toml",
            "--npz",
            path_str(&npz),
            "-o",
            path_str(&npz),
        ],
        &["is the input --npz"],
        &[&npz],
    );
    refused(
        &[
            "export",
            "--model",
            path_str(&m),
            "-o",
            path_str(&d.join("w.bin")),
        ],
        &["--format onnx or --format npz"],
        &[&m],
    );
    std::fs::remove_dir_all(&d).ok();
}

/// digits with nearest rounding: no random stream in the updates, so a run split in two
/// with `--init` can equal the run in one piece.
fn nearest_digits(d: &Path) -> PathBuf {
    let text = std::fs::read_to_string(common::root().join("specs/digits.toml")).unwrap();
    let p = d.join("digits-nearest.toml");
    std::fs::write(
        &p,
        text.replacen("[fixed]", "rounding = \"nearest\"\n\n[fixed]", 1),
    )
    .unwrap();
    p
}

#[test]
fn init_continues_training_exactly() {
    let d = tmpdir("export-init");
    let spec = nearest_digits(&d);
    let (m1, m0, m2) = (d.join("m1.model"), d.join("m0.model"), d.join("m2.model"));
    let two = train(&["--spec", path_str(&spec), "--epochs", "2"]);
    let one = train(&[
        "--spec",
        path_str(&spec),
        "--epochs",
        "1",
        "--out",
        path_str(&m1),
    ]);
    assert_ne!(sha(&one), sha(&two));
    // 0 epochs: the state as loaded, written back unchanged
    let zero = train(&[
        "--init",
        path_str(&m1),
        "--epochs",
        "0",
        "--out",
        path_str(&m0),
    ]);
    assert_eq!(sha(&zero), sha(&one));
    assert_eq!(zero["test_accuracy"], one["test_accuracy"]);
    // 1 + 1 epochs is 2 epochs: the sample order continues where the model left it
    let cont = train(&[
        "--init",
        path_str(&m0),
        "--spec",
        path_str(&spec),
        "--epochs",
        "1",
        "--out",
        path_str(&m2),
    ]);
    assert_eq!(cont["first_epoch"], 1);
    assert_eq!(sha(&cont), sha(&two));
    // through NPZ and back: the same start (an import has no place in the order: epoch 0)
    let (npz, imp) = (d.join("m1.npz"), d.join("imported.model"));
    ok_json(&[
        "export",
        "--model",
        path_str(&m1),
        "-o",
        path_str(&npz),
        "--json",
    ]);
    ok_json(&[
        "import",
        "--spec",
        path_str(&spec),
        "--npz",
        path_str(&npz),
        "-o",
        path_str(&imp),
        "--json",
    ]);
    let z = train(&["--init", path_str(&imp), "--epochs", "0"]);
    assert_eq!(sha(&z), sha(&one));

    // wrong spec, wrong scaling, 0 epochs without --init, output over the init model
    refused(
        &[
            "train",
            "--init",
            path_str(&m1),
            "--spec",
            "specs/digits.toml",
            "--epochs",
            "1",
        ],
        &[
            "--spec specs/digits.toml: not the spec of --init",
            "rounding",
        ],
        &[&m1],
    );
    refused(
        &[
            "train",
            "--init",
            path_str(&m1),
            "--scale",
            "global",
            "--epochs",
            "1",
        ],
        &["--scale global", "--scale feature"],
        &[&m1],
    );
    refused(
        &["train", "--spec", "specs/digits.toml", "--epochs", "0"],
        &["--epochs must be at least 1"],
        &[],
    );
    refused(
        &[
            "train",
            "--init",
            path_str(&m1),
            "--epochs",
            "1",
            "--out",
            path_str(&m1),
        ],
        &["is the input --init"],
        &[&m1],
    );
    std::fs::remove_dir_all(&d).ok();
}

/// `--init` on every backend, single board and a two-board plan: the tiny spec on a small
/// CSV, every run ends with the reference's state.
#[test]
fn init_is_bit_exact_on_every_backend() {
    let d = tmpdir("export-backends");
    let csv = d.join("tiny.csv");
    let rows: String = (0..40)
        .map(|i| {
            let c = i % 4;
            let x: Vec<String> = (0..8)
                .map(|k| {
                    format!(
                        "{:.3}",
                        ((i * 7 + k * 3) % 11) as f64 / 22.0 + if k / 2 == c { 0.5 } else { 0.0 }
                    )
                })
                .collect();
            format!("{},{c}\n", x.join(","))
        })
        .collect();
    std::fs::write(&csv, rows).unwrap();
    let m = d.join("t.model");
    let data = path_str(&csv);
    let start = train(&[
        "--spec",
        "specs/tiny.toml",
        "--data",
        data,
        "--epochs",
        "1",
        "--out",
        path_str(&m),
    ]);
    let run = |backend: &str, epochs: &str| {
        sha(&train(&[
            "--init",
            path_str(&m),
            "--data",
            data,
            "--epochs",
            epochs,
            "--backend",
            backend,
        ]))
    };
    let want = run("reference", "2");
    let mut backends = vec!["reference", "rtl"];
    if common::have("clinfo", "clinfo") {
        backends.push("opencl");
    }
    if common::have("verilator", "verilator") {
        backends.push("verilator");
    }
    for b in backends {
        // the model's state goes in and comes back out unchanged, then trains as the reference
        assert_eq!(run(b, "0"), sha(&start), "--backend {b}, 0 epochs");
        assert_eq!(run(b, "2"), want, "--backend {b}");
    }

    let plan = d.join("plan.json");
    ok_json(&[
        "plan",
        "--spec",
        "specs/tiny.toml",
        "--boards",
        "icebreaker,icebreaker",
        "-o",
        path_str(&plan),
        "--json",
    ]);
    let pm = d.join("plan.model");
    train(&[
        "--plan",
        path_str(&plan),
        "--data",
        data,
        "--epochs",
        "1",
        "--out",
        path_str(&pm),
    ]);
    let on = |backend: &str| {
        let v = train(&[
            "--plan",
            path_str(&plan),
            "--init",
            path_str(&pm),
            "--data",
            data,
            "--epochs",
            "1",
            "--backend",
            backend,
            "--verify",
        ]);
        assert_eq!(v["reference_sha256"], v["state_sha256"], "{backend}");
        sha(&v)
    };
    let want = on("reference");
    assert_eq!(on("rtl"), want);
    // a model of another network than the plan's is refused
    refused(
        &[
            "train",
            "--plan",
            path_str(&plan),
            "--init",
            path_str(&m),
            "--data",
            data,
            "--epochs",
            "1",
        ],
        &["not the spec of --init", "z = "],
        &[&m],
    );
    std::fs::remove_dir_all(&d).ok();
}
