//! A non-preemptible background load per pCPU: the scheduling-pattern experiment of seed 004
//! §7.5 ("Scenario 3: Scheduling strategy").
//!
//! Models (seed 004 §7.5.1): Barrelfish's timer interrupt fires every `period_ms` (80 ms) on
//! every core; its handler spins, non-preemptible, for a delay before dispatching anything.
//! The delays alternate from one period to the next through `delays_ms` (15/30 ms or
//! 5/40 ms). `synchronous`: all cores choose the same delay in the same period; `offset`
//! ("asynchronous" in the seed): the i-th listed pCPU starts i steps further into the delay
//! list, so two cores always choose different delays (Figure 7). Each core thus loses
//! mean(delays) / period of its time in both patterns (28.1 % for 15/30 and 5/40 ms), but
//! with `offset` the time during which both cores of a 2-vCPU VM run at once shrinks from
//! 1 − max/period to 1 − max(d_k, d_{k+1})/period per period pair (62.5 % for 15/30, 50 % for
//! 5/40, seed §7.5.2).
//!
//! `phase_ms` places the run in the timer's cycle: t = 0 lies `phase_ms` after the start of
//! period 0, so a run may begin inside a spin or between two. The seed repeats each benchmark
//! and reports the mean (± its deviation, Tables 10-11), and a run starts wherever the 80 ms
//! timer happens to be; a run that always begins at a period boundary (phase 0) sees the same
//! end of its last period every time, which for runs of a few periods shifts the measured
//! slowdown by up to a delay over the run's length. Averaging over phases spread across the
//! delays' cycle (`period × len(delays)`) removes that.
//!
//! While the spin lasts the pCPU does nothing else: a vCPU running there stays on it but makes
//! no progress (its time is hypervisor time, `hv`), interrupts and exits aimed at it wait
//! until the spin ends, and a vCPU dispatched onto the pCPU during the spin (for instance one
//! woken from HLT) starts only when it ends. A vCPU descheduled during the spin leaves the
//! rest of it to the pCPU. Background time counts as hypervisor time of the pCPU and as
//! `background_ns` in the results; on an idle pCPU it is not idle time. The running vCPU is
//! charged by its scheduler as if it ran (as an interrupt handler's time is charged to the
//! interrupted task without IRQ-time accounting).
//!
//! Leaves out: cache eviction by the spin loop (it touches almost no memory), Barrelfish's
//! timer-driven guest time (seed §6.3), any other work the real timer handler does.

use serde::{Deserialize, Serialize};

use crate::engine::{ms_to_ns, Ns};
use crate::scenario::ScenarioError;
use crate::sim::state::*;
use crate::sim::{Ev, World};

/// `host.background`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundSpec {
    /// Timer period: Barrelfish's 80 ms time slice (seed 004 §6.3, §7.5.1).
    #[serde(default = "d_period_ms")]
    pub period_ms: f64,
    /// Delays the timer handler spins for, alternating per period (seed 004 §7.5.1: 15/30 ms
    /// and 5/40 ms).
    #[serde(default = "d_delays_ms")]
    pub delays_ms: Vec<f64>,
    #[serde(default)]
    pub pattern: BackgroundPattern,
    /// pCPUs with the background load (default: all), in the order that defines `offset`.
    #[serde(default)]
    pub pcpus: Option<Vec<u32>>,
    /// Where t = 0 lies in the timer's cycle: this long after period 0 began (0: at a
    /// period boundary). Below `period_ms × len(delays_ms)`.
    #[serde(default)]
    pub phase_ms: f64,
}

fn d_period_ms() -> f64 {
    80.0
}
fn d_delays_ms() -> Vec<f64> {
    vec![15.0, 30.0]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundPattern {
    /// Every pCPU spins for the same delay in the same period.
    #[default]
    Synchronous,
    /// The i-th listed pCPU is i steps ahead in the delay list ("asynchronous", seed §7.5.1).
    Offset,
}

/// Effective background load of a run.
#[derive(Debug, Clone)]
pub(crate) struct Background {
    pub period_ns: Ns,
    pub delays_ns: Vec<Ns>,
    pub pattern: BackgroundPattern,
    /// Rank of each pCPU in the listed order (None: no background there).
    pub rank: Vec<Option<usize>>,
    /// t = 0 lies this long after period 0 began (`phase_ms`).
    pub phase_ns: Ns,
}

impl Background {
    pub fn new(spec: &BackgroundSpec, n_pcpus: usize) -> Self {
        let mut rank = vec![None; n_pcpus];
        match &spec.pcpus {
            Some(list) => {
                for (i, &p) in list.iter().enumerate() {
                    rank[p as usize] = Some(i);
                }
            }
            None => {
                for (p, r) in rank.iter_mut().enumerate() {
                    *r = Some(p);
                }
            }
        }
        Background {
            period_ns: ms_to_ns(spec.period_ms).max(1),
            delays_ns: spec.delays_ms.iter().map(|&d| ms_to_ns(d)).collect(),
            pattern: spec.pattern,
            rank,
            phase_ns: ms_to_ns(spec.phase_ms),
        }
    }

    /// When period `k` begins, relative to t = 0 (period 0 began `phase_ns` before it).
    fn period_start(&self, k: u64) -> i128 {
        (k * self.period_ns) as i128 - self.phase_ns as i128
    }

    /// The spin of pCPU `p` in period `k` (starting at `k × period`), if `p` has a background.
    pub fn delay(&self, p: PcpuId, k: u64) -> Option<Ns> {
        let r = self.rank[p]? as u64;
        let n = self.delays_ns.len() as u64;
        let step = match self.pattern {
            BackgroundPattern::Synchronous => k,
            BackgroundPattern::Offset => k + r,
        };
        Some(self.delays_ns[(step % n) as usize])
    }
}

pub(crate) fn validate(spec: &BackgroundSpec, n_pcpus: u64) -> Result<(), ScenarioError> {
    let p = "host.background";
    if !spec.period_ms.is_finite() || spec.period_ms <= 0.0 || spec.period_ms > 1e9 {
        return Err(ScenarioError::new(format!("{p}.period_ms"), format!("must lie in (0, 1e9] ms, got {}", spec.period_ms)));
    }
    if spec.delays_ms.is_empty() {
        return Err(ScenarioError::new(format!("{p}.delays_ms"), "must list at least one delay"));
    }
    for (i, &d) in spec.delays_ms.iter().enumerate() {
        if !d.is_finite() || d < 0.0 || d > spec.period_ms {
            return Err(ScenarioError::new(
                format!("{p}.delays_ms[{i}]"),
                format!("must lie in [0, period_ms = {}] ms, got {d}", spec.period_ms),
            ));
        }
    }
    let cycle_ms = spec.period_ms * spec.delays_ms.len() as f64;
    if !spec.phase_ms.is_finite() || spec.phase_ms < 0.0 || spec.phase_ms >= cycle_ms {
        return Err(ScenarioError::new(
            format!("{p}.phase_ms"),
            format!("must lie in [0, period_ms x len(delays_ms) = {cycle_ms}) ms, got {}", spec.phase_ms),
        ));
    }
    if let Some(list) = &spec.pcpus {
        for (i, &c) in list.iter().enumerate() {
            if c as u64 >= n_pcpus {
                return Err(ScenarioError::new(format!("{p}.pcpus[{i}]"), format!("no pCPU {c}: the host has {n_pcpus}")));
            }
            if list[..i].contains(&c) {
                return Err(ScenarioError::new(format!("{p}.pcpus[{i}]"), format!("pCPU {c} is listed twice")));
            }
        }
    }
    Ok(())
}

pub(crate) fn overlap(a0: Ns, a1: Ns, b0: Ns, b1: Ns) -> Ns {
    a1.min(b1).saturating_sub(a0.max(b0))
}

impl World {
    /// Schedule the first background spin of every pCPU that has one: at t = 0, in the period
    /// that t = 0 lies in (`phase_ns` into its cycle), where its spin may already be under way.
    pub(crate) fn background_start(&mut self) {
        let Some(bg) = &self.background else { return };
        let k0 = bg.phase_ns / bg.period_ns;
        let ps: Vec<PcpuId> = (0..self.pcpus.len()).filter(|&p| bg.rank[p].is_some()).collect();
        for p in ps {
            self.q.push(0, Ev::Background(p, k0));
        }
    }

    /// Period `k` is under way on pCPU `p` (it begins now, or began before t = 0): its timer
    /// handler spins for this period's delay, less what of it lay before now.
    pub(crate) fn background_tick(&mut self, p: PcpuId, k: u64) {
        let Some(bg) = &self.background else { return };
        let now = self.now();
        let begun = (now as i128 - bg.period_start(k)).max(0) as Ns;
        let delay = bg.delay(p, k).unwrap_or(0).saturating_sub(begun);
        self.q.push(bg.period_start(k + 1) as Ns, Ev::Background(p, k + 1));
        if delay == 0 {
            return;
        }
        match self.pcpus[p].cur {
            Some(v) => {
                self.advance(v);
                self.vcpus[v].bg_debt_ns = delay;
                self.arm_exec(v);
            }
            None => self.close_idle(p),
        }
        let pc = &mut self.pcpus[p];
        pc.bg_start = now;
        pc.bg_until = now + delay;
    }

    /// Account pCPU `p`'s idle interval up to now: the part inside its background spin is
    /// hypervisor (background) time, the rest idle. The interval stays open from now.
    pub(crate) fn close_idle(&mut self, p: PcpuId) {
        let now = self.now();
        let pc = &mut self.pcpus[p];
        if let Some(since) = pc.idle_since {
            let bg = overlap(since, now, pc.bg_start, pc.bg_until);
            let sw = pc.lazy.idle_hv_in(since, now, pc.bg_start, pc.bg_until);
            pc.idle_ns += now - since - bg - sw;
            pc.hv_ns += bg + sw;
            pc.lazy.idle_hv_ns += sw;
            pc.hv_by_exit_ns[crate::host::ExitReason::slot(None)] += bg;
            pc.bg_ns += bg;
            pc.idle_since = Some(now);
        }
    }

    /// `pcpus[p].idle_ns` brought up to now without changing any state, by `close_idle`'s
    /// rule (the open interval's part inside the background spin is not idle), so that when
    /// the interval was last closed does not change what a reader sees.
    pub(crate) fn idle_now(&self, p: PcpuId) -> Ns {
        let pc = &self.pcpus[p];
        let open = pc.idle_since.map_or(0, |since| {
            let now = self.now();
            now - since - overlap(since, now, pc.bg_start, pc.bg_until) - pc.lazy.idle_hv_in(since, now, pc.bg_start, pc.bg_until)
        });
        pc.idle_ns + open
    }

    /// A vCPU dispatched onto `p` during its spin waits for the spin to end.
    pub(crate) fn background_left(&self, p: PcpuId) -> Ns {
        self.pcpus[p].bg_until.saturating_sub(self.now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: BackgroundPattern, delays: &[f64]) -> BackgroundSpec {
        BackgroundSpec { period_ms: 80.0, delays_ms: delays.to_vec(), pattern, pcpus: Some(vec![0, 1]), phase_ms: 0.0 }
    }

    #[test]
    fn synchronous_pcpus_spin_together_and_offset_pcpus_alternate() {
        let ms = crate::engine::NS_PER_MS;
        let sync = Background::new(&spec(BackgroundPattern::Synchronous, &[15.0, 30.0]), 3);
        let off = Background::new(&spec(BackgroundPattern::Offset, &[15.0, 30.0]), 3);
        let seq = |b: &Background, p| (0..4).map(|k| b.delay(p, k).unwrap() / ms).collect::<Vec<_>>();
        assert_eq!(seq(&sync, 0), vec![15, 30, 15, 30]);
        assert_eq!(seq(&sync, 1), vec![15, 30, 15, 30]);
        assert_eq!(seq(&off, 0), vec![15, 30, 15, 30]);
        assert_eq!(seq(&off, 1), vec![30, 15, 30, 15]);
        assert_eq!(sync.delay(2, 0), None, "pCPU 2 is not listed");
        // Each pCPU loses the same share in both patterns; both-running time per 160 ms differs:
        // synchronous 160 − 15 − 30 = 115 ms (71.9 %), offset 160 − 30 − 30 = 100 ms (62.5 %).
        let both = |b: &Background| (0..2).map(|k| 80 - b.delay(0, k).unwrap().max(b.delay(1, k).unwrap()) / ms).sum::<u64>();
        assert_eq!(both(&sync), 115);
        assert_eq!(both(&off), 100);
        let off540 = Background::new(&spec(BackgroundPattern::Offset, &[5.0, 40.0]), 2);
        assert_eq!(both(&off540), 80);
    }

    #[test]
    fn bad_background_names_the_field() {
        let mut s = spec(BackgroundPattern::Offset, &[15.0, 90.0]);
        assert_eq!(validate(&s, 4).unwrap_err().path, "host.background.delays_ms[1]");
        s.delays_ms = vec![];
        assert_eq!(validate(&s, 4).unwrap_err().path, "host.background.delays_ms");
        s.delays_ms = vec![15.0];
        s.pcpus = Some(vec![0, 7]);
        assert_eq!(validate(&s, 4).unwrap_err().path, "host.background.pcpus[1]");
        s.pcpus = Some(vec![1, 1]);
        assert_eq!(validate(&s, 4).unwrap_err().path, "host.background.pcpus[1]");
        s.pcpus = None;
        s.phase_ms = 80.0; // one delay: the cycle is one period
        assert_eq!(validate(&s, 4).unwrap_err().path, "host.background.phase_ms");
        s.phase_ms = -1.0;
        assert_eq!(validate(&s, 4).unwrap_err().path, "host.background.phase_ms");
        s.phase_ms = 0.0;
        s.period_ms = 0.0;
        assert_eq!(validate(&s, 4).unwrap_err().path, "host.background.period_ms");
    }
}
