//! Wakeup preemption across vCPUs: the reschedule IPI to a busy remote vCPU; and, under a Linux
//! 2.6.32 `guest.wake_placement`, wakeup preemption on the waker's own vCPU.
//!
//! Models (Linux guest): `try_to_wake_up` → `ttwu_queue` → `ttwu_do_activate` enqueues the
//! woken task on the runqueue chosen by `select_task_rq`, then `check_preempt_curr`
//! (`wakeup_preempt` since 6.6) asks the class whether it preempts the running task; if so
//! `resched_curr` (`resched_task` in 2.6.32) sets need-resched and, for a remote CPU, sends
//! `smp_send_reschedule` (kernel/sched/core.c). The target's `scheduler_ipi` handler returns
//! into `schedule()`, which picks the woken task (kernel/sched/core.c, arch/x86/kernel/smp.c).
//!
//! When does a wakeup preempt (CFS, kernel/sched/fair.c up to 6.5)? `check_preempt_wakeup` →
//! `wakeup_preempt_entity`: preempt if `curr.vruntime − woken.vruntime > wakeup_gran`.
//! `place_entity` gives a sleeper `max(own vruntime, min_vruntime − sched_latency/2)`
//! (GENTLE_FAIR_SLEEPERS). A sleeper that left a runqueue at its `min_vruntime` and slept `s`
//! therefore lags the target's `min_vruntime` by about `min(s, sched_latency/2)`, and the
//! running task is at or past `min_vruntime`. Since `sched_latency/2` (3 ms × factor) exceeds
//! the granularity (1 ms × factor), the rule becomes: a thread that slept longer than the
//! wakeup granularity preempts the running thread of its target vCPU. A newly forked thread
//! does not (START_DEBIT places it after `min_vruntime`).
//!
//! The woken thread goes to the front of the target's runqueue and the preempted one to the
//! back (the model's guest runqueue is round robin, not a vruntime tree).
//!
//! Only wakeups onto a vCPU other than the waker's own send an IPI, so 1-vCPU guests send none.
//! Wakeups onto an idle vCPU keep the path of `guest/kernel.rs wake_thread` (an IPI exit on the
//! waker, a wake of the halted target).
//!
//! The waker's own vCPU (`check_preempt_local`, `preempt_local`; only under the 2.6.32
//! placements `affine` and `affine_idle_sibling`, `guest::wakeaffine`, whose affine wake-ups make
//! it the usual target; the default placement keeps the woken thread waiting there for the
//! slice end). Linux 2.6.32 (BuzzBumbleBee/gtab-2632, a 2.6.32.11 tree, commit 009beea3:
//! kernel/sched.c `try_to_wake_up`, `resched_task`; kernel/sched_fair.c `check_preempt_wakeup`,
//! `wakeup_preempt_entity`, `wakeup_gran`, `place_entity`; pershoot/gtab-2632
//! kernel/sched_features.h): `try_to_wake_up` calls `check_preempt_curr(rq, p, wake_flags)` on
//! the target runqueue whichever CPU it is, so `check_preempt_wakeup` judges a wake-up onto the
//! waker's own CPU as any other; `resched_task` then sets `TIF_NEED_RESCHED` and returns without
//! `smp_send_reschedule` when the task's CPU is `smp_processor_id()`, so the waker is switched
//! out at its next preemption point (the return from the waking system call or interrupt, or
//! `preempt_enable`). Of `check_preempt_wakeup`'s early exits, `WAKEUP_SYNC` (always preempt on
//! a sync wake-up), `WAKEUP_OVERLAP` and `WAKEUP_RUNNING` are off in 2.6.32's sched_features.h
//! and `NEXT_BUDDY` is off; what decides is `WAKEUP_PREEMPT` (on): `wakeup_preempt_entity(se,
//! pse) == 1`, the rule above (2.6.32's `sysctl_sched_latency` is 5 ms × factor, so the sleeper
//! credit, half of it, still exceeds the 1 ms × factor granularity); a need-resched already set
//! returns at once (`test_tsk_need_resched`), so the first preempting wake-up wins. The model:
//! the woken thread goes to the front of the runqueue at once and the vCPU is marked
//! (`Vcpu::need_resched`); at the current thread's next preemption point — the next instruction
//! boundary of its program (`guest::kernel step`) or the end of the interrupt handler that woke
//! the thread (`hv::machine on_exec_timer`) — it goes to the back of the runqueue and the woken
//! thread runs, as `resched_ipi` does. A thread with preemption disabled keeps the mark until it
//! reaches a preemption point with preemption enabled (Linux's `preempt_enable` check); one
//! that blocks or exits first drops it (the woken thread, first in the queue, runs next); any
//! switch of the vCPU clears it (`schedule()` clears need-resched). No exit, no IPI.
//!
//! The wake list (`guest.ttwu_queue`, off by default). Since Linux 3.0 `ttwu_queue` does not
//! take a remote runqueue's lock when the two CPUs share no cache (`!cpus_share_cache`, since
//! 3.6; every remote CPU in 3.0-3.5): `ttwu_queue_remote` adds the task to the target's lock-free
//! wake list and sends `smp_send_reschedule` if the list was empty; the target's
//! `scheduler_ipi` runs `sched_ttwu_pending`, which activates each queued task with the usual
//! `check_preempt_curr` (kernel/sched/core.c, 3.0 to 5.7; `ttwu_queue_cond` since 5.8). A guest
//! whose vCPUs are separate sockets in its own view shares no cache between any two of them
//! (QEMU's default `-smp N` topology). So every wake-up onto another busy vCPU costs the waker an
//! IPI exit (one per list that was empty), and the woken thread is on no runqueue — neither
//! runnable there nor movable by the guest's balancing — until the target vCPU runs the IPI's
//! handler: at once if it is running, when it is next dispatched if the host preempted it. The
//! handler queues the threads in order and the first that slept longer than the wakeup
//! granularity preempts the current thread (as `resched_ipi`). Wake-ups onto an idle vCPU keep
//! the path above (Linux queues them on the wake list too, and the same IPI wakes the idle CPU,
//! which then activates them; the model queues them at once, so an idle sibling could take one
//! first: the difference is a few microseconds of an idle vCPU's wake-up).
//!
//! Leaves out: wakeup preemption on the waker's own vCPU under the default placement (the woken
//! thread waits there for the slice end, as before); vruntime itself (sleepers shorter than the
//! granularity never preempt, longer ones always do; with N runnable threads a queue's
//! `min_vruntime` advances at about 1/N of real time, so a real sleeper lags by less than it
//! slept); 2.6.32's `ADAPTIVE_GRAN` (on: the granularity shrinks to twice the woken task's
//! average run between its wake-ups of others, times the runnable tasks, less what the current
//! task has run) and `LAST_BUDDY` (on: with `sched_nr_latency`, 5, or more runnable tasks the
//! preempted task becomes the `last` buddy, picked again when the woken one leaves if its
//! vruntime is within the granularity of the leftmost; the model's preempted thread waits at
//! the back of the round-robin queue); preemption deferred to `preempt_enable` for a remote
//! wake-up (a handler that finds the current thread with preemption disabled leaves the woken
//! thread queued until the slice end).

use crate::engine::Ns;
use crate::host::ExitReason;
use crate::sim::state::*;
use crate::sim::World;

/// `sysctl_sched_wakeup_granularity` before scaling: 1 ms (kernel/sched/fair.c, 2.6.32
/// through 6.5; reference §5.1).
pub const WAKEUP_GRANULARITY_BASE_NS: Ns = 1_000_000;

/// The scaled granularity for a guest with `cpus` online vCPUs: × (1 + ilog2(min(cpus, 8)))
/// (`SCHED_TUNABLESCALING_LOG`, kernel/sched/fair.c `get_update_sysctl_factor`).
pub fn wakeup_granularity_ns(cpus: usize) -> Ns {
    let n = cpus.clamp(1, 8) as u32;
    WAKEUP_GRANULARITY_BASE_NS * (1 + n.ilog2()) as Ns
}

impl World {
    /// Thread `t` was just queued on busy vCPU `u` by code running on vCPU `waker`: send a
    /// reschedule IPI if it preempts `u`'s current thread. `slept_ns`: how long `t` slept
    /// (None: a new or migrating thread, which does not preempt).
    pub(crate) fn check_preempt_remote(&mut self, waker: VcpuId, u: VcpuId, t: ThreadId, slept_ns: Option<Ns>) {
        if waker == u || self.vcpus[u].cur.is_none() {
            return;
        }
        let Some(slept) = slept_ns else { return };
        if slept <= self.wakeup_granularity_on(u) {
            return;
        }
        self.charge_exit(waker, ExitReason::Ipi);
        let left_ns = self.costs.ipi_handler_ns + self.vipi_message_ns(waker, u);
        let now = self.now();
        self.deliver_irq(u, IrqWork { left_ns, action: IrqAction::Resched(t), sent_at: now });
    }

    /// `ttwu_queue_remote`: thread `t` (which slept `slept_ns`, None if new or migrating) goes on
    /// busy vCPU `u`'s wake list; if the list was empty, code on `waker` sends `u` a reschedule
    /// IPI whose handler will queue the list (`sched_ttwu_pending`).
    pub(crate) fn ttwu_queue_remote(&mut self, waker: VcpuId, u: VcpuId, t: ThreadId, slept_ns: Option<Ns>) {
        let first = self.vcpus[u].wake_list.is_empty();
        self.vcpus[u].wake_list.push((t, slept_ns));
        if !first {
            return;
        }
        self.charge_exit(waker, ExitReason::Ipi);
        let left_ns = self.costs.ipi_handler_ns + self.vipi_message_ns(waker, u);
        let now = self.now();
        self.deliver_irq(u, IrqWork { left_ns, action: IrqAction::WakeList(u), sent_at: now });
    }

    /// `sched_ttwu_pending` in vCPU `u`'s reschedule IPI handler: every thread on its wake list
    /// joins its runqueue, in order; the first that slept longer than the wakeup granularity
    /// preempts the current thread.
    pub(crate) fn sched_ttwu_pending(&mut self, u: VcpuId) {
        let list = std::mem::take(&mut self.vcpus[u].wake_list);
        let gran = self.wakeup_granularity_on(u);
        let mut preempting = None;
        for (t, slept) in list {
            self.vcpus[u].runq.push_back(t);
            if preempting.is_none() && slept.map_or(false, |s| s > gran) {
                preempting = Some(t);
            }
        }
        if self.vcpus[u].cur.is_none() {
            return self.kick_idle_vcpu(u);
        }
        if let Some(t) = preempting {
            self.resched_ipi(u, t);
        }
    }

    /// Threads on vCPU `u`'s wake list go to the other vCPUs (`u` went or is going offline).
    pub(crate) fn hand_on_wake_list(&mut self, u: VcpuId) {
        for (t, _) in std::mem::take(&mut self.vcpus[u].wake_list) {
            self.wake_thread(t, None);
        }
    }

    /// The wakeup granularity of vCPU `u`'s guest, scaled by its online vCPUs.
    fn wakeup_granularity_on(&self, u: VcpuId) -> Ns {
        let vm = self.vcpus[u].vm;
        wakeup_granularity_ns(self.vms[vm].vcpus.iter().filter(|&&x| self.vcpus[x].online).count())
    }

    /// `scheduler_ipi` on vCPU `u` for woken thread `t`: switch to `t` if it still waits there.
    /// Returns true if it switched.
    pub(crate) fn resched_ipi(&mut self, u: VcpuId, t: ThreadId) -> bool {
        let Some(cur) = self.vcpus[u].cur else { return false };
        if cur == t || self.threads[cur].act.preempt_disabled() {
            return false;
        }
        let Some(pos) = self.vcpus[u].runq.iter().position(|&x| x == t) else { return false };
        self.vcpus[u].runq.remove(pos);
        self.vcpus[u].runq.push_front(t);
        self.advance(u);
        let cur = self.vcpus[u].cur.take().expect("checked above");
        self.threads[cur].last_ran = Some(self.now());
        self.vcpus[u].runq.push_back(cur);
        self.guest_pick(u);
        true
    }

    /// Thread `t` (which slept `slept_ns`, None if new or migrating) was just queued on busy vCPU
    /// `u` by code running on vCPU `waker`. Under a 2.6.32 `wake_placement`, a wake-up onto the
    /// waker's own vCPU runs `check_preempt_wakeup` there too: if `t` slept longer than the
    /// wakeup granularity it goes to the front of the runqueue and the current thread is marked
    /// to give way at its next preemption point (`resched_task` on the local CPU: no IPI). The
    /// first such wake-up wins until the vCPU switches (`test_tsk_need_resched`).
    pub(crate) fn check_preempt_local(&mut self, waker: VcpuId, u: VcpuId, t: ThreadId, slept_ns: Option<Ns>) {
        if waker != u || !self.vms[self.vcpus[u].vm].wake_placement.is_2632() {
            return;
        }
        let Some(cur) = self.vcpus[u].cur else { return };
        if cur == t || self.vcpus[u].need_resched.is_some() {
            return;
        }
        let Some(slept) = slept_ns else { return };
        if slept <= self.wakeup_granularity_on(u) {
            return;
        }
        let Some(pos) = self.vcpus[u].runq.iter().position(|&x| x == t) else { return };
        self.vcpus[u].runq.remove(pos);
        self.vcpus[u].runq.push_front(t);
        self.vcpus[u].need_resched = Some(t);
    }

    /// A preemption point of vCPU `v`'s current thread (an instruction boundary of its program,
    /// or the return from an interrupt handler): if a local wake-up marked it
    /// (`check_preempt_local`), it gives way to the woken thread, as `resched_ipi` does. A thread
    /// with preemption disabled keeps the mark until it enables it (its next preemption point
    /// after that); a thread that blocks or exits first drops it (the woken thread is at the
    /// front of the runqueue anyway). Returns true if the vCPU switched threads.
    pub(crate) fn preempt_local(&mut self, v: VcpuId) -> bool {
        let Some(t) = self.vcpus[v].need_resched else { return false };
        let Some(cur) = self.vcpus[v].cur else {
            self.vcpus[v].need_resched = None;
            return false;
        };
        let act = &self.threads[cur].act;
        if matches!(act, Activity::Blocked | Activity::Exited) {
            self.vcpus[v].need_resched = None;
            return false;
        }
        if act.preempt_disabled() {
            return false;
        }
        self.vcpus[v].need_resched = None;
        self.resched_ipi(v, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::from_toml_str;
    use crate::sim::{Overrides, Simulation};

    /// A 2-vCPU VM (`placement`) with four threads that only compute, not yet run: the tests
    /// set the vCPUs' threads by hand.
    fn vm(placement: &str) -> Simulation {
        let text = format!(
            r#"
[host]
sockets = 1
cores_per_socket = 2
[hypervisor]
scheduler = "credit"
[[vms]]
vcpus = 2
guest = {{ wake_placement = "{placement}" }}
[[vms.workloads]]
kind = "custom"
groups = [ {{ threads = 4, program = [ {{ op = "compute", us = 10.0 }} ] }} ]
"#
        );
        Simulation::new(&from_toml_str(&text).expect("parses"), &Overrides::default()).expect("builds")
    }

    /// Thread 0 runs on vCPU 0 with thread 2 queued behind it, thread 3 on vCPU 1 (if online);
    /// thread 1, last on vCPU 0, went to sleep `slept` ago; thread 0 wakes it with a sync
    /// wake-up.
    fn sync_wake_after(w: &mut World, slept: Ns) {
        w.q.advance_to(100 * WAKEUP_GRANULARITY_BASE_NS);
        let now = w.now();
        w.vcpus[0].cur = Some(0);
        w.vcpus[0].runq = [2].into_iter().collect();
        for t in 0..3 {
            w.threads[t].vcpu = 0;
        }
        if w.vcpus[1].online {
            w.vcpus[1].cur = Some(3);
            w.threads[3].vcpu = 1;
        }
        w.threads[1].act = Activity::Blocked;
        w.threads[1].blocked_at = now - slept;
        w.wake_thread_from(1, Some(0), Some(0));
    }

    #[test]
    fn a_sync_wakeup_of_a_long_sleeper_onto_the_wakers_vcpu_preempts_the_waker() {
        let mut sim = vm("affine");
        let w = sim.world();
        // Two online vCPUs: granularity 2 ms; the sleeper slept 3 ms.
        sync_wake_after(w, 3 * WAKEUP_GRANULARITY_BASE_NS);
        assert_eq!(w.vcpus[0].runq.iter().copied().collect::<Vec<_>>(), vec![1, 2], "the woken thread is next");
        assert_eq!(w.vcpus[0].need_resched, Some(1), "need-resched set on the waker's own vCPU");
        assert_eq!(w.vcpus[0].exits[ExitReason::Ipi.index()], 0, "a local wake-up sends no IPI");
        // At the waker's next preemption point the woken thread runs, the waker goes last.
        assert!(w.preempt_local(0));
        assert_eq!(w.vcpus[0].cur, Some(1));
        assert_eq!(w.vcpus[0].runq.iter().copied().collect::<Vec<_>>(), vec![2, 0]);
        assert_eq!(w.vcpus[0].need_resched, None);
    }

    #[test]
    fn a_sync_wakeup_of_a_short_sleeper_onto_the_wakers_vcpu_does_not_preempt_the_waker() {
        for placement in ["affine", "affine_idle_sibling"] {
            let mut sim = vm(placement);
            let w = sim.world();
            sync_wake_after(w, WAKEUP_GRANULARITY_BASE_NS);
            assert_eq!(w.vcpus[0].runq.iter().copied().collect::<Vec<_>>(), vec![2, 1], "{placement}: queued last");
            assert_eq!(w.vcpus[0].need_resched, None, "{placement}");
            assert!(!w.preempt_local(0));
            assert_eq!(w.vcpus[0].cur, Some(0), "{placement}: the waker runs on");
        }
    }

    #[test]
    fn the_default_placement_never_preempts_the_waker_on_its_own_vcpu() {
        let mut sim = vm("prev_or_idle");
        let w = sim.world();
        // vCPU 1 offline, so the default placement keeps the sleeper on its previous vCPU 0.
        w.vcpus[1].online = false;
        sync_wake_after(w, 10 * WAKEUP_GRANULARITY_BASE_NS);
        assert_eq!(w.threads[1].vcpu, 0);
        assert_eq!(w.vcpus[0].need_resched, None);
        assert_eq!(*w.vcpus[0].runq.back().unwrap(), 1, "the woken thread waits for the slice end");
    }

    #[test]
    fn a_waker_with_preemption_disabled_gives_way_once_it_enables_it() {
        let mut sim = vm("affine");
        let w = sim.world();
        sync_wake_after(w, 3 * WAKEUP_GRANULARITY_BASE_NS);
        w.threads[0].act = Activity::Compute { left: 1000.0, mem_fraction: 0.0, then: AfterCompute::ReleaseLock(0) };
        assert!(!w.preempt_local(0), "inside a spinlock's critical section");
        assert_eq!(w.vcpus[0].need_resched, Some(1), "the mark waits");
        w.threads[0].act = Activity::Ready;
        assert!(w.preempt_local(0));
        assert_eq!(w.vcpus[0].cur, Some(1));
    }

    #[test]
    fn wakeup_granularity_scales_with_the_log_of_the_cpu_count_up_to_eight() {
        assert_eq!(wakeup_granularity_ns(1), 1_000_000);
        assert_eq!(wakeup_granularity_ns(2), 2_000_000);
        assert_eq!(wakeup_granularity_ns(4), 3_000_000);
        assert_eq!(wakeup_granularity_ns(8), 4_000_000);
        assert_eq!(wakeup_granularity_ns(64), 4_000_000);
    }
}
