//! The hypervisor scheduler interface (data plane) and its registry. One file per policy.
//!
//! The hooks mirror a real hypervisor scheduler's (Xen `struct scheduler` in
//! `xen/common/sched/private.h`; Linux `struct sched_class`): wake, sleep, do_schedule (pick
//! next for a pCPU and its slice), yield and directed yield, its own timers (ticks,
//! accounting), pause-loop exits, and changes of weight/cap/online vCPUs. A policy never
//! touches simulator internals: it reads a `SchedView` and asks for effects (tickle a pCPU,
//! arm a timer) through it.

pub mod balance;
pub mod cfs;
pub mod cfs_bandwidth;
pub mod credit;
pub mod credit2;
pub mod csrc;
pub mod gang;
pub mod relaxed_cosched;
pub mod dp;
pub mod flexs;
pub mod flexw;
pub mod rr;
pub mod switch_causes;
#[cfg(test)]
pub(crate) mod testkit;

use std::collections::BTreeMap;

use crate::engine::Ns;
use crate::host::Topology;
use crate::hv::perfcounters::PmuCounters;
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId, VmId};

/// Read-only facts about one vCPU that a policy may use.
#[derive(Debug, Clone, Copy)]
pub struct VcpuFacts {
    pub vm: VmId,
    pub idx: u32,
    pub run: RunState,
    pub last_pcpu: PcpuId,
    /// KVM's view: descheduled while runnable (`vcpu->preempted`/`ready`).
    pub preempted: bool,
    pub preempted_in_kernel: bool,
    /// Woken from halt since it last ran by something KVM's `kvm_arch_dy_runnable` sees: an
    /// accepted interrupt (`KVM_REQ_EVENT`) or a pv kick (`pv.pv_unhalted`); not a LAPIC timer
    /// (`KVM_REQ_UNBLOCK`). Cleared when it runs.
    pub dy_runnable: bool,
    /// Descheduled while runnable with a posted interrupt outstanding (`vipi_delivery =
    /// "posted"`: the PI descriptor's ON bit, synced into the vIRR at its next VM entry), which
    /// KVM's `kvm_arch_dy_has_pending_interrupt` sees (Linux 5.3+, APICv only).
    pub pi_pending: bool,
    /// Spinning in a PLE-visible loop right now.
    pub spinning: bool,
    /// Affinity coefficient (0-100) the guest published at its last context switch on this
    /// vCPU (seed 003 §3.3, `guest::affinity`); 50 until then.
    pub ac_pct: u8,
    /// Cumulative virtual-PMU counts (`hv/perfcounters.rs`); all zero unless the policy
    /// `reads_pmu`. Up to date at its decisions and timers.
    pub pmu: PmuCounters,
    /// Until when it is in its last pCPU's scheduling tail (Xen's `is_running` still set):
    /// switched out while runnable by a full switch, its state is saved only at the end of
    /// that switch (`context_saved`); `World::schedule` sets it, 0 when not switched out so.
    pub sched_tail_until: Ns,
}

#[derive(Debug, Clone)]
pub struct VmFacts {
    pub weight: u32,
    pub cap_pct: u32,
    pub vcpus: Vec<VcpuId>,
}

/// Effects a policy asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedRequest {
    /// Run the scheduler on this pCPU soon (a physical IPI if remote).
    Tickle(PcpuId),
    /// Call `timer(id)` at this time.
    Timer { id: u64, at: Ns },
}

pub struct SchedView<'a> {
    pub now: Ns,
    pub topo: &'a Topology,
    pub vcpus: &'a [VcpuFacts],
    pub vms: &'a [VmFacts],
    /// Hard affinity per vCPU (`None` = all pCPUs).
    pub affinity: &'a [Option<Vec<PcpuId>>],
    /// The vCPU each pCPU runs now.
    pub pcpu_cur: &'a [Option<VcpuId>],
    pub requests: &'a mut Vec<SchedRequest>,
}

impl<'a> SchedView<'a> {
    pub fn n_pcpus(&self) -> usize {
        self.pcpu_cur.len()
    }
    pub fn allowed(&self, v: VcpuId, p: PcpuId) -> bool {
        self.affinity[v].as_ref().map_or(true, |a| a.contains(&p))
    }
    pub fn tickle(&mut self, p: PcpuId) {
        self.requests.push(SchedRequest::Tickle(p));
    }
    pub fn arm(&mut self, id: u64, at: Ns) {
        self.requests.push(SchedRequest::Timer { id, at });
    }
    pub fn is_idle(&self, p: PcpuId) -> bool {
        self.pcpu_cur[p].is_none()
    }
}

/// What `do_schedule` decided for a pCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub next: Option<VcpuId>,
    /// When to call the scheduler again on this pCPU (None: only on an event).
    pub slice_ns: Option<Ns>,
}

/// Why `do_schedule` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Slice timer expired, or a tickle.
    Timer,
    /// The current vCPU blocked (HLT) or went offline.
    Block,
    /// The current vCPU yields (PLE exit, `SCHEDOP_yield`).
    Yield,
    /// Tasklet work is queued on this pCPU and runs in the idle vCPU's context: the policy
    /// must return `next: None` (Xen `csched_schedule`: "tasklet work overrides all else").
    Tasklet,
}

/// Where a pCPU runs tasklet work such as the pass-through interrupt tasklet
/// (`hvm_dirq_assist`); see `hv/tasklet.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskletMode {
    /// Xen 4.1 `tasklet_init`: in the idle vCPU's context, reached through the scheduler.
    IdleVcpu,
    /// `softirq_tasklet_init`: in softirq context on the interrupted pCPU, no switch.
    Softirq,
}

pub trait HvScheduler: Send {
    fn name(&self) -> &'static str;
    /// Called once before the run with all vCPUs blocked or offline.
    fn init(&mut self, view: &mut SchedView);
    /// `v` became runnable (woken from HLT, or brought online). It is not running.
    fn wake(&mut self, view: &mut SchedView, v: VcpuId);
    /// `v` stopped being runnable while queued (not running): drop it from runqueues.
    fn sleep(&mut self, view: &mut SchedView, v: VcpuId);
    /// Pick what pCPU `p` runs next. `prev` is the vCPU that ran there (if any) and whether it
    /// is still runnable; a runnable `prev` that is not picked must be queued again.
    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision;
    /// A timer armed with `SchedView::arm` fired.
    fn timer(&mut self, _view: &mut SchedView, _id: u64) {}
    /// A pause-loop exit of running vCPU `v`. Return true to reschedule its pCPU with
    /// `Reason::Yield`.
    fn pause_exit(&mut self, view: &mut SchedView, v: VcpuId) -> bool;
    /// A virtual interrupt is now pending for `v`, which is runnable but descheduled. A policy
    /// may boost it (e.g. tickle a pCPU for it); by default it waits for its turn.
    fn vipi_pending(&mut self, _view: &mut SchedView, _v: VcpuId) {}
    /// Directed yield from running vCPU `me` to `target` (KVM `kvm_sched_yield` after a pv
    /// kick or a pv sched-yield hypercall). Return true if `me` should yield its pCPU.
    fn directed_yield(&mut self, _view: &mut SchedView, _me: VcpuId, _target: VcpuId) -> bool {
        false
    }
    /// How this hypervisor runs tasklet work (pass-through interrupt bottom halves).
    fn tasklet_mode(&self) -> TaskletMode {
        TaskletMode::Softirq
    }
    /// Whether a wake-up that a running vCPU's code raises in an exit (a wake-up IPI to a
    /// halted vCPU) takes effect when the exit's handling ends, so that a reschedule it asks
    /// of the waker's own pCPU runs before a tickled idler's (`hv::machine`
    /// `wake_after_exit`). Xen 3.4/4.1 credit (`wake = "xen34"`, `"xen41"`), which tickles
    /// both the woken vCPU's busy pCPU and an idler, says yes; elsewhere the woken vCPU goes
    /// to an idle pCPU directly and the wake-up takes effect at the exit.
    fn wakes_after_exit(&self) -> bool {
        false
    }
    /// Whether the hypervisor switches lazily (`hv::lazy_switch`: Xen's `context_switch` keeps
    /// a vCPU's state loaded across a switch to the idle vCPU). Xen's schedulers take it from
    /// `hypervisor.params.lazy_context_switch`.
    fn lazy_context_switch(&self) -> bool {
        false
    }
    /// Whether PLE windows grow on each exit by default (KVM: yes; Xen: fixed window).
    fn ple_grows_by_default(&self) -> bool {
        false
    }
    /// Whether KVM halt polling is on by default (`hv::halt_poll`; KVM: yes; Xen: no).
    fn halt_polls_by_default(&self) -> bool {
        false
    }
    /// No other task is queued on pCPU `p` (Linux `single_task_running()`, which stops KVM's
    /// halt-poll loop). Policies without a per-pCPU queue answer true.
    fn single_task_running(&self, _p: PcpuId) -> bool {
        true
    }
    /// Directed-yield statistics: (attempted, successful).
    fn yield_stats(&self) -> (u64, u64) {
        (0, 0)
    }
    /// Policy-specific event counts (name, count), reported in `totals.scheduler_counters`.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Whether the policy reads the virtual PMU (`VcpuFacts::pmu`): the machine then synthesises
    /// the counters and brings those of running vCPUs up to date before each `timer` call.
    fn reads_pmu(&self) -> bool {
        false
    }
    /// Whether the policy enforces `VmFacts::cap_pct` (Xen caps, CFS bandwidth). Scenarios that
    /// set `vms[].cap_pct` under a policy that does not are rejected.
    fn enforces_caps(&self) -> bool {
        false
    }
    /// The scenario's seed, once before `init`, for policies that draw random numbers (streams
    /// named by identity, `engine::rng`).
    fn set_seed(&mut self, _seed: u64) {}
}

/// Writes the listed `HvScheduler` hooks of a layered policy (one built over `credit` or `cfs`)
/// as plain calls to the policy it wraps, held in field `$inner`. A layer lists every hook it
/// leaves unchanged, so none is dropped by accident; hooks it changes it writes out.
macro_rules! forward_hooks {
    ($inner:ident: $($hook:ident),+ $(,)?) => { $( forward_hooks!(@ $inner $hook); )+ };
    (@ $i:ident pause_exit) => {
        fn pause_exit(&mut self, view: &mut SchedView, v: VcpuId) -> bool { self.$i.pause_exit(view, v) }
    };
    (@ $i:ident vipi_pending) => {
        fn vipi_pending(&mut self, view: &mut SchedView, v: VcpuId) { self.$i.vipi_pending(view, v) }
    };
    (@ $i:ident directed_yield) => {
        fn directed_yield(&mut self, view: &mut SchedView, me: VcpuId, target: VcpuId) -> bool {
            self.$i.directed_yield(view, me, target)
        }
    };
    (@ $i:ident tasklet_mode) => {
        fn tasklet_mode(&self) -> super::TaskletMode { self.$i.tasklet_mode() }
    };
    (@ $i:ident wakes_after_exit) => {
        fn wakes_after_exit(&self) -> bool { self.$i.wakes_after_exit() }
    };
    (@ $i:ident lazy_context_switch) => {
        fn lazy_context_switch(&self) -> bool { self.$i.lazy_context_switch() }
    };
    (@ $i:ident ple_grows_by_default) => {
        fn ple_grows_by_default(&self) -> bool { self.$i.ple_grows_by_default() }
    };
    (@ $i:ident halt_polls_by_default) => {
        fn halt_polls_by_default(&self) -> bool { self.$i.halt_polls_by_default() }
    };
    (@ $i:ident single_task_running) => {
        fn single_task_running(&self, p: PcpuId) -> bool { self.$i.single_task_running(p) }
    };
    (@ $i:ident yield_stats) => {
        fn yield_stats(&self) -> (u64, u64) { self.$i.yield_stats() }
    };
    (@ $i:ident enforces_caps) => {
        fn enforces_caps(&self) -> bool { self.$i.enforces_caps() }
    };
    (@ $i:ident set_seed) => {
        fn set_seed(&mut self, seed: u64) { self.$i.set_seed(seed) }
    };
}
pub(crate) use forward_hooks;

/// Scheduler parameters from the scenario: typed look-ups that reject unknown keys.
pub struct Params<'a> {
    map: &'a BTreeMap<String, toml::Value>,
    used: Vec<&'static str>,
    prefix: &'static str,
}

impl<'a> Params<'a> {
    pub fn new(map: &'a BTreeMap<String, toml::Value>) -> Self {
        Self::with_prefix(map, "hypervisor.params")
    }
    /// Parameters found under another table (errors name `prefix.key`).
    pub fn with_prefix(map: &'a BTreeMap<String, toml::Value>, prefix: &'static str) -> Self {
        Params { map, used: Vec::new(), prefix }
    }
    fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.prefix)
    }
    pub fn f64(&mut self, key: &'static str, default: f64, min: f64, max: f64) -> Result<f64, ScenarioError> {
        self.used.push(key);
        let v = match self.map.get(key) {
            None => return Ok(default),
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(toml::Value::Float(f)) => *f,
            Some(other) => return Err(ScenarioError::new(self.path(key), format!("expected a number, found {}", other.type_str()))),
        };
        if !v.is_finite() || v < min || v > max {
            return Err(ScenarioError::new(self.path(key), format!("must lie in [{min}, {max}], got {v}")));
        }
        Ok(v)
    }
    pub fn bool(&mut self, key: &'static str, default: bool) -> Result<bool, ScenarioError> {
        self.used.push(key);
        match self.map.get(key) {
            None => Ok(default),
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(ScenarioError::new(self.path(key), format!("expected true or false, found {}", other.type_str()))),
        }
    }
    /// A whole number in [min, max].
    pub fn u64(&mut self, key: &'static str, default: u64, min: u64, max: u64) -> Result<u64, ScenarioError> {
        self.used.push(key);
        match self.map.get(key) {
            None => Ok(default),
            Some(toml::Value::Integer(i)) if *i >= min as i64 && (*i as u64) <= max => Ok(*i as u64),
            Some(toml::Value::Integer(i)) => Err(ScenarioError::new(self.path(key), format!("must lie in [{min}, {max}], got {i}"))),
            Some(other) => Err(ScenarioError::new(self.path(key), format!("expected a whole number, found {}", other.type_str()))),
        }
    }
    /// One of a fixed set of names.
    pub fn choice(&mut self, key: &'static str, default: &'static str, options: &[&'static str]) -> Result<&'static str, ScenarioError> {
        self.used.push(key);
        match self.map.get(key) {
            None => Ok(default),
            Some(toml::Value::String(s)) => options.iter().copied().find(|o| o == s).ok_or_else(|| {
                ScenarioError::new(self.path(key), format!("unknown value `{s}` (one of: {})", options.join(", ")))
            }),
            Some(other) => Err(ScenarioError::new(self.path(key), format!("expected a string, found {}", other.type_str()))),
        }
    }
    /// Reject keys the policy did not ask for.
    pub fn finish(self, policy: &str) -> Result<(), ScenarioError> {
        for k in self.map.keys() {
            if !self.used.contains(&k.as_str()) {
                return Err(ScenarioError::new(
                    self.path(k),
                    format!("unknown parameter for `{policy}` (known: {})", self.used.join(", ")),
                ));
            }
        }
        Ok(())
    }
}

/// Build a scheduler by name.
pub fn build(name: &str, params: &BTreeMap<String, toml::Value>, ple: &crate::scenario::PleSpec) -> Result<Box<dyn HvScheduler>, ScenarioError> {
    let mut p = Params::new(params);
    let dy = cfs::PleYield::of(ple);
    let s: Box<dyn HvScheduler> = match name {
        "credit" => Box::new(credit::Credit::from_params(&mut p)?),
        "credit2" => Box::new(credit2::Credit2::from_params(&mut p)?),
        "dp" => Box::new(dp::Dp::from_params(&mut p)?),
        "flex" => Box::new(flexs::FlexS::from_params(&mut p)?),
        "cfs" => Box::new(cfs::Cfs::from_params(&mut p, dy)?),
        "rr" => Box::new(rr::RoundRobin::from_params(&mut p)?),
        "gang" => Box::new(gang::Gang::from_params(&mut p)?),
        "relaxed_cosched" => Box::new(relaxed_cosched::RelaxedCosched::from_params(&mut p, dy)?),
        "balance" => balance::build(&mut p, dy)?,
        other => {
            let known: Vec<&str> = catalog().iter().map(|c| c.0).collect();
            return Err(ScenarioError::new("hypervisor.scheduler", format!("unknown scheduler `{other}` (known: {})", known.join(", "))));
        }
    };
    p.finish(name)?;
    Ok(s)
}

pub fn catalog() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        (
            "credit",
            "Xen credit1: 30 ms slice, 10 ms tick, 30 ms accounting, BOOST/UNDER/OVER, work stealing, tick-time move of a running vCPU to an idle pCPU, caps, ratelimit; options: FlexW in the accounting (flexw), tasklets, CSRC",
            "xen/common/sched/credit.c; reference/hypervisor-mechanisms.md §1",
        ),
        (
            "credit2",
            "Xen credit2: credit burn by weight, per-runqueue resets, slice 0.5-10 ms, ratelimit, migrate resist, runqueue load balancing, caps",
            "xen/common/sched/credit2.c; reference/hypervisor-mechanisms.md §2",
        ),
        (
            "dp",
            "DP-Scheduling: credit1 plus dynamic pinning of vCPUs whose guest task has a high affinity coefficient (threshold 75, at most #pCPUs-1 pinned)",
            "seed 003 §3-4; xen/common/schedule.c vcpu_set_affinity",
        ),
        (
            "flex",
            "Flex: credit1 with FlexW in its accounting (real-time VM weights from the lag against GPS shares, gain 1, reset every 10 s) and FlexS (spin detection from virtual-PMU branch-per-instruction and miss rate; the spinner yields and a sibling vCPU waiting on another pCPU takes over its slice, power of two choices)",
            "seed 002_4e0f89b222427189.txt (FlexW Design, FlexS Design, Practical Considerations, Implementation)",
        ),
        (
            "cfs",
            "Linux CFS as KVM's host scheduler: per-pCPU vruntime, per-VM cgroup weights, wake-up preemption, load balancing, PLE + directed yield, CFS bandwidth control for capped VMs",
            "kernel/sched/fair.c, virt/kvm/kvm_main.c; reference §4-5",
        ),
        ("rr", "global round robin with a fixed slice (teaching, cross-checks)", "textbook round robin"),
        (
            "gang",
            "strict gang scheduling: a VM's runnable vCPUs co-start on distinct pCPUs only when all fit, co-stop at the 30 ms slice end; halted members leave their pCPU idle",
            "seed 004 (gang scheduling, ESX 2.x); reference/related-work.md §3.4",
        ),
        (
            "relaxed_cosched",
            "VMware ESX 4/5 relaxed co-scheduling over cfs: per-vCPU skew against the slowest sibling, co-stop leaders above 4 ms, co-start when the laggard runs, on a pCPU holding no sibling; idle vCPUs accrue no skew",
            "reference/hypervisor-mechanisms.md §6; related-work.md §3.4; vSphere 5.1 CPU scheduler paper; Broadcom KB 326271",
        ),
        (
            "balance",
            "balance scheduling over cfs (or Xen credit: host = \"credit\"): sibling vCPUs never share a pCPU runqueue (dynamic affinity), otherwise the host scheduler",
            "Sukwong & Kim, EuroSys 2011; reference/related-work.md §3.8",
        ),
    ]
}
