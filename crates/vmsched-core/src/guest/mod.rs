//! Guest kernels: one per VM. See `kernel.rs` for the model and its sources.

pub mod program;
pub mod workloads;
