//! The results tables of a run (serialised as `summary.json`, schema in `docs/results.md`).

use serde::Serialize;
use std::collections::BTreeMap;

use super::{gps_shares, HistSummary, TimeBuckets};
use crate::engine::{Ns, NS_PER_S};
use crate::host::ExitReason;
use crate::scenario::Scenario;
use crate::sim::World;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct GuestTime {
    #[serde(flatten)]
    pub on_cpu: TimeBuckets,
    /// Halted in the hypervisor (HLT).
    pub halted: Ns,
    /// Runnable but not running (steal).
    pub steal: Ns,
}

/// The guest's own tick-sampled CPU accounting (`metrics::cputime`), summed over the VM's
/// vCPUs: what its `/proc/stat` would report as user, system and steal time.
#[derive(Debug, Clone, Serialize)]
pub struct GuestTicks {
    pub user_ns: Ns,
    pub system_ns: Ns,
    pub steal_ns: Ns,
}

#[derive(Debug, Clone, Serialize)]
pub struct VmResult {
    pub vm: usize,
    pub name: String,
    pub vcpus: usize,
    pub weight: u32,
    pub cap_pct: u32,
    pub finished: bool,
    pub completion_ns: Option<Ns>,
    /// Compute operations started (a throughput measure for endless workloads).
    pub ops: u64,
    /// When the last of them started: a VM that stops making progress long before the run
    /// ends (a livelock) shows here.
    pub last_op_ns: Option<Ns>,
    /// Queue operations that fetched the queue's state from another pCPU (`guest::channel`).
    pub channel_transfers: u64,
    /// Message-buffer cache lines fetched from another pCPU (`guest::channel`).
    pub message_line_transfers: u64,
    /// Virtual IPIs whose message crossed sockets (`hv::xsocket`).
    pub cross_socket_messages: u64,
    pub cpu_ns: Ns,
    pub guest_ns: GuestTime,
    pub guest_ticks: GuestTicks,
    /// (lock spin + IPI wait) / guest CPU time (CPU time less hypervisor time).
    pub spin_fraction: f64,
    pub exits: BTreeMap<String, u64>,
    pub ple_exits: u64,
    pub lock_holder_preemptions: u64,
    pub lock_waiter_preemptions: u64,
    pub migrations: u64,
    pub share: f64,
    pub ideal_share: f64,
    pub relative_lag: f64,
    pub lock_wait: HistSummary,
    pub vipi_latency: HistSummary,
    /// Client requests of `server` workloads finished by the VM (all zero without them).
    pub requests: RequestSummary,
    /// Passes through `mark` ops, by mark name.
    pub marks: BTreeMap<String, MarkSummary>,
    /// Figures of the benchmark workloads (`stream`, `epcc`, `imb`) that finished, by
    /// workload tag `w<j>` (j = index in the VM's `workloads`).
    pub bench: BTreeMap<String, BTreeMap<String, f64>>,
    /// KVM halt polling: halts that polled, and those a wake-up ended during the poll.
    pub halt_polls: u64,
    pub halt_polls_successful: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RequestSummary {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Requests completed within the warm-up (`Scenario::warmup_ms`), which the others leave
    /// out: `count + warmup_count` is every request the run completed.
    pub warmup_count: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MarkSummary {
    pub count: u64,
    pub first_ns: Ns,
    pub last_ns: Ns,
    pub mean_ns: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct VcpuResult {
    pub vm: usize,
    pub vcpu: u32,
    pub run_ns: Ns,
    pub steal_ns: Ns,
    pub halted_ns: Ns,
    pub migrations: u64,
    pub dispatches: u64,
    pub ple_exits: u64,
    /// Time spent re-fetching the working set after migrations and evictions, page walks
    /// after flushes and their nested-paging extra after address-space switches included.
    pub cache_refill_ns: Ns,
    /// Guest threads switched in by its guest kernel, and the address-space loads among them.
    pub guest_switches: u64,
    pub address_space_loads: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PcpuResult {
    pub pcpu: usize,
    pub socket: u32,
    pub node: u32,
    pub idle_ns: Ns,
    /// Part of `idle_ns` during which a vCPU allowed here was runnable and waiting.
    pub idle_while_waiting_ns: Ns,
    pub hv_ns: Ns,
    pub guest_ns: Ns,
    /// Part of `hv_ns` taken by the background load (`host.background`).
    pub background_ns: Ns,
    pub sched_calls: u64,
    pub context_switches: u64,
    pub sched_calls_per_s: f64,
    pub context_switches_per_s: f64,
    /// Switches charged a full state switch (`world_switch_ns`) and switches that kept the
    /// loaded state (`sched_call_ns`; only with `hypervisor.params.lazy_context_switch`),
    /// `hv::lazy_switch`. Without the option a switch to the idle vCPU after a block is
    /// charged nothing and counted in neither; with it every context switch is one of the two.
    pub state_switches: u64,
    pub lazy_switches: u64,
    /// This pCPU's lazily held vCPU state saved because the vCPU was to run elsewhere.
    pub lazy_state_syncs: u64,
    /// Flushes of this pCPU's guest TLB entries at full context switches (`hv::tlb`; only
    /// with `host.costs.tlb_walk_cycles`).
    pub tlb_flushes: u64,
    pub migrations_in: u64,
    /// Physical interrupts of pass-through devices taken by this pCPU.
    pub device_irqs: u64,
    /// Exits from the idle C-state (`hv::cstate`; only with `host.costs.idle_exit_latency_ns`).
    pub cstate_exits: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Totals {
    pub directed_yield_attempted: u64,
    pub directed_yield_successful: u64,
    pub context_switches_per_pcpu_s: f64,
    pub sched_calls_per_pcpu_s: f64,
    /// `pcpus[].state_switches`, `lazy_switches` and `lazy_state_syncs` per second per pCPU.
    pub state_switches_per_pcpu_s: f64,
    pub lazy_switches_per_pcpu_s: f64,
    pub lazy_state_syncs_per_pcpu_s: f64,
    /// `pcpus[].tlb_flushes` per second per pCPU.
    pub tlb_flushes_per_pcpu_s: f64,
    pub hv_fraction: f64,
    pub idle_fraction: f64,
    /// Σ `pcpus[].idle_while_waiting_ns`.
    pub idle_while_waiting_ns: Ns,
    /// `idle_while_waiting_ns` / (pCPUs × `sim_time_ns`).
    pub idle_while_waiting_fraction: f64,
    /// Hypervisor time by the VM exit it was charged in (`exits`' reasons, and `none` for
    /// time outside any exit: tasklets and switches on an idle pCPU, background load), summed
    /// over the pCPUs (ns). Charged when incurred, so the sum exceeds Σ `pcpus[].hv_ns` by
    /// the hypervisor time vCPUs still owed at the end.
    pub hv_ns_by_exit: BTreeMap<String, Ns>,
    /// Policy-specific event counters (`HvScheduler::counters`), by name.
    pub scheduler_counters: BTreeMap<String, u64>,
    /// Shared-LLC and TLB pressure and cache refills (`hv::llc`, `hv::tlb`) over the run's
    /// guest compute: cycles of compute (LLC and TLB stall included) and refills per cycle of
    /// work without stall (1 with none), the LLC misses per instruction in stall time (LLC
    /// stall and refills from memory per cycle of work; 0 with neither), and the TLB misses
    /// per instruction in stall time (TLB stall per cycle of work; 0 with the model off).
    pub llc_cpi_factor: f64,
    pub llc_miss_rate_rel: f64,
    pub tlb_miss_rate_rel: f64,
    /// The socket CPI factor (`llc_pressure`) the hypervisor's costs were charged at, weighted
    /// by their cost at the reference CPI (`host.costs.hv_costs_reference_cpi`; 0 when the
    /// costs are fixed times). Set as the reference, it keeps the mean cost of each kind at
    /// its stated value.
    pub hv_llc_cpi_factor: f64,
    /// Instructions retired, in ns of work at CPI factor 1 (the unit of guest compute's work
    /// without stall): guest compute's work (Σ of its time / the CPI factor it ran at,
    /// `hv::llc`; the denominator of `llc_cpi_factor`), and the hypervisor's costs (each cost
    /// stated at `host.costs.hv_costs_reference_cpi` counts cost / reference, a fixed time as
    /// it is; cache-line transfer latencies, `phys_ipi_ns`, and the background load are not
    /// instructions and count nothing). Seed 001's path length (§4.1, Equation 1).
    pub guest_compute_work_ns: f64,
    pub hv_work_ns: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub schema_version: u32,
    pub scenario: Scenario,
    pub scheduler: String,
    pub seed: u64,
    pub sim_time_ns: Ns,
    pub events: u64,
    pub vms: Vec<VmResult>,
    pub vcpus: Vec<VcpuResult>,
    pub pcpus: Vec<PcpuResult>,
    pub totals: Totals,
    /// Controller actions in the order applied.
    pub actions: Vec<crate::sim::control::ActionRecord>,
}

pub(crate) fn build(w: &World, sc: &Scenario, scheduler: &str) -> Results {
    let now = w.now();
    let secs = (now as f64 / NS_PER_S as f64).max(1e-12);
    let n_p = w.pcpus.len() as f64;
    let mut demand = Vec::new();
    let mut weight = Vec::new();
    let mut vms = Vec::new();
    for (i, vm) in w.vms.iter().enumerate() {
        let mut t = TimeBuckets::default();
        let (mut halted, mut steal, mut cpu, mut mig, mut lhp, mut lwp) = (0, 0, 0, 0, 0, 0);
        let (mut polls, mut polls_ok) = (0, 0);
        let mut exits = [0u64; ExitReason::ALL.len()];
        let mut online = 0;
        let mut ticks = super::cputime::TickCounts::default();
        for &v in &vm.vcpus {
            let vc = &w.vcpus[v];
            t.add(&vc.t);
            ticks.add(&vc.cputime.ticks);
            halted += vc.halted_ns;
            steal += vc.steal_ns;
            cpu += vc.run_ns;
            mig += vc.migrations;
            lhp += vc.lhp;
            lwp += vc.lwp;
            polls += vc.halt_polls;
            polls_ok += vc.halt_polls_successful;
            online += vc.online as u32;
            for (k, e) in vc.exits.iter().enumerate() {
                exits[k] += e;
            }
        }
        demand.push(((cpu + steal) as f64 / now.max(1) as f64).min(online as f64));
        // The configured weight: controllers (e.g. flexw) change `vm.weight` on the way.
        weight.push(sc.vms[i].weight as f64);
        vms.push(VmResult {
            vm: i,
            name: vm.name.clone(),
            vcpus: vm.vcpus.len(),
            weight: vm.weight,
            cap_pct: vm.cap_pct,
            finished: vm.finished_at.is_some(),
            completion_ns: vm.finished_at,
            ops: vm.ops,
            last_op_ns: vm.last_op_ns,
            channel_transfers: vm.channel_transfers,
            message_line_transfers: vm.message_line_transfers,
            cross_socket_messages: vm.cross_socket_messages,
            cpu_ns: cpu,
            guest_ns: GuestTime { on_cpu: t, halted, steal },
            guest_ticks: GuestTicks {
                user_ns: ticks.user * vm.tick_ns,
                system_ns: ticks.system * vm.tick_ns,
                steal_ns: ticks.steal * vm.tick_ns,
            },
            spin_fraction: if cpu > t.hv { (t.lock_spin + t.ipi_wait) as f64 / (cpu - t.hv) as f64 } else { 0.0 },
            exits: ExitReason::ALL.iter().map(|r| (r.name().to_string(), exits[r.index()])).collect(),
            ple_exits: exits[ExitReason::Ple.index()],
            lock_holder_preemptions: lhp,
            lock_waiter_preemptions: lwp,
            migrations: mig,
            share: cpu as f64 / (now.max(1) as f64 * n_p),
            ideal_share: 0.0,
            relative_lag: 0.0,
            lock_wait: vm.lock_wait.summary(),
            vipi_latency: vm.vipi_latency.summary(),
            requests: {
                let (count, mean_ms, p50_ms, p99_ms) = crate::guest::requests::summary(&vm.requests.response_ns);
                RequestSummary { count, mean_ms, p50_ms, p99_ms, warmup_count: vm.requests.warmup_count }
            },
            marks: vm
                .marks
                .iter()
                .map(|m| (m.name.clone(), MarkSummary { count: m.count, first_ns: m.first_ns, last_ns: m.last_ns, mean_ns: m.mean_ns() }))
                .collect(),
            bench: sc.vms[i]
                .workloads
                .iter()
                .enumerate()
                .filter_map(|(j, wl)| {
                    let tag = format!("w{j}");
                    crate::guest::workloads::metrics(sc.vms[i].vcpus, wl, &tag, &vm.marks).map(|m| (tag, m))
                })
                .collect(),
            halt_polls: polls,
            halt_polls_successful: polls_ok,
        });
    }
    let ideal = gps_shares(n_p, &demand, &weight);
    for (r, g) in vms.iter_mut().zip(ideal) {
        r.ideal_share = g / n_p;
        r.relative_lag = if r.ideal_share > 0.0 { (r.share - r.ideal_share) / r.ideal_share } else { 0.0 };
    }
    let vcpus = w
        .vcpus
        .iter()
        .map(|vc| VcpuResult {
            vm: vc.vm,
            vcpu: vc.idx,
            run_ns: vc.run_ns,
            steal_ns: vc.steal_ns,
            halted_ns: vc.halted_ns,
            migrations: vc.migrations,
            dispatches: vc.dispatches,
            ple_exits: vc.exits[ExitReason::Ple.index()],
            cache_refill_ns: vc.t.cache_refill,
            guest_switches: vc.guest_switches,
            address_space_loads: vc.address_space_loads,
        })
        .collect();
    let pcpus: Vec<PcpuResult> = w
        .pcpus
        .iter()
        .enumerate()
        .map(|(p, pc)| PcpuResult {
            pcpu: p,
            socket: pc.socket,
            node: pc.node,
            idle_ns: pc.idle_ns,
            idle_while_waiting_ns: w.idle_wait.per_pcpu_ns[p],
            hv_ns: pc.hv_ns,
            guest_ns: pc.guest_ns,
            background_ns: pc.bg_ns,
            sched_calls: pc.sched_calls,
            context_switches: pc.context_switches,
            sched_calls_per_s: pc.sched_calls as f64 / secs,
            context_switches_per_s: pc.context_switches as f64 / secs,
            state_switches: pc.lazy.state_switches,
            lazy_switches: pc.lazy.lazy_switches,
            lazy_state_syncs: pc.lazy.syncs,
            tlb_flushes: pc.tlb_flushes,
            migrations_in: pc.migrations_in,
            device_irqs: pc.tasklet.irqs,
            cstate_exits: pc.cstate_exits,
        })
        .collect();
    let (dya, dys) = w.sched.as_ref().map_or((0, 0), |s| s.yield_stats());
    let sum = |f: &dyn Fn(&PcpuResult) -> f64| pcpus.iter().map(f).sum::<f64>();
    let (compute, work, refill, dram) = w.pcpus.iter().fold((0.0, 0.0, 0.0, 0.0), |(c, k, r, d), pc| {
        (c + pc.llc_compute_ns, k + pc.llc_work_ns, r + pc.llc_refill_ns, d + pc.llc_refill_dram_ns)
    });
    let tlb_stall: f64 = w.pcpus.iter().map(|pc| pc.tlb_stall_ns).sum();
    // The flush's page walks (`hv::tlb`): in the refill's time for the CPI, TLB misses for the
    // TLB's miss rate (not the LLC's).
    let tlb_walks: f64 = w.pcpus.iter().map(|pc| pc.tlb_walk_ns).sum();
    let (hv_ref, hv_cpi) = w.pcpus.iter().fold((0.0, 0.0), |(r, c), pc| (r + pc.hv_cost_ref_ns, c + pc.hv_cost_cpi_ns));
    let totals = Totals {
        directed_yield_attempted: dya,
        directed_yield_successful: dys,
        context_switches_per_pcpu_s: sum(&|p| p.context_switches_per_s) / n_p,
        sched_calls_per_pcpu_s: sum(&|p| p.sched_calls_per_s) / n_p,
        state_switches_per_pcpu_s: sum(&|p| p.state_switches as f64) / secs / n_p,
        lazy_switches_per_pcpu_s: sum(&|p| p.lazy_switches as f64) / secs / n_p,
        lazy_state_syncs_per_pcpu_s: sum(&|p| p.lazy_state_syncs as f64) / secs / n_p,
        tlb_flushes_per_pcpu_s: sum(&|p| p.tlb_flushes as f64) / secs / n_p,
        hv_fraction: sum(&|p| p.hv_ns as f64) / (n_p * now.max(1) as f64),
        idle_fraction: sum(&|p| p.idle_ns as f64) / (n_p * now.max(1) as f64),
        idle_while_waiting_ns: w.idle_wait.total_ns(),
        idle_while_waiting_fraction: w.idle_wait.total_ns() as f64 / (n_p * now.max(1) as f64),
        hv_ns_by_exit: ExitReason::ALL
            .iter()
            .map(|r| (r.name(), ExitReason::slot(Some(*r))))
            .chain([("none", ExitReason::slot(None))])
            .map(|(k, i)| (k.to_string(), w.pcpus.iter().map(|pc| pc.hv_by_exit_ns[i]).sum()))
            .collect(),
        scheduler_counters: w.sched.as_ref().map_or_else(Vec::new, |s| s.counters()).into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        llc_cpi_factor: if work > 0.0 { (compute + refill + tlb_walks) / work } else { 1.0 },
        llc_miss_rate_rel: if work > 0.0 { (compute - work - tlb_stall + dram) / work } else { 0.0 },
        tlb_miss_rate_rel: if work > 0.0 { (tlb_stall + tlb_walks) / work } else { 0.0 },
        hv_llc_cpi_factor: if hv_ref > 0.0 { hv_cpi / hv_ref } else { 0.0 },
        guest_compute_work_ns: work,
        hv_work_ns: w.pcpus.iter().map(|pc| pc.hv_work_ns).sum(),
    };
    Results {
        schema_version: SCHEMA_VERSION,
        scenario: sc.clone(),
        scheduler: scheduler.to_string(),
        seed: w.seed,
        sim_time_ns: now,
        events: w.q.events_popped(),
        vms,
        vcpus,
        pcpus,
        totals,
        actions: w.actions.clone(),
    }
}
