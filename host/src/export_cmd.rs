//! `edgeflow export`: a trained model as ONNX (to run it) or NPZ (to read or retrain its
//! weights with NumPy, PyTorch or anything else). docs/export.md describes both files.

#[path = "onnx.rs"]
mod onnx;

use crate::model::ModelFile;
use crate::report::{emit, Format};
use crate::util::write_atomic;
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::matrices::{to_dense, DenseJunction};
use edgeflow_core::Spec;
use npyz::WriterBuilder;
use serde_json::json;
use std::io::{Cursor, Write};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// An ONNX model (opset 13) that any ONNX runtime runs.
    Onnx,
    /// A NumPy archive of every layer's weights, biases, masks and the format.
    Npz,
}

/// Export a trained model: ONNX (runs in any ONNX runtime) or NPZ (weights, masks and
/// format for NumPy). See docs/export.md.
///
/// Example: edgeflow export --model digits.model -o digits.onnx
#[derive(clap::Args)]
pub struct ExportCli {
    /// Model file written by `edgeflow train --out` or `edgeflow import`.
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// onnx or npz; default from the extension of -o (.onnx or .npz).
    #[arg(long, value_enum)]
    pub format: Option<ExportFormat>,
    /// Where to write the exported file.
    #[arg(short, long)]
    pub out: std::path::PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `edgeflow export`'s report.
#[derive(serde::Serialize)]
struct Exported {
    model: std::path::PathBuf,
    format: &'static str,
    out: std::path::PathBuf,
    bytes: usize,
    spec: String,
    layers: Vec<usize>,
    /// Edges per junction (the masks' ones).
    edges: Vec<usize>,
    input_width: usize,
    features: Option<usize>,
    opset: Option<i64>,
    state_sha256: String,
}

impl std::fmt::Display for Exported {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        writeln!(
            f,
            "{} ({}) exported as {} to {} ({} bytes); input: {} values in [0, 1] per sample, state sha256 {}",
            self.spec,
            self.model.display(),
            self.format,
            self.out.display(),
            self.bytes,
            self.input_width,
            self.state_sha256
        )
    }
}

/// The format asked for, or the one the output's extension names.
fn format_of(asked: Option<ExportFormat>, out: &Path) -> Result<ExportFormat> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match (asked, ext.as_deref()) {
        (Some(f), _) => Ok(f),
        (None, Some("onnx")) => Ok(ExportFormat::Onnx),
        (None, Some("npz")) => Ok(ExportFormat::Npz),
        (None, _) => bail!(
            "-o {}: cannot tell the format from the name; give --format onnx or --format npz, or name the file .onnx or .npz",
            out.display()
        ),
    }
}

pub fn exec(a: ExportCli) -> Result<()> {
    let format = format_of(a.format, &a.out)?;
    let (spec, m) = ModelFile::load(&a.model)?;
    let dense = to_dense(&spec, &m.state);
    let bytes = match format {
        ExportFormat::Onnx => onnx::network(&spec, &dense, &metadata(&spec, &m)),
        ExportFormat::Npz => npz(&spec, &m, &dense)?,
    };
    write_atomic(&a.out, &bytes).with_context(|| format!("writing {}", a.out.display()))?;
    let name = match format {
        ExportFormat::Onnx => "onnx",
        ExportFormat::Npz => "npz",
    };
    let features = m.features.or(m.scaling.as_ref().map(|s| s.min.len()));
    let r = Exported {
        model: a.model.clone(),
        format: name,
        out: a.out.clone(),
        bytes: bytes.len(),
        spec: spec.name.clone(),
        layers: spec.layers.clone(),
        edges: dense
            .iter()
            .map(|d| d.mask.iter().filter(|&&v| v == 1).count())
            .collect(),
        input_width: spec.layers[0],
        features,
        opset: (format == ExportFormat::Onnx).then_some(onnx::OPSET),
        state_sha256: m.state_sha256.clone(),
    };
    emit(&r, Format::json(a.json));
    Ok(())
}

/// What a user of the ONNX file needs to feed it: the scaling that brings raw features into
/// [0, 1], and where the weights came from.
fn metadata(spec: &Spec, m: &ModelFile) -> Vec<(String, String)> {
    let mut md = vec![
        ("edgeflow.spec".to_string(), m.spec.clone()),
        ("edgeflow.state_sha256".into(), m.state_sha256.clone()),
        ("edgeflow.input_bits".into(), spec.input_bits().to_string()),
        (
            "edgeflow.format".into(),
            json!({"width": spec.fixed.width, "int_bits": spec.fixed.int_bits, "frac_bits": spec.fixed.frac_bits}).to_string(),
        ),
    ];
    if let Some(s) = &m.scaling {
        md.push((
            "edgeflow.scaling".into(),
            serde_json::to_string(s).expect("a scaling serializes"),
        ));
    }
    if let Some(f) = m.features {
        md.push(("edgeflow.features".into(), f.to_string()));
    }
    md
}

/// One array of an NPZ archive, as NumPy's `savez` writes it (`NAME.npy`, deflated).
pub fn put<T, W>(zip: &mut zip::ZipWriter<W>, name: &str, shape: &[u64], data: &[T]) -> Result<()>
where
    T: npyz::Serialize + npyz::AutoSerialize + Clone,
    W: Write + std::io::Seek,
{
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file(npyz::npz::file_name_from_array_name(name), opts)?;
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut *zip)
        .begin_nd()?;
    w.extend(data.iter().cloned())?;
    w.finish()?;
    Ok(())
}

fn npz(spec: &Spec, m: &ModelFile, dense: &[DenseJunction]) -> Result<Vec<u8>> {
    let f = spec.format();
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let z = &mut zip;
    let layers: Vec<i64> = spec.layers.iter().map(|&n| n as i64).collect();
    put(z, "layers", &[layers.len() as u64], &layers)?;
    let fmt = [f.width, f.int_bits, f.frac_bits].map(i64::from);
    put(z, "format", &[3], &fmt)?;
    put(z, "input_bits", &[], &[spec.input_bits() as i64])?;
    put(z, "spec", &[m.spec.len() as u64], m.spec.as_bytes())?;
    if let Some(s) = &m.scaling {
        let kind = s.kind.to_string();
        put(z, "scale_kind", &[kind.len() as u64], kind.as_bytes())?;
        put(z, "scale_min", &[s.min.len() as u64], &s.min)?;
        put(z, "scale_max", &[s.max.len() as u64], &s.max)?;
    }
    for (j, d) in dense.iter().enumerate() {
        let n = j + 1;
        let (rows, cols) = (d.rows as u64, d.cols as u64);
        let w_int: Vec<i16> = d.weight.iter().map(|&v| v as i16).collect();
        let b_int: Vec<i16> = d.bias.iter().map(|&v| v as i16).collect();
        let w: Vec<f32> = d.weight.iter().map(|&v| f.to_f64(v) as f32).collect();
        let b: Vec<f32> = d.bias.iter().map(|&v| f.to_f64(v) as f32).collect();
        put(z, &format!("mask{n}"), &[rows, cols], &d.mask)?;
        put(z, &format!("weight{n}_int"), &[rows, cols], &w_int)?;
        put(z, &format!("bias{n}_int"), &[rows], &b_int)?;
        put(z, &format!("weight{n}"), &[rows, cols], &w)?;
        put(z, &format!("bias{n}"), &[rows], &b)?;
    }
    let cursor = zip
        .finish()
        .map_err(|e| anyhow!("building the NPZ archive: {e}"))?;
    Ok(cursor.into_inner())
}

/// The path checks of `export`: read the model, write the file.
pub fn paths(a: &ExportCli) -> crate::paths::Paths {
    crate::paths::Paths::new()
        .input("--model", Some(&a.model))
        .output("--out", Some(&a.out))
}
