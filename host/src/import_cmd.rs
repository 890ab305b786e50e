//! `edgeflow import`: weights trained elsewhere for a spec's pattern, as an edgeflow model.
//!
//! The NPZ holds `weight1 … weightL` (right neurons × left neurons, zero off the pattern)
//! and `bias1 … biasL`, float32 or float64, as `edgeflow export --format npz` writes them.
//! Each value is rounded to the spec's format to nearest, ties up, and saturated at the
//! format's limits (docs/export.md).

use crate::model::ModelFile;
use crate::report::{emit, Format};
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::matrices::{from_real, RealJunction};
use edgeflow_core::{ScaleKind, Scaling, Spec};
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::PathBuf;

/// Import weights trained elsewhere for a spec's pattern (an NPZ as `export` writes),
/// rounded to the spec's format to nearest, ties up; a weight off the pattern is an error.
///
/// Example: edgeflow import --spec specs/digits.toml --npz weights.npz -o digits.model
#[derive(clap::Args)]
pub struct ImportCli {
    /// Spec file (TOML) whose pattern the weights follow.
    #[arg(long)]
    pub spec: PathBuf,
    /// NumPy archive with weight1 … weightL and bias1 … biasL (see docs/export.md).
    #[arg(long)]
    pub npz: PathBuf,
    /// Where to write the model.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// An archive's arrays by name.
struct Archive<R: Read + Seek> {
    path: PathBuf,
    zip: zip::ZipArchive<R>,
}

impl<R: Read + Seek> Archive<R> {
    fn has(&self, name: &str) -> bool {
        self.zip.index_for_name(&format!("{name}.npy")).is_some()
    }

    /// Array `name` as f64 in C order, with its shape.
    fn floats(&mut self, name: &str) -> Result<(Vec<u64>, Vec<f64>)> {
        let p = self.path.display().to_string();
        let file = self.zip.by_name(&format!("{name}.npy")).map_err(|_| {
            anyhow!("npz {p}: no array `{name}`; the archive needs weight1 … weightL and bias1 … biasL, one pair per junction")
        })?;
        let npy = npyz::NpyFile::new(file)
            .map_err(|e| anyhow!("npz {p}: array `{name}` is not a NumPy array: {e}"))?;
        let shape = npy.shape().to_vec();
        let fortran = npy.order() == npyz::Order::Fortran;
        let descr = npy.dtype().descr();
        let flat: Vec<f64> = match descr.as_str() {
            "'<f8'" => npy.into_vec::<f64>()?,
            "'<f4'" => npy.into_vec::<f32>()?.into_iter().map(f64::from).collect(),
            other => bail!(
                "npz {p}: array `{name}` has dtype {other}; import reads float32 or float64 (e.g. `w.astype(numpy.float32)`)"
            ),
        };
        // A transposed NumPy array is saved column-major: bring it to row-major.
        let flat = match (fortran, shape.as_slice()) {
            (true, &[r, c]) => {
                let (r, c) = (r as usize, c as usize);
                (0..r * c).map(|i| flat[(i % c) * r + i / c]).collect()
            }
            _ => flat,
        };
        Ok((shape, flat))
    }

    /// Array `name` with exactly `want` as its shape.
    fn shaped(&mut self, name: &str, want: &[u64], what: &str) -> Result<Vec<f64>> {
        let (shape, v) = self.floats(name)?;
        if shape != want {
            bail!(
                "npz {}: array `{name}` has shape {shape:?}, the spec needs {want:?} ({what})",
                self.path.display()
            );
        }
        Ok(v)
    }

    fn bytes_text(&mut self, name: &str) -> Result<String> {
        let p = self.path.display().to_string();
        let file = self.zip.by_name(&format!("{name}.npy"))?;
        let v = npyz::NpyFile::new(file)?
            .into_vec::<u8>()
            .map_err(|e| anyhow!("npz {p}: array `{name}`: {e}; expected UTF-8 bytes (uint8)"))?;
        String::from_utf8(v).map_err(|_| anyhow!("npz {p}: array `{name}` is not UTF-8 text"))
    }

    /// The scaling the archive carries (an exported model's), if any.
    fn scaling(&mut self, spec: &Spec) -> Result<Option<Scaling>> {
        if !self.has("scale_kind") {
            return Ok(None);
        }
        let p = self.path.display().to_string();
        let kind: ScaleKind = self
            .bytes_text("scale_kind")?
            .parse()
            .map_err(|e| anyhow!("npz {p}: array `scale_kind`: {e}"))?;
        let (a, min) = self.floats("scale_min")?;
        let (b, max) = self.floats("scale_max")?;
        if a.len() != 1 || a != b || min.len() > spec.layers[0] {
            bail!(
                "npz {p}: `scale_min` {a:?} and `scale_max` {b:?} must be one value per feature, at most layers[0] = {}",
                spec.layers[0]
            );
        }
        Ok(Some(Scaling { kind, min, max }))
    }
}

pub fn exec(a: ImportCli) -> Result<()> {
    let spec = Spec::load(&a.spec)?;
    let file =
        File::open(&a.npz).with_context(|| format!("npz {}: cannot be read", a.npz.display()))?;
    let zip = zip::ZipArchive::new(BufReader::new(file)).map_err(|e| {
        anyhow!(
            "npz {}: not a NumPy archive ({e}); write one with numpy.savez",
            a.npz.display()
        )
    })?;
    let mut ar = Archive {
        path: a.npz.clone(),
        zip,
    };
    let mut weights = Vec::new();
    let mut biases = Vec::new();
    for j in 0..spec.junctions() {
        let (rows, cols) = (spec.layers[j + 1] as u64, spec.layers[j] as u64);
        let n = j + 1;
        let what = format!("junction {n}: {rows} right neurons × {cols} left neurons");
        weights.push(ar.shaped(&format!("weight{n}"), &[rows, cols], &what)?);
        let what = format!("junction {n}: one per right neuron");
        biases.push(ar.shaped(&format!("bias{n}"), &[rows], &what)?);
    }
    let extra = format!("weight{}", spec.junctions() + 1);
    if ar.has(&extra) {
        bail!(
            "npz {}: has `{extra}`, but spec '{}' has {} junctions; give the spec the weights were trained for",
            a.npz.display(),
            spec.name,
            spec.junctions()
        );
    }
    let real: Vec<RealJunction> = weights
        .iter()
        .zip(&biases)
        .map(|(w, b)| RealJunction { weight: w, bias: b })
        .collect();
    let q = from_real(&spec, &real).map_err(|e| anyhow!("npz {}: {e}", a.npz.display()))?;
    let scaling = ar.scaling(&spec)?;
    // Without a stored scaling the model takes its inputs as they are, already in [0, 1].
    let features = scaling.as_ref().map(|s| s.min.len());
    let scaling = scaling.unwrap_or(Scaling {
        kind: ScaleKind::None,
        min: vec![0.0; spec.layers[0]],
        max: vec![1.0; spec.layers[0]],
    });
    if q.saturated > 0 {
        eprintln!(
            "warning: npz {}: {} value(s) beyond the {}-bit format's range [{}, {}] were saturated",
            a.npz.display(),
            q.saturated,
            spec.fixed.width,
            spec.format().to_f64(spec.format().min()),
            spec.format().to_f64(spec.format().max())
        );
    }
    let mut m = ModelFile::new(&spec, &spec.default_staleness(), &q.state, &scaling);
    m.features = features;
    m.save(&a.out)?;
    report(&a, &spec, &m, q.saturated, features);
    Ok(())
}

fn report(a: &ImportCli, spec: &Spec, m: &ModelFile, saturated: usize, features: Option<usize>) {
    let r = Imported {
        spec: spec.name.clone(),
        npz: a.npz.clone(),
        out: a.out.clone(),
        rounding: "nearest, ties up",
        saturated,
        scale: m.scaling.as_ref().map(|s| s.kind),
        features,
        state_sha256: m.state_sha256.clone(),
    };
    emit(&r, Format::json(a.json));
}

/// `edgeflow import`'s report.
#[derive(serde::Serialize)]
struct Imported {
    spec: String,
    npz: PathBuf,
    out: PathBuf,
    rounding: &'static str,
    /// Weights and biases beyond the format's range, saturated at its limits.
    saturated: usize,
    scale: Option<ScaleKind>,
    features: Option<usize>,
    state_sha256: String,
}

impl std::fmt::Display for Imported {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        writeln!(
            f,
            "{} imported from {} into {} (rounded to nearest, {} saturated); state sha256 {}",
            self.spec,
            self.npz.display(),
            self.out.display(),
            self.saturated,
            self.state_sha256
        )
    }
}

/// The path checks of `import`: read the spec and the archive, write the model.
pub fn paths(a: &ImportCli) -> crate::paths::Paths {
    crate::paths::Paths::new()
        .input("--spec", Some(&a.spec))
        .input("--npz", Some(&a.npz))
        .output("--out", Some(&a.out))
}
