//! Invariant checker, run after every event in checking mode (on in all tests).
//!
//! Checks: a pCPU runs at most one vCPU and a vCPU runs on at most one pCPU (and both sides
//! agree); a guest thread is current on at most one vCPU and queued at most once; spinlock
//! ownership matches what the holder is doing and every ticket waiter is spinning on that
//! lock; a vCPU reported preempted to its guest (steal time) is preempted and not running;
//! every armed timer lies in the future; each running vCPU's accounted time matches its
//! segment start; the idle-while-waiting metric counts every runnable vCPU under its current
//! hard affinity; no vCPU owes more cache refill than the coldest refill a thread of its VM can
//! need; at the end, every pCPU's idle + hypervisor + guest time equals the
//! simulated time exactly.

use crate::engine::Ns;
use crate::host::refill_bound_ns;
use crate::sim::state::*;
use crate::sim::World;

impl World {
    pub(crate) fn check(&self) -> Result<(), String> {
        let now = self.now();
        let mut seen_vcpu = vec![None; self.vcpus.len()];
        for (p, pc) in self.pcpus.iter().enumerate() {
            if pc.cur != self.pcpu_cur[p] {
                return Err(format!("pcpu {p}: scheduler view disagrees with the machine"));
            }
            if let Some(v) = pc.cur {
                if let Some(q) = seen_vcpu[v] {
                    return Err(format!("vcpu {v} runs on pcpu {q} and pcpu {p} at once"));
                }
                seen_vcpu[v] = Some(p);
                if self.vcpus[v].run != RunState::Running(p) {
                    return Err(format!("pcpu {p} runs vcpu {v} whose state is {:?}", self.vcpus[v].run));
                }
            }
            if let Some(at) = pc.slice_timer.armed_at() {
                if at < now {
                    return Err(format!("pcpu {p}: slice timer armed in the past"));
                }
            }
        }
        let mut on_vcpu = vec![0u32; self.threads.len()];
        for (v, vc) in self.vcpus.iter().enumerate() {
            if let RunState::Running(p) = vc.run {
                if self.pcpus[p].cur != Some(v) {
                    return Err(format!("vcpu {v} thinks it runs on pcpu {p}, which runs {:?}", self.pcpus[p].cur));
                }
                if vc.seg_start > now {
                    return Err(format!("vcpu {v}: accounting segment starts in the future"));
                }
            }
            if vc.steal_preempted && !(vc.preempted && matches!(vc.run, RunState::Runnable | RunState::Offline)) {
                return Err(format!("vcpu {v} reported preempted to its guest while {:?}", vc.run));
            }
            if vc.run == RunState::Blocked {
                if let Some(t) = vc.cur.filter(|&t| !matches!(self.threads[t].act, Activity::PvWait { .. })) {
                    return Err(format!("vcpu {v} is halted while its thread {} has work ({:?}): a lost wake-up", self.threads[t].name, self.threads[t].act));
                }
            }
            for &h in &vc.rq_lock_holders {
                if !self.vcpus[h].rq_locks_held.contains(&v) {
                    return Err(format!("vcpu {v}'s runqueue lock names vcpu {h} as holder, which does not hold it"));
                }
            }
            for &u in &vc.rq_locks_held {
                if !self.vcpus[u].rq_lock_holders.contains(&v) {
                    return Err(format!("vcpu {v} holds vcpu {u}'s runqueue lock, which does not name it"));
                }
            }
            if vc.rq_lock_spin && vc.cur.is_some() {
                return Err(format!("vcpu {v} spins for its runqueue lock while running a thread"));
            }
            if !vc.online && (vc.cur.is_some() || !vc.runq.is_empty() || !vc.wake_list.is_empty()) {
                return Err(format!("offline vcpu {v} holds guest threads"));
            }
            if let Some(at) = vc.exec_timer.armed_at() {
                if at < now {
                    return Err(format!("vcpu {v}: execution timer armed in the past"));
                }
            }
            for &t in vc.cur.iter().chain(vc.runq.iter()).chain(vc.wake_list.iter().map(|(t, _)| t)) {
                on_vcpu[t] += 1;
                if self.threads[t].vcpu != v {
                    return Err(format!("thread {} is on vcpu {v} but records vcpu {}", self.threads[t].name, self.threads[t].vcpu));
                }
                if matches!(self.threads[t].act, Activity::Blocked | Activity::Exited) {
                    return Err(format!("blocked or exited thread {} sits on vcpu {v}", self.threads[t].name));
                }
            }
        }
        for (t, n) in on_vcpu.iter().enumerate() {
            if *n > 1 {
                return Err(format!("thread {} is on {n} vcpus or queued twice", self.threads[t].name));
            }
        }
        // The refill debt is bounded (`hv::machine` `refill_debt_after`): never more than the
        // coldest refill a thread of the VM can need, its whole cached working set from remote
        // memory, the re-fetch of its private part from the LLC and all its page walks (after a
        // hypervisor flush, `hv::tlb`, and a guest address-space switch, `guest::mm`).
        let mut cache = self.refill_bound.borrow_mut();
        if cache.0 != self.threads.len() || cache.1.len() != self.vms.len() {
            let mut worst = vec![0 as Ns; self.vms.len()];
            for (t, th) in self.threads.iter().enumerate() {
                let bound = refill_bound_ns(&self.topo, &self.costs, th.ws_kib) + self.tlb_walks_all_ns(t) + self.guest_switch_walks_ns(t) + 2;
                worst[th.vm] = worst[th.vm].max(bound);
            }
            *cache = (self.threads.len(), worst);
        }
        let worst = &cache.1;
        for (v, vc) in self.vcpus.iter().enumerate() {
            if vc.refill_debt_ns > worst[vc.vm] {
                return Err(format!("vcpu {v} owes {} ns of cache refill, more than any thread of its VM can need ({} ns)", vc.refill_debt_ns, worst[vc.vm]));
            }
        }
        for vm in &self.vms {
            for (i, l) in vm.locks.iter().enumerate() {
                if let Some(h) = l.holder {
                    match self.threads[h].act {
                        Activity::LockGranted { lock, .. } if lock == i => {}
                        Activity::Compute { then: AfterCompute::ReleaseLock(lock), .. } if lock == i => {}
                        ref a => return Err(format!("lock {i} of {} held by {} which is {:?}", vm.name, self.threads[h].name, a)),
                    }
                    if l.waiters.contains(&h) {
                        return Err(format!("lock {i} of {}: holder is also waiting", vm.name));
                    }
                }
                for &w in &l.waiters {
                    if !matches!(self.threads[w].act, Activity::SpinLock { lock, .. } | Activity::PvWait { lock, .. } if lock == i) {
                        return Err(format!("lock {i} of {}: waiter {} is not spinning on it", vm.name, self.threads[w].name));
                    }
                }
                for &w in &l.unfair {
                    if !matches!(self.threads[w].act, Activity::SpinLock { lock, .. } if lock == i) || l.waiters.contains(&w) {
                        return Err(format!("lock {i} of {}: unfair spinner {} is not spinning on it alone", vm.name, self.threads[w].name));
                    }
                }
                if l.hybrid {
                    // Unfair spinners join the MCS queue when they next run: no ticket order.
                    continue;
                }
                let mut last = 0;
                for &w in &l.waiters {
                    if let Activity::SpinLock { since, .. } | Activity::PvWait { since, .. } = self.threads[w].act {
                        if since < last {
                            return Err(format!("lock {i} of {}: ticket order broken", vm.name));
                        }
                        last = since;
                    }
                }
            }
        }
        for (id, t) in &self.sched_timers {
            if let Some(at) = t.armed_at() {
                if at < now {
                    return Err(format!("scheduler timer {id} armed in the past"));
                }
            }
        }
        // The idle-while-waiting metric counts each runnable vCPU under its current affinity.
        let mut any = 0;
        let mut pinned = vec![0u32; self.pcpus.len()];
        for v in 0..self.vcpus.len() {
            if self.vcpus[v].run == RunState::Runnable {
                match &self.affinity[v] {
                    None => any += 1,
                    Some(ps) => ps.iter().for_each(|&p| pinned[p] += 1),
                }
            }
        }
        if self.idle_wait.waiting() != (any, &pinned[..]) {
            return Err(format!("idle-while-waiting counts {:?}, runnable vCPUs {:?}", self.idle_wait.waiting(), (any, pinned)));
        }
        Ok(())
    }

    /// After `settle`: each pCPU's time adds up exactly to the simulated time, and each vCPU's
    /// buckets add up to its run time.
    pub(crate) fn check_time_conservation(&self) -> Result<(), String> {
        let now = self.now();
        for (p, pc) in self.pcpus.iter().enumerate() {
            let sum = pc.idle_ns + pc.hv_ns + pc.guest_ns;
            if sum != now {
                return Err(format!("pcpu {p}: idle {} + hv {} + guest {} = {sum} != {now}", pc.idle_ns, pc.hv_ns, pc.guest_ns));
            }
            // A background spin on a pCPU without a vCPU is hypervisor time, but the pCPU still
            // has no vCPU for the idle-while-waiting metric.
            // So is the lazy switch's work in the idle vCPU's context (`hv::lazy_switch`).
            if self.idle_wait.per_pcpu_ns[p] > pc.idle_ns + pc.bg_ns + pc.lazy.idle_hv_ns {
                return Err(format!(
                    "pcpu {p}: idle while waiting {} exceeds idle {} + background {} + idle-context switches {}",
                    self.idle_wait.per_pcpu_ns[p], pc.idle_ns, pc.bg_ns, pc.lazy.idle_hv_ns
                ));
            }
        }
        for (v, vc) in self.vcpus.iter().enumerate() {
            if vc.t.total() != vc.run_ns {
                return Err(format!("vcpu {v}: buckets {} != run time {}", vc.t.total(), vc.run_ns));
            }
            let states = vc.run_ns + vc.steal_ns + vc.halted_ns;
            if vc.run != RunState::Offline && states > now {
                return Err(format!("vcpu {v}: run + steal + halted {states} exceeds {now}"));
            }
        }
        Ok(())
    }

    /// Close every open interval at the current time (end of run).
    pub(crate) fn settle(&mut self) {
        for v in 0..self.vcpus.len() {
            self.advance(v);
            self.close_state_interval(v);
        }
        self.settle_tasklets();
        self.idle_wait.settle(self.now());
        for p in 0..self.pcpus.len() {
            self.close_idle(p);
        }
    }
}
