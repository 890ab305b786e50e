//! How a data set's values are brought into `[0, 1]` before they are quantized: fitted on the
//! training split, stored with a model, and applied unchanged to every later data set the
//! model sees.
//!
//! - `feature` (the default): each feature min–max scaled on its own, so a column whose values
//!   span 0..0.01 and one spanning 0..10⁶ both use the whole input range; values beyond the
//!   training range are clipped to 0 and 1.
//! - `global`: every value divided by the largest value in the file (negative values refused),
//!   so features with small ranges share the range of the largest one.
//! - `none`: values are used as written and must already lie in `[0, 1]`.
//!
//! A set with a known full scale (the bundled digits, pixel counts 0..16; MNIST, grey levels
//! 0..255) arrives already divided by it, and that division is its scaling under every kind:
//! its pixels share one range, and fitting each pixel on its own would stretch a rarely-lit
//! border pixel to full intensity. So the digits keep their exact pixel/16 encoding.

use crate::data::{err, DataError, Dataset};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleKind {
    Feature,
    Global,
    None,
}

/// A scaling name that is not one of the kinds.
#[derive(Debug, thiserror::Error)]
#[error("unknown scaling '{0}'; use feature (each feature min-max to [0, 1]), global (every value divided by the largest) or none (values already in [0, 1])")]
pub struct UnknownScaling(pub String);

impl FromStr for ScaleKind {
    type Err = UnknownScaling;
    fn from_str(s: &str) -> Result<Self, UnknownScaling> {
        match s {
            "feature" => Ok(ScaleKind::Feature),
            "global" => Ok(ScaleKind::Global),
            "none" => Ok(ScaleKind::None),
            other => Err(UnknownScaling(other.to_string())),
        }
    }
}

impl fmt::Display for ScaleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScaleKind::Feature => "feature",
            ScaleKind::Global => "global",
            ScaleKind::None => "none",
        })
    }
}

/// A fitted scaling: feature `k` maps `min[k]` to 0 and `max[k]` to 1, clipped at both ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    pub kind: ScaleKind,
    pub min: Vec<f64>,
    pub max: Vec<f64>,
}

/// A scaling and what the fit noticed about the data (for standard error).
pub struct Fitted {
    pub scaling: Scaling,
    pub warnings: Vec<String>,
}

/// An outlier is flagged when the column's whole range is this many times the range of its
/// central 98% (1st to 99th percentile): all but the outlier would then share a sliver of the
/// input range, a few quantization steps at most.
const OUTLIER_RATIO: f64 = 100.0;

impl Scaling {
    /// Fit `kind` on the samples `train` of `d` (for `global`, on every sample, as the largest
    /// value in the file has always been the scale).
    pub fn fit(kind: ScaleKind, d: &Dataset, train: &[usize]) -> Result<Fitted, DataError> {
        let n = d.features;
        let unit = |kind| Scaling {
            kind,
            min: vec![0.0; n],
            max: vec![1.0; n],
        };
        if d.full_scale.is_some() {
            return Ok(Fitted {
                scaling: unit(kind),
                warnings: Vec::new(),
            });
        }
        let mut warnings = Vec::new();
        let scaling = match kind {
            ScaleKind::None => {
                check_unit(d, &(0..d.len()).collect::<Vec<_>>())?;
                unit(kind)
            }
            ScaleKind::Global => {
                if let Some(i) = d.x.iter().position(|&v| v < 0.0) {
                    return Err(err(
                        &d.name,
                        format!(
                            "sample {}, {}: value {} is negative; --scale global divides by the largest value and needs non-negative values: use --scale feature",
                            i / n,
                            d.columns[i % n],
                            show(d.x[i])
                        ),
                    ));
                }
                let top = d.x.iter().cloned().fold(0.0f64, f64::max).max(1e-300);
                let mut all: Vec<f64> = train
                    .iter()
                    .flat_map(|&i| d.sample(i).iter().cloned())
                    .collect();
                if let Some((v, ratio)) = outlier(&mut all) {
                    let i = d.x.iter().position(|&x| x == v).unwrap_or(0);
                    warnings.push(format!(
                        "data {}: {} holds {} in sample {}, {ratio:.0}x the spread of the central 98% of all training values; --scale global maps every other value to near 0. Use --scale feature, or remove or clip the outlier",
                        d.name,
                        d.columns[i % n],
                        show(v),
                        i / n
                    ));
                }
                Scaling {
                    kind,
                    min: vec![0.0; n],
                    max: vec![top; n],
                }
            }
            ScaleKind::Feature => {
                let mut min = vec![f64::INFINITY; n];
                let mut max = vec![f64::NEG_INFINITY; n];
                for &i in train {
                    for (k, &v) in d.sample(i).iter().enumerate() {
                        min[k] = min[k].min(v);
                        max[k] = max[k].max(v);
                    }
                }
                for k in 0..n {
                    let mut col: Vec<f64> = train.iter().map(|&i| d.sample(i)[k]).collect();
                    if let Some((v, ratio)) = outlier(&mut col) {
                        let i = train.iter().find(|&&i| d.sample(i)[k] == v).unwrap();
                        warnings.push(format!(
                            "data {}: {} holds {} in sample {i}, {ratio:.0}x the spread of the column's central 98% of training values; feature scaling maps the column's other values to near 0. Remove or clip the outlier (or transform the column, e.g. its logarithm)",
                            d.name,
                            d.columns[k],
                            show(v)
                        ));
                    }
                }
                Scaling { kind, min, max }
            }
        };
        Ok(Fitted { scaling, warnings })
    }

    /// `d` with every value mapped into `[0, 1]`; `none` refuses values outside instead.
    pub fn apply(&self, d: &Dataset) -> Result<Dataset, DataError> {
        if self.min.len() != d.features {
            return Err(err(
                &d.name,
                format!(
                    "has {} features, the scaling was fitted on {}; use data with the same columns as the training data",
                    d.features,
                    self.min.len()
                ),
            ));
        }
        if self.kind == ScaleKind::None {
            check_unit(d, &(0..d.len()).collect::<Vec<_>>())?;
        }
        let n = d.features;
        let mut out = d.clone();
        for (i, v) in out.x.iter_mut().enumerate() {
            let (lo, hi) = (self.min[i % n], self.max[i % n]);
            // A feature constant in training carries nothing the network could have learned.
            *v = if hi > lo {
                ((*v - lo) / (hi - lo)).clamp(0.0, 1.0)
            } else {
                0.0
            };
        }
        Ok(out)
    }
}

fn check_unit(d: &Dataset, rows: &[usize]) -> Result<(), DataError> {
    for &i in rows {
        if let Some((k, &v)) = d
            .sample(i)
            .iter()
            .enumerate()
            .find(|(_, v)| !(0.0..=1.0).contains(*v))
        {
            return Err(err(
                &d.name,
                format!(
                    "sample {i}, {}: value {} is outside [0, 1], which --scale none requires; use --scale feature (the default) to scale each feature to [0, 1]",
                    d.columns[k],
                    show(v)
                ),
            ));
        }
    }
    Ok(())
}

/// The value that alone stretches `values`' range, and by how much, if there is one.
fn outlier(values: &mut [f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let (lo, hi) = (values[0], values[n - 1]);
    let (p1, p99) = (values[(n - 1) / 100], values[(n - 1) * 99 / 100]);
    let bulk = p99 - p1;
    // A column that is nearly constant (say 99% zeros) has no bulk spread to compare with.
    if bulk <= 0.0 || hi - lo <= OUTLIER_RATIO * bulk {
        return None;
    }
    let v = if hi - p99 >= p1 - lo { hi } else { lo };
    Some((v, (hi - lo) / bulk))
}

/// Large and tiny magnitudes in exponent form, so `1e300` is not printed with 300 digits.
fn show(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(rows: &[[f64; 3]]) -> Dataset {
        Dataset {
            name: "t.csv".into(),
            features: 2,
            classes: 2,
            x: rows.iter().flat_map(|r| [r[0], r[1]]).collect(),
            y: rows.iter().map(|r| r[2] as usize).collect(),
            full_scale: None,
            columns: vec!["column 0".into(), "column 1 (`b`)".into()],
        }
    }

    #[test]
    fn feature_scaling_is_fitted_on_the_training_rows_and_clipped() {
        let d = csv(&[
            [1.0, -10.0, 0.0],
            [3.0, 10.0, 1.0],
            [5.0, 0.0, 0.0],
            [-1.0, 30.0, 1.0],
        ]);
        let f = Scaling::fit(ScaleKind::Feature, &d, &[0, 1, 2]).unwrap();
        assert!(f.warnings.is_empty());
        assert_eq!(f.scaling.min, vec![1.0, -10.0]);
        assert_eq!(f.scaling.max, vec![5.0, 10.0]);
        let s = f.scaling.apply(&d).unwrap();
        // the last row lies outside the training range on both sides: clipped
        assert_eq!(s.x, vec![0.0, 0.0, 0.5, 1.0, 1.0, 0.5, 0.0, 1.0]);
        let e = f.scaling.apply(&Dataset {
            features: 1,
            ..d.clone()
        });
        assert!(e.unwrap_err().to_string().contains("fitted on 2"));
    }

    #[test]
    fn global_divides_by_the_largest_value_and_none_checks_the_range() {
        let d = csv(&[[1.0, 8.0, 0.0], [2.0, 4.0, 1.0]]);
        let g = Scaling::fit(ScaleKind::Global, &d, &[0]).unwrap().scaling;
        assert_eq!(g.apply(&d).unwrap().x, vec![0.125, 1.0, 0.25, 0.5]);
        let e = Scaling::fit(ScaleKind::None, &d, &[0, 1])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("t.csv") && e.contains("column 1 (`b`)") && e.contains("value 8 "),
            "{e}"
        );
        let neg = csv(&[[1.0, -8.0, 0.0], [2.0, 4.0, 1.0]]);
        let e = Scaling::fit(ScaleKind::Global, &neg, &[0])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("-8") && e.contains("--scale feature"), "{e}");
        let unit = csv(&[[0.0, 0.5, 0.0], [1.0, 0.25, 1.0]]);
        let n = Scaling::fit(ScaleKind::None, &unit, &[0]).unwrap().scaling;
        assert_eq!(n.apply(&unit).unwrap().x, unit.x);
    }

    #[test]
    fn a_huge_outlier_is_warned_about_with_file_column_and_value() {
        let mut rows: Vec<[f64; 3]> = (0..200)
            .map(|i| [i as f64, (i % 7) as f64, (i % 2) as f64])
            .collect();
        let f = Scaling::fit(
            ScaleKind::Feature,
            &csv(&rows),
            &(0..200).collect::<Vec<_>>(),
        );
        assert!(f.unwrap().warnings.is_empty());
        rows[17][1] = 1e300;
        let d = csv(&rows);
        let all: Vec<usize> = (0..200).collect();
        let w = Scaling::fit(ScaleKind::Feature, &d, &all).unwrap().warnings;
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("t.csv")
                && w[0].contains("column 1 (`b`)")
                && w[0].contains("1e300")
                && w[0].contains("sample 17"),
            "{}",
            w[0]
        );
        let w = Scaling::fit(ScaleKind::Global, &d, &all).unwrap().warnings;
        assert!(w.len() == 1 && w[0].contains("1e300"), "{w:?}");
        // not fitted on that row: nothing to warn about
        let rest: Vec<usize> = (0..200).filter(|&i| i != 17).collect();
        assert!(Scaling::fit(ScaleKind::Feature, &d, &rest)
            .unwrap()
            .warnings
            .is_empty());
    }

    #[test]
    fn the_digits_keep_pixel_over_16_under_every_kind() {
        let d = Dataset::digits().unwrap();
        for kind in [ScaleKind::Feature, ScaleKind::Global, ScaleKind::None] {
            let f = Scaling::fit(kind, &d, &[0, 1, 2]).unwrap();
            assert!(f.warnings.is_empty());
            let s = f.scaling.apply(&d).unwrap();
            assert_eq!(s.x, d.x);
        }
        // row 0, pixel 2 is 5 of 16
        assert_eq!(d.sample(0)[2], 5.0 / 16.0);
    }
}
