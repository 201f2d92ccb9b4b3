//! Scenario schema: what a user writes in a TOML file (or builds in Python).
//!
//! Models: the host (sockets x cores, NUMA distances, cost parameters), the hypervisor
//! (scheduler name and parameters, pause-loop exiting), the VMs (vCPUs, weight, cap,
//! pinning, memory node, guest kernel options) and their workloads (built-in templates or
//! programs in the small op language of `guest::program`).
//!
//! Every time field carries its unit in its name (`_ns`, `_us`, `_ms`, `_cycles`). Parsing
//! goes through `serde_path_to_error`, so type errors name the field path; `validate` adds the
//! semantic checks. Defaults and their sources are documented in `docs/model.md`.

mod parse_error;
mod validate;

pub use validate::{validate, validate_with, MAX_WEIGHT};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

use crate::host::CostParams;

/// A scenario error: the dotted field path (`vms[1].vcpus`) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub reason: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), reason: reason.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", self.path, self.reason)
        }
    }
}

impl std::error::Error for ScenarioError {}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Stop after this much simulated time. Without it the run ends when every VM's
    /// workload has finished (all VMs must then have finite workloads).
    #[serde(default)]
    pub duration_ms: Option<f64>,
    /// Safety limit for run-to-completion scenarios.
    #[serde(default = "default_max_duration_ms")]
    pub max_duration_ms: f64,
    /// What ends the run before its horizon (`StopRule`).
    #[serde(default, skip_serializing_if = "StopRule::is_default")]
    pub stop: StopRule,
    /// Client requests completed by this much simulated time are left out of the request
    /// summaries (`vms[].requests`), so they describe the steady state after a warm-up, as a
    /// benchmark's measurement interval follows its ramp-up (SPECvirt_sc2010's harness runs a
    /// ramp-up and warm-up before it measures). Every other metric covers the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_ms: Option<f64>,
    pub host: HostSpec,
    #[serde(default)]
    pub hypervisor: HypervisorSpec,
    /// A built-in controller run at intervals beside the scheduler (`controllers/`).
    #[serde(default)]
    pub controller: Option<ControllerSpec>,
    pub vms: Vec<VmSpec>,
}

/// `stop`: what ends a run before its horizon (`duration_ms`, or `max_duration_ms` without it).
/// A VM is *finite* when none of its workloads runs forever (validate.rs lists what does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopRule {
    /// With `duration_ms`, the run lasts that long; without it, it ends when every VM has
    /// finished (every VM must then be finite).
    #[default]
    Duration,
    /// The run ends when every finite VM has finished (at the event where the last one does), or
    /// at the horizon if that comes first; VMs that run forever are simply cut off there. At
    /// least one VM must be finite; `duration_ms` is then optional (it bounds the run).
    FiniteDone,
}

impl StopRule {
    fn is_default(&self) -> bool {
        *self == StopRule::Duration
    }
}

/// `[controller]`: a built-in control policy and its parameters (each controller documents its
/// keys; unknown keys are rejected).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSpec {
    pub name: String,
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
}

fn default_name() -> String {
    "scenario".into()
}
fn default_seed() -> u64 {
    1
}
fn default_max_duration_ms() -> f64 {
    600_000.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    #[serde(default = "one")]
    pub sockets: u32,
    pub cores_per_socket: u32,
    /// NUMA nodes; sockets are spread evenly over them. Default: one node per socket.
    #[serde(default)]
    pub numa_nodes: Option<u32>,
    /// ACPI SLIT-style distance table (10 = local). Default: 10 local, 21 remote.
    #[serde(default)]
    pub numa_distance: Option<Vec<Vec<u32>>>,
    /// Clock rate used to turn PLE cycle counts into time.
    #[serde(default = "default_ghz")]
    pub cpu_ghz: f64,
    #[serde(default)]
    pub costs: CostParams,
    /// Non-preemptible per-pCPU background load (seed 004 §7.5); `hv::background`.
    #[serde(default)]
    pub background: Option<crate::hv::background::BackgroundSpec>,
}

fn one() -> u32 {
    1
}
fn default_ghz() -> f64 {
    2.5
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HypervisorSpec {
    #[serde(default = "default_scheduler")]
    pub scheduler: String,
    /// Scheduler-specific parameters (see `vmsched list`); unknown keys are rejected.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub ple: PleSpec,
    /// How a virtual IPI reaches a running target vCPU (seed 004 §5.4, §6.3); `hv::vipi`.
    #[serde(default)]
    pub vipi_delivery: crate::hv::vipi::VipiDelivery,
    /// Host kernel time slice at whose timer interrupt a VMM polls its messages under
    /// `vipi_delivery = "polling"` (seed 004 §6.1, §6.3: Barrelfish's 80 ms); `hv::vipi`.
    #[serde(default = "crate::hv::vipi::default_vmm_timeslice_ms")]
    pub vmm_timeslice_ms: u64,
    /// KVM halt polling (`virt/kvm/kvm_main.c kvm_vcpu_halt`); `hv::halt_poll`.
    #[serde(default)]
    pub halt_poll: crate::hv::halt_poll::HaltPollSpec,
}

impl Default for HypervisorSpec {
    fn default() -> Self {
        HypervisorSpec {
            scheduler: default_scheduler(),
            params: BTreeMap::new(),
            ple: PleSpec::default(),
            vipi_delivery: Default::default(),
            vmm_timeslice_ms: crate::hv::vipi::default_vmm_timeslice_ms(),
            halt_poll: Default::default(),
        }
    }
}

fn default_scheduler() -> String {
    "credit".into()
}

/// Pause-loop exiting. Defaults are KVM's Intel values (`kvm_intel.ple_gap`, `ple_window`,
/// `ple_window_grow`, `ple_window_shrink`, arch/x86/kvm/vmx/vmx.c and x86.h). Xen uses a fixed
/// window (no grow/shrink); the credit scheduler sets `grow = 1` when not given.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PleSpec {
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "default_ple_window")]
    pub window_cycles: u64,
    #[serde(default)]
    pub grow: Option<u64>,
    #[serde(default)]
    pub shrink: u64,
    #[serde(default = "default_ple_window_max")]
    pub window_max_cycles: u64,
    /// On a PLE exit, yield to a preempted sibling vCPU (KVM `kvm_vcpu_on_spin`).
    /// Default: on for `cfs`; credit yields (Xen's SCHEDOP_yield) regardless.
    #[serde(default)]
    pub directed_yield: Option<bool>,
    /// The directed yield's candidates are only vCPUs preempted in guest kernel mode (KVM's
    /// `yield_to_kernel_mode`, Linux 4.15+, commit "KVM: add spinlock optimization framework";
    /// reference/hypervisor-mechanisms.md §4.2). false: any preempted vCPU is a candidate, as
    /// in `kvm_vcpu_on_spin` of Linux 3.x-4.14 (virt/kvm/kvm_main.c). Read by the KVM
    /// schedulers (cfs, relaxed_cosched, balance over cfs).
    #[serde(default = "yes")]
    pub yield_to_kernel_mode: bool,
    /// A vCPU woken from halt by an interrupt or a pv kick that has not run since is a
    /// directed-yield candidate too, whatever mode it halted in (Linux 5.3+: `vcpu->ready`
    /// and `vcpu_dy_runnable` in `kvm_vcpu_on_spin`, commit "KVM: Boost vCPUs that are
    /// delivering interrupts"; reference/hypervisor-mechanisms.md §4.2). false: only
    /// preempted vCPUs, as Linux 3.x-5.2 (`if (!ACCESS_ONCE(vcpu->preempted)) continue;`).
    /// Read by the KVM schedulers.
    #[serde(default = "yes")]
    pub boost_woken: bool,
}

impl Default for PleSpec {
    fn default() -> Self {
        PleSpec {
            enabled: true,
            window_cycles: default_ple_window(),
            grow: None,
            shrink: 0,
            window_max_cycles: default_ple_window_max(),
            directed_yield: None,
            yield_to_kernel_mode: true,
            boost_woken: true,
        }
    }
}

fn yes() -> bool {
    true
}
fn default_ple_window() -> u64 {
    4096
}
fn default_ple_window_max() -> u64 {
    u32::MAX as u64
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub vcpus: u32,
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// Cap in percent of one pCPU (Xen semantics); 0 = no cap.
    #[serde(default)]
    pub cap_pct: u32,
    /// Hard affinity: `pin[i]` is the pCPU of vCPU i (all vCPUs must be listed).
    #[serde(default)]
    pub pin: Option<Vec<u32>>,
    /// Hard affinity of every vCPU to a set of pCPUs (Xen's `vcpu_set_affinity` with one
    /// mask for all vCPUs, as xm's `cpus=` or xend's NUMA placement sets it); not with `pin`.
    #[serde(default)]
    pub cpus: Option<Vec<u32>>,
    /// Home NUMA node of the VM's memory.
    #[serde(default)]
    pub memory_node: u32,
    #[serde(default)]
    pub guest: GuestSpec,
    /// How the VM's devices reach it: `emulated` (device model, the default) or
    /// `passthrough` (SR-IOV virtual functions: physical interrupts and the dpci tasklet,
    /// `hv/tasklet.rs`; seed 001 §3).
    #[serde(default)]
    pub io_path: IoPath,
    pub workloads: Vec<WorkloadSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoPath {
    #[default]
    Emulated,
    Passthrough,
}

fn default_weight() -> u32 {
    256
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpinlockKind {
    Ticket,
    Tas,
    Queued,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestSpec {
    #[serde(default = "default_spinlock")]
    pub spinlock: SpinlockKind,
    /// Guest scheduler time slice, in vCPU run time.
    #[serde(default = "default_guest_slice_us")]
    pub slice_us: f64,
    /// Periodic guest load-balancing interval.
    #[serde(default = "default_guest_balance_us")]
    pub balance_interval_us: f64,
    /// Guest timer tick period (HZ=250); only used with `tickless = false`.
    #[serde(default = "default_tick_us")]
    pub tick_us: f64,
    #[serde(default = "yes")]
    pub tickless: bool,
    /// Busy vCPUs take a timer-interrupt exit and run the tick handler every `tick_us`
    /// (Linux ticks busy CPUs at HZ unless `nohz_full`). Off by default so that scenarios
    /// written before it keep their results; `hv::vipi`.
    #[serde(default)]
    pub busy_tick: bool,
    /// Linux 3.0+'s TTWU_QUEUE for a guest whose vCPUs share no LLC in its own view (QEMU's
    /// default `-smp N`: one socket per vCPU): a wake-up onto another, busy vCPU goes through
    /// that vCPU's wake list and a reschedule IPI (`guest::resched`). Off by default, so that
    /// scenarios written before it keep their results.
    #[serde(default)]
    pub ttwu_queue: bool,
    /// Where the guest puts a woken thread, and the new-idle pull rules that go with it
    /// (`guest::wakeaffine`). `prev_or_idle` (the default, the model's placement before
    /// session 44): the thread's previous vCPU if idle, else any idle vCPU, else the previous
    /// one. `affine`: Linux 2.6.32's `select_task_rq_fair` on a guest whose vCPUs share no
    /// cache (each its own package, as VMkit's emulated K7 shows them): the waker's vCPU if
    /// `wake_affine` passes, else the previous one, and no search for an idle vCPU.
    /// `affine_idle_sibling`: the same on a guest whose vCPUs share a last-level cache (one
    /// multi-core domain, `SD_SHARE_PKG_RESOURCES`): that target, then `select_idle_sibling`'s
    /// search for an idle vCPU. Both 2.6.32 values also take 2.6.32's new-idle rules: no pull
    /// while the vCPU's average idle period is under the migration cost, and no pull of a
    /// cache-hot thread.
    #[serde(default)]
    pub wake_placement: WakePlacement,
    /// Linux before 3.0 (`try_to_wake_up` in 2.6.32's kernel/sched.c): a wake-up holds the
    /// target vCPU's runqueue lock while it sends the reschedule IPI, so the target's
    /// `schedule()` waits until the waker returns from that IPI's exit, and a waker stopped
    /// before it returns keeps it spinning (`guest::rqlock`). Off by default: tried for the
    /// 2.6.32 guests of seed 004 in session 48 (rule AB) and not adopted, since it took the
    /// VMkit run of hackbench with affinity from 1.01 to 3.14 s (docs/model.md). Not with
    /// `ttwu_queue` (the wake list sends its IPI without the lock).
    #[serde(default)]
    pub ttwu_rq_lock: bool,
    /// Linux's `resched_task` (2.6.32 kernel/sched.c; `resched_curr` since 3.16) sends a
    /// reschedule IPI only if the target's current task (the idle task on an idle CPU) does not
    /// already have need-resched set, so a vCPU that one wake-up's IPI is already waking or
    /// preempting gets no other until it schedules (`guest::resched`). Off by default: the model
    /// then sends one per wake-up, and seed 004's VMkit baselines hold with that (session 48's
    /// probe: docs/model.md §2.3).
    #[serde(default)]
    pub resched_ipi_once: bool,
    /// vCPU that receives device interrupts.
    #[serde(default)]
    pub irq_vcpu: u32,
    /// Online vCPUs at start (default: all).
    #[serde(default)]
    pub online_vcpus: Option<u32>,
    /// KVM paravirtual features the guest uses (reference §4.4-4.7).
    #[serde(default)]
    pub paravirt: ParavirtSpec,
    /// How long CPU hotplug takes in this guest (used by controllers' `set_online_vcpus`).
    #[serde(default)]
    pub hotplug: HotplugSpec,
}

/// Where a guest puts a woken thread (`GuestSpec::wake_placement`, `guest::wakeaffine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakePlacement {
    /// The previous vCPU if idle, else any idle vCPU, else the previous one.
    #[default]
    PrevOrIdle,
    /// Linux 2.6.32, no shared cache between the vCPUs: the waker's vCPU or the previous one
    /// (`wake_affine`), never an idle search; with 2.6.32's new-idle rules.
    Affine,
    /// Linux 2.6.32, one shared-cache domain over the vCPUs: the `wake_affine` target, then
    /// `select_idle_sibling`; with 2.6.32's new-idle rules.
    AffineIdleSibling,
}

impl WakePlacement {
    /// One of Linux 2.6.32's placements (with its new-idle rules).
    pub fn is_2632(self) -> bool {
        self != WakePlacement::PrevOrIdle
    }
}

/// The guest's CPU-hotplug agent and its cost model (seed 000_e4beefc956462be7.txt §3.2).
/// Unplugging a vCPU takes `kthread_park_ms` (waiting for its per-CPU kernel threads to
/// quiesce, "approximately 600 ms for each") plus `cpu_down_ms` (RCU grace period, migrating
/// its threads, callbacks); the seed measured about 7 s for 6 vCPUs done one after another, so
/// `cpu_down_ms` = 7000/6 − 600 ≈ 567 ms. With `mode = "parallel"` (FlexCore's agent) the
/// outgoing vCPUs park their kernel threads at the same time, so only one `kthread_park_ms` is
/// paid per request; the seed measured 3.5 s for 6 vCPUs (this model predicts 4.0 s).
/// The time is latency in the guest, not CPU work: the outgoing vCPU keeps running until its
/// `cpu_down` ends with the stop_machine step.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotplugSpec {
    #[serde(default)]
    pub mode: HotplugMode,
    #[serde(default = "default_kthread_park_ms")]
    pub kthread_park_ms: f64,
    #[serde(default = "default_cpu_down_ms")]
    pub cpu_down_ms: f64,
    /// Bringing a vCPU online (`cpu_up`): an estimate (tens of ms on Linux guests), no seed value.
    #[serde(default = "default_cpu_up_ms")]
    pub cpu_up_ms: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HotplugMode {
    /// Stock Linux: one `cpu_down` after another.
    #[default]
    Serial,
    /// FlexCore's agent: park every outgoing vCPU's kernel threads at once, then `cpu_down` each.
    Parallel,
}

impl Default for HotplugSpec {
    fn default() -> Self {
        HotplugSpec {
            mode: HotplugMode::Serial,
            kthread_park_ms: default_kthread_park_ms(),
            cpu_down_ms: default_cpu_down_ms(),
            cpu_up_ms: default_cpu_up_ms(),
        }
    }
}

fn default_kthread_park_ms() -> f64 {
    600.0
}
fn default_cpu_down_ms() -> f64 {
    7000.0 / 6.0 - 600.0
}
fn default_cpu_up_ms() -> f64 {
    50.0
}

/// Paravirtual guest features (KVM). All off by default, as for a guest without
/// `KVM_FEATURE_PV_UNHALT`, `PV_TLB_FLUSH`, `PV_SCHED_YIELD`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParavirtSpec {
    /// pv qspinlock: spin `spin_loops` PAUSE iterations, then HLT (`kvm_wait`); the unlocker
    /// kicks the next waiter (`KVM_HC_KICK_CPU`) and directed-yields to it. Needs
    /// `spinlock = "queued"`, as in Linux.
    #[serde(default)]
    pub spinlock: bool,
    /// `SPIN_THRESHOLD` = 1 << 15 loops (arch/x86/include/asm/spinlock.h).
    #[serde(default = "default_pv_spin_loops")]
    pub spin_loops: u64,
    /// Cycles per PAUSE loop iteration (PAUSE latency is about 140 cycles since Skylake,
    /// Intel optimization manual; older cores about 10).
    #[serde(default = "default_pause_cycles")]
    pub pause_cycles: u64,
    /// pv TLB flush: skip preempted targets and flush them when they next run.
    #[serde(default)]
    pub tlb_flush: bool,
    /// pv sched yield: after sending call IPIs, yield to the first preempted target.
    #[serde(default)]
    pub sched_yield: bool,
}

impl Default for ParavirtSpec {
    fn default() -> Self {
        ParavirtSpec {
            spinlock: false,
            spin_loops: default_pv_spin_loops(),
            pause_cycles: default_pause_cycles(),
            tlb_flush: false,
            sched_yield: false,
        }
    }
}

fn default_pv_spin_loops() -> u64 {
    1 << 15
}
fn default_pause_cycles() -> u64 {
    140
}

impl Default for GuestSpec {
    fn default() -> Self {
        GuestSpec {
            spinlock: default_spinlock(),
            slice_us: default_guest_slice_us(),
            balance_interval_us: default_guest_balance_us(),
            tick_us: default_tick_us(),
            tickless: true,
            busy_tick: false,
            ttwu_queue: false,
            wake_placement: WakePlacement::PrevOrIdle,
            ttwu_rq_lock: false,
            resched_ipi_once: false,
            irq_vcpu: 0,
            online_vcpus: None,
            paravirt: ParavirtSpec::default(),
            hotplug: HotplugSpec::default(),
        }
    }
}

fn default_spinlock() -> SpinlockKind {
    SpinlockKind::Ticket
}
fn default_guest_slice_us() -> f64 {
    3000.0
}
fn default_guest_balance_us() -> f64 {
    4000.0
}
fn default_tick_us() -> f64 {
    4000.0
}

/// A distribution of a duration in microseconds: a bare number is a fixed value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "snake_case")]
pub enum DurationUs {
    Fixed { us: f64 },
    Exp { mean_us: f64 },
    Uniform { min_us: f64, max_us: f64 },
    /// Log-normal with the given mean and coefficient of variation.
    Lognormal { mean_us: f64, cv: f64 },
}

impl DurationUs {
    pub fn fixed(us: f64) -> Self {
        DurationUs::Fixed { us }
    }
    pub fn mean_us(&self) -> f64 {
        match *self {
            DurationUs::Fixed { us } => us,
            DurationUs::Exp { mean_us } => mean_us,
            DurationUs::Uniform { min_us, max_us } => 0.5 * (min_us + max_us),
            DurationUs::Lognormal { mean_us, .. } => mean_us,
        }
    }
}

impl<'de> Deserialize<'de> for DurationUs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
        enum Tagged {
            Fixed { us: f64 },
            Exp { mean_us: f64 },
            Uniform { min_us: f64, max_us: f64 },
            Lognormal { mean_us: f64, cv: f64 },
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DurationUs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of microseconds or a table with `dist` = fixed|exp|uniform|lognormal")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<DurationUs, E> {
                Ok(DurationUs::Fixed { us: v })
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<DurationUs, E> {
                Ok(DurationUs::Fixed { us: v as f64 })
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<DurationUs, E> {
                Ok(DurationUs::Fixed { us: v as f64 })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<DurationUs, A::Error> {
                let t = Tagged::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(match t {
                    Tagged::Fixed { us } => DurationUs::Fixed { us },
                    Tagged::Exp { mean_us } => DurationUs::Exp { mean_us },
                    Tagged::Uniform { min_us, max_us } => DurationUs::Uniform { min_us, max_us },
                    Tagged::Lognormal { mean_us, cv } => DurationUs::Lognormal { mean_us, cv },
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// One operation of a guest-thread program (see `guest::program`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum OpSpec {
    /// Run on the CPU. `mem_fraction` of the work is memory-bound (remote-NUMA slowdown).
    Compute {
        us: DurationUs,
        #[serde(default)]
        mem_fraction: f64,
    },
    /// Take a guest spinlock, run the critical section with preemption disabled, release.
    /// `irqs_off`: taken with `spin_lock_irq`/`spin_lock_irqsave`, so the vCPU takes no
    /// interrupt (a function-call IPI waits) while it spins for the lock or holds it
    /// (`guest::kernel`). `spread` > 1: one lock of a family of `spread` locks named
    /// `<lock>.0` ... `<lock>.<spread-1>`, drawn uniformly at random at each pass (an object
    /// with a lock of its own, such as a page-table page under Linux's split pte locks, of which
    /// a pass touches one); 1 (default) = the lock named `lock`.
    Lock {
        lock: String,
        cs_us: DurationUs,
        #[serde(default)]
        irqs_off: bool,
        #[serde(default = "default_spread")]
        spread: u32,
    },
    /// Sleeping mutex: spin up to `spin_us` (adaptive), then block.
    Mutex {
        mutex: String,
        cs_us: DurationUs,
        #[serde(default)]
        spin_us: f64,
    },
    /// Sleeping reader-writer semaphore (Linux's `rw_semaphore`, `guest::rwsem`): take `sem`
    /// shared (`write = false`, `down_read`: readers share it) or exclusive (`write = true`,
    /// `down_write`), run `body` holding it, release it (`up_read`/`up_write`). A waiter
    /// sleeps (its vCPU may halt) and is handed the semaphore in FIFO order as Linux 3.13's
    /// `__rwsem_do_wake` does. `wait_lock_us` > 0: the slow paths (a contended down, an up
    /// with waiters, a woken writer's retry) take the semaphore's `wait_lock`, a guest
    /// spinlock named `<sem>.wait_lock` taken with interrupts off, for that long; 0 (default)
    /// = the wait_lock is not modelled.
    Rwsem {
        sem: String,
        #[serde(default)]
        write: bool,
        #[serde(default)]
        wait_lock_us: f64,
        body: Vec<OpSpec>,
    },
    /// Barrier over `parties` threads: spin up to `spin_us` (0 = pure blocking, as pthreads).
    Barrier {
        barrier: String,
        parties: u32,
        #[serde(default)]
        spin_us: f64,
    },
    /// Bounded queue / pipe.
    Put {
        queue: String,
        #[serde(default = "default_capacity")]
        capacity: u32,
        /// Bytes of each message, copied into a socket buffer by the writer and out of it by
        /// the reader (`guest::channel`); 0 = the message data is not modelled.
        #[serde(default)]
        msg_bytes: u32,
        /// Wake-up of writers blocked on the full queue. None: a freed slot goes to the first
        /// blocked writer at once. Some(n): as Linux's stream sockets, whose reader wakes the
        /// writers only once the send buffer is at most a quarter full (`unix_writable`,
        /// net/unix/af_unix.c): when a get leaves at most `n` messages, every blocked writer
        /// is woken (each with its message put, as many as fit). Every put on one queue gives
        /// the same value; it must be below the capacity.
        #[serde(default)]
        writable_at: Option<u32>,
        /// Take the queue's state lock around the operation, as a Unix stream socket's
        /// `unix_state_lock` (`guest::channel`): a guest spinlock named `<queue>.state_lock`,
        /// during which the queue's shared state is fetched from the pCPU that last wrote it.
        #[serde(default)]
        state_lock: bool,
    },
    Get {
        queue: String,
        #[serde(default = "default_capacity")]
        capacity: u32,
        /// As `Put`'s `state_lock`.
        #[serde(default)]
        state_lock: bool,
    },
    CondWait { cond: String },
    CondSignal { cond: String },
    /// TLB shootdown (munmap/mprotect-like): IPIs every vCPU running this address space.
    Shootdown {
        #[serde(default = "default_flush_us")]
        local_us: f64,
    },
    /// Synchronous function-call IPI to all other online vCPUs (`smp_call_function`).
    CallAll,
    /// Block on a device for the given latency; completion raises an interrupt.
    Io { us: DurationUs },
    /// One port I/O instruction (`in`/`out`) that the hypervisor emulates itself, as Xen does
    /// its platform timers (xen/arch/x86/hvm/io.c `handle_pio` → the intercepts registered
    /// with `register_portio_handler`, e.g. hvm/pmtimer.c's ACPI PM timer): an I/O-instruction
    /// exit (`host.costs.exit_io_ns`) on the running vCPU, no device model, no block.
    PortIo,
    Sleep { us: DurationUs },
    /// Fork a child (new address space unless `share_mm`), run `body` in it, wait for it.
    /// `exec`: the child execs a program first (exec balancing, `guest::forkexec`).
    Fork {
        body: Vec<OpSpec>,
        #[serde(default)]
        share_mm: bool,
        #[serde(default = "yes")]
        wait: bool,
        #[serde(default)]
        exec: bool,
    },
    Loop { count: u64, body: Vec<OpSpec> },
    /// Run `body` on every n-th pass through this op (per thread).
    Every { n: u64, body: Vec<OpSpec> },
    /// Loop forever.
    Forever { body: Vec<OpSpec> },
    /// Take the oldest client request that arrived on `port` (a `server` workload's arrival
    /// stream); block until one arrives.
    Accept { port: String },
    /// Finish the request taken by the last `accept`: its response time is recorded.
    Respond,
    /// Record the time the thread passes here (results `vms[].marks`); takes no time.
    Mark { mark: String },
}

fn default_spread() -> u32 {
    1
}
fn default_capacity() -> u32 {
    64
}
fn default_flush_us() -> f64 {
    1.0
}

/// A group of threads sharing one program and (by default) one address space.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadGroupSpec {
    #[serde(default = "one")]
    pub threads: u32,
    pub program: Vec<OpSpec>,
    /// Guest CPU affinity: vCPU indices the threads may run on (default: all).
    #[serde(default)]
    pub affinity: Option<Vec<u32>>,
    /// Bind thread i to vCPU `affinity[i % len]` (one vCPU each).
    #[serde(default)]
    pub bind: bool,
    /// Working set per thread, for the cache-warmth model.
    #[serde(default)]
    pub working_set_kib: Option<u32>,
}

/// A workload: a built-in template (see `guest::workloads`) or custom thread groups.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadSpec {
    Hog {
        #[serde(default)]
        threads: Option<u32>,
    },
    Parallel(crate::guest::workloads::ParallelParams),
    Forkbench(crate::guest::workloads::ForkbenchParams),
    Hackbench(crate::guest::workloads::HackbenchParams),
    Rambench(crate::guest::workloads::RambenchParams),
    Kbuild(crate::guest::workloads::KbuildParams),
    Stream(crate::guest::workloads::StreamParams),
    Server(crate::guest::workloads::ServerParams),
    Epcc(crate::guest::workloads::EpccParams),
    Imb(crate::guest::workloads::ImbParams),
    Custom {
        groups: Vec<ThreadGroupSpec>,
    },
}

impl WorkloadSpec {
    pub fn kind_name(&self) -> &'static str {
        match self {
            WorkloadSpec::Hog { .. } => "hog",
            WorkloadSpec::Parallel(_) => "parallel",
            WorkloadSpec::Forkbench(_) => "forkbench",
            WorkloadSpec::Hackbench(_) => "hackbench",
            WorkloadSpec::Rambench(_) => "rambench",
            WorkloadSpec::Kbuild(_) => "kbuild",
            WorkloadSpec::Stream(_) => "stream",
            WorkloadSpec::Server(_) => "server",
            WorkloadSpec::Epcc(_) => "epcc",
            WorkloadSpec::Imb(_) => "imb",
            WorkloadSpec::Custom { .. } => "custom",
        }
    }
}

/// Parse a TOML scenario; errors name the field path (inside tagged tables too: `parse_error`).
pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::new(text);
    let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().message().to_string();
        let doc = toml::from_str::<serde_json::Value>(text).ok();
        scenario_error(path, msg, doc.as_ref())
    })?;
    validate(&sc)?;
    Ok(sc)
}

/// Parse a JSON scenario (the Python front end builds these); errors name the field path.
/// A wrong value is named by its path alone: its line and column in JSON that the front end
/// serialised would point nowhere the user wrote. Syntax errors keep them. A value of the wrong
/// type for an enum is a syntax error to serde_json's streaming parser ("expected value at line
/// 1 column N"); read again from the parsed document, it gets a reason ("invalid type: ...").
pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let first = serde_path_to_error::deserialize::<_, Scenario>(&mut de);
    let sc = match first {
        Ok(sc) => sc,
        Err(e) => {
            let doc = serde_json::from_str::<serde_json::Value>(text).ok();
            if let (false, Some(doc)) = (e.inner().is_data(), doc.as_ref()) {
                if let Err(again) = serde_path_to_error::deserialize::<_, Scenario>(doc) {
                    let path = again.path().to_string();
                    return Err(scenario_error(path, again.into_inner().to_string(), Some(doc)));
                }
            }
            let path = e.path().to_string();
            let inner = e.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                return Err(ScenarioError::new(String::new(), format!("JSON syntax error: {inner}")));
            }
            let mut msg = inner.to_string();
            if inner.is_data() {
                let at = format!(" at line {} column {}", inner.line(), inner.column());
                if let Some(m) = msg.strip_suffix(&at) {
                    msg = m.to_string();
                }
            }
            return Err(scenario_error(path, msg, doc.as_ref()));
        }
    };
    validate(&sc)?;
    Ok(sc)
}

/// A parse error at `path` (`.` is the document): its path refined inside a tagged table and
/// its reason reworded (`parse_error`).
fn scenario_error(path: String, msg: String, doc: Option<&serde_json::Value>) -> ScenarioError {
    if path == "." || path == "?" {
        return ScenarioError::new(String::new(), parse_error::reword(&msg, None, None));
    }
    let path = doc.and_then(|d| parse_error::refine(&path, &msg, d)).unwrap_or(path);
    let got = doc.and_then(|d| parse_error::node_at(d, &path));
    let choices = doc.and_then(|d| parse_error::choices_at::<Scenario>(d, &path));
    ScenarioError::new(path, parse_error::reword(&msg, got, choices.as_deref()))
}

