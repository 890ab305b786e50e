//! What `train`, `eval` and `infer` report, as JSON and as text ([`crate::report`]).

use super::EpochReport;
use edgeflow_core::ScaleKind;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

/// `edgeflow train` (one board).
#[derive(Serialize)]
pub struct Trained {
    pub spec: String,
    pub backend: String,
    pub data: String,
    pub scale: ScaleKind,
    pub epochs: usize,
    pub first_epoch: usize,
    pub init: Option<PathBuf>,
    pub train_samples: usize,
    pub test_samples: usize,
    pub train_accuracy: f64,
    pub test_accuracy: f64,
    pub best_test_accuracy: f64,
    pub samples_per_second: f64,
    pub state_sha256: Option<String>,
    pub history: Vec<EpochReport>,
    pub model: Option<PathBuf>,
}

impl fmt::Display for Trained {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            f,
            "{} on {} ({}): train {:.2}%, test {:.2}% after {} epochs; {:.0} training samples/s",
            self.spec,
            self.data,
            self.backend,
            self.train_accuracy * 100.0,
            self.test_accuracy * 100.0,
            self.epochs,
            self.samples_per_second
        )?;
        if let Some(s) = &self.state_sha256 {
            writeln!(f, "state sha256 {s}")?;
        }
        if let Some(o) = &self.model {
            writeln!(f, "model written to {}", o.display())?;
        }
        Ok(())
    }
}

/// `edgeflow eval`.
#[derive(Serialize)]
pub struct Evaluated {
    pub spec: String,
    pub backend: String,
    pub data: String,
    pub scale: ScaleKind,
    /// Always null: a saved model is evaluated, not trained (the field keeps `train`'s shape).
    pub epochs: Option<usize>,
    pub train_accuracy: f64,
    pub test_accuracy: f64,
    pub samples_per_second: f64,
    pub state_sha256: String,
}

impl fmt::Display for Evaluated {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            f,
            "{} on {}: train {:.2}%, test {:.2}%; {:.0} inference samples/s",
            self.spec,
            self.data,
            self.train_accuracy * 100.0,
            self.test_accuracy * 100.0,
            self.samples_per_second
        )
    }
}

/// `edgeflow infer`: as text, the predictions as CSV when no file took them.
#[derive(Serialize)]
pub struct Inferred {
    pub spec: String,
    pub data: String,
    pub scale: ScaleKind,
    pub samples: usize,
    pub accuracy: f64,
    pub state_sha256: String,
    pub out: Option<PathBuf>,
    /// Inline when there is no `-o`, so the JSON alone is the whole answer.
    pub predictions: Option<Vec<usize>>,
    #[serde(skip)]
    pub labels: Vec<usize>,
}

impl Inferred {
    pub fn csv(predictions: &[usize], labels: &[usize]) -> String {
        let mut text = String::from("sample,predicted,label\n");
        for (i, (p, l)) in predictions.iter().zip(labels).enumerate() {
            text.push_str(&format!("{i},{p},{l}\n"));
        }
        text
    }
}

impl fmt::Display for Inferred {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.predictions {
            Some(p) => f.write_str(&Inferred::csv(p, &self.labels)),
            None => Ok(()),
        }
    }
}
