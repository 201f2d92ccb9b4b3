//! KVM paravirtual guest features (reference §4.4-4.7), switched on per VM in
//! `vms[].guest.paravirt`.
//!
//! Models:
//! - pv spinlocks (`kernel/locking/qspinlock_paravirt.h`, `arch/x86/kernel/kvm.c`): a queued
//!   waiter spins `SPIN_THRESHOLD` PAUSE loops, then halts its vCPU (`kvm_wait`); the unlocker
//!   that hands the lock to a halted waiter kicks it (`KVM_HC_KICK_CPU`, a hypercall exit) and
//!   the host directed-yields from the kicker to the kickee (`kvm_sched_yield`). A waiter woken
//!   before the lock is handed to it spins again.
//! - pv TLB flush (`kvm_flush_tlb_multi`): shootdown targets whose vCPU is preempted are not
//!   sent an IPI; the flush is done when that vCPU next runs.
//! - pv sched yield (`kvm_smp_send_call_func_ipi`): after sending call IPIs, the sender yields
//!   to the first target that is preempted and was running a thread.
//!
//! Leaves out: `pv_wait_early` (halting early when the predecessor is preempted), lock stealing
//! in hybrid mode, the lock hash table, halt polling on the host.

use crate::engine::Ns;
use crate::host::ExitReason;
use crate::sim::state::*;
use crate::sim::World;

impl World {
    /// Spin budget of a new spinlock waiter in VM `vm`.
    pub(crate) fn pv_spin_budget(&self, vm: VmId) -> Ns {
        let v = &self.vms[vm];
        if v.pv.spinlock {
            v.pv_spin_ns
        } else {
            Ns::MAX
        }
    }

    /// The waiter's spin budget ran out: halt the vCPU with the waiter still current.
    pub(crate) fn pv_wait(&mut self, t: ThreadId, lock: usize, since: Ns) {
        let v = self.threads[t].vcpu;
        self.advance(v);
        self.threads[t].act = Activity::PvWait { lock, since };
        self.start_halt(v);
    }

    /// A halted pv waiter was handed the lock: kick its vCPU, and directed-yield to it.
    pub(crate) fn pv_kick(&mut self, kicker: Option<VcpuId>, waiter: ThreadId) {
        let u = self.threads[waiter].vcpu;
        if let Some(k) = kicker {
            self.charge_exit(k, ExitReason::Hypercall);
        }
        self.hv_wake(u);
        if let Some(k) = kicker {
            self.request_directed_yield(k, u);
        }
    }

    /// A vCPU whose current thread sleeps in `kvm_wait` resumes: spin again unless the lock
    /// was handed over meanwhile (then the thread is already in `LockGranted`).
    pub(crate) fn pv_resume(&mut self, v: VcpuId) {
        let Some(t) = self.vcpus[v].cur else { return };
        if let Activity::PvWait { lock, since } = self.threads[t].act {
            let budget = self.pv_spin_budget(self.threads[t].vm);
            self.threads[t].act = Activity::SpinLock { lock, since, pv_left: budget };
            self.vcpus[v].ple_spun_ns = 0;
        }
    }

    /// Ask the scheduler for a directed yield from running `me` to `target`; the yield itself
    /// happens right after the current event (a reschedule of `me`'s pCPU).
    pub(crate) fn request_directed_yield(&mut self, me: VcpuId, target: VcpuId) {
        let Some(p) = self.vcpus[me].running_on() else { return };
        let facts = self.facts_of(target);
        self.facts[target] = facts;
        if self.with_sched(|s, view| s.directed_yield(view, me, target)) {
            self.pcpus[p].yield_pending = true;
            if !self.pcpus[p].resched_pending {
                self.pcpus[p].resched_pending = true;
                let now = self.now();
                self.q.push(now, crate::sim::Ev::Resched(p));
            }
        }
    }

    /// pv TLB flush: drop preempted targets from a shootdown and flush them on their next run.
    pub(crate) fn pv_filter_flush_targets(&mut self, vm: VmId, targets: Vec<VcpuId>) -> Vec<VcpuId> {
        if !self.vms[vm].pv.tlb_flush {
            return targets;
        }
        let mut send = Vec::new();
        for u in targets {
            if self.vcpus[u].run == RunState::Runnable {
                self.vcpus[u].flush_pending = true;
            } else {
                send.push(u);
            }
        }
        send
    }

    /// pv sched yield: yield to the first preempted target that was running a thread.
    pub(crate) fn pv_sched_yield(&mut self, sender: VcpuId, targets: &[VcpuId]) {
        if !self.vms[self.vcpus[sender].vm].pv.sched_yield {
            return;
        }
        if let Some(&u) = targets.iter().find(|&&u| self.vcpus[u].run == RunState::Runnable && self.vcpus[u].cur.is_some()) {
            self.request_directed_yield(sender, u);
        }
    }
}
