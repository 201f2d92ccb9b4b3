//! The idle pCPU's C-state: the latency with which a pCPU that has nothing to run answers an
//! asynchronous event.
//!
//! Models: an idle pCPU waits in a C-state (Xen's idle loop, xen/arch/x86/domain.c
//! `idle_loop`: `pm_idle()`, then `do_tasklet()` and `do_softirq()`). An event that reaches
//! it from outside - the event-check IPI of a scheduler tickle (`World::tickle`), a device
//! interrupt (`hv::tasklet`), the IPI that asks for a vCPU's lazily held state
//! (`hv::lazy_switch`) - is handled only when the core has left the state,
//! `host.costs.idle_exit_latency_ns` after it arrived. Events that arrive while the core is
//! already on its way out are handled with the first. On leaving, the interrupts' work comes
//! first (the device interrupts' tasklets), then a pending reschedule, in `idle_loop`'s order.
//! Until then the pCPU counts as idle (its time is idle time, and credit still sees it among
//! its idlers).
//!
//! Sources: Linux drivers/idle/intel_idle.c `nehalem_cstates` (exit latencies C1 3 us, C1E
//! 10 us, C3 20 us, C6 200 us; Xen's xen/arch/x86/cpu/mwait-idle.c carries the same table);
//! seed 001's host sets C1's (scenarios/consolidation-specvirt.toml).
//!
//! Leaves out: the choice among states (ACPI `_CST` and the menu governor, whose prediction
//! of the idle time picks a state; one latency here), the state's entry cost and residency,
//! and the timer interrupts of an idle pCPU (Xen stops the scheduler tick on an idle pCPU,
//! `sched_tick_suspend`).

use crate::engine::Ns;
use crate::sim::state::PcpuId;
use crate::sim::{Ev, World};

impl World {
    /// Whether pCPU `p` waits in its C-state now: nothing to run, no tasklet and no
    /// hypervisor work of its own under way, and the latency is modelled.
    fn in_cstate(&self, p: PcpuId) -> bool {
        let pc = &self.pcpus[p];
        self.costs.idle_exit_latency_ns > 0
            && pc.idle_since.is_some()
            && pc.cur.is_none()
            && pc.tasklet.busy_since.is_none()
            && pc.lazy.idle_hv_until <= self.q.now()
    }

    /// An event reaches pCPU `p` at `arrive`. If `p` waits in its C-state, returns when it is
    /// handled (the exit under way, or one that starts now) and makes sure `cstate_exit` runs
    /// then; None if `p` can handle it at once.
    pub(crate) fn cstate_wake(&mut self, p: PcpuId, arrive: Ns) -> Option<Ns> {
        if !self.in_cstate(p) {
            return None;
        }
        if let Some(at) = self.pcpus[p].cstate_exit_at {
            if at >= arrive {
                return Some(at);
            }
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
        self.cstate_wake(p, arrive).map_or(0, |at| at - arrive)
    }

    /// `p` has left its C-state: the device interrupts that reached it start their tasklets,
    /// then a pending reschedule is served.
    pub(crate) fn cstate_exit(&mut self, p: PcpuId) {
        if self.pcpus[p].cstate_exit_at != Some(self.q.now()) {
            return;
        }
        self.pcpus[p].cstate_exit_at = None;
        if !self.pcpus[p].tasklet.queue.is_empty() && self.pcpus[p].cur.is_none() && !self.in_tasklet(p) {
            self.idle_pcpu_tasklets(p);
        }
        self.serve_resched(p);
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{Ns, NS_PER_MS, NS_PER_US};
    use crate::scenario::from_toml_str;
    use crate::sim::state::{Activity, IrqAction, IrqWork, RunState};
    use crate::sim::{Overrides, Simulation};

    /// Two pCPUs: vCPU `w` computes on `p`, vCPU `u` is halted and `q` idle (as
    /// `hv::machine`'s `guest_wake_beside_an_idle_pcpu`). At 15 ms `w`'s code wakes a thread
    /// onto `u`, queued on `p`: `u` (BOOST) outranks `w`, so `p` switches to it when `w`'s
    /// exit is handled, and the idle `q` is tickled too (Xen 4.1 `__runq_tickle`). Returns
    /// `w`'s run state 10 µs later, `p`, `q` and `q`'s C-state exits meanwhile.
    fn wake_beside_an_idle_pcpu(idle_exit_latency_ns: Ns) -> (RunState, usize, usize, u64) {
        let text = format!(
            r#"
duration_ms = 50
[host]
cores_per_socket = 2
costs = {{ idle_exit_latency_ns = {idle_exit_latency_ns} }}
[hypervisor]
scheduler = "credit"
params = {{ wake = "xen41", ratelimit_us = 0, load_balance_ratelimit_us = 0 }}
[[vms]]
vcpus = 2
workloads = [{{ kind = "custom", groups = [
  {{ threads = 1, program = [{{ op = "forever", body = [{{ op = "compute", us = 1000 }}] }}] }},
  {{ threads = 1, program = [{{ op = "sleep", us = 1000000000 }}] }},
] }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(15 * NS_PER_MS).unwrap();
        let w_ = s.world();
        let (w, u) = if w_.vcpus[0].cur.is_some() { (0, 1) } else { (1, 0) };
        let RunState::Running(p) = w_.vcpus[w].run else { panic!("the computing vCPU runs") };
        let q = 1 - p;
        assert_eq!((w_.vcpus[u].run, w_.pcpus[q].cur), (RunState::Blocked, None), "setup: u halted, q idle");
        w_.vcpus[u].last_pcpu = p;
        let exits_before = w_.pcpus[q].cstate_exits;
        let sleeper = 1;
        w_.threads[sleeper].act = Activity::Ready;
        w_.enqueue_thread(sleeper, u, Some(w), Some(NS_PER_MS));
        s.run_until(15 * NS_PER_MS + 10 * NS_PER_US).unwrap();
        let w_ = s.world();
        assert_eq!(w_.vcpus[u].run, RunState::Running(p), "u runs where it was woken");
        (w_.vcpus[w].run, p, q, w_.pcpus[q].cstate_exits - exits_before)
    }

    #[test]
    fn an_idler_that_leaves_its_c_state_after_the_preempted_vcpus_tail_steals_it() {
        // At once (latency 0), `q` takes its event-check IPI 1 µs after the tickle, while the
        // preempted `w` is still in `p`'s scheduling tail, and finds nothing to steal: `w`
        // waits on `p`. Out of C1 3 µs later it finds `w` saved and steals it.
        let (w_run, _, q, exits) = wake_beside_an_idle_pcpu(0);
        assert_eq!((w_run, exits), (RunState::Runnable, 0), "without the latency w waits on p (q at {q})");
        let (w_run, _, q, exits) = wake_beside_an_idle_pcpu(3_000);
        assert_eq!((w_run, exits), (RunState::Running(q), 1), "out of C1, q steals the preempted w");
    }

    /// One pCPU, idle, its pass-through VM's vCPU halted; a device interrupt at 1 ms. Returns
    /// whether the softirq tasklet had started 1 ns before the latency ran out, and whether it
    /// had by then (checked 1 ns after), with the C-state exits meanwhile.
    fn interrupt_on_an_idle_pcpu(idle_exit_latency_ns: Ns) -> (bool, bool, u64) {
        let text = format!(
            r#"
duration_ms = 10
[host]
cores_per_socket = 1
costs = {{ idle_exit_latency_ns = {idle_exit_latency_ns} }}
[hypervisor]
params = {{ tasklet = "softirq", ratelimit_us = 0 }}
[[vms]]
vcpus = 1
io_path = "passthrough"
workloads = [{{ kind = "server", role = "web", rate_per_s = 1.0 }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(NS_PER_MS).unwrap();
        let (t0, exits_before) = {
            let w = s.world();
            assert!(w.vcpus[0].run == RunState::Blocked && w.pcpus[0].cur.is_none(), "setup: halted vCPU, idle pCPU");
            let now = w.now();
            let exits = w.pcpus[0].cstate_exits;
            w.device_interrupt(0, IrqWork { left_ns: 1000, action: IrqAction::Nothing, sent_at: now });
            (now, exits)
        };
        let started = |s: &mut Simulation| {
            let w = s.world();
            w.pcpus[0].tasklet.busy_since.is_some() || w.pcpus[0].tasklet.queue.is_empty()
        };
        s.run_until(t0 + idle_exit_latency_ns.saturating_sub(1)).unwrap();
        let before = idle_exit_latency_ns > 0 && started(&mut s);
        s.run_until(t0 + idle_exit_latency_ns + 1).unwrap();
        let after = started(&mut s);
        (before, after, s.world().pcpus[0].cstate_exits - exits_before)
    }

    #[test]
    fn a_device_interrupt_on_an_idle_pcpu_is_handled_after_the_exit_latency() {
        assert_eq!(interrupt_on_an_idle_pcpu(3_000), (false, true, 1));
        assert_eq!(interrupt_on_an_idle_pcpu(0), (false, true, 0));
    }
}
