//! TLB pressure: the translations active in each core's second-level TLB, and the stall per
//! instruction of guest compute that follows from it (`host::tlb_pressure`).
//!
//! Models (seed 001 §4.1, Figure 8: the original Xen's "Cache miss rate of LLC increases by
//! 2.67x and that of TLB increases by 0.38x from 1-tile to 9-tile", both put on "larger
//! memory and cache footprint ... hierarchical cache and TLB cannot process efficiently"; §6,
//! Figure 19: CSRC's "6% reduction for LLC and 15% for TLB, resulting in lower CPI"):
//! - the TLB is per core, as the hardware has it: Nehalem's and Westmere's second-level
//!   unified TLB (STLB) holds 512 entries for 4 KiB pages only, 4-way, one per core, shared
//!   dynamically by the core's two SMT threads (D. Kanter, "Inside Nehalem", Real World
//!   Technologies 2008, p. 8; Westmere-EP is Nehalem-EP's 32 nm shrink with the same core
//!   TLBs). Its reach is `tlb_entries x 4` KiB. The host model has no SMT (host/mod.rs): a
//!   pCPU is one domain (`hv::footprint`, a domain per pCPU), its SMT siblings, where a
//!   scenario's pCPU stands for several of the seed's threads, inside it;
//! - the translations active on a pCPU, F, are the working sets of the threads that ran on
//!   it lately, in KiB (a thread's pages are its `working_set_kib / 4`, each a 4 KiB entry):
//!   the running thread's whole, a thread that stopped `age` ago weighted by
//!   exp(-age / `llc_window_ns`). The window is the LLC's: it stands for how long a stopped
//!   thread's entries outlive the others' work, the seed gives one miss number for the TLB
//!   (Figure 8's growth, taken by the stall ratio) and none to fit a second time constant;
//! - tagged entries: Xen 4.1 enables VPID on VMX by default (xen/arch/x86/hvm/vmx/vmcs.c
//!   `opt_vpid_enabled = 1`, boot option `vpid`), so a vCPU's entries survive its own VM
//!   exits, and it keeps its tag on its pCPU while the pCPU's generation stands
//!   (xen/arch/x86/hvm/asid.c `hvm_asid_handle_vmenter`: a valid `asid_generation` keeps the
//!   ASID). A vCPU that moves to another pCPU gets a fresh tag there (vmcs.c `vmx_do_resume`:
//!   on `active_cpu != smp_processor_id()` it calls `hvm_asid_flush_vcpu`, which zeroes its
//!   generation; read in stored versions of asid.c (2009-era, the 4.0/4.1 file) and vmcs.c
//!   (with nested VMX, 4.2-era)): its thread starts with no entries on its new pCPU, which
//!   the decayed structure gives (its entry leaves the old domain, its whole working set
//!   enters the new one on top of what is there);
//! - the flush at a full context switch, optional (`host.costs.tlb_walk_cycles` > 0; off by
//!   default, when a stopped thread's entries survive switches, decayed in time): in Xen of
//!   that era a full context switch invalidates every guest tag on the core
//!   (xen/arch/x86/domain.c `__context_switch` calls `write_ptbase(n)`, whose `write_cr3`
//!   calls `hvm_flush_guest_tlbs` -> `hvm_asid_flush_core`, `++core_asid_generation`, so
//!   every vCPU gets a fresh ASID at its next VM entry, `hvm_asid_handle_vmenter`; read in a
//!   stored 3.x-4.x-era flushtlb.c, asid.c of 2009 (the 4.0/4.1 file), hvm.h's
//!   `hvm_flush_guest_tlbs` and the 3.x/4.x domain.c), while the lazy switch to the idle vCPU
//!   and back to the same vCPU does not (`context_switch` skips `__context_switch`). Here a
//!   dispatch that is a full switch (`switch_is_lazy` false: every dispatch without
//!   `hypervisor.params.lazy_context_switch`) empties its pCPU's domain
//!   (`FootprintDomains::flush`, a generation per domain as Xen's), and so does the state
//!   save of a lazily held vCPU on the pCPU that held it (`lazy_sync_for`, a
//!   `__context_switch` to the idle vCPU). The tasklet's switch to the idle vCPU (charged a
//!   full switch without the lazy option) does not flush: Xen never runs `__context_switch`
//!   for it;
//! - the compulsory walks, with the flush only: a thread that starts on a pCPU where it holds
//!   no valid translations (flushed there, or it last ran on another pCPU) re-fills them, one
//!   page walk per page of its working set up to the TLB's entries,
//!   min(`working_set_kib` / 4, `tlb_entries`) x `tlb_walk_cycles` (`tlb_walks_ns`), charged
//!   as stalled guest time with its cache refill (`World::thread_refill`, the refill
//!   debt, at a dispatch and at a guest thread switch alike); a thread that never ran owes
//!   none, as for the cache refill. The power law keeps giving the capacity misses; after a
//!   flush the footprint is the running thread's working set alone;
//! - the stall: misses per instruction follow the power law of the entries a thread gets,
//!   `(F / reach)^tlb_miss_exponent`, each stalling alike, `tlb_stall_at_capacity_ratio` at
//!   F = reach. With EPT a miss is a two-dimensional walk (guest and EPT tables, up to 24
//!   memory references); its cost is inside the fitted ratio, as the LLC miss's is in
//!   `llc_stall_at_capacity_ratio`. The stall adds to guest compute's CPI factor at the same
//!   sample point as the LLC's (`World::cpi_sample`): 1 + LLC stall + TLB stall;
//! - totals: `tlb_miss_rate_rel`, the TLB stall per cycle of work (TLB misses per instruction
//!   counted in stall time, as `llc_miss_rate_rel` counts the LLC's), the flush's walks
//!   (`Pcpu::tlb_walk_ns`) added to the stall in its numerator; stall and walks are part of
//!   `llc_cpi_factor` (all of guest compute's cycles, refills included) and not of
//!   `llc_miss_rate_rel`; `tlb_flushes_per_pcpu_s` (`pcpus[].tlb_flushes`).
//!
//! Leaves out: the first-level TLBs, large pages (the STLB holds 4 KiB entries only; the
//! guests' working sets are taken as 4 KiB pages), the page-walk caches and the walk's own
//! cache misses (inside the ratio, and inside `tlb_walk_cycles`), without the flush option
//! the cold start's compulsory walks as a separate cost (a moved thread's are inside its
//! stall there, no refill time is charged), walks that a thread would not need because it
//! touches only part of its working set before it stops (each start re-fills it whole, as
//! the cache refill does), the hypervisor's own entries (untagged, kept by the guest flush:
//! hvm.h says `hvm_flush_guest_tlbs` does not flush Xen's entries), flushes by the guest (CR3 writes, INVLPG, shootdowns: the guest kernel's address-space switches, whose
//! cost `guest::mm` models apart), set conflicts, and the hypervisor: its costs do not scale
//! with the TLB stall (`World::hv_cost_ns` uses the LLC factor alone) because Xen maps its
//! image with 2 MiB superpages (xen/arch/x86/setup.c, `l2_xenmap`'s leaf superpage
//! mappings) which the STLB does not hold, and its walks are one-dimensional (no EPT).
//!
//! Tested: `sim::tests` (`more_distinct_threads_per_core_stall_more_on_the_tlb`,
//! `a_thread_on_another_core_of_the_socket_adds_nothing_to_a_cores_tlb`,
//! `the_tlb_model_off_changes_nothing`,
//! `a_full_switch_empties_the_pcpus_tlb_and_the_incoming_thread_pays_its_walks`,
//! `a_lazy_switch_back_to_the_loaded_vcpu_does_not_flush_the_tlb`,
//! `the_tlb_flush_off_changes_nothing`), `hv::footprint::tests` (a moved thread starts cold;
//! a flush empties its domain only), `scenario::validate` (`tlb_walk_cycles` without the
//! model).
//!
//! Sources: above; the stall ratio is fitted per seed (calibration.toml
//! `csrc.host.tlb_stall_at_capacity_ratio`), the exponent is the power law's (Hartstein et
//! al. 2006, `host/mod.rs` `tlb_miss_exponent`). The walk's cost has no source read for
//! Westmere with EPT (Bhargava et al., ASPLOS 2008, give the 2-D walk's up to 24 references,
//! not a Westmere cycle count): it stays 0 (off) until sourced or fitted.

use crate::engine::Ns;
use crate::sim::state::*;
use crate::sim::World;

impl World {
    pub(crate) fn tlb_enabled(&self) -> bool {
        self.costs.tlb_stall_at_capacity_ratio > 0.0 && self.costs.tlb_entries > 0
    }

    /// Whether a full context switch flushes the guest TLB entries (`tlb_walk_cycles` > 0).
    fn tlb_flush_enabled(&self) -> bool {
        self.costs.tlb_walk_cycles > 0 && self.tlb_enabled() && self.costs.llc_window_ns > 0
    }

    /// A full context switch (`__context_switch`) on pCPU `p` now: `write_cr3` ->
    /// `hvm_flush_guest_tlbs` gives the core a new ASID generation, so no guest translation
    /// held there survives. Nothing with the flush off.
    pub(crate) fn tlb_flush(&mut self, p: PcpuId) {
        if self.tlb_flush_enabled() {
            self.tlb.flush(p, self.q.now());
            self.pcpus[p].tlb_flushes += 1;
        }
    }

    /// The page walks thread `t` owes when it starts on pCPU `p` with no valid translations
    /// there (flushed, or it last ran elsewhere): one per page of its working set, at most
    /// the TLB's entries, each `tlb_walk_cycles`; charged as stalled guest time with its cache
    /// refill (`thread_refill`) and counted on `p` as paid (`Pcpu::tlb_walk_ns`). A thread that
    /// never ran owes nothing, as for the cache refill; 0 with the flush off.
    pub(crate) fn tlb_walks_ns(&self, t: ThreadId, p: PcpuId) -> Ns {
        if !self.tlb_flush_enabled() {
            return 0;
        }
        match self.threads[t].tlb_touch {
            Some(e) if !self.tlb.holds(e, p) => self.tlb_walks_all_ns(t),
            _ => 0,
        }
    }

    /// The page walks of thread `t`'s whole working set (at most the TLB's entries); 0 with
    /// the flush off.
    pub(crate) fn tlb_walks_all_ns(&self, t: ThreadId) -> Ns {
        if !self.tlb_flush_enabled() {
            return 0;
        }
        let walks = (self.threads[t].ws_kib as u64 / 4).min(self.costs.tlb_entries as u64);
        if walks == 0 { 0 } else { self.topo.cycles_to_ns(walks * self.costs.tlb_walk_cycles) }
    }

    /// Thread `t` ran on pCPU `p` until now: its translations are `p`'s, fresh.
    pub(crate) fn tlb_touch(&mut self, t: ThreadId, p: PcpuId) {
        if !self.tlb_enabled() || self.costs.llc_window_ns == 0 {
            return;
        }
        let (now, w) = (self.q.now(), self.costs.llc_window_ns);
        let th = &mut self.threads[t];
        th.tlb_touch = Some(self.tlb.touch(th.tlb_touch, th.ws_kib as f64, p, now, w));
    }

    /// The translations active on pCPU `p` now (KiB of 4 KiB pages): its running thread's
    /// working set whole, the others' decayed since they last ran there.
    pub(crate) fn tlb_footprint_kib(&mut self, p: PcpuId) -> f64 {
        let running = self.pcpu_cur[p].and_then(|u| self.vcpus[u].cur).map(|t| (self.threads[t].ws_kib as f64, self.threads[t].tlb_touch));
        self.tlb.footprint_kib(p, self.q.now(), self.costs.llc_window_ns, running)
    }
}
