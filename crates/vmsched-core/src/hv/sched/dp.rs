//! DP-Scheduling: affinity-aware dynamic pinning of vCPUs on top of Xen credit (seed 003 §3-4).
//!
//! A layer over `credit::Credit`, which does all queueing, accounting and picking. DP only
//! changes the hard affinity credit sees: a vCPU whose guest task has a high affinity
//! coefficient (AC, `VcpuFacts::ac_pct`, published by `guest::affinity` at each guest context
//! switch) is pinned to one pCPU, so credit's work stealing and wake-up placement leave it
//! where its cache is warm. Pinning is Xen's `vcpu_set_affinity` (`xen/common/schedule.c`): a
//! queued vCPU whose pCPU leaves its mask is moved at once (`vcpu_migrate`), and under Xen
//! 3.4's credit (`wake = "xen34"`) arrives at BOOST, as `vcpu_migrate` ends in `vcpu_wake` →
//! `csched_vcpu_wake`, which boosts any UNDER vCPU it queues (`Credit::boost_after_migrate`).
//! The pin itself is the seed's "non-migrating" (§4.3) `set_unmigrateable(peer_cpu, vcpu)`
//! (§4.4): 3.4's `csched_runq_steal` takes a queued vCPU only if `__csched_vcpu_is_migrateable`
//! (`!vc->is_running && cpu_isset(dest_cpu, vc->cpu_affinity)`), so neither a running vCPU nor
//! a queued pinned one is stolen, and a pinned vCPU preempted on its pCPU waits there while
//! other pCPUs idle (§4.3 Figure 4: "CPU i has to turn to IDLE in spite of some VCPUs probably
//! waiting in other CPU run queue").
//!
//! Models (seed 003 §4.3-4.4), in `do_schedule` only (§4.4: "The codes we wrote are just in
//! do_schedule"): for the vCPU credit picks to run next, all rules; for the vCPU it
//! deschedules, the unpin rules (d) and (f):
//! - pin when AC ≥ `threshold_pct` (75) and the priority is above OVER (UNDER or BOOST), on
//!   the pCPU `select_peer` gives: (a) a pCPU with no pinned vCPU, (b) of those the one with
//!   the lowest recent load (busy fraction over the last `load_window_ms`, every VM's vCPUs
//!   counted), (c) the local pCPU (where it is about to run) if neither applies;
//! - (d) unpin when AC falls below the threshold, without moving the vCPU;
//! - (e) when the pinned count reaches |CPU|, unpin the pinned vCPU with the lowest AC, so at
//!   most |CPU| − 1 vCPUs are pinned after every decision;
//! - (f) unpin a vCPU that goes OVER or IDLE (halts: "Those VCPU having nothing to do will
//!   back to IDLE", §2.2).
//!
//! Choices where the seed is vague (also in docs/policies.md `## dp`):
//! - which vCPUs a decision evaluates (`evaluate`). The prose names one vCPU, the next to
//!   run: "the scheduler should call the API to capture the CPU affinity of the next running
//!   task ... Then, DP-Scheduling decides whether this VCPU needs pinning" (§4.1); "S' first
//!   calls the API for capturing the task affinity information from the VCPU next to be run
//!   ... S' will make the VCPU corresponding non-migrating" (§4.3); "calls the API before
//!   scheduling the VCPU where the aware task begins to run" (§1). The §4.4 pseudo-code opens
//!   "For each VCPU_i ∈ Φ" but its first branch is "VCPU_i has been pinned by its high value of
//!   AC ... Return", which ends the procedure: a body for one vCPU, not a pass over all of them
//!   (a pass would stop at the first pinned vCPU). So `"next"` (the default): the picked vCPU
//!   gets the rules; the descheduled one, whose going IDLE or OVER (f) `do_schedule` sees,
//!   gets the unpin rules; a woken vCPU is queued by credit as in Xen 3.4 and judged when it is
//!   picked. `"all"` keeps the earlier reading (every vCPU at every decision, and a woken vCPU
//!   before credit queues it);
//! - "lower workload" is the busy fraction of each pCPU over the last completed load window
//!   ("the average running time of CPUs respectively in the recent periods. VCPU will be pinned
//!   to the CPU with the lowest value", §4.4); `load_margin_pct` (default 0, the seed's "lowest
//!   value") keeps the local pCPU when its load is within that margin of the lowest;
//! - a pinned vCPU with a high AC is never moved off a contended pCPU: the pseudo-code's first
//!   branch returns, and the unpin rules (d), (e), (f) name AC, the pinned count and OVER/IDLE
//!   only, not waiting;
//! - among equal AC values rule (e) unpins the vCPU being pinned first (the §4.3 rule: with
//!   |CPU| − 1 pinned, a new high-AC vCPU is not pinned), else the lowest index;
//! - a running vCPU pinned to another pCPU keeps running and moves when it is next
//!   descheduled runnable (Xen's `vcpu_set_affinity` would preempt it through
//!   `_VPF_migrating`; it takes the schedule lock, so the seed's `set_unmigrateable` inside
//!   `do_schedule` cannot be that call, and the seed does not say what it does);
//! - vCPUs with hard affinity from the scenario (`vms[].pin`) are left alone.
//!
//! Leaves out: the cost of reading the AC (the PI read in `do_schedule`) and of changing the
//! affinity; the domctl interface of §4.4.

use super::forward_hooks;
use super::credit::{Credit, Pri};
use super::{Decision, HvScheduler, Params, Reason, SchedView};
use crate::engine::{Ns, NS_PER_MS};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId};

/// Timer id of the load window (credit uses 0..#pCPUs and `u64::MAX`).
const LOAD_TIMER: u64 = u64::MAX - 1;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DpStats {
    pub pins: u64,
    /// Rule (d): AC fell below the threshold.
    pub unpins_low_ac: u64,
    /// Rule (e): the pinned count reached |CPU|.
    pub unpins_bound: u64,
    /// Rule (f): OVER or IDLE.
    pub unpins_over_idle: u64,
    /// Queued vCPUs moved to the pCPU they were pinned to.
    pub moves: u64,
}

/// Which vCPUs a scheduling decision evaluates (docs/policies.md `## dp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evaluate {
    /// The vCPU credit picks to run next (all rules) and the one it deschedules (the unpin
    /// rules d and f): seed 003 §4.1, §4.3, and the pseudo-code's per-vCPU `Return` (§4.4).
    Next,
    /// Every vCPU at every decision, and a woken vCPU before credit queues it (the earlier
    /// reading of §4.4's "For each VCPU_i ∈ Φ").
    All,
}

pub struct Dp {
    credit: Credit,
    evaluate: Evaluate,
    threshold_pct: u8,
    load_window_ns: Ns,
    load_margin_pct: f64,
    /// Hard affinity from the scenario.
    base: Vec<Option<Vec<PcpuId>>>,
    /// The affinity credit sees: `base`, or the pCPU a vCPU is pinned to.
    eff: Vec<Option<Vec<PcpuId>>>,
    pin: Vec<Option<PcpuId>>,
    pinned_on: Vec<u32>,
    n_pinned: usize,
    busy_ns: Vec<Ns>,
    since: Vec<Ns>,
    load_pct: Vec<f64>,
    stats: DpStats,
}

impl Dp {
    pub fn from_params(p: &mut Params) -> Result<Self, ScenarioError> {
        let credit = Credit::from_params(p)?;
        // seed 003 §4.4: "Threshold is set to 75 through repeated experiments".
        let threshold_pct = p.f64("threshold_pct", 75.0, 0.0, 100.0)?;
        // Estimate: credit's accounting period (30 ms); the seed says "the recent periods".
        let load_window_ms = p.f64("load_window_ms", 30.0, 1.0, 10_000.0)?;
        // Seed 003 §4.4: "VCPU will be pinned to the CPU with the lowest value"; the local
        // pCPU only "if both (i) and (ii) do not happen" (rule c). A margin > 0 prefers the
        // local pCPU when its load is within the margin of the lowest (not in the seed).
        let load_margin_pct = p.f64("load_margin_pct", 0.0, 0.0, 100.0)?;
        // Seed 003 §4.3: "S' first calls the API for capturing the task affinity information
        // from the VCPU next to be run"; §4.1: "DP-Scheduling decides whether this VCPU needs
        // pinning"; §4.4: "The codes we wrote are just in do_schedule".
        let evaluate = match p.choice("evaluate", "next", &["next", "all"])? {
            "all" => Evaluate::All,
            _ => Evaluate::Next,
        };
        Ok(Dp {
            credit,
            evaluate,
            threshold_pct: threshold_pct.round() as u8,
            load_window_ns: (load_window_ms * NS_PER_MS as f64) as Ns,
            load_margin_pct,
            base: Vec::new(),
            eff: Vec::new(),
            pin: Vec::new(),
            pinned_on: Vec::new(),
            n_pinned: 0,
            busy_ns: Vec::new(),
            since: Vec::new(),
            load_pct: Vec::new(),
            stats: DpStats::default(),
        })
    }

    pub fn stats(&self) -> DpStats {
        self.stats
    }
    pub fn pinned_to(&self, v: VcpuId) -> Option<PcpuId> {
        self.pin[v]
    }
    pub fn n_pinned(&self) -> usize {
        self.n_pinned
    }

    /// Credit's view of the world: the same, with DP's affinity.
    fn inner<'b>(view: &'b mut SchedView, eff: &'b [Option<Vec<PcpuId>>]) -> SchedView<'b> {
        SchedView {
            now: view.now,
            topo: view.topo,
            vcpus: view.vcpus,
            vms: view.vms,
            affinity: eff,
            pcpu_cur: view.pcpu_cur,
            requests: &mut *view.requests,
        }
    }

    fn close_load(&mut self, view: &SchedView, p: PcpuId) {
        if view.pcpu_cur[p].is_some() {
            self.busy_ns[p] += view.now - self.since[p];
        }
        self.since[p] = view.now;
    }

    fn base_allowed(&self, v: VcpuId, p: PcpuId) -> bool {
        self.base[v].as_ref().map_or(true, |a| a.contains(&p))
    }

    /// Where `v` is now: the pCPU it runs on, else the runqueue it waits in, else where it ran.
    fn local(&self, view: &SchedView, v: VcpuId) -> PcpuId {
        match view.vcpus[v].run {
            RunState::Running(p) => p,
            _ => self.credit.queued_on(v).unwrap_or(view.vcpus[v].last_pcpu),
        }
    }

    /// `select_peer`: rules (a), (b), (c); `local` is the pCPU `v` is on (`VCPU_i->processor`).
    fn select_peer(&self, view: &SchedView, v: VcpuId, local: PcpuId) -> PcpuId {
        let allowed: Vec<PcpuId> = (0..view.n_pcpus()).filter(|&q| self.base_allowed(v, q)).collect();
        let free: Vec<PcpuId> = allowed.iter().copied().filter(|&q| self.pinned_on[q] == 0).collect();
        let lowest = |set: &[PcpuId]| {
            set.iter().copied().min_by(|&a, &b| {
                let key = |q: PcpuId| (view.topo.socket_of(q) != view.topo.socket_of(local), q);
                self.load_pct[a].total_cmp(&self.load_pct[b]).then(key(a).cmp(&key(b)))
            })
        };
        let local_ok = |best: PcpuId| self.load_pct[local] <= self.load_pct[best] + self.load_margin_pct;
        match lowest(&free) {
            // (a) + (b): an unpinned pCPU, the local one unless another is clearly less loaded.
            Some(best) => {
                if free.contains(&local) && local_ok(best) {
                    local
                } else {
                    best
                }
            }
            // (b) among all allowed pCPUs if clearly less loaded, else (c) the local one.
            None => match lowest(&allowed) {
                Some(best) if !local_ok(best) => best,
                _ => local,
            },
        }
    }

    fn set_pin(&mut self, view: &mut SchedView, v: VcpuId, q: PcpuId) {
        self.pin[v] = Some(q);
        self.pinned_on[q] += 1;
        self.n_pinned += 1;
        self.eff[v] = Some(vec![q]);
        self.stats.pins += 1;
        if let Some(x) = self.credit.queued_on(v) {
            if x != q {
                let mut iv = Self::inner(view, &self.eff);
                self.credit.requeue(&mut iv, v, q);
                self.stats.moves += 1;
            }
        }
    }

    /// `set_migrateable`: restore the vCPU's own affinity; it stays where it is (rule d).
    fn unpin(&mut self, v: VcpuId) {
        if let Some(q) = self.pin[v].take() {
            self.pinned_on[q] -= 1;
            self.n_pinned -= 1;
            self.eff[v] = self.base[v].clone();
        }
    }

    /// `evaluate = "all"`: the pseudo-code of seed 003 §4.4 over all vCPUs. `prev` (running on the pCPU being
    /// scheduled) counts as IDLE when it is not runnable any more.
    fn pass(&mut self, view: &mut SchedView, prev: Option<VcpuId>, prev_runnable: bool) {
        for v in 0..view.vcpus.len() {
            let f = view.vcpus[v];
            let idle = matches!(f.run, RunState::Blocked | RunState::Offline) || (prev == Some(v) && !prev_runnable);
            let local = self.local(view, v);
            self.apply_rules(view, v, idle, Some(local));
        }
    }

    /// The rules for one vCPU; `idle`: it has nothing to run (credit's IDLE, §2.2); `local`:
    /// the pCPU it is on, or `None` when it may only be unpinned (a descheduled vCPU).
    fn apply_rules(&mut self, view: &mut SchedView, v: VcpuId, idle: bool, local: Option<PcpuId>) {
        if self.base[v].is_some() {
            return;
        }
        let ac = view.vcpus[v].ac_pct;
        let over_or_idle = idle || self.credit.pri(v) <= Pri::Over;
        let high = ac >= self.threshold_pct;
        if self.pin[v].is_some() {
            if over_or_idle {
                self.unpin(v);
                self.stats.unpins_over_idle += 1;
            } else if !high {
                self.unpin(v);
                self.stats.unpins_low_ac += 1;
            }
        } else if let Some(local) = local.filter(|_| high && !over_or_idle) {
            if self.n_pinned + 1 >= view.n_pcpus() {
                // set_migrateable_by_ac: pinning v would make |CPU| pinned, so the lowest AC
                // goes, v itself on a tie (then v is simply not pinned, §4.3).
                let out = (0..view.vcpus.len())
                    .filter(|&u| self.pin[u].is_some())
                    .min_by_key(|&u| (view.vcpus[u].ac_pct, u))
                    .filter(|&u| view.vcpus[u].ac_pct < ac);
                self.stats.unpins_bound += 1;
                match out {
                    Some(u) => self.unpin(u),
                    None => return,
                }
            }
            let q = self.select_peer(view, v, local);
            self.set_pin(view, v, q);
        }
    }
}

impl HvScheduler for Dp {
    forward_hooks!(credit: tasklet_mode, wakes_after_exit, lazy_context_switch, enforces_caps);

    fn name(&self) -> &'static str {
        "dp"
    }

    fn init(&mut self, view: &mut SchedView) {
        let n = view.n_pcpus();
        self.base = view.affinity.to_vec();
        self.eff = self.base.clone();
        self.pin = vec![None; view.vcpus.len()];
        self.pinned_on = vec![0; n];
        self.busy_ns = vec![0; n];
        self.since = vec![view.now; n];
        self.load_pct = vec![0.0; n];
        view.arm(LOAD_TIMER, view.now + self.load_window_ns);
        let mut iv = Self::inner(view, &self.eff);
        self.credit.init(&mut iv);
    }

    /// With `evaluate = "next"` (the default) a woken vCPU is left to credit, which queues it
    /// where it last ran (Xen 3.4's `csched_vcpu_wake`, `wake = "xen34"`); it is judged when
    /// picked. With `"all"` the rules run for it first, so a high-AC vCPU is pinned before
    /// credit places it (the earlier reading: "pinned again ... when they get back to UNDER or
    /// BOOST", after rule f).
    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        if self.evaluate == Evaluate::All {
            let local = self.local(view, v);
            self.apply_rules(view, v, false, Some(local));
        }
        let mut iv = Self::inner(view, &self.eff);
        self.credit.wake(&mut iv, v);
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        let mut iv = Self::inner(view, &self.eff);
        self.credit.sleep(&mut iv, v);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        self.close_load(view, p);
        match self.evaluate {
            Evaluate::All => self.pass(view, prev, prev_runnable),
            // The descheduled vCPU: unpinned if it goes IDLE or OVER (f) or its AC fell (d).
            Evaluate::Next => {
                if let Some(v) = prev {
                    self.apply_rules(view, v, !prev_runnable, None);
                }
            }
        }
        let mut iv = Self::inner(view, &self.eff);
        let d = self.credit.do_schedule(&mut iv, p, prev, prev_runnable, why);
        if self.evaluate == Evaluate::Next {
            // The vCPU next to be run on `p`: pinned (to `p` or a better peer, where it moves
            // when next descheduled) or unpinned.
            if let Some(s) = d.next {
                self.apply_rules(view, s, false, Some(p));
            }
        }
        let mut iv = Self::inner(view, &self.eff);
        // A runnable prev pinned elsewhere was re-queued here by credit: it moves now.
        if let Some(v) = prev.filter(|&v| d.next != Some(v)) {
            if let Some(q) = self.pin[v].filter(|&q| q != p) {
                if self.credit.queued_on(v) == Some(p) {
                    self.credit.requeue(&mut iv, v, q);
                    self.stats.moves += 1;
                }
            }
        }
        d
    }

    fn timer(&mut self, view: &mut SchedView, id: u64) {
        if id == LOAD_TIMER {
            for p in 0..view.n_pcpus() {
                self.close_load(view, p);
                self.load_pct[p] = self.busy_ns[p] as f64 * 100.0 / self.load_window_ns as f64;
                self.busy_ns[p] = 0;
            }
            view.arm(LOAD_TIMER, view.now + self.load_window_ns);
        } else {
            let mut iv = Self::inner(view, &self.eff);
            self.credit.timer(&mut iv, id);
        }
    }

    fn pause_exit(&mut self, view: &mut SchedView, v: VcpuId) -> bool {
        let mut iv = Self::inner(view, &self.eff);
        self.credit.pause_exit(&mut iv, v)
    }

    fn vipi_pending(&mut self, view: &mut SchedView, v: VcpuId) {
        let mut iv = Self::inner(view, &self.eff);
        self.credit.vipi_pending(&mut iv, v);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats;
        let mut c = self.credit.counters();
        c.extend([
            ("dp_pins", s.pins),
            ("dp_unpins_low_ac", s.unpins_low_ac),
            ("dp_unpins_bound", s.unpins_bound),
            ("dp_unpins_over_idle", s.unpins_over_idle),
            ("dp_moves", s.moves),
        ]);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Topology;
    use crate::hv::sched::{SchedRequest, VcpuFacts, VmFacts};
    use std::collections::BTreeMap;

    /// A host of `n` pCPUs (one socket) and `nv` vCPUs of one VM, all halted, under `dp`.
    struct Rig {
        topo: Topology,
        facts: Vec<VcpuFacts>,
        vms: Vec<VmFacts>,
        aff: Vec<Option<Vec<PcpuId>>>,
        cur: Vec<Option<VcpuId>>,
        req: Vec<SchedRequest>,
        now: Ns,
        dp: Dp,
    }

    macro_rules! view {
        ($r:expr) => {
            &mut SchedView {
                now: $r.now,
                topo: &$r.topo,
                vcpus: &$r.facts,
                vms: &$r.vms,
                affinity: &$r.aff,
                pcpu_cur: &$r.cur,
                requests: &mut $r.req,
            }
        };
    }

    impl Rig {
        /// The rules evaluated for every vCPU and at wake (`evaluate = "all"`): the rule logic
        /// (select_peer, a-f) is shared by both readings, and a wake exercises it directly.
        fn new(n: u32, nv: usize, cap_pct: u32) -> Rig {
            Rig::with(n, nv, cap_pct, "all")
        }
        fn with(n: u32, nv: usize, cap_pct: u32, evaluate: &str) -> Rig {
            Rig::with_params(n, nv, cap_pct, &[("evaluate", evaluate)])
        }
        fn with_params(n: u32, nv: usize, cap_pct: u32, params: &[(&str, &str)]) -> Rig {
            let map: BTreeMap<String, toml::Value> =
                params.iter().map(|&(k, v)| (k.to_string(), toml::Value::String(v.to_string()))).collect();
            let facts = (0..nv)
                .map(|i| VcpuFacts {
                    vm: 0,
                    idx: i as u32,
                    run: RunState::Blocked,
                    last_pcpu: 0,
                    preempted: false,
                    preempted_in_kernel: false,
                    dy_runnable: false,
                    pi_pending: false,
                    spinning: false,
                    ac_pct: 50,
                    pmu: Default::default(),
                    sched_tail_until: 0,
                })
                .collect();
            let mut r = Rig {
                topo: Topology::new(1, n, None, None, 2.5),
                facts,
                vms: vec![VmFacts { weight: 256, cap_pct, vcpus: (0..nv).collect() }],
                aff: vec![None; nv],
                cur: vec![None; n as usize],
                req: Vec::new(),
                now: 0,
                dp: Dp::from_params(&mut Params::new(&map)).unwrap(),
            };
            r.dp.init(view!(r));
            r
        }
        /// `v` wakes with this AC, having last run on `last`.
        fn wake(&mut self, v: VcpuId, last: PcpuId, ac: u8) {
            self.facts[v].run = RunState::Runnable;
            self.facts[v].last_pcpu = last;
            self.facts[v].ac_pct = ac;
            self.dp.wake(view!(self), v);
        }
        /// Schedule pCPU `p` (its current vCPU, if any, stays runnable unless `block`).
        fn schedule(&mut self, p: PcpuId, block: bool) -> Option<VcpuId> {
            let prev = self.cur[p];
            let why = if block { Reason::Block } else { Reason::Timer };
            let d = self.dp.do_schedule(view!(self), p, prev, prev.is_some() && !block, why);
            if let Some(v) = prev.filter(|&v| d.next != Some(v)) {
                self.facts[v].run = if block { RunState::Blocked } else { RunState::Runnable };
                self.facts[v].last_pcpu = p;
            }
            if let Some(v) = d.next {
                self.facts[v].run = RunState::Running(p);
            }
            self.cur[p] = d.next;
            d.next
        }
        fn pinned(&self) -> Vec<Option<PcpuId>> {
            (0..self.facts.len()).map(|v| self.dp.pinned_to(v)).collect()
        }
    }

    #[test]
    fn a_high_ac_vcpu_is_pinned_where_it_is_and_a_low_ac_one_is_not() {
        let mut r = Rig::new(4, 4, 0);
        r.wake(0, 2, 80);
        r.wake(1, 3, 74);
        assert_eq!(r.dp.pinned_to(0), Some(2), "rule (c): the local pCPU when nothing is better");
        assert_eq!(r.dp.pinned_to(1), None, "AC 74 is below the threshold 75");
        r.wake(2, 1, 75);
        assert_eq!(r.dp.pinned_to(2), Some(1), "AC 75 reaches the threshold");
    }

    #[test]
    fn rule_a_pins_to_a_pcpu_without_a_pinned_vcpu() {
        let mut r = Rig::new(4, 4, 0);
        r.wake(0, 0, 90);
        r.wake(1, 0, 90);
        assert_eq!(r.dp.pinned_to(0), Some(0));
        let q = r.dp.pinned_to(1).expect("pinned");
        assert_ne!(q, 0, "pCPU 0 already holds a pinned vCPU");
        assert_eq!(r.dp.credit.queued_on(1), Some(q), "queued where it is pinned");
    }

    #[test]
    fn rule_b_pins_to_the_least_loaded_pcpu() {
        let mut r = Rig::new(4, 8, 0);
        // vCPUs 4..7 keep pCPUs 0..2 busy for a whole load window; pCPU 3 idles.
        for p in 0..3 {
            r.wake(4 + p, p, 50);
            assert_eq!(r.schedule(p, false), Some(4 + p));
        }
        r.now = 30 * NS_PER_MS;
        r.dp.timer(view!(r), LOAD_TIMER);
        assert_eq!(r.dp.load_pct, vec![100.0, 100.0, 100.0, 0.0]);
        r.wake(0, 1, 90);
        assert_eq!(r.dp.pinned_to(0), Some(3), "pCPU 3 was idle, pCPU 1 fully busy");
        assert_eq!(r.dp.stats().moves, 0, "placed there directly by credit's wake");
        assert_eq!(r.dp.credit.queued_on(0), Some(3));
    }

    #[test]
    fn rule_d_unpins_below_the_threshold_without_moving() {
        let mut r = Rig::new(4, 4, 0);
        r.wake(0, 2, 90);
        assert_eq!(r.dp.pinned_to(0), Some(2));
        r.facts[0].ac_pct = 60;
        r.schedule(1, false);
        assert_eq!(r.dp.pinned_to(0), None);
        assert_eq!(r.dp.stats().unpins_low_ac, 1);
        assert_eq!(r.dp.credit.queued_on(0), Some(2), "an unpinned vCPU is not migrated actively");
        assert_eq!(r.dp.eff[0], None, "its own affinity (all pCPUs) is back");
    }

    #[test]
    fn rule_e_keeps_at_most_cpus_minus_one_pinned_dropping_the_lowest_ac() {
        let mut r = Rig::new(4, 6, 0);
        r.wake(0, 0, 80);
        r.wake(1, 1, 90);
        r.wake(2, 2, 85);
        assert_eq!(r.dp.n_pinned(), 3);
        r.wake(3, 3, 95);
        assert_eq!(r.dp.n_pinned(), 3, "never |CPU| = 4 pinned");
        assert_eq!(r.pinned()[..4], [None, Some(1), Some(2), Some(3)], "AC 80 made way for AC 95");
        r.wake(4, 0, 85);
        assert_eq!(r.dp.pinned_to(4), None, "AC 85 does not beat the lowest pinned AC (85)");
        assert_eq!(r.dp.n_pinned(), 3);
        // The bound holds over scheduling passes too.
        for p in 0..4 {
            r.schedule(p, false);
            assert!(r.dp.n_pinned() <= 3);
        }
    }

    #[test]
    fn rule_f_unpins_a_vcpu_that_goes_idle() {
        let mut r = Rig::new(4, 4, 0);
        r.wake(0, 1, 90);
        assert_eq!(r.schedule(1, false), Some(0));
        assert_eq!(r.dp.pinned_to(0), Some(1), "still pinned while it runs");
        assert_eq!(r.schedule(1, true), None, "it halts");
        assert_eq!(r.dp.pinned_to(0), None);
        assert_eq!(r.dp.stats().unpins_over_idle, 1);
        r.wake(0, 1, 90);
        assert_eq!(r.dp.pinned_to(0), Some(1), "pinned again once BOOST");
    }

    #[test]
    fn rule_f_unpins_a_vcpu_that_goes_over_and_does_not_pin_it_while_over() {
        // A 10 % cap: after 30 ms of running, accounting leaves vCPU 0 OVER.
        let mut r = Rig::new(2, 2, 10);
        r.wake(0, 0, 90);
        assert_eq!(r.schedule(0, false), Some(0));
        assert_eq!(r.dp.pinned_to(0), Some(0));
        for t in 1..=3 {
            r.now = t * 10 * NS_PER_MS;
            r.dp.timer(view!(r), 0);
        }
        r.dp.timer(view!(r), u64::MAX);
        assert_eq!(r.dp.credit.pri(0), Pri::Over);
        r.schedule(1, false);
        assert_eq!(r.dp.pinned_to(0), None, "OVER: unpinned");
        assert_eq!(r.dp.stats().unpins_over_idle, 1);
        r.schedule(1, false);
        assert_eq!(r.dp.pinned_to(0), None, "not pinned again while OVER");
    }

    #[test]
    fn an_idle_pcpu_does_not_take_a_pinned_vcpu_from_a_busy_one() {
        // Seed 003 §4.3, Figure 3: an idle pCPU steals the unpinned vCPU, never the pinned one,
        // and goes idle if only pinned vCPUs wait (the C(CPU_idle) of §4.2).
        let mut r = Rig::new(2, 3, 0);
        r.aff[2] = Some(vec![0]);
        r.dp.init(view!(r));
        r.wake(0, 0, 90);
        assert_eq!(r.schedule(0, false), Some(0));
        assert_eq!(r.dp.pinned_to(0), Some(0));
        r.now = 5 * NS_PER_MS;
        r.wake(2, 0, 50);
        assert_eq!(r.schedule(0, false), Some(2), "the BOOSTed vCPU 2 preempts vCPU 0");
        assert_eq!(r.dp.credit.queued_on(0), Some(0), "vCPU 0 waits, still pinned (UNDER)");
        assert_eq!(r.schedule(1, false), None, "pCPU 1 idles: vCPU 0 is pinned to pCPU 0");
        assert_eq!(r.dp.credit.queued_on(0), Some(0));
        // Without the pin (AC below the threshold: rule d) credit's steal takes it at once.
        r.facts[0].ac_pct = 50;
        r.now = 10 * NS_PER_MS;
        assert_eq!(r.schedule(1, false), Some(0));
    }

    #[test]
    fn a_woken_vcpu_pinned_by_recent_load_waits_while_a_pcpu_idles() {
        // With evaluate = "all" (the reading before session 7) the cost behind dp-imb
        // (docs/policies.md ## dp): a high-AC vCPU unpinned when it halted (rule f) is pinned
        // again at wake by select_peer, which goes by the last load
        // window (rule b), not by which pCPU is idle now. pCPU 1 was busy over the last window
        // and is idle now; pCPU 0 was idle and now runs vCPU 2 (BOOST, so no preemption).
        let woken = |ac: u8| {
            let mut r = Rig::new(2, 3, 0);
            r.wake(1, 1, 50);
            assert_eq!(r.schedule(1, false), Some(1));
            r.now = 30 * NS_PER_MS;
            r.dp.timer(view!(r), LOAD_TIMER);
            assert_eq!(r.dp.load_pct, vec![0.0, 100.0]);
            assert_eq!(r.schedule(1, true), None, "vCPU 1 halts: pCPU 1 idles");
            r.wake(2, 0, 50);
            assert_eq!(r.schedule(0, false), Some(2));
            r.wake(0, 1, ac);
            r
        };
        let mut r = woken(90);
        assert_eq!(r.dp.pinned_to(0), Some(0), "rule (b): pCPU 0 had the lower load");
        assert_eq!(r.dp.credit.queued_on(0), Some(0), "queued behind vCPU 2");
        assert_eq!(r.schedule(1, false), None, "pCPU 1 idles while vCPU 0 waits");
        // Unpinned (low AC), credit's wake placement puts it on the idle pCPU 1.
        let r = woken(50);
        assert_eq!(r.dp.pinned_to(0), None);
        assert_eq!(r.dp.credit.queued_on(0), Some(1));
    }

    #[test]
    fn by_default_a_vcpu_is_pinned_when_credit_picks_it_not_at_wake() {
        // Seed 003 §4.3: the API is called for "the VCPU next to be run"; §4.4: the code is
        // "just in do_schedule".
        let mut r = Rig::with(4, 4, 0, "next");
        assert_eq!(r.dp.evaluate, Evaluate::Next, "the default");
        r.wake(0, 2, 90);
        assert_eq!(r.dp.pinned_to(0), None, "not at wake");
        r.wake(1, 3, 90);
        assert_eq!(r.schedule(2, false), Some(0));
        assert_eq!(r.dp.pinned_to(0), Some(2), "picked on pCPU 2, all loads equal: rule (c)");
        assert_eq!(r.dp.pinned_to(1), None, "vCPU 1 waits in a runqueue: not evaluated");
        assert_eq!(r.schedule(2, true), None, "vCPU 0 halts");
        assert_eq!(r.dp.pinned_to(0), None, "rule (f): the descheduled vCPU goes IDLE");
        assert_eq!(r.dp.stats().unpins_over_idle, 1);
    }

    /// vCPU 2 (pinned to pCPU 0) runs there through a load window while pCPU 1 idles, then
    /// halts: pCPU 0's load is 100 %, pCPU 1's 0 %.
    fn busy_window_on_pcpu0(r: &mut Rig) {
        r.dp.init(view!(r));
        r.wake(2, 0, 50);
        assert_eq!(r.schedule(0, false), Some(2));
        r.now = 30 * NS_PER_MS;
        r.dp.timer(view!(r), LOAD_TIMER);
        assert_eq!(r.dp.load_pct, vec![100.0, 0.0]);
        assert_eq!(r.schedule(0, true), None);
    }

    #[test]
    fn by_default_a_picked_vcpu_is_pinned_to_a_less_loaded_peer_and_moves_when_preempted() {
        // Rule (b) with the literal margin 0: pCPU 0 was busy over the last window, pCPU 1
        // idle, so vCPU 0 picked on pCPU 0 is pinned to pCPU 1; it runs on, and moves there
        // when it is next descheduled runnable.
        let mut r = Rig::with(2, 3, 0, "next");
        r.aff[2] = Some(vec![0]);
        busy_window_on_pcpu0(&mut r);
        r.wake(0, 0, 90);
        assert_eq!(r.schedule(0, false), Some(0));
        assert_eq!(r.dp.pinned_to(0), Some(1));
        r.now += NS_PER_MS;
        r.wake(2, 0, 50);
        assert_eq!(r.schedule(0, false), Some(2), "vCPU 2 queued first at the same priority (BOOST)");
        assert_eq!(r.dp.credit.queued_on(0), Some(1), "moved to the pCPU it is pinned to");
        assert_eq!(r.dp.stats().moves, 1);
    }

    #[test]
    fn under_xen34_a_vcpu_moved_to_its_pin_is_boosted_and_preempts_there() {
        // vCPU 0 runs on pCPU 0 but is pinned to pCPU 1 (rule b), where vCPU 1 (UNDER) runs.
        // At pCPU 0's tick credit moves it there (`_VPF_migrating`, as `vcpu_set_affinity`
        // would at once) through `vcpu_migrate` → `vcpu_wake`, and Xen 3.4's
        // `csched_vcpu_wake` boosts the UNDER vCPU it queues, so it preempts vCPU 1; without
        // the boost (current Xen's rule) it would wait behind vCPU 1. Xen 4.1 alike.
        let run = |wake: &str| {
            let mut r = Rig::with_params(2, 3, 0, &[("evaluate", "next"), ("wake", wake)]);
            r.aff[1] = Some(vec![1]);
            r.aff[2] = Some(vec![0]);
            busy_window_on_pcpu0(&mut r);
            r.wake(1, 1, 50);
            assert_eq!(r.schedule(1, false), Some(1));
            r.wake(0, 0, 90);
            assert_eq!(r.schedule(0, false), Some(0));
            assert_eq!(r.dp.pinned_to(0), Some(1), "rule (b): pCPU 1 had the lower load");
            for t in [40, 50] {
                r.now = t * NS_PER_MS;
                r.dp.timer(view!(r), 1);
                r.dp.timer(view!(r), 0);
            }
            assert_eq!(r.dp.credit.pri(1), Pri::Under, "a tick took vCPU 1's BOOST");
            r.req.clear();
            assert_eq!(r.schedule(0, false), None, "the tick flagged vCPU 0 to migrate");
            assert_eq!(r.dp.credit.queued_on(0), Some(1), "queued on the pCPU it is pinned to");
            let tickled = r.req.iter().any(|q| matches!(q, SchedRequest::Tickle(1)));
            (r.dp.credit.pri(0), tickled.then(|| r.schedule(1, false)).flatten())
        };
        assert_eq!(run("xen34"), (Pri::Boost, Some(0)), "BOOST preempts vCPU 1 (UNDER)");
        assert_eq!(run("xen41"), (Pri::Boost, Some(0)), "4.1 alike");
    }

    #[test]
    fn by_default_a_preempted_pinned_vcpu_waits_while_a_pcpu_idles() {
        // Seed 003 §4.3 Figure 3 under the default reading: the preempted vCPU stays pinned
        // (it is runnable, UNDER, high AC) and an idle pCPU may not take it.
        let mut r = Rig::with(2, 3, 0, "next");
        r.aff[2] = Some(vec![0]);
        r.dp.init(view!(r));
        r.wake(0, 0, 90);
        assert_eq!(r.schedule(0, false), Some(0));
        assert_eq!(r.dp.pinned_to(0), Some(0));
        r.now = 5 * NS_PER_MS;
        r.wake(2, 0, 50);
        assert_eq!(r.schedule(0, false), Some(2));
        assert_eq!(r.dp.pinned_to(0), Some(0), "descheduled runnable: still pinned");
        assert_eq!(r.schedule(1, false), None, "pCPU 1 idles");
        assert_eq!(r.dp.credit.queued_on(0), Some(0));
    }

    #[test]
    fn by_default_picks_keep_at_most_cpus_minus_one_pinned_dropping_the_lowest_ac() {
        // Rule (e) when only credit's picks are judged: the fourth pick on a 4-pCPU host
        // unpins the pinned vCPU with the lowest AC (§4.3 (e)).
        let mut r = Rig::with(4, 6, 0, "next");
        for (v, ac) in [(0, 80), (1, 90), (2, 85), (3, 95)] {
            r.wake(v, v, ac);
        }
        for p in 0..3 {
            assert_eq!(r.schedule(p, false), Some(p));
        }
        assert_eq!(r.pinned()[..3], [Some(0), Some(1), Some(2)], "rule (c): where each was picked");
        assert_eq!(r.schedule(3, false), Some(3));
        assert_eq!(r.dp.n_pinned(), 3, "never |CPU| = 4 pinned");
        assert_eq!(r.pinned()[..4], [None, Some(1), Some(2), Some(3)], "AC 80 made way for AC 95");
        // A picked vCPU whose AC does not beat the lowest pinned one (85) stays unpinned.
        r.wake(4, 0, 85);
        assert_eq!(r.schedule(0, true), Some(4));
        assert_eq!(r.dp.pinned_to(4), None);
        assert_eq!(r.dp.n_pinned(), 3);
    }

    #[test]
    fn scenario_pinned_vcpus_are_left_alone() {
        let mut r = Rig::new(4, 2, 0);
        r.aff[0] = Some(vec![3]);
        r.dp.init(view!(r));
        r.wake(0, 3, 100);
        assert_eq!(r.dp.pinned_to(0), None);
        assert_eq!(r.dp.n_pinned(), 0);
    }

    #[test]
    fn unknown_and_out_of_range_parameters_name_the_field() {
        let mut m = BTreeMap::new();
        m.insert("threshold_pct".to_string(), toml::Value::Integer(150));
        let e = crate::hv::sched::build("dp", &m, &Default::default()).err().unwrap();
        assert_eq!(e.path, "hypervisor.params.threshold_pct");
        let mut m = BTreeMap::new();
        m.insert("tslice_ms".to_string(), toml::Value::Integer(10));
        assert!(crate::hv::sched::build("dp", &m, &Default::default()).is_ok(), "credit's own parameters pass through");
    }
}
