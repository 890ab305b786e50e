//! The reference model as a board: what every other board is compared against.

use super::Board;
use anyhow::Result;
use edgeflow_core::{Encoded, Spec, State};
use edgeflow_reference::Reference;

pub struct ReferenceBoard {
    pub model: Reference,
    /// The threads asked for (`None`: every core the network is big enough for).
    threads: Option<usize>,
}

impl ReferenceBoard {
    pub fn new(spec: &Spec, staleness: Vec<usize>) -> Result<Self> {
        Ok(ReferenceBoard {
            model: Reference::with_state(spec, State::initial(spec), staleness)?,
            threads: None,
        })
    }

    /// Train on this many threads (`None`: the model's own choice).
    pub fn with_threads(mut self, threads: Option<usize>) -> Self {
        self.threads = threads;
        if let Some(t) = threads {
            self.model.set_threads(t);
        }
        self
    }
}

impl Board for ReferenceBoard {
    fn name(&self) -> String {
        "reference".into()
    }
    fn on_calling_thread(&self) -> bool {
        self.model.thread_plan().threads == 1
    }
    fn load_state(&mut self, state: &State) -> Result<()> {
        // New weights start a training run: the lane streams start again with them.
        let m = &self.model;
        self.model = Reference::with_state(&m.spec, state.clone(), m.staleness().to_vec())?;
        if let Some(t) = self.threads {
            self.model.set_threads(t);
        }
        Ok(())
    }
    fn train(&mut self, data: &Encoded) -> Result<()> {
        self.model.train(data);
        Ok(())
    }
    fn infer(&mut self, data: &Encoded) -> Result<Vec<usize>> {
        Ok(self.model.infer(data))
    }
    fn read_state(&mut self) -> Result<State> {
        Ok(self.model.state.clone())
    }
    fn edge_ops_per_sample(&self) -> u64 {
        self.model.spec.edge_ops_per_sample() as u64
    }
}
