//! vmsched-core: a deterministic discrete-event simulator of SMP virtual machines on a shared
//! host. Three layers are simulated at once — the host (pCPUs, caches, NUMA), the hypervisor
//! (its vCPU scheduler and exit/interrupt paths) and each guest kernel (threads on vCPUs,
//! spinlocks, function-call IPIs, TLB shootdowns, blocking synchronisation, halt/wake) — so
//! double-scheduling effects emerge from two schedulers acting on each other.

pub mod catalog;
pub mod controllers;
pub mod engine;
pub mod guest;
pub mod host;
pub mod hv;
pub mod metrics;
pub mod scenario;
pub mod sim;
pub mod trace;
