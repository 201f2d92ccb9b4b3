//! Causes of context switches (seed 001 §4.3, Figure 12): for every context switch credit
//! makes, the event that led to the scheduler call, and the VM exit during which Xen would
//! take it. Reported in `totals.scheduler_counters` as `credit_cs_<cause>` and
//! `credit_cs_exit_<exit>`; the counts add up to the pCPUs' `context_switches`.
//!
//! Causes (what called `csched_schedule`, xen/common/sched/credit.c and schedule.c):
//! - `tasklet`: tasklet work queued by a device interrupt (`tasklet_enqueue` raises
//!   SCHEDULE_SOFTIRQ, seed 001 Table 2): the switch into the idle vCPU, and the switch out
//!   of it when `do_tasklet` has drained the list and raised SCHEDULE_SOFTIRQ again;
//! - `block`: the running vCPU blocked (HLT, `vcpu_block` → `raise_softirq(SCHEDULE_SOFTIRQ)`),
//!   and the pCPU switched to a queued vCPU or to the idle vCPU (Xen's `sched_ctx` counts
//!   both, common/schedule.c `schedule`);
//! - `yield`: the running vCPU yielded (PAUSE-loop exit or `SCHEDOP_yield`), or FlexS switched
//!   it out on a spin detection;
//! - `wake`: credit tickled the pCPU for a woken vCPU (`__runq_tickle` →
//!   `cpumask_raise_softirq`): wake-up preemption of a running vCPU, or an idle pCPU woken;
//! - `slice`: the scheduler timer (`s_timer_fn`: end of the slice, the rate limit's or
//!   CSRC's re-check) on a pCPU running a vCPU;
//! - `tick_migrate`: a tick (`csched_tick` → `csched_unit_acct`) flagged the running unit
//!   to move to an idle pCPU;
//! - `park`: accounting parked the running unit at its cap (`csched_acct`);
//! - `idle`: an idle pCPU rescheduled without a request from credit (e.g. after softirq
//!   tasklets ran on it and asked for a reschedule, or after idle-vCPU tasklets on an idle
//!   pCPU: their woken vCPU does not tickle it, credit.rs `tasklet_boost`).
//!
//! Scheduler calls that switch nothing (Xen's `sched_run` minus `sched_ctx`) are counted by
//! the same causes as `credit_kept_<cause>`, and those on a pCPU that kept its idle vCPU as
//! `credit_kept_on_idle_pcpu`.
//!
//! The VM exit (Figure 12's categories, XenTrace's exit reasons) is the exit the pCPU was
//! handling when it ran the scheduler: HLT for `block`, PAUSE for `yield`, and an
//! external-interrupt exit for everything a physical interrupt starts while a vCPU runs — the
//! device interrupt behind a tasklet, the local APIC timer behind `slice`, `tick_migrate`
//! and `park`, the event-check IPI behind a `wake` tickle from another pCPU (VMX exits on
//! every physical interrupt: xen/arch/x86/hvm/vmx/vmcs.c sets `PIN_BASED_EXT_INTR_MASK`;
//! `vmx_vmexit_handler` handles `EXIT_REASON_EXTERNAL_INTERRUPT` and softirqs run on the way
//! back to the guest). Both tasklet switches count under the external interrupt that queued
//! the tasklet (the switch out of the idle vCPU happens in no exit of its own; the seed's
//! 65 % external-interrupt share is only reachable with both, since removing the tasklet
//! switches alone removes 55 %, Table 3). A pCPU running the idle vCPU takes interrupts
//! without a VM exit (seed §4.2 a, case a): its switches count as `none`.
//!
//! Leaves out: a wake-up raised on the waker's own pCPU (Xen sets the softirq bit without an
//! IPI, and the switch then happens in the waker's exit, e.g. an APIC-access exit for a
//! virtual IPI) is counted as an external-interrupt exit, since the model delivers every
//! tickle as an IPI (`phys_ipi_ns`).

use crate::sim::state::PcpuId;

/// What led to a scheduler call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    Tasklet,
    Block,
    Yield,
    Wake,
    Slice,
    TickMigrate,
    Park,
    Idle,
}

impl Cause {
    pub const ALL: [Cause; 8] =
        [Cause::Tasklet, Cause::Block, Cause::Yield, Cause::Wake, Cause::Slice, Cause::TickMigrate, Cause::Park, Cause::Idle];

    fn index(self) -> usize {
        self as usize
    }

    fn counter(self) -> &'static str {
        match self {
            Cause::Tasklet => "credit_cs_tasklet",
            Cause::Block => "credit_cs_block",
            Cause::Yield => "credit_cs_yield",
            Cause::Wake => "credit_cs_wake",
            Cause::Slice => "credit_cs_slice",
            Cause::TickMigrate => "credit_cs_tick_migrate",
            Cause::Park => "credit_cs_park",
            Cause::Idle => "credit_cs_idle",
        }
    }

    fn kept_counter(self) -> &'static str {
        match self {
            Cause::Tasklet => "credit_kept_tasklet",
            Cause::Block => "credit_kept_block",
            Cause::Yield => "credit_kept_yield",
            Cause::Wake => "credit_kept_wake",
            Cause::Slice => "credit_kept_slice",
            Cause::TickMigrate => "credit_kept_tick_migrate",
            Cause::Park => "credit_kept_park",
            Cause::Idle => "credit_kept_idle",
        }
    }
}

/// The VM exit a switch happens in (seed 001 Figure 12's categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    ExtIntr,
    Hlt,
    Pause,
    /// The pCPU ran the idle vCPU: no VM exit.
    None,
}

impl Exit {
    pub const ALL: [Exit; 4] = [Exit::ExtIntr, Exit::Hlt, Exit::Pause, Exit::None];

    fn counter(self) -> &'static str {
        match self {
            Exit::ExtIntr => "credit_cs_exit_ext_intr",
            Exit::Hlt => "credit_cs_exit_hlt",
            Exit::Pause => "credit_cs_exit_pause",
            Exit::None => "credit_cs_exit_none",
        }
    }

    /// The exit a switch of `cause` happens in; `from_vcpu` says whether the pCPU ran a vCPU
    /// (not the idle vCPU) when the scheduler was called.
    pub fn of(cause: Cause, from_vcpu: bool) -> Exit {
        match cause {
            Cause::Tasklet => Exit::ExtIntr,
            Cause::Block => Exit::Hlt,
            Cause::Yield => Exit::Pause,
            Cause::Wake | Cause::Slice | Cause::TickMigrate | Cause::Park if from_vcpu => Exit::ExtIntr,
            _ => Exit::None,
        }
    }
}

/// Per-pCPU pending causes and the per-cause switch counts.
#[derive(Debug, Clone, Default)]
pub struct SwitchCauses {
    /// A request credit made of the pCPU (tickle, tick migration, park) not yet served.
    pending: Vec<Option<Cause>>,
    /// The pCPU switched to the idle vCPU for tasklet work: its next switch ends it.
    in_tasklet: Vec<bool>,
    by_cause: [u64; Cause::ALL.len()],
    by_exit: [u64; Exit::ALL.len()],
    /// Scheduler calls that kept what ran (no switch), by cause: Xen's `sched_run` minus
    /// `sched_ctx` (common/schedule.c `schedule`).
    kept_by_cause: [u64; Cause::ALL.len()],
    /// Of those, the calls on a pCPU that ran the idle vCPU and kept it.
    kept_idle: u64,
    /// Switches after a block to the idle vCPU (of `block`'s): the machine charges them no
    /// world switch (`hv/machine.rs`: choosing idle costs nothing, as Xen's `context_switch`
    /// defers the state switch to the idle vCPU, xen/arch/x86/domain.c), so the hypervisor
    /// time of HLT exits (seed 001 Figure 9) counts only the others.
    block_to_idle: u64,
}

impl SwitchCauses {
    pub fn new(n_pcpus: usize) -> Self {
        SwitchCauses { pending: vec![None; n_pcpus], in_tasklet: vec![false; n_pcpus], ..Default::default() }
    }

    /// Credit asked pCPU `p` to reschedule for `cause` (the first request counts).
    pub fn request(&mut self, p: PcpuId, cause: Cause) {
        if let Some(c) = self.pending.get_mut(p) {
            c.get_or_insert(cause);
        }
    }

    /// A scheduler call on `p` for `why` ends; `switched` says whether it switched context
    /// (to another vCPU, or to the idle vCPU for tasklet work), `from_vcpu` whether a vCPU
    /// ran there. Serves the pending request.
    pub fn decided(&mut self, p: PcpuId, why: super::Reason, from_vcpu: bool, switched: bool) {
        use super::Reason;
        let pending = self.pending[p].take();
        let after_tasklet = std::mem::take(&mut self.in_tasklet[p]);
        let cause = match why {
            Reason::Tasklet => {
                // On an idle pCPU the interrupt came without a VM exit: the switch after the
                // tasklets counts as the wake-up (or idle) it serves, as before the tasklet.
                self.in_tasklet[p] = from_vcpu;
                Cause::Tasklet
            }
            Reason::Block => Cause::Block,
            Reason::Yield => Cause::Yield,
            Reason::Timer if after_tasklet && !from_vcpu => Cause::Tasklet,
            Reason::Timer => pending.unwrap_or(if from_vcpu { Cause::Slice } else { Cause::Idle }),
        };
        if switched {
            self.count(cause, from_vcpu);
        } else {
            self.kept_by_cause[cause.index()] += 1;
            self.kept_idle += !from_vcpu as u64;
        }
    }

    /// Count one switch of `cause`.
    pub fn count(&mut self, cause: Cause, from_vcpu: bool) {
        self.by_cause[cause.index()] += 1;
        self.by_exit[Exit::ALL.iter().position(|&e| e == Exit::of(cause, from_vcpu)).expect("listed")] += 1;
    }

    /// One of the switches of `decided` (cause `block`) went to the idle vCPU.
    pub fn block_to_idle(&mut self) {
        self.block_to_idle += 1;
    }

    /// Forget the pending request of `p` (a switch made outside `decided`).
    pub fn clear(&mut self, p: PcpuId) {
        self.pending[p] = None;
        self.in_tasklet[p] = false;
    }

    pub fn counters(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Cause::ALL
            .iter()
            .map(|c| (c.counter(), self.by_cause[c.index()]))
            .chain(Exit::ALL.iter().enumerate().map(|(i, e)| (e.counter(), self.by_exit[i])))
            .chain(Cause::ALL.iter().map(|c| (c.kept_counter(), self.kept_by_cause[c.index()])))
            .chain(std::iter::once(("credit_kept_on_idle_pcpu", self.kept_idle)))
            .chain(std::iter::once(("credit_block_to_idle", self.block_to_idle)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hv::sched::Reason;

    fn get(s: &SwitchCauses, name: &str) -> u64 {
        s.counters().find(|(n, _)| *n == name).map(|(_, v)| v).unwrap()
    }

    #[test]
    fn a_block_to_the_idle_vcpu_is_reported_beside_the_block_switches() {
        let mut s = SwitchCauses::new(1);
        // Two blocks that switch: one to another vCPU, one to the idle vCPU (credit reports it).
        s.decided(0, Reason::Block, true, true);
        s.decided(0, Reason::Block, true, true);
        s.block_to_idle();
        assert_eq!((get(&s, "credit_cs_block"), get(&s, "credit_block_to_idle")), (2, 1));
    }

    #[test]
    fn both_tasklet_switches_count_under_the_external_interrupt() {
        let mut s = SwitchCauses::new(1);
        s.decided(0, Reason::Tasklet, true, true);
        // A wake-up placed on the pCPU while the tasklet ran does not steal the attribution.
        s.request(0, Cause::Wake);
        s.decided(0, Reason::Timer, false, true);
        assert_eq!(get(&s, "credit_cs_tasklet"), 2);
        assert_eq!(get(&s, "credit_cs_wake"), 0);
        assert_eq!(get(&s, "credit_cs_exit_ext_intr"), 2);
    }

    #[test]
    fn a_wake_of_an_idle_pcpu_takes_no_vm_exit_but_a_preemption_does() {
        let mut s = SwitchCauses::new(2);
        s.request(0, Cause::Wake);
        s.decided(0, Reason::Timer, false, true);
        s.request(1, Cause::Wake);
        s.decided(1, Reason::Timer, true, true);
        assert_eq!(get(&s, "credit_cs_wake"), 2);
        assert_eq!((get(&s, "credit_cs_exit_none"), get(&s, "credit_cs_exit_ext_intr")), (1, 1));
    }

    #[test]
    fn calls_that_keep_the_vcpu_count_nothing_and_serve_the_request() {
        let mut s = SwitchCauses::new(1);
        s.request(0, Cause::Wake);
        s.decided(0, Reason::Timer, true, false);
        // The request was served: the next timer call is a slice end.
        s.decided(0, Reason::Timer, true, true);
        assert_eq!((get(&s, "credit_cs_wake"), get(&s, "credit_cs_slice")), (0, 1));
        s.decided(0, Reason::Block, true, true);
        s.decided(0, Reason::Yield, true, true);
        assert_eq!((get(&s, "credit_cs_exit_hlt"), get(&s, "credit_cs_exit_pause")), (1, 1));
        let total: u64 = Cause::ALL.iter().map(|c| get(&s, c.counter())).sum();
        let exits: u64 = Exit::ALL.iter().map(|e| get(&s, e.counter())).sum();
        assert_eq!((total, exits), (3, 3));
    }

    /// The consolidation mix (seed 001), 200 ms, with `tasklet` mode: every context switch
    /// the machine counts is attributed exactly once, to a cause and to an exit.
    fn specvirt(tasklet: &str) -> crate::metrics::results::Results {
        let mut sc = crate::scenario::from_toml_str(include_str!("../../../../../scenarios/consolidation-specvirt.toml")).unwrap();
        sc.duration_ms = Some(200.0);
        sc.hypervisor.params.insert("tasklet".into(), toml::Value::String(tasklet.into()));
        let mut sim = crate::sim::Simulation::new(&sc, &crate::sim::Overrides { check: true, ..Default::default() }).unwrap();
        sim.run().expect("no invariant violated")
    }

    #[test]
    fn every_context_switch_of_the_consolidation_mix_has_one_cause_and_one_exit() {
        for tasklet in ["idle_vcpu", "softirq"] {
            let r = specvirt(tasklet);
            let c = &r.totals.scheduler_counters;
            let switches: u64 = r.pcpus.iter().map(|p| p.context_switches).sum();
            let causes: u64 = Cause::ALL.iter().map(|x| c[x.counter()]).sum();
            let exits: u64 = Exit::ALL.iter().map(|x| c[x.counter()]).sum();
            eprintln!("{tasklet}: {switches} switches; {:?}", c);
            assert!(switches > 1000, "{tasklet}: {switches}");
            assert_eq!((causes, exits), (switches, switches), "{tasklet}");
            assert!(c["credit_cs_block"] > 0 && c["credit_cs_wake"] > 0, "{tasklet}: {c:?}");
            if tasklet == "softirq" {
                assert_eq!(c["credit_cs_tasklet"], 0, "softirq tasklets never switch");
            } else {
                // Two switches per tasklet run that interrupted a vCPU: into and out of the
                // idle vCPU, both under the external-interrupt exit. (Their parity is not
                // checked: a run the horizon cuts leaves its switch into the idle vCPU
                // unpaired, as this 200 ms run does since session 10's host costs: 19,049.)
                assert!(c["credit_cs_tasklet"] > switches / 3, "{c:?}");
                assert!(c["credit_cs_exit_ext_intr"] >= c["credit_cs_tasklet"]);
            }
            assert_eq!(c["credit_cs_exit_hlt"], c["credit_cs_block"]);
        }
    }
}
