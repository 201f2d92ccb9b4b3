//! Guest kernels: one per VM (`kernel`), the program language of guest threads (`program`),
//! and the built-in workloads (`workloads`).

pub mod hotplug;
pub mod affinity;
pub mod channel;
pub mod forkexec;
pub mod kernel;
pub mod mm;
pub mod paravirt;
pub mod program;
pub mod requests;
pub mod resched;
pub mod rqlock;
pub mod rwsem;
pub mod ticket;
pub mod wakeaffine;
pub mod workloads;
