//! `train --init MODEL`: training continues from a saved model's state.
//!
//! The model's weights and biases are loaded into the backend exactly as the spec's initial
//! state is (`Board::load_state`), so every backend starts from the same bits. As with any
//! new weights, the stochastic-rounding lane streams start again from the spec's seed. The
//! sample order continues: a model records how many epochs of the order it has trained
//! (`epochs`), and the run starts at the next one (a model without the record, such as an
//! import, starts at epoch 0). So under nearest rounding `--epochs 1` then `--init --epochs 1`
//! ends with exactly the state of `--epochs 2`; under stochastic rounding the restarted
//! streams make the two differ.

use crate::model::ModelFile;
use crate::train::{load_split_checked, Scale, Split};
use anyhow::{bail, Result};
use edgeflow_core::{Dataset, ScaleKind, Spec, State};
use std::path::{Path, PathBuf};

pub struct Init {
    pub path: PathBuf,
    pub spec: Spec,
    pub model: ModelFile,
}

impl Init {
    pub fn load(path: &Path) -> Result<Init> {
        let (spec, model) = ModelFile::load(path)?;
        Ok(Init {
            path: path.to_path_buf(),
            spec,
            model,
        })
    }

    pub fn state(&self) -> &State {
        &self.model.state
    }

    /// The first epoch of the sample order the continued run trains.
    pub fn first_epoch(&self) -> usize {
        self.model.epochs.unwrap_or(0)
    }

    /// The spec to train: the model's own; a spec also given (by `flag`, from `source`) must
    /// be the same network, or the weights would land on other edges.
    pub fn spec(&self, given: Option<(&Spec, &str, &Path)>) -> Result<Spec> {
        if let Some((s, flag, source)) = given {
            if *s != self.spec {
                let (a, b) = (s.to_toml(), self.spec.to_toml());
                let differ = a
                    .lines()
                    .zip(b.lines())
                    .find(|(x, y)| x != y)
                    .map(|(x, y)| format!(": `{x}` against the model's `{y}`"))
                    .unwrap_or_default();
                bail!(
                    "{flag} {}: not the spec of --init {}{differ}; drop {flag} (the model carries its spec) or give the spec the model was trained with",
                    source.display(),
                    self.path.display()
                );
            }
        }
        Ok(self.spec.clone())
    }

    /// The data scaling: the model's own (a `--scale` given must name it).
    pub fn scale(&self, asked: Option<ScaleKind>) -> Result<Scale<'_>> {
        self.model.check_scale(&self.path, asked)?;
        Ok(self.model.scale())
    }

    /// Refuse data of another width than the model was trained on.
    pub fn check_data(&self, data: &str, d: &Dataset) -> Result<()> {
        self.model.check_features(&self.path, data, d.features)
    }
}

/// `--epochs` with or without `--init`: 0 only continues nothing, which `--init` allows (the
/// run then reports the model's accuracy and writes its state unchanged).
pub fn check_epochs(epochs: usize, init: bool) -> Result<()> {
    if epochs == 0 && !init {
        bail!(
            "--epochs must be at least 1 (0 is allowed with --init: the model's state, unchanged)"
        );
    }
    Ok(())
}

/// The spec to train and the model to start from: `--init`'s (a `--spec` also given must be
/// the same network), or `--spec` alone.
pub fn spec_and_init(spec: Option<&Path>, init: Option<&Path>) -> Result<(Spec, Option<Init>)> {
    let init = init.map(Init::load).transpose()?;
    let given = spec.map(Spec::load).transpose()?;
    let spec = match (&init, given, spec) {
        (Some(i), Some(s), Some(p)) => i.spec(Some((&s, "--spec", p)))?,
        (Some(i), _, _) => i.spec(None)?,
        (None, Some(s), _) => s,
        (None, None, _) => {
            bail!("--spec: give the spec to train (or --init MODEL, which carries it)")
        }
    };
    Ok((spec, init))
}

/// The training data: with `--init` scaled as the model was (and of its width), else with
/// the scaling `--scale` asks for (feature by default) fitted on the training split.
pub fn load_data(
    spec: &Spec,
    init: Option<&Init>,
    data: &str,
    label_column: Option<usize>,
    scale: Option<ScaleKind>,
) -> Result<Split> {
    match init {
        Some(i) => {
            let width = |d: &Dataset| i.check_data(data, d);
            load_split_checked(spec, data, label_column, i.scale(scale)?, &width)
        }
        None => {
            let fit = Scale::Fit(scale.unwrap_or(ScaleKind::Feature));
            load_split_checked(spec, data, label_column, fit, &|_| Ok(()))
        }
    }
}
