//! The hypervisor: the machinery around vCPUs (`machine`) and the schedulers (`sched`).

pub mod background;
pub mod cstate;
pub mod footprint;
pub mod halt_poll;
pub mod jitter;
pub mod lazy_switch;
pub mod llc;
pub mod machine;
pub mod perfcounters;
pub mod sched;
pub mod tasklet;
pub mod tlb;
pub mod vipi;
pub mod xsocket;
