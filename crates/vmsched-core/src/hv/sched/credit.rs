//! Xen credit scheduler (credit1), as in `xen/common/sched/credit.c` (sched-gran=cpu).
//!
//! Models (reference/hypervisor-mechanisms.md §1):
//! - credits: 10 per ms of run (1 credit = 100 us), burned at every tick and decision with
//!   the remainder kept (`burn_credits`);
//! - a per-pCPU tick every 10 ms (`csched_tick` → `csched_unit_acct`): a running BOOST unit
//!   drops to UNDER, credit burns, an inactive unit caught running re-joins the active set, and
//!   an active one whose pCPU has a unit waiting in its runqueue while another pCPU idles is
//!   flagged migrating (`_csched_cpu_pick` counts the own pCPU idle only if `is_runq_idle`):
//!   its pCPU reschedules, runs the waiting unit, and the flagged unit is queued on the idle
//!   pCPU, which is tickled (`vcpu_migrate` → `csched_unit_wake`, no BOOST). This is how work
//!   reaches a pCPU that went idle and was never tickled: an idle pCPU has no tick and only
//!   runs `csched_schedule` (and so `csched_load_balance`) when tickled
//!   (`csched_schedule` stops the ticker when it picks idle);
//! - accounting every 30 ms (`csched_acct`): `300 x #pCPUs` credits shared among active
//!   domains by weight x active units, surplus of capped/saturated domains redistributed to
//!   the domains after them in `prv->active_sdom` order (a domain enters at the head when its
//!   first unit becomes active, `__csched_unit_acct_start`; a saturated domain after an
//!   unsaturated one moves to the head, the `credit_xtra` reorder),
//!   clipping to [-300, 300], units above 300 leave the active set with their credit halved,
//!   caps park units below `-per_unit_cap` until credit is positive again;
//! - priorities BOOST > UNDER > OVER > IDLE, FIFO within a priority (`__runq_insert`), BOOST
//!   on wake for UNDER units (`csched_unit_wake`);
//! - decisions (`csched_schedule`): rate limit (`sched_ratelimit_us`, default 1000; 0 gives the
//!   Xen 4.1 of the seeds), re-queue, take the head, and when the head is OVER or IDLE steal a
//!   strictly higher-priority unit from a peer (rate limited to once per 1 ms per pCPU);
//!   never a unit still in its peer's scheduling tail (switched out by a full switch that has
//!   not saved its state yet: Xen's `is_running`, `__csched_vcpu_is_migrateable`, in 3.4, 4.1
//!   and current Xen; `World::sched_tail` in `hv/machine.rs`), under `xen41` and `xen34` (left out
//!   under `place_idle`: `in_tail`); peers in
//!   `cycle_cpu` order from the next pCPU under `xen34` and `xen41`, own NUMA node first under
//!   `place_idle` (current Xen's "node-wise fashion"; `steal_order`) (session 15);
//! - placement on wake: the unit's pCPU if idle, else an idle pCPU (same socket first), else
//!   its pCPU; tickling of idle pCPUs and BOOST preemption (`__runq_tickle`);
//!   `wake = "place_idle"`, the default. This stands for current Xen (4.7 and later,
//!   `xen/common/sched/credit.c` `csched_unit_wake` → `__runq_tickle`): the woken unit is
//!   queued on its pCPU, which is tickled if idle; if it is busy and an idler suits the unit,
//!   only that idler is tickled (one, cycling, `opt_tickle_one_idle`) and takes the unit by
//!   load balancing, whatever the priorities; the busy pCPU itself is tickled only when no
//!   idler suits and the unit outranks the current one. Placing the unit on the idler
//!   directly is the model's shortcut for that tickle-and-steal;
//! - `wake = "xen41"`: Xen 4.1's wake-up (the seed 001 baseline; `xen/common/sched_credit.c`
//!   of 4.1, `csched_vcpu_wake` → `__runq_tickle`, read in a 4.1-based tree, e.g.
//!   moksha11/xen-hv): no placement, the unit is queued on the pCPU it last ran on; that pCPU
//!   is tickled when the unit's priority is strictly higher than its current one's, and
//!   *also*, whenever that pCPU is busy (current priority above IDLE), one idle pCPU in the
//!   unit's affinity (`cycle_cpu(last_tickle_cpu, idle_mask)`; `opt_tickle_one_idle`, on by
//!   default). Both run the scheduler: one of them finds the work gone (a call that keeps
//!   its vCPU). "Idle" is Xen's `prv->idlers`: every pCPU running the idle vCPU, tickled or
//!   not. And 4.1's `_csched_cpu_pick`, at a tick (`csched_vcpu_acct`: migrate the running
//!   unit if the pick is not its pCPU) and in `vcpu_migrate`, always counts the unit's own
//!   pCPU idle (`cpu_set(cpu, idlers)`, no `is_runq_idle`): a running unit moves only to
//!   another socket with more than twice its own socket's idle pCPUs (`migrate_factor = 2`);
//!   within a socket it compares SMT siblings (factor 1; none in the model), so it never
//!   moves because a unit waits behind it (`pick_own_idle`). Leaves out: the per-pCPU
//!   `last_tickle_cpu` belongs to the waker's pCPU in Xen; here it is kept per pCPU the unit
//!   is queued on (the model does not know the waker's);
//! - `wake = "xen34"`: Xen 3.3/3.4's credit (the seed 003 baseline, Xen 3.4.3; its footnote:
//!   3.3's default scheduler is 4.0.0's), read in `xen/common/sched_credit.c` of a 3.3 tree
//!   (jeffchao/xen-3.3-tcg) and of a 3.4-era one (with `vcpu_migration_delay` and
//!   `burn_credits`). Wake-up as `xen41` (`csched_vcpu_wake` queues on `vc->processor`), but
//!   `__runq_tickle` tickles *every* idle pCPU in the unit's affinity when the unit's pCPU is
//!   busy (`cpus_or(mask, mask, idlers)`, `cpus_and(mask, mask, cpu_affinity)`; 4.1 added
//!   `opt_tickle_one_idle`); all of them load-balance and one steals. Its tick's and
//!   `vcpu_migrate`'s `_csched_cpu_pick` is 4.1's without `migrate_factor`: a running unit
//!   moves to another socket with strictly more idle pCPUs than its own (`weight_cpu <
//!   weight_nxt`, `cpu_core_map`; SMT siblings within a socket, none in the model), never
//!   because a unit waits behind it (`pick_own_idle`). 3.4's steal
//!   (`csched_runq_steal`: strictly higher priority, not from an idle peer, peers in
//!   `cycle_cpu` order) is the model's; it has no rate limit and no load-balance rate limit
//!   (`ratelimit_us = 0`, `load_balance_ratelimit_us = 0` go with this rule). Leaves out:
//!   `idle_bias`; 3.4's rounded burn. A unit above 300 leaves the active set with its credit
//!   reset to 0, not halved (3.4's `csched_acct`: `__csched_vcpu_acct_stop_locked(svc); credit
//!   = 0;`; later Xen halves it, "so that when it starts accounting again, it starts a little
//!   bit ahead");
//! - yield (`SCHEDOP_yield`, and Xen's PLE handler which calls it): re-queued behind one
//!   lower-priority unit, never stolen while yielding.
//!
//! - FlexW (seed 002) in the accounting (`flexw = true`, `flexw.rs`): before credits are
//!   shared, VM weights are replaced by real-time weights computed from each VM's run and
//!   runnable time, which credit tracks per unit;
//! - options from seed 001 §5 (`docs/policies.md` ## tasklets, ## csrc): where tasklet work
//!   runs (`tasklet = "idle_vcpu"`, Xen 4.1's tasklets, the default, or `"softirq"`, the
//!   seed's dynamically-allocable tasklets; the machinery is in `hv/tasklet.rs`), and the
//!   context-switch rate controller (`csrc = true`, `csrc.rs`).
//! - tasklet work in the idle vCPU (`tasklet = "idle_vcpu"`) runs at BOOST (4.1's
//!   `csched_schedule`: "Tasklet work ... overrides all else", `snext->pri =
//!   CSCHED_PRI_TS_BOOST`, reset to IDLE at the next call): the pCPU is no idler meanwhile
//!   (`idler`), and a unit woken onto it does not outrank it but tickles an idler, as for
//!   any busy pCPU (`cur_pri`, `tasklet_boost`);
//! - the cause of every context switch it makes and the VM exit it happens in (seed 001
//!   Figure 12), counted in `switch_causes.rs` and reported as `credit_cs_*` counters, and
//!   the scheduler calls that switch nothing, as `credit_kept_*`.
//!
//! Leaves out: SMT idle-neighbour scoring in `_csched_cpu_pick` (same socket first instead), soft affinity, cpupools, `vcpu_migration_delay` (default 0 anyway).
//! Runqueues are re-sorted right after accounting instead of at each pCPU's next tick.

use super::csrc::Csrc;
use super::flexw::{FlexWAcct, VmUsage};
use super::switch_causes::{Cause, SwitchCauses};
use super::{Decision, HvScheduler, Params, Reason, SchedView, TaskletMode};
use crate::engine::{Ns, NS_PER_MS, NS_PER_US};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId};

const CREDIT_NS: i64 = 100_000; // 1 credit = 100 us of run (CSCHED_CREDITS_PER_MSEC = 10)
const MIN_TIMER_NS: Ns = 100 * NS_PER_US; // CSCHED_MIN_TIMER
const ACCT_TIMER: u64 = u64::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pri {
    Idle = -64,
    Over = -2,
    Under = -1,
    Boost = 0,
}

#[derive(Debug, Clone)]
struct Unit {
    credit: i64,
    residual_ns: i64,
    pri: Pri,
    active: bool,
    start_ns: Ns,
    state_entry_ns: Ns,
    yielding: bool,
    parked: bool,
    on_runq: Option<PcpuId>,
    /// Flagged at a tick to move from its busy pCPU to an idle one (`_VPF_migrating`).
    migrating: bool,
    /// Cumulative run time, and runnable-waiting time (Xen's `RUNSTATE_running` and
    /// `RUNSTATE_runnable`), for FlexW; `wait_since` while it waits.
    ran_ns: Ns,
    waited_ns: Ns,
    wait_since: Option<Ns>,
}

pub struct Credit {
    /// `credits_per_tslice` = 10 credits/ms x tslice (300 for the default 30 ms).
    credits_per_tslice: i64,
    tslice_ns: Ns,
    tick_ns: Ns,
    ratelimit_ns: Ns,
    lb_ratelimit_ns: Ns,
    units: Vec<Unit>,
    runq: Vec<Vec<VcpuId>>,
    tickled: Vec<bool>,
    last_lb: Vec<Ns>,
    credit_balance: i64,
    /// `prv->active_sdom`: the VMs with active units, in the order `csched_acct` visits them
    /// (a VM enters at the head, `__csched_unit_acct_start`; a saturated VM after a
    /// non-saturated one moves to the head, the `credit_xtra` reorder; it leaves with its last
    /// active unit, `__csched_unit_acct_stop_locked`).
    active_sdom: Vec<usize>,
    tasklet: TaskletMode,
    /// Xen's lazy context switch (`hv::lazy_switch::from_params`).
    lazy_context_switch: bool,
    csrc: Option<Csrc>,
    flexw: Option<FlexWAcct>,
    migrations_running: u64,
    /// Why each context switch happened (seed 001 Figure 12), `switch_causes.rs`.
    causes: SwitchCauses,
    wake: WakeRule,
    /// Xen 4.1's `last_tickle_cpu`, per pCPU a unit is queued on (`WakeRule::Xen41`).
    last_tickle: Vec<PcpuId>,
    /// The pCPU runs tasklet work in its idle vCPU, which `csched_schedule` raised to BOOST
    /// (`tasklet_boost`).
    tasklet_boost: Vec<bool>,
}

/// How a woken unit is placed and which pCPUs are tickled (`hypervisor.params.wake`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeRule {
    /// Place on an idle pCPU if there is one, else preempt the unit's pCPU if it outranks the
    /// current unit (current Xen's `__runq_tickle`, with the steal folded into placement).
    PlaceIdle,
    /// Xen 4.1: queue on the last pCPU; tickle it if outranked, and one idler if it is busy;
    /// a running unit moves at a tick only to a socket with more than twice the idle pCPUs
    /// (`pick_own_idle`).
    Xen41,
    /// Xen 3.3/3.4 (and 4.0): as `Xen41` but tickle every idler if it is busy; and a running
    /// unit moves at a tick only to a socket with more idle pCPUs (`pick_own_idle`).
    Xen34,
}

impl Credit {
    pub fn from_params(p: &mut Params) -> Result<Self, ScenarioError> {
        Self::from_params_with(p, false)
    }

    /// As `from_params`, with FlexW in the accounting on unless `flexw = false` when
    /// `flexw_by_default` (the `flex` scheduler).
    pub fn from_params_with(p: &mut Params, flexw_by_default: bool) -> Result<Self, ScenarioError> {
        let tslice_ms = p.f64("tslice_ms", 30.0, 1.0, 1000.0)?;
        let ratelimit_us = p.f64("ratelimit_us", 1000.0, 0.0, 500_000.0)?;
        let lb_us = p.f64("load_balance_ratelimit_us", 1000.0, 0.0, 1_000_000.0)?;
        // Xen 4.1 (the seed's baseline) runs every tasklet in the idle vCPU (common/tasklet.c
        // `tasklet_enqueue` raises SCHEDULE_SOFTIRQ); seed 001 §5.2 adds softirq tasklets.
        let tasklet = match p.choice("tasklet", "idle_vcpu", &["idle_vcpu", "softirq"])? {
            "softirq" => TaskletMode::Softirq,
            _ => TaskletMode::IdleVcpu,
        };
        let lazy_context_switch = crate::hv::lazy_switch::from_params(p)?;
        let csrc = Csrc::from_params(p)?;
        let flexw = FlexWAcct::from_params(p, flexw_by_default)?;
        // Wake-up placement and tickling: current Xen's (default) or Xen 4.1's (seed 001).
        let wake = match p.choice("wake", "place_idle", &["place_idle", "xen41", "xen34"])? {
            "xen41" => WakeRule::Xen41,
            "xen34" => WakeRule::Xen34,
            _ => WakeRule::PlaceIdle,
        };
        let tslice_ns = (tslice_ms * NS_PER_MS as f64) as Ns;
        let ticks = if tslice_ms < 3.0 { 1 } else { 3 }; // CSCHED_TICKS_PER_TSLICE
        Ok(Credit {
            credits_per_tslice: (tslice_ns as i64) / CREDIT_NS,
            tslice_ns,
            tick_ns: tslice_ns / ticks,
            ratelimit_ns: ((ratelimit_us * NS_PER_US as f64) as Ns).min(tslice_ns),
            lb_ratelimit_ns: (lb_us * NS_PER_US as f64) as Ns,
            units: Vec::new(),
            runq: Vec::new(),
            tickled: Vec::new(),
            last_lb: Vec::new(),
            credit_balance: 0,
            active_sdom: Vec::new(),
            tasklet,
            lazy_context_switch,
            csrc,
            flexw,
            migrations_running: 0,
            causes: SwitchCauses::default(),
            wake,
            last_tickle: Vec::new(),
            tasklet_boost: Vec::new(),
        })
    }

    /// Priority of `v` (for policies layered on credit, e.g. `dp`).
    pub fn pri(&self, v: VcpuId) -> Pri {
        self.units[v].pri
    }

    /// The pCPU whose runqueue holds `v`, if it is queued.
    pub fn queued_on(&self, v: VcpuId) -> Option<PcpuId> {
        self.units[v].on_runq
    }

    /// Move queued `v` to pCPU `to`'s runqueue and tickle `to` (the `vcpu_migrate` that
    /// follows an affinity change, `xen/common/schedule.c: vcpu_set_affinity`; with `wake =
    /// "xen34"` it is queued at BOOST if it was UNDER, `boost_after_migrate`).
    pub fn requeue(&mut self, view: &mut SchedView, v: VcpuId, to: PcpuId) {
        if self.units[v].on_runq.is_some() {
            self.remove(v);
            self.boost_after_migrate(v);
            self.insert(to, v);
            self.tickle(view, to, v);
        }
    }

    /// `vcpu_migrate` ends in `vcpu_wake` → `csched_vcpu_wake`, which in Xen 3.4
    /// (`xen/common/sched_credit.c`) boosts every UNDER, unparked vCPU it queues, one that
    /// was runnable all along included; current Xen skips the boost for a unit "waking up
    /// after a migration, rather than after having block" (`CSCHED_FLAG_UNIT_MIGRATING`).
    /// Applied for `wake = "xen34"` and `"xen41"` (the 4.2-era `csched_vcpu_wake` boosts
    /// alike; the flag came later), not for current Xen's rule.
    fn boost_after_migrate(&mut self, v: VcpuId) {
        let u = &mut self.units[v];
        if matches!(self.wake, WakeRule::Xen34 | WakeRule::Xen41) && u.pri == Pri::Under && !u.parked {
            u.pri = Pri::Boost;
        }
    }

    /// Whether `v` is parked by its cap.
    pub fn parked(&self, v: VcpuId) -> bool {
        self.units[v].parked
    }

    /// Switch running `s` on pCPU `p` with `t`, queued on another pCPU's runqueue: `t` runs on
    /// `p` for `left_ns`, what is left of the slice `s` was running in, and `s` takes `t`'s
    /// place in that runqueue (inserted by priority, not tickled unless that pCPU is idle), so
    /// neither runqueue changes length or weight (FlexS's `load_balance_switch`, seed 002
    /// "FlexS Design (cont')"). The caller passes `left_ns` because `s` may itself have been
    /// switched in mid-slice. Returns the decision for `p`.
    pub fn switch_with(&mut self, view: &mut SchedView, p: PcpuId, s: VcpuId, t: VcpuId, left_ns: Ns) -> Decision {
        let now = view.now;
        let q = self.units[t].on_runq.expect("switch target is queued");
        self.burn(s, now);
        self.remove(t);
        self.units[s].yielding = false;
        self.insert(q, s);
        if view.is_idle(q) {
            self.tickle_once(view, q);
        }
        self.causes.clear(p);
        self.causes.count(Cause::Yield, true);
        self.units[s].migrating = false;
        self.start_wait(s, now);
        self.end_wait(t, now);
        let u = &mut self.units[t];
        u.yielding = false;
        u.start_ns = now;
        u.state_entry_ns = now;
        if let Some(c) = &mut self.csrc {
            c.record_switch(p, now);
        }
        Decision { next: Some(t), slice_ns: Some(left_ns.min(self.tslice_ns).max(MIN_TIMER_NS)) }
    }

    /// Whether running `v` was flagged at a tick to move to an idle pCPU at its pCPU's next
    /// decision (`_VPF_migrating`, see `tick`).
    pub fn migrating(&self, v: VcpuId) -> bool {
        self.units[v].migrating
    }

    /// Whether `p` has a wake-up tickle pending (`__runq_tickle` asked it to reschedule).
    pub fn tickled(&self, p: PcpuId) -> bool {
        self.tickled[p]
    }

    /// Let running `s` on `p` go on for the `left_ns` left of its slice: a decision that
    /// changes nothing. For a layer that asked `p` to decide and then chose not to act (FlexS
    /// without a sibling to switch in); not for a pending wake-up tickle (see `tickled`).
    pub fn keep_running(&mut self, view: &mut SchedView, p: PcpuId, s: VcpuId, left_ns: Ns) -> Decision {
        self.burn(s, view.now);
        self.causes.decided(p, Reason::Timer, true, false);
        Decision { next: Some(s), slice_ns: Some(left_ns.max(MIN_TIMER_NS)) }
    }

    fn pri_of(&self, v: Option<VcpuId>) -> Pri {
        v.map_or(Pri::Idle, |v| self.units[v].pri)
    }

    fn burn(&mut self, v: VcpuId, now: Ns) {
        let u = &mut self.units[v];
        u.ran_ns += now.saturating_sub(u.start_ns);
        let elapsed = (now.saturating_sub(u.start_ns)) as i64 + u.residual_ns;
        u.credit -= elapsed / CREDIT_NS;
        u.residual_ns = elapsed % CREDIT_NS;
        u.start_ns = now;
    }

    fn start_wait(&mut self, v: VcpuId, now: Ns) {
        self.units[v].wait_since.get_or_insert(now);
    }

    fn end_wait(&mut self, v: VcpuId, now: Ns) {
        let u = &mut self.units[v];
        if let Some(t) = u.wait_since.take() {
            u.waited_ns += now.saturating_sub(t);
        }
    }

    /// Per VM, cumulative run and run + wait time up to now (the running units' current run
    /// included).
    fn vm_usage(&self, view: &SchedView) -> Vec<VmUsage> {
        let now = view.now;
        let mut out = vec![VmUsage::default(); view.vms.len()];
        for (v, u) in self.units.iter().enumerate() {
            let running = matches!(view.vcpus[v].run, RunState::Running(_));
            let ran = u.ran_ns + if running { now.saturating_sub(u.start_ns) } else { 0 };
            let waited = u.waited_ns + u.wait_since.map_or(0, |t| now.saturating_sub(t));
            let o = &mut out[view.vcpus[v].vm];
            o.ran_ns += ran;
            o.demand_ns += ran + waited;
        }
        out
    }

    /// The weight credit shares credits by: FlexW's real-time weight when on, else the VM's.
    fn weight_of(&self, view: &SchedView, vm: usize) -> i64 {
        self.flexw.as_ref().map_or(view.vms[vm].weight, |f| f.weight(vm)) as i64
    }

    /// FlexW's state, when on.
    pub fn flexw(&self) -> Option<&FlexWAcct> {
        self.flexw.as_ref()
    }

    /// `__runq_insert`: after every unit of equal or higher priority; a yielding unit goes
    /// behind one more, lower-priority, unit if there is one.
    fn insert(&mut self, p: PcpuId, v: VcpuId) {
        let pri = self.units[v].pri;
        let q = &self.runq[p];
        let mut at = q.iter().position(|&x| self.units[x].pri < pri).unwrap_or(q.len());
        if self.units[v].yielding && at < q.len() {
            at += 1;
        }
        self.runq[p].insert(at, v);
        self.units[v].on_runq = Some(p);
    }

    fn remove(&mut self, v: VcpuId) {
        if let Some(p) = self.units[v].on_runq.take() {
            self.runq[p].retain(|&x| x != v);
        }
    }

    fn idle_for_pick(&self, view: &SchedView, p: PcpuId) -> bool {
        self.idler(view, p) && self.runq[p].is_empty() && !self.tickled[p]
    }

    /// Whether `p` is in Xen's `prv->idlers`: it runs the idle vCPU at IDLE priority. A pCPU
    /// whose idle vCPU runs tasklet work is not: `csched_schedule` picked the idle vCPU at
    /// BOOST for it ("Tasklet work (which runs in idle VCPU context) overrides all else",
    /// `snext->pri = CSCHED_PRI_TS_BOOST`) and so cleared `p` from the idlers mask (Xen 4.1
    /// `xen/common/sched_credit.c` `csched_schedule`; current Xen alike).
    fn idler(&self, view: &SchedView, p: PcpuId) -> bool {
        view.is_idle(p) && !self.tasklet_boost[p]
    }

    /// The priority of what runs on `p`: its unit's, BOOST for an idle vCPU doing tasklet
    /// work (`tasklet_boost`), else IDLE.
    fn cur_pri(&self, view: &SchedView, p: PcpuId) -> Pri {
        match view.pcpu_cur[p] {
            Some(v) => self.units[v].pri,
            None if self.tasklet_boost[p] => Pri::Boost,
            None => Pri::Idle,
        }
    }

    /// Xen 4.1's `csched_vcpu_wake` queues on `vc->processor`: the pCPU `v` last ran on (the
    /// first allowed one if its affinity changed since; Xen moves it at the change).
    fn last_allowed(&self, view: &SchedView, v: VcpuId) -> PcpuId {
        let last = view.vcpus[v].last_pcpu;
        if view.allowed(v, last) {
            return last;
        }
        (0..view.n_pcpus()).find(|&p| view.allowed(v, p)).unwrap_or(0)
    }

    /// `_csched_cpu_pick`, simplified: the unit's own pCPU if idle, else an idle pCPU of the
    /// same socket, else any idle pCPU, else its own pCPU.
    fn cpu_pick(&self, view: &SchedView, v: VcpuId) -> PcpuId {
        let n = view.n_pcpus();
        let last = view.vcpus[v].last_pcpu;
        let allowed_last = view.allowed(v, last);
        if allowed_last && self.idle_for_pick(view, last) {
            return last;
        }
        let sock = view.topo.socket_of(last);
        let order = (1..=n).map(|i| (last + i) % n);
        let mut other = None;
        for p in order {
            if view.allowed(v, p) && self.idle_for_pick(view, p) {
                if view.topo.socket_of(p) == sock {
                    return p;
                }
                other.get_or_insert(p);
            }
        }
        if let Some(p) = other {
            return p;
        }
        self.last_allowed(view, v)
    }

    /// `__runq_tickle`.
    fn tickle(&mut self, view: &mut SchedView, p: PcpuId, v: VcpuId) {
        if self.wake != WakeRule::PlaceIdle {
            return self.tickle_queued(view, p, v);
        }
        let new_pri = self.units[v].pri;
        if new_pri > self.cur_pri(view, p) {
            self.tickle_once(view, p);
            return;
        }
        let n = view.n_pcpus();
        if let Some(q) = (1..n).map(|i| (p + i) % n).find(|&q| view.allowed(v, q) && self.idle_for_pick(view, q)) {
            self.tickled[q] = true;
            self.causes.request(q, Cause::Wake);
            view.tickle(q);
        }
    }

    /// Xen 3.4's and 4.1's `__runq_tickle` for `v` queued on `p`: `p` if `v` outranks its
    /// current unit; and, if `p` is busy (its current priority is above IDLE: a unit, or
    /// the idle vCPU at BOOST doing tasklet work), the idle pCPUs in `v`'s affinity (`idler`):
    /// all of them (3.4, `cpus_or(mask, mask, idlers)`), or the next one after `last_tickle`
    /// (4.1, `cycle_cpu`). A pCPU whose scheduler call is already pending is not asked twice
    /// (a raised softirq stays raised).
    fn tickle_queued(&mut self, view: &mut SchedView, p: PcpuId, v: VcpuId) {
        let cur_pri = self.cur_pri(view, p);
        let mut to = Vec::with_capacity(2);
        if self.units[v].pri > cur_pri {
            to.push(p);
        }
        if cur_pri > Pri::Idle {
            let n = view.n_pcpus();
            let last = self.last_tickle[p];
            let mut idlers = (1..=n).map(|i| (last + i) % n).filter(|&q| q != p && self.idler(view, q) && view.allowed(v, q));
            if self.wake == WakeRule::Xen34 {
                to.extend(idlers);
            } else if let Some(q) = idlers.next() {
                self.last_tickle[p] = q;
                to.push(q);
            }
        }
        for q in to {
            self.tickle_once(view, q);
        }
    }

    /// Raise `q`'s scheduler softirq for a wake-up unless it is already raised.
    fn tickle_once(&mut self, view: &mut SchedView, q: PcpuId) {
        if !self.tickled[q] {
            self.tickled[q] = true;
            self.causes.request(q, Cause::Wake);
            view.tickle(q);
        }
    }

    /// `csched_load_balance` / `csched_runq_steal`: steal the first strictly higher-priority
    /// unit of a busy peer (`steal_order`) that is not in its peer's scheduling tail.
    fn steal(&mut self, view: &SchedView, p: PcpuId, floor: Pri) -> Option<VcpuId> {
        for q in self.steal_order(view, p) {
            let nr_runnable = self.runq[q].len() + view.pcpu_cur[q].is_some() as usize;
            if view.pcpu_cur[q].is_none() || nr_runnable <= 1 {
                continue;
            }
            for (i, &c) in self.runq[q].iter().enumerate() {
                let u = &self.units[c];
                if u.pri <= floor {
                    break;
                }
                // `__csched_vcpu_is_migrateable`: not `is_running` (still in the peer's
                // scheduling tail, `VcpuFacts::sched_tail_until`; `in_tail`), and allowed on `p`.
                if u.yielding || self.in_tail(view, c) || !view.allowed(c, p) {
                    continue;
                }
                self.runq[q].remove(i);
                self.units[c].on_runq = None;
                return Some(c);
            }
        }
        None
    }

    /// Whether queued `v` is still in its pCPU's scheduling tail (Xen's `is_running`), which
    /// the steal respects under `wake = "xen41"` and `"xen34"`. Current Xen has the same test,
    /// but under `place_idle` it is left out: the runs that use that rule (flex, seed 002) are
    /// hogs whose pCPUs all switch at the same nanosecond at every 30 ms boundary (slice end
    /// and accounting; the model's timers start together and never drift, Xen's per-pCPU
    /// timers do, with `timer_slop`), so a pCPU tickled there calls `phys_ipi_ns` later, still
    /// inside every tail (measured, session 15, scratch instrumentation: in flex-fairness every
    /// refused steal came 1,000 ns after such a boundary, with the whole 2,240 ns tail left);
    /// with it, credit + FlexW's mean relative lag there was 0.151 against under 0.05 without
    /// (`hv::sched::flexw::scenario_tests`).
    fn in_tail(&self, view: &SchedView, v: VcpuId) -> bool {
        self.wake != WakeRule::PlaceIdle && view.vcpus[v].sched_tail_until > view.now
    }

    /// The peers `csched_load_balance` visits from `p`: in Xen 3.4 and 4.1 (`wake = "xen34"`,
    /// `"xen41"`) every other pCPU in `cycle_cpu` order from the next one ("Peek at non-idling
    /// CPUs in the system, starting with our immediate neighbour": `peer_cpu =
    /// cycle_cpu(peer_cpu, workers)`, 3.4-era and 4.1-based `xen/common/sched_credit.c`), with
    /// no NUMA order; current Xen (`place_idle`) peeks "in a node-wise fashion", the local
    /// node's pCPUs first (`xen/common/sched/credit.c`). Idle peers are skipped by `steal`.
    fn steal_order(&self, view: &SchedView, p: PcpuId) -> Vec<PcpuId> {
        let n = view.n_pcpus();
        let mut peers: Vec<PcpuId> = (1..n).map(|i| (p + i) % n).collect();
        if self.wake == WakeRule::PlaceIdle {
            let node = view.topo.node_of(p);
            peers.sort_by_key(|&q| (view.topo.node_of(q) != node) as u8);
        }
        peers
    }

    fn tick(&mut self, view: &mut SchedView, p: PcpuId) {
        if let Some(v) = view.pcpu_cur[p] {
            if self.units[v].pri == Pri::Boost {
                self.units[v].pri = Pri::Under;
            }
            self.burn(v, view.now);
            if !self.units[v].active {
                self.units[v].active = true;
                let vm = view.vcpus[v].vm;
                if !self.active_sdom.contains(&vm) {
                    self.active_sdom.insert(0, vm);
                }
            } else if !self.units[v].migrating && self.tick_moves(view, v, p) {
                // `csched_unit_acct`: `_csched_cpu_pick` found a better pCPU than `p`, so the
                // unit is flagged `_VPF_migrating` and its pCPU reschedules.
                self.units[v].migrating = true;
                self.migrations_running += 1;
                self.causes.request(p, Cause::TickMigrate);
                view.tickle(p);
            }
        }
        view.arm(p as u64, view.now + self.tick_ns);
    }

    /// Whether `_csched_cpu_pick` at a tick moves unit `v` off `p`, where it runs: Xen 3.4's
    /// or 4.1's (`pick_own_idle`), or current Xen's, which counts `p` idle only when nothing
    /// waits in its runqueue (`is_runq_idle`) and then moves to any idle pCPU.
    fn tick_moves(&self, view: &SchedView, v: VcpuId, p: PcpuId) -> bool {
        match self.wake {
            WakeRule::Xen34 | WakeRule::Xen41 => self.pick_own_idle(view, v, p) != p,
            WakeRule::PlaceIdle => self.idle_peer(view, v, p).is_some(),
        }
    }

    /// How many times the current choice's idle pCPUs another socket must beat in
    /// `_csched_cpu_pick` to win: 2 in Xen 4.1 (`migrate_factor = 2`, "Migrate only if the
    /// other core is twice as idle"), 1 in 3.3/3.4 (`weight_cpu < weight_nxt`).
    fn cross_socket_factor(&self) -> usize {
        if self.wake == WakeRule::Xen41 { 2 } else { 1 }
    }

    /// Xen 3.3/3.4's and 4.1's `_csched_cpu_pick` for `v` on `p`: `p` (or the first allowed
    /// pCPU after it) always counts as idle (`cpu_set(cpu, idlers)`, no `is_runq_idle`);
    /// walking the other idle pCPUs in `v`'s affinity in `cycle_cpu` order, it moves to
    /// another socket's first idler when that socket has more than `cross_socket_factor`
    /// times the current choice's socket's idlers (`cpu_core_map`), and within a socket
    /// compares SMT siblings with factor 1 (`cpu_sibling_map`; the model has none: one idler
    /// each, so it never moves within a socket). Leaves out the `idle_bias` rotation among a
    /// socket's idlers (the first one in `v`'s affinity is taken) and
    /// `sched_smt_power_savings` (off by default).
    fn pick_own_idle(&self, view: &SchedView, v: VcpuId, p: PcpuId) -> PcpuId {
        let factor = self.cross_socket_factor();
        let n = view.n_pcpus();
        let next_after = |c: PcpuId, set: &dyn Fn(PcpuId) -> bool| (1..=n).map(|i| (c + i) % n).find(|&q| set(q));
        let mut cpu = if view.allowed(v, p) { p } else { next_after(p, &|q| view.allowed(v, q)).unwrap_or(p) };
        let start = cpu;
        let idle = |q: PcpuId| q == start || self.idler(view, q);
        let sock = |q: PcpuId| view.topo.socket_of(q);
        // The idle pCPUs `c` stands for against `other`: itself within a socket, its whole
        // socket across sockets.
        let group = |c: PcpuId, other: PcpuId, q: PcpuId| {
            idle(q) && if sock(c) == sock(other) { q == c } else { sock(q) == sock(c) }
        };
        let mut cand: Vec<bool> = (0..n).map(|q| q != cpu && view.allowed(v, q) && idle(q)).collect();
        while let Some(nxt) = next_after(cpu, &|q| cand[q]) {
            let mine = (0..n).filter(|&q| group(cpu, nxt, q)).count();
            let theirs = (0..n).filter(|&q| group(nxt, cpu, q)).count();
            let factor = if sock(cpu) == sock(nxt) { 1 } else { factor };
            if mine * factor < theirs {
                cpu = (0..n).find(|&q| group(nxt, cpu, q) && cand[q]).unwrap_or(nxt);
                cand[cpu] = false;
            } else {
                for q in (0..n).filter(|&q| group(nxt, cpu, q)) {
                    cand[q] = false;
                }
                cand[nxt] = false;
            }
        }
        cpu
    }

    /// For unit `v` running on `p`, the pCPU `_csched_cpu_pick` moves it to: none if nothing
    /// waits in `p`'s runqueue (`is_runq_idle`: `p` counts as idle), else an idle pCPU, same
    /// socket first.
    fn idle_peer(&self, view: &SchedView, v: VcpuId, p: PcpuId) -> Option<PcpuId> {
        if self.runq[p].is_empty() {
            return None;
        }
        self.idle_other(view, v, p)
    }

    /// An idle pCPU other than `p` where `v` may run, same socket as `p` first.
    fn idle_other(&self, view: &SchedView, v: VcpuId, p: PcpuId) -> Option<PcpuId> {
        let n = view.n_pcpus();
        let sock = view.topo.socket_of(p);
        let idle: Vec<PcpuId> = (1..n).map(|i| (p + i) % n).filter(|&q| view.allowed(v, q) && self.idle_for_pick(view, q)).collect();
        idle.iter().copied().find(|&q| view.topo.socket_of(q) == sock).or(idle.first().copied())
    }

    fn acct(&mut self, view: &mut SchedView) {
        if self.flexw.is_some() {
            let usage = self.vm_usage(view);
            let configured: Vec<u32> = view.vms.iter().map(|vm| vm.weight).collect();
            let vcpus: Vec<usize> = view.vms.iter().map(|vm| vm.vcpus.len()).collect();
            if let Some(f) = &mut self.flexw {
                f.on_acct(view.now, view.n_pcpus(), &configured, &vcpus, &usage);
            }
        }
        let ncpu = view.n_pcpus() as i64;
        let mut credit_total = self.credits_per_tslice * ncpu;
        let mut weight_total: i64 = 0;
        let mut active_of_vm: Vec<Vec<VcpuId>> = vec![Vec::new(); view.vms.len()];
        for (v, u) in self.units.iter().enumerate() {
            if u.active {
                active_of_vm[view.vcpus[v].vm].push(v);
            }
        }
        for (d, units) in active_of_vm.iter().enumerate() {
            weight_total += self.weight_of(view, d) * units.len() as i64;
        }
        view.arm(ACCT_TIMER, view.now + self.tslice_ns);
        if weight_total == 0 {
            // csched_acct: with no active domain the balance is dropped, not carried over.
            self.credit_balance = 0;
            return;
        }
        if self.credit_balance < 0 {
            credit_total -= self.credit_balance;
        }
        let mut weight_left = weight_total;
        let mut balance = 0i64;
        let mut credit_xtra = false;
        let ceil_div = |a: i64, b: i64| if b == 0 { 0 } else { (a + b - 1).div_euclid(b) };
        self.active_sdom.retain(|&d| !active_of_vm[d].is_empty());
        for d in self.active_sdom.clone() {
            let units = &active_of_vm[d];
            let n_d = units.len() as i64;
            let w_d = self.weight_of(view, d);
            weight_left -= w_d * n_d;
            let mut credit_peak = n_d * self.credits_per_tslice;
            if self.credit_balance < 0 {
                credit_peak += ceil_div(-self.credit_balance * w_d * n_d, weight_total);
            }
            let cap = view.vms[d].cap_pct as i64;
            let mut per_unit_cap = i64::MAX;
            if cap > 0 {
                let credit_cap = ceil_div(cap * self.credits_per_tslice, 100);
                credit_peak = credit_peak.min(credit_cap);
                per_unit_cap = ceil_div(credit_cap, n_d);
            }
            let mut credit_fair = ceil_div(credit_total * w_d * n_d, weight_total);
            if credit_fair < credit_peak {
                credit_xtra = true;
            } else {
                if weight_left > 0 {
                    credit_total += ceil_div((credit_fair - credit_peak) * weight_total, weight_left);
                }
                if credit_xtra {
                    // "Lazily keep domains with extra credits at the head of the queue to give
                    // others a chance at them in future accounting periods."
                    self.active_sdom.retain(|&x| x != d);
                    self.active_sdom.insert(0, d);
                }
                credit_fair = credit_peak;
            }
            let per_unit = ceil_div(credit_fair, n_d);
            for &v in units {
                let u = &mut self.units[v];
                u.credit += per_unit;
                if u.credit < 0 {
                    u.pri = Pri::Over;
                    if cap > 0 && u.credit < -per_unit_cap && !u.parked {
                        u.parked = true;
                    }
                    u.credit = u.credit.max(-self.credits_per_tslice);
                } else {
                    u.pri = Pri::Under;
                    if u.parked {
                        u.parked = false;
                        if view.vcpus[v].run == RunState::Runnable && u.on_runq.is_none() {
                            let p = self.last_allowed(view, v);
                            self.insert(p, v);
                            self.tickle(view, p, v);
                        }
                    }
                    let reset_to_zero = self.wake == WakeRule::Xen34;
                    let u = &mut self.units[v];
                    if u.credit > self.credits_per_tslice {
                        u.active = false;
                        // 3.4: `credit = 0`; later Xen halves it, "so that when it starts
                        // accounting again, it starts a little bit ahead".
                        u.credit = if reset_to_zero { 0 } else { u.credit / 2 };
                    }
                }
                balance += self.units[v].credit;
            }
            if units.iter().all(|&v| !self.units[v].active) {
                self.active_sdom.retain(|&x| x != d);
            }
        }
        self.credit_balance = balance;
        // Parked units leave their runqueue; running ones are descheduled.
        for v in 0..self.units.len() {
            if self.units[v].parked {
                self.remove(v);
                if let RunState::Running(p) = view.vcpus[v].run {
                    self.causes.request(p, Cause::Park);
                    view.tickle(p);
                }
            }
        }
        // csched_runq_sort: UNDER/BOOST before OVER, stable.
        for p in 0..self.runq.len() {
            let units = &self.units;
            self.runq[p].sort_by(|a, b| units[*b].pri.cmp(&units[*a].pri));
        }
    }
}

impl HvScheduler for Credit {
    fn enforces_caps(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "credit"
    }

    fn init(&mut self, view: &mut SchedView) {
        let n = view.n_pcpus();
        self.units = vec![
            Unit {
                credit: 0,
                residual_ns: 0,
                pri: Pri::Under,
                active: false,
                start_ns: 0,
                state_entry_ns: 0,
                yielding: false,
                parked: false,
                on_runq: None,
                migrating: false,
                ran_ns: 0,
                waited_ns: 0,
                wait_since: None,
            };
            view.vcpus.len()
        ];
        self.runq = vec![Vec::new(); n];
        self.tickled = vec![false; n];
        self.last_tickle = vec![0; n];
        self.tasklet_boost = vec![false; n];
        self.last_lb = vec![0; n];
        self.causes = SwitchCauses::new(n);
        for p in 0..n {
            view.arm(p as u64, self.tick_ns);
        }
        view.arm(ACCT_TIMER, self.tslice_ns);
    }

    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        if self.units[v].on_runq.is_some() {
            return;
        }
        self.start_wait(v, view.now);
        let u = &mut self.units[v];
        if u.parked {
            return;
        }
        if u.pri == Pri::Under {
            u.pri = Pri::Boost;
        }
        let p = match self.wake {
            WakeRule::PlaceIdle => self.cpu_pick(view, v),
            WakeRule::Xen41 | WakeRule::Xen34 => self.last_allowed(view, v),
        };
        self.insert(p, v);
        self.tickle(view, p, v);
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        self.end_wait(v, view.now);
        self.remove(v);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        let now = view.now;
        let migrating = prev.map_or(false, |v| std::mem::take(&mut self.units[v].migrating));
        let d = if migrating && prev_runnable && why != Reason::Tasklet {
            self.migrate_running(view, p, prev.unwrap())
        } else {
            self.decide(view, p, prev, prev_runnable, why)
        };
        if let Some(v) = prev.filter(|&v| prev_runnable && d.next != Some(v)) {
            self.start_wait(v, now);
        }
        if let Some(s) = d.next {
            self.end_wait(s, now);
        }
        // A switch as the machine counts it (Xen's `sched_ctx`): whenever prev != next, the
        // idle vCPU included.
        let switched = d.next != prev;
        self.causes.decided(p, why, prev.is_some(), switched);
        d
    }

    fn timer(&mut self, view: &mut SchedView, id: u64) {
        if id == ACCT_TIMER {
            self.acct(view);
        } else {
            self.tick(view, id as PcpuId);
        }
    }

    fn pause_exit(&mut self, _view: &mut SchedView, _v: VcpuId) -> bool {
        // Xen's PAUSE exit handler calls SCHEDOP_yield.
        true
    }

    fn tasklet_mode(&self) -> TaskletMode {
        self.tasklet
    }

    /// Under `xen41` and `xen34` a woken vCPU is queued on its last pCPU, which is tickled to
    /// preempt, and an idler is tickled too (`__runq_tickle`): the waker's pCPU handles its
    /// own SCHEDULE_SOFTIRQ before VM entry, ahead of the idler's event-check IPI
    /// (docs/policies.md ## credit_wake). Under `place_idle` the woken vCPU goes to the idler.
    fn wakes_after_exit(&self) -> bool {
        self.wake != WakeRule::PlaceIdle
    }

    fn lazy_context_switch(&self) -> bool {
        self.lazy_context_switch
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = vec![("credit_migrate_running", self.migrations_running)];
        c.extend(self.causes.counters());
        if let Some(f) = &self.flexw {
            c.push(("flexw_updates", f.updates));
            c.push(("flexw_resets", f.resets));
        }
        if let Some(r) = &self.csrc {
            c.push(("csrc_skips_rate", r.skips_rate));
            c.push(("csrc_skips_min_run", r.skips_min_run));
        }
        c
    }
}

impl Credit {
    /// `csched_schedule` for a running unit flagged `_VPF_migrating` at a tick: it is not
    /// runnable here (no rate limit, not re-queued), `p` picks from its runqueue, then
    /// `vcpu_migrate` places the unit with `csched_res_pick` — an idle pCPU if one is left
    /// (`csched_unit_wake` queues it there without BOOST and tickles it), else back on `p`;
    /// with `wake = "xen34"` or `"xen41"`, that Xen's `csched_cpu_pick` (`pick_own_idle`),
    /// which counts `p` idle; with either the unit is queued at BOOST if it was UNDER
    /// (`boost_after_migrate`).
    fn migrate_running(&mut self, view: &mut SchedView, p: PcpuId, v: VcpuId) -> Decision {
        let d = self.decide(view, p, Some(v), false, Reason::Timer);
        let q = match self.wake {
            WakeRule::Xen34 | WakeRule::Xen41 => self.pick_own_idle(view, v, p),
            _ if d.next.is_none() => p,
            _ => self.idle_other(view, v, p).unwrap_or(p),
        };
        self.boost_after_migrate(v);
        if q == p && d.next.is_none() {
            // Nothing else to run: `p` is the idle pCPU the unit is placed on.
            let u = &mut self.units[v];
            u.start_ns = view.now;
            u.state_entry_ns = view.now;
            return Decision { next: Some(v), slice_ns: Some(self.tslice_ns) };
        }
        self.insert(q, v);
        if q != p {
            self.tickle(view, q, v);
        }
        d
    }

    fn decide(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        let now = view.now;
        self.tickled[p] = false;
        // "Re-instate a boosted idle VCPU as normal-idle" (4.1 `csched_schedule`).
        self.tasklet_boost[p] = why == Reason::Tasklet;
        let prev_runnable = prev_runnable && prev.map_or(false, |v| !self.units[v].parked);
        if why == Reason::Tasklet {
            // Tasklet work overrides all else: re-queue the current unit, run the idle vCPU.
            if let Some(v) = prev {
                self.burn(v, now);
                if prev_runnable {
                    self.units[v].yielding = false;
                    self.insert(p, v);
                }
                if let Some(c) = &mut self.csrc {
                    c.record_switch_to_idle(p, now);
                }
            }
            return Decision { next: None, slice_ns: None };
        }
        if prev.is_none() {
            // CSRC with `csrc_keeps_idle`: the idle vCPU is "still runnable" too.
            if let Some((_, again)) = self.csrc.as_mut().and_then(|c| c.check_idle(p, now)) {
                return Decision { next: None, slice_ns: Some(again) };
            }
        }
        if let Some(v) = prev {
            self.burn(v, now);
            let runtime = now.saturating_sub(self.units[v].state_entry_ns);
            if why != Reason::Yield {
                if let Some((_, again)) = self.csrc.as_mut().and_then(|c| c.check(p, now, runtime, prev_runnable)) {
                    return Decision { next: Some(v), slice_ns: Some(again) };
                }
            }
            if prev_runnable && why != Reason::Yield && self.ratelimit_ns > 0 && runtime < self.ratelimit_ns {
                let left = self.ratelimit_ns - runtime;
                return Decision { next: Some(v), slice_ns: Some(if runtime < MIN_TIMER_NS { MIN_TIMER_NS } else { left }) };
            }
            if prev_runnable {
                self.units[v].yielding = why == Reason::Yield;
                self.insert(p, v);
            }
        }
        let mut snext = self.runq[p].first().copied();
        let head_pri = self.pri_of(snext);
        if head_pri <= Pri::Over && now.saturating_sub(self.last_lb[p]) >= self.lb_ratelimit_ns {
            self.last_lb[p] = now;
            if let Some(s) = self.steal(view, p, head_pri) {
                snext = Some(s);
            }
        }
        if let Some(s) = snext {
            self.remove(s);
            let u = &mut self.units[s];
            u.yielding = false;
            if Some(s) != prev {
                u.start_ns = now;
                u.state_entry_ns = now;
                if let Some(c) = &mut self.csrc {
                    c.record_switch(p, now);
                }
            }
        }
        if snext.is_none() && prev.is_some() {
            // The blocked unit leaves the pCPU to the idle vCPU: a switch too.
            if let Some(c) = &mut self.csrc {
                c.record_switch_to_idle(p, now);
            }
        }
        Decision { next: snext, slice_ns: snext.map(|_| self.tslice_ns) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::host::Topology;
    use crate::hv::sched::{SchedRequest, VcpuFacts, VmFacts};
    use std::collections::BTreeMap;

    /// One pCPU and two 1-vCPU VMs, both woken at 0; vCPU 0 is dispatched at 0. Returns what
    /// the scheduler picks at `at` when vCPU 0 is still running (and runnable or not).
    fn decide_at(params: &[(&str, toml::Value)], at: Ns, prev_runnable: bool) -> Decision {
        schedule_at(params, at, prev_runnable).1
    }

    /// `decide_at`, also returning the scheduler (for its counters).
    fn schedule_at(params: &[(&str, toml::Value)], at: Ns, prev_runnable: bool) -> (Credit, Decision) {
        let map: BTreeMap<String, toml::Value> = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
        let topo = Topology::new(1, 1, None, None, 2.5);
        let fact = |vm| VcpuFacts { vm, idx: 0, run: RunState::Runnable, last_pcpu: 0, preempted: false, preempted_in_kernel: false, dy_runnable: false, pi_pending: false, spinning: false, ac_pct: 50, pmu: Default::default(), sched_tail_until: 0 };
        let mut facts = vec![fact(0), fact(1)];
        let vms = vec![VmFacts { weight: 256, cap_pct: 0, vcpus: vec![0] }, VmFacts { weight: 256, cap_pct: 0, vcpus: vec![1] }];
        let aff = vec![None, None];
        let mut reqs: Vec<SchedRequest> = Vec::new();
        let mut cur = vec![None];
        let mut view = SchedView { now: 0, topo: &topo, vcpus: &facts, vms: &vms, affinity: &aff, pcpu_cur: &cur, requests: &mut reqs };
        c.init(&mut view);
        c.wake(&mut view, 0);
        c.wake(&mut view, 1);
        let first = c.do_schedule(&mut view, 0, None, false, Reason::Timer);
        assert_eq!(first.next, Some(0));
        facts[0].run = RunState::Running(0);
        cur[0] = Some(0);
        let mut view = SchedView { now: at, topo: &topo, vcpus: &facts, vms: &vms, affinity: &aff, pcpu_cur: &cur, requests: &mut reqs };
        let d = c.do_schedule(&mut view, 0, Some(0), prev_runnable, Reason::Timer);
        (c, d)
    }

    fn csrc_on() -> Vec<(&'static str, toml::Value)> {
        vec![("ratelimit_us", toml::Value::Integer(0)), ("csrc", toml::Value::Boolean(true))]
    }

    #[test]
    fn csrc_keeps_a_runnable_vcpu_that_ran_less_than_a_millisecond() {
        let d = decide_at(&csrc_on(), 300 * NS_PER_US, true);
        assert_eq!(d, Decision { next: Some(0), slice_ns: Some(700 * NS_PER_US) });
        // Without CSRC (and Xen 4.1's zero rate limit) the other BOOST vCPU takes over.
        let off = decide_at(&[("ratelimit_us", toml::Value::Integer(0))], 300 * NS_PER_US, true);
        assert_eq!(off.next, Some(1));
        // After its millisecond the current vCPU goes behind the waiting one.
        assert_eq!(decide_at(&csrc_on(), 2 * NS_PER_MS, true).next, Some(1));
    }

    #[test]
    fn csrc_counts_its_skipped_decisions_by_criterion() {
        let count = |c: &Credit, name: &str| c.counters().into_iter().find(|(n, _)| *n == name).map(|(_, v)| v);
        // One switch in the last 10 ms is under the rate threshold (10 per 10 ms): the 0.3 ms
        // run is kept by the minimum-run criterion alone.
        let (c, d) = schedule_at(&csrc_on(), 300 * NS_PER_US, true);
        assert_eq!(d.next, Some(0));
        assert_eq!((count(&c, "csrc_skips_rate"), count(&c, "csrc_skips_min_run")), (Some(0), Some(1)));
        // A decision CSRC does not skip counts nothing; without CSRC there are no such counters.
        let (c, _) = schedule_at(&csrc_on(), 2 * NS_PER_MS, true);
        assert_eq!((count(&c, "csrc_skips_rate"), count(&c, "csrc_skips_min_run")), (Some(0), Some(0)));
        let (c, _) = schedule_at(&[("ratelimit_us", toml::Value::Integer(0))], 300 * NS_PER_US, true);
        assert_eq!(count(&c, "csrc_skips_min_run"), None);
    }

    #[test]
    fn csrc_never_keeps_a_vcpu_that_blocked() {
        assert_eq!(decide_at(&csrc_on(), 300 * NS_PER_US, false).next, Some(1));
    }

    /// One pCPU, two 1-vCPU VMs: vCPU 0 runs alone from 0 and blocks at 2 ms (the pCPU goes
    /// idle); vCPU 1 wakes at `wake_at` and the idle pCPU decides.
    fn idle_pcpu_decides(params: &[(&str, toml::Value)], wake_at: Ns) -> Decision {
        let map: BTreeMap<String, toml::Value> = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let mut k = crate::hv::sched::testkit::Kit::new(1, &[1, 1]);
        let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
        k.init(&mut c);
        k.wake(&mut c, 0);
        assert_eq!(k.pcpu_cur, vec![Some(0)]);
        k.now = 2 * NS_PER_MS;
        k.halt(&mut c, 0);
        assert_eq!(k.pcpu_cur, vec![None]);
        k.now = wake_at;
        k.vcpus[1].run = RunState::Runnable;
        k.with(|view| c.wake(view, 1));
        k.with(|view| c.do_schedule(view, 0, None, false, Reason::Timer))
    }

    #[test]
    fn csrc_keeps_an_idle_pcpu_idle_only_when_the_idle_vcpu_counts_as_runnable() {
        let keeps = |on: bool| {
            let mut p = csrc_on();
            p.push(("csrc_keeps_idle", toml::Value::Boolean(on)));
            p
        };
        let at = 2 * NS_PER_MS + 300 * NS_PER_US;
        // Xen's rate limit's reading (the default): the woken vCPU comes in at once.
        assert_eq!(idle_pcpu_decides(&keeps(false), at).next, Some(1));
        assert_eq!(idle_pcpu_decides(&csrc_on(), at).next, Some(1));
        // The idle vCPU ran 0.3 ms: kept, and the scheduler is called again after the rest.
        assert_eq!(idle_pcpu_decides(&keeps(true), at), Decision { next: None, slice_ns: Some(700 * NS_PER_US) });
        // Idle for 1 ms or more: the woken vCPU comes in.
        assert_eq!(idle_pcpu_decides(&keeps(true), 4 * NS_PER_MS).next, Some(1));
    }

    /// Two pCPUs, three 1-vCPU VMs: vCPU 0 runs on pCPU 0, vCPU 1 waits behind it (queued
    /// while only pCPU 0 was allowed), pCPU 1 is idle and was never tickled.
    fn stranded() -> (crate::hv::sched::testkit::Kit, Credit) {
        stranded_with(BTreeMap::new())
    }

    fn stranded_with(params: BTreeMap<String, toml::Value>) -> (crate::hv::sched::testkit::Kit, Credit) {
        let mut k = crate::hv::sched::testkit::Kit::new(2, &[1, 1, 1]);
        let mut c = Credit::from_params(&mut Params::new(&params)).unwrap();
        k.init(&mut c);
        k.wake(&mut c, 0);
        k.affinity[1] = Some(vec![0]);
        k.wake(&mut c, 1);
        k.affinity[1] = None;
        assert_eq!(k.pcpu_cur, vec![Some(0), None]);
        assert_eq!(c.queued_on(1), Some(0));
        (k, c)
    }

    #[test]
    fn a_tick_moves_the_running_unit_to_an_idle_pcpu_when_its_runqueue_has_a_waiter() {
        let (mut k, mut c) = stranded();
        // First tick (10 ms): vCPU 0 joins the active set. Second (20 ms): `csched_unit_acct`
        // finds pCPU 1 idle and pCPU 0's runqueue not idle, and migrates vCPU 0.
        k.advance(&mut c, 10 * NS_PER_MS);
        assert_eq!(k.pcpu_cur, vec![Some(0), None]);
        k.advance(&mut c, 20 * NS_PER_MS);
        assert_eq!(k.pcpu_cur, vec![Some(1), Some(0)], "the waiter runs where it waited, the migrant on the idle pCPU");
        assert_eq!(c.counters()[0], ("credit_migrate_running", 1));
    }

    #[test]
    fn a_tick_leaves_a_running_unit_alone_when_nothing_waits_behind_it() {
        let (mut k, mut c) = stranded();
        k.affinity[0] = Some(vec![0]);
        k.affinity[1] = Some(vec![0]);
        // vCPU 0 may not leave pCPU 0: nothing moves.
        k.advance(&mut c, 20 * NS_PER_MS);
        assert_eq!(k.pcpu_cur, vec![Some(0), None]);
        // Alone on its pCPU (vCPU 1 blocked), it stays put even with pCPU 1 idle.
        k.affinity[0] = None;
        k.vcpus[1].run = RunState::Blocked;
        k.with(|view| c.sleep(view, 1));
        k.advance(&mut c, 40 * NS_PER_MS);
        assert_eq!(k.pcpu_cur, vec![Some(0), None]);
        assert_eq!(c.counters()[0], ("credit_migrate_running", 0));
    }

    /// `n` pCPUs, two 1-vCPU VMs, `wake` as given: vCPU 0 runs on pCPU 0 and is UNDER (a tick
    /// took its BOOST), the other pCPUs are idle, and vCPU 1, which last ran on pCPU 0, wakes
    /// (BOOST). Returns the pCPUs its wake-up tickles, and the kit after serving them.
    fn wake_params(wake: &str) -> BTreeMap<String, toml::Value> {
        BTreeMap::from([("wake".to_string(), toml::Value::String(wake.into()))])
    }

    fn wake_beside_a_busy_pcpu(wake: &str) -> (Vec<PcpuId>, crate::hv::sched::testkit::Kit, Credit) {
        wake_beside_a_busy_pcpu_of(wake, 2)
    }

    fn wake_beside_a_busy_pcpu_of(wake: &str, n: usize) -> (Vec<PcpuId>, crate::hv::sched::testkit::Kit, Credit) {
        wake_beside_a_busy_pcpu_with_tail(wake, n, 0)
    }

    /// `wake_beside_a_busy_pcpu_of` with switches whose scheduling tail lasts `tail_ns`.
    fn wake_beside_a_busy_pcpu_with_tail(wake: &str, n: usize, tail_ns: Ns) -> (Vec<PcpuId>, crate::hv::sched::testkit::Kit, Credit) {
        let mut k = crate::hv::sched::testkit::Kit::new(n, &[1, 1]);
        k.sched_tail_ns = tail_ns;
        let map = wake_params(wake);
        let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
        k.init(&mut c);
        k.wake(&mut c, 0);
        k.advance(&mut c, 10 * NS_PER_MS);
        assert_eq!((k.pcpu_cur[0], k.pcpu_cur.iter().flatten().count(), c.pri(0)), (Some(0), 1, Pri::Under));
        k.vcpus[1].last_pcpu = 0;
        k.vcpus[1].run = RunState::Runnable;
        k.with(|view| c.wake(view, 1));
        let tickled = k.pending_tickles();
        k.serve(&mut c);
        (tickled, k, c)
    }

    #[test]
    fn xen41_wake_on_a_busy_pcpu_tickles_it_and_an_idle_pcpu() {
        let (tickled, k, _) = wake_beside_a_busy_pcpu("xen41");
        assert_eq!(tickled, vec![0, 1], "BOOST outranks UNDER on pCPU 0, and pCPU 0 is busy while pCPU 1 idles");
        // pCPU 0 switches to the BOOST vCPU; idle pCPU 1 steals the preempted one.
        assert_eq!(k.pcpu_cur, vec![Some(1), Some(0)]);
    }

    /// The kit's pCPUs serve their tickles in order at the same instant: pCPU 0 preempts
    /// vCPU 0 for the woken vCPU 1, then idle pCPU 1 load-balances while vCPU 0 is still in
    /// pCPU 0's scheduling tail (its switch has not saved its state yet: Xen's `is_running`,
    /// `__csched_vcpu_is_migrateable`). So pCPU 1 finds nothing and keeps idling, and nothing
    /// tickles it again: vCPU 0 waits on pCPU 0 and runs there once vCPU 1 halts. Without the
    /// tail (`xen41_wake_on_a_busy_pcpu_tickles_it_and_an_idle_pcpu`, a switch of no cost)
    /// pCPU 1 steals it. Under `xen34` every idler is tickled and each finds nothing alike.
    #[test]
    fn xen41_and_xen34_an_idler_tickled_with_a_preempting_wake_finds_the_preempted_unit_in_its_tail() {
        for (wake, n) in [("xen41", 2), ("xen34", 4)] {
            let (tickled, mut k, mut c) = wake_beside_a_busy_pcpu_with_tail(wake, n, 5 * NS_PER_US);
            assert_eq!(tickled, (0..n).take(if wake == "xen41" { 2 } else { n }).collect::<Vec<_>>(), "{wake}");
            let mut expected = vec![None; n];
            expected[0] = Some(1);
            assert_eq!(k.pcpu_cur, expected, "{wake}: vCPU 0 is not stolen from pCPU 0's scheduling tail");
            assert_eq!(c.queued_on(0), Some(0), "{wake}");
            k.halt(&mut c, 1);
            expected[0] = Some(0);
            assert_eq!(k.pcpu_cur, expected, "{wake}: vCPU 0 runs where it waited");
        }
    }

    /// The same in the machine, with its costs: two pCPUs under `xen41`; vCPU 0 computes for
    /// good (UNDER after the 10 ms tick), vCPU 1 sleeps for good. At 15 ms vCPU 1 is woken with
    /// pCPU p, where vCPU 0 runs, as its last pCPU: p and the idle pCPU are both tickled
    /// (`phys_ipi_ns` later, p first). p switches to vCPU 1, whose switch (`world_switch_ns`,
    /// 2,740 ns by default) leaves vCPU 0 in p's scheduling tail for `world_switch_ns -
    /// sched_call_ns` = 2,240 ns; the idle pCPU's call, at the same instant, finds nothing.
    /// vCPU 1 halts again at once and p runs vCPU 0 again: it never migrates. Before the tail
    /// was modelled the idle pCPU stole it (one migration).
    #[test]
    fn xen41_a_preempted_vcpu_stays_on_its_pcpu_when_the_tickled_idler_calls_during_its_switch() {
        use crate::scenario::from_toml_str;
        use crate::sim::{Overrides, Simulation};
        let vm = |program: &str| format!("[[vms]]\nvcpus = 1\nworkloads = [{{ kind = \"custom\", groups = [{{ threads = 1, program = {program} }}] }}]\n");
        let text = format!(
            "duration_ms = 100\n[host]\ncores_per_socket = 2\n[hypervisor]\nscheduler = \"credit\"\nparams = {{ wake = \"xen41\", ratelimit_us = 0, load_balance_ratelimit_us = 0 }}\n{}{}",
            vm(r#"[{ op = "forever", body = [{ op = "compute", us = 1000 }] }]"#),
            vm(r#"[{ op = "sleep", us = 1000000000 }]"#),
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(15 * NS_PER_MS).unwrap();
        let w = s.world();
        let RunState::Running(p) = w.vcpus[0].run else { panic!("vCPU 0 runs") };
        let q = 1 - p;
        assert_eq!(w.vcpus[1].run, RunState::Blocked);
        let (migrations, calls_q) = (w.vcpus[0].migrations, w.pcpus[q].sched_calls);
        w.vcpus[1].last_pcpu = p;
        w.hv_wake(1);
        s.run_until(16 * NS_PER_MS).unwrap();
        let w = s.world();
        assert_eq!(w.vcpus[1].run, RunState::Blocked, "vCPU 1 halted again");
        assert_eq!(w.vcpus[0].run, RunState::Running(p), "vCPU 0 is back on its pCPU");
        assert_eq!(w.vcpus[0].migrations, migrations, "vCPU 0 was not stolen");
        assert_eq!(w.pcpus[q].sched_calls, calls_q + 1, "the idle pCPU was tickled once and kept idling");
        assert!(w.pcpus[q].cur.is_none());
    }

    /// Under `xen41` and `xen34`, a unit queued on a busy pCPU is not stolen by an idle pCPU's
    /// load balance while it is in its pCPU's scheduling tail (`sched_tail_until` after now:
    /// Xen's `is_running`, "Don't pick up work that's in the peer's scheduling tail",
    /// `__csched_vcpu_is_migrateable` in 3.4 and 4.1), and is once the tail has ended; under
    /// `place_idle` the tail is left out (`Credit::in_tail`). Two pCPUs; vCPU 0 runs on pCPU 0
    /// and vCPU 1 waits behind it (both pinned to pCPU 0 while they wake, then free).
    #[test]
    fn a_unit_in_its_pcpus_scheduling_tail_is_not_stolen_under_xen41_and_xen34() {
        for wake in ["place_idle", "xen41", "xen34"] {
            let mut k = crate::hv::sched::testkit::Kit::new(2, &[1, 1]);
            let mut map = wake_params(wake);
            map.insert("load_balance_ratelimit_us".into(), toml::Value::Integer(0));
            let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
            k.init(&mut c);
            k.affinity = vec![Some(vec![0]), Some(vec![0])];
            k.wake(&mut c, 0);
            k.wake(&mut c, 1);
            k.affinity = vec![None, None];
            assert_eq!((k.pcpu_cur.clone(), c.queued_on(1)), (vec![Some(0), None], Some(0)), "{wake}");
            k.vcpus[1].sched_tail_until = k.now + 1;
            k.schedule(&mut c, 1, Reason::Timer);
            if wake == "place_idle" {
                assert_eq!(k.pcpu_cur, vec![Some(0), Some(1)], "{wake}: no tail");
                continue;
            }
            assert_eq!(k.pcpu_cur, vec![Some(0), None], "{wake}: in its tail");
            k.now += 1;
            k.schedule(&mut c, 1, Reason::Timer);
            assert_eq!(k.pcpu_cur, vec![Some(0), Some(1)], "{wake}: the tail has ended");
        }
    }

    /// Six pCPUs on two NUMA nodes ({0,1,2} and {3,4,5}, a socket each, as the csrc host):
    /// pCPUs 0 and 3 each run a vCPU with another queued behind it, and idle pCPU 2
    /// load-balances. Xen 3.4's and 4.1's `csched_load_balance` walks the busy peers in
    /// `cycle_cpu` order from pCPU 3, with no NUMA order, so it steals pCPU 3's waiter (vCPU
    /// 1); current Xen (`place_idle`) peeks at its own node first and steals pCPU 0's (vCPU 3).
    #[test]
    fn the_steal_visits_peers_in_cycle_order_under_xen34_and_xen41_and_own_node_first_after() {
        for (wake, stolen) in [("xen41", 1), ("xen34", 1), ("place_idle", 3)] {
            let mut k = crate::hv::sched::testkit::Kit::new(6, &[1, 1, 1, 1]);
            k.topo = Topology::new(2, 3, None, None, 2.0);
            let mut map = wake_params(wake);
            map.insert("load_balance_ratelimit_us".into(), toml::Value::Integer(0));
            let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
            k.init(&mut c);
            k.affinity = vec![Some(vec![3]), Some(vec![3]), Some(vec![0]), Some(vec![0])];
            for v in 0..4 {
                k.wake(&mut c, v);
            }
            k.affinity = vec![None; 4];
            assert_eq!((k.pcpu_cur[0], k.pcpu_cur[3], c.queued_on(1), c.queued_on(3)), (Some(2), Some(0), Some(3), Some(0)), "{wake}");
            k.schedule(&mut c, 2, Reason::Timer);
            assert_eq!(k.pcpu_cur[2], Some(stolen), "{wake}");
        }
    }

    #[test]
    fn xen34_wake_on_a_busy_pcpu_tickles_it_and_every_idle_pcpu() {
        // Xen 3.4's `__runq_tickle` ORs in all idlers; 4.1's tickles one of them.
        assert_eq!(wake_beside_a_busy_pcpu_of("xen34", 4).0, vec![0, 1, 2, 3]);
        assert_eq!(wake_beside_a_busy_pcpu_of("xen41", 4).0, vec![0, 1]);
        // One idler steals the preempted vCPU 0; the others find nothing and stay idle.
        let (_, k, _) = wake_beside_a_busy_pcpu_of("xen34", 4);
        assert_eq!(k.pcpu_cur[0], Some(1));
        assert_eq!(k.pcpu_cur.iter().flatten().count(), 2);
    }

    /// Two sockets of two pCPUs; 1-vCPU VMs 0 and 1 run on pCPUs 0 and 1 (socket 0), socket 1
    /// idles. Returns where each runs after two ticks (10 and 20 ms) and the running-unit
    /// migrations.
    fn two_busy_in_one_socket(wake: &str) -> (Vec<Option<VcpuId>>, u64) {
        busy_in_one_socket(wake, 2, 2)
    }

    /// Two sockets of `per_socket` pCPUs; `busy` 1-vCPU VMs run on pCPUs 0.. (socket 0).
    fn busy_in_one_socket(wake: &str, per_socket: u32, busy: usize) -> (Vec<Option<VcpuId>>, u64) {
        let mut k = crate::hv::sched::testkit::Kit::new(2 * per_socket as usize, &vec![1; busy]);
        k.topo = Topology::new(2, per_socket, None, None, 2.0);
        let map = wake_params(wake);
        let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
        k.init(&mut c);
        k.affinity = (0..busy).map(|v| Some(vec![v])).collect();
        for v in 0..busy {
            k.wake(&mut c, v);
        }
        k.affinity = vec![None; busy];
        assert_eq!(k.pcpu_cur.iter().take(busy).flatten().count(), busy);
        k.advance(&mut c, 20 * NS_PER_MS);
        (k.pcpu_cur.clone(), c.counters()[0].1)
    }

    #[test]
    fn xen34_tick_moves_a_running_unit_to_a_socket_with_more_idle_pcpus() {
        // Xen 3.4's `_csched_cpu_pick` counts the unit's own pCPU idle: socket 0 has one idler
        // (pCPU 0), socket 1 two, so vCPU 0 moves to pCPU 2; then socket 0 has two (pCPUs 0,
        // 1) against one and vCPU 1 stays.
        assert_eq!(two_busy_in_one_socket("xen34"), (vec![None, Some(1), Some(0), None], 1));
        // Current Xen's pick moves a running unit only when a unit waits behind it.
        assert_eq!(two_busy_in_one_socket("place_idle"), (vec![Some(0), Some(1), None, None], 0));
    }

    #[test]
    fn xen34_and_xen41_a_unit_migrated_at_a_tick_is_queued_at_boost() {
        // Xen 3.4's and 4.1's `vcpu_migrate` ends in `vcpu_wake` → `csched_vcpu_wake`, which
        // boosts an UNDER vCPU whether it blocked or not; current Xen does not boost after a
        // migration.
        // `cores` busy units fill socket 0 of a 2 x `cores` host; pCPU 0's tick moves unit 0
        // to socket 1 (3.4's pick compares idlers 1:1 across sockets, 4.1's with
        // migrate_factor 2, so 4.1 needs three idlers there against pCPU 0 alone).
        let moved = |wake: &str, cores: usize| {
            let mut k = crate::hv::sched::testkit::Kit::new(2 * cores, &vec![1; cores]);
            k.topo = Topology::new(2, cores as u32, None, None, 2.0);
            let map = wake_params(wake);
            let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
            k.init(&mut c);
            k.affinity = (0..cores).map(|q| Some(vec![q])).collect();
            for v in 0..cores {
                k.wake(&mut c, v);
            }
            k.affinity = vec![None; cores];
            // Ticks at 10 ms (all join the active set), then pCPU 0's at 20 ms alone (another
            // pCPU's, at the same instant, would take the boost again).
            k.advance(&mut c, 20 * NS_PER_MS - 1);
            k.now = 20 * NS_PER_MS;
            k.with(|view| c.timer(view, 0));
            k.serve(&mut c);
            (k.running_on(0), c.pri(0), c.pri(1))
        };
        assert_eq!(moved("xen34", 2), (Some(2), Pri::Boost, Pri::Under), "moved to socket 1, at BOOST");
        assert_eq!(moved("xen41", 4), (Some(4), Pri::Boost, Pri::Under), "4.1 alike");
        // Current Xen's rule (stranded: a waiter behind it) moves it without the boost.
        let (mut k, mut c) = stranded();
        k.advance(&mut c, 20 * NS_PER_MS);
        assert_eq!((k.running_on(0), c.pri(0)), (Some(1), Pri::Under));
    }

    #[test]
    fn xen34_tick_leaves_a_unit_with_a_waiter_when_the_idle_pcpu_shares_its_socket() {
        // vCPU 1 waits behind vCPU 0 on pCPU 0 and pCPU 1 (same socket) idles: 3.4's pick
        // compares SMT siblings within a socket (none in the model: one idler each) and keeps
        // pCPU 0, so nothing moves; the default rule moves vCPU 0 at the second tick
        // (a_tick_moves_the_running_unit_to_an_idle_pcpu_when_its_runqueue_has_a_waiter).
        let map = wake_params("xen34");
        let (mut k, mut c) = stranded_with(map);
        k.advance(&mut c, 40 * NS_PER_MS);
        assert_eq!(k.pcpu_cur, vec![Some(0), None]);
        assert_eq!(c.counters()[0], ("credit_migrate_running", 0));
    }

    #[test]
    fn xen41_tick_leaves_a_unit_with_a_waiter_when_the_idle_pcpu_shares_its_socket() {
        // As 3.4: 4.1's `_csched_cpu_pick` counts pCPU 0 idle although vCPU 1 waits there, and
        // compares pCPUs 0 and 1 as SMT siblings (one idler each): nothing moves.
        let map = wake_params("xen41");
        let (mut k, mut c) = stranded_with(map);
        k.advance(&mut c, 40 * NS_PER_MS);
        assert_eq!(k.pcpu_cur, vec![Some(0), None]);
        assert_eq!(c.counters()[0], ("credit_migrate_running", 0));
    }

    #[test]
    fn xen41_tick_moves_a_running_unit_to_another_socket_only_with_more_than_twice_the_idlers() {
        // Two sockets of two, two busy in socket 0: socket 0 counts one idler (the unit's own
        // pCPU), socket 1 two; 1 x 2 < 2 fails (`migrate_factor = 2`), nobody moves (3.4 moves).
        assert_eq!(two_busy_in_one_socket("xen41"), (vec![Some(0), Some(1), None, None], 0));
        // Two sockets of four, four busy in socket 0: one idler against four, 1 x 2 < 4, so
        // vCPU 0 moves to pCPU 4. Its tick comes first; then vCPU 1 sees two idlers in socket
        // 0 (pCPU 0 freed, its own) against three: 2 x 2 < 3 fails, and so on: one move.
        let (cur, moves) = busy_in_one_socket("xen41", 4, 4);
        assert_eq!((cur, moves), (vec![None, Some(1), Some(2), Some(3), Some(0), None, None, None], 1));
    }

    /// `n` pCPUs, two 1-vCPU VMs, Xen 4.1's wake rule; pCPU 0's idle vCPU starts tasklet work
    /// (`tasklet_enqueue` raised SCHEDULE_SOFTIRQ: the scheduler runs with `Reason::Tasklet`
    /// and keeps the idle vCPU, now at BOOST).
    fn tasklets_on_idle_pcpu0(n: usize) -> (crate::hv::sched::testkit::Kit, Credit) {
        let mut k = crate::hv::sched::testkit::Kit::new(n, &[1, 1]);
        let map = wake_params("xen41");
        let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
        k.init(&mut c);
        k.schedule(&mut c, 0, Reason::Tasklet);
        assert_eq!(k.pcpu_cur, vec![None; n]);
        (k, c)
    }

    #[test]
    fn xen41_wake_onto_a_pcpu_running_tasklets_tickles_an_idle_pcpu_which_finds_nothing() {
        let (mut k, mut c) = tasklets_on_idle_pcpu0(2);
        // The tasklet wakes vCPU 0, which last ran on pCPU 0: BOOST does not outrank the
        // BOOST idle vCPU, and pCPU 0 counts as busy, so one idler is tickled, not pCPU 0.
        k.vcpus[0].last_pcpu = 0;
        k.vcpus[0].run = RunState::Runnable;
        k.with(|view| c.wake(view, 0));
        assert_eq!(k.pending_tickles(), vec![1]);
        // pCPU 1 may not steal from a pCPU running its idle vCPU: a call that keeps idling.
        k.serve(&mut c);
        assert_eq!(k.pcpu_cur, vec![None, None]);
        // When the tasklets are done (`do_tasklet` raises SCHEDULE_SOFTIRQ) pCPU 0 runs it.
        k.schedule(&mut c, 0, Reason::Timer);
        assert_eq!(k.pcpu_cur, vec![Some(0), None]);
    }

    #[test]
    fn a_pcpu_running_tasklets_is_no_idler_until_it_schedules_again() {
        // Three pCPUs: vCPU 0 runs on pCPU 0 (UNDER after a tick), pCPU 1 starts tasklet work
        // in its idle vCPU, pCPU 2 idles.
        let mut k = crate::hv::sched::testkit::Kit::new(3, &[1, 1]);
        let map = wake_params("xen41");
        let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
        k.init(&mut c);
        k.wake(&mut c, 0);
        k.advance(&mut c, 10 * NS_PER_MS);
        assert_eq!((k.pcpu_cur[0], c.pri(0)), (Some(0), Pri::Under));
        k.schedule(&mut c, 1, Reason::Tasklet);
        assert!(!k.with(|view| c.idler(view, 1)) && k.with(|view| c.idler(view, 2)));
        // vCPU 1 wakes behind vCPU 0: pCPU 0 is tickled (BOOST outranks UNDER) and one idler,
        // the next in Xen's idlers after `last_tickle_cpu` (cycle order 1, 2): pCPU 2.
        k.vcpus[1].last_pcpu = 0;
        k.vcpus[1].run = RunState::Runnable;
        k.with(|view| c.wake(view, 1));
        assert_eq!(k.pending_tickles(), vec![0, 2]);
        // Once pCPU 1 has scheduled after its tasklets it is an idler again.
        k.serve(&mut c);
        k.schedule(&mut c, 1, Reason::Timer);
        assert!(k.with(|view| c.idler(view, 1)));
    }

    #[test]
    fn default_wake_places_on_the_idle_pcpu_and_tickles_only_it() {
        let (tickled, k, _) = wake_beside_a_busy_pcpu("place_idle");
        assert_eq!(tickled, vec![1]);
        assert_eq!(k.pcpu_cur, vec![Some(0), Some(1)]);
    }

    #[test]
    fn xen41_wake_on_an_idle_pcpu_tickles_only_it() {
        let mut k = crate::hv::sched::testkit::Kit::new(2, &[1]);
        let map = wake_params("xen41");
        let mut c = Credit::from_params(&mut Params::new(&map)).unwrap();
        k.init(&mut c);
        k.vcpus[0].run = RunState::Runnable;
        k.with(|view| c.wake(view, 0));
        assert_eq!(k.pending_tickles(), vec![0]);
    }

    #[test]
    fn an_unknown_wake_rule_is_an_error_naming_the_key() {
        let map = wake_params("xen99");
        let e = Credit::from_params(&mut Params::new(&map)).err().expect("rejected");
        assert!(e.to_string().contains("hypervisor.params.wake"), "{e}");
    }

    #[test]
    fn a_unit_above_a_slice_of_credit_leaves_the_active_set_reset_under_xen34_and_halved_after() {
        // One pCPU, one VM of one vCPU: the accounting hands the domain all 300 credits. A unit
        // that held 100 has 400 > 300 and stops earning: Xen 3.4 sets its credit to 0, later
        // Xen (the model's other rules) to 400 / 2 = 200.
        for (wake, expect) in [("xen34", 0), ("xen41", 200), ("place_idle", 200)] {
            let mut k = crate::hv::sched::testkit::Kit::new(1, &[1]);
            let mut c = Credit::from_params(&mut Params::new(&wake_params(wake))).unwrap();
            k.init(&mut c);
            c.units[0].active = true;
            c.units[0].credit = 100;
            c.active_sdom = vec![0];
            k.now = 30 * NS_PER_MS;
            k.with(|v| c.acct(v));
            assert_eq!((wake, c.units[0].credit, c.units[0].active), (wake, expect, false));
        }
    }

    #[test]
    fn an_accounting_with_no_active_domain_drops_a_negative_balance() {
        // Xen's csched_acct: `if ( unlikely(weight_total == 0) ) { prv->credit_balance = 0; ...
        // goto out; }`, so a debt left by the last active period does not inflate the credit
        // handed out when a domain next becomes active.
        let mut k = crate::hv::sched::testkit::Kit::new(2, &[1]);
        let mut c = Credit::from_params(&mut Params::new(&BTreeMap::new())).unwrap();
        k.init(&mut c);
        for u in c.units.iter_mut() {
            u.active = false;
        }
        c.credit_balance = -500;
        k.now = 30 * NS_PER_MS;
        k.with(|v| c.acct(v));
        assert_eq!(c.credit_balance, 0);
    }

    #[test]
    fn a_saturated_domain_behind_an_unsaturated_one_moves_to_the_head_of_the_accounting_order() {
        // Xen's `csched_acct` visits `prv->active_sdom` in list order; a domain whose fair
        // credit reaches its peak hands the surplus only to the domains after it
        // (`weight_left`), and when an earlier domain was below its peak (`credit_xtra`) it
        // moves to the head, so from the next accounting its surplus reaches all the others.
        // 3 pCPUs (900 credits); VM 0: 2 vCPUs of weight 128, VM 1: 1 vCPU of weight 768
        // (weight total 1024). VM 1's fair credit is 675, its peak 300.
        let mut k = crate::hv::sched::testkit::Kit::new(3, &[2, 1]);
        k.vms[0].weight = 128;
        k.vms[1].weight = 768;
        let mut c = Credit::from_params(&mut Params::new(&BTreeMap::new())).unwrap();
        k.init(&mut c);
        for u in c.units.iter_mut() {
            u.active = true;
        }
        c.active_sdom = vec![0, 1];
        let acct_at = |k: &mut crate::hv::sched::testkit::Kit, c: &mut Credit, ms: Ns| -> Vec<i64> {
            for u in c.units.iter_mut() {
                u.credit = 0;
            }
            c.credit_balance = 0;
            k.now = ms * NS_PER_MS;
            k.with(|v| c.acct(v));
            c.units.iter().map(|u| u.credit).collect()
        };
        // VM 0 first: 900·256/1024 = 225, 113 per vCPU; VM 1 saturates last and its surplus
        // (375) has nobody left to go to.
        assert_eq!(acct_at(&mut k, &mut c, 30), vec![113, 113, 300]);
        assert_eq!(c.active_sdom, vec![1, 0]);
        // VM 1 first: its surplus raises the total to 900 + 375·1024/256 = 2400, VM 0's fair
        // credit 600 = its peak: 300 per vCPU.
        assert_eq!(acct_at(&mut k, &mut c, 60), vec![300, 300, 300]);
        assert_eq!(c.active_sdom, vec![1, 0]);
    }

    #[test]
    fn priorities_order_boost_under_over_idle() {
        assert!(Pri::Boost > Pri::Under && Pri::Under > Pri::Over && Pri::Over > Pri::Idle);
    }
}
