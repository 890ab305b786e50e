//! Data a model or spec cannot use, refused with the file and the rule: another width than
//! the model was trained on, damaged MNIST IDX headers, and the bundled digits known by their
//! bytes rather than their name.

mod common;

use common::{digits_model, ok_json, path_str, refused, root, tmpdir, write_mode};

#[test]
fn data_of_another_width_than_the_model_is_refused() {
    let d = tmpdir("width");
    let m = digits_model(&d);
    let csv = d.join("eight.csv");
    let mut text = String::new();
    for i in 0..40 {
        text += &format!("{},{}\n", vec![(i % 5).to_string(); 8].join(","), i % 10);
    }
    write_mode(&csv, text.as_bytes(), 0o644);
    for cmd in ["eval", "infer"] {
        refused(
            &[cmd, "--model", path_str(&m), "--data", path_str(&csv)],
            &["eight.csv", "8 features", "digits.model", "trained on 64"],
            &[&m, &csv],
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

fn idx(n: u32, rows: u32, cols: u32, pixels: usize) -> Vec<u8> {
    let mut b = vec![0, 0, 8, 3];
    for v in [n, rows, cols] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    b.extend(std::iter::repeat(7u8).take(pixels));
    b
}

#[test]
fn idx_headers_are_checked() {
    let d = tmpdir("idx");
    let img = d.join("t-images-idx3-ubyte");
    let lab = d.join("t-labels-idx1-ubyte");
    write_mode(&lab, &[0, 0, 8, 1, 0, 0, 0, 2, 1, 0], 0o644);
    let train = [
        "train",
        "--spec",
        "specs/tiny.toml",
        "--epochs",
        "1",
        "--data",
        path_str(&img),
    ];
    // 2^22 · 2^22 · 2^22 wraps to 0 in 64 bits: a 16-byte file would pass an unchecked size test
    let big = 1u32 << 22;
    write_mode(&img, &idx(big, big, big, 0), 0o644);
    refused(
        &train,
        &[
            "t-images-idx3-ubyte",
            "4194304 images of 4194304x4194304",
            "header is damaged",
        ],
        &[&img],
    );
    write_mode(&img, &idx(2, 0, 0, 0), 0o644);
    refused(
        &train,
        &["t-images-idx3-ubyte", "2 images of 0x0", "no pixels"],
        &[&img],
    );
    write_mode(&img, &idx(2, 2, 2, 5), 0o644);
    refused(&train, &["is truncated: 21 bytes", "need 24"], &[&img]);
    write_mode(&img, &idx(2, 2, 2, 9), 0o644);
    refused(&train, &["has 25 bytes", "1 extra bytes"], &[&img]);
    write_mode(&img, &idx(2, 2, 2, 8), 0o644);
    let mut with_col = train.to_vec();
    with_col.extend(["--label-column", "3"]);
    refused(
        &with_col,
        &["--label-column 3", "applies to CSV files", "labels-idx1"],
        &[&img],
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_bundled_digits_are_known_by_content_not_name() {
    let d = tmpdir("digits-name");
    // a user's own data that happens to be called digits.csv.gz
    let mine = d.join("digits.csv.gz");
    let mut text = String::new();
    for i in 0..40 {
        text += &format!("{},{}\n", vec![(i % 3).to_string(); 8].join(","), i % 4);
    }
    let plain = d.join("mine.csv");
    write_mode(&plain, text.as_bytes(), 0o644);
    let gz = std::process::Command::new("gzip")
        .args(["-c", path_str(&plain)])
        .output()
        .unwrap();
    assert!(gz.status.success());
    write_mode(&mine, &gz.stdout, 0o644);
    let v = ok_json(&[
        "train",
        "--spec",
        "specs/tiny.toml",
        "--epochs",
        "1",
        "--data",
        path_str(&mine),
        "--json",
    ]);
    assert_eq!(
        v["train_samples"].as_u64().unwrap() + v["test_samples"].as_u64().unwrap(),
        40
    );
    // the bundled file under another name is the bundled digits
    let copy = d.join("copy.gz");
    std::fs::copy(root().join("data/digits.csv.gz"), &copy).unwrap();
    let v = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--data",
        path_str(&copy),
        "--json",
    ]);
    let b = ok_json(&[
        "train",
        "--spec",
        "specs/digits.toml",
        "--epochs",
        "1",
        "--json",
    ]);
    assert_eq!(v["data"], "digits");
    assert_eq!(v["state_sha256"], b["state_sha256"]);
    std::fs::remove_dir_all(&d).ok();
}
