//! Observers: time-in-state buckets, latency histograms, and the results tables.
//!
//! Every nanosecond a vCPU occupies a pCPU lands in exactly one bucket of `TimeBuckets`
//! (hypervisor overhead or one kind of guest activity); halted and steal time are kept
//! beside it. Histograms use power-of-two buckets (as `perf`/`bpftrace` hist do) and report
//! exact counts per bucket plus bucket-resolution percentiles.

pub mod cputime;
pub mod idle_wait;
pub mod results;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::Ns;

/// Where a vCPU's on-pCPU time went.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct TimeBuckets {
    /// Guest threads doing their work (incl. critical sections and local flushes).
    pub useful: Ns,
    /// Spinning for a spinlock, incl. hand-off.
    pub lock_spin: Ns,
    /// Sender spinning for function-call IPI / TLB-shootdown acknowledgements.
    pub ipi_wait: Ns,
    /// User-mode spin-then-block at barriers.
    pub barrier_spin: Ns,
    /// Adaptive-mutex optimistic spinning.
    pub mutex_spin: Ns,
    /// Interrupt and IPI handlers.
    pub irq: Ns,
    /// Re-fetching a working set after a migration or eviction.
    pub cache_refill: Ns,
    /// Hypervisor: world switches, scheduler calls, exit handling, background spins.
    pub hv: Ns,
    /// KVM halt polling: the halted vCPU kept its pCPU, waiting for a wake-up.
    pub halt_poll: Ns,
}

impl TimeBuckets {
    pub fn total(&self) -> Ns {
        self.useful + self.lock_spin + self.ipi_wait + self.barrier_spin + self.mutex_spin + self.irq + self.cache_refill + self.hv + self.halt_poll
    }
    pub fn add(&mut self, o: &TimeBuckets) {
        self.useful += o.useful;
        self.lock_spin += o.lock_spin;
        self.ipi_wait += o.ipi_wait;
        self.barrier_spin += o.barrier_spin;
        self.mutex_spin += o.mutex_spin;
        self.irq += o.irq;
        self.cache_refill += o.cache_refill;
        self.hv += o.hv;
        self.halt_poll += o.halt_poll;
    }
}

/// Passes of guest threads through one `mark` op name of a VM.
///
/// Besides the first, last and mean passage, a mark keeps its *rounds*: round k (from 0) is
/// every thread's (k+1)-th passage, and `round_last_ns[k]` the latest of them. A mark at the
/// end of a loop body thus gives, per pass of a team, the time the slowest member finished it
/// (a benchmark's wall time per pass: `metrics` uses it for STREAM's best rate). Memory: one
/// `Ns` per round and one counter per thread that passed the mark.
#[derive(Debug, Clone, Default)]
pub struct MarkStat {
    pub name: String,
    pub count: u64,
    pub first_ns: Ns,
    pub last_ns: Ns,
    pub sum_ns: u128,
    /// Passages so far, by guest thread id.
    passes_by_thread: BTreeMap<usize, u64>,
    /// The latest passage of each round (see the type's comment).
    round_last_ns: Vec<Ns>,
}

impl MarkStat {
    /// Guest thread `thread` passes the mark at `now`.
    pub fn record(&mut self, now: Ns, thread: usize) {
        if self.count == 0 {
            self.first_ns = now;
        }
        self.count += 1;
        self.last_ns = now;
        self.sum_ns += now as u128;
        let passes = self.passes_by_thread.entry(thread).or_insert(0);
        let round = *passes as usize;
        *passes += 1;
        match self.round_last_ns.get_mut(round) {
            Some(last) => *last = (*last).max(now),
            None => self.round_last_ns.push(now),
        }
    }
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
    /// The latest passage of each round, in round order.
    pub fn round_last_ns(&self) -> &[Ns] {
        &self.round_last_ns
    }
}

#[derive(Debug, Clone, Default)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: Ns,
}

impl Histogram {
    pub fn record(&mut self, v: Ns) {
        let b = if v == 0 { 0 } else { 64 - v.leading_zeros() as usize };
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
    /// Upper bound of the bucket holding the q-quantile.
    pub fn quantile(&self, q: f64) -> Ns {
        if self.n == 0 {
            return 0;
        }
        let target = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (b, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= target {
                return Self::upper(b).min(self.max);
            }
        }
        self.max
    }
    fn upper(b: usize) -> Ns {
        if b == 0 {
            0
        } else if b >= 64 {
            Ns::MAX
        } else {
            (1u64 << b) - 1
        }
    }
    pub fn summary(&self) -> HistSummary {
        HistSummary {
            count: self.n,
            mean_ns: self.mean(),
            p50_ns: self.quantile(0.5),
            p99_ns: self.quantile(0.99),
            max_ns: self.max,
            buckets: self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(b, c)| (Self::upper(b), *c)).collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct HistSummary {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: Ns,
    pub p99_ns: Ns,
    pub max_ns: Ns,
    /// (bucket upper bound in ns, count), power-of-two buckets.
    pub buckets: Vec<(Ns, u64)>,
}

/// Weighted max-min fair (GPS) allocation of `capacity` among claimants with `demand` and
/// `weight` (water-filling).
pub fn gps_shares(capacity: f64, demand: &[f64], weight: &[f64]) -> Vec<f64> {
    let n = demand.len();
    let mut alloc = vec![0.0; n];
    let mut open: Vec<usize> = (0..n).filter(|&i| demand[i] > 0.0 && weight[i] > 0.0).collect();
    let mut left = capacity;
    while !open.is_empty() && left > 1e-12 {
        let wsum: f64 = open.iter().map(|&i| weight[i]).sum();
        let mut saturated = Vec::new();
        for &i in &open {
            let fair = left * weight[i] / wsum;
            if demand[i] - alloc[i] <= fair {
                saturated.push(i);
            }
        }
        if saturated.is_empty() {
            for &i in &open {
                alloc[i] += left * weight[i] / wsum;
            }
            break;
        }
        for &i in &saturated {
            left -= demand[i] - alloc[i];
            alloc[i] = demand[i];
        }
        open.retain(|i| !saturated.contains(i));
    }
    alloc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_are_bucket_bounds() {
        let mut h = Histogram::default();
        for v in [1, 2, 3, 100, 1000] {
            h.record(v);
        }
        assert_eq!(h.count(), 5);
        assert_eq!(h.quantile(0.5), 3);
        assert_eq!(h.quantile(1.0), 1000);
    }

    #[test]
    fn a_marks_round_ends_at_its_slowest_thread_whatever_the_order_of_passages() {
        let mut m = MarkStat::default();
        // Two threads: thread 7 passes at 10 and 30, thread 3 at 25 and 26 (its second pass
        // comes before thread 7's second). Round 0 = {10, 25} ends at 25, round 1 = {30, 26}
        // at 30; a third pass of thread 3 opens round 2 alone.
        for (now, t) in [(10, 7), (25, 3), (26, 3), (30, 7), (40, 3)] {
            m.record(now, t);
        }
        assert_eq!(m.round_last_ns(), &[25, 30, 40]);
        assert_eq!((m.count, m.first_ns, m.last_ns), (5, 10, 40));
    }

    #[test]
    fn gps_gives_unused_share_to_others() {
        let a = gps_shares(4.0, &[1.0, 4.0, 4.0], &[1.0, 1.0, 1.0]);
        assert!((a[0] - 1.0).abs() < 1e-9 && (a[1] - 1.5).abs() < 1e-9 && (a[2] - 1.5).abs() < 1e-9);
        let b = gps_shares(4.0, &[1.0, 2.0, 3.0, 4.0], &[1.0, 1.0, 1.0, 1.0]);
        for x in b {
            assert!((x - 1.0).abs() < 1e-9);
        }
    }
}
