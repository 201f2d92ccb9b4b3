//! Xen credit2, as in `xen/common/sched/credit2.c` (sched-gran=cpu), Xen's default scheduler
//! since 4.12.
//!
//! Models (reference/hypervisor-mechanisms.md §2):
//! - credits in ns of run time; a running unit burns `delta x max_weight / weight` (`t2c_update`,
//!   the division remainder kept), where `max_weight` is the largest weight among the units
//!   assigned to its runqueue, so the heaviest unit burns 1 credit/ns; floor `CSCHED2_CREDIT_MIN`
//!   = -10 ms; the weight is the VM weight, per vCPU (`svc->weight = sdom->weight`);
//! - runqueues kept sorted by credit (`runq_insert`: behind every unit with equal or more
//!   credit); one runqueue per socket (`credit2_runqueue=socket`, the default) or one for the
//!   whole host, each split into runqueues of at most `sched_credit2_max_cpus_runqueue` pCPUs;
//! - reset ("epoch end", `reset_credit`): when the chosen unit and the head of the runqueue both
//!   have credit <= 0, every unit of that runqueue gets +10 ms (+20 ms if the chosen one sits at
//!   the floor), clipped to 10 ms + 500 us of carry-over; then `balance_load`;
//! - slice (`csched2_runtime`): run until the credit falls to the head's (or to 0), converted to
//!   time at the unit's burn rate, at most the cap budget, clamped to [max(500 us, ratelimit
//!   left), 10 ms];
//! - decisions (`csched2_schedule`, `runq_candidate`): rate limit (`sched_ratelimit_us`, 1000 us)
//!   keeps a runnable, non-yielding current; otherwise the first runqueue entry allowed here, not
//!   reserved for another tickled pCPU, and (if it last ran on another pCPU) at least
//!   `migrate_resist` ahead, wins if it has more credit than the current unit, or at all when the
//!   current unit yields; a migrated unit gets +50 us (`CSCHED2_MIGRATE_COMPENSATION`);
//! - tickle on wake and re-queue (`runq_tickle`): an idle, untickled pCPU of the runqueue (the
//!   unit's own first, then cycling upward), else the busy pCPU with the best positive
//!   `tickle_score` = new credit - current credit (- migrate resist if it is not the unit's pCPU),
//!   the unit's own pCPU taken at once if positive; a current unit is not preemptible until it has
//!   run `ratelimit - 50 us`;
//! - load balancing between runqueues (`balance_load`, at every reset): runqueue load is an EWMA
//!   (window 2^30 ns) of the number of runnable units (queued or running) and each unit has an
//!   EWMA of being runnable (starting at 50%); pick the runqueue with the largest load difference,
//!   act if it exceeds 1.0 below full capacity or 1/8 above it, then push, pull or swap the pair
//!   of units that leaves the smallest difference; a running unit moves when it is next
//!   descheduled (`CSFLAG_runq_migrate_request`);
//! - caps: a per-VM budget of `cap% x 10 ms` replenished every `credit2_cap_period_ms`; a unit
//!   grabs `max(total / #vCPUs, 500 us)` before running (`unit_grab_budget`), returns the rest when
//!   descheduled, and is parked when the pool is empty until the next replenishment;
//! - yield (`SCHEDOP_yield`, which Xen's PAUSE-exit handler calls): every PLE exit yields.
//!   Units that yield within microseconds of being dispatched and move between pCPUs gain the
//!   50 us compensation faster than they burn credit, so credits can grow far above a reset's
//!   10.5 ms and resets become rare (traced in docs/arena.md, credit2 on sync-heavy).
//!
//! Leaves out: SMT (`smt_idle`, no SMT in the host model), soft affinity and its tickle-score
//! bonuses (without soft affinity they add the same constant to every score), cpupools,
//! tasklets, the `credit2_runqueue=cpu|core|node` arrangements, Xen's trylock failures. Wake-up
//! placement stays on the unit's runqueue (Xen only calls `csched2_res_pick` on migration); if
//! the unit's hard affinity excludes every pCPU of its runqueue it moves to the least loaded
//! runqueue it may use. Caps are read once at start (`vms[].cap_pct`), and the replenishment
//! timers of all capped VMs fire together (Xen's per-domain timers are not synchronised).
//! Load samples are kept at ns resolution (Xen drops 10 bits, `LOADAVG_GRANULARITY_SHIFT`).

use super::{Decision, HvScheduler, Params, Reason, SchedView};
use crate::engine::{Ns, NS_PER_MS, NS_PER_US};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId};

/// `CSCHED2_CREDIT_INIT`: credit given at a reset (10 ms).
pub const CREDIT_INIT: i64 = 10 * NS_PER_MS as i64;
/// `CSCHED2_CREDIT_MIN`: floor of a unit's credit.
pub const CREDIT_MIN: i64 = -CREDIT_INIT;
/// `CSCHED2_IDLE_CREDIT`: what the idle unit counts as.
pub const IDLE_CREDIT: i64 = CREDIT_MIN - 1;
/// `CSCHED2_MIN_TIMER`: shortest slice (500 us).
pub const MIN_TIMER: i64 = 500 * NS_PER_US as i64;
/// `CSCHED2_CARRYOVER_MAX` = MIN_TIMER: credit kept above INIT at a reset.
pub const CARRYOVER_MAX: i64 = MIN_TIMER;
/// `CSCHED2_MAX_TIMER` = CREDIT_INIT: longest slice.
pub const MAX_TIMER: i64 = CREDIT_INIT;
/// `CSCHED2_CREDIT_RESET`: reset when the top credit is at or below this.
pub const CREDIT_RESET: i64 = 0;
/// `CSCHED2_MIGRATE_COMPENSATION`: credit bonus for a unit that changes pCPU.
pub const MIGRATE_COMPENSATION: i64 = 50 * NS_PER_US as i64;
/// `CSCHED2_RATELIMIT_TICKLE_TOLERANCE`.
pub const RATELIMIT_TICKLE_TOLERANCE: i64 = 50 * NS_PER_US as i64;
/// Load-average window 2^`credit2_load_window_shift` ns (shift 30, about 1 s).
const LOAD_WINDOW_NS: f64 = (1u64 << 30) as f64;
/// `credit2_balance_under` = 0: below full capacity act on a difference of 2^0 = 1 unit.
const UNDERLOAD_TOLERANCE: f64 = 1.0;
/// `credit2_balance_over` = -3: above full capacity act on 2^-3 = 1/8.
const OVERLOAD_TOLERANCE: f64 = 0.125;

/// Credits burnt for `delta` ns of run (`t2c_update`): `(delta x max_weight + residual) / weight`,
/// with the remainder carried in `residual`.
pub fn t2c(delta: i64, max_weight: u32, weight: u32, residual: &mut i64) -> i64 {
    let w = weight.max(1) as i64;
    let val = delta * max_weight.max(1) as i64 + *residual;
    *residual = val % w;
    val / w
}

/// Run time worth `credit` at this unit's burn rate (`c2t`).
pub fn c2t(credit: i64, max_weight: u32, weight: u32) -> i64 {
    credit * weight.max(1) as i64 / max_weight.max(1) as i64
}

/// Credit a reset adds (`reset_credit`): INIT, twice that if the chosen unit sits at the floor.
pub fn reset_amount(snext_credit: i64) -> i64 {
    if snext_credit <= CREDIT_MIN {
        2 * CREDIT_INIT
    } else {
        CREDIT_INIT
    }
}

/// A unit's credit after a reset adding `reset`, clipped to INIT + carry-over.
pub fn after_reset(credit: i64, reset: i64) -> i64 {
    (credit + reset).min(CREDIT_INIT + CARRYOVER_MAX)
}

/// `csched2_runtime` for a non-idle unit. `ran_ns` is how long it has been running if it is the
/// current unit being kept; `head_credit` is the credit of the first queued unit, if any;
/// `budget` is its cap budget if capped.
pub fn runtime(
    credit: i64,
    head_credit: Option<i64>,
    weight: u32,
    max_weight: u32,
    budget: Option<i64>,
    ratelimit_ns: i64,
    ran_ns: Option<i64>,
) -> i64 {
    let mut min_time = MIN_TIMER;
    if ratelimit_ns > 0 {
        let rl = match ran_ns {
            Some(r) => ratelimit_ns - r,
            None => ratelimit_ns,
        };
        min_time = min_time.max(rl);
    }
    let mut rt_credit = credit;
    if let Some(h) = head_credit {
        if h > 0 {
            rt_credit = credit - h;
        }
    }
    let mut time = if rt_credit > 0 { c2t(rt_credit, max_weight, weight) } else { 0 };
    if let Some(b) = budget {
        time = time.min(b);
    }
    if time < min_time {
        min_time
    } else {
        time.min(MAX_TIMER)
    }
}

/// Exponentially weighted moving average of a load, Xen's `update_runq_load` form:
/// `avg += delta x (load - avg) / W`, or `avg = load` after more than a window.
#[derive(Debug, Clone, Copy)]
struct Ewma {
    avg: f64,
    last: Ns,
}

impl Ewma {
    fn update(&mut self, now: Ns, load: f64) {
        let delta = now.saturating_sub(self.last) as f64;
        if delta > LOAD_WINDOW_NS {
            self.avg = load;
        } else {
            self.avg += delta * (load - self.avg) / LOAD_WINDOW_NS;
        }
        self.last = now;
    }
}

#[derive(Debug, Clone)]
struct Unit {
    credit: i64,
    residual: i64,
    /// Last time its credit was burnt (`start_time`).
    start_ns: Ns,
    /// When it last started running (`state_entry_time`).
    state_entry_ns: Ns,
    /// The pCPU it last ran on or was placed on (`sched_unit_master`).
    cpu: PcpuId,
    rq: usize,
    on_runq: bool,
    /// Counted in its runqueue's load (queued or running).
    runnable: bool,
    /// The pCPU it is scheduled on (chosen by `do_schedule` and not yet descheduled).
    on_cpu: Option<PcpuId>,
    tickled_cpu: Option<PcpuId>,
    /// Cap budget in ns (`i64::MAX` when the VM has no cap).
    budget: i64,
    parked: bool,
    migrate_to: Option<usize>,
    load: Ewma,
}

#[derive(Debug, Clone)]
struct Runq {
    cpus: Vec<PcpuId>,
    queue: Vec<VcpuId>,
    /// Units assigned to this runqueue (`rqd->svc`).
    members: Vec<VcpuId>,
    load: usize,
    avg: Ewma,
    pick_bias: PcpuId,
}

#[derive(Debug, Clone, Default)]
struct Dom {
    tot_budget: i64,
    budget: i64,
    quota: i64,
    parked: Vec<VcpuId>,
}

pub struct Credit2 {
    /// Xen's lazy context switch (`hv::lazy_switch::from_params`).
    lazy_context_switch: bool,
    ratelimit_ns: i64,
    migrate_resist_ns: i64,
    per_socket: bool,
    max_cpus_runqueue: usize,
    cap_period_ns: Ns,
    units: Vec<Unit>,
    rqs: Vec<Runq>,
    rq_of: Vec<usize>,
    tickled: Vec<bool>,
    doms: Vec<Dom>,
    /// While `do_schedule(p)` re-queues its previous unit, pCPU p counts as running this.
    cur_override: Option<(PcpuId, Option<VcpuId>)>,
    stats: Stats,
}

/// Xen's credit2 perf counters (`SCHED_STAT_CRANK`, read with `xenperf`), by their Xen names,
/// and the units `balance_load` moved between runqueues.
#[derive(Debug, Clone, Default)]
struct Stats {
    schedule: u64,
    credit_reset: u64,
    migrations_between_runqueues: u64,
    migrate_resisted: u64,
    deferred_to_tickled_cpu: u64,
    migrated: u64,
    tickled_idle_cpu: u64,
    tickled_busy_cpu: u64,
    tickled_no_cpu: u64,
}

impl Credit2 {
    pub fn from_params(p: &mut Params) -> Result<Self, ScenarioError> {
        // `sched_ratelimit_us`, SCHED_DEFAULT_RATELIMIT_US (xen/common/sched/private.h).
        let ratelimit_us = p.f64("ratelimit_us", 1000.0, 0.0, 500_000.0)?;
        // `sched_credit2_migrate_resist` (opt_migrate_resist = 500).
        let resist_us = p.f64("migrate_resist_us", 500.0, 0.0, 100_000.0)?;
        // `credit2_runqueue=socket` (default) versus `all`.
        let per_socket = p.bool("runqueue_per_socket", true)?;
        // `sched_credit2_max_cpus_runqueue` (default 16, commit 8e2aa76dc1).
        let max_cpus = p.f64("max_cpus_runqueue", 16.0, 1.0, 4096.0)?;
        // `credit2_cap_period_ms` (opt_cap_period = 10).
        let cap_period_ms = p.f64("cap_period_ms", 10.0, 1.0, 1000.0)?;
        let lazy_context_switch = crate::hv::lazy_switch::from_params(p)?;
        Ok(Credit2 {
            lazy_context_switch,
            ratelimit_ns: (ratelimit_us * NS_PER_US as f64).round() as i64,
            migrate_resist_ns: (resist_us * NS_PER_US as f64).round() as i64,
            per_socket,
            max_cpus_runqueue: max_cpus as usize,
            cap_period_ns: (cap_period_ms * NS_PER_MS as f64).round() as Ns,
            units: Vec::new(),
            rqs: Vec::new(),
            rq_of: Vec::new(),
            tickled: Vec::new(),
            doms: Vec::new(),
            cur_override: None,
            stats: Stats::default(),
        })
    }

    fn weight(view: &SchedView, v: VcpuId) -> u32 {
        view.vms[view.vcpus[v].vm].weight.max(1)
    }

    /// `rqd->max_weight`: the largest weight among the units assigned to the runqueue.
    fn max_weight(&self, view: &SchedView, rq: usize) -> u32 {
        self.rqs[rq].members.iter().map(|&m| Self::weight(view, m)).max().unwrap_or(1)
    }

    fn capped(&self, view: &SchedView, v: VcpuId) -> bool {
        self.doms[view.vcpus[v].vm].tot_budget > 0
    }

    /// pCPU `q`'s current unit, as seen by the tickle logic.
    fn cur_on(&self, view: &SchedView, q: PcpuId) -> Option<VcpuId> {
        match self.cur_override {
            Some((p, c)) if p == q => c,
            _ => view.pcpu_cur[q],
        }
    }

    fn running_on(view: &SchedView, v: VcpuId) -> Option<PcpuId> {
        match view.vcpus[v].run {
            RunState::Running(q) if view.pcpu_cur[q] == Some(v) => Some(q),
            _ => None,
        }
    }

    /// `burn_credits`.
    fn burn(&mut self, view: &SchedView, v: VcpuId, now: Ns) {
        let delta = now.saturating_sub(self.units[v].start_ns) as i64;
        if delta <= 0 {
            return;
        }
        let mw = self.max_weight(view, self.units[v].rq);
        let w = Self::weight(view, v);
        let capped = self.capped(view, v);
        let u = &mut self.units[v];
        let c = t2c(delta, mw, w, &mut u.residual);
        u.credit = (u.credit - c).max(CREDIT_MIN);
        if capped {
            u.budget -= delta;
        }
        u.start_ns = now;
    }

    /// `runq_insert`: behind every unit with equal or more credit.
    fn insert(&mut self, v: VcpuId) {
        let rq = self.units[v].rq;
        let c = self.units[v].credit;
        let units = &self.units;
        let at = self.rqs[rq].queue.iter().position(|&x| c > units[x].credit).unwrap_or(self.rqs[rq].queue.len());
        self.rqs[rq].queue.insert(at, v);
        self.units[v].on_runq = true;
    }

    fn remove(&mut self, v: VcpuId) {
        if self.units[v].on_runq {
            let rq = self.units[v].rq;
            self.rqs[rq].queue.retain(|&x| x != v);
            self.units[v].on_runq = false;
        }
    }

    /// `update_load`: the unit starts or stops counting in its runqueue's load.
    fn set_runnable(&mut self, v: VcpuId, on: bool, now: Ns) {
        let u = &mut self.units[v];
        if u.runnable == on {
            return;
        }
        u.load.update(now, if u.runnable { 1.0 } else { 0.0 });
        u.runnable = on;
        let rq = &mut self.rqs[u.rq];
        rq.avg.update(now, rq.load as f64);
        if on {
            rq.load += 1;
        } else {
            rq.load -= 1;
        }
    }

    fn touch_rq_load(&mut self, rq: usize, now: Ns) {
        let r = &mut self.rqs[rq];
        r.avg.update(now, r.load as f64);
    }

    fn touch_unit_load(&mut self, v: VcpuId, now: Ns) {
        let u = &mut self.units[v];
        u.load.update(now, if u.runnable { 1.0 } else { 0.0 });
    }

    /// The runqueue's pCPUs starting at `from` (or the next one above it), cycling upward
    /// (`cpumask_test_or_cycle`).
    fn cycle_from(cpus: &[PcpuId], from: PcpuId) -> impl Iterator<Item = PcpuId> + '_ {
        let start = cpus.iter().position(|&c| c >= from).unwrap_or(0);
        (0..cpus.len()).map(move |i| cpus[(start + i) % cpus.len()])
    }

    fn tickle_cpu(&mut self, view: &mut SchedView, q: PcpuId, v: Option<VcpuId>) {
        self.tickled[q] = true;
        if let Some(v) = v {
            self.units[v].tickled_cpu = Some(q);
        }
        view.tickle(q);
    }

    fn preemptable(&self, view: &SchedView, cur: VcpuId) -> bool {
        if self.ratelimit_ns <= RATELIMIT_TICKLE_TOLERANCE {
            return true;
        }
        (view.now.saturating_sub(self.units[cur].state_entry_ns) as i64) > self.ratelimit_ns - RATELIMIT_TICKLE_TOLERANCE
    }

    /// `tickle_score` (without the soft-affinity bonuses).
    fn tickle_score(&mut self, view: &SchedView, new: VcpuId, q: PcpuId) -> i64 {
        let Some(cur) = self.cur_on(view, q) else { return -1 };
        if !self.preemptable(view, cur) {
            return -1;
        }
        if view.pcpu_cur[q] == Some(cur) {
            self.burn(view, cur, view.now);
        }
        let mut score = self.units[new].credit - self.units[cur].credit;
        if self.units[new].cpu != q {
            score -= self.migrate_resist_ns;
        }
        score
    }

    /// `runq_tickle`.
    fn runq_tickle(&mut self, view: &mut SchedView, v: VcpuId) {
        let cpu = self.units[v].cpu;
        let rq = self.units[v].rq;
        let cpus = self.rqs[rq].cpus.clone();
        let idle = Self::cycle_from(&cpus, cpu)
            .find(|&q| view.allowed(v, q) && self.cur_on(view, q).is_none() && !self.tickled[q]);
        if let Some(q) = idle {
            self.stats.tickled_idle_cpu += 1;
            self.tickle_cpu(view, q, Some(v));
            return;
        }
        let busy = |s: &Self, view: &SchedView, q: PcpuId| view.allowed(v, q) && !s.tickled[q] && s.cur_on(view, q).is_some();
        let mut max = 0;
        let mut ipid = None;
        if cpus.contains(&cpu) && busy(self, view, cpu) {
            let score = self.tickle_score(view, v, cpu);
            if score > max {
                // The unit's own pCPU is in its (full) soft affinity: take it.
                self.stats.tickled_busy_cpu += 1;
                self.tickle_cpu(view, cpu, Some(v));
                return;
            }
        }
        for &q in &cpus {
            if q == cpu || !busy(self, view, q) {
                continue;
            }
            let score = self.tickle_score(view, v, q);
            if score > max {
                max = score;
                ipid = Some(q);
            }
        }
        if let Some(q) = ipid {
            self.stats.tickled_busy_cpu += 1;
            self.tickle_cpu(view, q, Some(v));
        } else {
            self.stats.tickled_no_cpu += 1;
        }
    }

    /// `reset_credit` for every unit assigned to runqueue `rq`.
    fn reset_credit(&mut self, view: &mut SchedView, rq: usize, snext: VcpuId) {
        let now = view.now;
        let reset = reset_amount(self.units[snext].credit);
        for m in self.rqs[rq].members.clone() {
            if let Some(q) = Self::running_on(view, m) {
                self.burn(view, m, now);
                if self.capped(view, m) && self.units[m].budget <= 0 {
                    self.tickle_cpu(view, q, None);
                }
            }
            let u = &mut self.units[m];
            u.credit = after_reset(u.credit, reset);
            u.start_ns = now;
        }
        self.stats.credit_reset += 1;
    }

    /// Whether `v` may run on some pCPU of runqueue `rq` (`unit_is_migrateable` without the flag).
    fn fits(&self, view: &SchedView, v: VcpuId, rq: usize) -> bool {
        self.rqs[rq].cpus.iter().any(|&q| view.allowed(v, q))
    }

    /// Move a unit that is not scheduled to runqueue `t` (`migrate`, not-running branch).
    fn move_unit(&mut self, view: &mut SchedView, v: VcpuId, t: usize) {
        let now = view.now;
        let from = self.units[v].rq;
        let was_on = self.units[v].on_runq;
        let was_runnable = self.units[v].runnable;
        self.remove(v);
        self.set_runnable(v, false, now);
        let l = self.units[v].load.avg;
        self.rqs[from].members.retain(|&x| x != v);
        self.rqs[from].avg.avg = (self.rqs[from].avg.avg - l).max(0.0);
        self.rqs[t].members.push(v);
        self.rqs[t].avg.avg += l;
        let cpus = self.rqs[t].cpus.clone();
        let bias = self.rqs[t].pick_bias;
        let cpu = Self::cycle_from(&cpus, bias + 1).find(|&q| view.allowed(v, q)).unwrap_or(cpus[0]);
        self.rqs[t].pick_bias = cpu;
        let u = &mut self.units[v];
        u.rq = t;
        u.cpu = cpu;
        u.tickled_cpu = None;
        self.stats.migrations_between_runqueues += 1;
        if was_runnable {
            self.set_runnable(v, true, now);
        }
        if was_on {
            self.insert(v);
            self.runq_tickle(view, v);
        }
    }

    /// `migrate`: running units are flagged and moved when descheduled.
    fn migrate(&mut self, view: &mut SchedView, v: VcpuId, t: usize) {
        if let Some(q) = self.units[v].on_cpu {
            self.units[v].migrate_to = Some(t);
            self.tickle_cpu(view, q, None);
        } else {
            self.move_unit(view, v, t);
        }
    }

    /// `balance_load`, from runqueue `l`.
    fn balance_load(&mut self, view: &mut SchedView, l: usize) {
        if self.rqs.len() < 2 {
            return;
        }
        let now = view.now;
        self.touch_rq_load(l, now);
        let mut max_delta = 0.0;
        let mut other = None;
        for o in 0..self.rqs.len() {
            if o == l {
                continue;
            }
            self.touch_rq_load(o, now);
            let d = (self.rqs[l].avg.avg - self.rqs[o].avg.avg).abs();
            if d > max_delta {
                max_delta = d;
                other = Some(o);
            }
        }
        let Some(o) = other else { return };
        let load_max = self.rqs[l].avg.avg.max(self.rqs[o].avg.avg);
        let cpus_max = self.rqs[l].cpus.len().max(self.rqs[o].cpus.len()) as f64;
        let tolerance = if load_max < cpus_max { UNDERLOAD_TOLERANCE } else { OVERLOAD_TOLERANCE };
        if max_delta < tolerance {
            return;
        }
        for m in self.rqs[l].members.clone().into_iter().chain(self.rqs[o].members.clone()) {
            self.touch_unit_load(m, now);
        }
        let (la, oa) = (self.rqs[l].avg.avg, self.rqs[o].avg.avg);
        let mut best = (max_delta, None, None);
        let mut consider = |push: Option<(VcpuId, f64)>, pull: Option<(VcpuId, f64)>| {
            let (mut ll, mut ol) = (la, oa);
            if let Some((_, a)) = push {
                ll -= a;
                ol += a;
            }
            if let Some((_, a)) = pull {
                ll += a;
                ol -= a;
            }
            let d = (ll - ol).abs();
            if d < best.0 {
                best = (d, push.map(|x| x.0), pull.map(|x| x.0));
            }
        };
        let ok = |s: &Self, v: VcpuId, rq: usize| s.units[v].migrate_to.is_none() && s.fits(view, v, rq);
        let pushes: Vec<(VcpuId, f64)> =
            self.rqs[l].members.iter().filter(|&&v| ok(self, v, o)).map(|&v| (v, self.units[v].load.avg)).collect();
        let pulls: Vec<(VcpuId, f64)> =
            self.rqs[o].members.iter().filter(|&&v| ok(self, v, l)).map(|&v| (v, self.units[v].load.avg)).collect();
        for &push in &pushes {
            for &pull in &pulls {
                consider(Some(push), Some(pull));
            }
            consider(Some(push), None);
        }
        for &pull in &pulls {
            consider(None, Some(pull));
        }
        let (_, push, pull) = best;
        if let Some(v) = push {
            self.migrate(view, v, o);
        }
        if let Some(v) = pull {
            self.migrate(view, v, l);
        }
    }

    /// `csched2_res_pick` without soft affinity: the least loaded runqueue `v` may use.
    fn pick_rq(&self, view: &SchedView, v: VcpuId) -> usize {
        let own = self.units[v].rq;
        let mut best = (f64::INFINITY, own);
        for rq in 0..self.rqs.len() {
            if !self.fits(view, v, rq) {
                continue;
            }
            let mut l = self.rqs[rq].avg.avg;
            if rq == own {
                l = (l - self.units[v].load.avg).max(0.0);
            }
            if l < best.0 {
                best = (l, rq);
            }
        }
        best.1
    }

    /// Make sure a unit about to be queued sits on a runqueue and pCPU its affinity allows.
    fn fix_placement(&mut self, view: &mut SchedView, v: VcpuId) {
        let rq = self.units[v].rq;
        if !self.fits(view, v, rq) {
            let t = self.pick_rq(view, v);
            if t != rq {
                self.move_unit(view, v, t);
            }
        }
        let cpu = self.units[v].cpu;
        if !view.allowed(v, cpu) || self.rq_of[cpu] != self.units[v].rq {
            let cpus = self.rqs[self.units[v].rq].cpus.clone();
            let q = Self::cycle_from(&cpus, cpu).find(|&q| view.allowed(v, q));
            if let Some(q) = q {
                self.units[v].cpu = q;
            }
        }
    }

    /// Put a runnable unit on its runqueue and tickle for it.
    fn enqueue(&mut self, view: &mut SchedView, v: VcpuId) {
        self.fix_placement(view, v);
        self.set_runnable(v, true, view.now);
        self.insert(v);
        self.runq_tickle(view, v);
    }

    /// `park_unit`.
    fn park(&mut self, view: &SchedView, v: VcpuId) {
        let vm = view.vcpus[v].vm;
        self.units[v].parked = true;
        if self.units[v].on_runq {
            self.remove(v);
            self.set_runnable(v, false, view.now);
        }
        self.doms[vm].parked.push(v);
    }

    /// `unit_grab_budget`.
    fn grab_budget(&mut self, view: &SchedView, v: VcpuId) -> bool {
        if self.units[v].budget > 0 {
            return true;
        }
        let vm = view.vcpus[v].vm;
        let d = &mut self.doms[vm];
        d.budget += self.units[v].budget;
        if d.budget > 0 {
            let b = d.quota.min(d.budget);
            d.budget -= b;
            self.units[v].budget = b;
            true
        } else {
            self.units[v].budget = 0;
            self.park(view, v);
            false
        }
    }

    /// `unpark_parked_units`: parked units that are runnable go back on their runqueue.
    fn unpark(&mut self, view: &mut SchedView, vm: usize) {
        for v in std::mem::take(&mut self.doms[vm].parked) {
            self.units[v].parked = false;
            if view.vcpus[v].run == RunState::Runnable && !self.units[v].on_runq && self.units[v].on_cpu.is_none() {
                self.enqueue(view, v);
            }
        }
    }

    /// `unit_return_budget` when a capped unit stops running.
    fn return_budget(&mut self, view: &mut SchedView, v: VcpuId) {
        if !self.capped(view, v) || self.units[v].budget <= 0 {
            return;
        }
        let vm = view.vcpus[v].vm;
        self.doms[vm].budget += self.units[v].budget;
        self.units[v].budget = 0;
        self.unpark(view, vm);
    }

    /// `replenish_domain_budget` for every capped VM.
    fn replenish(&mut self, view: &mut SchedView, vm: usize) {
        let d = &mut self.doms[vm];
        d.budget += d.tot_budget;
        if d.budget > 0 {
            d.budget = d.budget.min(d.tot_budget);
            self.unpark(view, vm);
        }
        view.arm(vm as u64, view.now + self.cap_period_ns);
    }
}

impl HvScheduler for Credit2 {
    fn enforces_caps(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![
            ("credit2_schedule", s.schedule),
            ("credit2_credit_reset", s.credit_reset),
            ("credit2_migrated", s.migrated),
            ("credit2_migrate_resisted", s.migrate_resisted),
            ("credit2_deferred_to_tickled_cpu", s.deferred_to_tickled_cpu),
            ("credit2_tickled_idle_cpu", s.tickled_idle_cpu),
            ("credit2_tickled_busy_cpu", s.tickled_busy_cpu),
            ("credit2_tickled_no_cpu", s.tickled_no_cpu),
            ("credit2_migrate_between_runqueues", s.migrations_between_runqueues),
        ]
    }

    fn lazy_context_switch(&self) -> bool {
        self.lazy_context_switch
    }

    fn name(&self) -> &'static str {
        "credit2"
    }

    fn init(&mut self, view: &mut SchedView) {
        let n = view.n_pcpus();
        // Runqueues: per socket (or one for the host), split into chunks of at most
        // `max_cpus_runqueue` pCPUs of near-equal size.
        let mut groups: Vec<Vec<PcpuId>> = Vec::new();
        if self.per_socket {
            for s in 0..view.topo.sockets.max(1) {
                let g: Vec<PcpuId> = (0..n).filter(|&p| view.topo.socket_of(p) == s).collect();
                if !g.is_empty() {
                    groups.push(g);
                }
            }
        } else {
            groups.push((0..n).collect());
        }
        self.rq_of = vec![0; n];
        for g in groups {
            let chunks = g.len().div_ceil(self.max_cpus_runqueue.max(1));
            for k in 0..chunks {
                let cpus: Vec<PcpuId> = g[k * g.len() / chunks..(k + 1) * g.len() / chunks].to_vec();
                for &p in &cpus {
                    self.rq_of[p] = self.rqs.len();
                }
                let pick_bias = cpus[0];
                self.rqs.push(Runq { cpus, queue: Vec::new(), members: Vec::new(), load: 0, avg: Ewma { avg: 0.0, last: 0 }, pick_bias });
            }
        }
        self.tickled = vec![false; n];
        self.doms = view
            .vms
            .iter()
            .map(|vm| {
                if vm.cap_pct == 0 {
                    return Dom::default();
                }
                let tot = (self.cap_period_ns as i64) * vm.cap_pct as i64 / 100;
                Dom { tot_budget: tot, budget: tot, quota: (tot / vm.vcpus.len().max(1) as i64).max(MIN_TIMER), parked: Vec::new() }
            })
            .collect();
        for (vm, d) in self.doms.iter().enumerate() {
            if d.tot_budget > 0 {
                view.arm(vm as u64, self.cap_period_ns);
            }
        }
        self.units = (0..view.vcpus.len())
            .map(|v| {
                let last = view.vcpus[v].last_pcpu;
                let cpu = if view.allowed(v, last) { last } else { (0..n).find(|&q| view.allowed(v, q)).unwrap_or(0) };
                let capped = self.doms[view.vcpus[v].vm].tot_budget > 0;
                Unit {
                    credit: CREDIT_INIT,
                    residual: 0,
                    start_ns: 0,
                    state_entry_ns: 0,
                    cpu,
                    rq: self.rq_of[cpu],
                    on_runq: false,
                    runnable: false,
                    on_cpu: None,
                    tickled_cpu: None,
                    budget: if capped { 0 } else { i64::MAX },
                    parked: false,
                    migrate_to: None,
                    // "Starting load of 50%" (csched2_alloc_udata).
                    load: Ewma { avg: 0.5, last: 0 },
                }
            })
            .collect();
        for v in 0..self.units.len() {
            let rq = self.units[v].rq;
            self.rqs[rq].members.push(v);
            self.rqs[rq].avg.avg += 0.5;
        }
    }

    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        let u = &self.units[v];
        if u.on_runq || u.on_cpu.is_some() || u.parked {
            return;
        }
        self.enqueue(view, v);
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        self.remove(v);
        self.set_runnable(v, false, view.now);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        let now = view.now;
        self.stats.schedule += 1;
        self.tickled[p] = false;
        let rq = self.rq_of[p];
        let yielding = why == Reason::Yield && prev.is_some();
        let mut scurr_runnable = false;
        if let Some(v) = prev {
            self.burn(view, v, now);
            if self.capped(view, v) && self.units[v].budget <= 0 {
                self.grab_budget(view, v);
            }
            let u = &self.units[v];
            scurr_runnable = prev_runnable && !u.parked && u.migrate_to.is_none() && u.rq == rq && view.allowed(v, p);
        }

        // runq_candidate
        let mut snext = if scurr_runnable { prev } else { None };
        let ratelimited = scurr_runnable
            && !yielding
            && self.ratelimit_ns > 0
            && (now.saturating_sub(self.units[prev.unwrap()].state_entry_ns) as i64) < self.ratelimit_ns;
        if !ratelimited {
            let snext_credit = snext.map_or(IDLE_CREDIT, |s| self.units[s].credit);
            let mut i = 0;
            while i < self.rqs[rq].queue.len() {
                let c = self.rqs[rq].queue[i];
                i += 1;
                if !view.allowed(c, p) {
                    continue;
                }
                if let Some(t) = self.units[c].tickled_cpu {
                    if t != p && self.tickled[t] {
                        self.stats.deferred_to_tickled_cpu += 1;
                        continue;
                    }
                }
                if self.units[c].cpu != p && snext_credit + self.migrate_resist_ns > self.units[c].credit {
                    self.stats.migrate_resisted += 1;
                    continue;
                }
                if (yielding || self.units[c].credit > snext_credit) && (!self.capped(view, c) || self.grab_budget(view, c)) {
                    snext = Some(c);
                }
                break;
            }
        }

        if let Some(s) = snext {
            if Some(s) != prev {
                self.remove(s);
            }
            self.units[s].on_cpu = Some(p);
            let head = self.rqs[rq].queue.first().map(|&h| self.units[h].credit);
            let top = head.map_or(self.units[s].credit, |h| h.max(self.units[s].credit));
            if top <= CREDIT_RESET {
                self.reset_credit(view, rq, s);
                self.balance_load(view, rq);
            }
            let u = &mut self.units[s];
            u.start_ns = now;
            u.tickled_cpu = None;
            if u.cpu != p {
                u.credit += MIGRATE_COMPENSATION;
                u.cpu = p;
                self.stats.migrated += 1;
            }
            if Some(s) != prev {
                u.state_entry_ns = now;
            }
        } else {
            self.touch_rq_load(rq, now);
        }

        let slice = snext.map(|s| {
            let u = &self.units[s];
            let head = self.rqs[rq].queue.first().map(|&h| self.units[h].credit);
            let ran = (Some(s) == prev).then(|| now.saturating_sub(u.state_entry_ns) as i64);
            let budget = self.capped(view, s).then_some(u.budget);
            runtime(u.credit, head, Self::weight(view, s), self.max_weight(view, u.rq), budget, self.ratelimit_ns, ran) as Ns
        });

        // csched2_context_saved for the previous unit.
        if let Some(v) = prev {
            if Some(v) != snext {
                self.units[v].on_cpu = None;
                self.cur_override = Some((p, snext));
                self.return_budget(view, v);
                let target = self.units[v].migrate_to.take();
                if prev_runnable && !self.units[v].parked {
                    if let Some(t) = target {
                        self.move_unit(view, v, t);
                    }
                    self.enqueue(view, v);
                } else {
                    self.set_runnable(v, false, now);
                    if let Some(t) = target {
                        self.move_unit(view, v, t);
                    }
                }
                self.cur_override = None;
            }
        }
        Decision { next: snext, slice_ns: slice }
    }

    fn timer(&mut self, view: &mut SchedView, id: u64) {
        self.replenish(view, id as usize);
    }

    fn pause_exit(&mut self, _view: &mut SchedView, _v: VcpuId) -> bool {
        // Xen's PAUSE exit handler calls vcpu_yield() (SCHEDOP_yield).
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::results::Results;

    const MS: i64 = NS_PER_MS as i64;
    const US: i64 = NS_PER_US as i64;

    #[test]
    fn burn_rate_follows_max_weight_over_weight() {
        let mut r = 0;
        // The heaviest unit on the runqueue burns 1 credit per ns...
        assert_eq!(t2c(MS, 512, 512, &mut r), MS);
        // ...a unit of half the weight burns twice as fast.
        assert_eq!(t2c(MS, 512, 256, &mut r), 2 * MS);
        assert_eq!(r, 0);
        // The division remainder is carried over, not lost.
        let mut r = 0;
        assert_eq!(t2c(10, 2, 3, &mut r), 6);
        assert_eq!(r, 2);
        assert_eq!(t2c(1, 2, 3, &mut r), 1);
        assert_eq!(r, 1);
        // c2t is the inverse: 2 ms of credit last 1 ms for the half-weight unit.
        assert_eq!(c2t(2 * MS, 512, 256), MS);
        assert_eq!(c2t(MS, 512, 512), MS);
    }

    #[test]
    fn reset_adds_init_and_clips_to_the_carry_over() {
        assert_eq!(reset_amount(-3 * MS), CREDIT_INIT);
        assert_eq!(reset_amount(CREDIT_MIN), 2 * CREDIT_INIT);
        assert_eq!(after_reset(-2 * MS, CREDIT_INIT), 8 * MS);
        assert_eq!(after_reset(300 * US, CREDIT_INIT), 10 * MS + 300 * US);
        // Carry-over is at most 500 us above CREDIT_INIT.
        assert_eq!(after_reset(2 * MS, CREDIT_INIT), 10 * MS + 500 * US);
        assert_eq!(after_reset(CREDIT_MIN, reset_amount(CREDIT_MIN)), 10 * MS);
    }

    /// `n_pcpus` pCPUs on one runqueue, one VM per entry of `vm_sizes`; vCPUs 0..n_pcpus woken
    /// first, so each runs on its own pCPU, then the rest, which queue (equal credits at t = 0
    /// give no positive tickle score).
    fn busy(n_pcpus: usize, vm_sizes: &[usize]) -> (crate::hv::sched::testkit::Kit, Credit2) {
        let mut k = crate::hv::sched::testkit::Kit::new(n_pcpus, vm_sizes);
        let mut c = Credit2::from_params(&mut Params::new(&std::collections::BTreeMap::new())).unwrap();
        k.init(&mut c);
        for v in 0..k.vcpus.len() {
            k.wake(&mut c, v);
        }
        for p in 0..n_pcpus {
            assert_eq!(k.pcpu_cur[p], Some(p));
        }
        (k, c)
    }

    #[test]
    fn a_yielding_unit_hands_its_pcpu_to_the_runqueue_head_even_one_with_less_credit() {
        // runq_candidate: when the current unit yields, the first eligible queued unit wins
        // whatever its credit (`yield || svc->credit > snext->credit`), and the rate limit
        // does not keep a yielder.
        let (mut k, mut c) = busy(1, &[2]);
        // After 2 ms (past the 1 ms rate limit) vCPU 0 has burnt down to 8 ms of credit.
        c.units[1].credit = c.units[0].credit - 3 * MS;
        k.now = 2 * NS_PER_MS;
        k.schedule(&mut c, 0, Reason::Timer);
        assert_eq!(k.pcpu_cur[0], Some(0), "not yielding, the unit with more credit keeps its pCPU");
        k.schedule(&mut c, 0, Reason::Yield);
        assert_eq!(k.pcpu_cur[0], Some(1), "yielding, it hands the pCPU to the head");
    }

    #[test]
    fn a_yielder_keeps_its_pcpu_from_a_head_that_ran_elsewhere_unless_500us_richer_which_then_gains_50us() {
        // runq_candidate skips a unit last run on another pCPU unless its credit is at least
        // `migrate_resist` (500 us) above the current unit's, yielding or not; csched2_schedule
        // adds CSCHED2_MIGRATE_COMPENSATION (50 us) to a unit that starts on a new pCPU. Together
        // they let units that yield within microseconds and move between pCPUs gain credit
        // faster than they burn it (docs/arena.md, credit2 on sync-heavy).
        let (mut k, mut c) = busy(2, &[3]);
        assert!(c.units[2].on_runq);
        c.units[2].cpu = 1;
        c.units[2].credit = c.units[0].credit + 400 * US;
        k.schedule(&mut c, 0, Reason::Yield);
        assert_eq!(k.pcpu_cur[0], Some(0), "within migrate_resist: the yielder runs on");
        let before = c.units[0].credit + 600 * US;
        c.units[2].credit = before;
        k.schedule(&mut c, 0, Reason::Yield);
        assert_eq!(k.pcpu_cur[0], Some(2), "600 us richer: it moves to pCPU 0");
        assert_eq!(c.units[2].credit, before + MIGRATE_COMPENSATION);
        assert_eq!(c.units[2].cpu, 0);
    }

    #[test]
    fn slice_runs_to_the_next_units_credit_within_the_timer_bounds() {
        let rl = 1000 * US;
        // Alone with 10 ms of credit at full weight: the 10 ms maximum.
        assert_eq!(runtime(10 * MS, None, 256, 256, None, rl, None), 10 * MS);
        // Above it: clamped to MAX_TIMER.
        assert_eq!(runtime(10 * MS + 400 * US, None, 256, 256, None, rl, None), MAX_TIMER);
        // Run until the credit equals the head's, converted at the burn rate: 3 ms of credit
        // at half the max weight is 1.5 ms.
        assert_eq!(runtime(7 * MS, Some(4 * MS), 256, 512, None, rl, None), 1500 * US);
        // A head with non-positive credit is ignored.
        assert_eq!(runtime(3 * MS, Some(-MS), 512, 512, None, rl, None), 3 * MS);
        // Too little: the rate limit (1 ms) is the floor, above MIN_TIMER.
        assert_eq!(runtime(5 * MS, Some(4900 * US), 256, 256, None, rl, None), rl);
        assert_eq!(runtime(-MS, None, 256, 256, None, rl, None), rl);
        // Without a rate limit the floor is MIN_TIMER.
        assert_eq!(runtime(5 * MS, Some(4900 * US), 256, 256, None, 0, None), MIN_TIMER);
        // A current unit kept after 300 us gets the rest of its rate limit (700 us)...
        assert_eq!(runtime(-MS, None, 256, 256, None, rl, Some(300 * US)), 700 * US);
        // ...but never less than MIN_TIMER.
        assert_eq!(runtime(-MS, None, 256, 256, None, rl, Some(900 * US)), MIN_TIMER);
        // A capped unit never runs past its budget (unless that is below the floor).
        assert_eq!(runtime(10 * MS, None, 256, 256, Some(2 * MS), rl, None), 2 * MS);
        assert_eq!(runtime(10 * MS, None, 256, 256, Some(100 * US), rl, None), rl);
    }

    fn run(text: &str) -> Results {
        crate::sim::tests::run_text(text, Some("credit2"))
    }

    fn hogs(pcpus: u32, sockets: u32, vms: &[(u32, u32, u32)], params: &str) -> String {
        let mut s = format!(
            "name = \"c2\"\nseed = 1\nduration_ms = 2000\n[host]\nsockets = {sockets}\ncores_per_socket = {}\n[hypervisor]\nscheduler = \"credit2\"\n{params}\n",
            pcpus / sockets
        );
        for (i, (vcpus, weight, cap)) in vms.iter().enumerate() {
            s += &format!("[[vms]]\nname = \"vm{i}\"\nvcpus = {vcpus}\nweight = {weight}\ncap_pct = {cap}\nworkloads = [{{ kind = \"hog\" }}]\n");
        }
        s
    }

    #[test]
    fn weights_512_and_256_on_one_pcpu_share_two_thirds_and_one_third() {
        let r = run(&hogs(1, 1, &[(1, 512, 0), (1, 256, 0)], ""));
        let (a, b) = (r.vms[0].share, r.vms[1].share);
        assert!((a - 2.0 / 3.0).abs() < 0.03, "weight 512: share {a:.3}");
        assert!((b - 1.0 / 3.0).abs() < 0.03, "weight 256: share {b:.3}");
    }

    #[test]
    fn a_cap_of_50_percent_holds_a_hog_to_half_a_pcpu() {
        let r = run(&hogs(2, 1, &[(1, 256, 50), (1, 256, 0)], ""));
        let capped = r.vms[0].cpu_ns as f64 / r.sim_time_ns as f64;
        let free = r.vms[1].cpu_ns as f64 / r.sim_time_ns as f64;
        assert!((capped - 0.5).abs() < 0.03, "capped VM used {capped:.3} of a pCPU");
        assert!(free > 0.95, "uncapped VM used {free:.3} of a pCPU");
    }

    #[test]
    fn fairness_1234_keeps_every_pcpu_busy_with_per_vcpu_weights() {
        let r = run(include_str!("../../../../../scenarios/fairness-1234.toml"));
        for p in &r.pcpus {
            assert!((p.idle_ns as f64) < 0.01 * r.sim_time_ns as f64, "pcpu {} idle {} ns", p.pcpu, p.idle_ns);
        }
        // Weights are per vCPU, as in Xen: the 4-vCPU VM gets far more than the 1-vCPU VM.
        let one = r.vms.iter().find(|v| v.vcpus == 1).unwrap().share;
        let four = r.vms.iter().find(|v| v.vcpus == 4).unwrap().share;
        assert!(four >= 2.0 * one, "4-vCPU VM {four:.3} vs 1-vCPU VM {one:.3}");
    }

    #[test]
    fn two_sockets_with_per_socket_or_global_runqueues_keep_every_pcpu_busy() {
        for param in ["runqueue_per_socket = true", "runqueue_per_socket = false"] {
            let text = hogs(4, 2, &[(1, 256, 0), (2, 256, 0), (3, 256, 0)], &format!("params = {{ {param} }}"));
            let r = run(&text);
            for p in &r.pcpus {
                assert!((p.idle_ns as f64) < 0.01 * r.sim_time_ns as f64, "{param}: pcpu {} idle {} ns", p.pcpu, p.idle_ns);
            }
        }
    }

    #[test]
    fn sync_heavy_2vm_runs_to_completion_and_pause_exits_yield() {
        let r = run(include_str!("../../../../../scenarios/sync-heavy-2vm.toml"));
        // Xen's perf counters agree with the machine's own counts.
        let c = &r.totals.scheduler_counters;
        assert_eq!(c["credit2_schedule"], r.pcpus.iter().map(|p| p.sched_calls).sum::<u64>());
        assert_eq!(c["credit2_migrated"], r.vcpus.iter().map(|v| v.migrations).sum::<u64>());
        // Yields re-queue the yielder and tickle for it: mostly no pCPU qualifies.
        assert!(c["credit2_tickled_no_cpu"] > c["credit2_tickled_busy_cpu"] + c["credit2_tickled_idle_cpu"], "{c:?}");
        assert!(c["credit2_migrate_resisted"] > 0 && c["credit2_credit_reset"] > 0, "{c:?}");
        assert!(r.vms.iter().all(|v| v.finished), "every VM finishes");
        assert!(r.vms.iter().all(|v| v.ple_exits > 0));
        for p in &r.pcpus {
            assert_eq!(p.idle_ns + p.hv_ns + p.guest_ns, r.sim_time_ns);
        }
    }

    #[test]
    fn unknown_and_out_of_range_parameters_are_rejected() {
        let mut m = std::collections::BTreeMap::new();
        m.insert("ratelimit_us".to_string(), toml::Value::Integer(-1));
        assert!(super::super::build("credit2", &m, &Default::default()).is_err());
        let mut m = std::collections::BTreeMap::new();
        m.insert("tslice_ms".to_string(), toml::Value::Integer(5));
        assert!(super::super::build("credit2", &m, &Default::default()).is_err());
        let mut m = std::collections::BTreeMap::new();
        m.insert("runqueue_per_socket".to_string(), toml::Value::Boolean(false));
        assert!(super::super::build("credit2", &m, &Default::default()).is_ok());
    }
}
