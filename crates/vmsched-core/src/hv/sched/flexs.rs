//! FlexS, Flex's flexible vCPU scheduling, as a layer over Xen credit1 (seed
//! 002_4e0f89b222427189.txt, "FlexS Design", "FlexS Design (cont')", "Practical
//! Considerations", "Implementation"). Scheduler name `flex`, the seed's whole Flex: its credit
//! runs Flex's other half, FlexW (VM-level fairness by real-time weights), in its accounting
//! (`flexw.rs`; on unless `flexw = false`, which leaves FlexS alone).
//!
//! `credit::Credit` does all queueing, accounting and picking. FlexS adds:
//! - a spin detector that sees only the virtual PMU (`VcpuFacts::pmu`, synthesised by
//!   `hv/perfcounters.rs`): every `sample_ms` (10 ms, credit's tick) the counts each running
//!   vCPU retired since its last sample (the window) are added to its estimate, the vCPU's
//!   counts since the last reset; the vCPU is busy-waiting when the estimate's branches per
//!   instruction (BPI) reach `spin_bpi_min` and its branch-miss rate (BMPR) is at most
//!   `spin_bmpr_max_pct`, and the window itself retired at least `min_window_instructions`
//!   ("spin loops show high BPI and low BMPR");
//! - the estimates are zeroed every `reset_ms` (10 s) against false positives;
//! - a detected spinner yields its pCPU to a sibling: two of its VM's other vCPUs are drawn at
//!   random ("only try twice when looking for siblings to switch — the power of two choices");
//!   those queued on another pCPU's runqueue (allowed on this pCPU, with the spinner allowed
//!   there, not parked by a cap) are candidates; the better one — higher credit priority, then
//!   the one runnable and waiting the longest — runs on the spinner's pCPU for the rest of the
//!   pCPU's slice ("find a sibling vCPU to complete the unfinished time slice"; the slice keeps
//!   its end when the sibling spins in turn and is switched out itself), and the
//!   spinner takes its place in the other runqueue (`Credit::switch_with`, the seed's
//!   `load_balance_switch()`): no runqueue changes length or weight and no pCPU gains a second
//!   vCPU of the VM ("switch the two vCPUs to avoid vCPU stacking and run queue weight
//!   changes");
//! - without a candidate the spinner goes on with its slice (plain credit), and FlexS tries
//!   again at the next sample that finds it spinning.
//!
//! The detector follows two sentences of the seed:
//! - "Identify spinning vCPU in vcpu_acct() when Xen charges credit to the current running
//!   vCPU" ("Implementation"; "Periodically update a vCPU's BPI and BMPR", "FlexS Design
//!   (cont')"). Xen credit1 charges the running vCPU only in `csched_vcpu_acct`, which only
//!   `csched_tick` calls, for a non-idle current vCPU, and the tick re-arms itself
//!   `CSCHED_MSECS_PER_TICK` = 10 ms later (xen/common/sched_credit.c, Xen 3.4/4.x; later
//!   versions as `tick_period_us` = 30 ms tslice / `CSCHED_TICKS_PER_TSLICE` 3). So
//!   `sample_ms` = 10. The sample timer is armed at multiples of 10 ms from the start, as
//!   credit's per-pCPU ticks are (`credit.rs` `tick`), so a sample sees what credit's tick
//!   charges.
//! - "False positive in identifying spinning vCPU / Solution: reset BPI and BMPR every 10s"
//!   ("Practical Considerations"). A reset only clears a false positive if BPI and BMPR are
//!   kept over the whole time since the last reset: so the estimate accumulates every window
//!   (`history_weight` = 1) and is zeroed at the reset. `history_weight` < 1 is the older
//!   reading, kept as an option: older counts are weighted down by that factor at each sample
//!   (0.5 remembers about two windows, which leaves the reset almost nothing to clear).
//!
//! The two readings where the seed's slides leave room (both options, both measured in
//! docs/policies.md `## flexs`):
//! - *The yield is the first half of the switch* (`yield_without_sibling = false`). "Busy-
//!   waiting vCPU voluntarily yields CPU / Find a sibling vCPU to complete the unfinished time
//!   slice / Switch the two vCPUs" is one operation: the spinner gives its slice up to a
//!   sibling. A yield with no sibling would be Xen's `SCHEDOP_yield` (`csched_unit_yield`
//!   sets `CSCHED_FLAG_UNIT_YIELD`, `__runq_insert` queues the unit behind one lower-priority
//!   unit, and whoever is next gets a full 30 ms slice, not the unfinished one): the slice goes
//!   to an arbitrary vCPU, usually another VM's, which is what credit's PLE yield already does
//!   and what FlexS was built to improve on. Traced on `flex-parallel` (seeds 1-4, always
//!   yielding): 98-99 % of the other VMs' vCPUs a yield handed the pCPU to had last been seen
//!   spinning themselves, 25-81 % of yields re-picked the spinner (empty runqueue) and each
//!   yield that did switch gave a full slice away. `yield_without_sibling = true` yields
//!   anyway.
//! - *Any queued sibling is a candidate* (`skip_siblings_last_spinning = false`). The seed
//!   switches in a sibling "that is doing useful work", but a queued vCPU does nothing; the
//!   only evidence is its PMU estimate from when it last ran, i.e. what it was doing when
//!   preempted. For a vCPU preempted in a busy-wait that evidence is stale exactly when it
//!   matters: if the detected spinner waits at barrier k+1, barrier k has completed, so a
//!   sibling preempted spinning at barrier k now has barrier k+1's work to do — it is the
//!   laggard the spinner waits for. With 1 ms compute phases nearly every preempted vCPU was
//!   preempted spinning, and skipping them removed 99 % of candidates (flex-parallel, sampled
//!   every 1 ms with history 0.5: 30-360 switches per run against 3 900-6 800). `skip_siblings_last_spinning = true` skips them.
//!   The seed's detector judges only the running vCPU ("in vcpu_acct() when Xen charges credit
//!   to the current running vCPU").
//!
//! Choices where the seed is silent (also in docs/policies.md `## flexs`):
//! - thresholds, by a rule stated in session 11 before the reproductions were run with it: for
//!   each counter, midway between the spin profile and the most spin-like end of the work range
//!   (`hv/perfcounters.rs`, whose profiles are sourced there): BPI ≥ (2/7 + 0.20) / 2 = 0.243,
//!   BMPR ≤ (0.05 % + 1 %) / 2 = 0.525 % (`default_spin_bpi_min`, `default_spin_bmpr_max`).
//!   Why outside the work range: a threshold inside it would flag a VM that does nothing but
//!   work, at every sample and again right after every reset, a false positive the seed's
//!   "reset BPI and BMPR every 10s" could not clear; the seed's false positives are ones a reset
//!   clears. Why midway: the neutral point between the two. No source gives Flex's own values
//!   (the corpus holds the paper's first page only). With spinning at IPC 0.45 and work at 1.0,
//!   counts pass both tests when 69-95 % of the run time they cover spun, depending on the VM's
//!   drawn work profile (86 % for the average one, BPI 0.125 and BMPR 3.5 %); with the defaults
//!   that is the run time since the last reset. The estimates before session 11 (0.25 and
//!   0.5 %, spin BPI 0.3 at IPC 0.4) needed 71-95 % (87 %);
//! - a window must have retired at least 250 000 instructions (about 0.22 ms of spinning at
//!   2.5 GHz) to be judged (estimate);
//! - "better" sibling: higher credit priority first (BOOST > UNDER > OVER), then the longer
//!   wait since it became runnable, then the lower vCPU id;
//! - the switch is carried out at the spinner's pCPU's next decision, which the detector
//!   requests with a tickle (a physical IPI in Xen); if the spinner stopped running meanwhile
//!   nothing happens; if that decision is also the slice's end, a wake-up's tickle, or the
//!   move of the spinner to an idle pCPU that credit's tick asked for (`csched_unit_acct`
//!   flags it `_VPF_migrating` at the same 10 ms tick), credit decides as usual (until
//!   session 11 only the no-sibling path deferred to a wake-up's tickle, and neither path to
//!   the tick's move; neither case arose on `flex-parallel`, seeds 1-8).
//!
//! Leaves out: the inter-CPU runqueue locking cost of the switch (the seed measures ~1 % total
//! overhead), spin detection for vCPUs that are not running (they retire nothing).

use super::forward_hooks;
use super::credit::{Credit, Pri};
use super::{Decision, HvScheduler, Params, Reason, SchedView};
use crate::engine::{Ns, RngStream, NS_PER_MS};
use crate::hv::perfcounters::{PmuCounters, SPIN, WORK_BMPR_RANGE, WORK_BPI_RANGE};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId};

/// Timer id of the PMU sampling (credit uses 0..#pCPUs and `u64::MAX`, dp `u64::MAX - 1`).
const SAMPLE_TIMER: u64 = u64::MAX - 2;

/// Default BPI threshold: midway between the spin profile and the most spin-like (highest) work
/// BPI (the rule in the header): (2/7 + 0.20) / 2 = 0.243.
pub fn default_spin_bpi_min() -> f64 {
    (SPIN.bpi + WORK_BPI_RANGE.1) / 2.0
}

/// Default BMPR threshold (a fraction): midway between the spin profile and the most spin-like
/// (lowest) work BMPR: (0.05 % + 1 %) / 2 = 0.525 %.
pub fn default_spin_bmpr_max() -> f64 {
    (SPIN.bmpr + WORK_BMPR_RANGE.0) / 2.0
}

/// The spin test on counter windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpinDetector {
    pub bpi_min: f64,
    pub bmpr_max: f64,
    pub min_window_instructions: u64,
}

impl SpinDetector {
    /// Whether an estimate with these ratios looks like a busy-wait loop.
    pub fn looks_like_spin(&self, bpi: f64, bmpr: f64) -> bool {
        bpi >= self.bpi_min && bmpr <= self.bmpr_max
    }
    /// The decision for one sample: `window` is what the vCPU retired since its last sample,
    /// `estimate` the (weighted) sum since the last reset, including it.
    pub fn spinning(&self, window: &PmuCounters, estimate: &Estimate) -> bool {
        window.instructions >= self.min_window_instructions && estimate.instructions > 0.0 && self.looks_like_spin(estimate.bpi(), estimate.bmpr())
    }
}

/// Sums of counter windows since the last reset (older ones weighted by `history_weight`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    pub instructions: f64,
    pub branches: f64,
    pub misses: f64,
}

impl Estimate {
    pub fn update(&mut self, history_weight: f64, w: &PmuCounters) {
        self.instructions = self.instructions * history_weight + w.instructions as f64;
        self.branches = self.branches * history_weight + w.branches as f64;
        self.misses = self.misses * history_weight + w.branch_misses as f64;
    }
    pub fn bpi(&self) -> f64 {
        if self.instructions > 0.0 {
            self.branches / self.instructions
        } else {
            0.0
        }
    }
    pub fn bmpr(&self) -> f64 {
        if self.branches > 0.0 {
            self.misses / self.branches
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlexSStats {
    /// Samples that found the running vCPU spinning.
    pub detections: u64,
    /// Spinners switched with a sibling.
    pub switches: u64,
    /// Spinners that yielded without a sibling to switch with (`yield_without_sibling`).
    pub yields: u64,
    pub resets: u64,
    /// Spinners that went on with their slice for want of a sibling to switch with.
    pub no_sibling: u64,
}

pub struct FlexS {
    credit: Credit,
    detector: SpinDetector,
    sample_ns: Ns,
    reset_ns: Ns,
    history_weight: f64,
    last: Vec<PmuCounters>,
    est: Vec<Estimate>,
    /// A spinner detected on this pCPU, to be switched at its next decision.
    pending: Vec<Option<VcpuId>>,
    /// When each vCPU last became runnable and waiting.
    waiting_since: Vec<Ns>,
    next_reset: Ns,
    /// Whether a spinner without a sibling to switch with yields anyway (see the header).
    yield_without_sibling: bool,
    /// Whether a sibling whose estimate showed a spin loop when it last ran is no candidate.
    skip_last_spinning: bool,
    /// When the slice of what each pCPU runs ends, as last decided.
    slice_end: Vec<Ns>,
    rng: RngStream,
    stats: FlexSStats,
}

impl FlexS {
    pub fn from_params(p: &mut Params) -> Result<Self, ScenarioError> {
        // Flex = credit + FlexW in its accounting (on unless `flexw = false`) + FlexS.
        let credit = Credit::from_params_with(p, true)?;
        // seed 002 "Implementation": detection in vcpu_acct(), i.e. at credit's 10 ms tick
        // (xen/common/sched_credit.c `csched_tick` → `csched_vcpu_acct`; see the header).
        let sample_ms = p.f64("sample_ms", 10.0, 0.01, 1000.0)?;
        // seed 002 "Practical Considerations", "reset BPI and BMPR every 10s": counts since the
        // reset (1); < 1 weights older counts down at each sample (see the header).
        let history_weight = p.f64("history_weight", 1.0, 0.0, 1.0)?;
        // Midway between the spin profile and the work range, per counter (see the header).
        let bpi_min = p.f64("spin_bpi_min", default_spin_bpi_min(), 0.0, 1.0)?;
        let bmpr_max_pct = p.f64("spin_bmpr_max_pct", default_spin_bmpr_max() * 100.0, 0.0, 100.0)?;
        let min_window_instructions = p.u64("min_window_instructions", 250_000, 1, u64::MAX / 2)?;
        // seed 002 "Practical Considerations": reset BPI and BMPR every 10 s.
        let reset_ms = p.f64("reset_ms", 10_000.0, 1.0, 1e9)?;
        // Reading of "FlexS Design (cont')": the yield is the first half of the switch.
        let yield_without_sibling = p.bool("yield_without_sibling", false)?;
        // Reading of "a sibling ... doing useful work": any queued sibling (see the header).
        let skip_last_spinning = p.bool("skip_siblings_last_spinning", false)?;
        Ok(FlexS {
            credit,
            detector: SpinDetector { bpi_min, bmpr_max: bmpr_max_pct / 100.0, min_window_instructions },
            sample_ns: ((sample_ms * NS_PER_MS as f64) as Ns).max(1),
            reset_ns: ((reset_ms * NS_PER_MS as f64) as Ns).max(1),
            history_weight,
            last: Vec::new(),
            est: Vec::new(),
            pending: Vec::new(),
            waiting_since: Vec::new(),
            next_reset: 0,
            yield_without_sibling,
            skip_last_spinning,
            slice_end: Vec::new(),
            rng: RngStream::new(0, "flexs"),
            stats: FlexSStats::default(),
        })
    }

    pub fn stats(&self) -> FlexSStats {
        self.stats
    }

    /// Sample the PMU of every running vCPU; flag spinners.
    fn sample(&mut self, view: &mut SchedView) {
        if view.now >= self.next_reset {
            self.est.iter_mut().for_each(|e| *e = Estimate::default());
            self.next_reset = view.now + self.reset_ns;
            self.stats.resets += 1;
        }
        for p in 0..view.n_pcpus() {
            let Some(v) = view.pcpu_cur[p] else { continue };
            let c = view.vcpus[v].pmu;
            let window = c.since(&self.last[v]);
            self.last[v] = c;
            self.est[v].update(self.history_weight, &window);
            if self.pending[p].is_none() && self.detector.spinning(&window, &self.est[v]) {
                self.pending[p] = Some(v);
                self.stats.detections += 1;
                view.tickle(p);
            }
        }
        view.arm(SAMPLE_TIMER, view.now + self.sample_ns);
    }

    /// Whether `t`'s counters, as last sampled while it ran, showed a spin loop: it was
    /// preempted busy-waiting, so switching it in would only move the spin (the seed switches
    /// in a sibling "that is doing useful work"). Cleared with the estimates every `reset_ms`.
    fn last_seen_spinning(&self, t: VcpuId) -> bool {
        let e = &self.est[t];
        e.instructions > 0.0 && self.detector.looks_like_spin(e.bpi(), e.bmpr())
    }

    /// Whether `t` could take over from spinner `s` on `p`: queued on another pCPU, both allowed
    /// where they would go, not parked by a cap.
    fn switchable(&self, view: &SchedView, p: PcpuId, s: VcpuId, t: VcpuId) -> Option<PcpuId> {
        if view.vcpus[t].run != RunState::Runnable || self.credit.parked(t) || (self.skip_last_spinning && self.last_seen_spinning(t)) {
            return None;
        }
        let q = self.credit.queued_on(t)?;
        (q != p && view.allowed(t, p) && view.allowed(s, q)).then_some(q)
    }

    /// The better of two candidates (see the header).
    pub fn better(&self, now: Ns, a: VcpuId, b: VcpuId) -> VcpuId {
        let cand = |t: VcpuId| Candidate { vcpu: t, pri: self.credit.pri(t), waited_ns: now.saturating_sub(self.waiting_since[t]) };
        better_candidate(cand(a), cand(b))
    }

    /// Power of two choices: draw two siblings of `s`, keep those that can switch, take the
    /// better.
    pub fn pick_sibling(&mut self, view: &SchedView, p: PcpuId, s: VcpuId) -> Option<VcpuId> {
        let sibs: Vec<VcpuId> = view.vms[view.vcpus[s].vm].vcpus.iter().copied().filter(|&t| t != s).collect();
        let n = sibs.len();
        if n == 0 {
            return None;
        }
        let i = self.rng.below(n);
        let mut tries = vec![sibs[i]];
        if n > 1 {
            let j = self.rng.below(n - 1);
            tries.push(sibs[if j >= i { j + 1 } else { j }]);
        }
        tries.retain(|&t| self.switchable(view, p, s, t).is_some());
        tries.into_iter().reduce(|a, b| self.better(view.now, a, b))
    }

    fn decide(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, mut why: Reason) -> Decision {
        let now = view.now;
        if let Some(s) = self.pending[p].take() {
            // Credit's own reasons for this decision come first: a wake-up's tickle (a unit that
            // outranks `s`, `__runq_tickle`) or the tick's move of `s` to an idle pCPU
            // (`_VPF_migrating`, `csched_unit_acct`), both raised with the detector's request
            // in one scheduler softirq. Credit decides as usual; FlexS tries again at the next
            // sample that finds a spinner.
            let credits_own = self.credit.tickled(p) || self.credit.migrating(s);
            if prev == Some(s) && prev_runnable && matches!(why, Reason::Timer | Reason::Yield) && !credits_own {
                // "complete the unfinished time slice": the pCPU's slice, which `s` may itself
                // have taken over from a spinner, keeps its end; at its end nothing is left
                // to complete and credit schedules as usual.
                let left_ns = self.slice_end[p].saturating_sub(now);
                if left_ns > 0 {
                    if let Some(t) = self.pick_sibling(view, p, s) {
                        self.stats.switches += 1;
                        self.waiting_since[s] = now;
                        return self.credit.switch_with(view, p, s, t, left_ns);
                    }
                }
                // No sibling: unless this decision is also the slice's end, the spinner goes on
                // with its slice (or yields, if so configured).
                if !self.yield_without_sibling && why == Reason::Timer && left_ns > 0 {
                    self.stats.no_sibling += 1;
                    return self.credit.keep_running(view, p, s, left_ns);
                }
                if self.yield_without_sibling {
                    why = Reason::Yield;
                    self.stats.yields += 1;
                }
            }
        }
        let d = self.credit.do_schedule(view, p, prev, prev_runnable, why);
        self.note_waiting(now, prev, prev_runnable, &d);
        d
    }

    fn note_waiting(&mut self, now: Ns, prev: Option<VcpuId>, prev_runnable: bool, d: &Decision) {
        if let Some(v) = prev.filter(|&v| prev_runnable && d.next != Some(v)) {
            self.waiting_since[v] = now;
        }
    }
}

impl HvScheduler for FlexS {
    forward_hooks!(credit: pause_exit, vipi_pending, tasklet_mode, wakes_after_exit, lazy_context_switch, enforces_caps);

    fn name(&self) -> &'static str {
        "flex"
    }

    fn init(&mut self, view: &mut SchedView) {
        let nv = view.vcpus.len();
        self.last = view.vcpus.iter().map(|f| f.pmu).collect();
        self.est = vec![Estimate::default(); nv];
        self.pending = vec![None; view.n_pcpus()];
        self.waiting_since = vec![0; nv];
        self.slice_end = vec![0; view.n_pcpus()];
        self.next_reset = view.now + self.reset_ns;
        view.arm(SAMPLE_TIMER, view.now + self.sample_ns);
        self.credit.init(view);
    }

    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        self.waiting_since[v] = view.now;
        self.credit.wake(view, v);
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        self.credit.sleep(view, v);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        let d = self.decide(view, p, prev, prev_runnable, why);
        self.slice_end[p] = d.slice_ns.map_or(Ns::MAX, |s| view.now + s);
        d
    }

    fn timer(&mut self, view: &mut SchedView, id: u64) {
        if id == SAMPLE_TIMER {
            self.sample(view);
        } else {
            self.credit.timer(view, id);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats;
        let mut c = self.credit.counters();
        c.extend([("flexs_detections", s.detections), ("flexs_switches", s.switches), ("flexs_yields", s.yields), ("flexs_resets", s.resets), ("flexs_no_sibling", s.no_sibling)]);
        c
    }

    fn reads_pmu(&self) -> bool {
        true
    }

    fn set_seed(&mut self, seed: u64) {
        self.rng = RngStream::new(seed, "flexs");
    }
}

/// A sibling that could take over from a spinner.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub vcpu: VcpuId,
    pub pri: Pri,
    pub waited_ns: Ns,
}

/// Higher credit priority first, then the longer wait, then the lower vCPU id.
pub fn better_candidate(a: Candidate, b: Candidate) -> VcpuId {
    let key = |c: &Candidate| (c.pri, c.waited_ns, std::cmp::Reverse(c.vcpu));
    if key(&b) > key(&a) {
        b.vcpu
    } else {
        a.vcpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hv::sched::testkit::Kit;
    use std::collections::BTreeMap;

    fn flexs() -> FlexS {
        flexs_with(&[])
    }

    fn flexs_with(opts: &[&str]) -> FlexS {
        let m: BTreeMap<String, toml::Value> = opts.iter().map(|k| (k.to_string(), toml::Value::Boolean(true))).collect();
        FlexS::from_params(&mut Params::new(&m)).unwrap()
    }

    fn det() -> SpinDetector {
        flexs().detector
    }

    /// A window of `ins` instructions with the given ratios.
    fn window(ins: u64, bpi: f64, bmpr: f64) -> PmuCounters {
        let br = (ins as f64 * bpi) as u64;
        PmuCounters { instructions: ins, branches: br, branch_misses: (br as f64 * bmpr) as u64 }
    }

    /// 10 ms of a PAUSE loop (IPC 7/15.5 at 2.5 GHz: 25 M × 7 / 15.5 = 11 290 323 instructions,
    /// BPI 2/7: 3 225 806 branches, BMPR 0.05 %: 1 613 misses) and of useful work (IPC 1: 25 M
    /// instructions, BPI 0.12, BMPR 3 %), the profiles of `hv/perfcounters.rs`.
    const SPIN_10MS: PmuCounters = PmuCounters { instructions: 11_290_323, branches: 3_225_806, branch_misses: 1_613 };
    const WORK_10MS: PmuCounters = PmuCounters { instructions: 25_000_000, branches: 3_000_000, branch_misses: 90_000 };

    fn judge(d: &SpinDetector, w: PmuCounters) -> bool {
        let mut e = Estimate::default();
        e.update(0.5, &w);
        d.spinning(&w, &e)
    }

    #[test]
    fn detector_flags_high_bpi_low_miss_windows_only() {
        let d = det();
        assert!(judge(&d, window(1_000_000, 0.30, 0.0005)), "PAUSE loop");
        assert!(!judge(&d, window(2_500_000, 0.15, 0.03)), "useful work");
        assert!(!judge(&d, window(1_000_000, 0.30, 0.02)), "branchy but mispredicting: not a spin loop");
        assert!(!judge(&d, window(1_000_000, 0.20, 0.0005)), "predictable but too few branches (e.g. a streaming loop)");
        assert!(!judge(&d, window(100_000, 0.30, 0.0005)), "window too short to judge");
        // Thresholds are inclusive, midway between the profiles: (2/7 + 0.20) / 2 and
        // (0.05 % + 1 %) / 2.
        assert!((d.bpi_min - 0.242_857).abs() < 1e-6 && (d.bmpr_max - 0.005_25).abs() < 1e-12, "{d:?}");
        assert!(d.looks_like_spin(d.bpi_min, d.bmpr_max));
        assert!(!d.looks_like_spin(d.bpi_min - 1e-4, d.bmpr_max));
        assert!(!d.looks_like_spin(d.bpi_min, d.bmpr_max + 1e-4));
    }

    /// The threshold rule: midway between the spin profile and the most spin-like end of the
    /// work range, per counter, so the pure spin profile passes both tests and no work profile
    /// the model can draw (BPI ≤ 0.20, BMPR ≥ 1 %) passes either.
    #[test]
    fn default_thresholds_lie_midway_between_the_spin_profile_and_the_work_range() {
        let d = det();
        assert!((d.bpi_min - (SPIN.bpi + WORK_BPI_RANGE.1) / 2.0).abs() < 1e-12);
        assert!((d.bmpr_max - (SPIN.bmpr + WORK_BMPR_RANGE.0) / 2.0).abs() < 1e-12);
        assert!(d.looks_like_spin(SPIN.bpi, SPIN.bmpr), "the spin profile");
        assert!(WORK_BPI_RANGE.1 < d.bpi_min && d.bpi_min < SPIN.bpi, "BPI threshold between work and spin: {d:?}");
        assert!(SPIN.bmpr < d.bmpr_max && d.bmpr_max < WORK_BMPR_RANGE.0, "BMPR threshold between spin and work: {d:?}");
    }

    #[test]
    fn defaults_sample_at_credits_tick_and_keep_counts_since_the_reset() {
        let f = flexs();
        assert_eq!((f.sample_ns, f.history_weight, f.reset_ns), (10 * NS_PER_MS, 1.0, 10_000 * NS_PER_MS));
    }

    #[test]
    fn with_history_weight_one_half_the_estimate_forgets_work_within_three_windows() {
        let d = det();
        let mut e = Estimate::default();
        // 1 ms of work (IPC 1 at 2.5 GHz), then windows of about 0.9 ms of spinning (IPC 0.45).
        e.update(0.5, &window(2_500_000, 0.12, 0.03));
        let spin = window(1_000_000, 0.30, 0.0005);
        e.update(0.5, &spin);
        assert!(!d.spinning(&spin, &e), "one spin window after work: BPI {:.3}", e.bpi());
        e.update(0.5, &spin);
        e.update(0.5, &spin);
        assert!(d.spinning(&spin, &e), "after three: BPI {:.3} BMPR {:.4}", e.bpi(), e.bmpr());
        let mut fresh = Estimate::default();
        fresh.update(0.5, &spin);
        assert!(d.spinning(&spin, &fresh), "after a reset one window suffices");
    }

    /// pCPUs 0-2; VM 0 has vCPUs 0, 1, 2; VM 1 has vCPUs 3, 4. vCPU 0 runs on pCPU 0, VM 1 on
    /// pCPUs 1 and 2, and VM 0's vCPUs 1 and 2 wait on pCPUs 1 and 2 (vCPU 2 since 5 ms).
    fn rig() -> (Kit, FlexS) {
        rig_with(&[3, 2], flexs())
    }

    fn rig_with(vms: &[usize], mut f: FlexS) -> (Kit, FlexS) {
        let mut k = Kit::new(3, vms);
        f.set_seed(7);
        k.init(&mut f);
        k.wake_on(&mut f, 0, 0);
        k.wake_on(&mut f, 3, 1);
        k.wake_on(&mut f, 4, 2);
        k.wake_on(&mut f, 1, 1);
        k.now = 5 * NS_PER_MS;
        k.wake_on(&mut f, 2, 2);
        assert_eq!(k.pcpu_cur, vec![Some(0), Some(3), Some(4)]);
        assert_eq!((f.credit.queued_on(1), f.credit.queued_on(2)), (Some(1), Some(2)));
        (k, f)
    }

    /// "Reset BPI and BMPR every 10s": one pCPU, one VM of one vCPU, the defaults (a sample
    /// every 10 ms, counts since the reset). The vCPU works for 10 ms, then spins.
    ///
    /// After the work window and k spin windows the estimate holds 25 + 11.29k M instructions,
    /// 3 + 3.226k M branches and 90 000 + 1 613k misses: BPI = (3 + 3.226k) / (25 + 11.29k)
    /// reaches 0.2429 at k ≥ 6.35, BMPR = (90 000 + 1 613k) / (3 M + 3.226k M) falls to
    /// 0.525 % at k ≥ 4.85; so the first detection is at k = 7, the sample at 80 ms (with
    /// `history_weight = 0.5` it is at k = 3, see the test above). From then on every sample up
    /// to 9.99 s finds it spinning: samples 80, 90, ..., 9 990 ms, 992 detections, and at 9.99 s
    /// the estimate holds all 999 windows (the work window and 998 spin windows). At 10 s the
    /// reset zeroes the estimate before that sample's window, a work window, is added: the
    /// estimate is that window alone.
    #[test]
    fn counts_persist_across_samples_until_the_10_s_reset_and_are_zero_after_it() {
        let mut k = Kit::new(1, &[1]);
        let mut f = flexs();
        k.init(&mut f);
        k.wake(&mut f, 0);
        assert_eq!(k.pcpu_cur, vec![Some(0)]);
        let add = |c: &mut PmuCounters, w: PmuCounters| {
            c.instructions += w.instructions;
            c.branches += w.branches;
            c.branch_misses += w.branch_misses;
        };
        let mut pmu = PmuCounters::default();
        for i in 1..=999u64 {
            add(&mut pmu, if i == 1 { WORK_10MS } else { SPIN_10MS });
            k.vcpus[0].pmu = pmu;
            k.advance(&mut f, i * 10 * NS_PER_MS);
            let spin_windows = i - 1;
            let want = if spin_windows >= 7 { spin_windows - 6 } else { 0 };
            assert_eq!(f.stats().detections, want, "after {spin_windows} spin windows: BPI {:.4} BMPR {:.5}", f.est[0].bpi(), f.est[0].bmpr());
        }
        assert_eq!(f.stats().detections, 992);
        assert_eq!(f.stats().resets, 0);
        let e = f.est[0];
        let spun = |c: u64| 998.0 * c as f64;
        assert_eq!(
            (e.instructions, e.branches, e.misses),
            (25e6 + spun(SPIN_10MS.instructions), 3e6 + spun(SPIN_10MS.branches), 90_000.0 + spun(SPIN_10MS.branch_misses))
        );
        add(&mut pmu, WORK_10MS);
        k.vcpus[0].pmu = pmu;
        k.advance(&mut f, 10_000 * NS_PER_MS);
        assert_eq!(f.stats().resets, 1);
        let e = f.est[0];
        assert_eq!((e.instructions, e.branches, e.misses), (25e6, 3e6, 90_000.0), "only the window after the reset");
        assert_eq!(f.stats().detections, 992);
    }

    #[test]
    fn power_of_two_choice_takes_the_sibling_that_waited_longer() {
        let (mut k, mut f) = rig();
        k.now = 6 * NS_PER_MS;
        // Two siblings: both are drawn; vCPU 1 has waited 6 ms, vCPU 2 only 1 ms.
        let t = k.with(|view| f.pick_sibling(view, 0, 0));
        assert_eq!(t, Some(1));
        assert_eq!(f.better(k.now, 2, 1), 1);
        // A sibling that may not run on pCPU 0 is no candidate.
        k.affinity[1] = Some(vec![1]);
        assert_eq!(k.with(|view| f.pick_sibling(view, 0, 0)), Some(2));
        k.affinity[2] = Some(vec![2]);
        assert_eq!(k.with(|view| f.pick_sibling(view, 0, 0)), None);
    }

    #[test]
    fn better_prefers_higher_priority_then_longer_wait_then_lower_id() {
        let c = |vcpu, pri, waited_ns| Candidate { vcpu, pri, waited_ns };
        assert_eq!(better_candidate(c(1, Pri::Under, 9), c(2, Pri::Boost, 1)), 2);
        assert_eq!(better_candidate(c(1, Pri::Over, 9), c(2, Pri::Under, 1)), 2);
        assert_eq!(better_candidate(c(1, Pri::Under, 9), c(2, Pri::Under, 1)), 1);
        assert_eq!(better_candidate(c(3, Pri::Under, 5), c(2, Pri::Under, 5)), 2);
    }

    /// Per pCPU, how many vCPUs of VM 0 run or wait there.
    fn vm0_per_pcpu(k: &Kit, f: &FlexS) -> Vec<usize> {
        (0..3)
            .map(|p| (0..3).filter(|&v| k.pcpu_cur[p] == Some(v) || f.credit.queued_on(v) == Some(p)).count())
            .collect()
    }

    #[test]
    fn a_detected_spinner_is_switched_with_a_sibling_without_stacking() {
        let (mut k, mut f) = rig();
        let before = vm0_per_pcpu(&k, &f);
        assert_eq!(before, vec![1, 1, 1]);
        // vCPU 0 spins until the first sample, at credit's tick at 10 ms: its PMU shows a PAUSE
        // loop. VM 1's vCPUs compute.
        k.vcpus[0].pmu = SPIN_10MS;
        k.vcpus[3].pmu = WORK_10MS;
        k.vcpus[4].pmu = WORK_10MS;
        k.advance(&mut f, 9 * NS_PER_MS);
        assert_eq!(f.stats().detections, 0, "no sample before the tick");
        k.advance(&mut f, 10 * NS_PER_MS);
        assert_eq!(f.stats().detections, 1);
        assert_eq!(f.stats().switches, 1);
        // vCPU 1 (waited longer) now runs on pCPU 0; vCPU 0 waits on pCPU 1 in its place.
        assert_eq!(k.pcpu_cur, vec![Some(1), Some(3), Some(4)]);
        assert_eq!(f.credit.queued_on(0), Some(1));
        assert_eq!(vm0_per_pcpu(&k, &f), before, "no pCPU gained a vCPU of the VM");
    }

    #[test]
    fn a_sibling_switched_in_mid_slice_hands_on_the_same_slice_end() {
        // "Find a sibling vCPU to complete the unfinished time slice": vCPU 0's slice on pCPU 0
        // ends at 30 ms. It spins and vCPU 1 takes over at 10 ms; when vCPU 1 spins too (found
        // at 20 ms), the next sibling gets what is left of the same slice, not a new one
        // counted from 10 ms
        // (a chain of such switches would otherwise hold the pCPU for the VM past every slice
        // end, and a vCPU of another VM queued there would never run).
        let (mut k, mut f) = rig();
        k.vcpus[0].pmu = SPIN_10MS;
        k.vcpus[3].pmu = WORK_10MS;
        k.vcpus[4].pmu = WORK_10MS;
        k.advance(&mut f, 10 * NS_PER_MS);
        assert_eq!((k.pcpu_cur[0], f.stats().switches), (Some(1), 1));
        assert_eq!(f.slice_end[0], 30 * NS_PER_MS);
        k.vcpus[1].pmu = SPIN_10MS;
        k.advance(&mut f, 20 * NS_PER_MS);
        assert_eq!(f.stats().switches, 2);
        assert!(matches!(k.pcpu_cur[0], Some(0) | Some(2)), "{:?}", k.pcpu_cur);
        assert_eq!(f.slice_end[0], 30 * NS_PER_MS, "the slice vCPU 0 was given at 0");
    }

    #[test]
    fn a_sibling_last_seen_spinning_is_a_candidate_unless_asked_to_skip_it() {
        // vCPU 1 was preempted in a spin loop: its estimate shows one.
        let spun = |f: &mut FlexS| f.est[1].update(0.5, &window(1_000_000, 0.30, 0.0005));
        let (mut k, mut f) = rig();
        k.now = 6 * NS_PER_MS;
        spun(&mut f);
        assert_eq!(k.with(|view| f.pick_sibling(view, 0, 0)), Some(1), "default: its wait may be over");
        let (mut k, mut f) = rig_with(&[3, 2], flexs_with(&["skip_siblings_last_spinning"]));
        k.now = 6 * NS_PER_MS;
        assert_eq!(k.with(|view| f.pick_sibling(view, 0, 0)), Some(1));
        spun(&mut f);
        assert_eq!(k.with(|view| f.pick_sibling(view, 0, 0)), Some(2), "skipped: only vCPU 2 is left");
        // The 10 s reset forgets it.
        f.est[1] = Estimate::default();
        assert_eq!(k.with(|view| f.pick_sibling(view, 0, 0)), Some(1));
    }

    /// The rig plus VM 1's third vCPU (5) queued on pCPU 0 behind spinner vCPU 0, and vCPU 0's
    /// siblings pinned where they wait, so none can be switched in. vCPU 0 then spins until the
    /// sample at 10 ms.
    fn spinner_without_candidate(f: FlexS) -> (Kit, FlexS) {
        let (mut k, mut f) = rig_with(&[3, 3], f);
        k.wake_on(&mut f, 5, 0);
        assert_eq!((k.pcpu_cur[0], f.credit.queued_on(5)), (Some(0), Some(0)));
        k.affinity[1] = Some(vec![1]);
        k.affinity[2] = Some(vec![2]);
        k.vcpus[0].pmu = SPIN_10MS;
        k.advance(&mut f, 10 * NS_PER_MS);
        (k, f)
    }

    #[test]
    fn a_spinner_without_a_sibling_to_switch_with_keeps_its_slice() {
        let (k, f) = spinner_without_candidate(flexs());
        let s = f.stats();
        assert_eq!((s.detections, s.switches, s.yields, s.no_sibling), (1, 0, 0, 1));
        assert_eq!(k.pcpu_cur[0], Some(0), "the spinner goes on; vCPU 5 still waits");
        assert_eq!(f.credit.queued_on(5), Some(0));
        assert_eq!(f.slice_end[0], 30 * NS_PER_MS, "with the slice it was given at 0");
    }

    #[test]
    fn with_yield_without_sibling_a_spinner_without_a_sibling_yields_its_pcpu() {
        let (k, f) = spinner_without_candidate(flexs_with(&["yield_without_sibling"]));
        let s = f.stats();
        assert_eq!((s.detections, s.switches, s.yields, s.no_sibling), (1, 0, 1, 0));
        assert_eq!(k.pcpu_cur[0], Some(5), "SCHEDOP_yield: the next in pCPU 0's runqueue runs");
        assert_eq!(f.credit.queued_on(0), Some(0));
    }

    /// The detector's request and a wake-up's tickle raised for the same pCPU make one
    /// decision; credit's wake-up preemption decides it. The rig plus VM 1's third vCPU (5),
    /// halted, last run on pCPU 0. Past the 10 ms ticks (vCPU 0 drops from BOOST to UNDER; the
    /// sample saw no counts), vCPU 0 is found spinning at 15 ms and, before pCPU 0 decides,
    /// vCPU 5 wakes there at BOOST, which outranks UNDER (`__runq_tickle`): vCPU 5 runs and no
    /// sibling is switched in (until session 11 the switch ignored the tickle and vCPU 5 waited
    /// behind vCPU 0's sibling).
    #[test]
    fn a_wake_up_tickle_with_the_detection_lets_credit_decide() {
        let (mut k, mut f) = rig_with(&[3, 3], flexs());
        k.advance(&mut f, 10 * NS_PER_MS);
        assert_eq!(f.stats().detections, 0);
        assert_eq!(f.credit.pri(0), Pri::Under);
        k.now = 15 * NS_PER_MS;
        k.vcpus[0].pmu = SPIN_10MS;
        k.with(|view| f.sample(view));
        assert_eq!((f.stats().detections, k.pending_tickles()), (1, vec![0]));
        k.wake_on(&mut f, 5, 0);
        assert_eq!(k.pcpu_cur[0], Some(5), "the woken BOOST unit preempts the spinner");
        assert_eq!(f.stats().switches, 0);
        assert_eq!(f.credit.queued_on(0), Some(0));
    }

    /// Credit's tick and FlexS's sample fall at the same 10 ms instant, the sample first (both
    /// timers re-arm at their own firing, in the order armed at `init`); a tick that flags the
    /// spinner to move to an idle pCPU (`_VPF_migrating`) shares the decision the detector asked
    /// for, and the move is made. pCPUs 0-2, VM 0 = vCPUs 0-2, VM 1 = vCPUs 3, 4. vCPU 0 runs on
    /// pCPU 0 with vCPU 3 (pinned there) queued behind it; vCPU 4 runs on pCPU 1 with vCPU 1
    /// (allowed on pCPUs 0-1) queued behind it; pCPU 2 idles. At 20 ms (the 10 ms tick only
    /// made the units active) vCPU 0 is found spinning, and pCPU 0's tick flags it: it has a
    /// waiter and pCPU 2 idles. Credit runs vCPU 3 on pCPU 0 and moves vCPU 0 to pCPU 2 (until
    /// session 11 the switch with vCPU 1 dropped the move and pCPU 2 stayed idle).
    #[test]
    fn a_tick_move_to_an_idle_pcpu_with_the_detection_is_made() {
        let mut k = Kit::new(3, &[3, 2]);
        let mut f = flexs();
        f.set_seed(7);
        k.init(&mut f);
        k.wake_on(&mut f, 0, 0);
        k.wake_on(&mut f, 4, 1);
        k.affinity[1] = Some(vec![0, 1]);
        k.wake_on(&mut f, 1, 1);
        k.affinity[3] = Some(vec![0]);
        k.wake_on(&mut f, 3, 0);
        assert_eq!(k.pcpu_cur, vec![Some(0), Some(4), None]);
        assert_eq!((f.credit.queued_on(3), f.credit.queued_on(1)), (Some(0), Some(1)));
        k.advance(&mut f, 10 * NS_PER_MS);
        assert_eq!(k.pcpu_cur, vec![Some(0), Some(4), None]);
        k.now = 20 * NS_PER_MS;
        k.vcpus[0].pmu = SPIN_10MS;
        k.with(|view| {
            f.timer(view, SAMPLE_TIMER);
            f.timer(view, 0);
        });
        assert!(f.credit.migrating(0));
        assert_eq!(f.stats().detections, 1);
        k.serve(&mut f);
        assert_eq!(k.pcpu_cur, vec![Some(3), Some(4), Some(0)], "vCPU 0 moved to the idle pCPU");
        assert_eq!(f.stats().switches, 0);
    }

    #[test]
    fn working_vcpus_are_left_alone() {
        let (mut k, mut f) = rig();
        for v in [0, 3, 4] {
            k.vcpus[v].pmu = WORK_10MS;
        }
        k.advance(&mut f, 10 * NS_PER_MS);
        assert_eq!(f.est[0].instructions, 25e6, "sampled at 10 ms");
        assert_eq!(f.stats().detections, 0);
        assert_eq!(k.pcpu_cur, vec![Some(0), Some(3), Some(4)]);
    }

    #[test]
    fn bad_parameters_name_the_field_and_credit_parameters_pass() {
        let mut m = BTreeMap::new();
        m.insert("spin_bmpr_max_pct".to_string(), toml::Value::Float(120.0));
        let e = crate::hv::sched::build("flex", &m, &Default::default()).err().unwrap();
        assert_eq!(e.path, "hypervisor.params.spin_bmpr_max_pct");
        let mut m = BTreeMap::new();
        m.insert("tslice_ms".to_string(), toml::Value::Integer(10));
        assert!(crate::hv::sched::build("flex", &m, &Default::default()).is_ok());
    }
}

#[cfg(test)]
mod scenario_tests {
    use crate::scenario::from_toml_str;
    use crate::sim::{results_json, Overrides, Results, Simulation};

    const PARALLEL: &str = include_str!("../../../../../scenarios/flex-parallel.toml");

    fn run(text: &str, scheduler: &str) -> Results {
        run_seed(text, scheduler, None)
    }

    fn run_seed(text: &str, scheduler: &str, seed: Option<u64>) -> Results {
        let sc = from_toml_str(text).unwrap();
        let ov = Overrides { scheduler: Some(scheduler.into()), seed, check: true };
        Simulation::new(&sc, &ov).unwrap().run().unwrap()
    }

    /// The metric of the parallel mix: mean completion time of the VMs (each runs a fixed
    /// amount of work), in seconds; the seed's "normalized runtime" averaged over the mix.
    fn mean_completion_s(r: &Results) -> f64 {
        r.vms.iter().map(|v| v.completion_ns.expect("finished") as f64 / 1e9).sum::<f64>() / r.vms.len() as f64
    }

    fn makespan_s(r: &Results) -> f64 {
        r.vms.iter().map(|v| v.completion_ns.expect("finished")).max().unwrap() as f64 / 1e9
    }

    fn with(scheduler: &str, params: &str) -> String {
        PARALLEL.replace("scheduler = \"flex\"\n", &format!("scheduler = \"{scheduler}\"\nparams = {{ {params} }}\n"))
    }

    fn spin_s(r: &Results) -> f64 {
        r.vms.iter().map(|v| v.guest_ns.on_cpu.barrier_spin).sum::<u64>() as f64 / 1e9
    }

    /// FlexS alone (no FlexW) against plain credit on seed 1. With the defaults (a sample at
    /// credit's 10 ms tick, counts since the 10 s reset) it finishes sooner and spins less
    /// (measured, session 11 profiles and thresholds: mean completion 21.12 vs 23.02 s, makespan
    /// 25.09 vs 29.23 s, barrier spin 86.4 vs 103.1 vCPU-s; session 10: 21.25 s, 25.66 s, 88.7);
    /// sampling every 1 ms with a two-window memory, the reading before session 10, it finishes
    /// far sooner (8.25 s, makespan 9.19 s; session 10: 9.02 s, 9.61 s). The default's margin
    /// over credit (8 %) is too small for the "far sooner" bound the test held before session 10
    /// (< 0.6 × credit's), so that bound stays on the 1 ms reading only.
    #[test]
    fn flexs_finishes_the_busy_waiting_mix_sooner_than_credit_and_far_sooner_sampling_every_ms() {
        let credit = run(&with("credit", ""), "credit");
        let flexs = run(&with("flex", "flexw = false"), "flex");
        let (a, b) = (mean_completion_s(&credit), mean_completion_s(&flexs));
        assert!(b < a, "mean completion: FlexS {b:.2} s vs credit {a:.2} s");
        assert!(makespan_s(&flexs) < makespan_s(&credit), "makespan {:.2} vs {:.2}", makespan_s(&flexs), makespan_s(&credit));
        assert!(spin_s(&flexs) < spin_s(&credit), "barrier spin {:.2} s vs {:.2} s", spin_s(&flexs), spin_s(&credit));
        let c = &flexs.totals.scheduler_counters;
        assert!(c["flexs_switches"] > 0 && c["flexs_detections"] >= c["flexs_switches"], "{c:?}");
        assert!(!c.contains_key("flexw_updates"), "{c:?}");
        let fast = run(&with("flex", "flexw = false, sample_ms = 1, history_weight = 0.5"), "flex");
        let f = mean_completion_s(&fast);
        assert!(f < 0.6 * a, "1 ms, history 0.5: mean completion {f:.2} s vs credit {a:.2} s");
        assert!(makespan_s(&fast) < 0.6 * makespan_s(&credit), "1 ms, history 0.5: makespan {:.2} vs {:.2}", makespan_s(&fast), makespan_s(&credit));
        assert!(spin_s(&fast) < spin_s(&credit), "1 ms, history 0.5: barrier spin {:.2} s vs {:.2} s", spin_s(&fast), spin_s(&credit));
    }

    /// Reading the virtual PMU changes nothing by itself: Flex whose detector never fires
    /// (`spin_bpi_min = 1`: no estimate reaches one branch per instruction) runs exactly as
    /// FlexW alone — every VM, vCPU and pCPU result alike; only the event count (FlexS's sample
    /// timer) and the scheduler counters differ. The machine brings the counters of running
    /// vCPUs up to date before every scheduler timer (`pmu_refresh`), which closes their open
    /// run intervals; until session 12 the cache-refill model read another pCPU's busy time as
    /// last closed (`World::busy_now`), so that refresh alone moved refill times by tens of ns
    /// and the runs parted: mean completion 6.37 vs 7.81 s on seed 4, 7.79 vs 6.43 s on seed 7.
    #[test]
    fn flex_whose_detector_never_fires_runs_exactly_as_flexw_alone() {
        let blind = with("flex", "spin_bpi_min = 1.0");
        let flexw = with("credit", "flexw = true");
        for seed in [4, 7] {
            let a = run_seed(&blind, "flex", Some(seed));
            let b = run_seed(&flexw, "credit", Some(seed));
            assert_eq!(a.totals.scheduler_counters["flexs_detections"], 0);
            let same = |r: &Results| serde_json::to_string(&(r.sim_time_ns, &r.vms, &r.vcpus, &r.pcpus)).unwrap();
            assert!(same(&a) == same(&b), "seed {seed}: mean completion {:.3} s (FlexS never detecting) vs {:.3} s (FlexW alone)", mean_completion_s(&a), mean_completion_s(&b));
        }
    }

    #[test]
    fn flex_is_credit_with_flexw_in_its_accounting_and_flexs() {
        let flex = run(PARALLEL, "flex");
        let c = &flex.totals.scheduler_counters;
        assert!(c["flexw_updates"] > 0 && c["flexs_switches"] > 0, "{c:?}");
        // FlexW alone (credit + FlexW) makes the same accounting updates without the switches.
        let flexw = run(&with("credit", "flexw = true"), "credit");
        assert!(flexw.totals.scheduler_counters["flexw_updates"] > 0 && !flexw.totals.scheduler_counters.contains_key("flexs_switches"));
        // Both finish the mix well before plain credit.
        let credit = run(&with("credit", ""), "credit");
        for r in [&flex, &flexw] {
            assert!(makespan_s(r) < 0.6 * makespan_s(&credit), "{}: makespan {:.2} vs credit {:.2}", r.scheduler, makespan_s(r), makespan_s(&credit));
        }
        // The random sibling draws are seeded: the same run is byte-identical.
        assert_eq!(results_json(&flex), results_json(&run(PARALLEL, "flex")));
    }
}

