//! Shared-LLC pressure: the footprint active on each socket's last-level cache, and the cost
//! per instruction of guest compute that follows from it (`host::llc_pressure`).
//!
//! Models (seed 001 §4.1: "High cache miss rate was caused by larger memory and cache
//! footprint under server consolidation as VM number goes up ... the memory footprint
//! consumed by both VMs and hypervisor becomes greatly increased so that current hardware
//! resource like hierarchical cache and TLB cannot process efficiently"):
//! - the active footprint F of a socket is the working sets of the threads that ran on it
//!   lately (`hv::footprint`, a domain per socket): a running thread's whole, a thread that
//!   stopped `age` ago weighted by exp(-age / `llc_window_ns`) (it counts on the socket where
//!   it last ran). More load, more threads run within the window; more switches, more of
//!   them leave a recent footprint;
//! - a vCPU dispatched on a pCPU, or switching in a thread while it runs, samples its
//!   socket's F (the threads running there, its own included, and the decayed rest) and runs
//!   its guest compute at 1 / the CPI factor until the next sample: work `w` takes
//!   `w x CPI factor` of time. The factor is `llc_pressure`'s plus the TLB stall of the
//!   pCPU (`hv::tlb`, 0 when that model is off): one sample point for both. Between samples
//!   a vCPU has one speed (the execution timer and the accounting agree);
//! - totals, as a processor's counters see guest compute (its cycles over its instructions,
//!   cache refills included: `metrics::results`): `llc_cpi_factor`, the cycles of guest
//!   compute (LLC and TLB stall included) and of the threads' cache refills
//!   (`host::refill_ns`, owed at each switch-in, counted as paid: `World::pay_refill`) per
//!   cycle of work without stall;
//!   `llc_miss_rate_rel`, the LLC misses per instruction counted in stall time: the LLC stall
//!   of compute plus the refills' part from memory, per cycle of work (every miss to memory
//!   taken to stall alike). Both grow with the footprint and with the switches that force
//!   refills.
//!
//! - with `hv_costs_reference_cpi` (`World::hv_cost_ns`), the hypervisor's fixed costs (world
//!   switch, scheduler call, each exit's handling, the dpci tasklet) run at the CPI of their
//!   socket when charged, as guest compute does: a cost stated at the reference CPI takes
//!   `cost x CPI / reference`. The same factor as guest compute's LLC part, because seed 001
//!   measures one CPI for all the code a core runs (Figure 7, hypervisor and guests together)
//!   and puts the growth of the hypervisor's part with load on it (§6: "hypervisor part is
//!   caused by both PL and CPI"; §4.1: "the memory footprint consumed by both VMs and
//!   hypervisor"); it gives no separate CPI of the hypervisor's code. Off (fixed times) by
//!   default. The TLB stall is not in it (`hv::tlb`: the hypervisor's translations do not
//!   compete for the STLB's 4 KiB entries).
//!
//! Leaves out: the hypervisor's own footprint (its code and data add nothing to F), a CPI
//! of the hypervisor's code other than guest compute's, interrupt delivery and cache-line
//! transfers (`phys_ipi_ns`, the cross-socket vIPI lines: latencies, not instructions), the
//! background spin of seed 004 (a wall-clock delay), interrupt handlers' and
//! refills' speed (fixed times), a thread's footprint on a socket other than where it last
//! ran (the cache-refill model, `host::refill_ns`, charges its cold start there), and the
//! footprint's effect on the refill itself.
//!
//! Sources: the power law of cache misses (Hartstein et al. 2006, `host/mod.rs`
//! `llc_miss_exponent`); the LLC size per socket (seed 001 §3: 12 MB shared L3 per socket);
//! the stall ratio and the window are fitted per seed (calibration.toml).

use crate::engine::Ns;
use crate::host::{llc_pressure, tlb_pressure};
use crate::sim::state::*;
use crate::sim::World;

impl World {
    fn llc_enabled(&self) -> bool {
        self.costs.llc_stall_at_capacity_ratio > 0.0 && self.costs.llc_kib > 0
    }

    /// Thread `t` ran on pCPU `p` until now: its working set is the socket's, fresh.
    pub(crate) fn llc_touch(&mut self, t: ThreadId, p: PcpuId) {
        if !self.llc_enabled() || self.costs.llc_window_ns == 0 {
            return;
        }
        let (now, w) = (self.q.now(), self.costs.llc_window_ns);
        let s = self.topo.socket_of(p) as usize;
        let th = &mut self.threads[t];
        th.llc_touch = Some(self.llc.touch(th.llc_touch, th.ws_kib as f64, s, now, w));
    }

    /// The footprint active on socket `s` now: the running threads' working sets whole, the
    /// others' decayed since they last ran there.
    pub(crate) fn llc_footprint_kib(&mut self, s: usize) -> f64 {
        let per = self.topo.cores_per_socket as usize;
        let (pcpu_cur, vcpus, threads) = (&self.pcpu_cur, &self.vcpus, &self.threads);
        let running = (s * per..(s + 1) * per)
            .filter_map(|q| pcpu_cur[q].and_then(|u| vcpus[u].cur))
            .map(|t| (threads[t].ws_kib as f64, threads[t].llc_touch));
        self.llc.footprint_kib(s, self.q.now(), self.costs.llc_window_ns, running)
    }

    /// A hypervisor cost of `ns` at `host.costs.hv_costs_reference_cpi` charged on pCPU `p`
    /// now (dithered first when `hv_cost_jitter_pct` is set, `hv::jitter`): `ns x CPI /
    /// reference`, CPI being the socket's pressure factor (`llc_pressure`); `ns` unchanged
    /// when the costs are fixed times (reference 0, the default). Counts the
    /// CPI it was charged at (`totals.hv_llc_cpi_factor`), and its work at CPI factor 1 (ns /
    /// reference; a fixed time as it is): the instructions it retires, in the unit of guest
    /// compute's work (`totals.hv_work_ns`).
    pub(crate) fn hv_cost_ns(&mut self, p: PcpuId, ns: Ns) -> Ns {
        let ns = self.hv_jitter.apply(p, ns);
        let reference = self.costs.hv_costs_reference_cpi;
        let Some(cpi) = (ns > 0).then(|| self.hv_cost_cpi(p)).flatten() else {
            self.pcpus[p].hv_work_ns += ns as f64;
            return ns;
        };
        let pc = &mut self.pcpus[p];
        pc.hv_cost_ref_ns += ns as f64;
        pc.hv_cost_cpi_ns += ns as f64 * cpi;
        pc.hv_work_ns += ns as f64 / reference;
        (ns as f64 * cpi / reference).round() as Ns
    }

    /// How long a hypervisor cost of `ns` at the reference CPI takes on pCPU `p` now, as
    /// `hv_cost_ns` reckons it, without charging it (for a time window inside work charged
    /// otherwise, e.g. the scheduling tail, `World::schedule`).
    pub(crate) fn hv_time_ns(&mut self, p: PcpuId, ns: Ns) -> Ns {
        let reference = self.costs.hv_costs_reference_cpi;
        self.hv_cost_cpi(p).map_or(ns, |cpi| (ns as f64 * cpi / reference).round() as Ns)
    }

    /// The socket's CPI factor (`llc_pressure`) hypervisor costs on `p` are charged at now;
    /// None when they are fixed times (reference 0, or no LLC model).
    fn hv_cost_cpi(&mut self, p: PcpuId) -> Option<f64> {
        if self.costs.hv_costs_reference_cpi <= 0.0 || !self.llc_enabled() {
            return None;
        }
        let f = self.llc_footprint_kib(self.topo.socket_of(p) as usize);
        Some(llc_pressure(&self.costs, f).1)
    }

    /// vCPU `v` is dispatched on pCPU `p` (or switches a thread in there): its guest compute
    /// runs at its socket's LLC pressure plus its pCPU's TLB stall (`hv::tlb`) until the next
    /// sample. Nothing changes with both models off.
    pub(crate) fn cpi_sample(&mut self, v: VcpuId, p: PcpuId) {
        let (llc, tlb) = (self.llc_enabled(), self.tlb_enabled());
        if !llc && !tlb {
            return;
        }
        let llc_factor = if llc {
            let f = self.llc_footprint_kib(self.topo.socket_of(p) as usize);
            llc_pressure(&self.costs, f).1
        } else {
            1.0
        };
        let tlb_stall = if tlb {
            let f = self.tlb_footprint_kib(p);
            tlb_pressure(&self.costs, f).1
        } else {
            0.0
        };
        let vc = &mut self.vcpus[v];
        vc.cpi_factor = llc_factor + tlb_stall;
        vc.tlb_stall_ratio = tlb_stall;
    }
}
