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
//! back (the model's guest runqueue is round robin, not a vruntime tree), except for a last
//! buddy under the 2.6.32 placements (below).
//!
//! Only wakeups onto a vCPU other than the waker's own send an IPI, so 1-vCPU guests send none.
//! Wakeups onto an idle vCPU keep the path of `guest/kernel.rs wake_thread` (an IPI exit on the
//! waker, a wake of the halted target).
//!
//! The waker's own vCPU (`check_preempt_wakeup` → `check_preempt_local`, `preempt_local`; only
//! under the 2.6.32 placements `affine` and `affine_idle_sibling`, `guest::wakeaffine`, whose
//! affine wake-ups make it the usual target; the default placement keeps the woken thread
//! waiting there for the slice end). Linux 2.6.32 (BuzzBumbleBee/gtab-2632, a 2.6.32.11 tree, commit 009beea3:
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
//! `LAST_BUDDY` (2.6.32 placements only, both the local and the remote path; same tree, kernel/
//! sched_fair.c `check_preempt_wakeup`, `set_last_buddy`, `pick_next_entity`, `clear_buddies`,
//! `__clear_buddies`, `sched_nr_latency`; `LAST_BUDDY` on in sched_features.h).
//! `check_preempt_wakeup` computes `scale = cfs_rq->nr_running >= sched_nr_latency` on entry —
//! after `activate_task`, so the count includes the woken task and the running one — and, when
//! `wakeup_preempt_entity(se, pse) == 1` and it has called `resched_task`, makes the preempted
//! current the runqueue's `last` buddy if `scale` holds (and the current is still on the
//! runqueue and not the idle task). `sched_nr_latency` is 5 (`sysctl_sched_latency` 5 ms /
//! `sysctl_sched_min_granularity` 1 ms; both scaled by the same factor, so the ratio stays).
//! Nothing in 2.6.32 sets a buddy below that count. `pick_next_entity` takes the leftmost
//! entity, but the `last` buddy instead if `wakeup_preempt_entity(last, leftmost) < 1` (the
//! buddy's vruntime at most a wakeup granularity past the leftmost's); `clear_buddies` of the
//! picked entity drops only a buddy pointer naming it, and the other clears are the buddy's own
//! dequeue and `check_preempt_tick` on the buddy itself. So at the `schedule()` right after the
//! preemption the woken task (leftmost, and the buddy more than a granularity past it, which is
//! why it preempted) runs and the buddy stays set; at the next pick — the woken task blocks or
//! its slice ends — the preempted waker runs if it is within a granularity of the leftmost.
//! The model, with a round-robin queue and no vruntime: the wake-up counts the vCPU's runnable
//! threads (runqueue, woken one included, plus the running one); if 5 or more and it preempts,
//! the preempted thread goes second in the runqueue, right behind the woken thread, instead of
//! the back, so it runs right after the woken one. The `< 1` test is taken as passing: the
//! waker was running when preempted, so its vruntime sits at the queue's `min_vruntime` plus
//! what it ran since it was picked, and the model has nothing finer to compare with the others'
//! lag. Below 5 runnable threads it goes to the back as before. A later preempting wake-up on
//! the same vCPU makes its own preempted thread second; an earlier buddy keeps its place behind
//! (Linux's single `last` pointer would move to the new one and the old task would be picked by
//! vruntime).
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
//! task has run); `LAST_BUDDY`'s vruntime test at the pick (above); preemption deferred to
//! `preempt_enable` for a remote
//! wake-up (a handler that finds the current thread with preemption disabled leaves the woken
//! thread queued until the slice end).

use crate::engine::Ns;
use crate::host::ExitReason;
use crate::sim::state::*;
use crate::sim::World;

/// `sysctl_sched_wakeup_granularity` before scaling: 1 ms (kernel/sched/fair.c, 2.6.32
/// through 6.5; reference §5.1).
pub const WAKEUP_GRANULARITY_BASE_NS: Ns = 1_000_000;

/// `sched_nr_latency` of Linux 2.6.32 (kernel/sched_fair.c: `sysctl_sched_latency` /
/// `sysctl_sched_min_granularity`, 5 ms / 1 ms): from this many runnable tasks on a runqueue
/// a preempting wake-up makes the preempted task the `last` buddy (`LAST_BUDDY`).
pub const SCHED_NR_LATENCY: usize = 5;

/// The scaled granularity for a guest with `cpus` online vCPUs: × (1 + ilog2(min(cpus, 8)))
/// (`SCHED_TUNABLESCALING_LOG`, kernel/sched/fair.c `get_update_sysctl_factor`).
pub fn wakeup_granularity_ns(cpus: usize) -> Ns {
    let n = cpus.clamp(1, 8) as u32;
    WAKEUP_GRANULARITY_BASE_NS * (1 + n.ilog2()) as Ns
}

impl World {
    /// `check_preempt_wakeup`: thread `t` was just queued on busy vCPU `u` by code running on
    /// vCPU `waker`; `slept_ns` is how long `t` slept (None: a new or migrating thread, which does
    /// not preempt). If `t` slept longer than the wakeup granularity it preempts `u`'s current
    /// thread: a remote `u` gets a reschedule IPI (`resched_task` → `smp_send_reschedule`); the
    /// waker's own vCPU, only under a 2.6.32 `wake_placement` (above), is marked without one.
    pub(crate) fn check_preempt_wakeup(&mut self, waker: VcpuId, u: VcpuId, t: ThreadId, slept_ns: Option<Ns>) {
        let Some(cur) = self.vcpus[u].cur else { return };
        let Some(slept) = slept_ns else { return };
        if slept <= self.wakeup_granularity_on(u) {
            return;
        }
        if waker == u {
            return self.check_preempt_local(u, cur, t);
        }
        if self.resched_ipi_already_sent(u) {
            return;
        }
        let last_buddy = self.last_buddy_scale(u);
        self.charge_exit(waker, ExitReason::Ipi);
        self.hold_rq_lock_for_ipi(waker, u);
        let left_ns = self.costs.ipi_handler_ns + self.vipi_message_ns(waker, u);
        let now = self.now();
        self.deliver_irq(u, IrqWork { left_ns, action: IrqAction::Resched(t, last_buddy), sent_at: now });
    }

    /// `resched_task`'s test under `guest.resched_ipi_once`: true if a wake-up's reschedule IPI
    /// already went to vCPU `u` since it last scheduled (its current task, or its idle task,
    /// has need-resched set), so no other is sent; otherwise marks it sent and returns false.
    /// Always false without the option (one IPI per wake-up).
    pub(crate) fn resched_ipi_already_sent(&mut self, u: VcpuId) -> bool {
        if !self.vms[self.vcpus[u].vm].resched_ipi_once {
            return false;
        }
        std::mem::replace(&mut self.vcpus[u].resched_ipi_sent, true)
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
            // The wake list is a 3.0 path, never with the 2.6.32 placements (scenario
            // validation), so no last buddy.
            self.resched_ipi(u, t, false);
        }
    }

    /// Threads on vCPU `u`'s wake list go to the other vCPUs (`u` went or is going offline).
    pub(crate) fn hand_on_wake_list(&mut self, u: VcpuId) {
        for (t, _) in std::mem::take(&mut self.vcpus[u].wake_list) {
            self.wake_thread(t, None);
        }
    }

    /// `check_preempt_wakeup`'s `scale` for a wake-up just queued on vCPU `u`: under a 2.6.32
    /// placement, whether `u` has `SCHED_NR_LATENCY` or more runnable threads (its runqueue,
    /// the woken thread included, and the running one: `cfs_rq->nr_running`). Always false
    /// under the default placement (no last buddy).
    fn last_buddy_scale(&self, u: VcpuId) -> bool {
        let vc = &self.vcpus[u];
        self.vms[vc.vm].wake_placement.is_2632() && vc.runq.len() + vc.cur.is_some() as usize >= SCHED_NR_LATENCY
    }

    /// The wakeup granularity of vCPU `u`'s guest, scaled by its online vCPUs.
    fn wakeup_granularity_on(&self, u: VcpuId) -> Ns {
        let vm = self.vcpus[u].vm;
        wakeup_granularity_ns(self.vms[vm].vcpus.iter().filter(|&&x| self.vcpus[x].online).count())
    }

    /// `scheduler_ipi` on vCPU `u` for woken thread `t`: switch to `t` if it still waits there.
    /// The preempted thread goes to the back of the runqueue, or, if `last_buddy`, second,
    /// right behind `t` (2.6.32's `LAST_BUDDY`, above). Returns true if it switched.
    pub(crate) fn resched_ipi(&mut self, u: VcpuId, t: ThreadId, last_buddy: bool) -> bool {
        // The handler consumes the need-resched mark here: the model drops a preemption that
        // finds preemption disabled, instead of keeping it for `preempt_enable`.
        self.vcpus[u].resched_ipi_sent = false;
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
        if last_buddy {
            self.vcpus[u].runq.insert(1, cur);
        } else {
            self.vcpus[u].runq.push_back(cur);
        }
        self.guest_pick(u);
        true
    }

    /// The preempting wake-up of `t` onto its waker's own busy vCPU `u` (running `cur`), under a
    /// 2.6.32 `wake_placement`: `t` goes to the front of the runqueue and `cur` is marked to give
    /// way at its next preemption point (`resched_task` on the local CPU: no IPI). The first such
    /// wake-up wins until the vCPU switches (`test_tsk_need_resched`). With `SCHED_NR_LATENCY`
    /// or more runnable threads, counted now, `cur` will be the last buddy when it gives way.
    fn check_preempt_local(&mut self, u: VcpuId, cur: ThreadId, t: ThreadId) {
        if !self.vms[self.vcpus[u].vm].wake_placement.is_2632() || cur == t || self.vcpus[u].need_resched.is_some() {
            return;
        }
        let Some(pos) = self.vcpus[u].runq.iter().position(|&x| x == t) else { return };
        self.vcpus[u].runq.remove(pos);
        self.vcpus[u].runq.push_front(t);
        let last_buddy = self.last_buddy_scale(u);
        self.vcpus[u].need_resched = Some((t, last_buddy));
    }

    /// A preemption point of vCPU `v`'s current thread (an instruction boundary of its program,
    /// or the return from an interrupt handler): if a local wake-up marked it
    /// (`check_preempt_local`), it gives way to the woken thread, as `resched_ipi` does. A thread
    /// with preemption disabled keeps the mark until it enables it (its next preemption point
    /// after that); a thread that blocks or exits first drops it (the woken thread is at the
    /// front of the runqueue anyway). Returns true if the vCPU switched threads.
    pub(crate) fn preempt_local(&mut self, v: VcpuId) -> bool {
        let Some((t, last_buddy)) = self.vcpus[v].need_resched else { return false };
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
        self.resched_ipi(v, t, last_buddy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Simulation;

    /// A 2-vCPU VM (`placement`) with four threads that only compute, not yet run: the tests
    /// set the vCPUs' threads by hand.
    fn vm(placement: &str) -> Simulation {
        vm_with(placement, 4)
    }

    /// As `vm`, with `threads` threads (`guest::wakeaffine`'s test VM).
    fn vm_with(placement: &str, threads: usize) -> Simulation {
        crate::guest::wakeaffine::tests::vm(placement, threads as u32)
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
        assert_eq!(w.vcpus[0].need_resched, Some((1, false)), "need-resched set on the waker's own vCPU");
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
        assert_eq!(w.vcpus[0].need_resched, Some((1, false)), "the mark waits");
        w.threads[0].act = Activity::Ready;
        assert!(w.preempt_local(0));
        assert_eq!(w.vcpus[0].cur, Some(1));
    }

    /// vCPU 0 runs thread 0 with threads `2..2 + queued` behind it; thread 1, last on vCPU 0,
    /// slept 3 ms (past the 2 ms granularity of 2 vCPUs); thread 0 wakes it (sync). Then the
    /// waker reaches a preemption point. Returns vCPU 0's runqueue after the switch.
    fn local_preemption_with_queued(placement: &str, queued: usize) -> (Option<ThreadId>, Vec<ThreadId>) {
        let mut sim = vm_with(placement, 2 + queued + 1);
        let w = sim.world();
        w.q.advance_to(100 * WAKEUP_GRANULARITY_BASE_NS);
        let now = w.now();
        w.vcpus[0].cur = Some(0);
        w.vcpus[0].runq = (2..2 + queued).collect();
        for t in 0..2 + queued {
            w.threads[t].vcpu = 0;
        }
        let other = 2 + queued;
        w.vcpus[1].cur = Some(other);
        w.threads[other].vcpu = 1;
        w.threads[1].act = Activity::Blocked;
        w.threads[1].blocked_at = now - 3 * WAKEUP_GRANULARITY_BASE_NS;
        w.wake_thread_from(1, Some(0), Some(0));
        assert_eq!(w.threads[1].vcpu, 0, "{placement}: the affine wake-up stays on the waker's vCPU");
        assert!(w.preempt_local(0), "{placement}: the sleeper preempts");
        (w.vcpus[0].cur, w.vcpus[0].runq.iter().copied().collect())
    }

    #[test]
    fn with_five_runnable_threads_the_preempted_waker_runs_right_after_the_woken_one() {
        for placement in ["affine", "affine_idle_sibling"] {
            // Running thread 0, queued 2, 3, 4, and woken 1: five runnable (sched_nr_latency).
            let (cur, runq) = local_preemption_with_queued(placement, 3);
            assert_eq!(cur, Some(1), "{placement}");
            assert_eq!(runq, vec![0, 2, 3, 4], "{placement}: the last buddy is next");
        }
    }

    #[test]
    fn with_four_runnable_threads_the_preempted_waker_goes_to_the_back() {
        // Running thread 0, queued 2, 3, and woken 1: four, below sched_nr_latency.
        let (cur, runq) = local_preemption_with_queued("affine", 2);
        assert_eq!(cur, Some(1));
        assert_eq!(runq, vec![2, 3, 0]);
    }

    #[test]
    fn with_two_runnable_threads_the_preempted_waker_goes_to_the_back() {
        let (cur, runq) = local_preemption_with_queued("affine", 0);
        assert_eq!(cur, Some(1));
        assert_eq!(runq, vec![0]);
    }

    #[test]
    fn a_remote_preempting_wakeup_with_five_runnable_threads_makes_the_preempted_thread_the_last_buddy() {
        let mut sim = vm_with("affine", 6);
        let w = sim.world();
        w.q.advance_to(100 * WAKEUP_GRANULARITY_BASE_NS);
        w.vcpus[1].cur = Some(0);
        w.vcpus[1].runq = [2, 3, 4, 1].into_iter().collect();
        for t in 0..5 {
            w.threads[t].vcpu = 1;
        }
        w.vcpus[0].cur = Some(5);
        assert!(w.last_buddy_scale(1), "five runnable on vCPU 1");
        assert!(w.resched_ipi(1, 1, true));
        assert_eq!(w.vcpus[1].cur, Some(1));
        assert_eq!(w.vcpus[1].runq.iter().copied().collect::<Vec<_>>(), vec![0, 2, 3, 4]);
        w.vcpus[1].runq.pop_front();
        assert!(!w.last_buddy_scale(1), "four runnable: no buddy");
    }

    #[test]
    fn the_default_placement_never_sets_a_last_buddy() {
        let mut sim = vm_with("prev_or_idle", 6);
        let w = sim.world();
        w.vcpus[1].cur = Some(0);
        w.vcpus[1].runq = [1, 2, 3, 4].into_iter().collect();
        assert!(!w.last_buddy_scale(1));
    }

    #[test]
    fn wakeup_granularity_scales_with_the_log_of_the_cpu_count_up_to_eight() {
        assert_eq!(wakeup_granularity_ns(1), 1_000_000);
        assert_eq!(wakeup_granularity_ns(2), 2_000_000);
        assert_eq!(wakeup_granularity_ns(4), 3_000_000);
        assert_eq!(wakeup_granularity_ns(8), 4_000_000);
        assert_eq!(wakeup_granularity_ns(64), 4_000_000);
    }

    /// A producer bound to vCPU 0 computes 5 ms, then puts one message into each of three
    /// queues at once; their three consumers, bound to vCPU 1, have slept since the start
    /// (longer than the 2-ms wakeup granularity).
    /// `hog`: a thread keeps vCPU 1 busy (the wake-ups preempt it) or vCPU 1 is halted.
    /// Returns the reschedule IPIs sent.
    fn three_wakeups(once: bool, hog: bool) -> u64 {
        let hog = if hog { r#"  { threads = 1, affinity = [1], bind = true, program = [{ op = "compute", us = 20000 }] },"# } else { "" };
        let consumer = |q: &str| format!(r#"  {{ threads = 1, affinity = [1], bind = true, program = [{{ op = "get", queue = "{q}" }}, {{ op = "compute", us = 10 }}] }},"#);
        let text = format!(
            r#"
[host]
cores_per_socket = 2
[hypervisor]
scheduler = "credit"
[[vms]]
vcpus = 2
pin = [0, 1]
guest = {{ resched_ipi_once = {once} }}
[[vms.workloads]]
kind = "custom"
groups = [
  {{ threads = 1, affinity = [0], bind = true, program = [{{ op = "compute", us = 5000 }}, {{ op = "put", queue = "q1" }}, {{ op = "put", queue = "q2" }}, {{ op = "put", queue = "q3" }}] }},
{}
{}
{}
{hog}
]
"#,
            consumer("q1"),
            consumer("q2"),
            consumer("q3")
        );
        let r = crate::sim::tests::run_text(&text, None);
        assert!(r.vms[0].finished);
        r.vms[0].exits["ipi"]
    }

    /// Linux's `resched_task` sends nothing to a CPU whose current task already has
    /// need-resched set: three wake-ups in a row onto a halted or a busy vCPU send one IPI under
    /// `resched_ipi_once`, and one each by default.
    #[test]
    fn a_vcpu_already_sent_a_reschedule_ipi_gets_no_other_until_it_schedules_under_resched_ipi_once() {
        for hog in [false, true] {
            assert_eq!(three_wakeups(false, hog), 3, "default, busy target: {hog}");
            assert_eq!(three_wakeups(true, hog), 1, "resched_ipi_once, busy target: {hog}");
        }
    }
}
