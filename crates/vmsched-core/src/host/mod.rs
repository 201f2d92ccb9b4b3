//! Host model: pCPUs in sockets and NUMA nodes, a last-level cache per socket, and the costs
//! the hardware and hypervisor impose (exits, world switches, IPIs, cache refill, remote memory).
//!
//! Models: topology as sockets x cores (no SMT); one LLC per socket; NUMA distances in ACPI
//! SLIT units (10 = local); exit costs as fixed times per exit reason (optionally dithered,
//! `hv_cost_jitter_pct`, `hv::jitter`); a cache-warmth model in
//! which a vCPU's working set is evicted by the time other vCPUs run on the pCPU it left.
//! Optionally (`private_cache_kib` > 0, a host whose processor is sourced) a two-level
//! hierarchy for moves within a socket: the shared, inclusive LLC keeps what was not evicted,
//! and only the part the old core's private cache held is re-fetched, from the LLC at
//! `llc_refill_ns_per_mib`; without it a flat `same_socket_warmth` applies. Eviction stays one
//! time constant for the whole working set (foreign work on a core evicts its private part
//! long before the LLC's: not modelled), and a move across sockets refills everything at the
//! memory rate times `cross_socket_refill_factor`, the remote/local memory latency ratio (the
//! remote LLC's copy is not modelled). By default the factor goes by the move: every move
//! across sockets pays the remote rate once, every other refill the local one. With
//! `refill_by_memory_node` it goes by where the memory is: whatever part is refilled from DRAM
//! (after any move, or after eviction on the same pCPU) pays the remote rate when the pCPU's
//! node is not the VM's `memory_node`, the local rate when it is.
//! Optionally (`llc_stall_at_capacity_ratio` > 0) shared-LLC pressure: guest compute on a
//! socket costs more cycles per instruction as the footprint active on its LLC grows
//! (`llc_pressure`, the power law of cache misses; the footprint is kept by `hv::llc`).
//! Optionally (`tlb_stall_at_capacity_ratio` > 0) TLB pressure: guest compute on a pCPU
//! stalls more on TLB misses as the translations active on its core's second-level TLB grow
//! (`tlb_pressure`, the same power law; the footprint is kept by `hv::tlb`, per pCPU).
//! Leaves out: SMT siblings (a pCPU is a core; a core's threads share its TLB, so a pCPU
//! standing for several hardware threads holds them in one TLB domain), frequency scaling,
//! memory-bandwidth contention between pCPUs, per-instruction timing other than the LLC and
//! TLB stalls. Every cost is a named parameter; defaults and sources are listed in
//! `docs/model.md` and next to each field.

use serde::{Deserialize, Serialize};

use crate::engine::Ns;

/// Cost parameters. All times in nanoseconds unless the name says otherwise.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostParams {
    /// Hypervisor context switch from one vCPU to another (scheduler + state save/restore).
    /// Source: seed 001 Table 1 (baseline Xen at peak): context switching is 7.28% of CPU at
    /// 26,551 switches/s per core, i.e. 2.74 us per switch, as if every switch were full. With
    /// Xen's lazy switch (`hv::lazy_switch`) only switches that load another vCPU's state cost
    /// this; seed 001's reproduction fits it to the same share (calibration.toml
    /// `csrc.host.world_switch_ns`).
    pub world_switch_ns: Ns,
    /// A scheduler invocation that keeps the current vCPU (no switch). Estimate: the
    /// `csched_schedule` path without the context switch, about a fifth of a full switch.
    pub sched_call_ns: Ns,
    /// Bare VM exit + entry round trip. Source: seed 004 Table 1, KVM vmmcall 2165 cycles
    /// (about 0.9 us at 2.4 GHz).
    pub exit_hypercall_ns: Ns,
    /// Pause-loop exit incl. the spin handler (`kvm_vcpu_on_spin` scan). Estimate: round trip
    /// plus a scan of the VM's vCPUs.
    pub exit_ple_ns: Ns,
    /// HLT exit and the block path. Estimate: round trip plus the block bookkeeping.
    pub exit_hlt_ns: Ns,
    /// External-interrupt exit (host timer, device interrupt) and virtual-interrupt injection.
    pub exit_ext_intr_ns: Ns,
    /// Guest IPI: APIC ICR write exit on the sender and the injection path.
    pub exit_ipi_ns: Ns,
    /// I/O-instruction exit: to the device model in user space (an emulated device's port or
    /// MMIO access, `io` op without pass-through), or a port the hypervisor emulates itself
    /// (`port_io` op). Estimate (the device-model round trip); seed 001's reproduction fits
    /// it to Figure 9's I/O-instruction share (calibration.toml `csrc.host.exit_io_ns`).
    pub exit_io_ns: Ns,
    /// The guest's EOI write at the end of each virtual interrupt it handles (device
    /// interrupts, virtual IPIs, timer ticks), where the processor has no APIC virtualisation:
    /// the write to the xAPIC page is an APIC-access exit that the hypervisor emulates (Xen
    /// 4.1: `vmx_vmexit_handler`, `EXIT_REASON_APIC_ACCESS` → `handle_mmio` → `vlapic_write`
    /// → `vlapic_EOI_set`; seed 001 §4.2 b: "register access operations, such as EOI and ICR,
    /// are emulated by hypervisor", and EOI accounts for most of them under SR-IOV). 0
    /// (default) = not modelled: the EOI costs nothing and no exit is counted, as on hosts
    /// with APICv or a paravirtual EOI. No source gives the emulation's cost: seed 001's host
    /// fits it (calibration.toml `csrc.host.exit_apic_eoi_ns`, Figure 9's APIC-access share),
    /// with the bare exit round trip `exit_hypercall_ns` as its floor.
    pub exit_apic_eoi_ns: Ns,
    /// Physical IPI delivery latency between pCPUs (tickle, kick). Estimate.
    pub phys_ipi_ns: Ns,
    /// Exit latency of the C-state an idle pCPU waits in (`hv::cstate`): an event-check IPI,
    /// a device interrupt or a state-flush IPI that reaches a pCPU with nothing to run is
    /// handled this much later. 0 (default) = not modelled: an idle pCPU answers at once, and
    /// hosts calibrated without it do not move. Seed 001's host (Xeon X5680, Westmere-EP):
    /// 3 000, C1's exit latency in Linux intel_idle's Nehalem table (drivers/idle/intel_idle.c
    /// `nehalem_cstates`: C1 3 us, C1E 10, C3 20, C6 200; Westmere-EP, model 0x2C, uses it),
    /// the shallowest state Xen's idle loop enters (HLT / MWAIT C1).
    pub idle_exit_latency_ns: Ns,
    /// Guest function-call IPI handler on the target vCPU (entry, TLB flush, ack). Estimate.
    pub ipi_handler_ns: Ns,
    /// Guest device-interrupt handler (top half). Estimate.
    pub irq_handler_ns: Ns,
    /// The pass-through interrupt tasklet (`hvm_dirq_assist`: look up the guest interrupt of
    /// the pirq, assert the virtual MSI/INTx, kick the target vCPU). Estimate: the seed gives
    /// no per-interrupt figure; a short hypervisor path of the size of an exit handler.
    pub dpci_tasklet_ns: Ns,
    /// Lock hand-off: the cache-line transfer from releaser to next owner. Estimate.
    pub lock_handoff_ns: Ns,
    /// Ticket spinlock release: one polling waiter's re-read of the invalidated lock line when
    /// it runs on the releaser's socket, in cycles of `cpu_ghz`; the hand-off grows by half the
    /// polling waiters' re-reads (`guest::ticket`, Boyd-Wickizer et al. 2012 §4: `s + c·k/2`).
    /// Also each cache line of a message's socket buffer moved between pCPUs (`guest::channel`).
    /// 0 = not modelled. Source: Levinthal, Intel Core i7 / Xeon 5500 Performance Analysis
    /// Guide (2009) p. 22: L3 hit on a line modified in another core, ~75 cycles (40 ns at
    /// seed 000's 1.86 GHz Xeon E7-4807).
    pub ticket_transfer_cycles: u64,
    /// As `ticket_transfer_cycles` for a waiter on another socket: a cache-to-cache transfer
    /// across the socket interconnect (not a refill from memory: `cross_socket_refill_factor`).
    /// Source: the same table's remote L3 access, ~100-300 cycles; its middle, 200 (108 ns at
    /// 1.86 GHz). Seed 004's host: 75 + 110 (reproduce/vmkit.py: the Multikernel's extra
    /// latency of a line between sockets over one sharing an L3).
    pub ticket_transfer_remote_cycles: u64,
    /// Coherence misses of one operation on a pipe or socket whose shared state (queue lock
    /// and list, wait queue, the writer's buffer accounting, the woken reader's runqueue) was
    /// last written on another pCPU (`guest::channel`). 0 = not modelled. The seed's host:
    /// fitted to native Linux's hackbench with affinity (seed 004 Table 3; calibration.toml
    /// `vmkit.host.channel_transfer_ns`).
    pub channel_transfer_ns: Ns,
    /// Time to re-fetch one MiB of working set from memory (about 10 GB/s per core). Estimate.
    /// Seed 001's host (scenarios/consolidation-specvirt.toml): 134 000, a core's 10 L1D line
    /// fill buffers each holding one miss for the local latency, 40 cycles + 67 ns = 82 ns
    /// (7-cpu.com/cpu/Westmere.html, X5650): 16 384 lines x 82 ns / 10.
    pub cache_refill_ns_per_mib: Ns,
    /// Time constant with which other vCPUs' run time evicts a vCPU's working set. Estimate.
    pub cache_evict_tau_ns: Ns,
    /// Fraction of a working set still warm after a move within the socket (LLC kept,
    /// private L1/L2 lost). Estimate; not used when `private_cache_kib` is set.
    pub same_socket_warmth: f64,
    /// A core's private cache (L2), which a move to another core of the socket loses while
    /// the socket's shared, inclusive LLC keeps the working set; 0 = not modelled (a flat
    /// `same_socket_warmth` instead). Default 0: no source for a generic host. Seed 001's
    /// host (Xeon 5680, Westmere-EP, scenarios/consolidation-specvirt.toml): 256 KiB L2 per
    /// core (32 KiB L1d left out, within L2's size), 12 MB L3 shared by the socket's 6 cores
    /// (seed 001 §3; 7-cpu.com/cpu/Westmere.html, measured on the same die, Xeon X5650; HP's
    /// Xeon 5500 technology brief: the L3 is inclusive of every core's L1 and L2).
    pub private_cache_kib: u32,
    /// Time to move one MiB from the socket's LLC into a core's private cache (used with
    /// `private_cache_kib`). Default 0 (off). Seed 001's host: 32 000, from 7-cpu.com's
    /// Westmere page: L3 -> L1 parallel random read, 5.2 cycles per 64-byte line on a
    /// 2.666 GHz X5650 = 1.95 ns per line (the L3 is clocked with the uncore, 2.66 GHz on the
    /// X56x0 parts, so the time per line carries over to the 3.33 GHz X5680); 16 384 lines.
    pub llc_refill_ns_per_mib: Ns,
    /// Refill from memory after a move across sockets costs this much more than from the
    /// socket's own memory: the remote/local DRAM latency ratio (a core's misses in flight are
    /// bounded by its line fill buffers, so its refill time per MiB scales with the latency of
    /// one miss). Also scales a queue operation's cross-core transfer across sockets
    /// (`guest::channel`: a cache-to-cache quantity, kept on this factor because only seed
    /// 004's host has that cost and no clean line-transfer ratio; docs/model.md). Default 1.3: no source (an estimate, kept so hosts that do not set
    /// it do not move). Sourced per host in its scenario: seed 001's Xeon 5680 (Westmere-EP),
    /// 1.46 (7-cpu.com/cpu/Westmere.html, X5650, same die: RAM latency 40 cycles + 67 ns local,
    /// 40 cycles + 105 ns from another CPU's memory, at 2.666 GHz: 82 and 120 ns); seed 003's
    /// Xeon 5405, 1.0 (one front-side bus, one memory for all dies).
    pub cross_socket_refill_factor: f64,
    /// Charge `cross_socket_refill_factor` by the node that holds the VM's memory
    /// (`vms[].memory_node`) rather than by the move: a refill from DRAM is remote when the
    /// pCPU it happens on is on another node than the memory, whichever pCPU the vCPU ran on
    /// before (a line's latency is the memory controller's distance: 7-cpu.com's Westmere page
    /// gives RAM "connected to this CPU" 67 ns, "connected to another CPU" 105 ns, whatever
    /// ran where). Default off: hosts calibrated with the by-move charge do not move. Seed
    /// 001's host sets it (scenarios/consolidation-specvirt.toml, with each VM's node as Xen
    /// 4.1 places it).
    pub refill_by_memory_node: bool,
    /// Charge the extra latency of a cache line crossing sockets on virtual IPIs (`hv::xsocket`):
    /// `ticket_transfer_remote_cycles - ticket_transfer_cycles`, the same hardware quantity the
    /// ticket lock and a message's socket buffer pay (a line read from a cache on the other
    /// socket rather than from one on this socket). Default off, so hosts calibrated without
    /// it do not move. Seed 004's host (reproduce/vmkit.py) and seed 001's
    /// (scenarios/consolidation-specvirt.toml) set it.
    pub cross_socket_vipi_lines: bool,
    /// Slowdown of memory-bound work per unit of (SLIT distance / 10 - 1).
    pub numa_slowdown_per_distance: f64,
    /// Size of each socket's last-level cache; a vCPU keeps at most its core's share
    /// (`llc_kib / cores_per_socket`) warm, so only that much is refilled after a move. 0 = no
    /// limit (any working set fits). Seed 003 §5.1 (Xeon 5405: two 6 MB L2 per quad-core
    /// package) gives 12288 per socket.
    pub llc_kib: u32,
    /// Shared-LLC pressure on guest compute (`llc_pressure`, `hv::llc`): cycles stalled on
    /// LLC misses per cycle of work when the footprint active on the socket's LLC equals
    /// `llc_kib`. The cost of an instruction then grows with the active footprint F as
    /// `1 + llc_stall_at_capacity_ratio x (F / llc_kib)^llc_miss_exponent`. 0 = not modelled
    /// (default; needs `llc_kib`). No source gives it for a host: fitted per seed (seed 001:
    /// calibration.toml `csrc.host.llc_stall_at_capacity_ratio`, to the original Xen's CPI
    /// growth with load, seed 001 §4.1 Figure 7).
    pub llc_stall_at_capacity_ratio: f64,
    /// The window over which a thread that stopped running still occupies the socket's LLC:
    /// its working set counts in the active footprint with weight exp(-age / window) after
    /// it last ran there (running threads count whole). 0 = only the running threads. Fitted
    /// with the stall ratio (seed 001: to the original's LLC miss-rate growth, Figure 8).
    pub llc_window_ns: Ns,
    /// Exponent of the power law of cache misses: a workload's miss rate varies with the
    /// cache it gets as C^-alpha (Hartstein, Srinivasan, Puzak, Emma, "Cache miss behavior: is
    /// it sqrt 2?", Computing Frontiers 2006: alpha between 0.3 and 0.7, about 1/2 for large
    /// workloads). With the LLC shared in proportion to the footprints, a thread's share is
    /// `llc_kib x ws / F`, so its miss rate per instruction grows as (F / llc_kib)^alpha.
    pub llc_miss_exponent: f64,
    /// Hypervisor costs grow with the CPI of the socket they run on (`hv::llc`
    /// `World::hv_cost_ns`): when > 0, each fixed hypervisor cost (`world_switch_ns`,
    /// `sched_call_ns`, every exit's cost `exit_*_ns`, `dpci_tasklet_ns`) is the time it takes
    /// at this CPI, and an event pays `cost x CPI / hv_costs_reference_cpi`, CPI being the
    /// socket's `llc_pressure` factor when the event is charged (cycles per cycle of work
    /// without stall, the unit of guest compute's factor: the hypervisor's code sees the same
    /// stall as guest compute on the shared LLC). A cost measured or fitted at a load keeps its
    /// value there when this is the CPI its events saw at that load
    /// (`totals.hv_llc_cpi_factor`). 0 = fixed times (default). Needs
    /// `llc_stall_at_capacity_ratio`. Seed 001 §6: "CPU utilization reduction of guest part is
    /// primarily caused by the lower CPI and hypervisor part is caused by both PL and CPI";
    /// §4.1 and Figures 6-7: the hypervisor's part grows with load as the CPI does.
    pub hv_costs_reference_cpi: f64,
    /// Entries of a core's second-level TLB, each a 4 KiB page (`tlb_pressure`, `hv::tlb`):
    /// its reach is `tlb_entries x 4` KiB. Default 512: Nehalem's and Westmere's STLB, 512
    /// entries for 4 KiB pages, 4-way, per core, shared by its two SMT threads (D. Kanter,
    /// "Inside Nehalem", Real World Technologies 2008, p. 8; Westmere-EP, seed 001's Xeon
    /// 5680, is Nehalem-EP's 32 nm shrink). Used only with `tlb_stall_at_capacity_ratio`.
    pub tlb_entries: u32,
    /// TLB pressure on guest compute (`tlb_pressure`, `hv::tlb`): stall cycles on TLB misses
    /// (with EPT, two-dimensional walks) per cycle of work when the translations active on a
    /// pCPU equal the TLB's reach. It adds to the LLC's in guest compute's CPI factor:
    /// `1 + LLC stall + tlb_stall_at_capacity_ratio x (F / reach)^tlb_miss_exponent`, F the
    /// working sets (KiB) of the threads that ran on the pCPU lately (weighted with
    /// `llc_window_ns`, as the LLC's). 0 = not modelled (default). No source gives it for a
    /// host: fitted per seed (seed 001: calibration.toml
    /// `csrc.host.tlb_stall_at_capacity_ratio`, to the original Xen's growths with load,
    /// Figures 7-8).
    pub tlb_stall_at_capacity_ratio: f64,
    /// Exponent of the power law of TLB misses, as `llc_miss_exponent` (Hartstein et al.
    /// 2006: miss rate ∝ capacity^-alpha, alpha 0.3-0.7, about 1/2; no TLB-specific source
    /// found, so the same law and default).
    pub tlb_miss_exponent: f64,
    /// Cycles of one TLB miss's page walk when a thread re-fills its translations after a
    /// TLB flush (`hv::tlb`; with EPT a two-dimensional walk, up to 24 memory references for
    /// 4-level guest and EPT tables: Bhargava et al., ASPLOS 2008). When > 0, a full context
    /// switch on a pCPU flushes its guest TLB entries (Xen 4.1 `__context_switch` ->
    /// `write_ptbase` -> `write_cr3` -> `hvm_flush_guest_tlbs`, a new ASID generation), and a
    /// thread that starts on a pCPU without valid translations there pays
    /// min(`working_set_kib` / 4, `tlb_entries`) walks as stalled guest time. 0 = no flush
    /// (default). No measured cost per walk was found for Westmere with EPT: to be sourced or
    /// fitted before use. Needs `tlb_stall_at_capacity_ratio` and `llc_window_ns`.
    pub tlb_walk_cycles: u64,
    /// Extra time of one guest TLB miss under the hypervisor's nested paging (a
    /// two-dimensional walk through the guest's and the host's page tables) over the same
    /// miss on native hardware, ns. Charged for the walks a guest address-space switch forces
    /// (`guest::mm`: the CR3 load of 2.6.32's `switch_mm` empties the vCPU's TLB of the old
    /// process's user entries, and the incoming thread re-walks min(`working_set_kib` / 4,
    /// `tlb_entries`) pages) as stalled guest time with its refill. 0 = not modelled
    /// (default; a native run's walks are inside its work). Seed 004 §2.3 and §7.3.2 name the
    /// cost; its Table 4 gives 67 ns for VMkit (the derivation is in docs/model.md's costs
    /// table). No reproduction sets it: rule AC of session 49 was not adopted (§4.5 there).
    pub nested_walk_extra_ns: Ns,
    /// Dithering of hypervisor costs (`hv::jitter`): each hypervisor path charged on a pCPU
    /// takes its nominal time times a factor uniform in [1 - pct/100, 1 + pct/100], mean kept.
    /// 0 = every cost a constant (default: hosts calibrated without it do not move). Against
    /// phase locks of constant costs that a real host leaves (Floyd and Jacobson 1992; the
    /// fixed-PLE-window freeze in docs/scenarios.md); real exit times vary far more
    /// (SystemTap's kvm_service_time.stp example: per-reason min, mean and max many-fold apart).
    /// Must lie in [0, 100).
    pub hv_cost_jitter_pct: f64,
    /// Heavy-tailed spread of hypervisor costs (`hv::jitter`), instead of the band above: each
    /// cost takes its nominal time times a log-normal factor of mean 1 and this coefficient of
    /// variation. A busy KVM host's exit times spread by 0.2-0.75 (perf kvm stat reports;
    /// docs/calibration.md, "Timing noise and phase locks"). 0 = off (default). At most 10; not together
    /// with `hv_cost_jitter_pct`.
    pub hv_cost_cv: f64,
}

impl Default for CostParams {
    fn default() -> Self {
        CostParams {
            world_switch_ns: 2_740,
            sched_call_ns: 500,
            exit_hypercall_ns: 900,
            exit_ple_ns: 1_500,
            exit_hlt_ns: 1_200,
            exit_ext_intr_ns: 1_500,
            exit_ipi_ns: 1_500,
            exit_io_ns: 8_000,
            exit_apic_eoi_ns: 0,
            phys_ipi_ns: 1_000,
            idle_exit_latency_ns: 0,
            ipi_handler_ns: 1_000,
            irq_handler_ns: 2_000,
            dpci_tasklet_ns: 1_000,
            lock_handoff_ns: 100,
            ticket_transfer_cycles: 75,
            ticket_transfer_remote_cycles: 200,
            channel_transfer_ns: 0,
            cache_refill_ns_per_mib: 100_000,
            cache_evict_tau_ns: 3_000_000,
            same_socket_warmth: 0.6,
            private_cache_kib: 0,
            llc_refill_ns_per_mib: 0,
            cross_socket_refill_factor: 1.3,
            refill_by_memory_node: false,
            cross_socket_vipi_lines: false,
            numa_slowdown_per_distance: 1.0,
            llc_kib: 0,
            llc_stall_at_capacity_ratio: 0.0,
            llc_window_ns: 0,
            llc_miss_exponent: 0.5,
            hv_costs_reference_cpi: 0.0,
            tlb_entries: 512,
            tlb_stall_at_capacity_ratio: 0.0,
            tlb_miss_exponent: 0.5,
            tlb_walk_cycles: 0,
            nested_walk_extra_ns: 0,
            hv_cost_jitter_pct: 0.0,
            hv_cost_cv: 0.0,
        }
    }
}

/// Exit reasons, for per-reason counts and costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExitReason {
    Ple,
    Hlt,
    ExtIntr,
    Ipi,
    Io,
    Hypercall,
    /// The EOI write of a virtual interrupt (an APIC-access exit; `exit_apic_eoi_ns`).
    ApicEoi,
}

impl ExitReason {
    pub const ALL: [ExitReason; 7] = [
        ExitReason::Ple,
        ExitReason::Hlt,
        ExitReason::ExtIntr,
        ExitReason::Ipi,
        ExitReason::Io,
        ExitReason::Hypercall,
        ExitReason::ApicEoi,
    ];
    /// Slots of a per-exit table with one more for time outside any VM exit
    /// (`Pcpu::hv_by_exit_ns`).
    pub const SLOTS: usize = Self::ALL.len() + 1;
    /// The slot of `exit` in such a table (`None`: no VM exit).
    pub fn slot(exit: Option<ExitReason>) -> usize {
        exit.map_or(Self::ALL.len(), |r| r.index())
    }
    pub fn name(self) -> &'static str {
        match self {
            ExitReason::Ple => "ple",
            ExitReason::Hlt => "hlt",
            ExitReason::ExtIntr => "ext_intr",
            ExitReason::Ipi => "ipi",
            ExitReason::Io => "io",
            ExitReason::Hypercall => "hypercall",
            ExitReason::ApicEoi => "apic_eoi",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

impl CostParams {
    /// Cycles of one cache line moved from a cache of another pCPU, on this socket or across
    /// (`guest::ticket`, `guest::channel`).
    pub fn line_transfer_cycles(&self, same_socket: bool) -> u64 {
        if same_socket {
            self.ticket_transfer_cycles
        } else {
            self.ticket_transfer_remote_cycles
        }
    }

    /// The extra cycles of one cache line moved between pCPUs of different sockets over one
    /// moved within a socket (`hv::xsocket`); 0 unless `cross_socket_vipi_lines`.
    pub fn cross_socket_line_cycles(&self) -> u64 {
        if self.cross_socket_vipi_lines {
            self.line_transfer_cycles(false).saturating_sub(self.line_transfer_cycles(true))
        } else {
            0
        }
    }

    pub fn exit_ns(&self, r: ExitReason) -> Ns {
        match r {
            ExitReason::Ple => self.exit_ple_ns,
            ExitReason::Hlt => self.exit_hlt_ns,
            ExitReason::ExtIntr => self.exit_ext_intr_ns,
            ExitReason::Ipi => self.exit_ipi_ns,
            ExitReason::Io => self.exit_io_ns,
            ExitReason::Hypercall => self.exit_hypercall_ns,
            ExitReason::ApicEoi => self.exit_apic_eoi_ns,
        }
    }
}

/// Host topology: pCPU i sits in socket i / cores_per_socket.
#[derive(Debug, Clone)]
pub struct Topology {
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub numa_nodes: u32,
    /// SLIT distances, numa_nodes x numa_nodes.
    pub distance: Vec<Vec<u32>>,
    pub cpu_ghz: f64,
}

impl Topology {
    pub fn new(sockets: u32, cores_per_socket: u32, numa_nodes: Option<u32>, distance: Option<Vec<Vec<u32>>>, cpu_ghz: f64) -> Self {
        let nodes = numa_nodes.unwrap_or(sockets).max(1);
        let distance = distance.unwrap_or_else(|| {
            (0..nodes).map(|i| (0..nodes).map(|j| if i == j { 10 } else { 21 }).collect()).collect()
        });
        Topology { sockets, cores_per_socket, numa_nodes: nodes, distance, cpu_ghz }
    }
    pub fn n_pcpus(&self) -> usize {
        (self.sockets * self.cores_per_socket) as usize
    }
    pub fn socket_of(&self, pcpu: usize) -> u32 {
        pcpu as u32 / self.cores_per_socket
    }
    pub fn node_of(&self, pcpu: usize) -> u32 {
        let per_node = (self.sockets / self.numa_nodes).max(1);
        (self.socket_of(pcpu) / per_node).min(self.numa_nodes - 1)
    }
    pub fn cycles_to_ns(&self, cycles: u64) -> Ns {
        ((cycles as f64) / self.cpu_ghz).round().max(1.0) as Ns
    }
    /// Speed of memory-bound work on `pcpu` with memory on `mem_node`: 1 / (1 + f*(d/10-1)*k).
    pub fn mem_speed(&self, costs: &CostParams, pcpu: usize, mem_node: u32, mem_fraction: f64) -> f64 {
        if mem_fraction <= 0.0 {
            return 1.0;
        }
        let d = self.distance[self.node_of(pcpu) as usize][mem_node.min(self.numa_nodes - 1) as usize] as f64;
        1.0 / (1.0 + mem_fraction * (d / 10.0 - 1.0).max(0.0) * costs.numa_slowdown_per_distance)
    }
}

/// Warm fraction of a working set when a vCPU resumes on `to` after leaving `from`, while
/// `foreign_ns` of other work ran on `from` since it left. With `private_cache_kib`, a move
/// within the socket keeps in the shared LLC all that was not evicted (`refill_ns` charges
/// the private part's re-fetch from the LLC).
pub fn cache_warmth(topo: &Topology, costs: &CostParams, from: usize, to: usize, foreign_ns: Ns) -> f64 {
    let kept = (-(foreign_ns as f64) / costs.cache_evict_tau_ns.max(1) as f64).exp();
    if from == to {
        kept
    } else if topo.socket_of(from) == topo.socket_of(to) {
        if costs.private_cache_kib > 0 {
            kept
        } else {
            costs.same_socket_warmth * kept
        }
    } else {
        0.0
    }
}

/// Shared-LLC pressure on a socket whose LLC holds an active footprint of `footprint_kib`
/// (`hv::llc` sums it over the threads that ran there lately): (the LLC misses per instruction
/// relative to a footprint the size of the LLC, the cycles per instruction relative to no
/// misses). Misses follow the power law of cache misses with the LLC shared in proportion to
/// the footprints (`llc_miss_exponent`); each miss stalls for a fixed time, so the stall per
/// instruction is proportional to the miss rate (`llc_stall_at_capacity_ratio` at F = LLC).
/// (0, 1) when the model is off.
pub fn llc_pressure(costs: &CostParams, footprint_kib: f64) -> (f64, f64) {
    if costs.llc_stall_at_capacity_ratio <= 0.0 || costs.llc_kib == 0 {
        return (0.0, 1.0);
    }
    let miss = power_law_miss(footprint_kib, costs.llc_kib as f64, costs.llc_miss_exponent);
    (miss, 1.0 + costs.llc_stall_at_capacity_ratio * miss)
}

/// TLB pressure on a pCPU whose translations active lately cover `footprint_kib` (`hv::tlb`
/// sums the working sets of the threads that ran there): (the TLB misses per instruction
/// relative to a footprint the size of the TLB's reach, `tlb_entries x 4` KiB; the stall
/// cycles per cycle of work they add to guest compute's CPI factor). The same power law as
/// the LLC's (`tlb_miss_exponent`); (0, 0) when the model is off.
pub fn tlb_pressure(costs: &CostParams, footprint_kib: f64) -> (f64, f64) {
    if costs.tlb_stall_at_capacity_ratio <= 0.0 || costs.tlb_entries == 0 {
        return (0.0, 0.0);
    }
    let miss = power_law_miss(footprint_kib, 4.0 * costs.tlb_entries as f64, costs.tlb_miss_exponent);
    (miss, costs.tlb_stall_at_capacity_ratio * miss)
}

/// Misses per instruction of a structure of `capacity_kib` shared in proportion to the
/// footprints active in it, relative to a footprint of its size: (F / capacity)^exponent
/// (the power law of cache misses, `llc_miss_exponent`).
fn power_law_miss(footprint_kib: f64, capacity_kib: f64, exponent: f64) -> f64 {
    (footprint_kib.max(0.0) / capacity_kib).powf(exponent)
}

/// The part of a working set a core's share of the LLC holds (all of it without `llc_kib`).
pub fn cached_kib(topo: &Topology, costs: &CostParams, ws_kib: u32) -> u32 {
    if costs.llc_kib == 0 {
        ws_kib
    } else {
        ws_kib.min(costs.llc_kib / topo.cores_per_socket.max(1))
    }
}

/// Time to refill the cold part of a working set of `ws_kib` KiB (only what the cache holds)
/// from memory on node `mem_node`; after a move to another core of the socket with
/// `private_cache_kib`, also the re-fetch from the LLC of the warm part the old core's private
/// cache held.
pub fn refill_ns(topo: &Topology, costs: &CostParams, from: usize, to: usize, ws_kib: u32, warmth: f64, mem_node: u32) -> Ns {
    let (dram, llc) = refill_parts_ns(topo, costs, from, to, ws_kib, warmth, mem_node);
    (dram + llc).round() as Ns
}

/// `refill_ns` in its two parts: (the time re-fetching from memory, i.e. LLC misses; the time
/// re-fetching from the LLC into the new core's private cache).
pub fn refill_parts_ns(topo: &Topology, costs: &CostParams, from: usize, to: usize, ws_kib: u32, warmth: f64, mem_node: u32) -> (f64, f64) {
    let cached = cached_kib(topo, costs, ws_kib);
    let mib = cached as f64 / 1024.0;
    let mut t = mib * (1.0 - warmth) * costs.cache_refill_ns_per_mib as f64;
    let remote = if costs.refill_by_memory_node {
        topo.node_of(to) != mem_node.min(topo.numa_nodes - 1)
    } else {
        topo.socket_of(from) != topo.socket_of(to)
    };
    if remote {
        t *= costs.cross_socket_refill_factor;
    }
    let mut llc = 0.0;
    if topo.socket_of(from) == topo.socket_of(to) && from != to && costs.private_cache_kib > 0 {
        let private_mib = cached.min(costs.private_cache_kib) as f64 / 1024.0;
        llc = private_mib * warmth * costs.llc_refill_ns_per_mib as f64;
    }
    (t, llc)
}

/// An upper bound on what `refill_parts_ns` can return for a working set of `ws_kib` KiB, its
/// two parts summed: all of it from remote memory plus the whole private part from the LLC
/// (the invariant checker bounds a vCPU's refill debt with it, `sim::check`).
pub fn refill_bound_ns(topo: &Topology, costs: &CostParams, ws_kib: u32) -> Ns {
    let cached = cached_kib(topo, costs, ws_kib);
    let dram = cached as f64 / 1024.0 * costs.cache_refill_ns_per_mib as f64 * costs.cross_socket_refill_factor.max(1.0);
    let llc = cached.min(costs.private_cache_kib) as f64 / 1024.0 * costs.llc_refill_ns_per_mib as f64;
    (dram + llc).ceil() as Ns
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host has one figure for a cache line moved between pCPUs: the vIPI charge across
    /// sockets is what the ticket lock's and a message's remote line costs over the local one.
    #[test]
    fn a_vipi_line_across_sockets_costs_the_remote_line_transfer_over_the_local_one() {
        let c = CostParams::default();
        assert_eq!(c.cross_socket_line_cycles(), 0, "off by default");
        let on = CostParams { cross_socket_vipi_lines: true, ..CostParams::default() };
        assert_eq!(on.cross_socket_line_cycles(), 200 - 75);
        let inverted = CostParams { ticket_transfer_remote_cycles: 50, ..on };
        assert_eq!(inverted.cross_socket_line_cycles(), 0, "never negative");
    }

    #[test]
    fn warmth_decays_with_foreign_work_and_is_lost_across_sockets() {
        let topo = Topology::new(2, 4, None, None, 2.5);
        let c = CostParams::default();
        assert_eq!(cache_warmth(&topo, &c, 1, 1, 0), 1.0);
        assert!(cache_warmth(&topo, &c, 1, 1, c.cache_evict_tau_ns) < 0.4);
        assert!(cache_warmth(&topo, &c, 1, 2, 0) < 1.0);
        assert_eq!(cache_warmth(&topo, &c, 1, 5, 0), 0.0);
        assert!(refill_ns(&topo, &c, 1, 5, 1024, 0.0, 0) > refill_ns(&topo, &c, 1, 2, 1024, 0.0, 0));
    }

    #[test]
    fn only_the_cores_share_of_the_llc_is_refilled() {
        let topo = Topology::new(2, 4, None, None, 2.5);
        let unbounded = CostParams::default();
        let llc = CostParams { llc_kib: 4096, ..CostParams::default() };
        assert_eq!(refill_ns(&topo, &llc, 1, 2, 512, 0.0, 0), refill_ns(&topo, &unbounded, 1, 2, 512, 0.0, 0));
        assert_eq!(refill_ns(&topo, &llc, 1, 2, 8192, 0.0, 0), refill_ns(&topo, &unbounded, 1, 2, 1024, 0.0, 0));
        assert_eq!(cached_kib(&topo, &llc, 8192), 1024);
    }

    /// The TLB's reach is 512 entries x 4 KiB = 2048 KiB: translations of 2048 KiB miss at
    /// the capacity rate (1, stall = the ratio 0.6), 512 KiB at (1/4)^1/2 = 1/2 (stall 0.3);
    /// off by default (no stall, whatever the footprint).
    #[test]
    fn tlb_stall_grows_with_the_square_root_of_the_translations_over_the_reach() {
        assert_eq!(tlb_pressure(&CostParams::default(), 50_000.0), (0.0, 0.0), "off by default");
        let c = CostParams { tlb_stall_at_capacity_ratio: 0.6, ..CostParams::default() };
        assert_eq!(tlb_pressure(&c, 2048.0), (1.0, 0.6));
        let (m, s) = tlb_pressure(&c, 512.0);
        assert!((m - 0.5).abs() < 1e-12 && (s - 0.3).abs() < 1e-12, "{m} {s}");
        assert_eq!(tlb_pressure(&c, 0.0), (0.0, 0.0));
    }

    /// The power law with the exponent 1/2: four times the footprint doubles the misses per
    /// instruction, and the stall grows with them.
    #[test]
    fn llc_stall_grows_with_the_square_root_of_the_active_footprint() {
        let off = CostParams { llc_kib: 12_288, ..CostParams::default() };
        assert_eq!(llc_pressure(&off, 50_000.0), (0.0, 1.0), "off by default");
        let c = CostParams { llc_kib: 12_288, llc_stall_at_capacity_ratio: 0.8, ..CostParams::default() };
        // F = LLC: miss 1, CPI 1 + 0.8.
        assert_eq!(llc_pressure(&c, 12_288.0), (1.0, 1.8));
        // F = LLC / 4: miss (1/4)^0.5 = 0.5, CPI 1 + 0.8 x 0.5 = 1.4.
        let (m, s) = llc_pressure(&c, 3_072.0);
        assert!((m - 0.5).abs() < 1e-12 && (s - 1.4).abs() < 1e-12, "{m} {s}");
        assert_eq!(llc_pressure(&c, 0.0), (0.0, 1.0));
    }

    /// Seed 001's host as scenarios/consolidation-specvirt.toml sets it (2 x 3 cores).
    fn westmere() -> (Topology, CostParams) {
        let topo = Topology::new(2, 3, None, None, 3.33);
        let c = CostParams { private_cache_kib: 256, llc_refill_ns_per_mib: 32_000, ..CostParams::default() };
        (topo, c)
    }

    #[test]
    fn a_move_within_the_socket_refetches_only_the_private_part_from_the_llc() {
        let (topo, c) = westmere();
        assert_eq!(cache_warmth(&topo, &c, 0, 1, 0), 1.0);
        // 512 KiB warm in the L3: only the 256 KiB the old core's L2 held, at the L3 rate.
        assert_eq!(refill_ns(&topo, &c, 0, 1, 512, cache_warmth(&topo, &c, 0, 1, 0), 0), 8_000);
        // The flat model re-fetches 40 % of it from memory: 20 us.
        let flat = CostParams::default();
        assert_eq!(refill_ns(&topo, &flat, 0, 1, 512, cache_warmth(&topo, &flat, 0, 1, 0), 0), 20_000);
    }

    #[test]
    fn a_working_set_within_the_private_cache_is_refetched_whole_from_the_llc() {
        let (topo, c) = westmere();
        assert_eq!(refill_ns(&topo, &c, 0, 2, 128, 1.0, 0), 4_000);
    }

    #[test]
    fn with_the_hierarchy_what_other_work_evicted_still_comes_from_memory() {
        let (topo, c) = westmere();
        let w = cache_warmth(&topo, &c, 0, 1, c.cache_evict_tau_ns);
        assert!((w - (-1.0f64).exp()).abs() < 1e-12);
        // 1 MiB: the evicted 63 % from memory at 100 us/MiB, the L2's 256 KiB of the rest from the L3.
        let want = (1.0 - w) * 100_000.0 + 0.25 * w * 32_000.0;
        assert_eq!(refill_ns(&topo, &c, 0, 1, 1024, w, 0), want.round() as Ns);
    }

    #[test]
    fn the_hierarchy_leaves_same_pcpu_and_cross_socket_refills_unchanged() {
        let (topo, c) = westmere();
        let flat = CostParams::default();
        for (from, to, foreign) in [(1, 1, 0), (1, 1, 2_000_000), (0, 4, 0), (2, 3, 1_000_000)] {
            let (wc, wf) = (cache_warmth(&topo, &c, from, to, foreign), cache_warmth(&topo, &flat, from, to, foreign));
            assert_eq!(wc, wf);
            assert_eq!(refill_ns(&topo, &c, from, to, 700, wc, 0), refill_ns(&topo, &flat, from, to, 700, wf, 0));
        }
    }

    #[test]
    fn remote_memory_is_slower_for_memory_bound_work() {
        let topo = Topology::new(2, 4, None, None, 2.5);
        let c = CostParams::default();
        assert_eq!(topo.mem_speed(&c, 0, 0, 1.0), 1.0);
        assert!(topo.mem_speed(&c, 4, 0, 1.0) < 0.5);
        assert_eq!(topo.mem_speed(&c, 4, 0, 0.0), 1.0);
    }

    /// With `refill_by_memory_node`, a refill from DRAM pays the remote rate by where the
    /// pCPU is relative to the VM's memory, not by the move: a move across sockets onto the
    /// memory's node is local, and a refill after eviction on the same pCPU away from the
    /// memory is remote. Off, the move decides (what every host calibrated before does).
    #[test]
    fn a_refill_from_memory_is_remote_by_the_memory_node_not_by_the_move() {
        let topo = Topology::new(2, 3, None, None, 3.33);
        let by_move = CostParams { cache_refill_ns_per_mib: 100_000, cross_socket_refill_factor: 1.5, ..CostParams::default() };
        let by_node = CostParams { refill_by_memory_node: true, ..by_move.clone() };
        // 1 MiB, all cold: 100 us locally, 150 us from the other node's memory.
        // Across sockets from 0 (node 0) to 4 (node 1):
        assert_eq!(refill_ns(&topo, &by_move, 0, 4, 1024, 0.0, 1), 150_000, "by the move: remote");
        assert_eq!(refill_ns(&topo, &by_node, 0, 4, 1024, 0.0, 1), 100_000, "memory on node 1: local");
        assert_eq!(refill_ns(&topo, &by_node, 4, 0, 1024, 0.0, 1), 150_000, "back to node 0: remote");
        // Half evicted on the same pCPU 4: the cold half comes from node 0's memory.
        assert_eq!(refill_ns(&topo, &by_move, 4, 4, 1024, 0.5, 0), 50_000);
        assert_eq!(refill_ns(&topo, &by_node, 4, 4, 1024, 0.5, 0), 75_000);
        assert_eq!(refill_ns(&topo, &by_node, 4, 4, 1024, 0.5, 1), 50_000);
        // Within socket 1 with the two-level cache: the cold part at the node's rate, the old
        // core's private part from the LLC as before.
        let two = CostParams { private_cache_kib: 256, llc_refill_ns_per_mib: 32_000, ..by_node.clone() };
        let two_by_move = CostParams { refill_by_memory_node: false, ..two.clone() };
        assert_eq!(refill_ns(&topo, &two, 3, 4, 1024, 0.5, 1), refill_ns(&topo, &two_by_move, 3, 4, 1024, 0.5, 1));
        assert_eq!(refill_ns(&topo, &two, 3, 4, 1024, 0.5, 0), 75_000 + 4_000);
    }
}
