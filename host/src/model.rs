//! Model files: the spec, the fixed-point format, the schedule, the complete state and the
//! data scaling, in versioned JSON written atomically.
//!
//! Version 2 added the scaling. A version 1 file has none and is read as it always was: its
//! data divided by the largest value in the file (`global`).

use crate::train::Scale;
use crate::util::write_atomic;
use anyhow::{bail, Context, Result};
use edgeflow_core::{Format, ScaleKind, Scaling, Spec, State};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const MODEL_MAGIC: &str = "edgeflow-model";
pub const MODEL_VERSION: u32 = 2;
/// Versions this edgeflow reads.
const READS: [u64; 2] = [1, 2];

#[derive(Serialize, Deserialize)]
pub struct ModelFile {
    pub magic: String,
    pub version: u32,
    /// The spec as TOML text, exactly what `spec check` validates.
    pub spec: String,
    pub format: Format,
    pub staleness: Vec<usize>,
    pub state: State,
    pub state_sha256: String,
    /// How the training data was brought into [0, 1]; applied to every data set the model sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    /// Features per sample of the data it was trained on (at most `layers[0]`; the rest of
    /// the inputs are zero padding): `eval` and `infer` refuse data of another width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<usize>,
    /// Epochs of the sample order the state has trained; `train --init` continues the order
    /// from here. Absent (an import, an older file): none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epochs: Option<usize>,
}

impl ModelFile {
    pub fn new(spec: &Spec, staleness: &[usize], state: &State, scaling: &Scaling) -> ModelFile {
        ModelFile {
            magic: MODEL_MAGIC.into(),
            version: MODEL_VERSION,
            spec: spec.to_toml(),
            format: spec.format(),
            staleness: staleness.to_vec(),
            state: state.clone(),
            state_sha256: state.sha256(),
            scaling: Some(scaling.clone()),
            features: None,
            epochs: None,
        }
    }

    /// The model's scaling; a version 1 file's is `global`, fitted on the data at hand.
    pub fn scale(&self) -> Scale<'_> {
        match &self.scaling {
            Some(s) => Scale::Model(s),
            None => Scale::Fit(ScaleKind::Global),
        }
    }

    /// A `--scale` given to a command that runs a model must name the model's own scaling:
    /// any other would feed the network values it was not trained on.
    pub fn check_scale(&self, path: &Path, asked: Option<ScaleKind>) -> Result<()> {
        let own = self.scaling.as_ref().map_or(ScaleKind::Global, |s| s.kind);
        match asked {
            Some(k) if k != own => bail!(
                "--scale {k}: model {} was trained with --scale {own} and applies its own scaling; drop --scale or give --scale {own}",
                path.display()
            ),
            _ => Ok(()),
        }
    }

    /// Refuse data whose width is not what the model was trained on: padded with zeros or
    /// cut, every prediction would be silently wrong.
    pub fn check_features(&self, path: &Path, data: &str, features: usize) -> Result<()> {
        match self.features {
            Some(f) if f != features => bail!(
                "data {data}: {features} features per sample, but model {} was trained on {f}; give the data set the model was trained on (or one of the same {f} features)",
                path.display()
            ),
            _ => Ok(()),
        }
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_vec(self)?;
        write_atomic(path, &text)
    }

    /// Load and check a model: its magic and version, its spec, and that the state has the
    /// spec's shape and the recorded checksum.
    pub fn load(path: &Path) -> Result<(Spec, ModelFile)> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("model {}: cannot be read", path.display()))?;
        let head: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| not_json(path, &bytes, &e))?;
        if head.get("magic").and_then(|m| m.as_str()) != Some(MODEL_MAGIC) {
            bail!(
                "model {}: not an edgeflow model file (no \"magic\": \"{MODEL_MAGIC}\")",
                path.display()
            );
        }
        let version = head.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
        if !READS.contains(&version) {
            bail!(
                "model {}: file version {version}, this edgeflow reads versions 1 to {MODEL_VERSION}; retrain the model with this edgeflow",
                path.display()
            );
        }
        let m: ModelFile = serde_json::from_value(head)
            .map_err(|e| anyhow::anyhow!("model {}: malformed field: {e}", path.display()))?;
        let spec = Spec::from_toml_str(&m.spec, &format!("{} (embedded spec)", path.display()))?;
        if m.format != spec.format() {
            bail!(
                "model {}: format {:?} does not match its spec's {:?}",
                path.display(),
                m.format,
                spec.format()
            );
        }
        edgeflow_reference::check_staleness(&m.staleness, spec.junctions()).map_err(|e| {
            anyhow::anyhow!(
                "model {}: field \"staleness\": {e}; the file was edited or is damaged: train again with --out",
                path.display()
            )
        })?;
        if version >= 2 && m.scaling.is_none() {
            bail!(
                "model {}: version {version} without field \"scaling\"; the file was edited or is damaged: train again with --out",
                path.display()
            );
        }
        if let Some(s) = &m.scaling {
            if s.min.len() != s.max.len() || s.min.len() > spec.layers[0] {
                bail!(
                    "model {}: field \"scaling\" has {} minima and {} maxima for a spec with {} inputs; the file was edited or is damaged: train again with --out",
                    path.display(),
                    s.min.len(),
                    s.max.len(),
                    spec.layers[0]
                );
            }
        }
        m.state
            .check_shape(&spec)
            .map_err(|e| anyhow::anyhow!("model {}: shape mismatch: {e}", path.display()))?;
        let sum = m.state.sha256();
        if sum != m.state_sha256 {
            bail!(
                "model {}: state checksum {sum} differs from the recorded {}; the file is corrupt",
                path.display(),
                m.state_sha256
            );
        }
        Ok((spec, m))
    }
}

/// Why a model file is not JSON: cut short (truncated), not a model file at all, or a
/// model file damaged at one place.
fn not_json(path: &Path, bytes: &[u8], e: &serde_json::Error) -> anyhow::Error {
    let p = path.display();
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64)]).to_string();
    let looks_like_model = head.contains(MODEL_MAGIC);
    if looks_like_model && e.is_eof() {
        return anyhow::anyhow!(
            "model {p}: truncated: the file ends after {} bytes, inside the JSON; train again with --out",
            bytes.len()
        );
    }
    if looks_like_model {
        return anyhow::anyhow!(
            "model {p}: damaged at line {} column {} ({e}); train again with --out",
            e.line(),
            e.column()
        );
    }
    let first: String = String::from_utf8_lossy(&bytes[..bytes.len().min(24)])
        .chars()
        .map(|c| if c.is_control() { '.' } else { c })
        .collect();
    anyhow::anyhow!(
        "model {p}: not an edgeflow model file: expected JSON starting {{\"magic\":\"{MODEL_MAGIC}\", found `{first}`; give a file written by `edgeflow train --out`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../specs/tiny.toml"
        )))
        .unwrap()
    }

    #[test]
    fn round_trip_and_clear_errors() {
        let dir = std::env::temp_dir().join(format!("edgeflow-model-{}", std::process::id()));
        let p = dir.join("m.json");
        let s = spec();
        let st = State::initial(&s);
        // values whose shortest decimal form is long, to show they come back bit for bit
        let scaling = Scaling {
            kind: ScaleKind::Feature,
            min: (0..s.layers[0]).map(|k| -(k as f64) / 3.0).collect(),
            max: (0..s.layers[0])
                .map(|k| 0.1 + 1e-17 * k as f64 + 7e300)
                .collect(),
        };
        ModelFile::new(&s, &s.default_staleness(), &st, &scaling)
            .save(&p)
            .unwrap();
        let (s2, m) = ModelFile::load(&p).unwrap();
        assert_eq!(s2, s);
        assert_eq!(m.state, st);
        let back = m.scaling.clone().unwrap();
        assert_eq!(back.kind, ScaleKind::Feature);
        for (a, b) in back
            .min
            .iter()
            .chain(&back.max)
            .zip(scaling.min.iter().chain(&scaling.max))
        {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        let e = m
            .check_scale(&p, Some(ScaleKind::Global))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--scale global") && e.contains("--scale feature"),
            "{e}"
        );
        m.check_scale(&p, Some(ScaleKind::Feature)).unwrap();

        let full = std::fs::read(&p).unwrap();
        std::fs::write(&p, &full[..full.len() / 2]).unwrap();
        let e = ModelFile::load(&p).err().unwrap().to_string();
        assert!(e.contains("truncated"), "{e}");

        // a version 1 file (no scaling) still loads, as global
        let mut v: serde_json::Value = serde_json::from_slice(&full).unwrap();
        v["version"] = 1.into();
        v.as_object_mut().unwrap().remove("scaling");
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let (_, old) = ModelFile::load(&p).unwrap();
        assert!(matches!(old.scale(), Scale::Fit(ScaleKind::Global)));
        v["version"] = 2.into();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = ModelFile::load(&p).err().unwrap().to_string();
        assert!(e.contains("\"scaling\""), "{e}");

        let mut v: serde_json::Value = serde_json::from_slice(&full).unwrap();
        v["version"] = 99.into();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = ModelFile::load(&p).err().unwrap().to_string();
        assert!(e.contains("file version 99"), "{e}");

        let mut v: serde_json::Value = serde_json::from_slice(&full).unwrap();
        v["state"]["weights"][0].as_array_mut().unwrap().pop();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = ModelFile::load(&p).err().unwrap().to_string();
        assert!(
            e.contains("shape mismatch") && e.contains("junction 1"),
            "{e}"
        );

        let mut v: serde_json::Value = serde_json::from_slice(&full).unwrap();
        v["staleness"] = serde_json::json!([1]);
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = ModelFile::load(&p).err().unwrap().to_string();
        assert!(e.contains("m.json") && e.contains("\"staleness\""), "{e}");

        let mut v: serde_json::Value = serde_json::from_slice(&full).unwrap();
        v["state"]["biases"][0][0] = 5.into();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = ModelFile::load(&p).err().unwrap().to_string();
        assert!(e.contains("checksum"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
