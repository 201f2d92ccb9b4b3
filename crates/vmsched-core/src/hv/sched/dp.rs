//! DP-Scheduling: affinity-aware dynamic pinning of vCPUs on top of Xen credit (seed 003 §3-4).
//!
//! A layer over `credit::Credit`, which does all queueing, accounting and picking. DP only
//! changes the hard affinity credit sees: a vCPU whose guest task has a high affinity
//! coefficient (AC, `VcpuFacts::ac_pct`, published by `guest::affinity` at each guest context
//! switch) is pinned to one pCPU, so credit's work stealing and wake-up placement leave it
//! where its cache is warm. Pinning is Xen's `vcpu_set_affinity` (`xen/common/schedule.c`): a
//! queued vCPU whose pCPU leaves its mask is moved at once (`vcpu_migrate`).
//!
//! Models (seed 003 §4.3-4.4), applied to every vCPU at each scheduling decision, before credit
//! picks (so that a steal already sees the pins):
//! - pin when AC ≥ `threshold_pct` (75) and the priority is above OVER (UNDER or BOOST), on
//!   the pCPU `select_peer` gives: (a) a pCPU with no pinned vCPU, (b) of those the one with
//!   the lowest recent load (busy fraction over the last `load_window_ms`), (c) else the local
//!   pCPU (where the vCPU runs or is queued);
//! - (d) unpin when AC falls below the threshold, without moving the vCPU;
//! - (e) when the pinned count reaches |CPU|, unpin the pinned vCPU with the lowest AC, so at
//!   most |CPU| − 1 vCPUs are pinned after every decision;
//! - (f) unpin a vCPU that is OVER or IDLE (blocked: "VCPUs having nothing to do go back to
//!   IDLE", §2.2).
//!
//! Choices where the seed is vague (also in docs/policies.md `## dp`):
//! - "lower workload" is the busy fraction of each pCPU over the last completed load window;
//!   the local pCPU is kept unless another unpinned one is lower by more than
//!   `load_margin_pct` (so that noise does not move vCPUs);
//! - among equal AC values rule (e) unpins the vCPU pinned in this pass first (the §4.3 rule:
//!   with |CPU| − 1 pinned, a new high-AC vCPU is not pinned), else the lowest index;
//! - a running vCPU pinned to another pCPU keeps running and moves when it is next
//!   descheduled (Xen would preempt it at once through `_VPF_migrating`);
//! - vCPUs with hard affinity from the scenario (`vms[].pin`) are left alone.
//!
//! Leaves out: the cost of reading the AC (the PI read in `do_schedule`) and of changing the
//! affinity; the domctl interface of §4.4.

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

pub struct Dp {
    credit: Credit,
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
        // Estimate: ignore load differences below 10 percentage points.
        let load_margin_pct = p.f64("load_margin_pct", 10.0, 0.0, 100.0)?;
        Ok(Dp {
            credit,
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

    /// `select_peer`: rules (a), (b), (c).
    fn select_peer(&self, view: &SchedView, v: VcpuId) -> PcpuId {
        let local = self.local(view, v);
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

    /// The pseudo-code of seed 003 §4.4 over all vCPUs. `prev` (running on the pCPU being
    /// scheduled) counts as IDLE when it is not runnable any more.
    fn pass(&mut self, view: &mut SchedView, prev: Option<VcpuId>, prev_runnable: bool) {
        for v in 0..view.vcpus.len() {
            let f = view.vcpus[v];
            let idle = matches!(f.run, RunState::Blocked | RunState::Offline) || (prev == Some(v) && !prev_runnable);
            self.apply_rules(view, v, idle);
        }
    }

    /// The rules for one vCPU; `idle`: it has nothing to run (credit's IDLE, §2.2).
    fn apply_rules(&mut self, view: &mut SchedView, v: VcpuId, idle: bool) {
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
        } else if high && !over_or_idle {
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
            let q = self.select_peer(view, v);
            self.set_pin(view, v, q);
        }
    }
}

impl HvScheduler for Dp {
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

    /// A woken vCPU goes back to BOOST (or stays OVER): the rules run for it before credit
    /// places it, so a high-AC vCPU is pinned where its cache is (§4.4, after rule f: "pinned
    /// again ... when they get back to UNDER or BOOST").
    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        self.apply_rules(view, v, false);
        let mut iv = Self::inner(view, &self.eff);
        self.credit.wake(&mut iv, v);
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        let mut iv = Self::inner(view, &self.eff);
        self.credit.sleep(&mut iv, v);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        self.close_load(view, p);
        self.pass(view, prev, prev_runnable);
        let mut iv = Self::inner(view, &self.eff);
        let d = self.credit.do_schedule(&mut iv, p, prev, prev_runnable, why);
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
        vec![
            ("dp_pins", s.pins),
            ("dp_unpins_low_ac", s.unpins_low_ac),
            ("dp_unpins_bound", s.unpins_bound),
            ("dp_unpins_over_idle", s.unpins_over_idle),
            ("dp_moves", s.moves),
        ]
    }
}
