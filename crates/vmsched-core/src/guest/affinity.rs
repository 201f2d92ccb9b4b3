//! The guest half of DP-Scheduling (seed 003 §3): an affinity coefficient (AC) per guest task,
//! brought up to date at each guest context switch and published to the hypervisor through a
//! per-vCPU slot.
//!
//! Models (seed 003 §3.1–3.3):
//! - AC lies in 0–100 and starts at 50 for a new task (forked children included);
//! - memory reads and writes raise it and I/O accesses lower it; the counts are folded in when
//!   the task is switched in again ("if the task was run before, it is the best time to make
//!   statistics", §3.1);
//! - a task with hard affinity (bound to one vCPU by the guest user) has AC 100 (§3.2);
//! - at every switch-in the task's AC is written into the vCPU's Process Information (PI,
//!   §3.3), which the hypervisor scheduler reads as `VcpuFacts::ac_pct`.
//!
//! The channel: the seed's hypervisor traps the CR3 write of a paravirtual guest (a hypercall
//! in PV Xen), finds the task descriptor from the kernel stack pointer and reads its affinity
//! fields through the P2M translation (§3.2). Here the guest writes the value into the vCPU's
//! slot directly (`Vcpu::ac_pct`, mirrored in `VcpuFacts`); no extra exit is charged, because
//! the CR3 hypercall exists anyway and the model leaves guest context-switch cost out.
//!
//! Choices where the seed gives no numbers (estimates, documented in docs/policies.md `## dp`):
//! - the capture runs at every guest switch to a task, not only at address-space changes: the
//!   threads of one process (the seed's own OpenMP STREAM runs) share a CR3, so a CR3-only
//!   trigger would never see them;
//! - "memory work" is the memory-bound part of compute (`duration × mem_fraction`), counted
//!   when the op starts, plus the time spent spin-waiting on a synchronisation word (spinlock,
//!   adaptive mutex, barrier, IPI acknowledgement), counted as it passes: a spin-wait loop is
//!   nothing but reads of shared memory (`while (*word == v) cpu_relax();`, libgomp
//!   `do_spin`, Linux `queued_spin_lock_slowpath`, `csd_lock_wait`), and the seed counts
//!   "times of memory read/write" (§3.2), plus the time spent fetching cache lines last
//!   written on another pCPU (a message's socket buffer and data, a queue's shared state:
//!   `guest::channel`'s debt, counted whole when the compute that pays it starts; session
//!   12: before, it counted only at that compute's memory-bound fraction, so a rank's
//!   message data, read and written across cores, barely raised its AC);
//!   +`AC_MEM_GAIN_PCT_PER_MS` points per ms of any of them;
//! - each `io` op costs `AC_IO_DROP_PCT` points;
//! - hard affinity means an affinity mask that allows exactly one vCPU (`bind = true` or a
//!   one-element `affinity`).
//!
//! Leaves out: the cost of the VA→MA translation and the read of the task descriptor.

use crate::engine::Ns;
use crate::sim::state::{ThreadId, VcpuId};
use crate::sim::World;

/// Initial AC of a task (seed 003 §3.2).
pub const AC_INITIAL_PCT: f64 = 50.0;
/// AC of a task with hard affinity (seed 003 §3.2).
pub const AC_HARD_AFFINITY_PCT: f64 = 100.0;
/// AC points gained per ms of memory-bound work. Estimate: a task doing nothing but memory
/// work crosses the pinning threshold (75) after 2.5 ms, within one credit tick (10 ms).
pub const AC_MEM_GAIN_PCT_PER_MS: f64 = 10.0;
/// AC points lost per I/O access. Estimate: one I/O per 1 ms of memory work keeps a task level.
pub const AC_IO_DROP_PCT: f64 = 10.0;

/// Per-task affinity statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskAffinity {
    /// The coefficient, 0–100 (kept fractional so that small amounts of memory work add up).
    pub ac_pct: f64,
    /// Memory-bound work started since the last fold, ns.
    pub mem_ns: f64,
    /// I/O operations started since the last fold.
    pub io_ops: u32,
}

impl Default for TaskAffinity {
    fn default() -> Self {
        TaskAffinity { ac_pct: AC_INITIAL_PCT, mem_ns: 0.0, io_ops: 0 }
    }
}

impl TaskAffinity {
    /// A compute op of `ns` with memory-bound fraction `mem_fraction` starts.
    pub fn note_compute(&mut self, ns: Ns, mem_fraction: f64) {
        self.mem_ns += ns as f64 * mem_fraction;
    }
    /// The task spent `ns` on memory reads and writes alone, whatever the memory-bound
    /// fraction of its work: spin-waiting on a synchronisation word, or fetching cache lines
    /// last written on another pCPU (a message's socket buffer, a queue's shared state, an
    /// IPI's flush state: the thread's `comm_debt_ns`, paid in its next compute).
    pub fn note_memory_access(&mut self, ns: Ns) {
        self.mem_ns += ns as f64;
    }
    /// An I/O op starts.
    pub fn note_io(&mut self) {
        self.io_ops += 1;
    }
    /// Fold the statistics gathered since the last switch-in into the coefficient and return
    /// the value to publish (whole points, rounded down).
    pub fn fold(&mut self, hard_affinity: bool) -> u8 {
        let ac = self.ac_pct + self.mem_ns / 1e6 * AC_MEM_GAIN_PCT_PER_MS - self.io_ops as f64 * AC_IO_DROP_PCT;
        self.ac_pct = if hard_affinity { AC_HARD_AFFINITY_PCT } else { ac.clamp(0.0, 100.0) };
        self.mem_ns = 0.0;
        self.io_ops = 0;
        self.ac_pct.floor() as u8
    }
}

impl World {
    /// Guest context switch: vCPU `v` starts running task `t`. Fold `t`'s statistics and
    /// publish its AC in the vCPU's PI slot (seed 003 §3.3).
    pub(crate) fn ac_switch_in(&mut self, v: VcpuId, t: ThreadId) {
        self.ac_publish(v, t);
    }

    /// The hypervisor deschedules `v`: its API reads the PI of the task still current there
    /// (seed 003 §3.3, "every time the API is called, PI is refreshed"), so a task that never
    /// leaves its vCPU is assessed too.
    pub(crate) fn ac_refresh(&mut self, v: VcpuId) {
        if let Some(t) = self.vcpus[v].cur {
            self.ac_publish(v, t);
        }
    }

    fn ac_publish(&mut self, v: VcpuId, t: ThreadId) {
        let th = &mut self.threads[t];
        let hard = th.affinity.as_ref().map_or(false, |m| m.iter().filter(|&&b| b).count() == 1);
        let ac = th.ac.fold(hard);
        self.vcpus[v].ac_pct = ac;
        self.facts[v].ac_pct = ac;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_task_starts_at_50() {
        let mut a = TaskAffinity::default();
        assert_eq!(a.fold(false), 50);
    }

    #[test]
    fn memory_work_raises_the_coefficient_past_the_threshold() {
        let mut a = TaskAffinity::default();
        a.note_compute(2_000_000, 1.0);
        assert_eq!(a.fold(false), 70);
        a.note_compute(1_000_000, 0.5);
        a.note_compute(1_000_000, 0.0);
        assert_eq!(a.fold(false), 75, "half-memory-bound work counts half");
        a.note_compute(100_000_000, 1.0);
        assert_eq!(a.fold(false), 100, "clipped at 100");
    }

    #[test]
    fn io_lowers_the_coefficient_down_to_zero() {
        let mut a = TaskAffinity::default();
        a.note_io();
        a.note_io();
        assert_eq!(a.fold(false), 30);
        for _ in 0..10 {
            a.note_io();
        }
        assert_eq!(a.fold(false), 0, "clipped at 0");
    }

    #[test]
    fn hard_affinity_sets_100_whatever_the_statistics() {
        let mut a = TaskAffinity::default();
        for _ in 0..10 {
            a.note_io();
        }
        assert_eq!(a.fold(true), 100);
    }

    #[test]
    fn spin_waiting_counts_as_memory_reads() {
        let mut a = TaskAffinity::default();
        a.note_memory_access(1_500_000);
        a.note_compute(1_000_000, 0.0);
        assert_eq!(a.fold(false), 65, "1.5 ms of spinning: +15; compute without memory work: +0");
    }

    #[test]
    fn statistics_are_folded_once() {
        let mut a = TaskAffinity::default();
        a.note_compute(1_000_000, 1.0);
        assert_eq!(a.fold(false), 60);
        assert_eq!(a.fold(false), 60, "a second switch-in without new work keeps the value");
    }
}
