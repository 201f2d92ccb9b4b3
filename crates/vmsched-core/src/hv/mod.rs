//! The hypervisor: the machinery around vCPUs (`machine`) and the schedulers (`sched`).

pub mod machine;
pub mod sched;
pub mod tasklet;
