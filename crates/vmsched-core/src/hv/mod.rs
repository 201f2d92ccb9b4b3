//! The hypervisor: the machinery around vCPUs (`machine`) and the schedulers (`sched`).

pub mod machine;
pub mod perfcounters;
pub mod sched;
pub mod tasklet;
