//! Semantic checks on a parsed scenario. Each error names the field path and the reason.
//!
//! Parsing (`from_toml_str`, `from_json_str`) already rejects wrong types, missing fields,
//! unknown fields and unknown workload kinds, naming the path. This module checks what the
//! types cannot express: ranges, shapes, cross-references between fields (a pin to a pCPU
//! that does not exist, a barrier whose parties never all arrive) and whether a
//! run-to-completion scenario can complete. It never panics: all arithmetic on user numbers
//! is checked or done in `u64`/`f64`, and nothing is indexed by a user value.
//!
//! Paths look like `vms[1].vcpus`, `host.numa_distance[1][0]` or
//! `vms[0].workloads[2].groups[0].program[1].body[0].us.mean_us`. A duration given as a bare
//! number (a fixed value) is reported at the field itself (`...program[0].us`); a duration
//! table is reported at the offending key (`...us.mean_us`, `...us.max_us`).
//!
//! The first error found is returned, in file order (top-level times, host, hypervisor, VMs),
//! except that "duration_ms is required" and `stop`'s "no finite VM" are reported after all VM
//! checks.
//!
//! Interpretation of "more pinned vCPUs than pCPUs" (issue 2, acceptance 8): a VM with a
//! `pin` list may not have more vCPUs than the host has pCPUs (it would necessarily stack two
//! of its own vCPUs on one pCPU *because* the host is too small, which is always a mistake in
//! the scenario). Pinning several VMs onto the same pCPUs (overcommit across VMs), or
//! deliberately pinning two vCPUs of one VM to the same pCPU on a host that has enough pCPUs,
//! is allowed: both are legitimate experiments (e.g. lock-holder preemption studies).

use std::collections::{BTreeMap, BTreeSet};

use super::{DurationUs, HostSpec, HypervisorSpec, OpSpec, Scenario, ScenarioError, StopRule, ThreadGroupSpec, VmSpec, WorkloadSpec};

/// Largest host: sockets × cores_per_socket.
pub const MAX_PCPUS: u64 = 4096;
/// Largest VM.
pub const MAX_VCPUS: u32 = 1024;
/// Xen credit's weight range is 1..=65535 (`xl sched-credit -w`).
pub const MAX_WEIGHT: u32 = 65535;
/// Threads started at once in one VM (all groups, built-ins expanded; forked children excluded).
pub const MAX_THREADS_PER_VM: u64 = 65_536;
/// Largest loop / iteration / repetition count (keeps products such as loops × fds in range).
pub const MAX_COUNT: u64 = 1_000_000_000_000;
/// Longest simulated time, in ms: the clock counts nanoseconds in a u64 (about 584 years);
/// 1e12 ms (about 31.7 years) leaves ample head-room.
pub const MAX_TIME_MS: f64 = 1e12;
/// Longest single duration in µs (same limit as `MAX_TIME_MS`).
pub const MAX_TIME_US: f64 = 1e15;
/// Largest cost parameter in ns (1000 s).
pub const MAX_COST_NS: u64 = 1_000_000_000_000;

type Res = Result<(), ScenarioError>;

fn err<T>(path: impl Into<String>, reason: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, reason))
}

/// Validate with the schedulers registered in `hv::sched::catalog()`.
pub fn validate(sc: &Scenario) -> Res {
    let catalog = crate::hv::sched::catalog();
    let names: Vec<&str> = catalog.iter().map(|e| e.0).collect();
    validate_with(sc, &names)?;
    // `hypervisor.params`: each policy knows its own keys and ranges; building it checks them
    // (errors name `hypervisor.params.<key>`).
    let hv = &sc.hypervisor;
    let sched = crate::hv::sched::build(&hv.scheduler, &hv.params, &hv.ple)?;
    if !sched.enforces_caps() {
        if let Some(i) = sc.vms.iter().position(|vm| vm.cap_pct > 0) {
            return err(
                format!("vms[{i}].cap_pct"),
                format!(
                    "scheduler `{}` cannot enforce a cap (caps: credit, credit2, dp, flex, and CFS bandwidth control in cfs, balance, relaxed_cosched); remove the cap or pick one of those",
                    hv.scheduler
                ),
            );
        }
    }
    if let Some(c) = &sc.controller {
        crate::controllers::build(c)?;
    }
    Ok(())
}

/// Validate, accepting the scheduler names in `schedulers`.
pub fn validate_with(sc: &Scenario, schedulers: &[&str]) -> Res {
    if let Some(d) = sc.duration_ms {
        check_time_ms("duration_ms", d)?;
    }
    check_time_ms("max_duration_ms", sc.max_duration_ms)?;
    if let Some(w) = sc.warmup_ms {
        check_time_ms("warmup_ms", w)?;
        let (horizon, which) = match sc.duration_ms {
            Some(d) => (d, "duration_ms"),
            None => (sc.max_duration_ms, "max_duration_ms"),
        };
        if w >= horizon {
            return err("warmup_ms", format!("must end before the run does ({which} = {horizon}), got {w}: \
                                             no request would be measured"));
        }
    }
    let host = check_host(&sc.host)?;
    if let Some(bg) = &sc.host.background {
        crate::hv::background::validate(bg, host.n_pcpus)?;
    }
    check_hypervisor(&sc.hypervisor, schedulers)?;

    if sc.vms.is_empty() {
        return err("vms", "at least one VM is required (add a [[vms]] table)");
    }
    // VM names label results; a VM without a name is called `vm{index}` (as the simulator does).
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    let mut forever: Option<String> = None;
    let mut any_finite = false;
    for (i, vm) in sc.vms.iter().enumerate() {
        if let Some(name) = &vm.name {
            if name.trim().is_empty() {
                return err(format!("vms[{i}].name"), "must not be empty (leave it out to get the default name `vm{index}`)");
            }
        }
        let name = vm.name.clone().unwrap_or_else(|| format!("vm{i}"));
        if let Some(&j) = names.get(&name) {
            let what = if vm.name.is_some() { "" } else { "(the default name of an unnamed VM) " };
            return err(
                format!("vms[{i}].name"),
                format!("\"{name}\" {what}is already the name of vms[{j}]; VM names must be unique"),
            );
        }
        names.insert(name, i);
        let f = check_vm(i, vm, &host)?;
        any_finite |= f.is_none();
        if forever.is_none() {
            forever = f;
        }
    }
    if sc.stop == StopRule::FiniteDone {
        if !any_finite {
            let why = forever.unwrap_or_default();
            return err(
                "stop",
                format!(
                    "\"finite_done\" ends the run when every VM whose workloads all finish has finished, \
                     but every VM runs a workload that never ends (the first: {why}); make one VM's \
                     workloads finite or remove `stop`"
                ),
            );
        }
    } else if sc.duration_ms.is_none() {
        if let Some(why) = forever {
            return err(
                "duration_ms",
                format!(
                    "required because {why}; without duration_ms the run ends when every workload has \
                     finished, so set duration_ms or make every workload finite"
                ),
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Numbers

/// A number as an error message shows it: plainly, or in exponent form when it is very large or
/// very small (`1e-300`, not three hundred zeros).
struct Num(f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0.abs();
        if a != 0.0 && a.is_finite() && !(1e-4..1e12).contains(&a) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

fn check_finite(path: &str, v: f64) -> Res {
    if v.is_finite() {
        Ok(())
    } else {
        err(path, format!("must be a finite number, got {}", Num(v)))
    }
}

/// A time in ms that must be > 0.
fn check_time_ms(path: &str, v: f64) -> Res {
    check_finite(path, v)?;
    if v < 0.0 {
        return err(path, format!("must be > 0 ms, got {} (times cannot be negative)", Num(v)));
    }
    if v == 0.0 {
        return err(path, "must be > 0 ms, got 0");
    }
    if v > MAX_TIME_MS {
        return err(path, format!("must be at most {MAX_TIME_MS:e} ms (about 31 years of simulated time), got {}", Num(v)));
    }
    Ok(())
}

/// A time in ms that may be 0.
fn check_ms_or_zero(path: &str, v: f64) -> Res {
    check_finite(path, v)?;
    if !(0.0..=MAX_TIME_MS).contains(&v) {
        return err(path, format!("must lie in [0, {MAX_TIME_MS:e}] ms, got {}", Num(v)));
    }
    Ok(())
}

/// A time in µs that must be ≥ 0.
fn check_us(path: &str, v: f64) -> Res {
    check_finite(path, v)?;
    if v < 0.0 {
        return err(path, format!("must be ≥ 0 µs, got {} (times cannot be negative)", Num(v)));
    }
    if v > MAX_TIME_US {
        return err(path, format!("must be at most {MAX_TIME_US:e} µs (about 31 years), got {}", Num(v)));
    }
    Ok(())
}

/// A time in µs that must be > 0.
fn check_pos_us(path: &str, v: f64, what: &str) -> Res {
    check_us(path, v)?;
    if v == 0.0 {
        return err(path, format!("must be > 0 µs ({what}), got 0"));
    }
    Ok(())
}

/// Slowest host clock: 10 MHz. At 1e-300 GHz one cycle is 1e300 ns, past any time the engine
/// can hold; real x86 hosts run at 1-5 GHz.
const MIN_CPU_GHZ: f64 = 0.01;

/// Shortest period of a guest timer (slice, balance, tick): 1 µs. Linux's own are milliseconds
/// (HZ ≤ 1000, `sysctl_sched_min_granularity` 0.75 ms, `sd->min_interval` 1 ms); a shorter one
/// would only flood the run with events (a sub-nanosecond one would never let time advance).
const MIN_GUEST_PERIOD_US: f64 = 1.0;

/// A period of a guest timer, in µs: ≥ `MIN_GUEST_PERIOD_US`.
fn check_guest_period_us(path: &str, v: f64, what: &str) -> Res {
    check_pos_us(path, v, what)?;
    if v < MIN_GUEST_PERIOD_US {
        return err(path, format!("must be at least {MIN_GUEST_PERIOD_US} µs ({what}), got {}", Num(v)));
    }
    Ok(())
}

fn check_fraction(path: &str, v: f64) -> Res {
    check_finite(path, v)?;
    if !(0.0..=1.0).contains(&v) {
        return err(path, format!("must be between 0 and 1 (a fraction), got {}", Num(v)));
    }
    Ok(())
}

fn check_count(path: &str, v: u64, what: &str) -> Res {
    if v == 0 {
        return err(path, format!("must be ≥ 1 ({what}), got 0"));
    }
    if v > MAX_COUNT {
        return err(path, format!("must be at most {MAX_COUNT} ({what}), got {v}"));
    }
    Ok(())
}

/// A duration distribution: every value finite and ≥ 0; exp/lognormal mean > 0, cv ≥ 0;
/// uniform min ≤ max.
fn check_dist(path: &str, d: &DurationUs) -> Res {
    match *d {
        DurationUs::Fixed { us } => check_us(path, us),
        DurationUs::Exp { mean_us } => {
            check_pos_us(&format!("{path}.mean_us"), mean_us, "the mean of an exponential distribution")
        }
        DurationUs::Uniform { min_us, max_us } => {
            check_us(&format!("{path}.min_us"), min_us)?;
            check_us(&format!("{path}.max_us"), max_us)?;
            if max_us < min_us {
                return err(
                    format!("{path}.max_us"),
                    format!("must be ≥ min_us ({min_us}) for a uniform distribution, got {}", Num(max_us)),
                );
            }
            Ok(())
        }
        DurationUs::Lognormal { mean_us, cv } => {
            check_pos_us(&format!("{path}.mean_us"), mean_us, "the mean of a log-normal distribution")?;
            let p = format!("{path}.cv");
            check_finite(&p, cv)?;
            if cv < 0.0 {
                return err(p, format!("must be ≥ 0 (coefficient of variation = std dev / mean), got {}", Num(cv)));
            }
            if cv > 1000.0 {
                return err(p, format!("must be at most 1000 (coefficient of variation), got {}", Num(cv)));
            }
            Ok(())
        }
    }
}

/// True if the distribution always yields 0.
fn dist_is_zero(d: &DurationUs) -> bool {
    match *d {
        DurationUs::Fixed { us } => us <= 0.0,
        DurationUs::Uniform { max_us, .. } => max_us <= 0.0,
        DurationUs::Exp { .. } | DurationUs::Lognormal { .. } => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Host

struct HostFacts {
    n_pcpus: u64,
    numa_nodes: u32,
}

fn check_host(h: &HostSpec) -> Result<HostFacts, ScenarioError> {
    if h.sockets == 0 {
        return err("host.sockets", "must be ≥ 1, got 0");
    }
    if h.cores_per_socket == 0 {
        return err("host.cores_per_socket", "must be ≥ 1, got 0");
    }
    let n_pcpus = h.sockets as u64 * h.cores_per_socket as u64;
    if n_pcpus > MAX_PCPUS {
        return err(
            "host.cores_per_socket",
            format!(
                "the host would have {} sockets × {} cores = {n_pcpus} pCPUs; at most {MAX_PCPUS} are supported",
                h.sockets, h.cores_per_socket
            ),
        );
    }
    check_finite("host.cpu_ghz", h.cpu_ghz)?;
    if h.cpu_ghz <= 0.0 {
        return err("host.cpu_ghz", format!("must be > 0 GHz, got {}", Num(h.cpu_ghz)));
    }
    if h.cpu_ghz < MIN_CPU_GHZ {
        return err(
            "host.cpu_ghz",
            format!(
                "must be at least {MIN_CPU_GHZ} GHz (cycle counts such as the PLE window are turned into time \
                 at this clock), got {}",
                Num(h.cpu_ghz)
            ),
        );
    }
    if h.cpu_ghz > 1000.0 {
        return err("host.cpu_ghz", format!("must be at most 1000 GHz, got {}", Num(h.cpu_ghz)));
    }
    let nodes = match h.numa_nodes {
        None => h.sockets,
        Some(0) => return err("host.numa_nodes", "must be ≥ 1, got 0"),
        Some(n) if n > h.sockets => {
            return err(
                "host.numa_nodes",
                format!("must be ≤ host.sockets ({}): a NUMA node holds whole sockets, got {n}", h.sockets),
            )
        }
        Some(n) if !h.sockets.is_multiple_of(n) => {
            return err(
                "host.numa_nodes",
                format!("host.sockets ({}) must divide evenly into {n} NUMA nodes", h.sockets),
            )
        }
        Some(n) => n,
    };
    if let Some(table) = &h.numa_distance {
        let n = nodes as usize;
        if table.len() != n {
            return err(
                "host.numa_distance",
                format!("must be a {n} × {n} table (one row per NUMA node), got {} rows", table.len()),
            );
        }
        for (i, row) in table.iter().enumerate() {
            if row.len() != n {
                return err(
                    format!("host.numa_distance[{i}]"),
                    format!("must have {n} entries (one per NUMA node), got {}", row.len()),
                );
            }
            for (j, &d) in row.iter().enumerate() {
                let p = format!("host.numa_distance[{i}][{j}]");
                if i == j && d != 10 {
                    return err(p, format!("must be 10 (the distance from a node to itself, ACPI SLIT units), got {d}"));
                }
                if d < 10 {
                    return err(p, format!("must be ≥ 10 (10 = local memory, larger = farther), got {d}"));
                }
                if d > 254 {
                    return err(p, format!("must be ≤ 254 (the ACPI SLIT range; 255 means unreachable), got {d}"));
                }
            }
        }
    }
    check_costs(h)?;
    Ok(HostFacts { n_pcpus, numa_nodes: nodes })
}

/// Costs are checked by the naming convention of `host::CostParams`, so fields added later
/// are covered: `*_ns` / `*_ns_per_*` are integer ns ≤ `MAX_COST_NS`; a field whose name
/// contains `tau` must be > 0; `*_warmth` / `*_fraction` lie in [0, 1]; `*_pct` in [0, 100);
/// `*_factor` ≥ 1; any
/// other number is finite and ≥ 0.
fn check_costs(h: &HostSpec) -> Res {
    let value = match serde_json::to_value(&h.costs) {
        Ok(v) => v,
        // Only a non-finite float can make this fail; serde_json writes NaN/inf as null,
        // so this is unreachable in practice.
        Err(e) => return err("host.costs", format!("cannot be read: {e}")),
    };
    let Some(map) = value.as_object() else { return Ok(()) };
    for (key, v) in map {
        let p = format!("host.costs.{key}");
        if v.is_null() {
            // serde_json serialises NaN and ±inf as null.
            return err(p, "must be a finite number");
        }
        let Some(x) = v.as_f64() else { continue };
        if !x.is_finite() {
            return err(p, format!("must be a finite number, got {}", Num(x)));
        }
        if x < 0.0 {
            return err(p, format!("must be ≥ 0, got {} (costs cannot be negative)", Num(x)));
        }
        if key.ends_with("_ns") || key.contains("_ns_per_") {
            if let Some(u) = v.as_u64() {
                if u > MAX_COST_NS {
                    return err(p, format!("must be at most {MAX_COST_NS} ns (1000 s), got {u}"));
                }
            }
        }
        if key.contains("tau") && x <= 0.0 {
            return err(p, "must be > 0 (a time constant), got 0");
        }
        if (key.ends_with("_warmth") || key.ends_with("_fraction")) && x > 1.0 {
            return err(p, format!("must be between 0 and 1 (a fraction), got {}", Num(x)));
        }
        if key.ends_with("_pct") && x >= 100.0 {
            return err(p, format!("must be below 100 (a per-cent band around each cost's mean), got {}", Num(x)));
        }
        if key.ends_with("_factor") && x < 1.0 {
            return err(p, format!("must be ≥ 1 (a multiplier on a cost; 1 = no extra cost), got {}", Num(x)));
        }
        if !(key.ends_with("_ns") || key.contains("_ns_per_")) && x > 1e6 {
            return err(p, format!("must be at most 1e6, got {}", Num(x)));
        }
    }
    let c = &h.costs;
    if c.hv_cost_cv > 10.0 {
        return err("host.costs.hv_cost_cv", format!("must be at most 10 (a coefficient of variation), got {}", Num(c.hv_cost_cv)));
    }
    if c.hv_cost_cv > 0.0 && c.hv_cost_jitter_pct > 0.0 {
        return err(
            "host.costs.hv_cost_cv",
            "cannot be combined with hv_cost_jitter_pct: give the costs a log-normal spread or a uniform band, not both",
        );
    }
    if c.private_cache_kib > 0 && (c.llc_refill_ns_per_mib == 0 || c.llc_refill_ns_per_mib > c.cache_refill_ns_per_mib) {
        return err(
            "host.costs.llc_refill_ns_per_mib",
            format!(
                "must lie in 1..={} (cache_refill_ns_per_mib: the LLC is faster than memory) when private_cache_kib is set, got {}",
                c.cache_refill_ns_per_mib, c.llc_refill_ns_per_mib
            ),
        );
    }
    if c.llc_stall_at_capacity_ratio > 0.0 {
        if c.llc_kib == 0 {
            return err("host.costs.llc_kib", "must be > 0 (the socket's LLC size) when llc_stall_at_capacity_ratio is set");
        }
        if !(c.llc_miss_exponent > 0.0 && c.llc_miss_exponent <= 1.0) {
            return err(
                "host.costs.llc_miss_exponent",
                format!("must lie in (0, 1] (the power law of cache misses: 0.3-0.7 measured), got {}", Num(c.llc_miss_exponent)),
            );
        }
    }
    if c.tlb_stall_at_capacity_ratio > 0.0 {
        if c.tlb_entries == 0 {
            return err("host.costs.tlb_entries", "must be > 0 (a core's second-level TLB entries, 4 KiB each) when tlb_stall_at_capacity_ratio is set");
        }
        if !(c.tlb_miss_exponent > 0.0 && c.tlb_miss_exponent <= 1.0) {
            return err(
                "host.costs.tlb_miss_exponent",
                format!("must lie in (0, 1] (the power law of misses: 0.3-0.7 measured), got {}", Num(c.tlb_miss_exponent)),
            );
        }
    }
    if c.tlb_walk_cycles > 0 && !(c.tlb_stall_at_capacity_ratio > 0.0 && c.llc_window_ns > 0) {
        return err(
            "host.costs.tlb_walk_cycles",
            "needs the TLB pressure model (tlb_stall_at_capacity_ratio > 0) and its window (llc_window_ns > 0): the flush empties a pCPU's TLB footprint",
        );
    }
    if c.hv_costs_reference_cpi != 0.0 {
        if !(c.hv_costs_reference_cpi >= 1.0 && c.hv_costs_reference_cpi.is_finite()) {
            return err(
                "host.costs.hv_costs_reference_cpi",
                format!("must be 0 (fixed hypervisor costs) or >= 1 (a CPI factor of the LLC pressure, 1 = no stall), got {}", Num(c.hv_costs_reference_cpi)),
            );
        }
        if !(c.llc_stall_at_capacity_ratio > 0.0) {
            return err("host.costs.hv_costs_reference_cpi", "needs llc_stall_at_capacity_ratio > 0 (the CPI it scales by comes from the LLC pressure)");
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Hypervisor

fn check_hypervisor(hv: &HypervisorSpec, schedulers: &[&str]) -> Res {
    if !schedulers.iter().any(|s| *s == hv.scheduler) {
        return err(
            "hypervisor.scheduler",
            format!(
                "unknown scheduler \"{}\"; known schedulers: {} (`vmsched list` describes them)",
                hv.scheduler,
                schedulers.join(", ")
            ),
        );
    }
    let ple = &hv.ple;
    if ple.window_cycles == 0 {
        return err("hypervisor.ple.window_cycles", "must be ≥ 1 cycle, got 0");
    }
    if ple.window_max_cycles < ple.window_cycles {
        return err(
            "hypervisor.ple.window_max_cycles",
            format!(
                "must be ≥ hypervisor.ple.window_cycles ({}), got {}",
                ple.window_cycles, ple.window_max_cycles
            ),
        );
    }
    if ple.grow == Some(0) {
        return err("hypervisor.ple.grow", "must be ≥ 1 (1 = fixed window, as in Xen), got 0");
    }
    if !ple.yield_to_kernel_mode && (!ple.enabled || ple.directed_yield == Some(false)) {
        return err(
            "hypervisor.ple.yield_to_kernel_mode",
            "picks the directed-yield target of a PLE exit; false has no effect with hypervisor.ple.enabled = false or hypervisor.ple.directed_yield = false",
        );
    }
    if !ple.boost_woken && (!ple.enabled || ple.directed_yield == Some(false)) {
        return err(
            "hypervisor.ple.boost_woken",
            "picks the directed-yield targets of a PLE exit; false has no effect with hypervisor.ple.enabled = false or hypervisor.ple.directed_yield = false",
        );
    }
    crate::hv::vipi::validate_timeslice(hv.vmm_timeslice_ms)?;
    crate::hv::halt_poll::validate(&hv.halt_poll)
}

// ---------------------------------------------------------------------------------------------
// VMs

/// Checks a VM; returns `Some(description)` if one of its workloads runs forever.
fn check_vm(i: usize, vm: &VmSpec, host: &HostFacts) -> Result<Option<String>, ScenarioError> {
    let p = format!("vms[{i}]");
    if vm.vcpus == 0 {
        return err(format!("{p}.vcpus"), "must be ≥ 1, got 0");
    }
    if vm.vcpus > MAX_VCPUS {
        return err(format!("{p}.vcpus"), format!("must be at most {MAX_VCPUS}, got {}", vm.vcpus));
    }
    if vm.weight == 0 || vm.weight > MAX_WEIGHT {
        return err(
            format!("{p}.weight"),
            format!("must be between 1 and {MAX_WEIGHT} (Xen credit's range; default 256), got {}", vm.weight),
        );
    }
    let max_cap = 100 * vm.vcpus as u64;
    if vm.cap_pct as u64 > max_cap {
        return err(
            format!("{p}.cap_pct"),
            format!(
                "must be ≤ {max_cap} (100% of one pCPU per vCPU × {} vCPUs; 0 = no cap), got {}",
                vm.vcpus, vm.cap_pct
            ),
        );
    }
    if let Some(pin) = &vm.pin {
        let pp = format!("{p}.pin");
        if pin.len() != vm.vcpus as usize {
            return err(
                pp,
                format!(
                    "must list one pCPU per vCPU: the VM has {} vCPUs but pin has {} entries",
                    vm.vcpus,
                    pin.len()
                ),
            );
        }
        if vm.vcpus as u64 > host.n_pcpus {
            return err(
                pp,
                format!(
                    "pins {} vCPUs but the host has only {} pCPUs; a VM cannot pin more vCPUs than \
                     there are pCPUs (remove `pin` or give the VM at most {} vCPUs)",
                    vm.vcpus, host.n_pcpus, host.n_pcpus
                ),
            );
        }
        check_pcpu_ids(&pp, pin, host.n_pcpus)?;
    }
    if let Some(cpus) = &vm.cpus {
        let pp = format!("{p}.cpus");
        if vm.pin.is_some() {
            return err(pp, "give either `pin` (one pCPU per vCPU) or `cpus` (one set for all vCPUs), not both".to_string());
        }
        if cpus.is_empty() {
            return err(pp, "must name at least one pCPU".to_string());
        }
        check_pcpu_ids(&pp, cpus, host.n_pcpus)?;
    }
    if vm.memory_node >= host.numa_nodes {
        return err(
            format!("{p}.memory_node"),
            format!(
                "NUMA node {} does not exist: the host has {} node(s) (0..={})",
                vm.memory_node,
                host.numa_nodes,
                host.numa_nodes - 1
            ),
        );
    }

    let g = &vm.guest;
    check_guest_period_us(&format!("{p}.guest.slice_us"), g.slice_us, "the guest scheduler's time slice")?;
    check_guest_period_us(&format!("{p}.guest.balance_interval_us"), g.balance_interval_us, "the load-balancing interval")?;
    check_guest_period_us(&format!("{p}.guest.tick_us"), g.tick_us, "the timer tick period")?;
    // An irq_vcpu that is offline is allowed: the guest routes its interrupts to an online
    // vCPU until it comes online (as Linux migrates IRQs on CPU hot-unplug).
    match g.online_vcpus {
        None => {}
        Some(0) => return err(format!("{p}.guest.online_vcpus"), "must be ≥ 1 (at least one vCPU must be online), got 0"),
        Some(n) if n > vm.vcpus => {
            return err(
                format!("{p}.guest.online_vcpus"),
                format!("must be ≤ vcpus ({}), got {n}", vm.vcpus),
            )
        }
        Some(_) => {}
    }
    if g.irq_vcpu >= vm.vcpus {
        return err(
            format!("{p}.guest.irq_vcpu"),
            format!("vCPU {} does not exist: the VM has {} vCPUs (0..={})", g.irq_vcpu, vm.vcpus, vm.vcpus - 1),
        );
    }
    // The 2.6.32 placements model a kernel without the wake list (TTWU_QUEUE came with 3.0).
    if g.wake_placement.is_2632() && g.ttwu_queue {
        return err(
            format!("{p}.guest.wake_placement"),
            "\"affine\" and \"affine_idle_sibling\" model Linux 2.6.32, which has no wake list: \
             set guest.ttwu_queue = false (a Linux 3.0+ feature) or wake_placement = \"prev_or_idle\"",
        );
    }
    if g.ttwu_rq_lock && g.ttwu_queue {
        return err(
            format!("{p}.guest.ttwu_rq_lock"),
            "a wake list (guest.ttwu_queue, Linux 3.0+) sends its reschedule IPI without the target's \
             runqueue lock: set one of the two to false",
        );
    }
    let pv = &g.paravirt;
    if pv.spinlock && g.spinlock != super::SpinlockKind::Queued {
        return err(
            format!("{p}.guest.paravirt.spinlock"),
            "paravirtual spinlocks are queued spinlocks (pv qspinlock): set guest.spinlock = \"queued\"",
        );
    }
    if pv.spin_loops == 0 || pv.spin_loops > 1 << 40 {
        return err(format!("{p}.guest.paravirt.spin_loops"), "must lie in 1..=2^40 PAUSE loops");
    }
    if pv.pause_cycles == 0 || pv.pause_cycles > 100_000 {
        return err(format!("{p}.guest.paravirt.pause_cycles"), "must lie in 1..=100000 cycles");
    }
    let hp = &g.hotplug;
    for (name, v) in [("kthread_park_ms", hp.kthread_park_ms), ("cpu_down_ms", hp.cpu_down_ms), ("cpu_up_ms", hp.cpu_up_ms)] {
        check_ms_or_zero(&format!("{p}.guest.hotplug.{name}"), v)?;
    }

    if vm.workloads.is_empty() {
        return err(format!("{p}.workloads"), "at least one workload is required (e.g. [[vms.workloads]] kind = \"hog\")");
    }
    let mut objs = Objects::default();
    let mut threads: u64 = 0;
    let mut forever: Option<String> = None;
    for (j, w) in vm.workloads.iter().enumerate() {
        let wp = format!("{p}.workloads[{j}]");
        let (n, f) = check_workload(&wp, &format!("w{j}"), vm, w, &mut objs)?;
        threads = threads.saturating_add(n);
        if threads > MAX_THREADS_PER_VM {
            return err(
                wp,
                format!(
                    "the VM's workloads start {threads} threads or more; at most {MAX_THREADS_PER_VM} per VM are supported"
                ),
            );
        }
        if forever.is_none() {
            forever = f;
        }
    }
    objs.check(&p)?;
    Ok(forever)
}

fn opt_threads(path: String, t: Option<u32>, vcpus: u32) -> Result<u64, ScenarioError> {
    match t {
        Some(0) => err(path, "must be ≥ 1 thread (leave it out for one thread per vCPU), got 0"),
        Some(n) => Ok(n as u64),
        None => Ok(vcpus as u64),
    }
}

/// Every entry of the pCPU list at `path` names a pCPU of the host.
fn check_pcpu_ids(path: &str, ids: &[u32], n_pcpus: u64) -> Res {
    for (k, &c) in ids.iter().enumerate() {
        if c as u64 >= n_pcpus {
            return err(format!("{path}[{k}]"), format!("pCPU {c} does not exist: the host has {n_pcpus} pCPUs (0..={})", n_pcpus - 1));
        }
    }
    Ok(())
}

fn check_affinity(path: &str, aff: &Option<Vec<u32>>, vcpus: u32) -> Res {
    if let Some(a) = aff {
        if a.is_empty() {
            return err(path, "must list at least one vCPU (leave it out to allow all vCPUs)");
        }
        for (k, &c) in a.iter().enumerate() {
            if c >= vcpus {
                return err(
                    format!("{path}[{k}]"),
                    format!("vCPU {c} does not exist: the VM has {vcpus} vCPUs (0..={})", vcpus - 1),
                );
            }
        }
    }
    Ok(())
}

/// Checks one workload; returns (threads started, Some(description) if it runs forever).
fn check_workload(wp: &str, tag: &str, vm: &VmSpec, w: &WorkloadSpec, objs: &mut Objects) -> Result<(u64, Option<String>), ScenarioError> {
    let vcpus = vm.vcpus;
    match w {
        WorkloadSpec::Hog { threads } => {
            let n = opt_threads(format!("{wp}.threads"), *threads, vcpus)?;
            Ok((n, Some(format!("{wp} runs forever (kind `hog` never ends)"))))
        }
        WorkloadSpec::Parallel(pp) => {
            let n = opt_threads(format!("{wp}.threads"), pp.threads, vcpus)?;
            if let Some(it) = pp.iterations {
                check_count(&format!("{wp}.iterations"), it, "iterations per thread; leave it out to run forever")?;
            }
            check_dist(&format!("{wp}.compute_us"), &pp.compute_us)?;
            check_dist(&format!("{wp}.cs_us"), &pp.cs_us)?;
            if pp.locks_per_iteration > MAX_LOCKS_PER_ITERATION {
                return err(
                    format!("{wp}.locks_per_iteration"),
                    format!(
                        "must be at most {MAX_LOCKS_PER_ITERATION} (each section is a step of the workers' program, \
                         held in memory), got {}",
                        pp.locks_per_iteration
                    ),
                );
            }
            if pp.locks == 0 && pp.locks_per_iteration > 0 {
                return err(
                    format!("{wp}.locks"),
                    "must be ≥ 1 when locks_per_iteration > 0 (the number of distinct spinlocks), got 0",
                );
            }
            check_us(&format!("{wp}.barrier_spin_us"), pp.barrier_spin_us)?;
            check_fraction(&format!("{wp}.mem_fraction"), pp.mem_fraction)?;
            if pp.barrier_every > 0 {
                objs.builtin_barrier(format!("{wp}.threads"), format!("{tag}.barrier"), n.min(u32::MAX as u64) as u32)?;
            }
            let f = pp
                .iterations
                .is_none()
                .then(|| format!("{wp} runs forever (kind `parallel` without `iterations`)"));
            Ok((n, f))
        }
        WorkloadSpec::Forkbench(fb) => {
            check_count(&format!("{wp}.forks"), fb.forks, "number of forks")?;
            check_us(&format!("{wp}.fork_us"), fb.fork_us)?;
            check_us(&format!("{wp}.child_us"), fb.child_us)?;
            Ok((1, None))
        }
        WorkloadSpec::Hackbench(hb) => {
            if hb.groups == 0 {
                return err(format!("{wp}.groups"), "must be ≥ 1 (sender/receiver groups), got 0");
            }
            if hb.fds == 0 {
                return err(format!("{wp}.fds"), "must be ≥ 1 (senders and receivers per group), got 0");
            }
            check_count(&format!("{wp}.loops"), hb.loops, "messages each sender sends to each receiver")?;
            check_us(&format!("{wp}.msg_us"), hb.msg_us)?;
            if let Some(r) = hb.recv_us {
                check_us(&format!("{wp}.recv_us"), r)?;
            }
            // Linux's floor on a socket's send buffer (include/net/sock.h `SOCK_MIN_SNDBUF`).
            if hb.sndbuf_bytes < 2048 {
                return err(
                    format!("{wp}.sndbuf_bytes"),
                    format!("must be ≥ 2048 bytes (Linux's SOCK_MIN_SNDBUF), got {}", hb.sndbuf_bytes),
                );
            }
            check_affinity(&format!("{wp}.affinity"), &hb.affinity, vcpus)?;
            check_affinity(&format!("{wp}.sender_affinity"), &hb.sender_affinity, vcpus)?;
            check_affinity(&format!("{wp}.receiver_affinity"), &hb.receiver_affinity, vcpus)?;
            // fds receivers and fds senders per group.
            let n = (hb.groups as u64).saturating_mul(hb.fds as u64).saturating_mul(2);
            Ok((n, None))
        }
        WorkloadSpec::Rambench(rb) => {
            if rb.mib == 0 {
                return err(format!("{wp}.mib"), "must be ≥ 1 MiB, got 0");
            }
            check_count(&format!("{wp}.passes"), rb.passes, "passes over the memory")?;
            check_us(&format!("{wp}.pass_us"), rb.pass_us)?;
            Ok((1, None))
        }
        WorkloadSpec::Kbuild(kb) => {
            let n = opt_threads(format!("{wp}.jobs"), kb.jobs, vcpus)?;
            check_count(&format!("{wp}.units"), kb.units, "compiler invocations")?;
            check_dist(&format!("{wp}.compile_us"), &kb.compile_us)?;
            check_us(&format!("{wp}.make_us"), kb.make_us)?;
            check_us(&format!("{wp}.helper_us"), kb.helper_us)?;
            check_us(&format!("{wp}.as_us"), kb.as_us)?;
            Ok((n + kb.has_serial_stages() as u64, None))
        }
        WorkloadSpec::Stream(st) => {
            let n = opt_threads(format!("{wp}.threads"), st.threads, vcpus)?;
            if st.array_kib == 0 {
                return err(format!("{wp}.array_kib"), "must be ≥ 1 KiB, got 0");
            }
            check_count(&format!("{wp}.iterations"), st.iterations, "iterations")?;
            check_us(&format!("{wp}.barrier_spin_us"), st.barrier_spin_us)?;
            if let Some(n) = st.ntimes {
                // stream.c: "the minimum value for NTIMES is 2" (the first pass is not counted).
                if n < 2 || n > st.iterations {
                    return err(format!("{wp}.ntimes"), format!("must be between 2 and iterations ({}), got {n}", st.iterations));
                }
            }
            if st.barrier {
                objs.builtin_barrier(format!("{wp}.threads"), format!("{tag}.barrier"), n.min(u32::MAX as u64) as u32)?;
            }
            check_finite(&format!("{wp}.ns_per_kib"), st.ns_per_kib)?;
            if st.ns_per_kib < 0.0 || st.ns_per_kib > 1e9 {
                return err(format!("{wp}.ns_per_kib"), format!("must be between 0 and 1e9 ns, got {}", Num(st.ns_per_kib)));
            }
            Ok((n, None))
        }
        WorkloadSpec::Server(sp) => {
            let n = opt_threads(format!("{wp}.threads"), sp.threads, vcpus)?;
            let rate = sp.rate();
            check_finite(&format!("{wp}.rate_per_s"), rate)?;
            if !(rate > 0.0 && rate <= 1e7) {
                return err(format!("{wp}.rate_per_s"), format!("must lie in (0, 1e7] requests per second, got {}", Num(rate)));
            }
            if let Some(d) = &sp.cpu_us {
                check_dist(&format!("{wp}.cpu_us"), d)?;
            }
            if let Some(d) = &sp.disk_us {
                check_dist(&format!("{wp}.disk_us"), d)?;
            }
            if sp.disk_ios.map_or(false, |k| k > 1000) {
                return err(format!("{wp}.disk_ios"), "must be ≤ 1000 I/Os per request");
            }
            if sp.port_io_exits.map_or(false, |k| k > 1000) {
                return err(format!("{wp}.port_io_exits"), "must be ≤ 1000 port I/O instructions per request");
            }
            objs.fed_ports.insert(format!("{tag}.requests"));
            Ok((n, Some(format!("{wp} runs forever (kind `server` serves requests until the end)"))))
        }
        WorkloadSpec::Epcc(ep) => {
            let n = opt_threads(format!("{wp}.threads"), ep.threads, vcpus)?;
            check_count(&format!("{wp}.innerreps"), ep.innerreps, "constructs timed")?;
            check_us(&format!("{wp}.delay_us"), ep.delay_us)?;
            check_us(&format!("{wp}.spin_us"), ep.spin_us)?;
            check_us(&format!("{wp}.combine_us"), ep.combine_us)?;
            let parties = n.min(u32::MAX as u64) as u32;
            let used: &[&str] = match ep.construct {
                crate::guest::workloads::EpccConstruct::Barrier => &["go", "bar"],
                crate::guest::workloads::EpccConstruct::Reduction => &["go", "dock", "join"],
                crate::guest::workloads::EpccConstruct::Critical => &["go"],
            };
            for b in used {
                objs.builtin_barrier(format!("{wp}.threads"), format!("{tag}.{b}"), parties)?;
            }
            Ok((n, None))
        }
        WorkloadSpec::Imb(im) => {
            let n = opt_threads(format!("{wp}.ranks"), im.ranks, vcpus)?;
            if n < 2 {
                return err(format!("{wp}.ranks"), format!("must be ≥ 2 (ranks exchange messages in a ring), got {n}"));
            }
            check_count(&format!("{wp}.reps"), im.reps, "timed repetitions")?;
            if im.msg_bytes == 0 || im.msg_bytes > 1 << 30 {
                return err(format!("{wp}.msg_bytes"), format!("must lie in 1 ..= 1073741824 bytes, got {}", im.msg_bytes));
            }
            check_us(&format!("{wp}.per_msg_us"), im.per_msg_us)?;
            check_finite(&format!("{wp}.copy_ns_per_kib"), im.copy_ns_per_kib)?;
            if im.copy_ns_per_kib < 0.0 || im.copy_ns_per_kib > 1e9 {
                return err(format!("{wp}.copy_ns_per_kib"), format!("must be between 0 and 1e9 ns, got {}", Num(im.copy_ns_per_kib)));
            }
            Ok((n, None))
        }
        WorkloadSpec::Custom { groups } => {
            if groups.is_empty() {
                return err(format!("{wp}.groups"), "at least one thread group is required");
            }
            let mut n: u64 = 0;
            let mut forever = None;
            for (k, g) in groups.iter().enumerate() {
                let gp = format!("{wp}.groups[{k}]");
                let f = check_group(&gp, vm, g, objs)?;
                n = n.saturating_add(g.threads as u64);
                if forever.is_none() {
                    forever = f.map(|at| format!("{wp} runs forever ({at} is a `forever` loop)"));
                }
            }
            Ok((n, forever))
        }
    }
}

fn check_group(gp: &str, vm: &VmSpec, g: &ThreadGroupSpec, objs: &mut Objects) -> Result<Option<String>, ScenarioError> {
    if g.threads == 0 {
        return err(format!("{gp}.threads"), "must be ≥ 1, got 0");
    }
    check_affinity(&format!("{gp}.affinity"), &g.affinity, vm.vcpus)?;
    if g.program.is_empty() {
        return err(format!("{gp}.program"), "must have at least one op (e.g. { op = \"compute\", us = 100 })");
    }
    let mut cx = OpCtx { fork_depth: 0, forever: None, barriers_here: BTreeSet::new() };
    check_ops(&format!("{gp}.program"), &g.program, &mut cx, objs)?;
    for b in cx.barriers_here {
        if let Some(u) = objs.barriers.get_mut(&b) {
            u.arrivals = u.arrivals.saturating_add(g.threads as u64);
        }
    }
    Ok(cx.forever)
}

// ---------------------------------------------------------------------------------------------
// Programs

struct OpCtx {
    /// > 0 inside a fork body.
    fork_depth: u32,
    /// Path of the first `forever` op seen.
    forever: Option<String>,
    /// Barriers reached by the group's own threads (outside fork bodies).
    barriers_here: BTreeSet<String>,
}

struct BarrierUse {
    parties: u32,
    /// Where `parties` was first given (for built-ins: the workload's thread count).
    path: String,
    /// Threads of groups that reach the barrier outside fork bodies.
    arrivals: u64,
    /// Also reached from a fork body (arrivals then cannot be counted statically).
    from_fork: bool,
}

/// Named objects of one VM's programs (names are per VM, see `guest::program`). Built-in
/// workloads name their objects `w{index}.…` (the tag `sim` gives them) and are consistent by
/// construction; their barriers are registered too, so that a custom barrier that happens to
/// reuse such a name is checked against them. (Built-in queues and locks are not tracked.)
#[derive(Default)]
struct Objects {
    barriers: BTreeMap<String, BarrierUse>,
    /// capacity and the path where it was first given.
    queues: BTreeMap<String, (u32, String)>,
    /// Per queue, its puts' `writable_at` and the first put that gave it.
    queue_writable: BTreeMap<String, (Option<u32>, String)>,
    puts: BTreeSet<String>,
    /// first `get` path per queue.
    gets: BTreeMap<String, String>,
    signals: BTreeSet<String>,
    /// first `cond_wait` path per condition variable.
    waits: BTreeMap<String, String>,
    /// ports fed by a `server` workload's arrivals.
    fed_ports: BTreeSet<String>,
    /// first `accept` path per port.
    accepts: BTreeMap<String, String>,
    /// first path of a plain `lock` op per lock name.
    plain_locks: BTreeMap<String, String>,
    /// spread and first path of a lock family (`lock` op with `spread` > 1) per name.
    lock_families: BTreeMap<String, (u32, String)>,
}

/// The lock family and index a lock name stands for if it is a family member's name, as
/// `guest::program::spread_member` writes it (`<family>.<k>`).
fn family_member(name: &str) -> Option<(&str, u32)> {
    let (f, k) = name.rsplit_once('.')?;
    let k: u32 = k.parse().ok()?;
    (crate::guest::program::spread_member(f, k) == name).then_some((f, k))
}

/// Most locks one `lock` op's family may have (`spread`).
const MAX_LOCK_SPREAD: u32 = 65_536;
/// Most spinlock sections in one iteration of a `parallel` workload: the iteration is laid out
/// section by section (`workloads::parallel`), so the bound keeps its program in memory.
/// The seed workloads use up to a few hundred (dedup, `reproduce/flexcore.py`).
const MAX_LOCKS_PER_ITERATION: u32 = 100_000;

impl Objects {
    /// A `lock` op: a plain lock, or a family of `spread` locks `<lock>.0 ..`, whose members
    /// must not also be taken by name and whose every op gives the same spread (the family's
    /// locks are numbered consecutively, guest/program.rs).
    fn lock(&mut self, path: &str, name: &str, spread: u32) -> Res {
        if spread == 0 || spread > MAX_LOCK_SPREAD {
            return err(format!("{path}.spread"), format!("must be 1 (one lock) to {MAX_LOCK_SPREAD} locks, got {spread}"));
        }
        if spread == 1 {
            if let Some((f, k)) = family_member(name) {
                if let Some((n, at)) = self.lock_families.get(f) {
                    if k < *n {
                        return err(
                            format!("{path}.lock"),
                            format!("\"{name}\" is a member of the lock family \"{f}\" (spread at {at}); give this lock another name"),
                        );
                    }
                }
            }
            self.plain_locks.entry(name.to_string()).or_insert_with(|| path.to_string());
            return Ok(());
        }
        match self.lock_families.get(name) {
            Some((k, at)) if *k != spread => {
                return err(
                    format!("{path}.spread"),
                    format!("the lock family \"{name}\" already has spread {k} (from {at}); every op on it must give the same, got {spread}"),
                )
            }
            Some(_) => return Ok(()),
            None => {}
        }
        for (m, at) in &self.plain_locks {
            if family_member(m).is_some_and(|(f, k)| f == name && k < spread) {
                return err(
                    format!("{path}.lock"),
                    format!("the family's member \"{m}\" is also taken as a plain lock (at {at}); give one of them another name"),
                );
            }
        }
        self.lock_families.insert(name.to_string(), (spread, path.to_string()));
        Ok(())
    }

    fn queue(&mut self, path: &str, name: &str, capacity: u32) -> Res {
        if capacity == 0 {
            return err(format!("{path}.capacity"), "must be ≥ 1 message, got 0");
        }
        match self.queues.get(name) {
            Some((c, first)) if *c != capacity => err(
                format!("{path}.capacity"),
                format!(
                    "queue \"{name}\" already has capacity {c} (from {first}); every put/get on one queue \
                     must give the same capacity (default 64), got {capacity}"
                ),
            ),
            Some(_) => Ok(()),
            None => {
                self.queues.insert(name.to_string(), (capacity, path.to_string()));
                Ok(())
            }
        }
    }

    /// A put's `writable_at`: below the capacity, and the same on every put of the queue.
    fn queue_writable_at(&mut self, path: &str, name: &str, capacity: u32, writable_at: Option<u32>) -> Res {
        if let Some(w) = writable_at {
            if w >= capacity {
                return err(
                    format!("{path}.writable_at"),
                    format!("must be below the queue's capacity ({capacity} messages), got {w}"),
                );
            }
        }
        match self.queue_writable.get(name) {
            Some((first_w, first)) if *first_w != writable_at => err(
                format!("{path}.writable_at"),
                format!(
                    "queue \"{name}\" already has writable_at {} (from {first}); every put on one queue \
                     must give the same, got {}",
                    first_w.map_or("none".to_string(), |w| w.to_string()),
                    writable_at.map_or("none".to_string(), |w| w.to_string())
                ),
            ),
            Some(_) => Ok(()),
            None => {
                self.queue_writable.insert(name.to_string(), (writable_at, path.to_string()));
                Ok(())
            }
        }
    }

    /// The barrier a built-in workload creates for all its `threads` threads.
    fn builtin_barrier(&mut self, threads_path: String, name: String, parties: u32) -> Res {
        match self.barriers.get_mut(&name) {
            Some(u) if u.parties != parties => err(
                threads_path,
                format!(
                    "this workload's built-in barrier \"{name}\" ({parties} parties, one per thread) has the \
                     same name as a custom barrier with {} parties (at {}); rename the custom barrier",
                    u.parties, u.path
                ),
            ),
            Some(u) => {
                u.arrivals = u.arrivals.saturating_add(parties as u64);
                Ok(())
            }
            None => {
                let u = BarrierUse { parties, path: threads_path, arrivals: parties as u64, from_fork: false };
                self.barriers.insert(name, u);
                Ok(())
            }
        }
    }

    /// Checks that need the whole VM: barriers that can never open, gets and waits that
    /// nothing can satisfy.
    fn check(&self, vp: &str) -> Res {
        for (name, u) in &self.barriers {
            if !u.from_fork && u.arrivals < u.parties as u64 {
                return err(
                    u.path.clone(),
                    format!(
                        "barrier \"{name}\" waits for {} threads but only {} thread(s) of {vp} ever reach it, \
                         so it would never open",
                        u.parties, u.arrivals
                    ),
                );
            }
        }
        for (name, path) in &self.gets {
            if !self.puts.contains(name) {
                return err(
                    format!("{path}.queue"),
                    format!("nothing in {vp} ever puts to queue \"{name}\", so this get would wait forever"),
                );
            }
        }
        for (name, path) in &self.accepts {
            if !self.fed_ports.contains(name) {
                return err(
                    format!("{path}.port"),
                    format!(
                        "no `server` workload of {vp} receives requests on port \"{name}\" (server workload j \
                         feeds port \"w<j>.requests\"), so this accept would wait forever"
                    ),
                );
            }
        }
        for (name, path) in &self.waits {
            if !self.signals.contains(name) {
                return err(
                    format!("{path}.cond"),
                    format!("nothing in {vp} ever signals condition \"{name}\", so this wait would block forever"),
                );
            }
        }
        Ok(())
    }
}

fn check_ops(path: &str, ops: &[OpSpec], cx: &mut OpCtx, objs: &mut Objects) -> Res {
    for (k, op) in ops.iter().enumerate() {
        let p = format!("{path}[{k}]");
        check_op(&p, op, cx, objs)?;
    }
    Ok(())
}

fn check_op(p: &str, op: &OpSpec, cx: &mut OpCtx, objs: &mut Objects) -> Res {
    match op {
        OpSpec::Compute { us, mem_fraction } => {
            check_dist(&format!("{p}.us"), us)?;
            check_fraction(&format!("{p}.mem_fraction"), *mem_fraction)
        }
        OpSpec::Lock { lock, cs_us, spread, .. } => {
            check_dist(&format!("{p}.cs_us"), cs_us)?;
            objs.lock(p, lock, *spread)
        }
        OpSpec::Mutex { cs_us, spin_us, .. } => {
            check_dist(&format!("{p}.cs_us"), cs_us)?;
            check_us(&format!("{p}.spin_us"), *spin_us)
        }
        OpSpec::Rwsem { sem, wait_lock_us, body, .. } => {
            if sem.is_empty() {
                return err(format!("{p}.sem"), "must be a non-empty name");
            }
            check_us(&format!("{p}.wait_lock_us"), *wait_lock_us)?;
            if *wait_lock_us > 0.0 {
                // Registered as a plain lock (its name cannot be a family member's: no number).
                objs.lock(p, &crate::guest::program::rwsem_wait_lock(sem), 1)?;
            }
            if body.is_empty() {
                return err(format!("{p}.body"), "must hold at least one op (the work done holding the semaphore)");
            }
            check_ops(&format!("{p}.body"), body, cx, objs)
        }
        OpSpec::Barrier { barrier, parties, spin_us } => {
            if *parties == 0 {
                return err(format!("{p}.parties"), "must be ≥ 1 (threads that meet at the barrier), got 0");
            }
            check_us(&format!("{p}.spin_us"), *spin_us)?;
            match objs.barriers.get_mut(barrier) {
                Some(u) if u.parties != *parties => {
                    return err(
                        format!("{p}.parties"),
                        format!(
                            "barrier \"{barrier}\" already has {} parties (at {}); every use of one barrier \
                             in a VM must give the same number, got {parties}",
                            u.parties, u.path
                        ),
                    )
                }
                Some(u) => u.from_fork |= cx.fork_depth > 0,
                None => {
                    objs.barriers.insert(
                        barrier.clone(),
                        BarrierUse {
                            parties: *parties,
                            path: format!("{p}.parties"),
                            arrivals: 0,
                            from_fork: cx.fork_depth > 0,
                        },
                    );
                }
            }
            if cx.fork_depth == 0 {
                cx.barriers_here.insert(barrier.clone());
            }
            Ok(())
        }
        OpSpec::Put { queue, capacity, writable_at, state_lock, .. } => {
            objs.queue(p, queue, *capacity)?;
            objs.queue_writable_at(p, queue, *capacity, *writable_at)?;
            if *state_lock {
                objs.lock(p, &crate::guest::program::queue_state_lock(queue), 1)?;
            }
            objs.puts.insert(queue.clone());
            Ok(())
        }
        OpSpec::Get { queue, capacity, state_lock } => {
            objs.queue(p, queue, *capacity)?;
            if *state_lock {
                objs.lock(p, &crate::guest::program::queue_state_lock(queue), 1)?;
            }
            objs.gets.entry(queue.clone()).or_insert_with(|| p.to_string());
            Ok(())
        }
        OpSpec::CondWait { cond } => {
            objs.waits.entry(cond.clone()).or_insert_with(|| p.to_string());
            Ok(())
        }
        OpSpec::CondSignal { cond } => {
            objs.signals.insert(cond.clone());
            Ok(())
        }
        OpSpec::Accept { port } => {
            objs.accepts.entry(port.clone()).or_insert_with(|| p.to_string());
            Ok(())
        }
        OpSpec::Respond => Ok(()),
        OpSpec::Shootdown { local_us } => check_us(&format!("{p}.local_us"), *local_us),
        OpSpec::CallAll | OpSpec::PortIo => Ok(()),
        OpSpec::Mark { mark } if mark.is_empty() => err(format!("{p}.mark"), "must be a non-empty name"),
        OpSpec::Mark { .. } => Ok(()),
        OpSpec::Io { us } | OpSpec::Sleep { us } => check_dist(&format!("{p}.us"), us),
        OpSpec::Fork { body, .. } => {
            cx.fork_depth += 1;
            let r = check_ops(&format!("{p}.body"), body, cx, objs);
            cx.fork_depth -= 1;
            r
        }
        OpSpec::Loop { count, body } => {
            check_count(&format!("{p}.count"), *count, "loop iterations")?;
            check_ops(&format!("{p}.body"), body, cx, objs)
        }
        OpSpec::Every { n, body } => {
            check_count(&format!("{p}.n"), *n, "run the body on every n-th pass; 1 = every pass")?;
            check_ops(&format!("{p}.body"), body, cx, objs)
        }
        OpSpec::Forever { body } => {
            if cx.forever.is_none() {
                cx.forever = Some(p.to_string());
            }
            if takes_no_time(body) {
                return err(
                    format!("{p}.body"),
                    "a `forever` loop must take simulated time on each pass (e.g. a compute with us > 0); \
                     this body takes none, so the simulation could never advance",
                );
            }
            check_ops(&format!("{p}.body"), body, cx, objs)
        }
    }
}

/// True if one pass through `ops` certainly takes no simulated time (only zero-length
/// compute/sleep/io/critical sections, and loops or forks of such). Ops that involve the guest
/// kernel or other threads (barriers, queues, condition variables, IPIs) count as taking time.
fn takes_no_time(ops: &[OpSpec]) -> bool {
    ops.iter().all(|op| match op {
        OpSpec::Compute { us, .. } | OpSpec::Io { us } | OpSpec::Sleep { us } => dist_is_zero(us),
        // Its exit's cost is the host's (`exit_io_ns`, which may be 0).
        OpSpec::Mark { .. } | OpSpec::PortIo => true,
        OpSpec::Lock { cs_us, .. } => dist_is_zero(cs_us),
        OpSpec::Mutex { cs_us, .. } => dist_is_zero(cs_us),
        // A semaphore another thread holds makes the op wait.
        OpSpec::Rwsem { .. } => false,
        OpSpec::Fork { body, .. } | OpSpec::Loop { body, .. } | OpSpec::Every { body, .. } | OpSpec::Forever { body } => {
            takes_no_time(body)
        }
        OpSpec::Barrier { .. }
        | OpSpec::Put { .. }
        | OpSpec::Get { .. }
        | OpSpec::CondWait { .. }
        | OpSpec::CondSignal { .. }
        | OpSpec::Accept { .. }
        | OpSpec::Respond
        | OpSpec::Shootdown { .. }
        | OpSpec::CallAll => false,
    })
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::super::{from_json_str, from_toml_str};
    use super::*;

    const HOST: &str = "[host]\nsockets = 1\ncores_per_socket = 4\n";

    /// A scenario with a 4-pCPU host and one VM whose table body is `vm` (TOML lines after
    /// `[[vms]]`, may add `[[vms.workloads]]` tables).
    fn one_vm(vm: &str) -> String {
        format!("duration_ms = 100\n{HOST}\n[[vms]]\n{vm}\n")
    }

    const HOG: &str = "[[vms.workloads]]\nkind = \"hog\"\n";

    /// Like `one_vm`, with extra tables (e.g. `[hypervisor]`) before the VM.
    fn with_tables(tables: &str, vm: &str) -> String {
        format!("duration_ms = 100\n{HOST}\n{tables}\n[[vms]]\n{vm}\n")
    }

    #[test]
    fn a_server_with_more_than_1000_port_io_instructions_per_request_is_rejected_by_name() {
        let server = |n: u32| {
            one_vm(&format!("vcpus = 1\n[[vms.workloads]]\nkind = \"server\"\nrole = \"db\"\nport_io_exits = {n}\n"))
        };
        accepted(&server(1000));
        let e = assert_path(&server(1001), "vms[0].workloads[0].port_io_exits");
        assert!(e.reason.contains("1000"), "{e}");
        // `port_io` is an op of its own in custom programs too.
        accepted(&custom("[{ op = \"port_io\" }, { op = \"compute\", us = 5 }]"));
    }

    #[test]
    fn a_queue_whose_writers_wake_at_or_above_its_capacity_is_rejected_by_name() {
        let put = |extra: &str| custom(&format!("[{{ op = \"put\", queue = \"q\", capacity = 8{extra} }}, {{ op = \"get\", queue = \"q\", capacity = 8 }}]"));
        accepted(&put(", writable_at = 7"));
        let e = assert_path(&put(", writable_at = 8"), "vms[0].workloads[0].groups[0].program[0].writable_at");
        assert!(e.reason.contains("capacity (8 messages)"), "{e}");
        let two = custom("[{ op = \"put\", queue = \"q\", writable_at = 2 }, { op = \"put\", queue = \"q\" }, { op = \"get\", queue = \"q\" }]");
        let e = assert_path(&two, "vms[0].workloads[0].groups[0].program[1].writable_at");
        assert!(e.reason.contains("already has writable_at 2"), "{e}");
        let hb = |b: u32| one_vm(&format!("vcpus = 2\n[[vms.workloads]]\nkind = \"hackbench\"\nsndbuf_bytes = {b}\n"));
        accepted(&hb(2048));
        let e = assert_path(&hb(2047), "vms[0].workloads[0].sndbuf_bytes");
        assert!(e.reason.contains("SOCK_MIN_SNDBUF"), "{e}");
    }

    fn custom(program: &str) -> String {
        one_vm(&format!("vcpus = 2\n[[vms.workloads]]\nkind = \"custom\"\ngroups = [ {{ threads = 2, program = {program} }} ]\n"))
    }

    fn rejected(text: &str) -> ScenarioError {
        match std::panic::catch_unwind(|| from_toml_str(text)) {
            Ok(Ok(_)) => panic!("expected an error for:\n{text}"),
            Ok(Err(e)) => {
                assert!(!e.reason.is_empty(), "empty reason for {e:?}");
                if !e.path.is_empty() {
                    assert_eq!(e.to_string(), format!("{}: {}", e.path, e.reason));
                }
                e
            }
            Err(_) => panic!("validation panicked for:\n{text}"),
        }
    }

    fn assert_path(text: &str, path: &str) -> ScenarioError {
        let e = rejected(text);
        assert_eq!(e.path, path, "wrong path; error was `{e}`");
        e
    }

    fn accepted(text: &str) -> Scenario {
        match from_toml_str(text) {
            Ok(sc) => sc,
            Err(e) => panic!("expected the scenario to be valid, got `{e}` for:\n{text}"),
        }
    }

    const FULL: &str = r#"
name = "full"
description = "every section"
seed = 7
duration_ms = 200
max_duration_ms = 1000

[host]
sockets = 2
cores_per_socket = 4
numa_nodes = 2
numa_distance = [[10, 21], [21, 10]]
cpu_ghz = 2.4
[host.costs]
world_switch_ns = 3000
same_socket_warmth = 0.5
cross_socket_refill_factor = 1.5
cache_evict_tau_ns = 2000000

[hypervisor]
scheduler = "cfs"
[hypervisor.ple]
enabled = true
window_cycles = 4096
grow = 2
shrink = 0
window_max_cycles = 65536
directed_yield = true
yield_to_kernel_mode = true

[[vms]]
name = "db"
vcpus = 4
weight = 512
cap_pct = 300
pin = [0, 1, 2, 3]
memory_node = 0
[vms.guest]
spinlock = "tas"
slice_us = 3000
balance_interval_us = 4000
tick_us = 4000
tickless = false
irq_vcpu = 1
online_vcpus = 2
[[vms.workloads]]
kind = "parallel"
threads = 4
iterations = 100
compute_us = { dist = "exp", mean_us = 40 }
cs_us = { dist = "uniform", min_us = 1, max_us = 3 }
locks = 2
locks_per_iteration = 2
shootdown_every = 5
barrier_every = 10
barrier_spin_us = 50
mem_fraction = 0.3
[[vms.workloads]]
kind = "custom"
groups = [
  { threads = 2, affinity = [0, 1], bind = true, working_set_kib = 64, program = [
      { op = "loop", count = 10, body = [
          { op = "compute", us = { dist = "lognormal", mean_us = 20, cv = 0.5 }, mem_fraction = 0.1 },
          { op = "lock", lock = "l", cs_us = 2 },
          { op = "mutex", mutex = "m", cs_us = 3, spin_us = 5 },
          { op = "barrier", barrier = "b", parties = 3, spin_us = 10 },
          { op = "put", queue = "q", capacity = 8 },
          { op = "cond_signal", cond = "c" },
          { op = "every", n = 3, body = [ { op = "shootdown", local_us = 1 }, { op = "call_all" } ] },
          { op = "fork", share_mm = false, wait = true, body = [ { op = "compute", us = 5 } ] },
      ] },
  ] },
  { threads = 1, program = [
      { op = "loop", count = 10, body = [
          { op = "barrier", barrier = "b", parties = 3 },
          { op = "get", queue = "q", capacity = 8 },
          { op = "get", queue = "q", capacity = 8 },
          { op = "cond_wait", cond = "c" },
          { op = "io", us = 100 },
          { op = "sleep", us = { dist = "fixed", us = 50 } },
      ] },
  ] },
]

[[vms]]
name = "web"
vcpus = 8
memory_node = 1
[[vms.workloads]]
kind = "hackbench"
groups = 2
fds = 4
loops = 10
affinity = [0]
[[vms.workloads]]
kind = "forkbench"
forks = 10
[[vms.workloads]]
kind = "rambench"
mib = 64
pattern = "sequential"
passes = 2
[[vms.workloads]]
kind = "kbuild"
jobs = 8
units = 20
[[vms.workloads]]
kind = "stream"
threads = 8
iterations = 5
[[vms.workloads]]
kind = "hog"
threads = 2
"#;

    // --- the whole thing -----------------------------------------------------------------

    #[test]
    fn valid_full_scenario_passes() {
        let sc = accepted(FULL);
        assert_eq!(sc.vms.len(), 2);
        // And the same scenario round-tripped through JSON (the Python path) passes too.
        let json = serde_json::to_string(&sc).unwrap();
        from_json_str(&json).expect("JSON round trip validates");
    }

    #[test]
    fn a_wrong_value_in_json_is_named_by_its_path_without_a_position() {
        let sc = accepted(FULL);
        let mut v: serde_json::Value = serde_json::to_value(&sc).unwrap();
        v["vms"][0]["vcpus"] = serde_json::json!("abc");
        let e = from_json_str(&v.to_string()).unwrap_err();
        assert_eq!(e.path, "vms[0].vcpus");
        assert!(!e.to_string().contains("line"), "`{e}`");
        let syntax = from_json_str("{\"name\": ").unwrap_err();
        assert!(syntax.to_string().contains("line 1"), "a syntax error keeps its place: `{syntax}`");
    }

    #[test]
    fn a_warm_up_that_outlasts_the_run_or_is_not_a_time_names_warmup_ms() {
        let e = assert_path(&format!("duration_ms = 100\nwarmup_ms = 100\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}"), "warmup_ms");
        assert!(e.reason.contains("duration_ms = 100"), "{e}");
        assert_path(&format!("duration_ms = 100\nwarmup_ms = -1\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}"), "warmup_ms");
        assert_path(&format!("duration_ms = 100\nwarmup_ms = nan\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}"), "warmup_ms");
        accepted(&format!("duration_ms = 100\nwarmup_ms = 99.5\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}"));
    }

    #[test]
    fn minimal_scenario_passes() {
        accepted(&one_vm(&format!("vcpus = 1\n{HOG}")));
    }

    #[test]
    fn validate_with_accepts_a_new_policy_name() {
        let mut sc = accepted(&one_vm(&format!("vcpus = 1\n{HOG}")));
        sc.hypervisor.scheduler = "fancy".into();
        assert_eq!(validate(&sc).unwrap_err().path, "hypervisor.scheduler");
        validate_with(&sc, &["credit", "fancy"]).expect("fancy is known here");
    }

    #[test]
    fn every_catalogued_scheduler_is_accepted() {
        for (name, _, _) in crate::hv::sched::catalog() {
            let text = with_tables(&format!("[hypervisor]\nscheduler = \"{name}\""), &format!("vcpus = 1\n{HOG}"));
            accepted(&text);
        }
    }

    // --- acceptance 8: parse errors -------------------------------------------------------

    #[test]
    fn missing_vcpus_names_the_vm() {
        let e = rejected(&one_vm(HOG));
        assert!(e.path.contains("vms[0]"), "{e}");
        assert!(e.reason.contains("vcpus"), "{e}");
    }

    #[test]
    fn missing_host_is_reported() {
        let e = rejected("duration_ms = 1\n[[vms]]\nvcpus = 1\n[[vms.workloads]]\nkind = \"hog\"\n");
        assert!(e.reason.contains("host"), "{e}");
    }

    #[test]
    fn wrong_type_for_vcpus_names_the_field() {
        let e = assert_path(&one_vm(&format!("vcpus = \"four\"\n{HOG}")), "vms[0].vcpus");
        assert!(e.reason.contains("integer") || e.reason.contains("invalid type"), "{e}");
    }

    #[test]
    fn negative_vcpus_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = -2\n{HOG}")), "vms[0].vcpus");
    }

    #[test]
    fn unknown_field_names_the_field() {
        let e = rejected(&one_vm(&format!("vcpus = 1\nvcpu = 2\n{HOG}")));
        assert!(e.reason.contains("vcpu"), "{e}");
        assert!(e.path.contains("vms[0]"), "{e}");
    }

    #[test]
    fn unknown_workload_kind_names_the_workload() {
        let e = rejected(&one_vm("vcpus = 1\n[[vms.workloads]]\nkind = \"bitcoin\"\n"));
        assert!(e.path.contains("vms[0].workloads[0]"), "{e}");
        assert!(e.reason.contains("bitcoin"), "{e}");
    }

    // --- acceptance 8: semantic errors ----------------------------------------------------

    #[test]
    fn negative_duration_names_the_field() {
        let text = format!("duration_ms = -5\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}");
        let e = assert_path(&text, "duration_ms");
        assert!(e.reason.contains("negative"), "{e}");
    }

    #[test]
    fn zero_duration_names_the_field() {
        let text = format!("duration_ms = 0\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}");
        assert_path(&text, "duration_ms");
    }

    #[test]
    fn nan_duration_names_the_field() {
        let text = format!("duration_ms = nan\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}");
        assert_path(&text, "duration_ms");
    }

    #[test]
    fn negative_max_duration_names_the_field() {
        let text = format!("max_duration_ms = -1.5\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}");
        assert_path(&text, "max_duration_ms");
    }

    #[test]
    fn unknown_scheduler_names_the_field_and_lists_the_known_ones() {
        let text = with_tables("[hypervisor]\nscheduler = \"bvt\"", &format!("vcpus = 1\n{HOG}"));
        let e = assert_path(&text, "hypervisor.scheduler");
        assert!(e.reason.contains("bvt") && e.reason.contains("credit"), "{e}");
    }

    #[test]
    fn zero_vcpus_names_the_field() {
        let e = assert_path(&one_vm(&format!("vcpus = 0\n{HOG}")), "vms[0].vcpus");
        assert!(e.reason.contains("≥ 1"), "{e}");
    }

    #[test]
    fn zero_vcpus_in_second_vm_names_that_vm() {
        let text = format!("{}\n[[vms]]\nvcpus = 0\n{HOG}", one_vm(&format!("vcpus = 1\n{HOG}")));
        assert_path(&text, "vms[1].vcpus");
    }

    #[test]
    fn too_many_vcpus_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 1025\n{HOG}")), "vms[0].vcpus");
    }

    #[test]
    fn more_pinned_vcpus_than_pcpus_names_the_pin() {
        // 4 pCPUs, 6 vCPUs all pinned.
        let e = assert_path(&one_vm(&format!("vcpus = 6\npin = [0, 1, 2, 3, 0, 1]\n{HOG}")), "vms[0].pin");
        assert!(e.reason.contains("6 vCPUs") && e.reason.contains("4 pCPUs"), "{e}");
    }

    #[test]
    fn more_vcpus_than_pcpus_without_pin_is_allowed() {
        accepted(&one_vm(&format!("vcpus = 8\n{HOG}")));
    }

    #[test]
    fn two_vcpus_of_one_vm_pinned_to_one_pcpu_is_allowed() {
        accepted(&one_vm(&format!("vcpus = 2\npin = [1, 1]\n{HOG}")));
    }

    #[test]
    fn several_vms_pinned_to_the_same_pcpus_is_allowed() {
        let vm = format!("vcpus = 4\npin = [0, 1, 2, 3]\n{HOG}");
        accepted(&format!("{}\n[[vms]]\n{vm}", one_vm(&vm)));
    }

    #[test]
    fn pcpu_index_out_of_range_names_the_entry() {
        let e = assert_path(&one_vm(&format!("vcpus = 2\npin = [0, 4]\n{HOG}")), "vms[0].pin[1]");
        assert!(e.reason.contains("pCPU 4"), "{e}");
    }

    #[test]
    fn cpus_out_of_range_or_with_pin_names_the_field() {
        let e = assert_path(&one_vm(&format!("vcpus = 2\ncpus = [1, 4]\n{HOG}")), "vms[0].cpus[1]");
        assert!(e.reason.contains("pCPU 4"), "{e}");
        assert_path(&one_vm(&format!("vcpus = 2\ncpus = []\n{HOG}")), "vms[0].cpus");
        assert_path(&one_vm(&format!("vcpus = 2\npin = [0, 1]\ncpus = [0, 1]\n{HOG}")), "vms[0].cpus");
        accepted(&one_vm(&format!("vcpus = 3\ncpus = [2, 3]\n{HOG}")));
    }

    #[test]
    fn pin_list_of_wrong_length_names_the_pin() {
        assert_path(&one_vm(&format!("vcpus = 3\npin = [0, 1]\n{HOG}")), "vms[0].pin");
    }

    #[test]
    fn bad_distribution_names_the_parameter() {
        let p = r#"[ { op = "loop", count = 2, body = [ { op = "compute", us = 1 }, { op = "compute", us = { dist = "exp", mean_us = -3 } } ] } ]"#;
        assert_path(&custom(p), "vms[0].workloads[0].groups[0].program[0].body[1].us.mean_us");
    }

    #[test]
    fn uniform_with_min_above_max_names_max() {
        let p = r#"[ { op = "compute", us = { dist = "uniform", min_us = 5, max_us = 2 } } ]"#;
        assert_path(&custom(p), "vms[0].workloads[0].groups[0].program[0].us.max_us");
    }

    #[test]
    fn lognormal_with_negative_cv_names_cv() {
        let p = r#"[ { op = "sleep", us = { dist = "lognormal", mean_us = 5, cv = -1 } } ]"#;
        assert_path(&custom(p), "vms[0].workloads[0].groups[0].program[0].us.cv");
    }

    #[test]
    fn negative_fixed_duration_names_the_field() {
        let p = r#"[ { op = "io", us = -1 } ]"#;
        assert_path(&custom(p), "vms[0].workloads[0].groups[0].program[0].us");
    }

    #[test]
    fn unknown_distribution_names_the_field() {
        let p = r#"[ { op = "compute", us = { dist = "pareto", mean_us = 5 } } ]"#;
        let e = rejected(&custom(p));
        // Parse errors inside a workload are reported at the workload (the `kind` tag makes
        // serde buffer the table, which loses the deeper path); the reason names the value.
        assert!(e.path.starts_with("vms[0].workloads[0]"), "{e}");
        assert!(e.reason.contains("pareto"), "{e}");
    }

    #[test]
    fn bad_parallel_compute_distribution_names_the_parameter() {
        let text = one_vm("vcpus = 2\n[[vms.workloads]]\nkind = \"parallel\"\ncompute_us = { dist = \"exp\", mean_us = 0 }\n");
        assert_path(&text, "vms[0].workloads[0].compute_us.mean_us");
    }

    // --- host -----------------------------------------------------------------------------

    fn with_host(host: &str) -> String {
        format!("duration_ms = 10\n[host]\n{host}\n[[vms]]\nvcpus = 1\n{HOG}")
    }

    #[test]
    fn zero_sockets_names_the_field() {
        assert_path(&with_host("sockets = 0\ncores_per_socket = 4"), "host.sockets");
    }

    #[test]
    fn zero_cores_names_the_field() {
        assert_path(&with_host("cores_per_socket = 0"), "host.cores_per_socket");
    }

    #[test]
    fn too_many_pcpus_is_rejected() {
        let e = assert_path(&with_host("sockets = 64\ncores_per_socket = 128"), "host.cores_per_socket");
        assert!(e.reason.contains("8192"), "{e}");
    }

    #[test]
    fn huge_topology_does_not_overflow() {
        assert_path(&with_host("sockets = 4294967295\ncores_per_socket = 4294967295"), "host.cores_per_socket");
    }

    #[test]
    fn zero_ghz_names_the_field() {
        assert_path(&with_host("cores_per_socket = 2\ncpu_ghz = 0"), "host.cpu_ghz");
    }

    #[test]
    fn a_clock_below_ten_megahertz_names_the_field() {
        let e = rejected(&with_host("cores_per_socket = 2\ncpu_ghz = 1e-300"));
        assert_eq!(e.path, "host.cpu_ghz");
        assert!(e.reason.starts_with("must be at least 0.01 GHz") && e.reason.ends_with("got 1e-300"), "{e}");
    }

    #[test]
    fn infinite_ghz_names_the_field() {
        assert_path(&with_host("cores_per_socket = 2\ncpu_ghz = inf"), "host.cpu_ghz");
    }

    #[test]
    fn more_numa_nodes_than_sockets_names_the_field() {
        assert_path(&with_host("sockets = 2\ncores_per_socket = 2\nnuma_nodes = 4"), "host.numa_nodes");
    }

    #[test]
    fn uneven_numa_nodes_names_the_field() {
        assert_path(&with_host("sockets = 3\ncores_per_socket = 2\nnuma_nodes = 2"), "host.numa_nodes");
    }

    #[test]
    fn zero_numa_nodes_names_the_field() {
        assert_path(&with_host("sockets = 2\ncores_per_socket = 2\nnuma_nodes = 0"), "host.numa_nodes");
    }

    #[test]
    fn numa_distance_with_wrong_row_count_names_the_table() {
        assert_path(&with_host("sockets = 2\ncores_per_socket = 2\nnuma_distance = [[10, 20]]"), "host.numa_distance");
    }

    #[test]
    fn numa_distance_with_short_row_names_the_row() {
        assert_path(
            &with_host("sockets = 2\ncores_per_socket = 2\nnuma_distance = [[10, 20], [20]]"),
            "host.numa_distance[1]",
        );
    }

    #[test]
    fn numa_distance_diagonal_must_be_ten() {
        assert_path(
            &with_host("sockets = 2\ncores_per_socket = 2\nnuma_distance = [[10, 20], [20, 12]]"),
            "host.numa_distance[1][1]",
        );
    }

    #[test]
    fn numa_distance_below_ten_names_the_entry() {
        assert_path(
            &with_host("sockets = 2\ncores_per_socket = 2\nnuma_distance = [[10, 20], [5, 10]]"),
            "host.numa_distance[1][0]",
        );
    }

    #[test]
    fn hv_cost_jitter_of_100_pct_or_negative_names_the_field() {
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nhv_cost_jitter_pct = 100"), "host.costs.hv_cost_jitter_pct");
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nhv_cost_jitter_pct = -1"), "host.costs.hv_cost_jitter_pct");
        assert!(from_toml_str(&with_host("cores_per_socket = 2\n[host.costs]\nhv_cost_jitter_pct = 5")).is_ok());
    }

    #[test]
    fn a_log_normal_cost_spread_is_bounded_and_exclusive_with_the_band() {
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nhv_cost_cv = 11"), "host.costs.hv_cost_cv");
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nhv_cost_cv = -0.5"), "host.costs.hv_cost_cv");
        let e = rejected(&with_host("cores_per_socket = 2\n[host.costs]\nhv_cost_cv = 0.5\nhv_cost_jitter_pct = 2"));
        assert!(e.reason.starts_with("cannot be combined"), "{e}");
        assert!(from_toml_str(&with_host("cores_per_socket = 2\n[host.costs]\nhv_cost_cv = 0.5")).is_ok());
    }

    #[test]
    fn warmth_above_one_names_the_cost() {
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nsame_socket_warmth = 1.5"),
            "host.costs.same_socket_warmth",
        );
    }

    #[test]
    fn refill_factor_below_one_names_the_cost() {
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\ncross_socket_refill_factor = 0.5"),
            "host.costs.cross_socket_refill_factor",
        );
    }

    #[test]
    fn a_private_cache_without_an_llc_refill_rate_names_the_rate() {
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nprivate_cache_kib = 256"),
            "host.costs.llc_refill_ns_per_mib",
        );
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nprivate_cache_kib = 256\nllc_refill_ns_per_mib = 200000"),
            "host.costs.llc_refill_ns_per_mib",
        );
    }

    #[test]
    fn an_llc_stall_without_an_llc_size_or_with_a_bad_exponent_names_the_field() {
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nllc_stall_at_capacity_ratio = 0.5"), "host.costs.llc_kib");
        // The hypervisor costs' reference CPI is a CPI factor (>= 1) of the LLC pressure.
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nllc_kib = 12288\nllc_stall_at_capacity_ratio = 0.5\nhv_costs_reference_cpi = 0.5"),
            "host.costs.hv_costs_reference_cpi",
        );
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nhv_costs_reference_cpi = 2.0"), "host.costs.hv_costs_reference_cpi");
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nllc_kib = 12288\nllc_stall_at_capacity_ratio = 0.5\nllc_miss_exponent = 0"),
            "host.costs.llc_miss_exponent",
        );
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nllc_kib = 12288\nllc_stall_at_capacity_ratio = 0.5\nllc_miss_exponent = 1.5"),
            "host.costs.llc_miss_exponent",
        );
    }

    #[test]
    fn a_tlb_stall_without_entries_or_with_a_bad_exponent_names_the_field() {
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\ntlb_stall_at_capacity_ratio = 0.5\ntlb_entries = 0"), "host.costs.tlb_entries");
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\ntlb_stall_at_capacity_ratio = 0.5\ntlb_miss_exponent = 0"),
            "host.costs.tlb_miss_exponent",
        );
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\ntlb_stall_at_capacity_ratio = 0.5\ntlb_miss_exponent = 1.5"),
            "host.costs.tlb_miss_exponent",
        );
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\ntlb_stall_at_capacity_ratio = -1"), "host.costs.tlb_stall_at_capacity_ratio");
        // A walk cost without the TLB model, or without its window, has no footprint to flush.
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\ntlb_walk_cycles = 100"), "host.costs.tlb_walk_cycles");
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\ntlb_stall_at_capacity_ratio = 0.5\nllc_window_ns = 0\ntlb_walk_cycles = 100"),
            "host.costs.tlb_walk_cycles",
        );
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\ntlb_walk_cycles = -1"), "host.costs.tlb_walk_cycles");
    }

    #[test]
    fn zero_evict_tau_names_the_cost() {
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\ncache_evict_tau_ns = 0"), "host.costs.cache_evict_tau_ns");
    }

    #[test]
    fn negative_numa_slowdown_names_the_cost() {
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nnuma_slowdown_per_distance = -1"),
            "host.costs.numa_slowdown_per_distance",
        );
    }

    #[test]
    fn nan_cost_names_the_cost() {
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nsame_socket_warmth = nan"), "host.costs.same_socket_warmth");
    }

    #[test]
    fn negative_cost_in_ns_names_the_cost() {
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nworld_switch_ns = -1"), "host.costs.world_switch_ns");
    }

    #[test]
    fn a_bad_eoi_exit_cost_names_the_field() {
        // The optional APIC-access (EOI) exit is a `*_ns` cost like the others: the naming
        // convention covers it (negative and absurd values).
        assert_path(&with_host("cores_per_socket = 2\n[host.costs]\nexit_apic_eoi_ns = -1"), "host.costs.exit_apic_eoi_ns");
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nexit_apic_eoi_ns = 2000000000000000"),
            "host.costs.exit_apic_eoi_ns",
        );
    }

    #[test]
    fn absurd_cost_in_ns_names_the_cost() {
        assert_path(
            &with_host("cores_per_socket = 2\n[host.costs]\nexit_ple_ns = 9223372036854775807"),
            "host.costs.exit_ple_ns",
        );
    }

    // --- hypervisor -----------------------------------------------------------------------

    fn with_ple(ple: &str) -> String {
        with_tables(&format!("[hypervisor.ple]\n{ple}"), &format!("vcpus = 1\n{HOG}"))
    }

    #[test]
    fn a_cap_under_a_scheduler_that_cannot_enforce_it_names_the_field() {
        for sched in ["gang", "rr"] {
            let text = with_tables(&format!("[hypervisor]\nscheduler = \"{sched}\""), &format!("vcpus = 2\ncap_pct = 50\n{HOG}"));
            let e = assert_path(&text, "vms[0].cap_pct");
            assert!(e.to_string().contains(sched), "{e}");
        }
        for sched in ["credit", "cfs", "balance", "relaxed_cosched", "flex"] {
            accepted(&with_tables(&format!("[hypervisor]\nscheduler = \"{sched}\""), &format!("vcpus = 2\ncap_pct = 50\n{HOG}")));
        }
    }

    #[test]
    fn unknown_scheduler_parameter_names_the_key() {
        let text = with_tables("[hypervisor]\nscheduler = \"credit\"\n[hypervisor.params]\ntimeslice = 5", &format!("vcpus = 1\n{HOG}"));
        assert_path(&text, "hypervisor.params.timeslice");
    }

    #[test]
    fn known_scheduler_parameter_is_accepted() {
        let text = with_tables("[hypervisor]\nscheduler = \"credit\"\n[hypervisor.params]\nratelimit_us = 0", &format!("vcpus = 1\n{HOG}"));
        accepted(&text);
    }

    #[test]
    fn zero_ple_window_names_the_field() {
        assert_path(&with_ple("window_cycles = 0"), "hypervisor.ple.window_cycles");
    }

    #[test]
    fn ple_window_max_below_window_names_the_field() {
        assert_path(&with_ple("window_cycles = 4096\nwindow_max_cycles = 100"), "hypervisor.ple.window_max_cycles");
    }

    #[test]
    fn zero_ple_grow_names_the_field() {
        assert_path(&with_ple("grow = 0"), "hypervisor.ple.grow");
    }

    #[test]
    fn yield_to_kernel_mode_names_the_field_when_mistyped_or_without_effect() {
        assert_path(&with_ple("yield_to_kernel_mode = 1"), "hypervisor.ple.yield_to_kernel_mode");
        assert_path(&with_ple("directed_yield = false\nyield_to_kernel_mode = false"), "hypervisor.ple.yield_to_kernel_mode");
        assert_path(&with_ple("enabled = false\nyield_to_kernel_mode = false"), "hypervisor.ple.yield_to_kernel_mode");
        let sc = accepted(&with_ple("yield_to_kernel_mode = false"));
        assert!(!sc.hypervisor.ple.yield_to_kernel_mode);
        assert!(accepted(&with_ple("window_cycles = 4096")).hypervisor.ple.yield_to_kernel_mode, "on by default");
        assert_path(&with_ple("boost_woken = \"yes\""), "hypervisor.ple.boost_woken");
        assert_path(&with_ple("enabled = false\nboost_woken = false"), "hypervisor.ple.boost_woken");
        assert!(!accepted(&with_ple("boost_woken = false")).hypervisor.ple.boost_woken);
        assert!(accepted(&with_ple("window_cycles = 4096")).hypervisor.ple.boost_woken, "on by default");
    }

    // --- VMs ------------------------------------------------------------------------------

    #[test]
    fn no_vms_is_rejected() {
        assert_path(&format!("duration_ms = 1\nvms = []\n{HOST}"), "vms");
    }

    #[test]
    fn zero_weight_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 1\nweight = 0\n{HOG}")), "vms[0].weight");
    }

    #[test]
    fn weight_above_xen_range_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 1\nweight = 65536\n{HOG}")), "vms[0].weight");
    }

    #[test]
    fn cap_above_vcpus_names_the_field() {
        let e = assert_path(&one_vm(&format!("vcpus = 2\ncap_pct = 250\n{HOG}")), "vms[0].cap_pct");
        assert!(e.reason.contains("200"), "{e}");
    }

    #[test]
    fn memory_node_out_of_range_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 1\nmemory_node = 1\n{HOG}")), "vms[0].memory_node");
    }

    #[test]
    fn name_clashing_with_a_default_name_is_rejected() {
        let named = format!("name = \"vm1\"\nvcpus = 1\n{HOG}");
        let unnamed = format!("vcpus = 1\n{HOG}");
        assert_path(&format!("{}\n[[vms]]\n{unnamed}", one_vm(&named)), "vms[1].name");
    }

    #[test]
    fn duplicate_vm_names_are_rejected() {
        let vm = format!("name = \"a\"\nvcpus = 1\n{HOG}");
        assert_path(&format!("{}\n[[vms]]\n{vm}", one_vm(&vm)), "vms[1].name");
    }

    #[test]
    fn irq_vcpu_out_of_range_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 2\n[vms.guest]\nirq_vcpu = 2\n{HOG}")), "vms[0].guest.irq_vcpu");
    }

    #[test]
    fn irq_vcpu_offline_at_start_is_allowed() {
        accepted(&one_vm(&format!("vcpus = 4\n[vms.guest]\nirq_vcpu = 3\nonline_vcpus = 2\n{HOG}")));
    }

    #[test]
    fn zero_online_vcpus_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 2\n[vms.guest]\nonline_vcpus = 0\n{HOG}")), "vms[0].guest.online_vcpus");
    }

    #[test]
    fn more_online_than_vcpus_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 2\n[vms.guest]\nonline_vcpus = 3\n{HOG}")), "vms[0].guest.online_vcpus");
    }

    #[test]
    fn a_2632_wake_placement_with_the_wake_list_names_the_field() {
        for wp in ["affine", "affine_idle_sibling"] {
            let e = assert_path(
                &one_vm(&format!("vcpus = 2\n[vms.guest]\nwake_placement = \"{wp}\"\nttwu_queue = true\n{HOG}")),
                "vms[0].guest.wake_placement",
            );
            assert!(e.to_string().contains("2.6.32"), "{e}");
            accepted(&one_vm(&format!("vcpus = 2\n[vms.guest]\nwake_placement = \"{wp}\"\n{HOG}")));
        }
        accepted(&one_vm(&format!("vcpus = 2\n[vms.guest]\nwake_placement = \"prev_or_idle\"\nttwu_queue = true\n{HOG}")));
    }

    #[test]
    fn an_unknown_wake_placement_names_the_field() {
        let e = rejected(&one_vm(&format!("vcpus = 2\n[vms.guest]\nwake_placement = \"idle\"\n{HOG}")));
        assert!(e.to_string().contains("wake_placement"), "{e}");
    }

    #[test]
    fn zero_guest_slice_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 2\n[vms.guest]\nslice_us = 0\n{HOG}")), "vms[0].guest.slice_us");
    }

    #[test]
    fn negative_balance_interval_names_the_field() {
        assert_path(
            &one_vm(&format!("vcpus = 2\n[vms.guest]\nbalance_interval_us = -4\n{HOG}")),
            "vms[0].guest.balance_interval_us",
        );
    }

    #[test]
    fn zero_tick_names_the_field() {
        assert_path(&one_vm(&format!("vcpus = 2\n[vms.guest]\ntick_us = 0\n{HOG}")), "vms[0].guest.tick_us");
    }

    #[test]
    fn a_guest_period_below_a_microsecond_names_the_field() {
        for f in ["slice_us", "balance_interval_us", "tick_us"] {
            let e = rejected(&one_vm(&format!("vcpus = 2\n[vms.guest]\n{f} = 0.001\n{HOG}")));
            assert_eq!(e.path, format!("vms[0].guest.{f}"), "{e}");
            assert!(e.reason.starts_with("must be at least 1 µs"), "{e}");
        }
    }

    #[test]
    fn vm_without_workloads_names_the_field() {
        assert_path(&one_vm("vcpus = 1\nworkloads = []"), "vms[0].workloads");
    }

    #[test]
    fn too_many_threads_names_the_workload() {
        let text = one_vm("vcpus = 1\n[[vms.workloads]]\nkind = \"hackbench\"\ngroups = 100000\nfds = 100000\n");
        assert_path(&text, "vms[0].workloads[0]");
    }

    // --- built-in workloads ---------------------------------------------------------------

    fn builtin(kind_and_params: &str) -> String {
        one_vm(&format!("vcpus = 2\n[[vms.workloads]]\n{kind_and_params}\n"))
    }

    #[test]
    fn zero_hog_threads_names_the_field() {
        assert_path(&builtin("kind = \"hog\"\nthreads = 0"), "vms[0].workloads[0].threads");
    }

    #[test]
    fn zero_parallel_iterations_names_the_field() {
        assert_path(&builtin("kind = \"parallel\"\niterations = 0"), "vms[0].workloads[0].iterations");
    }

    #[test]
    fn parallel_mem_fraction_above_one_names_the_field() {
        assert_path(&builtin("kind = \"parallel\"\nmem_fraction = 1.2"), "vms[0].workloads[0].mem_fraction");
    }

    #[test]
    fn a_lock_family_with_a_bad_spread_or_a_clashing_member_names_the_field() {
        assert_path(&custom(r#"[ { op = "lock", lock = "pt", cs_us = 1, spread = 0 } ]"#), "vms[0].workloads[0].groups[0].program[0].spread");
        // "pt.3" is member 3 of the family "pt" (spread 4), whichever op comes first.
        let clash = r#"[ { op = "lock", lock = "pt", cs_us = 1, spread = 4 }, { op = "lock", lock = "pt.3", cs_us = 1 } ]"#;
        assert_path(&custom(clash), "vms[0].workloads[0].groups[0].program[1].lock");
        let clash = r#"[ { op = "lock", lock = "pt.3", cs_us = 1 }, { op = "lock", lock = "pt", cs_us = 1, spread = 4 } ]"#;
        assert_path(&custom(clash), "vms[0].workloads[0].groups[0].program[1].lock");
        let two = r#"[ { op = "lock", lock = "pt", cs_us = 1, spread = 4 }, { op = "lock", lock = "pt", cs_us = 1, spread = 8 } ]"#;
        assert_path(&custom(two), "vms[0].workloads[0].groups[0].program[1].spread");
        accepted(&custom(r#"[ { op = "lock", lock = "pt", cs_us = 1, spread = 4 }, { op = "lock", lock = "pt", cs_us = 1, spread = 4 }, { op = "lock", lock = "pt.4", cs_us = 1 } ]"#));
    }

    #[test]
    fn parallel_with_zero_locks_names_the_field() {
        assert_path(&builtin("kind = \"parallel\"\nlocks = 0"), "vms[0].workloads[0].locks");
    }

    #[test]
    fn negative_barrier_spin_names_the_field() {
        assert_path(&builtin("kind = \"parallel\"\nbarrier_spin_us = -1"), "vms[0].workloads[0].barrier_spin_us");
    }

    #[test]
    fn zero_forks_names_the_field() {
        assert_path(&builtin("kind = \"forkbench\"\nforks = 0"), "vms[0].workloads[0].forks");
    }

    #[test]
    fn negative_fork_time_names_the_field() {
        assert_path(&builtin("kind = \"forkbench\"\nchild_us = -10"), "vms[0].workloads[0].child_us");
    }

    #[test]
    fn hackbench_zero_fds_names_the_field() {
        assert_path(&builtin("kind = \"hackbench\"\nfds = 0"), "vms[0].workloads[0].fds");
    }

    #[test]
    fn hackbench_affinity_out_of_range_names_the_entry() {
        assert_path(&builtin("kind = \"hackbench\"\naffinity = [0, 2]"), "vms[0].workloads[0].affinity[1]");
    }

    #[test]
    fn hackbench_role_affinity_out_of_range_or_empty_names_the_field() {
        assert_path(&builtin("kind = \"hackbench\"\nsender_affinity = [0]\nreceiver_affinity = [2]"), "vms[0].workloads[0].receiver_affinity[0]");
        assert_path(&builtin("kind = \"hackbench\"\nsender_affinity = []"), "vms[0].workloads[0].sender_affinity");
    }

    #[test]
    fn hackbench_empty_affinity_names_the_field() {
        assert_path(&builtin("kind = \"hackbench\"\naffinity = []"), "vms[0].workloads[0].affinity");
    }

    #[test]
    fn hackbench_huge_loops_do_not_overflow() {
        assert_path(&builtin("kind = \"hackbench\"\nloops = 9223372036854775807"), "vms[0].workloads[0].loops");
    }

    #[test]
    fn rambench_zero_passes_names_the_field() {
        assert_path(&builtin("kind = \"rambench\"\npasses = 0"), "vms[0].workloads[0].passes");
    }

    #[test]
    fn kbuild_zero_jobs_names_the_field() {
        assert_path(&builtin("kind = \"kbuild\"\njobs = 0"), "vms[0].workloads[0].jobs");
    }

    #[test]
    fn kbuild_bad_compile_distribution_names_the_parameter() {
        assert_path(
            &builtin("kind = \"kbuild\"\ncompile_us = { dist = \"lognormal\", mean_us = 0, cv = 1 }"),
            "vms[0].workloads[0].compile_us.mean_us",
        );
    }

    #[test]
    fn stream_zero_iterations_names_the_field() {
        assert_path(&builtin("kind = \"stream\"\niterations = 0"), "vms[0].workloads[0].iterations");
    }

    #[test]
    fn stream_ntimes_below_two_or_above_iterations_names_the_field() {
        assert_path(&builtin("kind = \"stream\"\nntimes = 1"), "vms[0].workloads[0].ntimes");
        assert_path(&builtin("kind = \"stream\"\niterations = 5\nntimes = 6"), "vms[0].workloads[0].ntimes");
    }

    #[test]
    fn stream_negative_ns_per_kib_names_the_field() {
        assert_path(&builtin("kind = \"stream\"\nns_per_kib = -1"), "vms[0].workloads[0].ns_per_kib");
    }

    // --- custom programs ------------------------------------------------------------------

    #[test]
    fn empty_groups_names_the_field() {
        assert_path(&builtin("kind = \"custom\"\ngroups = []"), "vms[0].workloads[0].groups");
    }

    #[test]
    fn zero_group_threads_names_the_field() {
        let text = builtin("kind = \"custom\"\ngroups = [ { threads = 0, program = [ { op = \"compute\", us = 1 } ] } ]");
        assert_path(&text, "vms[0].workloads[0].groups[0].threads");
    }

    #[test]
    fn empty_program_names_the_field() {
        assert_path(&custom("[]"), "vms[0].workloads[0].groups[0].program");
    }

    #[test]
    fn group_affinity_out_of_range_names_the_entry() {
        let text =
            builtin("kind = \"custom\"\ngroups = [ { affinity = [5], program = [ { op = \"compute\", us = 1 } ] } ]");
        assert_path(&text, "vms[0].workloads[0].groups[0].affinity[0]");
    }

    #[test]
    fn compute_mem_fraction_out_of_range_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "compute", us = 1, mem_fraction = -0.1 } ]"#),
            "vms[0].workloads[0].groups[0].program[0].mem_fraction",
        );
    }

    #[test]
    fn zero_loop_count_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "loop", count = 0, body = [ { op = "compute", us = 1 } ] } ]"#),
            "vms[0].workloads[0].groups[0].program[0].count",
        );
    }

    #[test]
    fn zero_every_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "every", n = 0, body = [ { op = "compute", us = 1 } ] } ]"#),
            "vms[0].workloads[0].groups[0].program[0].n",
        );
    }

    #[test]
    fn zero_barrier_parties_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "barrier", barrier = "b", parties = 0 } ]"#),
            "vms[0].workloads[0].groups[0].program[0].parties",
        );
    }

    #[test]
    fn inconsistent_barrier_parties_names_the_second_use() {
        assert_path(
            &custom(r#"[ { op = "barrier", barrier = "b", parties = 2 }, { op = "barrier", barrier = "b", parties = 3 } ]"#),
            "vms[0].workloads[0].groups[0].program[1].parties",
        );
    }

    #[test]
    fn barrier_that_never_opens_names_its_parties() {
        // Two threads, four parties.
        let e = assert_path(
            &custom(r#"[ { op = "barrier", barrier = "b", parties = 4 } ]"#),
            "vms[0].workloads[0].groups[0].program[0].parties",
        );
        assert!(e.reason.contains("never open"), "{e}");
    }

    #[test]
    fn barrier_shared_across_groups_counts_all_threads() {
        let text = builtin(
            r#"kind = "custom"
groups = [ { threads = 2, program = [ { op = "barrier", barrier = "b", parties = 3 } ] },
           { threads = 1, program = [ { op = "barrier", barrier = "b", parties = 3 } ] } ]"#,
        );
        accepted(&text);
    }

    #[test]
    fn barrier_in_fork_body_is_not_counted_statically() {
        accepted(&custom(
            r#"[ { op = "fork", wait = false, body = [ { op = "barrier", barrier = "b", parties = 8 } ] },
                 { op = "barrier", barrier = "b", parties = 8 } ]"#,
        ));
    }

    #[test]
    fn custom_barrier_clashing_with_a_builtin_one_is_rejected() {
        // workloads[0] is a `stream` with 2 threads, whose barrier is called "w0.barrier".
        let text = one_vm(
            "vcpus = 2\n[[vms.workloads]]\nkind = \"stream\"\n[[vms.workloads]]\nkind = \"custom\"\n\
             groups = [ { threads = 3, program = [ { op = \"barrier\", barrier = \"w0.barrier\", parties = 3 } ] } ]",
        );
        assert_path(&text, "vms[0].workloads[1].groups[0].program[0].parties");
    }

    #[test]
    fn bad_rwsem_ops_name_the_field() {
        let base = "vms[0].workloads[0].groups[0].program[0]";
        let body = r#"[ { op = "compute", us = 1 } ]"#;
        assert_path(&custom(&format!(r#"[ {{ op = "rwsem", sem = "", body = {body} }} ]"#)), &format!("{base}.sem"));
        assert_path(&custom(&format!(r#"[ {{ op = "rwsem", sem = "mm", wait_lock_us = -1, body = {body} }} ]"#)), &format!("{base}.wait_lock_us"));
        assert_path(&custom(r#"[ { op = "rwsem", sem = "mm", write = true, body = [] } ]"#), &format!("{base}.body"));
        assert_path(&custom(r#"[ { op = "rwsem", sem = "mm", body = [ { op = "compute", us = -1 } ] } ]"#), &format!("{base}.body[0].us"));
        accepted(&custom(&format!(r#"[ {{ op = "rwsem", sem = "mm", write = true, wait_lock_us = 0.5, body = {body} }} ]"#)));
    }

    #[test]
    fn negative_spin_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "mutex", mutex = "m", cs_us = 1, spin_us = -2 } ]"#),
            "vms[0].workloads[0].groups[0].program[0].spin_us",
        );
    }

    #[test]
    fn zero_queue_capacity_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "put", queue = "q", capacity = 0 } ]"#),
            "vms[0].workloads[0].groups[0].program[0].capacity",
        );
    }

    #[test]
    fn inconsistent_queue_capacity_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "put", queue = "q", capacity = 4 }, { op = "get", queue = "q" } ]"#),
            "vms[0].workloads[0].groups[0].program[1].capacity",
        );
    }

    #[test]
    fn get_without_put_names_the_queue() {
        assert_path(&custom(r#"[ { op = "get", queue = "q" } ]"#), "vms[0].workloads[0].groups[0].program[0].queue");
    }

    #[test]
    fn cond_wait_without_signal_names_the_cond() {
        assert_path(&custom(r#"[ { op = "cond_wait", cond = "c" } ]"#), "vms[0].workloads[0].groups[0].program[0].cond");
    }

    #[test]
    fn negative_shootdown_time_names_the_field() {
        assert_path(
            &custom(r#"[ { op = "shootdown", local_us = -1 } ]"#),
            "vms[0].workloads[0].groups[0].program[0].local_us",
        );
    }

    #[test]
    fn fork_body_is_validated_with_its_path() {
        assert_path(
            &custom(r#"[ { op = "loop", count = 3, body = [ { op = "fork", body = [ { op = "sleep", us = -1 } ] } ] } ]"#),
            "vms[0].workloads[0].groups[0].program[0].body[0].body[0].us",
        );
    }

    #[test]
    fn zero_time_forever_loop_is_rejected() {
        assert_path(
            &custom(r#"[ { op = "forever", body = [ { op = "compute", us = 0 } ] } ]"#),
            "vms[0].workloads[0].groups[0].program[0].body",
        );
    }

    #[test]
    fn unknown_op_names_the_program_entry() {
        let e = rejected(&custom(r#"[ { op = "teleport" } ]"#));
        assert!(e.path.starts_with("vms[0].workloads[0]"), "{e}");
        assert!(e.reason.contains("teleport"), "{e}");
    }

    #[test]
    fn locks_per_iteration_beyond_what_a_program_can_hold_names_the_field() {
        let e = rejected(&builtin("kind = \"parallel\"\niterations = 10\nlocks_per_iteration = 2147483648"));
        assert_eq!(e.path, "vms[0].workloads[0].locks_per_iteration", "{e}");
        let e = rejected(&builtin("kind = \"parallel\"\niterations = 10\nlocks_per_iteration = 100001"));
        assert!(e.reason.starts_with("must be at most 100000"), "{e}");
        accepted(&builtin("kind = \"parallel\"\niterations = 10\nlocks_per_iteration = 100000"));
    }

    #[test]
    fn wrong_type_inside_a_workload_names_the_field() {
        let e = rejected(&builtin("kind = \"parallel\"\nthreads = \"many\""));
        assert_eq!(e.path, "vms[0].workloads[0].threads", "{e}");
    }

    // --- run to completion ----------------------------------------------------------------

    fn no_duration(vm: &str) -> String {
        format!("{HOST}\n[[vms]]\nvcpus = 2\n{vm}\n")
    }

    #[test]
    fn hog_without_duration_requires_duration() {
        let e = assert_path(&no_duration(HOG), "duration_ms");
        assert!(e.reason.contains("vms[0].workloads[0] runs forever"), "{e}");
    }

    #[test]
    fn parallel_without_iterations_requires_duration() {
        let text = format!(
            "{HOST}\n[[vms]]\nvcpus = 1\n[[vms.workloads]]\nkind = \"forkbench\"\n[[vms]]\nvcpus = 2\n\
             [[vms.workloads]]\nkind = \"stream\"\n[[vms.workloads]]\nkind = \"parallel\"\n"
        );
        let e = assert_path(&text, "duration_ms");
        assert!(e.reason.contains("vms[1].workloads[1]"), "{e}");
    }

    #[test]
    fn forever_op_without_duration_requires_duration() {
        let text = no_duration(
            "[[vms.workloads]]\nkind = \"custom\"\ngroups = [ { program = [ { op = \"loop\", count = 2, body = [ \
             { op = \"fork\", body = [ { op = \"forever\", body = [ { op = \"compute\", us = 5 } ] } ] } ] } ] } ]",
        );
        let e = assert_path(&text, "duration_ms");
        assert!(e.reason.contains("program[0].body[0].body[0]"), "{e}");
    }

    #[test]
    fn stop_when_finite_done_without_a_finite_vm_names_the_field() {
        let text = format!("stop = \"finite_done\"\nduration_ms = 100\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}\n[[vms]]\nvcpus = 1\n{HOG}");
        let e = assert_path(&text, "stop");
        assert!(e.reason.contains("vms[0].workloads[0] runs forever"), "{e}");
    }

    #[test]
    fn stop_when_finite_done_needs_no_duration_beside_an_endless_vm() {
        let sc = accepted(&format!(
            "stop = \"finite_done\"\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}\n[[vms]]\nvcpus = 1\n\
             [[vms.workloads]]\nkind = \"parallel\"\niterations = 10\n"
        ));
        assert_eq!(sc.stop, StopRule::FiniteDone);
    }

    #[test]
    fn an_unknown_stop_rule_names_the_field() {
        let e = assert_path(&format!("stop = \"never\"\nduration_ms = 10\n{HOST}\n[[vms]]\nvcpus = 1\n{HOG}"), "stop");
        assert!(e.reason.contains("finite_done"), "{e}");
    }

    #[test]
    fn finite_workloads_run_to_completion_without_duration() {
        accepted(&no_duration(
            "[[vms.workloads]]\nkind = \"parallel\"\niterations = 10\n[[vms.workloads]]\nkind = \"kbuild\"\n",
        ));
    }

    #[test]
    fn shipped_scenarios_are_valid() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                if let Err(err) = from_toml_str(&text) {
                    panic!("{}: {err}", path.display());
                }
            }
        }
    }

    // --- robustness -----------------------------------------------------------------------

    /// Replaces every number in the full scenario, one at a time, by awkward values; parsing
    /// and validation must return (Ok or a path-named error) without panicking.
    #[test]
    fn awkward_numbers_never_panic() {
        let awkward = ["0", "-1", "-0.5", "1.5", "nan", "inf", "-inf", "1e300", "4294967296", "18446744073709551615", "9223372036854775807"];
        let bytes = FULL.as_bytes();
        // Every numeric token: starts with a digit or '-' right after ' ', '[' or '=', and
        // runs over digits, '.', 'e', '+', '-' (also finds the entries of pin, affinity and
        // numa_distance arrays).
        let mut spans = Vec::new();
        let mut i = 1;
        while i < bytes.len() {
            let starts = (bytes[i].is_ascii_digit() || bytes[i] == b'-') && matches!(bytes[i - 1], b' ' | b'[' | b'=');
            if starts {
                let mut end = i + 1;
                while end < bytes.len() && matches!(bytes[end], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' | b'_') {
                    end += 1;
                }
                spans.push((i, end));
                i = end;
            } else {
                i += 1;
            }
        }
        assert!(spans.len() > 80, "found only {} numbers", spans.len());
        let mut checked = 0;
        for &(s, e) in &spans {
            for v in awkward {
                let text = format!("{}{}{}", &FULL[..s], v, &FULL[e..]);
                let r = std::panic::catch_unwind(|| from_toml_str(&text));
                match r {
                    Ok(Ok(_)) => {}
                    Ok(Err(err)) => assert!(!err.reason.is_empty()),
                    Err(_) => panic!("panicked with {v} at byte {s} ({})", &FULL[s..e]),
                }
                checked += 1;
            }
        }
        assert!(checked > 800);
    }
}
