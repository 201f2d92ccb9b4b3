//! Cache traffic of the x86 ticket spinlock at a release: why its hand-off grows with the
//! number of waiters.
//!
//! Models: Linux's x86 ticket lock (`arch/x86/include/asm/spinlock.h`, Linux 2.6.25 to 4.1:
//! `arch_spin_lock` takes a ticket with `xadd` on the tail, then spins with `cpu_relax()` reading
//! `lock->tickets.head` until it equals its ticket; `arch_spin_unlock` increments the head). Every
//! waiter polls the same cache line, so the release's store invalidates all their copies and each
//! re-reads the line; the line's home answers those requests one at a time, and the next owner's
//! request is on average half-way through them. Boyd-Wickizer, Kaashoek, Morris and Zeldovich,
//! "Non-scalable locks are dangerous" (Linux Symposium 2012, §4, the Markov model of the ticket
//! lock) write the service time with k waiters as `s + c·k/2`, where c is the time the home takes
//! to answer one request, and show that this term makes throughput collapse once enough cores
//! wait (also Mellor-Crummey & Scott, ACM TOCS 1991, on centralised spinning). So a ticket
//! release hands over in `lock_handoff_ns` (the transfer to the next owner, paid by every kind)
//! plus half the sum of the waiters' requests, each `ticket_transfer_cycles` when the waiter's
//! pCPU shares the releaser's socket (an L3 hit on a line modified in another core, ~75 cycles)
//! and `ticket_transfer_remote_cycles` across sockets (a remote L3 access, ~100-300 cycles;
//! Levinthal, "Performance Analysis Guide for Intel Core i7 Processor and Intel Xeon 5500
//! processors", Intel 2009, p. 22), turned into time with the host's `cpu_ghz`.
//!
//! Only waiters that are polling count: a waiter spinning on a vCPU that runs on a pCPU at the
//! release. A waiter whose vCPU the hypervisor has descheduled (lock-waiter preemption) or that
//! halted in a pv wait executes nothing, so it fetches nothing; it reads the line when it runs
//! again, after the hand-off this cost belongs to.
//!
//! Leaves out: the ticket-taking `xadd` of arriving waiters (it contends for the same line and
//! slows the holder's release store), the releaser's own write miss, waiters re-reading the line
//! more than once per release. Queued (MCS) spinlocks keep the constant hand-off: each waiter
//! spins on its own node and the release writes only the next one's
//! (`kernel/locking/qspinlock.c queued_spin_lock_slowpath`, `mcs_spinlock.h`). Test-and-set locks
//! keep the constant hand-off too, although their waiters also share one line (a release
//! invalidates every spinner, which then all try the atomic: Anderson, IEEE TPDS 1990): not
//! modelled, because no guest in the seeds uses them.

use crate::engine::Ns;
use crate::sim::state::*;
use crate::sim::World;

impl World {
    /// Extra hand-off time of a ticket-lock release by `releaser` to `next`: half the waiters'
    /// line requests (Boyd-Wickizer et al. 2012, `c·k/2`), counting `next` and every other
    /// waiter of `lock` whose vCPU is running it and spinning.
    pub(crate) fn ticket_poll_ns(&self, releaser: ThreadId, next: ThreadId, lock: usize) -> Ns {
        if self.costs.line_transfer_cycles(true) == 0 && self.costs.line_transfer_cycles(false) == 0 {
            return 0;
        }
        let vm = self.threads[releaser].vm;
        let home = self.vcpus[self.threads[releaser].vcpu].running_on().map(|p| self.pcpus[p].socket);
        let mut cycles: u64 = 0;
        for &w in std::iter::once(&next).chain(self.vms[vm].locks[lock].waiters.iter()) {
            if !matches!(self.threads[w].act, Activity::SpinLock { .. }) {
                continue;
            }
            let Some(u) = self.running_cur(w) else { continue };
            let Some(p) = self.vcpus[u].running_on() else { continue };
            cycles += self.costs.line_transfer_cycles(home.map_or(true, |s| s == self.pcpus[p].socket));
        }
        if cycles / 2 == 0 {
            return 0;
        }
        self.topo.cycles_to_ns(cycles / 2)
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::from_toml_str;
    use crate::sim::{Overrides, Results, Simulation};

    /// One VM of `vcpus` vCPUs on a host of `pcpus` pCPUs (one socket unless `sockets` = 2),
    /// `threads` threads each taking `spinlock` 400 times: 1 µs of kernel work under one lock
    /// after `compute_us` of compute. With two threads or more and compute shorter than the
    /// section the lock saturates, so the run's length is the sum of the holds and hand-offs.
    fn lock_pool(threads: u32, vcpus: u32, spinlock: &str, sockets: u32, transfer: Option<(u64, u64)>, compute_us: f64) -> Results {
        let costs = match transfer {
            Some((l, r)) => format!("costs = {{ ticket_transfer_cycles = {l}, ticket_transfer_remote_cycles = {r} }}\n"),
            None => String::new(),
        };
        let text = format!(
            r#"
name = "ticket-pool"
seed = 1
[host]
sockets = {sockets}
cores_per_socket = {cps}
cpu_ghz = 1.86
{costs}
[hypervisor]
scheduler = "cfs"
[[vms]]
name = "vm0"
vcpus = {vcpus}
guest = {{ spinlock = "{spinlock}" }}
[[vms.workloads]]
kind = "custom"
[[vms.workloads.groups]]
threads = {threads}
program = [{{ op = "loop", count = 400, body = [
  {{ op = "compute", us = {compute_us} }},
  {{ op = "lock", lock = "l", cs_us = 1.0 }},
] }}]
"#,
            cps = 12 / sockets
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let ov = Overrides { scheduler: None, seed: None, check: true };
        Simulation::new(&sc, &ov).expect("builds").run().expect("no invariant violated")
    }

    /// Compute between sections short enough that two threads already saturate the lock.
    const SHORT: f64 = 0.05;

    /// Simulated time per lock acquisition of the whole pool.
    fn ns_per_acquisition(r: &Results, threads: u32) -> f64 {
        r.vms[0].completion_ns.expect("finished") as f64 / (threads as f64 * 400.0)
    }

    #[test]
    fn a_ticket_handoff_with_eleven_running_waiters_takes_longer_than_with_one() {
        let two = ns_per_acquisition(&lock_pool(2, 12, "ticket", 1, None, SHORT), 2);
        let twelve = ns_per_acquisition(&lock_pool(12, 12, "ticket", 1, None, SHORT), 12);
        // Saturated: each acquisition costs cs + hand-off. With one waiter the hand-off is
        // lock_handoff_ns + 75/2 cycles; with eleven, 10 x 75 / 2 cycles (202 ns) more.
        assert!(twelve > two + 150.0, "12 threads {twelve:.0} ns vs 2 threads {two:.0} ns per acquisition");
    }

    #[test]
    fn queued_spinlock_handoffs_do_not_grow_with_the_waiters() {
        let two = ns_per_acquisition(&lock_pool(2, 12, "queued", 1, None, SHORT), 2);
        let twelve = ns_per_acquisition(&lock_pool(12, 12, "queued", 1, None, SHORT), 12);
        assert!((twelve - two).abs() < 50.0, "12 threads {twelve:.0} ns vs 2 threads {two:.0} ns per acquisition");
    }

    #[test]
    fn a_twelve_thread_lock_pool_on_twelve_vcpus_does_less_work_per_second_than_on_six() {
        // Same 12 threads, the same work: on 12 vCPUs up to 11 waiters poll the lock, on 6 at
        // most 5 (the other threads wait on their vCPUs' runqueues, not on the lock line).
        let on12 = lock_pool(12, 12, "ticket", 2, None, 2.0);
        let on6 = lock_pool(12, 6, "ticket", 2, None, 2.0);
        let (t12, t6) = (on12.vms[0].completion_ns.unwrap(), on6.vms[0].completion_ns.unwrap());
        assert!(t12 > t6, "12 vCPUs {t12} ns vs 6 vCPUs {t6} ns");
        // Control: without the hand-off cost the extra vCPUs cost next to nothing (measured
        // 0.2 %, against 27 % with it), so the slowdown is the polling waiters'.
        let free12 = lock_pool(12, 12, "ticket", 2, Some((0, 0)), 2.0).vms[0].completion_ns.unwrap();
        let free6 = lock_pool(12, 6, "ticket", 2, Some((0, 0)), 2.0).vms[0].completion_ns.unwrap();
        let (slow, free) = (t12 as f64 / t6 as f64 - 1.0, free12 as f64 / free6 as f64 - 1.0);
        assert!(free < 0.01 && slow > 10.0 * free.max(0.0),
                "slowdown with the cost {slow:.3}, without {free:.3}");
    }

    #[test]
    fn waiters_on_the_other_socket_make_the_handoff_slower() {
        let same = ns_per_acquisition(&lock_pool(12, 12, "ticket", 1, Some((75, 200)), SHORT), 12);
        let split = ns_per_acquisition(&lock_pool(12, 12, "ticket", 2, Some((75, 200)), SHORT), 12);
        assert!(split > same + 100.0, "two sockets {split:.0} ns vs one {same:.0} ns per acquisition");
    }

    #[test]
    fn without_transfer_cost_a_ticket_lock_hands_off_as_a_queued_one() {
        let ticket = lock_pool(12, 12, "ticket", 1, Some((0, 0)), SHORT);
        let queued = lock_pool(12, 12, "queued", 1, None, SHORT);
        assert_eq!(ticket.vms[0].completion_ns, queued.vms[0].completion_ns);
    }
}
