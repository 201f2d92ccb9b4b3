//! Synthetic hardware performance counters per vCPU: retired instructions, retired branches and
//! mispredicted branches, as a virtual PMU (Xen vPMU, KVM perf counters per vCPU thread) would
//! count them while the vCPU runs guest code.
//!
//! Nothing runs instruction by instruction here, so the counts are synthesised from how a
//! vCPU's run time was spent (`metrics::TimeBuckets`, updated by `World::advance`): each
//! accounted interval of one kind of activity adds `ns × cpu_ghz × IPC` instructions,
//! `instructions × BPI` branches and `branches × BMPR` misses of that kind's profile, with BPI and
//! BMPR multiplied by log-normal noise (mean 1) drawn from the vCPU's own stream
//! `<vm>/vcpu<k>/pmu`. A policy sees only the cumulative counts (`VcpuFacts::pmu`), never the
//! activity behind them (FlexS's spin detector, seed 002 "FlexS Design").
//!
//! Profiles (the seed gives no numbers, only "spin loops show high branch per instruction (BPI)
//! and low branch miss prediction rate (BMPR)"; session 11 sourced what the corpus holds):
//! - spinning (spinlock, IPI-acknowledgement wait, adaptive-mutex spin, user barrier spin): the
//!   PAUSE loop of the busy-waiting barrier the mixes run, libgomp's `do_spin`
//!   (gcc-mirror/gcc libgomp/config/linux/wait.h: `for (i = 0; i < count; i++) if (load(addr)
//!   != val) return 0; else cpu_relax ();`, `cpu_relax` = `__builtin_ia32_pause`,
//!   libgomp/config/linux/x86/futex.h). Compiled (gcc 12.2 -O2, x86-64) one iteration is
//!   `pause; add; cmp; je; mov; cmp; je`: 7 instructions, 2 branches, BPI 2/7 = 0.286. Linux
//!   ticket spinlocks of the seed's era retire 4-5 instructions per iteration: 2.6.2x
//!   `__ticket_spin_lock` (asm: `cmpb; je; rep;nop; movb; jmp`, 2 branches, BPI 0.4), 3.x
//!   (C loop compiled: `pause; movzbl; cmpb; jne`, 1 branch, BPI 0.25); the one profile takes
//!   the barrier's loop, where the mixes spin. IPC: an iteration costs about what its PAUSE
//!   costs, "Intel pre-Skylake processor: measured typically 14-17 cycles per yield" for a loop
//!   of one PAUSE (dotnet/coreclr src/vm/yieldprocessornormalized.cpp; Intel's optimization
//!   manual puts PAUSE at ~10 cycles before Skylake, 140 on it): 7 instructions per 15.5 cycles,
//!   IPC 0.45 (0.41-0.50). BMPR: every branch of the loop goes the way it went last time except
//!   the exit, one misprediction per spin of n iterations in 2n branches: at 15.5 cycles per
//!   iteration and 2.5 GHz a 1 µs spin mispredicts 0.31 % of its branches, a 6 µs spin 0.05 %,
//!   a 1 ms barrier wait 0.0003 %. The profile keeps 0.05 % (spins of about 6 µs, the short
//!   lock waits; the mixes' barrier waits, about 1 ms, mispredict less, which only makes them
//!   look more like spinning);
//! - useful guest work: BPI and BMPR drawn per VM (stream `<vm>/pmu`) uniformly from
//!   0.05-0.20 and 1-6 %. BPI: "20% of instructions are branches in general purpose code, 5% of
//!   instructions are branch[es in] scientific code" (EE 8063 lecture "Branch Statistics",
//!   Mississippi State, after its textbook's Tables 4.1 and 8.1; pldworld.com mirror of
//!   erc.msstate.edu/~reese/EE8063): floating-point HPC loops (NAS LU/BT) at the low end,
//!   integer code at the high end. BMPR: partly sourced — a 4096-entry two-bit predictor
//!   mispredicts 4 % of the branches of SPEC89's floating-point programs on average and 11 % of
//!   the integer ones (Hennessy & Patterson, Fig. 3.8, after Pan et al. 1992); the 1 % lower end
//!   for the better predictors of Core-era CPUs is an estimate (no measured NAS rates were
//!   found in the corpus). IPC 1.0 is an estimate;
//! - interrupt handlers and cache refill (guest kernel, memory-bound): BPI 0.18, BMPR 3 %,
//!   IPC 0.6 (estimates).
//!
//! Leaves out: hypervisor time (the vPMU counts guest mode only, so exits, world switches and
//! scheduler calls add nothing), SMT and frequency effects, counter multiplexing and skid.
//! The counters are only synthesised when the scheduler reads them (`HvScheduler::reads_pmu`),
//! so other policies pay nothing for them.

use crate::engine::{Ns, RngStream};
use crate::metrics::TimeBuckets;
use crate::sim::state::VcpuId;
use crate::sim::World;

/// Cumulative counts of one vCPU (or a window of them, as a difference).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PmuCounters {
    pub instructions: u64,
    pub branches: u64,
    pub branch_misses: u64,
}

impl PmuCounters {
    /// Counts since `earlier` (a snapshot of the same counters).
    pub fn since(&self, earlier: &PmuCounters) -> PmuCounters {
        PmuCounters {
            instructions: self.instructions.saturating_sub(earlier.instructions),
            branches: self.branches.saturating_sub(earlier.branches),
            branch_misses: self.branch_misses.saturating_sub(earlier.branch_misses),
        }
    }
    /// Branches per instruction (0 without instructions).
    pub fn bpi(&self) -> f64 {
        if self.instructions == 0 {
            0.0
        } else {
            self.branches as f64 / self.instructions as f64
        }
    }
    /// Branch misprediction rate: misses per branch (0 without branches).
    pub fn bmpr(&self) -> f64 {
        if self.branches == 0 {
            0.0
        } else {
            self.branch_misses as f64 / self.branches as f64
        }
    }
}

/// What one kind of guest activity retires per cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    pub ipc: f64,
    pub bpi: f64,
    pub bmpr: f64,
}

/// PAUSE-based spin loops: libgomp's `do_spin` compiled, 7 instructions and 2 branches per
/// iteration of about 15.5 cycles; one misprediction per exit of a ~6 µs spin (see the header).
pub const SPIN: Profile = Profile { ipc: 7.0 / 15.5, bpi: 2.0 / 7.0, bmpr: 0.0005 };
/// Guest interrupt handlers and working-set refill. Estimate.
pub const KERNEL: Profile = Profile { ipc: 0.6, bpi: 0.18, bmpr: 0.03 };
/// Useful work: IPC (estimate), and the ranges the per-VM BPI (sourced) and BMPR (partly
/// sourced) are drawn from (see the header).
pub const WORK_IPC: f64 = 1.0;
pub const WORK_BPI_RANGE: (f64, f64) = (0.05, 0.20);
pub const WORK_BMPR_RANGE: (f64, f64) = (0.01, 0.06);
/// Coefficient of variation of the per-interval noise on BPI and BMPR. Estimate.
pub const NOISE_CV_BPI: f64 = 0.10;
pub const NOISE_CV_BMPR: f64 = 0.20;

/// The work profile of a VM, drawn from its stream `<vm>/pmu`.
pub fn work_profile(rng: &mut RngStream) -> Profile {
    let (b0, b1) = WORK_BPI_RANGE;
    let (m0, m1) = WORK_BMPR_RANGE;
    let bpi = b0 + (b1 - b0) * rng.uniform();
    let bmpr = m0 + (m1 - m0) * rng.uniform();
    Profile { ipc: WORK_IPC, bpi, bmpr }
}

struct VcpuPmu {
    instructions: f64,
    branches: f64,
    misses: f64,
    work: Profile,
    rng: RngStream,
}

/// The virtual PMUs of all vCPUs.
#[derive(Default)]
pub struct Pmu {
    enabled: bool,
    cpu_ghz: f64,
    vcpus: Vec<VcpuPmu>,
}

impl Pmu {
    /// `vms`: (name, vCPU count) in VM order; vCPU ids follow that order.
    pub fn new(enabled: bool, cpu_ghz: f64, seed: u64, vms: &[(String, usize)]) -> Pmu {
        let mut vcpus = Vec::new();
        if enabled {
            for (name, n) in vms {
                let work = work_profile(&mut RngStream::new(seed, &format!("{name}/pmu")));
                for k in 0..*n {
                    vcpus.push(VcpuPmu {
                        instructions: 0.0,
                        branches: 0.0,
                        misses: 0.0,
                        work,
                        rng: RngStream::new(seed, &format!("{name}/vcpu{k}/pmu")),
                    });
                }
            }
        }
        Pmu { enabled, cpu_ghz, vcpus }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn counters(&self, v: VcpuId) -> PmuCounters {
        self.vcpus.get(v).map_or(PmuCounters::default(), |c| PmuCounters {
            instructions: c.instructions.round() as u64,
            branches: c.branches.round() as u64,
            branch_misses: c.misses.round() as u64,
        })
    }

    /// Count what `v` retired while its time buckets went from `before` to `after`.
    pub fn account(&mut self, v: VcpuId, before: &TimeBuckets, after: &TimeBuckets) {
        if !self.enabled {
            return;
        }
        let spin = (after.lock_spin + after.ipi_wait + after.barrier_spin + after.mutex_spin)
            - (before.lock_spin + before.ipi_wait + before.barrier_spin + before.mutex_spin);
        let work = after.useful - before.useful;
        let kernel = (after.irq + after.cache_refill) - (before.irq + before.cache_refill);
        let ghz = self.cpu_ghz;
        let c = &mut self.vcpus[v];
        let wp = c.work;
        for (ns, prof) in [(spin, SPIN), (work, wp), (kernel, KERNEL)] {
            if ns == 0 {
                continue;
            }
            let nb = c.rng.lognormal(1.0, NOISE_CV_BPI);
            let nm = c.rng.lognormal(1.0, NOISE_CV_BMPR);
            let (i, b, m) = synthesize(&prof, ns, ghz, nb, nm);
            c.instructions += i;
            c.branches += b;
            c.misses += m;
        }
    }
}

/// (instructions, branches, misses) retired in `ns` of activity with profile `p` at `ghz`, with
/// multiplicative noise on BPI and BMPR.
pub fn synthesize(p: &Profile, ns: Ns, ghz: f64, noise_bpi: f64, noise_bmpr: f64) -> (f64, f64, f64) {
    let instructions = ns as f64 * ghz * p.ipc;
    let branches = instructions * (p.bpi * noise_bpi).min(1.0);
    let misses = branches * (p.bmpr * noise_bmpr).min(1.0);
    (instructions, branches, misses)
}

impl World {
    /// Bring the counters of every running vCPU up to now (account their open interval) and
    /// publish them to the scheduler, as reading the PMU in `vcpu_acct` would. A no-op unless
    /// the scheduler reads the counters.
    pub(crate) fn pmu_refresh(&mut self) {
        if !self.pmu.enabled() {
            return;
        }
        for p in 0..self.pcpus.len() {
            if let Some(v) = self.pcpus[p].cur {
                self.advance(v);
                self.facts[v] = self.facts_of(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(spin: Ns, useful: Ns) -> TimeBuckets {
        TimeBuckets { barrier_spin: spin, useful, ..Default::default() }
    }

    #[test]
    fn spinning_shows_high_bpi_and_near_zero_misses_and_work_does_not() {
        let vms = vec![("a".to_string(), 2usize)];
        let mut pmu = Pmu::new(true, 2.5, 1, &vms);
        let z = TimeBuckets::default();
        pmu.account(0, &z, &buckets(1_000_000, 0));
        pmu.account(1, &z, &buckets(0, 1_000_000));
        let s = pmu.counters(0);
        let w = pmu.counters(1);
        // 1 ms of spinning at 2.5 GHz and IPC 7/15.5: 2.5e6 × 7 / 15.5 = 1 129 032 instructions.
        assert_eq!(s.instructions, 1_129_032);
        assert!((0.2..0.4).contains(&s.bpi()), "spin BPI {}", s.bpi());
        assert!(s.bmpr() < 0.002, "spin BMPR {}", s.bmpr());
        assert_eq!(w.instructions, 2_500_000);
        assert!(w.bpi() < 0.25 && w.bmpr() > 0.005, "work BPI {} BMPR {}", w.bpi(), w.bmpr());
        // Hypervisor time counts nothing.
        let before = pmu.counters(0);
        pmu.account(0, &buckets(1_000_000, 0), &TimeBuckets { barrier_spin: 1_000_000, hv: 5_000, ..Default::default() });
        assert_eq!(pmu.counters(0), before);
    }

    #[test]
    fn a_disabled_pmu_counts_nothing_and_draws_nothing() {
        let mut pmu = Pmu::new(false, 2.5, 1, &[("a".to_string(), 1)]);
        pmu.account(0, &TimeBuckets::default(), &buckets(1_000_000, 1_000_000));
        assert_eq!(pmu.counters(0), PmuCounters::default());
    }

    #[test]
    fn work_profiles_differ_between_vms_and_stay_in_range() {
        let a = work_profile(&mut RngStream::new(1, "vm1/pmu"));
        let b = work_profile(&mut RngStream::new(1, "vm2/pmu"));
        assert_ne!(a, b);
        for p in [a, b] {
            assert!(p.bpi >= WORK_BPI_RANGE.0 && p.bpi <= WORK_BPI_RANGE.1);
            assert!(p.bmpr >= WORK_BMPR_RANGE.0 && p.bmpr <= WORK_BMPR_RANGE.1);
        }
    }
}
