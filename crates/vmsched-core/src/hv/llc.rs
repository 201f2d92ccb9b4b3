//! Shared-LLC pressure: the footprint active on each socket's last-level cache, and the cost
//! per instruction of guest compute that follows from it (`host::llc_pressure`).
//!
//! Models (seed 001 §4.1: "High cache miss rate was caused by larger memory and cache
//! footprint under server consolidation as VM number goes up ... the memory footprint
//! consumed by both VMs and hypervisor becomes greatly increased so that current hardware
//! resource like hierarchical cache and TLB cannot process efficiently"):
//! - the active footprint F of a socket is the working sets of the threads that ran on it
//!   lately: a running thread's whole, a thread that stopped `age` ago weighted by
//!   exp(-age / `llc_window_ns`) (it counts on the socket where it last ran). More load, more
//!   threads run within the window; more switches, more of them leave a recent footprint;
//! - a vCPU dispatched on a pCPU, or switching in a thread while it runs, samples its
//!   socket's F (the threads running there, its own included, and the decayed rest) and runs
//!   its guest compute at 1 / the CPI factor of `llc_pressure` until the next sample: work
//!   `w` takes `w x CPI factor` of time. Between samples a vCPU has one speed (the execution
//!   timer and the accounting agree);
//! - totals, as a processor's counters see guest compute (its cycles over its instructions,
//!   cache refills included: `metrics::results`): `llc_cpi_factor`, the cycles of guest
//!   compute and of the threads' cache refills (`host::refill_ns`, charged at each
//!   switch-in) per cycle of work without stall; `llc_miss_rate_rel`, the LLC misses per
//!   instruction counted in stall time: the LLC stall of compute plus the refills' part from
//!   memory, per cycle of work (every miss to memory taken to stall alike). Both grow with
//!   the footprint and with the switches that force refills.
//!
//! Leaves out: the hypervisor's own footprint and CPI (exit, switch and tasklet costs stay
//! fixed times), the TLB (seed Figure 8's other miss rate), interrupt handlers' and
//! refills' speed (fixed times), a thread's footprint on a socket other than where it last
//! ran (the cache-refill model, `host::refill_ns`, charges its cold start there), and the
//! footprint's effect on the refill itself.
//!
//! Sources: the power law of cache misses (Hartstein et al. 2006, `host/mod.rs`
//! `llc_miss_exponent`); the LLC size per socket (seed 001 §3: 12 MB shared L3 per socket);
//! the stall ratio and the window are fitted per seed (calibration.toml).

use crate::engine::Ns;
use crate::host::llc_pressure;
use crate::sim::state::*;
use crate::sim::World;

/// Per socket: the decayed footprint of the threads that stopped running there, as of `at`.
#[derive(Debug, Clone, Default)]
pub struct LlcSockets {
    decayed_kib: Vec<f64>,
    at: Vec<Ns>,
}

impl LlcSockets {
    pub fn new(sockets: usize) -> Self {
        LlcSockets { decayed_kib: vec![0.0; sockets], at: vec![0; sockets] }
    }
}

/// exp(-age / window); 0 with no window (only running threads count).
fn weight(age_ns: Ns, window_ns: Ns) -> f64 {
    if window_ns == 0 {
        0.0
    } else {
        (-(age_ns as f64) / window_ns as f64).exp()
    }
}

impl World {
    fn llc_enabled(&self) -> bool {
        self.costs.llc_stall_at_capacity_ratio > 0.0 && self.costs.llc_kib > 0
    }

    /// Bring socket `s`'s decayed footprint to now.
    fn llc_decay(&mut self, s: usize) {
        let now = self.q.now();
        let w = weight(now - self.llc.at[s], self.costs.llc_window_ns);
        self.llc.decayed_kib[s] *= w;
        self.llc.at[s] = now;
    }

    /// Thread `t` ran on pCPU `p` until now: its working set is the socket's, fresh.
    pub(crate) fn llc_touch(&mut self, t: ThreadId, p: PcpuId) {
        if !self.llc_enabled() || self.costs.llc_window_ns == 0 {
            return;
        }
        let now = self.q.now();
        let ws = self.threads[t].ws_kib as f64;
        if let Some((s0, since)) = self.threads[t].llc_touch {
            self.llc_decay(s0);
            let left = ws * weight(now - since, self.costs.llc_window_ns);
            self.llc.decayed_kib[s0] = (self.llc.decayed_kib[s0] - left).max(0.0);
        }
        let s = self.topo.socket_of(p) as usize;
        self.llc_decay(s);
        self.llc.decayed_kib[s] += ws;
        self.threads[t].llc_touch = Some((s, now));
    }

    /// The footprint active on socket `s` now: the running threads' working sets whole, the
    /// others' decayed since they last ran there.
    pub(crate) fn llc_footprint_kib(&mut self, s: usize) -> f64 {
        self.llc_decay(s);
        let now = self.q.now();
        let mut f = self.llc.decayed_kib[s];
        let per = self.topo.cores_per_socket as usize;
        for q in s * per..(s + 1) * per {
            let Some(t) = self.pcpu_cur[q].and_then(|u| self.vcpus[u].cur) else { continue };
            let ws = self.threads[t].ws_kib as f64;
            let counted = match self.threads[t].llc_touch {
                Some((s0, since)) if s0 == s => ws * weight(now - since, self.costs.llc_window_ns),
                _ => 0.0,
            };
            f += ws - counted;
        }
        f.max(0.0)
    }

    /// vCPU `v` is dispatched on pCPU `p`: its guest compute runs at its socket's pressure.
    pub(crate) fn llc_sample(&mut self, v: VcpuId, p: PcpuId) {
        if !self.llc_enabled() {
            return;
        }
        let f = self.llc_footprint_kib(self.topo.socket_of(p) as usize);
        self.vcpus[v].llc_cpi_factor = llc_pressure(&self.costs, f).1;
    }
}
