//! The idle pCPU's C-state: the latency with which a pCPU that has nothing to run answers an
//! asynchronous event.
//!
//! Models: an idle pCPU waits in a C-state (Xen's idle loop, xen/arch/x86/domain.c
//! `idle_loop`: `pm_idle()`, then `do_tasklet()` and `do_softirq()`). An event that reaches
//! it from outside - the event-check IPI of a scheduler tickle (`World::tickle`), a device
//! interrupt (`hv::tasklet`), the IPI that asks for a vCPU's lazily held state
//! (`hv::lazy_switch`) - is handled only when the core has left the state,
//! `host.costs.idle_exit_latency_ns` after it arrived. Events that arrive while the core is
//! already on its way out are handled with the first. Whether the core waits in its C-state
//! is judged when the event arrives (an event-check IPI lands `phys_ipi_ns` after the tickle).
//! On leaving, the interrupts' work comes first (the device interrupts' tasklets), then a
//! pending reschedule, in `idle_loop`'s order. Until then the pCPU counts as idle (its time is
//! idle time, and credit still sees it among its idlers).
//!
//! Sources: Linux drivers/idle/intel_idle.c `nehalem_cstates` (exit latencies C1 3 us, C1E
//! 10 us, C3 20 us, C6 200 us; Xen's xen/arch/x86/cpu/mwait-idle.c carries the same table);
//! seed 001's host sets C1's (scenarios/consolidation-specvirt.toml).
//!
//! Tests: `hv::machine` (an idler out of C1 after the preempted vCPU's scheduling tail steals
//! it) and `hv::tasklet` (a device interrupt on an idle pCPU is handled after the exit).
//!
//! Leaves out: the choice among states (ACPI `_CST` and Xen 4.1's menu governor,
//! xen/arch/x86/acpi/cpuidle_menu.c, which takes the deepest state whose residency fits the
//! predicted idle time and whose exit latency x 8 fits the average interrupt interval; one
//! latency here: at seed 001's peak only C1 passes, docs/model.md §2.8), the state's entry
//! cost and residency, and the timer interrupts of an idle pCPU (Xen stops the scheduler
//! tick on an idle pCPU, `sched_tick_suspend`).

use crate::engine::Ns;
use crate::sim::state::PcpuId;
use crate::sim::{Ev, World};

impl World {
    /// Whether pCPU `p` waits in its C-state now: nothing to run, no tasklet and no
    /// hypervisor work of its own under way, and the latency is modelled. `idle_since` is set
    /// only while the pCPU runs neither a vCPU nor tasklets (`pcpu_idle_start`/`_end`).
    fn in_cstate(&self, p: PcpuId) -> bool {
        let pc = &self.pcpus[p];
        debug_assert!(pc.idle_since.is_none() || (pc.cur.is_none() && pc.tasklet.busy_since.is_none()));
        self.costs.idle_exit_latency_ns > 0 && pc.idle_since.is_some() && pc.lazy.idle_hv_until <= self.q.now()
    }

    /// An event reaches pCPU `p` at `arrive` (now, or for a sender that waits on it, when its
    /// IPI lands). If `p` waits in its C-state, returns when it is handled (the exit under
    /// way, or one that starts then) and makes sure `cstate_exit` runs then; None if `p` can
    /// handle it at once.
    pub(crate) fn cstate_wake(&mut self, p: PcpuId, arrive: Ns) -> Option<Ns> {
        if !self.in_cstate(p) {
            return None;
        }
        if let Some(at) = self.pcpus[p].cstate_exit_at {
            return Some(at);
        }
        let at = arrive + self.costs.idle_exit_latency_ns;
        self.pcpus[p].cstate_exit_at = Some(at);
        self.pcpus[p].cstate_exits += 1;
        self.q.push(at, Ev::CstateExit(p));
        Some(at)
    }

    /// How much later than a running pCPU idle pCPU `p` answers an IPI sent now (for a
    /// sender that waits on it).
    pub(crate) fn cstate_delay_ns(&mut self, p: PcpuId, arrive: Ns) -> Ns {
        self.cstate_wake(p, arrive).map_or(0, |at| at.saturating_sub(arrive))
    }

    /// `p` has left its C-state: the device interrupts that reached it start their tasklets,
    /// then a pending reschedule is served.
    pub(crate) fn cstate_exit(&mut self, p: PcpuId) {
        debug_assert_eq!(self.pcpus[p].cstate_exit_at, Some(self.q.now()), "one exit under way per pCPU, never replaced");
        self.pcpus[p].cstate_exit_at = None;
        if !self.pcpus[p].tasklet.queue.is_empty() && self.pcpus[p].cur.is_none() && !self.in_tasklet(p) {
            self.idle_pcpu_tasklets(p);
        }
        self.serve_resched(p);
    }
}
