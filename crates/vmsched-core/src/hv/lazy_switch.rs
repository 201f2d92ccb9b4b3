//! Xen's lazy context switch (`hypervisor.params.lazy_context_switch`, credit and credit2).
//!
//! Models (Xen 4.2.2's xen/arch/x86/domain.c, read for the 4.1 line; the same logic since
//! Xen 3.x, `__sync_lazy_execstate` in the 3.x/4.0 file): each pCPU holds the register state
//! of one vCPU, `per_cpu(curr_vcpu, cpu)` (here `loaded`). `context_switch(prev, next)` calls
//! `__context_switch` (save `curr_vcpu`'s state, load `next`'s, switch page tables) only when
//! `next` is not the idle vCPU and `curr_vcpu != next`. So:
//! - a switch to the idle vCPU (after a block, or for tasklet work in the idle vCPU's context)
//!   keeps the previous vCPU's state loaded and costs the scheduler path without the state
//!   switch, `sched_call_ns` (host/mod.rs: "a scheduler invocation that keeps the current
//!   vCPU"); after a block it is hypervisor time of the pCPU in the idle vCPU's context
//!   (`idle_hv`), counted under the HLT exit;
//! - a switch from the idle vCPU back to the vCPU whose state is still loaded (it blocked, the
//!   pCPU idled or ran tasklets, it woke there) costs `sched_call_ns` too;
//! - any other switch (from a vCPU, or from the idle vCPU when the pCPU holds another vCPU's
//!   state) is a full `world_switch_ns`;
//! - a vCPU whose state another pCPU `q` still holds lazily cannot run elsewhere before `q`
//!   saves it: `context_switch` finds `q` in `next->vcpu_dirty_cpumask` and calls
//!   `flush_tlb_mask`, whose flush IPI makes `q` run `__sync_local_execstate` (a
//!   `__context_switch` to the idle vCPU's context, xen/arch/x86/smp.c
//!   `invalidate_interrupt`), and the dispatching pCPU spins until `q` has acknowledged
//!   (`flush_area_mask` waits for `flush_cpumask` to empty). Here: the dispatched vCPU owes
//!   the IPI's delivery (`phys_ipi_ns`) plus the state switch on `q`
//!   (`world_switch_ns - sched_call_ns`, the switch without the scheduler path), and `q`, if
//!   idle, spends that state switch as hypervisor time in the idle vCPU's context
//!   (`lazy_state_syncs` counts these).
//!
//! Context-switch counts (`context_switches`, `switch_causes`) are unchanged: Xen's
//! `sched_ctx` perf counter counts every `schedule()` with prev != next, lazy or not.
//! Without the option (default) every dispatch costs `world_switch_ns`, the idle-vCPU
//! tasklet's switch too, and a switch to the idle vCPU after a block costs nothing (the model
//! before session 14); the counts `state_switches` and `lazy_switches` are kept either way.
//!
//! Leaves out: a sync on a pCPU that is running tasklet work in the idle vCPU's context (its
//! tasklets are not delayed; the dispatching pCPU still waits); the `vcpu_sleep_sync` path
//! (pausing a domain), which this simulator has no use for; the cost split between saving and
//! loading a state (one `world_switch_ns` is a save and a load).

use crate::engine::Ns;
use crate::host::ExitReason;
use crate::hv::background::overlap;
use crate::hv::sched::Params;
use crate::scenario::ScenarioError;
use crate::sim::state::*;
use crate::sim::World;

/// Reads `hypervisor.params.lazy_context_switch` for a Xen scheduler (credit, credit2 and the
/// policies on credit): Xen's `context_switch` is arch code, the same under every scheduler,
/// and has switched this way since 3.x. Default off, so that the scenarios fitted without it
/// keep their numbers.
pub(crate) fn from_params(p: &mut Params) -> Result<bool, ScenarioError> {
    p.bool("lazy_context_switch", false)
}

/// Per-pCPU lazy-switch state and counts.
#[derive(Debug, Default, Clone)]
pub struct PcpuLazy {
    /// The vCPU whose state the pCPU holds (`per_cpu(curr_vcpu)`; None: the idle vCPU's).
    /// Tracked only with the option on.
    pub loaded: Option<VcpuId>,
    /// Hypervisor work in the idle vCPU's context without a vCPU to charge (the lazy switch
    /// to idle after a block, a state sync): from `idle_hv_start` until `idle_hv_until`. It is
    /// not idle time; a vCPU dispatched before it ends waits for the rest.
    pub idle_hv_start: Ns,
    pub idle_hv_until: Ns,
    /// Time of such work counted so far (ns; part of `Pcpu::hv_ns`).
    pub idle_hv_ns: Ns,
    /// Switches charged a full state switch (`world_switch_ns`).
    pub state_switches: u64,
    /// Switches that kept the loaded state (charged `sched_call_ns`).
    pub lazy_switches: u64,
    /// This pCPU's lazily held state saved for another pCPU (`__sync_local_execstate`).
    pub syncs: u64,
}

impl PcpuLazy {
    /// Part of [since, now) inside the idle-context hypervisor work, less what a background
    /// spin (`bg_start`..`bg_until`) already takes of it.
    pub(crate) fn idle_hv_in(&self, since: Ns, now: Ns, bg_start: Ns, bg_until: Ns) -> Ns {
        let end = now.min(self.idle_hv_until);
        let start = since.max(self.idle_hv_start);
        end.saturating_sub(start).saturating_sub(overlap(start, end, bg_start, bg_until))
    }
}

impl World {
    /// Whether a switch of pCPU `p` to `next` (None: the idle vCPU) keeps the loaded state
    /// (always false without the option).
    pub(crate) fn switch_is_lazy(&self, p: PcpuId, next: Option<VcpuId>) -> bool {
        self.lazy_context_switch && (next.is_none() || self.pcpus[p].lazy.loaded == next)
    }

    /// What the switch of pCPU `p` to `next` costs at the reference CPI (`hv_cost_ns`), counted
    /// by kind; `next`'s state is then the loaded one.
    pub(crate) fn switch_cost_ns(&mut self, p: PcpuId, next: Option<VcpuId>) -> Ns {
        let lazy = self.switch_is_lazy(p, next);
        let l = &mut self.pcpus[p].lazy;
        if next.is_some() && self.lazy_context_switch {
            l.loaded = next;
        }
        if lazy {
            l.lazy_switches += 1;
            self.costs.sched_call_ns
        } else {
            l.state_switches += 1;
            self.costs.world_switch_ns
        }
    }

    /// The lazy switch of pCPU `p` to the idle vCPU after `prev` left it (not for tasklets,
    /// whose switch `hv::tasklet` charges with their work): the scheduler path in the idle
    /// vCPU's context, under VM exit `exit`.
    pub(crate) fn lazy_switch_to_idle(&mut self, p: PcpuId, exit: Option<ExitReason>) {
        let ns = self.switch_cost_ns(p, None);
        let ns = self.hv_cost_ns(p, ns);
        self.idle_hv_add(p, ns, exit);
    }

    /// Before `n` runs on `p`: if another pCPU still holds `n`'s state lazily, that pCPU saves
    /// it (`__sync_local_execstate` in the flush IPI's handler) while `p` waits. Returns what
    /// `p` waits: the IPI's delivery, and the state switch at the reference CPI (for `owe_hv`).
    pub(crate) fn lazy_sync_for(&mut self, n: VcpuId, p: PcpuId) -> (Ns, Ns) {
        if !self.lazy_context_switch {
            return (0, 0);
        }
        let Some(q) = (0..self.pcpus.len()).find(|&q| q != p && self.pcpus[q].lazy.loaded == Some(n)) else {
            return (0, 0);
        };
        let state_ns = self.costs.world_switch_ns.saturating_sub(self.costs.sched_call_ns);
        // q's save is a `__context_switch` to the idle vCPU: its `write_ptbase` flushes q's
        // guest TLB entries too (`hv::tlb`).
        self.tlb_flush(q);
        let pq = &mut self.pcpus[q];
        pq.lazy.loaded = None;
        pq.lazy.syncs += 1;
        let ipi_ns = self.costs.phys_ipi_ns;
        let mut wait_ns = ipi_ns;
        if pq.cur.is_none() && pq.tasklet.busy_since.is_none() {
            // An idle q answers when it has left its C-state (`hv::cstate`).
            wait_ns += self.cstate_delay_ns(q, self.now() + ipi_ns);
            let ns = self.hv_cost_ns(q, state_ns);
            self.idle_hv_add(q, ns, None);
        }
        (wait_ns, state_ns)
    }

    /// Idle pCPU `p` does `ns` of hypervisor work in the idle vCPU's context from now (after
    /// any still under way), charged to VM exit `exit` now (`Pcpu::hv_by_exit_ns`).
    fn idle_hv_add(&mut self, p: PcpuId, ns: Ns, exit: Option<ExitReason>) {
        let now = self.now();
        let pc = &mut self.pcpus[p];
        let l = &mut pc.lazy;
        if l.idle_hv_until <= now {
            l.idle_hv_start = now;
            l.idle_hv_until = now + ns;
        } else {
            l.idle_hv_until += ns;
        }
        pc.hv_by_exit_ns[ExitReason::slot(exit)] += ns;
    }

    /// The pCPU stops idling: the idle-context hypervisor work not yet done (ns), which whatever
    /// runs next waits for; the work ends here.
    pub(crate) fn idle_hv_take(&mut self, p: PcpuId) -> Ns {
        let now = self.now();
        let l = &mut self.pcpus[p].lazy;
        let left = l.idle_hv_until.saturating_sub(now);
        l.idle_hv_until = l.idle_hv_until.min(now);
        left
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{NS_PER_MS, NS_PER_US};
    use crate::host::CostParams;
    use crate::scenario::from_toml_str;
    use crate::sim::state::RunState;
    use crate::sim::{Overrides, Simulation};

    #[test]
    fn idle_hv_in_counts_only_the_window_outside_a_background_spin() {
        let l = super::PcpuLazy { idle_hv_start: 100, idle_hv_until: 600, ..Default::default() };
        // Idle from 0 to 1000: the window 100..600 is 500 ns.
        assert_eq!(l.idle_hv_in(0, 1000, 0, 0), 500);
        // Closed at 300: 100..300.
        assert_eq!(l.idle_hv_in(0, 300, 0, 0), 200);
        // A background spin 400..1000 takes 400..600 of it.
        assert_eq!(l.idle_hv_in(0, 1000, 400, 1000), 300);
        // An interval after the window: nothing.
        assert_eq!(l.idle_hv_in(600, 1000, 0, 0), 0);
    }

    /// `pcpus` pCPUs, `vms` 1-vCPU VMs whose thread does `program` (TOML), Xen credit with or
    /// without the lazy switch; run to 1 ms.
    fn sim(pcpus: u32, vms: usize, program: &str, lazy: bool) -> Simulation {
        let vm = format!(
            r#"
[[vms]]
vcpus = 1
workloads = [{{ kind = "custom", groups = [{{ threads = 1, program = {program} }}] }}]
"#
        );
        let text = format!(
            r#"
duration_ms = 100
[host]
cores_per_socket = {pcpus}
[hypervisor]
scheduler = "credit"
params = {{ lazy_context_switch = {lazy}, ratelimit_us = 0 }}
{}"#,
            vm.repeat(vms)
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(NS_PER_MS).unwrap();
        s
    }

    /// One pCPU, one vCPU that computes 100 µs and sleeps 100 µs: it blocks, the pCPU idles,
    /// and it wakes there again. Returns the pCPU's (context switches, lazy, state switches,
    /// syncs), the vCPU's hypervisor time and the pCPU's in the idle vCPU's context after 20 ms.
    fn alone(lazy: bool) -> (u64, u64, u64, u64, u64, u64) {
        let program = r#"[{ op = "forever", body = [{ op = "compute", us = 100 }, { op = "sleep", us = 100 }] }]"#;
        let mut s = sim(1, 1, program, lazy);
        s.run_until(20 * NS_PER_MS).unwrap();
        let w = s.world();
        let pc = &w.pcpus[0];
        (pc.context_switches, pc.lazy.lazy_switches, pc.lazy.state_switches, pc.lazy.syncs, w.vcpus[0].t.hv, pc.lazy.idle_hv_ns)
    }

    #[test]
    fn block_idle_and_wake_on_the_same_pcpu_is_a_lazy_pair() {
        let c = CostParams::default();
        let (cs_off, lazy_off, full_off, _, hv_off, idle_hv_off) = alone(false);
        let (cs_on, lazy_on, full_on, syncs, hv_on, idle_hv_on) = alone(true);
        // About 100 block/wake cycles in 20 ms, each two context switches (to idle, back);
        // cheaper switches let a few more cycles fit.
        assert!(cs_off > 150 && cs_on >= cs_off, "{cs_off} / {cs_on} switches");
        // Off: each dispatch is a full switch; the switch to idle is charged nothing.
        assert_eq!(lazy_off, 0);
        assert_eq!(full_off, cs_off.div_ceil(2));
        // On: the only vCPU always comes back to the pCPU that holds its state, so after its
        // first dispatch (full: nothing loaded) every switch is lazy, and none needs a sync.
        assert_eq!((full_on, lazy_on, syncs), (1, cs_on - 1, 0));
        // Per dispatch the vCPU pays the switch, world_switch_ns off, sched_call_ns on but for
        // the first (the switch to idle is the pCPU's time), and its HLT exit, the last one
        // unless the run ends while it computes: nothing else.
        let dispatches_on = cs_on.div_ceil(2);
        let hlts = |other: u64, d: u64| other % c.exit_hlt_ns == 0 && (d - 1..=d).contains(&(other / c.exit_hlt_ns));
        let other_off = hv_off - full_off * c.world_switch_ns;
        let other_on = hv_on - c.world_switch_ns - (dispatches_on - 1) * c.sched_call_ns;
        assert!(hlts(other_off, full_off), "off: {hv_off} ns in {full_off} dispatches");
        assert!(hlts(other_on, dispatches_on), "on: {hv_on} ns in {dispatches_on} dispatches");
        // Each lazy switch to idle is sched_call_ns of the pCPU's time in the idle vCPU's
        // context (the last one may still be open); off, none.
        let to_idle = cs_on / 2;
        assert!((to_idle - 1..=to_idle).contains(&(idle_hv_on / c.sched_call_ns)), "{idle_hv_on} ns in {to_idle} switches to idle");
        assert_eq!(idle_hv_off, 0);
    }

    /// One pCPU, two 1-vCPU VMs whose threads sleep for good: woken by hand, a vCPU finds
    /// nothing to run and halts again at once (a switch there and back).
    fn two_sleepers() -> Simulation {
        let program = r#"[{ op = "sleep", us = 1000000000 }]"#;
        let mut s = sim(1, 2, program, true);
        let w = s.world();
        assert!(w.vcpus.iter().all(|v| v.run == RunState::Blocked) && w.pcpus[0].cur.is_none());
        s.run_until(2 * NS_PER_MS).unwrap();
        s
    }

    /// Wake vCPU `v`, run 100 µs; the pCPU's (lazy, state) switch counts it added.
    fn wake(s: &mut Simulation, v: usize) -> (u64, u64) {
        let w = s.world();
        let before = (w.pcpus[0].lazy.lazy_switches, w.pcpus[0].lazy.state_switches);
        w.hv_wake(v);
        let until = w.now() + 100 * NS_PER_US;
        s.run_until(until).unwrap();
        let w = s.world();
        assert_eq!(w.vcpus[v].run, RunState::Blocked, "vCPU {v} halted again");
        (w.pcpus[0].lazy.lazy_switches - before.0, w.pcpus[0].lazy.state_switches - before.1)
    }

    #[test]
    fn from_idle_the_vcpu_whose_state_is_loaded_comes_back_lazily_and_another_costs_a_full_switch() {
        let mut s = two_sleepers();
        let loaded = s.world().pcpus[0].lazy.loaded.expect("a vCPU ran at start");
        let other = 1 - loaded;
        // idle -> other (full: the pCPU holds `loaded`'s state), other -> idle (lazy).
        assert_eq!(wake(&mut s, other), (1, 1));
        assert_eq!(s.world().pcpus[0].lazy.loaded, Some(other));
        // idle -> other again (lazy), other -> idle (lazy).
        assert_eq!(wake(&mut s, other), (2, 0));
        // idle -> the first vCPU (full), and back to idle (lazy).
        assert_eq!(wake(&mut s, loaded), (1, 1));
    }

    #[test]
    fn a_vcpu_whose_state_another_idle_pcpu_holds_is_synced_there_and_waits_for_it() {
        // Two pCPUs, one sleeper: it halts at start on some pCPU q, which keeps its state.
        let program = r#"[{ op = "sleep", us = 1000000000 }]"#;
        let mut s = sim(2, 1, program, true);
        s.run_until(2 * NS_PER_MS).unwrap();
        let w = s.world();
        let q = (0..2).find(|&q| w.pcpus[q].lazy.loaded == Some(0)).expect("a pCPU holds the vCPU's state");
        let p = 1 - q;
        // Force its next run onto the other pCPU: hard affinity to p only.
        w.affinity[0] = Some(vec![p]);
        let hv_before = w.vcpus[0].t.hv + w.vcpus[0].hv_debt_ns;
        let q_hv_before = w.pcpus[q].hv_ns;
        w.hv_wake(0);
        let until = w.now() + 100 * NS_PER_US;
        s.run_until(until).unwrap();
        let w = s.world();
        assert_eq!(w.vcpus[0].last_pcpu, p, "it ran on p");
        assert_eq!((w.pcpus[q].lazy.syncs, w.pcpus[q].lazy.loaded), (1, None), "q saved the state");
        assert_eq!(w.pcpus[p].lazy.loaded, Some(0));
        // The vCPU waited for the flush IPI and q's state switch on top of its full switch
        // (p held nothing): 1,000 + (2,740 - 500) + 2,740 ns, plus its HLT exit (1,200).
        let c = CostParams::default();
        let want = c.phys_ipi_ns + (c.world_switch_ns - c.sched_call_ns) + c.world_switch_ns + c.exit_hlt_ns;
        assert_eq!(w.vcpus[0].t.hv + w.vcpus[0].hv_debt_ns - hv_before, want);
        // q, idle, spent the state switch as hypervisor time.
        w.close_idle(q);
        assert_eq!(w.pcpus[q].hv_ns - q_hv_before, c.world_switch_ns - c.sched_call_ns);
    }

    const SPECVIRT: &str = include_str!("../../../../scenarios/consolidation-specvirt.toml");

    /// The option is off by default and read when set: the scenario with it written `false` is
    /// the scenario without it, byte for byte, and with it on the run differs (most switches
    /// lazy, the hypervisor's share lower: 2 tiles on 6 pCPUs with idle-vCPU tasklets).
    #[test]
    fn the_option_is_off_by_default_and_changes_the_run_when_on() {
        let with = |v: &str| SPECVIRT.replace(r#"wake = "xen41" }"#, &format!(r#"wake = "xen41"{v} }}"#));
        let run = |text: &str| {
            let mut sc = from_toml_str(text).expect("scenario parses");
            sc.duration_ms = Some(200.0);
            Simulation::new(&sc, &Overrides::default()).unwrap().run().unwrap()
        };
        let json = |r: &crate::metrics::results::Results| {
            let mut r = r.clone();
            r.scenario.hypervisor.params.remove("lazy_context_switch");
            crate::sim::results_json(&r)
        };
        assert_ne!(with(", lazy_context_switch = false"), SPECVIRT, "the scenario has the params line");
        let (absent, off, on) = (run(SPECVIRT), run(&with(", lazy_context_switch = false")), run(&with(", lazy_context_switch = true")));
        assert_eq!(json(&absent), json(&off));
        assert_eq!(absent.totals.lazy_switches_per_pcpu_s, 0.0);
        assert!(on.totals.lazy_switches_per_pcpu_s > on.totals.state_switches_per_pcpu_s, "{:?}", on.totals);
        assert!(on.totals.hv_fraction < absent.totals.hv_fraction);
    }

    /// The switch is Xen's arch code, the same under credit2: the vCPU alone on its pCPU comes
    /// back lazily there too (1 full switch, then lazy ones).
    #[test]
    fn credit2_switches_lazily_too() {
        let program = r#"[{ op = "forever", body = [{ op = "compute", us = 100 }, { op = "sleep", us = 100 }] }]"#;
        let text = format!(
            r#"
duration_ms = 20
[host]
cores_per_socket = 1
[hypervisor]
scheduler = "credit2"
params = {{ lazy_context_switch = true }}
[[vms]]
vcpus = 1
workloads = [{{ kind = "custom", groups = [{{ threads = 1, program = {program} }}] }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let r = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap().run().unwrap();
        let pc = &r.pcpus[0];
        assert!(pc.context_switches > 150, "{pc:?}");
        assert_eq!((pc.state_switches, pc.lazy_switches), (1, pc.context_switches - 1));
    }

    #[test]
    fn a_lazy_context_switch_that_is_not_a_bool_is_rejected_by_name() {
        let text = SPECVIRT.replace(r#"wake = "xen41" }"#, r#"wake = "xen41", lazy_context_switch = 1 }"#);
        let e = from_toml_str(&text).err().expect("rejected");
        assert_eq!(e.path, "hypervisor.params.lazy_context_switch");
        assert!(e.reason.contains("true or false"), "{e:?}");
    }
}
