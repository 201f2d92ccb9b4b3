//! Device interrupts of pass-through devices (SR-IOV virtual functions, seed 001 §3, §4.2)
//! and the tasklet that turns each into a virtual interrupt (seed 001 Table 2:
//! `hvm_do_IRQ_dpci` → `tasklet_schedule(&dpci->dirq_tasklet)` → `tasklet_enqueue` →
//! `cpu_raise_softirq(cpu, SCHEDULE_SOFTIRQ)`).
//!
//! Models:
//! - the physical interrupt arrives on the pCPU the target vCPU (the VM's `irq_vcpu`) runs on
//!   or last ran on: Xen points an MSI's affinity at its destination vCPU's processor
//!   whenever that vCPU moves (xen/arch/x86/hvm/hvm.c `hvm_migrate_pirq`, `irq_set_affinity(desc,
//!   cpumask_of(v->processor))`);
//! - if that pCPU runs a vCPU, the vCPU takes an external-interrupt exit (`exit_ext_intr_ns`);
//!   an idle pCPU takes the interrupt without a VM exit (seed 001 §4.2 a, cases a–c). The
//!   exit is handled first, in either tasklet mode: `vmx_vmexit_handler` ->
//!   EXIT_REASON_EXTERNAL_INTERRUPT -> `vmx_do_extint` -> `do_IRQ` -> `hvm_do_IRQ_dpci` ->
//!   `tasklet_schedule` only queues the tasklet and raises a softirq (xen/arch/x86/hvm/vmx/vmx.c);
//!   the softirqs (SCHEDULE, TASKLET) run on the way back to the guest, `do_softirq` before
//!   VM entry (xen/arch/x86/hvm/vmx/entry.S `.Lvmx_process_softirqs`). So the tasklet work
//!   waits for the hypervisor work the interrupted vCPU owes (`hv_work_ends`), which that vCPU
//!   pays on its own time before the scheduler call (`tasklets_after_exit`);
//! - the tasklet costs `dpci_tasklet_ns` of hypervisor time and then delivers the virtual
//!   interrupt through `deliver_irq` (injected directly if the target runs on this pCPU; an
//!   IPI and an exit if it runs elsewhere; a wake-up if it is halted; pending if queued);
//! - where the tasklet runs is the scheduler's `tasklet_mode()`:
//!   - `IdleVcpu` (Xen 4.1 tasklets, common/tasklet.c: "run in VCPU context (specifically,
//!     the idle VCPU's context)"): once the exit is handled, the scheduler is called with
//!     `Reason::Tasklet` (SCHEDULE_SOFTIRQ raised by `tasklet_enqueue`), re-queues
//!     the interrupted vCPU and switches to the idle vCPU (a scheduler call and a context
//!     switch, `world_switch_ns`); the idle vCPU runs the queued tasklets one after another
//!     (`do_tasklet`), then raises SCHEDULE_SOFTIRQ again: a second scheduler call that picks
//!     the runqueue head (a second context switch; the interrupted vCPU went to the back of
//!     its priority class, so often another vCPU). On an idle pCPU the first call finds the
//!     idle vCPU already running: a scheduler call (`sched_call_ns`) and no switch. Either
//!     way the idle vCPU runs the tasklets at BOOST priority, so the pCPU is not one of
//!     credit's idlers meanwhile, and a vCPU woken onto it tickles an idle pCPU instead
//!     (`hv/sched/credit.rs`, `tasklet_boost`). Order on a busy pCPU: exit, switch to the
//!     idle vCPU, tasklets, switch out. Until session 14 the model called the scheduler at
//!     the interrupt and left the exit's handling owed by the interrupted vCPU, paid when it
//!     next ran: the tasklet ran `exit_ext_intr_ns` too early;
//!   - `Softirq` (seed 001 §5.2: "running in either virtual CPU context or in softirq
//!     context"; Xen `softirq_tasklet_init`): the tasklet runs in softirq context when the
//!     exit's handling ends (`do_softirq` on the way back to the guest), on the interrupted
//!     vCPU's time (hypervisor time charged to it) or on the idle pCPU; no scheduler call, no
//!     switch. It delivers then, and a SCHEDULE_SOFTIRQ its wake-up raises on this pCPU is
//!     handled at once in the same `__do_softirq` loop (xen/common/softirq.c: the loop runs
//!     until nothing is pending; `cpu_raise_softirq` sends no IPI to the local CPU), so a
//!     woken vCPU that outranks the interrupted one runs here before an idle pCPU tickled by
//!     the same wake-up (an event-check IPI away) can steal it (`csched_runq_steal`). Until
//!     session 7 the model delivered at the interrupt and took the local reschedule as an
//!     IPI deferred behind the exit: the idler always won, and the woken vCPU migrated.
//! - while a pCPU runs tasklet work without a vCPU, its time is hypervisor time, and a
//!   reschedule request for it waits until the tasklets are done.
//!
//! Leaves out: Xen's one tasklet per domain that drains all of the domain's pending pirqs in
//! one run (here one tasklet run per interrupt); interrupt coalescing in the NIC; a second
//! device interrupt during the exit's handling is charged as another exit (in Xen it is
//! taken in the hypervisor); a scheduler call that another event makes during the exit's
//! handling (a slice end, a reschedule IPI at the same instant) is a call of its own, and
//! the idle-vCPU switch then waits for the hypervisor work of whatever it dispatched (Xen
//! handles both pending softirqs in one `schedule()`).

use std::collections::VecDeque;

use crate::engine::{Ns, Timer};
use crate::host::ExitReason;
use crate::hv::sched::{Reason, TaskletMode};
use crate::sim::state::*;
use crate::sim::{Ev, World};

/// Per-pCPU tasklet state.
#[derive(Debug, Default)]
pub struct PcpuTasklets {
    /// Virtual interrupts whose tasklet is queued here, oldest first: (target vCPU, work).
    pub queue: VecDeque<(VcpuId, IrqWork)>,
    /// The pCPU runs tasklet work without a vCPU (idle vCPU, or softirq on an idle pCPU)
    /// since this time.
    pub busy_since: Option<Ns>,
    pub timer: Timer,
    /// Physical device interrupts taken by this pCPU.
    pub irqs: u64,
    /// The tasklets running without a vCPU were queued in an external-interrupt exit (the
    /// idle-vCPU switch of a busy pCPU): their time and the switch out of the idle vCPU
    /// after them belong to that exit (`Pcpu::hv_by_exit_ns`; as `hv::sched::switch_causes`
    /// counts both switches under it).
    pub after_exit: bool,
}

impl PcpuTasklets {
    /// The slot of `Pcpu::hv_by_exit_ns` the running tasklets' time belongs to.
    fn exit_slot(&self) -> usize {
        ExitReason::slot(self.after_exit.then_some(ExitReason::ExtIntr))
    }
}

impl World {
    fn tasklet_mode(&self) -> TaskletMode {
        self.sched.as_ref().map_or(TaskletMode::Softirq, |s| s.tasklet_mode())
    }

    /// The vCPU that receives a VM's device interrupts: `irq_vcpu`, or the first online vCPU
    /// if that one is offline.
    pub(crate) fn irq_vcpu_of(&self, vm: VmId) -> VcpuId {
        let vcpus = &self.vms[vm].vcpus;
        let want = vcpus[self.vms[vm].irq_vcpu as usize];
        if self.vcpus[want].online {
            want
        } else {
            vcpus.iter().copied().find(|&u| self.vcpus[u].online).unwrap_or(vcpus[0])
        }
    }

    /// A device of VM `vm` raises an interrupt whose guest handler does `work`. Emulated
    /// devices inject it directly (the device model's event channel); pass-through devices
    /// go through a physical interrupt and the dpci tasklet.
    pub(crate) fn device_interrupt(&mut self, vm: VmId, work: IrqWork) {
        let target = self.irq_vcpu_of(vm);
        if !self.vms[vm].passthrough {
            return self.deliver_irq(target, work);
        }
        let p = match self.vcpus[target].run {
            RunState::Running(q) => q,
            _ => self.vcpus[target].last_pcpu,
        };
        self.pcpus[p].tasklet.irqs += 1;
        if let Some(x) = self.pcpus[p].cur {
            self.charge_exit(x, ExitReason::ExtIntr);
        }
        self.pcpus[p].tasklet.queue.push_back((target, work));
        if self.pcpus[p].tasklet.busy_since.is_some() {
            return;
        }
        match (self.tasklet_mode(), self.pcpus[p].cur) {
            (TaskletMode::Softirq, Some(x)) => {
                // The tasklet runs when the exit's handling ends (`do_softirq` on the way
                // back to the guest) and delivers then; the pCPU keeps running `x`. A tasklet
                // arriving while such a run is pending joins it: the timer moves to the new end.
                self.advance(x);
                self.owe_hv(x, Some(ExitReason::ExtIntr), self.costs.dpci_tasklet_ns);
                self.arm_exec(x);
                self.tasklets_after_exit(p);
            }
            (TaskletMode::IdleVcpu, Some(_)) => self.idle_vcpu_tasklets(p),
            (_, None) => {
                // An idle pCPU takes the interrupt when it has left its C-state (`hv::cstate`).
                let now = self.now();
                if self.cstate_wake(p, now).is_none() {
                    self.idle_pcpu_tasklets(p);
                }
            }
        }
    }

    /// Idle pCPU `p` (no vCPU) runs the tasklets queued by the device interrupts it took: in
    /// softirq context at once, or in the idle vCPU after a scheduler call.
    pub(crate) fn idle_pcpu_tasklets(&mut self, p: PcpuId) {
        match self.tasklet_mode() {
            TaskletMode::Softirq => {
                let at = self.now() + self.hv_cost_ns(p, self.costs.dpci_tasklet_ns);
                self.start_tasklets(p, at)
            }
            TaskletMode::IdleVcpu => self.idle_vcpu_tasklets(p),
        }
    }

    /// The queued tasklets of pCPU `p` run when the hypervisor work it does for its current
    /// vCPU (the external-interrupt exit's handling) ends: the SCHEDULE and TASKLET softirqs
    /// are handled on the way back to the guest (`do_softirq` before VM entry, Xen
    /// xen/arch/x86/hvm/vmx/entry.S `.Lvmx_process_softirqs`). A tasklet queued meanwhile
    /// joins them: the timer moves to the new end.
    fn tasklets_after_exit(&mut self, p: PcpuId) {
        let at = self.hv_work_ends(p).unwrap_or(self.now());
        self.q.arm(&mut self.pcpus[p].tasklet.timer, at, Ev::TaskletDone(p));
    }

    /// Idle-vCPU tasklets (Xen 4.1) queued on pCPU `p`: once the running vCPU's exit handling
    /// is done (`tasklets_after_exit`), SCHEDULE_SOFTIRQ calls the scheduler, which switches to
    /// the idle vCPU; the idle vCPU then runs the tasklets. On an idle pCPU the scheduler
    /// call keeps the idle vCPU.
    fn idle_vcpu_tasklets(&mut self, p: PcpuId) {
        if self.hv_work_ends(p).is_some() {
            return self.tasklets_after_exit(p);
        }
        let now = self.now();
        let tasklet_ns = self.costs.dpci_tasklet_ns;
        let from_vcpu = self.pcpus[p].cur.is_some();
        self.schedule(p, Reason::Tasklet);
        debug_assert!(self.pcpus[p].cur.is_none(), "tasklet work must run in the idle vCPU");
        let call_ns = if from_vcpu {
            self.pcpus[p].tasklet.after_exit = true;
            // The switch to the idle vCPU: full, or lazy (`hv::lazy_switch`).
            self.switch_cost_ns(p, None)
        } else {
            // SCHEDULE_SOFTIRQ on the idle vCPU: the scheduler runs and keeps the idle vCPU,
            // now at BOOST for the tasklet work (4.1 `csched_schedule`), so no longer idle.
            self.costs.sched_call_ns
        };
        let at = now + self.hv_cost_ns(p, call_ns + tasklet_ns);
        self.start_tasklets(p, at);
    }

    /// The pCPU (without a vCPU) starts running its queued tasklets; the first ends at `at`.
    fn start_tasklets(&mut self, p: PcpuId, at: Ns) {
        let now = self.now();
        self.pcpu_idle_end(p);
        // An unfinished lazy switch to idle (`hv::lazy_switch`) comes first.
        let at = at + self.idle_hv_take(p);
        self.pcpus[p].tasklet.busy_since = Some(now);
        self.q.arm(&mut self.pcpus[p].tasklet.timer, at, Ev::TaskletDone(p));
    }

    /// Hand a virtual interrupt to its target once the tasklet ran on pCPU `p`.
    fn tasklet_deliver(&mut self, p: PcpuId, target: VcpuId, work: IrqWork) {
        if self.vcpus[target].run == RunState::Running(p) {
            // Injected at the next VM entry of the interrupted vCPU: no IPI, no second exit.
            self.advance(target);
            self.vcpus[target].irq.push_back(work);
            self.arm_exec(target);
        } else {
            self.deliver_irq(target, work);
        }
    }

    /// A tasklet finished on a pCPU without a vCPU: deliver, run the next, or give the pCPU
    /// back to the scheduler.
    pub(crate) fn tasklet_done(&mut self, p: PcpuId) {
        if self.pcpus[p].tasklet.busy_since.is_none() {
            // The exit whose handling the tasklets waited for is done (`tasklets_after_exit`).
            return match self.tasklet_mode() {
                TaskletMode::Softirq => self.softirq_tasklets_done(p),
                TaskletMode::IdleVcpu => self.idle_vcpu_tasklets(p),
            };
        }
        if let Some((t, w)) = self.pcpus[p].tasklet.queue.pop_front() {
            self.tasklet_deliver(p, t, w);
        }
        let now = self.now();
        if !self.pcpus[p].tasklet.queue.is_empty() {
            let at = now + self.hv_cost_ns(p, self.costs.dpci_tasklet_ns);
            self.q.arm(&mut self.pcpus[p].tasklet.timer, at, Ev::TaskletDone(p));
            return;
        }
        let pc = &mut self.pcpus[p];
        let since = pc.tasklet.busy_since.take().expect("tasklets were running");
        pc.hv_ns += now - since;
        pc.hv_by_exit_ns[pc.tasklet.exit_slot()] += now - since;
        self.pcpu_idle_start(p);
        let pc = &mut self.pcpus[p];
        // do_tasklet raises SCHEDULE_SOFTIRQ when the list is empty (idle-vCPU tasklets); a
        // softirq tasklet on an idle pCPU reschedules only if someone asked meanwhile.
        let resched = std::mem::take(&mut pc.resched_pending);
        pc.yield_pending = false;
        if resched || self.tasklet_mode() == TaskletMode::IdleVcpu {
            self.schedule(p, Reason::Timer);
        }
        self.pcpus[p].tasklet.after_exit = false;
    }

    /// Softirq tasklets that ran on a vCPU's time (charged in `device_interrupt`) deliver
    /// their virtual interrupts. A SCHEDULE_SOFTIRQ that a delivery raises on this pCPU (a
    /// wake-up whose vCPU outranks the current one) is handled at once: `__do_softirq`
    /// (xen/common/softirq.c) loops until no softirq is pending, and a raise on the local
    /// CPU sends no IPI (`cpu_raise_softirq`), so `schedule()` runs right after the tasklet,
    /// before an idler tickled by the same wake-up has taken its event-check IPI.
    fn softirq_tasklets_done(&mut self, p: PcpuId) {
        let asked_before = self.pcpus[p].resched_pending;
        while let Some((t, w)) = self.pcpus[p].tasklet.queue.pop_front() {
            self.tasklet_deliver(p, t, w);
        }
        self.local_softirq_schedule(p, asked_before);
    }

    /// Whether pCPU `p` is running tasklets without a vCPU (reschedules wait for it).
    pub(crate) fn in_tasklet(&self, p: PcpuId) -> bool {
        self.pcpus[p].tasklet.busy_since.is_some()
    }

    /// End of run: charge a tasklet run in progress.
    pub(crate) fn settle_tasklets(&mut self) {
        let now = self.now();
        for pc in &mut self.pcpus {
            if let Some(since) = pc.tasklet.busy_since {
                pc.hv_ns += now - since;
                pc.hv_by_exit_ns[pc.tasklet.exit_slot()] += now - since;
                pc.tasklet.busy_since = Some(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{NS_PER_MS, NS_PER_US};
    use crate::host::ExitReason;
    use crate::scenario::from_toml_str;
    use crate::sim::state::{IrqAction, IrqWork, RunState};
    use crate::sim::{Overrides, Simulation};

    /// One pCPU, one pass-through VM whose only vCPU runs a hog: every device interrupt lands
    /// on the pCPU while its target vCPU runs there; with or without Xen's lazy context switch.
    fn sim(tasklet: &str, lazy: bool) -> Simulation {
        let text = format!(
            r#"
duration_ms = 10
[host]
cores_per_socket = 1
[hypervisor]
params = {{ tasklet = "{tasklet}", ratelimit_us = 0, lazy_context_switch = {lazy} }}
[[vms]]
vcpus = 1
io_path = "passthrough"
workloads = [{{ kind = "hog" }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(NS_PER_MS).unwrap();
        s
    }

    /// (scheduler calls, context switches, hypervisor ns) of pCPU 0 caused by one interrupt.
    fn one_interrupt(tasklet: &str) -> (u64, u64, u64, bool) {
        one_interrupt_lazy(tasklet, false)
    }

    fn one_interrupt_lazy(tasklet: &str, lazy: bool) -> (u64, u64, u64, bool) {
        let mut s = sim(tasklet, lazy);
        let before = {
            let w = s.world();
            assert_eq!(w.vcpus[0].run, RunState::Running(0), "the hog runs");
            (w.pcpus[0].sched_calls, w.pcpus[0].context_switches, w.vcpus[0].exits)
        };
        {
            let w = s.world();
            let now = w.now();
            w.device_interrupt(0, IrqWork { left_ns: 1000, action: IrqAction::Nothing, sent_at: now });
        }
        s.run_until(NS_PER_MS + 200 * NS_PER_US).unwrap();
        let w = s.world();
        let ext = w.vcpus[0].exits[crate::host::ExitReason::ExtIntr.index()] - before.2[crate::host::ExitReason::ExtIntr.index()];
        assert_eq!(ext, 1, "one external-interrupt exit on the interrupted vCPU");
        assert_eq!(w.pcpus[0].tasklet.irqs, 1);
        let hv = w.pcpus[0].hv_ns + w.vcpus[0].hv_debt_ns;
        (w.pcpus[0].sched_calls - before.0, w.pcpus[0].context_switches - before.1, hv, w.vcpus[0].run == RunState::Running(0))
    }

    #[test]
    fn an_idle_vcpu_tasklet_preempting_a_running_vcpu_costs_two_switches_and_two_scheduler_calls() {
        let (calls, switches, _, running) = one_interrupt("idle_vcpu");
        // schedule() to the idle vCPU (tasklet_enqueue raises SCHEDULE_SOFTIRQ), and again
        // when do_tasklet has emptied the list; a switch each way.
        assert_eq!(switches, 2);
        assert_eq!(calls, 2);
        assert!(running, "the interrupted vCPU runs again afterwards");
    }

    /// Xen's lazy switch (`hv::lazy_switch`): the switch to the idle vCPU keeps the hog's state
    /// loaded, and the hog, the only vCPU, is the one that runs after the tasklet, so neither
    /// switch saves or loads a state: each costs the scheduler path (`sched_call_ns`) instead
    /// of `world_switch_ns`. Same counts; hypervisor time 2 x (2,740 - 500) = 4,480 ns less.
    #[test]
    fn an_idle_vcpu_tasklet_round_trip_to_the_same_vcpu_is_two_lazy_switches() {
        let c = crate::host::CostParams::default();
        let full = one_interrupt_lazy("idle_vcpu", false);
        let lazy = one_interrupt_lazy("idle_vcpu", true);
        assert_eq!((lazy.0, lazy.1, lazy.3), (full.0, full.1, full.3), "same scheduler calls and switches");
        assert_eq!(full.2 - lazy.2, 2 * (c.world_switch_ns - c.sched_call_ns), "full {} ns, lazy {} ns", full.2, lazy.2);
        let mut s = sim("idle_vcpu", true);
        let before = (s.world().pcpus[0].lazy.lazy_switches, s.world().pcpus[0].lazy.state_switches);
        assert_eq!(before, (0, 1), "the hog's first dispatch loads its state");
        let now = s.world().now();
        s.world().device_interrupt(0, IrqWork { left_ns: 1000, action: IrqAction::Nothing, sent_at: now });
        s.run_until(NS_PER_MS + 200 * NS_PER_US).unwrap();
        let l = &s.world().pcpus[0].lazy;
        assert_eq!((l.lazy_switches, l.state_switches), (2, 1));
    }

    #[test]
    fn a_softirq_tasklet_runs_without_a_scheduler_call_or_a_switch() {
        let (calls, switches, _, running) = one_interrupt("softirq");
        assert_eq!((calls, switches), (0, 0));
        assert!(running);
    }

    #[test]
    fn an_idle_vcpu_tasklet_costs_more_hypervisor_time_than_a_softirq_one() {
        let (_, _, hv_idle, _) = one_interrupt("idle_vcpu");
        let (_, _, hv_soft, _) = one_interrupt("softirq");
        // Two world switches more (the switch back is charged to the vCPU when it runs).
        assert!(hv_idle >= hv_soft + 2 * 2_740 - 1, "idle-vCPU {hv_idle} ns vs softirq {hv_soft} ns");
    }

    /// Two idle pCPUs, one pass-through VM whose vCPU is halted, last on pCPU 0, at 1 ms
    /// (a web server with one request a second), `tasklet` mode, Xen 4.1's wake-up; the pCPUs
    /// leave their C-state `idle_exit_latency_ns` after an event reaches them (`hv::cstate`).
    fn halted_beside_idle_pcpus(tasklet: &str, idle_exit_latency_ns: u64) -> Simulation {
        let text = format!(
            r#"
duration_ms = 10
[host]
cores_per_socket = 2
costs = {{ idle_exit_latency_ns = {idle_exit_latency_ns} }}
[hypervisor]
params = {{ tasklet = "{tasklet}", ratelimit_us = 0, load_balance_ratelimit_us = 0, wake = "xen41" }}
[[vms]]
vcpus = 1
io_path = "passthrough"
workloads = [{{ kind = "server", role = "web", rate_per_s = 1.0 }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(NS_PER_MS).unwrap();
        let w = s.world();
        if w.vcpus[0].run != RunState::Blocked || w.vcpus[0].last_pcpu != 0 || w.pcpus.iter().any(|p| p.cur.is_some()) {
            panic!("setup: vCPU 0 must be halted after running on pCPU 0, both pCPUs idle");
        }
        s
    }

    /// A device interrupt reaches idle pCPU 0 at 1 ms (`halted_beside_idle_pcpus`). Returns
    /// whether its softirq tasklet had started 1 ns before `idle_exit_latency_ns` ran out and
    /// 1 ns after, and pCPU 0's C-state exits meanwhile.
    fn softirq_tasklet_start_on_an_idle_pcpu(idle_exit_latency_ns: u64) -> (bool, bool, u64) {
        let mut s = halted_beside_idle_pcpus("softirq", idle_exit_latency_ns);
        let (t0, exits) = {
            let w = s.world();
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
        (before, after, s.world().pcpus[0].cstate_exits - exits)
    }

    #[test]
    fn a_device_interrupt_on_an_idle_pcpu_is_handled_after_its_c_state_exit() {
        assert_eq!(softirq_tasklet_start_on_an_idle_pcpu(3_000), (false, true, 1), "C1: 3 µs later");
        assert_eq!(softirq_tasklet_start_on_an_idle_pcpu(0), (false, true, 0), "no latency: at once");
    }

    /// Two pCPUs, Xen 4.1's credit, one pass-through 1-vCPU server VM at one request per
    /// second: at 1 ms its vCPU is halted (last on pCPU 0) and both pCPUs idle. Returns, for
    /// one device interrupt then (its handler wakes the vCPU, which halts again after it), the
    /// scheduler calls and switches of each pCPU over the next 50 µs.
    fn interrupt_on_an_idle_pcpu(tasklet: &str) -> [(u64, u64); 2] {
        let mut s = halted_beside_idle_pcpus(tasklet, 0);
        let before: Vec<(u64, u64)> = {
            let w = s.world();
            let now = w.now();
            let b = w.pcpus.iter().map(|p| (p.sched_calls, p.context_switches)).collect();
            w.device_interrupt(0, IrqWork { left_ns: 1000, action: IrqAction::Nothing, sent_at: now });
            b
        };
        s.run_until(NS_PER_MS + 50 * NS_PER_US).unwrap();
        let w = s.world();
        assert_eq!((w.vcpus[0].last_pcpu, w.vcpus[0].run), (0, RunState::Blocked), "the woken vCPU ran on pCPU 0 and halted again");
        [0, 1].map(|p| (w.pcpus[p].sched_calls - before[p].0, w.pcpus[p].context_switches - before[p].1))
    }

    #[test]
    fn an_idle_vcpu_tasklet_waking_a_vcpu_on_an_idle_pcpu_tickles_the_other_idle_pcpu_for_nothing() {
        // pCPU 0: the tasklet's call keeps the idle vCPU (now at BOOST), the call after the
        // tasklets switches to the woken vCPU. That vCPU, queued on a busy (BOOST) pCPU,
        // tickles the idle pCPU 1, which may not steal from an idle-vCPU pCPU: a scheduler
        // call without a switch (Xen 4.1 `__runq_tickle`, `csched_runq_steal`).
        // The vCPU's HLT after its handler adds a call and a switch on pCPU 0.
        assert_eq!(interrupt_on_an_idle_pcpu("idle_vcpu"), [(3, 2), (1, 0)]);
        // Softirq tasklets leave the idle vCPU at IDLE: the woken vCPU tickles pCPU 0 only.
        assert_eq!(interrupt_on_an_idle_pcpu("softirq"), [(2, 2), (0, 0)]);
    }

    /// Two pCPUs of one socket, Xen 4.1's credit, softirq tasklets: a pass-through 1-vCPU
    /// server VM (vCPU 0, one request per second) halted after running on pCPU 0, and a hog
    /// pinned to pCPU 0; pCPU 1 idles. One device interrupt for the server lands on pCPU 0
    /// while the hog runs there. Returns the server vCPU's pCPU 30 µs later and whether it
    /// migrated.
    fn softirq_wake_beside_a_busy_pcpu() -> (RunState, u64) {
        let text = r#"
duration_ms = 50
[host]
cores_per_socket = 2
[hypervisor]
params = { tasklet = "softirq", ratelimit_us = 0, load_balance_ratelimit_us = 0, wake = "xen41" }
[[vms]]
vcpus = 1
io_path = "passthrough"
workloads = [{ kind = "server", role = "web", rate_per_s = 1.0 }]
[[vms]]
vcpus = 1
pin = [0]
workloads = [{ kind = "hog" }]
"#;
        let sc = from_toml_str(text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(25 * NS_PER_MS).unwrap();
        let migrations = {
            let w = s.world();
            let setup = (w.vcpus[0].run, w.vcpus[0].last_pcpu, w.pcpus[0].cur, w.pcpus[1].cur);
            if setup != (RunState::Blocked, 0, Some(1), None) {
                panic!("setup: server vCPU halted after pCPU 0, the hog on pCPU 0, pCPU 1 idle: {setup:?}");
            }
            let now = w.now();
            w.device_interrupt(0, IrqWork { left_ns: 50 * NS_PER_US, action: IrqAction::Nothing, sent_at: now });
            w.vcpus[0].migrations
        };
        s.run_until(25 * NS_PER_MS + 30 * NS_PER_US).unwrap();
        let w = s.world();
        (w.vcpus[0].run, w.vcpus[0].migrations - migrations)
    }

    #[test]
    fn a_softirq_tasklet_wakes_its_vcpu_onto_the_interrupted_pcpu_before_an_idler_can_steal_it() {
        // The woken vCPU (BOOST) outranks the hog and is queued on pCPU 0, which it tickles,
        // and pCPU 0 being busy, it tickles the idle pCPU 1 too (4.1 `__runq_tickle`). pCPU 0
        // raised its own SCHEDULE_SOFTIRQ from the tasklet and handles it in the same
        // `__do_softirq` loop, at the end of the exit (1.5 µs) and tasklet (1 µs); pCPU 1
        // needs the event-check IPI (1 µs) after the tasklet's wake-up and finds nothing.
        assert_eq!(softirq_wake_beside_a_busy_pcpu(), (RunState::Running(0), 0));
    }

    /// One pCPU, Xen 4.1's credit, idle-vCPU tasklets, with or without the lazy switch: a
    /// pass-through 1-vCPU server VM (vCPU 0, one request per second) halted, and a hog (vCPU
    /// 1) running. One device interrupt for the server at 25 ms lands on the hog's pCPU.
    /// Returns (the ns from the interrupt to the server's dispatch; the hog's hypervisor ns,
    /// paid and owed, since the interrupt when it is switched out, and of those still owed
    /// then; its hypervisor ns since the interrupt 200 µs later, once it ran again; the hog's
    /// external-interrupt exits since the interrupt).
    fn idle_vcpu_tasklet_beside_a_running_vcpu(lazy: bool) -> (u64, (u64, u64), u64, u64) {
        let text = format!(
            r#"
duration_ms = 50
[host]
cores_per_socket = 1
[hypervisor]
params = {{ tasklet = "idle_vcpu", ratelimit_us = 0, lazy_context_switch = {lazy}, wake = "xen41" }}
[[vms]]
vcpus = 1
io_path = "passthrough"
workloads = [{{ kind = "server", role = "web", rate_per_s = 1.0 }}]
[[vms]]
vcpus = 1
workloads = [{{ kind = "hog" }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        let t0 = 25 * NS_PER_MS;
        s.run_until(t0).unwrap();
        let hog_hv = |s: &mut Simulation| {
            let v = &s.world().vcpus[1];
            v.t.hv + v.hv_debt_ns
        };
        let ext = |s: &mut Simulation| s.world().vcpus[1].exits[ExitReason::ExtIntr.index()];
        let (hv0, ext0, dispatches0) = {
            let w = s.world();
            let setup = (w.vcpus[0].run, w.vcpus[1].run);
            if setup != (RunState::Blocked, RunState::Running(0)) {
                panic!("setup: server vCPU halted, the hog running on pCPU 0: {setup:?}");
            }
            let before = (w.vcpus[1].t.hv + w.vcpus[1].hv_debt_ns, w.vcpus[1].exits[ExitReason::ExtIntr.index()], w.vcpus[0].dispatches);
            w.device_interrupt(0, IrqWork { left_ns: 1000, action: IrqAction::Nothing, sent_at: t0 });
            before
        };
        // Step 1 ns at a time to the server's dispatch; note the hog's time when it leaves.
        let mut hog_out = None;
        let mut t = t0;
        while s.world().vcpus[0].dispatches == dispatches0 {
            assert!(t < t0 + 100 * NS_PER_US, "the server is dispatched within 100 µs");
            t += 1;
            s.run_until(t).unwrap();
            if hog_out.is_none() && s.world().vcpus[1].run != RunState::Running(0) {
                let v = &s.world().vcpus[1];
                hog_out = Some((v.t.hv + v.hv_debt_ns - hv0, v.hv_debt_ns));
            }
        }
        s.run_until(t0 + 200 * NS_PER_US).unwrap();
        assert_eq!(s.world().vcpus[1].run, RunState::Running(0), "the hog runs again");
        (t - t0, hog_out.expect("the hog was switched out"), hog_hv(&mut s) - hv0, ext(&mut s) - ext0)
    }

    #[test]
    fn an_idle_vcpu_tasklet_starts_after_the_interrupted_vcpus_exit_handling() {
        let c = crate::host::CostParams::default();
        // Xen handles the external-interrupt exit first (vmx_vmexit_handler -> vmx_do_extint
        // -> do_IRQ -> hvm_do_IRQ_dpci -> tasklet_schedule) and runs SCHEDULE_SOFTIRQ on the
        // way back to the guest (entry.S `.Lvmx_process_softirqs`): the exit (1 500 ns), the
        // switch to the idle vCPU (full: 2 740 ns; lazy: the scheduler path, 500 ns), the
        // tasklet (1 000 ns), whose wake-up puts the server (BOOST) first for the scheduler
        // call after the tasklets: 5 240 ns full, 3 000 ns lazy. The hog paid its exit before
        // it left (1 500 ns, nothing owed), and after it ran again only the switch back was
        // added (full 2 740 ns; lazy: the server's state was loaded since, a full switch too).
        for lazy in [false, true] {
            let switch_ns = if lazy { c.sched_call_ns } else { c.world_switch_ns };
            let (dispatch_after, hog_out, hog_later, exits) = idle_vcpu_tasklet_beside_a_running_vcpu(lazy);
            assert_eq!(dispatch_after, c.exit_ext_intr_ns + switch_ns + c.dpci_tasklet_ns, "lazy {lazy}");
            assert_eq!(hog_out, (c.exit_ext_intr_ns, 0), "lazy {lazy}: the hog's exit handling is done when it leaves");
            assert_eq!(hog_later, c.exit_ext_intr_ns + c.world_switch_ns, "lazy {lazy}: the exit is not charged again");
            assert_eq!(exits, 1, "lazy {lazy}");
        }
    }

    /// Hypervisor ns by VM exit (`Pcpu::hv_by_exit_ns`) that one device interrupt adds on
    /// pCPU 0 while the hog runs there, under `tasklet` mode and the EOI cost `eoi_ns`; and
    /// the APIC-access (EOI) exits it adds.
    fn one_interrupt_by_exit(tasklet: &str, eoi_ns: u64) -> ([u64; ExitReason::SLOTS], u64) {
        let mut s = sim(tasklet, false);
        let (before, eoi_before) = {
            let w = s.world();
            w.costs.exit_apic_eoi_ns = eoi_ns;
            let now = w.now();
            let b = (w.pcpus[0].hv_by_exit_ns, w.vcpus[0].exits[ExitReason::ApicEoi.index()]);
            w.device_interrupt(0, IrqWork { left_ns: 1000, action: IrqAction::Nothing, sent_at: now });
            b
        };
        s.run_until(NS_PER_MS + 200 * NS_PER_US).unwrap();
        let w = s.world();
        let mut d = w.pcpus[0].hv_by_exit_ns;
        for (x, b) in d.iter_mut().zip(before) {
            *x -= b;
        }
        (d, w.vcpus[0].exits[ExitReason::ApicEoi.index()] - eoi_before)
    }

    #[test]
    fn an_interrupts_hypervisor_time_counts_under_its_external_interrupt_exit() {
        let c = crate::host::CostParams::default();
        let ext = ExitReason::slot(Some(ExitReason::ExtIntr));
        // Idle-vCPU tasklet: the exit, the switch to the idle vCPU, the tasklet, and the
        // switch back to the hog (charged at its dispatch) all belong to the exit: 1 500 +
        // 2 740 + 1 000 + 2 740 = 7 980 ns, and nothing elsewhere.
        let (d, eoi) = one_interrupt_by_exit("idle_vcpu", 0);
        assert_eq!(d[ext], c.exit_ext_intr_ns + 2 * c.world_switch_ns + c.dpci_tasklet_ns);
        assert_eq!(d.iter().sum::<u64>(), d[ext]);
        assert_eq!(eoi, 0, "no EOI exit unless exit_apic_eoi_ns is set");
        // Softirq tasklet: the exit and the tasklet on the hog's time, 2 500 ns.
        let (d, _) = one_interrupt_by_exit("softirq", 0);
        assert_eq!(d[ext], c.exit_ext_intr_ns + c.dpci_tasklet_ns);
        assert_eq!(d.iter().sum::<u64>(), d[ext]);
    }

    /// As `one_interrupt_by_exit` (no EOI cost) with the shared-LLC pressure on, the socket's
    /// LLC as large as the hog's working set, no window (only running threads count), stall
    /// ratio 1, and the hypervisor costs stated at `reference_cpi`: the CPI is 1 + 1 x
    /// (ws / ws)^alpha = 2 while the hog runs on the socket, 1 while it does not.
    fn one_interrupt_at_cpi(tasklet: &str, reference_cpi: f64) -> u64 {
        let mut s = sim(tasklet, false);
        let before = {
            let w = s.world();
            let hog = w.vcpus[0].cur.expect("the hog's thread runs");
            let ws = w.threads[hog].ws_kib;
            assert!(ws > 0, "the hog has a working set");
            w.costs.llc_kib = ws;
            w.costs.llc_stall_at_capacity_ratio = 1.0;
            w.costs.llc_window_ns = 0;
            w.costs.hv_costs_reference_cpi = reference_cpi;
            let now = w.now();
            let b = w.pcpus[0].hv_by_exit_ns;
            w.device_interrupt(0, IrqWork { left_ns: 1000, action: IrqAction::Nothing, sent_at: now });
            b
        };
        s.run_until(NS_PER_MS + 200 * NS_PER_US).unwrap();
        let w = s.world();
        let ext = ExitReason::slot(Some(ExitReason::ExtIntr));
        w.pcpus[0].hv_by_exit_ns[ext] - before[ext]
    }

    #[test]
    fn hypervisor_costs_stated_at_a_reference_cpi_scale_with_the_sockets_cpi_when_charged() {
        let c = crate::host::CostParams::default();
        // Softirq tasklet: the exit and the tasklet both run while the hog is on the socket
        // (CPI 2). Stated at CPI 2 they keep their value, 1 500 + 1 000 = 2 500 ns; stated at
        // CPI 1 they take twice as long, 5 000 ns.
        assert_eq!(one_interrupt_at_cpi("softirq", 2.0), c.exit_ext_intr_ns + c.dpci_tasklet_ns);
        assert_eq!(one_interrupt_at_cpi("softirq", 1.0), 2 * (c.exit_ext_intr_ns + c.dpci_tasklet_ns));
        // Idle-vCPU tasklet, stated at CPI 1: the exit runs beside the hog (CPI 2: 3 000 ns),
        // the switch to the idle vCPU and the tasklet on a socket where nothing runs (CPI 1:
        // 2 740 + 1 000 ns), the switch back once the hog is on the pCPU again (CPI 2:
        // 5 480 ns); 12 220 ns against 7 980 at fixed times.
        let fixed = c.exit_ext_intr_ns + 2 * c.world_switch_ns + c.dpci_tasklet_ns;
        assert_eq!(one_interrupt_at_cpi("idle_vcpu", 0.0), fixed);
        assert_eq!(
            one_interrupt_at_cpi("idle_vcpu", 1.0),
            2 * c.exit_ext_intr_ns + c.world_switch_ns + c.dpci_tasklet_ns + 2 * c.world_switch_ns
        );
    }

    #[test]
    fn with_an_eoi_cost_each_handled_virtual_interrupt_takes_an_apic_access_exit() {
        let eoi = ExitReason::slot(Some(ExitReason::ApicEoi));
        let (d, n) = one_interrupt_by_exit("softirq", 900);
        // One virtual interrupt handled (the guest's handler ran 1 µs): one EOI write.
        assert_eq!(n, 1);
        assert_eq!(d[eoi], 900);
    }

    #[test]
    fn the_hypervisor_time_by_exit_adds_up_to_the_pcpus_time_and_what_vcpus_still_owe() {
        let text = r#"
duration_ms = 20
[host]
sockets = 2
cores_per_socket = 1
[host.costs]
exit_apic_eoi_ns = 900
[hypervisor]
params = { tasklet = "idle_vcpu", ratelimit_us = 0, load_balance_ratelimit_us = 0, wake = "xen41" }
[[vms]]
vcpus = 2
io_path = "passthrough"
workloads = [{ kind = "server", role = "web", rate_per_s = 20000.0 }]
[[vms]]
vcpus = 1
workloads = [{ kind = "hog" }]
"#;
        let sc = from_toml_str(text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(20 * NS_PER_MS).unwrap();
        let w = s.world();
        w.settle_tasklets();
        let by_exit: u64 = w.pcpus.iter().map(|p| p.hv_by_exit_ns.iter().sum::<u64>()).sum();
        let ran: u64 = w.pcpus.iter().map(|p| p.hv_ns).sum();
        let owed: u64 = w.vcpus.iter().map(|v| v.hv_debt_ns).sum();
        assert!(ran > 0 && w.pcpus.iter().map(|p| p.tasklet.irqs).sum::<u64>() > 100, "interrupts ran");
        // Each open idle interval's background part is not counted until it closes; this
        // host has no background load, so the identity is exact.
        assert_eq!(by_exit, ran + owed);
    }

    #[test]
    fn the_tasklet_mode_is_a_credit_parameter_with_a_named_error() {
        let sc = from_toml_str(
            "duration_ms = 1\n[host]\ncores_per_socket = 1\n[hypervisor]\nparams = { tasklet = \"kthread\" }\n[[vms]]\nvcpus = 1\nworkloads = [{ kind = \"hog\" }]\n",
        );
        let e = sc.unwrap_err();
        assert_eq!(e.path, "hypervisor.params.tasklet");
        assert!(e.reason.contains("idle_vcpu, softirq"), "{}", e.reason);
    }
}
