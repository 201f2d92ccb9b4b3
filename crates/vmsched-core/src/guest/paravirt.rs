//! KVM paravirtual guest features (reference §4.4-4.7; the spinlock stands for Xen's too),
//! switched on per VM in `vms[].guest.paravirt`.
//!
//! Models:
//! - pv qspinlock, the hybrid queued/unfair lock of `kernel/locking/qspinlock_paravirt.h`
//!   with `kvm_wait`/`kvm_kick_cpu` of `arch/x86/kernel/kvm.c`:
//!   - an arriving thread takes the lock if it is free and the pending bit is clear (fast
//!     path, or the steal of `pv_hybrid_queued_unfair_trylock`); while the MCS queue is not
//!     empty and the pending bit is clear it spins *unfairly* on the lock word (no budget, no
//!     halting) and steals the lock when it is freed; it joins the MCS queue once the pending
//!     bit is set or the queue is empty;
//!   - the queue head, while it runs its spin loop (`pv_wait_head_or_lock`), sets the pending
//!     bit, which forbids stealing; the bit stays set if its vCPU is preempted mid-spin (the
//!     guest cannot clear it), so that case still stalls the lock (lock-waiter preemption);
//!     a successor whose vCPU has not yet run since it became head has not set it, so running
//!     spinners steal the lock meanwhile;
//!   - a queue member spins `spin_loops` loops (`SPIN_THRESHOLD`) on its MCS node
//!     (`pv_wait_node`) and the head another `spin_loops` on the lock word, then halts its
//!     vCPU (`kvm_wait`: HLT); a member halts early, at its next check every
//!     `PV_PREV_CHECK_MASK + 1` = 256 loops, when its predecessor is halted (`pv_wait_early`);
//!   - a halting head hashes itself once per acquisition and sets `_Q_SLOW_VAL`; a successor
//!     that is halted when its predecessor takes the lock is hashed on its behalf
//!     (`pv_kick_node`); the unlocker that finds `_Q_SLOW_VAL` releases the lock and then
//!     kicks the head (`__pv_queued_spin_unlock_slowpath`): a `KVM_HC_KICK_CPU` hypercall
//!     exit, the kicked vCPU is woken and the host directed-yields from the kicker to it
//!     (`kvm_emulate_hypercall` calls `kvm_pv_kick_cpu_op` then `kvm_sched_yield`, `x86.c`);
//!     a head that already hashed itself does not halt again unless the lock word is still
//!     `_Q_SLOW_VAL` (`kvm_wait` halts only if `*ptr == val`);
//!   - one spin loop costs one PAUSE (`cpu_relax`; the lock-word or node read beside it hits
//!     the cache), so the budget is `spin_loops x pause_cycles` of guest execution; it runs
//!     down only while the guest executes (not during exits, PLE exits included, or while
//!     the vCPU is descheduled).
//!   - `kvm_wait` halts with `safe_halt` when interrupts are enabled (the spinlock sections
//!     here are plain `spin_lock`): an interrupt, such as a TLB-shootdown IPI to the halted
//!     waiter's vCPU (its thread keeps the mm loaded, so it stays in `mm_cpumask`), wakes the
//!     vCPU, the handler runs, `kvm_wait` returns and the waiter spins a fresh round
//!     (`pv_wait_node` / `pv_wait_head_or_lock` loop).
//!   - under Xen's schedulers (credit, credit2 and the policies built on them) the same lock
//!     stands for Linux's Xen pv qspinlock, which a Linux HVM guest enables at boot
//!     (`arch/x86/xen/smp_hvm.c` `xen_hvm_smp_prepare_boot_cpu` calls `xen_init_spinlocks`
//!     unless `xen_nopvspin`): `xen_qlock_wait` blocks the vCPU in `SCHEDOP_poll` on a per-CPU
//!     event channel (the model's halt) and `xen_qlock_kick` sends an event-channel IPI
//!     (`EVTCHNOP_send`, a hypercall exit) on which Xen only wakes the waiter: no directed
//!     yield, which these schedulers decline (`HvScheduler::directed_yield`)
//!     (`arch/x86/xen/spinlock.c`).
//! - pv TLB flush (`kvm_flush_tlb_multi`): a shootdown target whose steal-time `preempted`
//!   byte has `KVM_VCPU_PREEMPTED` is not sent an IPI; the host flushes it when it next runs
//!   (`record_steal_time`). The host sets that byte (`kvm_arch_vcpu_put` →
//!   `kvm_steal_time_set_preempted`) only when `vcpu->preempted` (descheduled while runnable,
//!   `kvm_sched_out`) *and* the last exit was at an instruction boundary, which KVM grants only
//!   to external-interrupt exits (`at_instruction_boundary`, vmx.c
//!   `handle_external_interrupt_irqoff`, svm.c `svm_handle_exit_irqoff`; commit 6cd88243c7e0,
//!   Linux 6.0 and stable). So a vCPU preempted by the host tick or a remote reschedule is
//!   skipped, but a halted vCPU, a vCPU woken from halt that waits for a pCPU, and a vCPU that
//!   gave its pCPU away from a PLE exit (`kvm_vcpu_on_spin`) or a hypercall yield are sent the
//!   IPI (`VcpuState::steal_preempted`).
//! - pv sched yield (`kvm_smp_send_call_func_ipi`): after sending call IPIs, the sender yields
//!   to the first target that is not idle and `vcpu_is_preempted` (the same steal-time flag).
//!
//! Leaves out: the lock hash table's cost, the qspinlock tail-code bookkeeping (nesting), the
//! short window between `clear_pending` and `set_pending` of a head that spins another
//! round, halt polling inside the guest, `vcpu_is_preempted` in `pv_wait_early` (only in some
//! kernel versions; the upstream check is the predecessor's halted state), spinlocks taken
//! with interrupts disabled (`kvm_wait` then uses `halt()` and a pending IPI does not wake the
//! vCPU, `kvm_vcpu_has_events` needs `kvm_arch_interrupt_allowed`), the `pv_unhalted` latch
//! of a kick that reaches a vCPU not (yet) halted (its next HLT would return at once).

use crate::engine::Ns;
use crate::host::ExitReason;
use crate::sim::state::*;
use crate::sim::World;

/// `PV_PREV_CHECK_MASK` + 1: loops between two `pv_wait_early` checks
/// (`kernel/locking/qspinlock_paravirt.h`).
pub const PV_PREV_CHECK_LOOPS: u64 = 0x100;

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

    fn spin_since(&self, t: ThreadId) -> Ns {
        match self.threads[t].act {
            Activity::SpinLock { since, .. } | Activity::PvWait { since, .. } => since,
            _ => self.now(),
        }
    }

    fn running_spinner(&self, t: ThreadId) -> bool {
        let v = self.threads[t].vcpu;
        self.vcpus[v].cur == Some(t) && self.vcpus[v].running_on().is_some() && matches!(self.threads[t].act, Activity::SpinLock { .. })
    }

    /// Budget of a fresh `SPIN_THRESHOLD` round of queue member `t`: none if its MCS
    /// predecessor is halted (`pv_wait_early` is checked at the first loop, 1 << 15 being a
    /// multiple of 256).
    fn pv_round_budget(&self, vm: VmId, lock: usize, t: ThreadId) -> Ns {
        let w = &self.vms[vm].locks[lock].waiters;
        let prev = w.iter().position(|&x| x == t).and_then(|i| i.checked_sub(1)).map(|i| w[i]);
        if prev.map_or(false, |p| matches!(self.threads[p].act, Activity::PvWait { .. })) {
            0
        } else {
            self.vms[vm].pv_spin_ns
        }
    }

    /// pv qspinlock `queued_spin_lock`: fast path / steal, else unfair spin or MCS queue.
    pub(crate) fn pv_lock_acquire(&mut self, t: ThreadId, lock: usize) {
        let vm = self.threads[t].vm;
        let now = self.now();
        let l = &mut self.vms[vm].locks[lock];
        if l.holder.is_none() && !l.pending {
            l.holder = Some(t);
            self.vms[vm].lock_wait.record(0);
            let cs = self.critical_section_ns(t);
            return self.set_act(t, Activity::Compute { left: cs, mem_fraction: 0.0, then: AfterCompute::ReleaseLock(lock) });
        }
        let v = self.threads[t].vcpu;
        self.advance(v);
        self.vcpus[v].ple_spun_ns = 0;
        let l = &mut self.vms[vm].locks[lock];
        if l.waiters.is_empty() || l.pending {
            self.pv_enqueue(vm, lock, t, now);
        } else {
            l.unfair.push(t);
            self.set_act(t, Activity::SpinLock { lock, since: now, pv_left: Ns::MAX });
        }
        self.pv_settle(vm, lock);
    }

    /// `xchg_tail`: `t` joins the MCS queue and starts `pv_wait_node` (or, as head,
    /// `pv_wait_head_or_lock`).
    fn pv_enqueue(&mut self, vm: VmId, lock: usize, t: ThreadId, since: Ns) {
        let l = &mut self.vms[vm].locks[lock];
        if l.waiters.is_empty() {
            l.head_hashed = false;
        }
        l.waiters.push_back(t);
        let pv_left = self.pv_round_budget(vm, lock, t);
        self.set_act(t, Activity::SpinLock { lock, since, pv_left });
    }

    /// Hand a free lock to spinner `w` (queue head or stealer); the cache-line transfer
    /// follows.
    fn pv_grant(&mut self, vm: VmId, lock: usize, w: ThreadId) {
        let since = self.spin_since(w);
        let l = &mut self.vms[vm].locks[lock];
        l.waiters.retain(|&x| x != w);
        l.unfair.retain(|&x| x != w);
        l.holder = Some(w);
        self.set_act(w, Activity::LockGranted { lock, left: self.costs.lock_handoff_ns, since });
    }

    /// Bring the lock word up to date with who is executing now: the running head sets the
    /// pending bit or takes the free lock; running unfair spinners steal a free lock while
    /// the pending bit is clear, and join the queue once it is set or the queue is empty.
    pub(crate) fn pv_settle(&mut self, vm: VmId, lock: usize) {
        loop {
            let l = &self.vms[vm].locks[lock];
            if let Some(h) = l.waiters.front().copied().filter(|&h| self.running_spinner(h)) {
                if l.holder.is_none() {
                    self.pv_grant(vm, lock, h);
                    self.vms[vm].locks[lock].pending = false;
                    self.pv_promote_head(vm, lock);
                    continue;
                }
                self.vms[vm].locks[lock].pending = true;
            }
            let l = &self.vms[vm].locks[lock];
            let running: Vec<ThreadId> = l.unfair.iter().copied().filter(|&u| self.running_spinner(u)).collect();
            if running.is_empty() {
                return;
            }
            if l.holder.is_none() && !l.pending {
                let i = self.vms[vm].locks[lock].rng.below(running.len());
                self.pv_grant(vm, lock, running[i]);
                continue;
            }
            if l.pending || l.waiters.is_empty() {
                for u in running {
                    self.vms[vm].locks[lock].unfair.retain(|&x| x != u);
                    let since = self.spin_since(u);
                    self.pv_enqueue(vm, lock, u, since);
                }
                continue;
            }
            return;
        }
    }

    /// The old head took the lock and passed the MCS lock on: a spinning successor starts a
    /// fresh round as head; a halted one is hashed on its behalf (`pv_kick_node`) so that the
    /// unlock kicks it.
    fn pv_promote_head(&mut self, vm: VmId, lock: usize) {
        let Some(n) = self.vms[vm].locks[lock].waiters.front().copied() else { return };
        let l = &mut self.vms[vm].locks[lock];
        match self.threads[n].act {
            Activity::PvWait { .. } => {
                l.head_hashed = true;
                l.slow = true;
            }
            Activity::SpinLock { since, .. } => {
                l.head_hashed = false;
                let pv_left = self.vms[vm].pv_spin_ns;
                self.set_act(n, Activity::SpinLock { lock, since, pv_left });
            }
            _ => {}
        }
    }

    /// pv qspinlock unlock: release; if the lock word was `_Q_SLOW_VAL`, kick the hashed head.
    pub(crate) fn pv_unlock(&mut self, t: ThreadId, lock: usize) {
        let vm = self.threads[t].vm;
        let l = &mut self.vms[vm].locks[lock];
        let kick = if std::mem::take(&mut l.slow) { l.waiters.front().copied() } else { None };
        self.pv_settle(vm, lock);
        let l = &self.vms[vm].locks[lock];
        if let Some(h) = l.waiters.front().copied().filter(|_| l.holder.is_none() && l.pending) {
            // The head set the pending bit and was preempted: nobody may take the lock.
            let u = self.threads[h].vcpu;
            self.vcpus[u].lwp += 1;
        }
        if let Some(h) = kick {
            let kicker = self.running_cur(t);
            self.pv_kick(kicker, h);
        }
    }

    /// A spin round of `t` ran out: halt the vCPU (`kvm_wait`), or, for a head that hashed
    /// itself already and finds the lock word no longer `_Q_SLOW_VAL`, spin another round.
    pub(crate) fn pv_wait(&mut self, t: ThreadId, lock: usize, since: Ns) {
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        self.advance(v);
        let l = &mut self.vms[vm].locks[lock];
        let pos = l.waiters.iter().position(|&x| x == t);
        if pos == Some(0) {
            l.pending = false;
            if l.head_hashed && !l.slow {
                l.pending = true;
                let pv_left = self.vms[vm].pv_spin_ns;
                self.threads[t].act = Activity::SpinLock { lock, since, pv_left };
                return self.arm_exec(v);
            }
            l.head_hashed = true;
            l.slow = true;
        }
        let next = pos.and_then(|i| l.waiters.get(i + 1).copied());
        self.threads[t].act = Activity::PvWait { lock, since };
        self.start_halt(v);
        // `pv_wait_early`: the successor halts at its next check.
        if let Some(n) = next {
            let check = self.vms[vm].pv_check_ns.max(1);
            if let Activity::SpinLock { lock, since, pv_left } = self.threads[n].act {
                self.set_act(n, Activity::SpinLock { lock, since, pv_left: pv_left % check });
            }
        }
    }

    /// The unlocker kicks halted head `waiter`: a hypercall exit, the vCPU is woken with
    /// `pv_unhalted` (its `kvm_wait` returns, it spins again), then `kvm_sched_yield`.
    pub(crate) fn pv_kick(&mut self, kicker: Option<VcpuId>, waiter: ThreadId) {
        let u = self.threads[waiter].vcpu;
        if let Some(k) = kicker {
            self.charge_exit(k, ExitReason::Hypercall);
        }
        if let Activity::PvWait { lock, since } = self.threads[waiter].act {
            let pv_left = self.vms[self.threads[waiter].vm].pv_spin_ns;
            self.set_act(waiter, Activity::SpinLock { lock, since, pv_left });
        }
        self.hv_wake_by_event(u); // `kvm_pv_kick_cpu_op` sets `pv.pv_unhalted`
        if let Some(k) = kicker {
            self.request_directed_yield(k, u);
        }
        if let Activity::SpinLock { lock, .. } = self.threads[waiter].act {
            // A vCPU still in its HLT exit or halt polling resumes at once.
            self.pv_settle(self.threads[waiter].vm, lock);
        }
    }

    /// A vCPU whose current thread sleeps in `kvm_wait` resumes without a kick (an interrupt
    /// woke it): `kvm_wait` returns and the thread spins a new round.
    pub(crate) fn pv_resume(&mut self, v: VcpuId) {
        let Some(t) = self.vcpus[v].cur else { return };
        if let Activity::PvWait { lock, since } = self.threads[t].act {
            let vm = self.threads[t].vm;
            let pv_left = self.pv_round_budget(vm, lock, t);
            self.threads[t].act = Activity::SpinLock { lock, since, pv_left };
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
            if self.vcpus[u].steal_preempted {
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
        if let Some(&u) = targets.iter().find(|&&u| self.vcpus[u].steal_preempted && self.vcpus[u].cur.is_some()) {
            self.request_directed_yield(sender, u);
        }
    }
}
