//! Context-switch rate controller (CSRC), seed 001 §5.3 (Figure 14): an option of the
//! `credit` scheduler (`hypervisor.params.csrc = true`) that skips a scheduling decision,
//! keeping the current vCPU, when
//! 1. the pCPU switched context more often than `csrc_rate_threshold_per_s` over the last
//!    `csrc_window_ms` (10 ms) and the current vCPU is still runnable, or
//! 2. the current vCPU has run less than `csrc_min_run_us` (1 ms) since it was scheduled in
//!    and is still runnable.
//!
//! Choices where the seed is vague:
//! - "context switch" is counted per pCPU as in the seed's Table 1, whose "Sched: context
//!   switches" is Xen's `sched_ctx` perf counter (common/schedule.c `schedule`: every call
//!   with prev != next): every switch the scheduler makes to a different vCPU, the idle vCPU
//!   included (for tasklet work, or when the current vCPU blocked with nothing queued);
//! - the rate threshold has no value in the seed. The default, 1000 switches/s (10 in a
//!   10 ms window), is the rate at which every slice would be exactly the 1 ms of criterion 2,
//!   so both criteria aim at the same minimum slice (estimate);
//! - yields (PLE exits, `SCHEDOP_yield`) and tasklet work are never skipped: Xen's own rate
//!   limit makes the same two exceptions (`csched_schedule`), since a yielding vCPU is
//!   spinning and tasklet work must run;
//! - after a skip the scheduler is called again when the skip would end: at the end of the
//!   1 ms minimum run (criterion 2), or when enough switches have left the window for the
//!   rate to fall to the threshold (criterion 1), never sooner than `CSCHED_MIN_TIMER`
//!   (100 us), as Xen does for its rate limit;
//! - whether the idle vCPU counts as "still runnable" (`csrc_keeps_idle`, default false). In
//!   Xen 4.1 it is runnable (`vcpu_runnable(idle)` holds; `csched_schedule` re-inserts the
//!   current unit whenever it is runnable, idle included), and Xen's own rate limit needs an
//!   explicit `!is_idle_vcpu(current)` to leave it out; Fig. 14 names no such exclusion, and
//!   §6 puts CSRC's slightly slower responses at light load down to "relative less frequent
//!   scheduling". With `csrc_keeps_idle` both criteria also keep an idle pCPU idle (its run
//!   time counted from its switch to the idle vCPU); a woken vCPU then waits on its runqueue
//!   until the re-check or until another pCPU steals it (session 43, rule T,
//!   docs/policies.md ## csrc; not adopted: the CSRC reproductions starve under it).
//!
//! How it differs from Xen's `sched_ratelimit_us` (xen/common/sched/credit.c,
//! `csched_schedule`; since Xen 4.2, default 1000 us): the rate limit is criterion 2 alone
//! (`runtime = now - state_entry_time < prv->ratelimit` and the unit is runnable, not
//! yielding, no tasklet work). It has no equivalent of criterion 1: Xen never looks at the
//! pCPU's recent switch rate.
//!
//! Leaves out: the seed does not say whether the threshold adapts; here it is fixed.

use std::collections::VecDeque;

use super::Params;
use crate::engine::{Ns, NS_PER_MS, NS_PER_S, NS_PER_US};
use crate::scenario::ScenarioError;
use crate::sim::state::PcpuId;

/// Never re-check sooner than this (`CSCHED_MIN_TIMER`, xen/common/sched/credit.c).
const MIN_RECHECK_NS: Ns = 100 * NS_PER_US;

/// Why CSRC kept the current vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Criterion 1: the switch rate over the window is above the threshold.
    Rate,
    /// Criterion 2: the current vCPU ran less than the minimum.
    MinRun,
}

#[derive(Debug, Clone)]
pub struct Csrc {
    window_ns: Ns,
    /// Switches allowed in one window before criterion 1 applies (rate x window).
    max_in_window: usize,
    min_run_ns: Ns,
    /// Whether the idle vCPU counts as still runnable (`csrc_keeps_idle`).
    pub keeps_idle: bool,
    /// Per pCPU, the times of its context switches within the last window, oldest first.
    switches: Vec<VecDeque<Ns>>,
    /// Per pCPU, when it last switched to the idle vCPU (None: idle since before the run).
    idle_entry_ns: Vec<Option<Ns>>,
    pub skips_rate: u64,
    pub skips_min_run: u64,
}

impl Csrc {
    /// Reads `csrc` and, if on, its thresholds. Returns `None` when CSRC is off.
    pub fn from_params(p: &mut Params) -> Result<Option<Csrc>, ScenarioError> {
        let on = p.bool("csrc", false)?;
        // seed 001 §5.3: "during last period (10 million second)", i.e. 10 ms.
        let window_ms = p.f64("csrc_window_ms", 10.0, 0.1, 1000.0)?;
        // Estimate: the seed gives no value (see the module header).
        let rate_per_s = p.f64("csrc_rate_threshold_per_s", 1000.0, 0.0, 1e7)?;
        // seed 001 §5.3: "runs less than some time slice (1million second for example)", 1 ms.
        let min_run_us = p.f64("csrc_min_run_us", 1000.0, 0.0, 1e6)?;
        // A reading of the seed's "still runnable" (see the module header); off: Xen's rate
        // limit's.
        let keeps_idle = p.bool("csrc_keeps_idle", false)?;
        if !on {
            return Ok(None);
        }
        let window_ns = (window_ms * NS_PER_MS as f64) as Ns;
        let mut c = Csrc::new(window_ns, rate_per_s, (min_run_us * NS_PER_US as f64) as Ns);
        c.keeps_idle = keeps_idle;
        Ok(Some(c))
    }

    pub fn new(window_ns: Ns, rate_per_s: f64, min_run_ns: Ns) -> Csrc {
        let max_in_window = (rate_per_s * window_ns as f64 / NS_PER_S as f64).floor() as usize;
        Csrc {
            window_ns,
            max_in_window,
            min_run_ns,
            keeps_idle: false,
            switches: Vec::new(),
            idle_entry_ns: Vec::new(),
            skips_rate: 0,
            skips_min_run: 0,
        }
    }

    /// pCPU `p` switched to the idle vCPU at `now`: a switch, and the idle vCPU's start.
    pub fn record_switch_to_idle(&mut self, p: PcpuId, now: Ns) {
        self.record_switch(p, now);
        if self.idle_entry_ns.len() <= p {
            self.idle_entry_ns.resize(p + 1, None);
        }
        self.idle_entry_ns[p] = Some(now);
    }

    /// With `keeps_idle`, whether idle pCPU `p` stays idle now: the skip and when to call the
    /// scheduler again, as `check` for a running vCPU.
    pub fn check_idle(&mut self, p: PcpuId, now: Ns) -> Option<(Skip, Ns)> {
        if !self.keeps_idle {
            return None;
        }
        // A pCPU idle since before the run has run its idle vCPU since boot.
        let runtime = self.idle_entry_ns.get(p).copied().flatten().map_or(Ns::MAX, |t| now.saturating_sub(t));
        self.check(p, now, runtime, true)
    }

    fn window(&mut self, p: PcpuId, now: Ns) -> &mut VecDeque<Ns> {
        if self.switches.len() <= p {
            self.switches.resize(p + 1, VecDeque::new());
        }
        let q = &mut self.switches[p];
        while q.front().map_or(false, |&t| t + self.window_ns <= now) {
            q.pop_front();
        }
        q
    }

    /// Record a context switch on pCPU `p`.
    pub fn record_switch(&mut self, p: PcpuId, now: Ns) {
        let cap = self.max_in_window + 1;
        let q = self.window(p, now);
        q.push_back(now);
        // Only the newest `max_in_window + 1` switches matter for the decision.
        while q.len() > cap {
            q.pop_front();
        }
    }

    /// Context switches of pCPU `p` in the window ending now.
    pub fn switches_in_window(&mut self, p: PcpuId, now: Ns) -> usize {
        self.window(p, now).len()
    }

    /// Decide whether to keep the current vCPU of pCPU `p`, which has run `runtime` since it
    /// was scheduled in. Returns the skip and when to call the scheduler again (from now).
    pub fn check(&mut self, p: PcpuId, now: Ns, runtime: Ns, runnable: bool) -> Option<(Skip, Ns)> {
        if !runnable {
            return None;
        }
        let max = self.max_in_window;
        let window_ns = self.window_ns;
        let q = self.window(p, now);
        if q.len() > max {
            // The rate falls to the threshold once the oldest `len - max` switches have left.
            let leaves = q[q.len() - max - 1] + window_ns;
            self.skips_rate += 1;
            return Some((Skip::Rate, (leaves - now).max(MIN_RECHECK_NS)));
        }
        if runtime < self.min_run_ns {
            self.skips_min_run += 1;
            return Some((Skip::MinRun, (self.min_run_ns - runtime).max(MIN_RECHECK_NS)));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = NS_PER_MS;

    fn csrc() -> Csrc {
        // Seed values: 10 ms window, 1 ms minimum run; threshold 1000/s = 10 per window.
        Csrc::new(10 * MS, 1000.0, MS)
    }

    #[test]
    fn a_high_switch_rate_keeps_a_runnable_vcpu() {
        let mut c = csrc();
        for i in 0..11 {
            c.record_switch(0, 100 * MS + i * 100 * NS_PER_US);
        }
        let now = 100 * MS + 2 * MS;
        // Ran 5 ms (criterion 2 does not apply), but 11 switches in the last 10 ms > 10.
        let (why, again) = c.check(0, now, 5 * MS, true).expect("skipped");
        assert_eq!(why, Skip::Rate);
        // The first switch (at 100 ms) leaves the window at 110 ms.
        assert_eq!(again, 110 * MS - now);
        // Another pCPU's rate is its own.
        assert_eq!(c.check(1, now, 5 * MS, true), None);
    }

    #[test]
    fn a_rate_at_the_threshold_or_an_old_burst_does_not_skip() {
        let mut c = csrc();
        for i in 0..10 {
            c.record_switch(0, 100 * MS + i * 100 * NS_PER_US);
        }
        assert_eq!(c.check(0, 102 * MS, 5 * MS, true), None, "10 switches in 10 ms is not above 1000/s");
        c.record_switch(0, 102 * MS);
        assert!(c.check(0, 102 * MS, 5 * MS, true).is_some());
        // 10 ms later the burst has left the window.
        assert_eq!(c.check(0, 112 * MS + 1, 5 * MS, true), None);
        assert_eq!(c.switches_in_window(0, 112 * MS + 1), 0);
    }

    #[test]
    fn a_short_run_keeps_a_runnable_vcpu_until_one_millisecond() {
        let mut c = csrc();
        let (why, again) = c.check(0, 50 * MS, 300 * NS_PER_US, true).expect("skipped");
        assert_eq!(why, Skip::MinRun);
        assert_eq!(again, 700 * NS_PER_US);
        // Just scheduled in: re-check no sooner than 100 us, as Xen's CSCHED_MIN_TIMER.
        assert_eq!(c.check(0, 50 * MS, 950 * NS_PER_US, true).unwrap().1, 100 * NS_PER_US);
        assert_eq!(c.check(0, 50 * MS, MS, true), None, "ran its 1 ms");
    }

    #[test]
    fn the_idle_vcpu_is_kept_only_when_it_counts_as_runnable() {
        let mut c = csrc();
        c.record_switch_to_idle(0, 50 * MS);
        // Idle for 0.3 ms: kept (criterion 2) only under `csrc_keeps_idle`.
        assert_eq!(c.check_idle(0, 50 * MS + 300 * NS_PER_US), None);
        c.keeps_idle = true;
        assert_eq!(c.check_idle(0, 50 * MS + 300 * NS_PER_US), Some((Skip::MinRun, 700 * NS_PER_US)));
        // Idle for its millisecond: a woken vCPU may come in.
        assert_eq!(c.check_idle(0, 51 * MS), None);
        // A pCPU idle since before the run is not kept by the minimum run.
        assert_eq!(c.check_idle(3, 100 * NS_PER_US), None);
    }

    #[test]
    fn a_vcpu_that_is_not_runnable_is_never_kept() {
        let mut c = csrc();
        for i in 0..50 {
            c.record_switch(0, 100 * MS + i * 10 * NS_PER_US);
        }
        assert_eq!(c.check(0, 101 * MS, 10 * NS_PER_US, false), None);
        assert_eq!(c.skips_rate + c.skips_min_run, 0);
    }

    #[test]
    fn csrc_is_off_unless_asked_and_reads_the_seed_defaults() {
        let empty = Default::default();
        assert!(Csrc::from_params(&mut Params::new(&empty)).unwrap().is_none());
        let mut m = std::collections::BTreeMap::new();
        m.insert("csrc".to_string(), toml::Value::Boolean(true));
        let c = Csrc::from_params(&mut Params::new(&m)).unwrap().unwrap();
        assert_eq!((c.window_ns, c.max_in_window, c.min_run_ns), (10 * MS, 10, MS));
        m.insert("csrc_min_run_us".to_string(), toml::Value::Float(-1.0));
        let e = Csrc::from_params(&mut Params::new(&m)).unwrap_err();
        assert_eq!(e.path, "hypervisor.params.csrc_min_run_us");
    }
}
