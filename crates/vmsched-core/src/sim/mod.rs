//! The simulation: the world state of host, hypervisor and guests, and the event loop.
//! (Placeholder API while the model is being written; replaced by the full model.)

use serde::Serialize;

use crate::engine::Ns;
use crate::scenario::{Scenario, ScenarioError};

/// Front-end overrides of a scenario.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub scheduler: Option<String>,
    pub seed: Option<u64>,
    /// Check the invariants after every event (on in all tests).
    pub check: bool,
}

/// A failure during a run: an invariant violation found by the checker.
#[derive(Debug, Clone)]
pub struct SimError {
    pub at_ns: Ns,
    pub message: String,
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invariant violated at t={} ns: {}", self.at_ns, self.message)
    }
}
impl std::error::Error for SimError {}

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub schema_version: u32,
}

pub struct Simulation {
    now: Ns,
    horizon: Ns,
}

impl Simulation {
    pub fn new(sc: &Scenario, _ov: &Overrides) -> Result<Simulation, ScenarioError> {
        let horizon = (sc.duration_ms.unwrap_or(sc.max_duration_ms) * 1e6) as Ns;
        Ok(Simulation { now: 0, horizon })
    }
    pub fn run_until(&mut self, t: Ns) -> Result<(), SimError> {
        self.now = t.min(self.horizon);
        Ok(())
    }
    pub fn run(&mut self) -> Result<Results, SimError> {
        self.run_until(self.horizon)?;
        Ok(self.results())
    }
    pub fn now_ns(&self) -> Ns {
        self.now
    }
    pub fn horizon_ns(&self) -> Ns {
        self.horizon
    }
    pub fn is_done(&self) -> bool {
        self.now >= self.horizon
    }
    pub fn events_processed(&self) -> u64 {
        0
    }
    pub fn results(&self) -> Results {
        Results { schema_version: 1 }
    }
}

pub fn results_json(r: &Results) -> String {
    serde_json::to_string_pretty(r).expect("results serialise")
}
