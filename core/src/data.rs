//! Data sets: the bundled digits, MNIST IDX files and CSV; the stratified split; and the
//! encoding of inputs and labels into a spec's value format and layer sizes. How a CSV's
//! values are brought into `[0, 1]` is [`crate::scaling`].

use crate::rng::SplitMix64;
use crate::spec::Spec;
use flate2::read::GzDecoder;
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The UCI optical digits (CC BY 4.0, E. Alpaydin and C. Kaynak), as data/README.md says.
pub const DIGITS_GZ: &[u8] = include_bytes!("../../data/digits.csv.gz");
/// SHA-256 of `data/digits.csv.gz` (md5 9b335364a7bfd63947c7480a5bd51f2d).
pub const DIGITS_SHA256: &str = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22";

#[derive(Debug)]
pub struct DataError {
    pub source: String,
    pub message: String,
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data {}: {}", self.source, self.message)
    }
}

impl std::error::Error for DataError {}

pub(crate) fn err(source: impl fmt::Display, message: impl Into<String>) -> DataError {
    DataError {
        source: source.to_string(),
        message: message.into(),
    }
}

/// Samples with integer labels. Image sets (the bundled digits, MNIST) arrive in `[0, 1]`,
/// divided by their known full scale; a CSV arrives as written and is brought into `[0, 1]`
/// by a [`crate::Scaling`] before it is encoded.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub name: String,
    pub features: usize,
    pub classes: usize,
    /// `len × features`, row-major.
    pub x: Vec<f64>,
    pub y: Vec<usize>,
    /// The full scale the loader divided every value by (16 for the digits' pixel counts, 255
    /// for MNIST's grey levels), for a set whose values share one known range; `None` for a CSV.
    pub full_scale: Option<f64>,
    /// Each feature's place in the source file, for messages: "column 3" or "column 3 (`age`)".
    pub columns: Vec<String>,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    pub fn sample(&self, i: usize) -> &[f64] {
        &self.x[i * self.features..(i + 1) * self.features]
    }

    /// The bundled digits: 1797 8×8 images, pixels 0..16 scaled by 1/16.
    pub fn digits() -> Result<Dataset, DataError> {
        Self::digits_from_gz(DIGITS_GZ, "bundled digits")
    }

    fn digits_from_gz(bytes: &[u8], source: &str) -> Result<Dataset, DataError> {
        let sum = hex(&Sha256::digest(bytes));
        if sum != DIGITS_SHA256 {
            return Err(err(
                source,
                format!("checksum mismatch: sha256 {sum}, expected {DIGITS_SHA256}; restore data/digits.csv.gz from the repository"),
            ));
        }
        let mut text = String::new();
        GzDecoder::new(bytes)
            .read_to_string(&mut text)
            .map_err(|e| err(source, format!("cannot decompress: {e}")))?;
        let mut d = parse_csv(&text, source, CsvLabel::Last)?;
        d.columns = plain_columns(d.features);
        // Pixel counts 0..16: their known range is the set's scaling, exactly pixel/16.
        for v in &mut d.x {
            *v /= 16.0;
        }
        d.full_scale = Some(16.0);
        d.name = "digits".into();
        Ok(d)
    }

    /// Load a named set (`digits`) or a path: `.csv`/`.csv.gz` (label in the last column unless
    /// `label_column` says otherwise) or an MNIST images IDX file (`*-images-idx3-ubyte[.gz]`)
    /// whose labels file sits beside it.
    pub fn load(what: &str, label_column: Option<usize>) -> Result<Dataset, DataError> {
        if what == "digits" {
            if let Some(c) = label_column {
                return Err(err(
                    "digits",
                    format!("--label-column {c} applies to CSV files; the bundled digits have their labels already"),
                ));
            }
            return Self::digits();
        }
        let path = PathBuf::from(what);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if name.contains("idx3") {
            if let Some(c) = label_column {
                return Err(err(
                    path.display(),
                    format!("--label-column {c} applies to CSV files; an MNIST images file takes its labels from the labels-idx1 file beside it: drop --label-column"),
                ));
            }
            return load_mnist(&path);
        }
        let raw = read_file(&path)?;
        // A copy of the bundled digits is known by its bytes, whatever its name; any other
        // file, whatever its name, is read as CSV.
        if label_column.is_none() && hex(&Sha256::digest(&raw)) == DIGITS_SHA256 {
            return Self::digits_from_gz(&raw, what);
        }
        let bytes = gunzip_if_gz(raw, &path)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| err(path.display(), "is not UTF-8 text; expected CSV"))?;
        let label = match label_column {
            Some(c) => CsvLabel::Column(c),
            None => CsvLabel::Last,
        };
        let mut d = parse_csv(&text, &path.display().to_string(), label)?;
        d.name = name;
        Ok(d)
    }

    /// Deterministic stratified split: in every class, a seeded shuffle, then the first 80%
    /// (rounded to nearest) for training. Returns `(train, test)` index lists, each sorted.
    pub fn split(&self, seed: u64) -> (Vec<usize>, Vec<usize>) {
        let mut train = Vec::new();
        let mut test = Vec::new();
        for c in 0..self.classes {
            let mut idx: Vec<usize> = (0..self.len()).filter(|&i| self.y[i] == c).collect();
            SplitMix64::derive(seed, "split", c as u64).shuffle(&mut idx);
            let n_train = (idx.len() * 4 + 2) / 5;
            train.extend_from_slice(&idx[..n_train]);
            test.extend_from_slice(&idx[n_train..]);
        }
        train.sort();
        test.sort();
        (train, test)
    }

    /// Encode the samples `idx` for a spec: inputs quantized at the spec's input precision into
    /// its value format ([`crate::Format::quantize_input`]) and zero-padded to `N_0`; labels
    /// checked against `N_L` (extra outputs are padding, trained towards 0).
    pub fn encode(&self, spec: &Spec, idx: &[usize]) -> Result<Encoded, DataError> {
        let n0 = spec.layers[0];
        let nl = *spec.layers.last().unwrap();
        if self.features > n0 {
            return Err(err(
                &self.name,
                format!(
                    "has {} features but spec '{}' has only {n0} inputs (layers[0]); use a spec with layers[0] ≥ {}",
                    self.features, spec.name, self.features
                ),
            ));
        }
        if self.classes > nl {
            return Err(err(
                &self.name,
                format!(
                    "has {} classes but spec '{}' has only {nl} outputs (last entry of layers); use ≥ {} outputs",
                    self.classes, spec.name, self.classes
                ),
            ));
        }
        let (f, bits) = (spec.format(), spec.input_bits());
        let mut inputs = vec![0i32; idx.len() * n0];
        for (row, &i) in idx.iter().enumerate() {
            for (k, &v) in self.sample(i).iter().enumerate() {
                if !(0.0..=1.0).contains(&v) {
                    return Err(err(
                        &self.name,
                        format!(
                            "sample {i}, {}: value {v} is outside [0, 1]; apply a Scaling before encoding",
                            self.columns[k]
                        ),
                    ));
                }
                inputs[row * n0 + k] = f.quantize_input(v, bits);
            }
        }
        Ok(Encoded {
            inputs_per_sample: n0,
            inputs,
            labels: idx.iter().map(|&i| self.y[i]).collect(),
        })
    }
}

/// Samples in a spec's format: what every backend consumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub inputs_per_sample: usize,
    /// `len × N_0` raw fixed-point values.
    pub inputs: Vec<i32>,
    pub labels: Vec<usize>,
}

impl Encoded {
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    pub fn input(&self, n: usize) -> &[i32] {
        &self.inputs[n * self.inputs_per_sample..(n + 1) * self.inputs_per_sample]
    }

    /// The samples in the given order.
    pub fn select(&self, order: &[usize]) -> Encoded {
        let mut inputs = Vec::with_capacity(order.len() * self.inputs_per_sample);
        for &i in order {
            inputs.extend_from_slice(self.input(i));
        }
        Encoded {
            inputs_per_sample: self.inputs_per_sample,
            inputs,
            labels: order.iter().map(|&i| self.labels[i]).collect(),
        }
    }

    pub fn take(&self, n: usize) -> Encoded {
        let order: Vec<usize> = (0..n.min(self.len())).collect();
        self.select(&order)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

enum CsvLabel {
    Last,
    Column(usize),
}

/// The values as written: no scaling here, that is fitted later on the training split.
fn parse_csv(text: &str, source: &str, label: CsvLabel) -> Result<Dataset, DataError> {
    let mut x = Vec::new();
    let mut y = Vec::new();
    let mut features = None;
    let mut header: Option<Vec<String>> = None;
    let mut label_at = 0;
    for (ln, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(|c| c.trim()).collect();
        let lc = match label {
            CsvLabel::Last => cells.len() - 1,
            CsvLabel::Column(c) => c,
        };
        if lc >= cells.len() {
            return Err(err(
                source,
                format!(
                    "line {}: label column {lc} but only {} columns",
                    ln + 1,
                    cells.len()
                ),
            ));
        }
        let parsed: Result<Vec<f64>, _> = cells.iter().map(|c| c.parse::<f64>()).collect();
        let Ok(vals) = parsed else {
            if ln == 0 && y.is_empty() {
                header = Some(cells.iter().map(|c| c.to_string()).collect());
                continue;
            }
            let (col, cell) = cells
                .iter()
                .enumerate()
                .find(|(_, c)| c.parse::<f64>().is_err())
                .expect("some cell failed to parse");
            return Err(err(
                source,
                format!(
                    "line {}, column {col} (counting from 0): `{cell}` is not a number",
                    ln + 1
                ),
            ));
        };
        // `nan` and `inf` parse as numbers but would poison the scaling of every sample.
        if let Some(col) = vals.iter().position(|v| !v.is_finite()) {
            return Err(err(
                source,
                format!(
                    "line {}, column {col} (counting from 0): `{}` is not a finite number",
                    ln + 1,
                    cells[col]
                ),
            ));
        }
        let lab = vals[lc];
        // A spec has at most 32768 outputs, so no larger class number can ever be trained.
        if lab < 0.0 || lab.fract() != 0.0 || lab >= 32768.0 {
            return Err(err(
                source,
                format!(
                    "line {}: label {lab} is not a class number 0, 1, 2, … (below 32768)",
                    ln + 1
                ),
            ));
        }
        let n_feat = vals.len() - 1;
        match features {
            None => features = Some(n_feat),
            Some(f) if f != n_feat => {
                return Err(err(
                    source,
                    format!(
                        "line {}: {} features, earlier lines have {f}",
                        ln + 1,
                        n_feat
                    ),
                ))
            }
            _ => {}
        }
        label_at = lc;
        y.push(lab as usize);
        x.extend(
            vals.iter()
                .enumerate()
                .filter(|&(i, _)| i != lc)
                .map(|(_, &v)| v),
        );
    }
    let Some(features) = features else {
        return Err(err(source, "contains no samples"));
    };
    let columns = (0..=features)
        .filter(|&c| c != label_at)
        .map(|c| match header.as_ref().and_then(|h| h.get(c)) {
            Some(name) => format!("column {c} (`{name}`)"),
            None => format!("column {c}"),
        })
        .collect();
    let classes = y.iter().max().map(|m| m + 1).unwrap_or(0);
    Ok(Dataset {
        name: source.to_string(),
        features,
        classes,
        x,
        y,
        full_scale: None,
        columns,
    })
}

/// "column 0", "column 1", … for sets without a header.
fn plain_columns(n: usize) -> Vec<String> {
    (0..n).map(|c| format!("column {c}")).collect()
}

fn read_file(path: &Path) -> Result<Vec<u8>, DataError> {
    if path.is_dir() {
        return Err(err(
            path.display(),
            "is a directory; give a data file (CSV or MNIST IDX)",
        ));
    }
    std::fs::read(path).map_err(|e| err(path.display(), format!("cannot be read: {e}")))
}

fn read_maybe_gz(path: &Path) -> Result<Vec<u8>, DataError> {
    gunzip_if_gz(read_file(path)?, path)
}

fn gunzip_if_gz(raw: Vec<u8>, path: &Path) -> Result<Vec<u8>, DataError> {
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| err(path.display(), format!("cannot decompress: {e}")))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

fn be32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

fn load_mnist(images: &Path) -> Result<Dataset, DataError> {
    let name = images.file_name().unwrap().to_string_lossy().to_string();
    let labels_name = name.replace("images-idx3", "labels-idx1");
    let labels = images.with_file_name(&labels_name);
    let ib = read_maybe_gz(images)?;
    if ib.len() < 16 || be32(&ib, 0) != 0x0803 {
        return Err(err(
            images.display(),
            "is not an IDX image file (magic 0x00000803)",
        ));
    }
    let (n, rows, cols) = (be32(&ib, 4), be32(&ib, 8), be32(&ib, 12));
    let header = format!("header says {n} images of {rows}x{cols} pixels");
    if n == 0 || rows == 0 || cols == 0 {
        return Err(err(
            images.display(),
            format!(
                "{header}: no pixels to learn from; give an IDX file with images of at least 1x1"
            ),
        ));
    }
    // checked: a damaged header can announce more bytes than any file holds
    let want = n
        .checked_mul(rows)
        .and_then(|p| p.checked_mul(cols))
        .and_then(|p| p.checked_add(16));
    let msg = match want {
        None => format!("{header}, more bytes than any file holds: the header is damaged"),
        Some(w) if ib.len() < w => {
            format!("is truncated: {} bytes, the {header} need {w}", ib.len())
        }
        Some(w) if ib.len() > w => format!(
            "has {} bytes, the {header} need {w}: {} extra bytes, not an IDX file as written",
            ib.len(),
            ib.len() - w
        ),
        Some(_) => String::new(),
    };
    if !msg.is_empty() {
        return Err(err(images.display(), msg));
    }
    let lb = read_maybe_gz(&labels).map_err(|e| {
        err(
            labels.display(),
            format!(
                "{}; the labels file must sit beside the images file",
                e.message
            ),
        )
    })?;
    if lb.len() < 8 || be32(&lb, 0) != 0x0801 || be32(&lb, 4) != n || lb.len() != 8 + n {
        return Err(err(
            labels.display(),
            format!("is not an IDX label file for {n} images"),
        ));
    }
    let y: Vec<usize> = lb[8..].iter().map(|&b| b as usize).collect();
    Ok(Dataset {
        name,
        features: rows * cols,
        classes: y.iter().max().map(|m| m + 1).unwrap_or(0),
        x: ib[16..].iter().map(|&p| p as f64 / 255.0).collect(),
        y,
        full_scale: Some(255.0),
        columns: plain_columns(rows * cols),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_load_with_checksum() {
        let d = Dataset::digits().unwrap();
        assert_eq!((d.len(), d.features, d.classes), (1797, 64, 10));
        assert!(d.x.iter().all(|&v| (0.0..=1.0).contains(&v)));
        let mut bad = DIGITS_GZ.to_vec();
        let n = bad.len();
        bad[n / 2] ^= 1;
        let e = Dataset::digits_from_gz(&bad, "x").unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
    }

    #[test]
    fn split_is_stratified_disjoint_and_deterministic() {
        let d = Dataset::digits().unwrap();
        let (tr, te) = d.split(1);
        assert_eq!(tr.len() + te.len(), d.len());
        assert_eq!((tr.clone(), te.clone()), d.split(1));
        for c in 0..10 {
            let n = d.y.iter().filter(|&&y| y == c).count();
            let nt = tr.iter().filter(|&&i| d.y[i] == c).count();
            assert_eq!(nt, (n * 4 + 2) / 5);
        }
        let mut all: Vec<usize> = tr.iter().chain(te.iter()).cloned().collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), d.len());
    }

    fn tiny_spec(n0: usize, nl: usize) -> Spec {
        let t = format!(
            "name='s'\nlayers=[{n0},{nl}]\nfan_out=[1]\nz=[1]\nactivation='sigmoid'\nlearning_rate_shift=3\n[fixed]\nwidth=10\nint_bits=2\nfrac_bits=7\n[pattern]\nkind='type2'\n"
        );
        // fan-in = n0/nl must be whole for this helper
        Spec::from_toml_str(&t, "t").unwrap()
    }

    #[test]
    fn encode_pads_and_checks_sizes() {
        let d = Dataset::digits().unwrap();
        let e = d.encode(&tiny_spec(128, 16), &[0, 1]).unwrap();
        assert_eq!(e.input(0).len(), 128);
        assert!(e.input(0)[64..].iter().all(|&v| v == 0));
        // pixel p → round(p/16 · 128)
        assert_eq!(e.input(0)[2], (d.sample(0)[2] * 16.0) as i32 * 8);
        let msg = d.encode(&tiny_spec(32, 16), &[0]).unwrap_err().to_string();
        assert!(
            msg.contains("64 features") && msg.contains("only 32 inputs"),
            "{msg}"
        );
        let msg = d.encode(&tiny_spec(64, 8), &[0]).unwrap_err().to_string();
        assert!(
            msg.contains("10 classes") && msg.contains("only 8 outputs"),
            "{msg}"
        );
    }

    #[test]
    fn absent_input_bits_encode_as_frac_bits_plus_one_and_as_plain_rounding() {
        let d = Dataset::digits().unwrap();
        let all: Vec<usize> = (0..d.len()).collect();
        for (int_bits, frac) in [(2, 7), (0, 7), (3, 12), (1, 3)] {
            let mut s = tiny_spec(64, 16);
            s.fixed = crate::spec::FixedSpec {
                width: 1 + int_bits + frac,
                int_bits,
                frac_bits: frac,
            };
            let absent = d.encode(&s, &all).unwrap();
            s.input_bits = Some(frac + 1);
            assert_eq!(d.encode(&s, &all).unwrap(), absent, "{int_bits}.{frac}");
            // and that is the format's plain rounding of every pixel, as before input_bits
            let f = s.format();
            for (i, row) in all.iter().enumerate() {
                for (k, &v) in d.sample(*row).iter().enumerate() {
                    assert_eq!(absent.input(i)[k], f.quantize(v), "{int_bits}.{frac}");
                }
            }
            // fewer bits change the inputs (pixels are sixteenths)
            s.input_bits = Some(2);
            assert_ne!(d.encode(&s, &all).unwrap(), absent);
        }
    }

    #[test]
    fn csv_and_idx_loaders() {
        let dir = std::env::temp_dir().join(format!("edgeflow-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("a.csv");
        std::fs::write(&csv, "f1,f2,label\n0,2,1\n4,1,0\n").unwrap();
        let d = Dataset::load(csv.to_str().unwrap(), None).unwrap();
        assert_eq!((d.features, d.classes, d.len()), (2, 2, 2));
        // as written: the scaling is fitted later, on the training split
        assert_eq!(d.x, vec![0.0, 2.0, 4.0, 1.0]);
        assert_eq!(d.columns, vec!["column 0 (`f1`)", "column 1 (`f2`)"]);
        let d = Dataset::load(csv.to_str().unwrap(), Some(0)).unwrap();
        assert_eq!(d.y, vec![0, 4]);
        assert_eq!(d.columns, vec!["column 1 (`f2`)", "column 2 (`label`)"]);
        let e = d.encode(&tiny_spec(16, 16), &[0]).unwrap_err().to_string();
        assert!(
            e.contains("column 1 (`f2`): value 2 is outside [0, 1]"),
            "{e}"
        );
        std::fs::write(&csv, "0,2,1\n4,1\n").unwrap();
        let e = Dataset::load(csv.to_str().unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
        for (bad, needle) in [
            (
                "0,2,1\n4,x,0\n",
                "line 2, column 1 (counting from 0): `x` is not a number",
            ),
            (
                "0,2,1\n4,nan,0\n",
                "line 2, column 1 (counting from 0): `nan` is not a finite",
            ),
            (
                "0,inf,1\n",
                "line 1, column 1 (counting from 0): `inf` is not a finite",
            ),
            (
                "0,2,1\n4,1,1e30\n",
                "line 2: label 1000000000000000000000000000000 is not",
            ),
        ] {
            std::fs::write(&csv, bad).unwrap();
            let e = Dataset::load(csv.to_str().unwrap(), None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{bad:?}: {e}");
        }
        let e = Dataset::load("digits", Some(3)).unwrap_err().to_string();
        assert!(e.contains("--label-column 3"), "{e}");

        let img = dir.join("t-images-idx3-ubyte");
        let mut b = vec![0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2];
        b.extend_from_slice(&[0, 255, 51, 0]);
        std::fs::write(&img, &b).unwrap();
        let e = Dataset::load(img.to_str().unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("labels file must sit beside"), "{e}");
        std::fs::write(
            dir.join("t-labels-idx1-ubyte"),
            [0, 0, 8, 1, 0, 0, 0, 2, 7, 3],
        )
        .unwrap();
        let d = Dataset::load(img.to_str().unwrap(), None).unwrap();
        assert_eq!((d.features, d.classes), (2, 8));
        assert_eq!(d.x, vec![0.0, 1.0, 0.2, 0.0]);
        std::fs::write(&img, &b[..18]).unwrap();
        let e = Dataset::load(img.to_str().unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
