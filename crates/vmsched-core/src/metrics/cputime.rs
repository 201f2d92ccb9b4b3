//! The guest's own CPU-time accounting, as its `/proc/stat` would report it: tick sampling
//! with paravirtual steal time.
//!
//! Models (Linux x86 guest, kernel/sched/cputime.c, 2.6.3x to 4.x with the default
//! `CONFIG_TICK_CPU_ACCOUNTING`; kernel/time/tick-sched.c):
//! - Every jiffy (`guest.tick_us`, HZ = 250 by default) a running vCPU takes its tick, and
//!   `account_process_tick` charges the whole jiffy to the mode the tick interrupted: user,
//!   or system (kernel code, interrupt handlers, spinlock and IPI-acknowledgement waits).
//!   All CPUs tick on one grid (no `skew_tick`).
//! - A tick that came due while the host had the vCPU preempted fires when the vCPU runs again
//!   (the timer interrupt is injected at VM entry), once however many jiffies passed
//!   (`tick_sched_timer` forwards the timer), so it samples the mode the vCPU was preempted in.
//!   Time the vCPU spends in a VM exit is invisible to it: a tick due then samples the mode it
//!   returns to (an interrupt handler first, if one is queued).
//! - Steal time (KVM's `MSR_KVM_STEAL_TIME`: the host's run delay of the vCPU thread, i.e. its
//!   runnable-but-preempted time): `steal_account_process_tick` runs first at every tick, and
//!   when a whole jiffy or more of steal has gathered it charges those jiffies to steal and
//!   the tick samples nothing.
//! - A halted vCPU does not tick (NOHZ idle; idle time is not counted here).
//!
//! The simulator's own buckets (`TimeBuckets`) are exact; this is the guest's sampled view of
//! the same run, for comparing with measurements taken inside guests (seed 000's "kernel time
//! ... a cumulative value of the time spent in the kernel mode by each vCPU", §4.2).
//!
//! Leaves out: `CONFIG_VIRT_CPU_ACCOUNTING_GEN` and `CONFIG_IRQ_TIME_ACCOUNTING` (precise
//! accounting), the idle task's interrupt ticks (counted as system here), guest nice time.

use serde::Serialize;

use crate::engine::Ns;

/// Jiffies a vCPU's ticks charged, by mode.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct TickCounts {
    pub user: u64,
    pub system: u64,
    pub steal: u64,
}

impl TickCounts {
    pub fn add(&mut self, o: &TickCounts) {
        self.user += o.user;
        self.system += o.system;
        self.steal += o.steal;
    }
}

/// One vCPU's tick-accounting state.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuestCputime {
    /// Steal not yet charged in whole jiffies.
    steal_acc_ns: Ns,
    /// A tick came due while the vCPU was preempted: it fires when it next runs.
    pending: bool,
    pub ticks: TickCounts,
}

/// Grid ticks (multiples of `jiffy_ns`) in the interval `(from, to]`.
pub fn ticks_in(from: Ns, to: Ns, jiffy_ns: Ns) -> u64 {
    if to <= from {
        return 0;
    }
    to / jiffy_ns - from / jiffy_ns
}

impl GuestCputime {
    /// The vCPU was runnable but preempted over `(from, to]`: steal, and a tick that came due
    /// meanwhile waits for the vCPU to run.
    pub fn preempted(&mut self, from: Ns, to: Ns, jiffy_ns: Ns) {
        self.steal_acc_ns += to.saturating_sub(from);
        if ticks_in(from, to, jiffy_ns) > 0 {
            self.pending = true;
        }
    }

    /// The vCPU ran over a stretch with `n` grid ticks, in kernel mode or not; a tick left
    /// pending from a preemption fires first, in the same mode.
    pub fn ran(&mut self, n: u64, kernel: bool, jiffy_ns: Ns) {
        let n = n + std::mem::take(&mut self.pending) as u64;
        for _ in 0..n {
            self.tick(kernel, jiffy_ns);
        }
    }

    /// The vCPU halted: a tick still pending from a preemption is dropped (NOHZ idle).
    pub fn halted(&mut self) {
        self.pending = false;
    }

    fn tick(&mut self, kernel: bool, jiffy_ns: Ns) {
        let steal = self.steal_acc_ns / jiffy_ns;
        if steal > 0 {
            self.ticks.steal += steal;
            self.steal_acc_ns -= steal * jiffy_ns;
        } else if kernel {
            self.ticks.system += 1;
        } else {
            self.ticks.user += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const J: Ns = 4_000_000;

    #[test]
    fn grid_ticks_are_counted_once_per_interval() {
        assert_eq!(ticks_in(0, J - 1, J), 0);
        assert_eq!(ticks_in(0, J, J), 1);
        assert_eq!(ticks_in(J, 2 * J, J), 1, "(from, to]: the tick at `from` was counted before");
        assert_eq!(ticks_in(J / 2, 5 * J / 2, J), 2);
    }

    #[test]
    fn a_running_vcpu_samples_its_mode_at_each_tick() {
        let mut c = GuestCputime::default();
        c.ran(3, false, J);
        c.ran(1, true, J);
        assert_eq!(c.ticks, TickCounts { user: 3, system: 1, steal: 0 });
    }

    #[test]
    fn a_tick_due_while_preempted_samples_the_mode_the_vcpu_resumes_in() {
        let mut c = GuestCputime::default();
        // Preempted for half a jiffy across a tick: not a whole jiffy of steal.
        c.preempted(J - J / 4, J + J / 4, J);
        c.ran(0, true, J);
        assert_eq!(c.ticks, TickCounts { user: 0, system: 1, steal: 0 });
        // Only one tick however long: a 2.5-jiffy preemption charges 2 jiffies of steal at
        // the resume tick (with the half jiffy gathered before, 3) and samples nothing.
        c.preempted(2 * J, 4 * J + J / 2, J);
        c.ran(0, false, J);
        assert_eq!(c.ticks, TickCounts { user: 0, system: 1, steal: 3 });
    }

    #[test]
    fn a_halted_vcpu_drops_its_pending_tick() {
        let mut c = GuestCputime::default();
        c.preempted(J - 10, J + 10, J);
        c.halted();
        c.ran(0, true, J);
        assert_eq!(c.ticks, TickCounts::default());
    }
}
