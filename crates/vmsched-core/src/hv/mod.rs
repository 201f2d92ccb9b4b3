//! The hypervisor: vCPU states, exits, virtual-interrupt delivery and the scheduler trait.

pub mod sched;
