//! Semantic checks on a parsed scenario. Each error names the field path and the reason.

use super::{Scenario, ScenarioError};

pub fn validate(sc: &Scenario) -> Result<(), ScenarioError> {
    if sc.host.cores_per_socket == 0 {
        return Err(ScenarioError::new("host.cores_per_socket", "must be ≥ 1"));
    }
    if sc.host.sockets == 0 {
        return Err(ScenarioError::new("host.sockets", "must be ≥ 1"));
    }
    if sc.vms.is_empty() {
        return Err(ScenarioError::new("vms", "at least one VM is required"));
    }
    for (i, vm) in sc.vms.iter().enumerate() {
        if vm.vcpus == 0 {
            return Err(ScenarioError::new(format!("vms[{i}].vcpus"), "must be ≥ 1"));
        }
    }
    Ok(())
}
