//! The samples `edgeflow bench` trains on: a data set, or random samples that fit any spec.

use crate::train::{load_split, Scale, Split};
use anyhow::{anyhow, Result};
use edgeflow_core::{Dataset, Encoded, ScaleKind, Spec};

/// How many random samples `--data random` makes (the benchmark streams through them).
pub const RANDOM_SAMPLES: usize = 1000;

/// The training samples and the data's name. `--data random`: random samples made for the
/// spec. Without `--data`: the bundled digits, or random samples with a note on stderr when
/// digits does not fit the spec (more features than its inputs or more classes than its
/// outputs), so any spec can be benchmarked.
pub fn train_samples(
    spec: &Spec,
    data: Option<&str>,
    scale: ScaleKind,
) -> Result<(Encoded, String)> {
    let random = || {
        let d = edgeflow_reference::random::random_data(spec, RANDOM_SAMPLES, 1);
        (d, "random".to_string())
    };
    let name = match data {
        Some("random") => return Ok(random()),
        Some(d) => d,
        None => {
            let digits = Dataset::load("digits", None)?;
            if digits.encode(spec, &[]).is_err() {
                crate::ui::note(format!(
                    "note: the bundled digits ({} features, {} classes) does not fit spec '{}' ({} inputs, {} outputs): benchmarking on {RANDOM_SAMPLES} random samples instead (as --data random)",
                    digits.features,
                    digits.classes,
                    spec.name,
                    spec.layers[0],
                    spec.layers[spec.junctions()]
                ));
                return Ok(random());
            }
            "digits"
        }
    };
    let split = load_split(spec, name, None, Scale::Fit(scale)).map_err(|e| {
        anyhow!("{e:#}; or give --data random to benchmark on random samples made for the spec")
    })?;
    Ok((split.train, split.name))
}

/// The training and test split `bench --to-accuracy` trains and evaluates on: the data set as
/// for [`train_samples`] (default digits); random samples have no test split.
pub fn test_split(spec: &Spec, data: Option<&str>, scale: ScaleKind) -> Result<Split> {
    let name = data.unwrap_or("digits");
    if name == "random" {
        return Err(anyhow!(
            "--to-accuracy needs a data set with a test split, and --data random has none; give --data digits, a CSV file or MNIST IDX images"
        ));
    }
    load_split(spec, name, None, Scale::Fit(scale)).map_err(|e| {
        anyhow!("--to-accuracy: {e:#}; it needs a data set that fits the spec, with a test split")
    })
}
