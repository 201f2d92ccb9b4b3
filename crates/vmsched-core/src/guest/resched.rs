//! Wakeup preemption across vCPUs: the reschedule IPI to a busy remote vCPU.
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
//! Only wakeups onto a vCPU other than the waker's own send an IPI; the waker's vCPU is never
//! a target, so 1-vCPU guests send none. Wakeups onto an idle vCPU keep the path of
//! `guest/kernel.rs wake_thread` (an IPI exit on the waker, a wake of the halted target).
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
//! Leaves out: wakeup preemption on the waker's own vCPU (the woken thread waits there for
//! the slice end, as before); vruntime itself (sleepers shorter than the granularity never
//! preempt, longer ones always do); preemption deferred to `preempt_enable` (a
//! handler that finds the current thread with preemption disabled leaves the woken thread
//! queued until the slice end).

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
    pub(crate) fn resched_ipi(&mut self, u: VcpuId, t: ThreadId) {
        let Some(cur) = self.vcpus[u].cur else { return };
        if cur == t || self.threads[cur].act.preempt_disabled() {
            return;
        }
        let Some(pos) = self.vcpus[u].runq.iter().position(|&x| x == t) else { return };
        self.vcpus[u].runq.remove(pos);
        self.vcpus[u].runq.push_front(t);
        self.advance(u);
        let cur = self.vcpus[u].cur.take().expect("checked above");
        self.threads[cur].last_ran = Some(self.now());
        self.vcpus[u].runq.push_back(cur);
        self.guest_pick(u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakeup_granularity_scales_with_the_log_of_the_cpu_count_up_to_eight() {
        assert_eq!(wakeup_granularity_ns(1), 1_000_000);
        assert_eq!(wakeup_granularity_ns(2), 2_000_000);
        assert_eq!(wakeup_granularity_ns(4), 3_000_000);
        assert_eq!(wakeup_granularity_ns(8), 4_000_000);
        assert_eq!(wakeup_granularity_ns(64), 4_000_000);
    }
}
