//! Dithered hypervisor costs: each hypervisor path's time varies a little around its mean.
//!
//! Models: with `host.costs.hv_cost_jitter_pct` = j > 0, every hypervisor cost charged on a
//! pCPU (`World::hv_cost_ns`: VM exits and their handlers, world switches, scheduler calls,
//! the lazy switch's state saves, tasklets) takes its nominal time times a factor drawn
//! uniformly from [1 - j/100, 1 + j/100], before the CPI scaling of `hv::llc`. The mean is
//! unchanged. Each pCPU draws from its own stream ("pcpu{p}/hv", `engine::rng`), so the
//! guests' draws (compute grains, requests) stay what they are without it, and the run stays
//! deterministic for a given seed.
//!
//! Why: with every cost a constant, periodic activities can lock into a fixed phase that a
//! real host leaves within microseconds. The known case (docs/scenarios.md, "An older KVM
//! host"): a fixed PLE window (Linux 3.13), two 12-vCPU sync-heavy VMs on 12 pCPUs; the lone
//! spinners' directed yields, each PLE exit exactly `exit_ple_ns` after the last, reschedule a
//! pCPU that holds two preempted vCPUs of their VM so densely that every dispatch there ends
//! when its world switch does: the pair ping-pongs with no guest progress and the run never
//! finishes. It freezes at `exit_ple_ns` 1 450-1 550 ns and not at 1 400 or 1 700; with ±2 %
//! here it finishes with the others. Floyd and Jacobson found the same in deterministic network
//! simulations ("On Traffic Phase Effects in Packet-Switched Gateways", Internetworking:
//! Research and Experience 3(3), 1992): phase effects that a small random processing time
//! removes. Real exit handling times do vary: SystemTap's `kvm_service_time.stp` example
//! (sourceware.org/systemtap/examples/virtualization) reports per exit reason a minimum, mean
//! and maximum that differ many-fold (but a PAUSE exit's time there includes the directed
//! yield and whatever ran before re-entry). The bare hardware round trip varies little: four
//! back-to-back KVM_RUN samples of an SVM guest posted to LKML (thread on VMLOAD/VMSAVE of
//! host state, Dec 2020, lkml.iu.edu/hypermail/linux/kernel/2012.2/00527.html) took 2 528,
//! 2 528, 2 576 and 2 544 cycles from ioctl entry to exit, within ±1 % of their mean: a warm,
//! tight loop, so a floor for a busy host's spread. The ping-pong itself is real (LKML, Wanpeng Li,
//! "sched/kvm: Semantics-aware vCPU scheduling for oversubscribed KVM", Nov 2025: yield_to's
//! next-buddy hint "creates a ping-pong effect"); only its total, endless form is the
//! constant costs' doing.
//!
//! A busy host's spread is far wider: per-exit coefficients of variation of 0.2-0.75 follow
//! from `perf kvm stat` reports (n and the mean's relative standard error; qemu-devel, June
//! 2021; docs/calibration.md, "Timing noise and phase locks"), with a long right tail. So
//! `host.costs.hv_cost_cv` = c > 0 draws the factor instead from a log-normal of mean 1 and
//! CV c (same stream; exclusive with the band). The reproductions' KVM hosts set c = 0.44, the
//! median of that report's reasons (python/vmsched/reproduce/core.py KVM_EXIT_COST_CV; since
//! session 40, seed 000's applications refitted under it).
//!
//! Leaves out: the real distribution's exact shape (log-normal stands for a long right tail),
//! a different spread per exit reason (one CV for every cost), jitter of guest costs, of IPI
//! latencies and of timers. Default: off, every cost a constant, so hosts calibrated without
//! it do not move.

use crate::engine::{log_normal, Ns, RngStream};
use crate::sim::state::PcpuId;
use rand_distr::LogNormal;

/// The factor a hypervisor cost is multiplied by.
#[derive(Debug, Clone, Copy)]
enum Spread {
    Off,
    /// Uniform in [1 - half_width, 1 + half_width] (`host.costs.hv_cost_jitter_pct` / 100).
    Uniform { half_width: f64 },
    /// Log-normal, mean 1, of CV `host.costs.hv_cost_cv` (built once: every cost draws from it).
    LogNormal(LogNormal<f64>),
}

#[derive(Debug)]
pub struct HvJitter {
    spread: Spread,
    streams: Vec<RngStream>,
}

impl HvJitter {
    /// `jitter_pct` (a uniform band) and `cv` (a log-normal spread) are exclusive; validation
    /// refuses both at once.
    pub fn new(jitter_pct: f64, cv: f64, seed: u64, n_pcpus: usize) -> Self {
        let spread = if cv > 0.0 {
            log_normal(1.0, cv).map_or(Spread::Off, Spread::LogNormal)
        } else if jitter_pct > 0.0 {
            Spread::Uniform { half_width: jitter_pct / 100.0 }
        } else {
            Spread::Off
        };
        let streams = match spread {
            Spread::Off => Vec::new(),
            _ => (0..n_pcpus).map(|p| RngStream::new(seed, &format!("pcpu{p}/hv"))).collect(),
        };
        HvJitter { spread, streams }
    }

    /// The time a hypervisor cost of nominal `ns` takes on pCPU `p` this once.
    pub fn apply(&mut self, p: PcpuId, ns: Ns) -> Ns {
        if ns == 0 {
            return ns;
        }
        let factor = match self.spread {
            Spread::Off => return ns,
            Spread::Uniform { half_width } => 1.0 + half_width * (2.0 * self.streams[p].uniform() - 1.0),
            Spread::LogNormal(ref d) => self.streams[p].sample(d),
        };
        (ns as f64 * factor).round() as Ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_every_cost_is_its_nominal_time() {
        let mut j = HvJitter::new(0.0, 0.0, 1, 4);
        assert!((0..100).all(|i| j.apply(i % 4, 2_740) == 2_740));
    }

    #[test]
    fn each_draw_stays_within_the_band_and_the_mean_is_kept() {
        let mut j = HvJitter::new(5.0, 0.0, 7, 2);
        let draws: Vec<Ns> = (0..20_000).map(|i| j.apply(i % 2, 10_000)).collect();
        assert!(draws.iter().all(|&d| (9_500..=10_500).contains(&d)), "outside ±5 %");
        let mean = draws.iter().sum::<Ns>() as f64 / draws.len() as f64;
        assert!((mean - 10_000.0).abs() < 20.0, "mean {mean}");
        assert!(draws.iter().any(|&d| d < 9_600) && draws.iter().any(|&d| d > 10_400), "the band is used");
    }

    #[test]
    fn a_log_normal_spread_keeps_the_mean_and_has_the_asked_cv_and_a_long_tail() {
        let mut j = HvJitter::new(0.0, 0.5, 11, 1);
        let draws: Vec<f64> = (0..200_000).map(|_| j.apply(0, 10_000) as f64).collect();
        let n = draws.len() as f64;
        let mean = draws.iter().sum::<f64>() / n;
        let sd = (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 10_000.0).abs() < 50.0, "mean {mean}");
        assert!((sd / mean - 0.5).abs() < 0.02, "cv {}", sd / mean);
        let median = {
            let mut s = draws.clone();
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        };
        assert!(median < mean, "right-skewed: median {median} below the mean");
        assert!(draws.iter().any(|&d| d > 30_000.0), "a tail beyond 3x the mean");
    }

    #[test]
    fn the_same_seed_gives_the_same_draws_and_pcpus_draw_apart() {
        let run = |seed| {
            let mut j = HvJitter::new(10.0, 0.0, seed, 2);
            (0..50).map(|i| j.apply(i % 2, 1_000)).collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
        let mut a = HvJitter::new(10.0, 0.0, 3, 2);
        let p0: Vec<Ns> = (0..20).map(|_| a.apply(0, 1_000)).collect();
        let p1: Vec<Ns> = (0..20).map(|_| a.apply(1, 1_000)).collect();
        assert_ne!(p0, p1, "each pCPU has its own stream");
    }
}
