//! The OpenCL commands end to end through the `edgeflow` binary: `devices --json`,
//! `kernels build`, training with `--backend opencl` and with `--kernel-binary` giving the
//! reference model's state, and a corrupt binary refused with a clear message. Skips without
//! an OpenCL device unless `CI=true`.

use std::process::Command;

fn edgeflow(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_edgeflow"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[test]
fn devices_kernels_build_and_binary_training_match_reference() {
    let (ok, out, err) = edgeflow(&["devices", "--json"]);
    let n = if ok {
        json(&out)["devices"]
            .as_array()
            .map(|a| a.len())
            .unwrap_or(0)
    } else {
        0
    };
    if n == 0 {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but no OpenCL device: {out}{err}");
        }
        eprintln!("skipping: no OpenCL device ({err})");
        return;
    }
    let d = &json(&out)["devices"][0];
    assert!(
        d["compute_units"].as_u64().unwrap() >= 1 && d["global_memory_bytes"].as_u64().unwrap() > 0
    );
    assert!(!d["driver_version"].as_str().unwrap().is_empty());

    let dir = std::env::temp_dir().join(format!("edgeflow-ocl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("k.bin");
    let (ok, out, err) = edgeflow(&[
        "kernels",
        "build",
        "--device",
        "0",
        "-o",
        bin.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        json(&out)["bytes"].as_u64().unwrap(),
        std::fs::metadata(&bin).unwrap().len()
    );

    let train = |extra: &[&str]| {
        let mut a = vec![
            "train",
            "--spec",
            "specs/digits.toml",
            "--epochs",
            "2",
            "--json",
        ];
        a.extend_from_slice(extra);
        let (ok, out, err) = edgeflow(&a);
        assert!(ok, "{a:?}: {err}");
        let v = json(&out);
        (
            v["state_sha256"].as_str().unwrap().to_string(),
            v["history"].clone(),
            v["samples_per_second"].as_f64().unwrap(),
        )
    };
    let reference = train(&["--backend", "reference"]);
    let source = train(&["--backend", "opencl"]);
    let binary = train(&[
        "--backend",
        "opencl:0",
        "--kernel-binary",
        bin.to_str().unwrap(),
    ]);
    assert_eq!(source.0, reference.0, "OpenCL from source vs reference");
    assert_eq!(binary.0, reference.0, "OpenCL from the binary vs reference");
    assert_eq!(source.1, reference.1, "accuracies per epoch");
    assert!(source.2 > 0.0 && binary.2 > 0.0);

    let bad = dir.join("bad.bin");
    let mut bytes = std::fs::read(&bin).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&bad, &bytes).unwrap();
    let (ok, _, err) = edgeflow(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--backend",
        "opencl",
        "--kernel-binary",
        bad.to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains("corrupt") && err.contains("bad.bin"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
