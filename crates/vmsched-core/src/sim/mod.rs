//! The simulation: builds the world from a scenario and runs the event loop.
//!
//! The world is one struct (`World`) whose behaviour is split by layer: `hv::machine`
//! (dispatch, exits, virtual interrupts, pause-loop exits, the scheduler boundary) and
//! `guest::kernel` (threads, guest scheduler, synchronisation, IPIs). Every state change
//! goes through those two files; `check` verifies the invariants after each event when asked.

mod check;
pub mod control;
pub mod state;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod vmkit_tests;

use std::collections::BTreeMap;

use crate::engine::{us_to_ns, EventQueue, Ns, RngStream, Timer, NS_PER_MS};
use crate::controllers::{Action, Controller, HostStats};
use crate::guest::program::{Compiler, Names, Program};
use crate::guest::workloads;
use crate::host::{CostParams, Topology};
use crate::hv::sched::{self, HvScheduler, SchedRequest, VcpuFacts, VmFacts};
use crate::metrics::idle_wait::IdleWhileWaiting;
use crate::metrics::Histogram;
pub use crate::metrics::results::Results;
use crate::scenario::{OpSpec, Scenario, ScenarioError, StopRule, ThreadGroupSpec, WorkloadSpec};
use state::*;

/// Front-end overrides of a scenario.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub scheduler: Option<String>,
    pub seed: Option<u64>,
    /// Check the invariants after every event (on in all tests).
    pub check: bool,
}

/// A failure during a run: an invariant violation found by the checker.
#[derive(Debug, Clone)]
pub struct SimError {
    pub at_ns: Ns,
    pub message: String,
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invariant violated at t={} ns: {}", self.at_ns, self.message)
    }
}
impl std::error::Error for SimError {}

#[derive(Debug, Clone)]
pub(crate) enum Ev {
    Exec(VcpuId),
    Slice(PcpuId),
    /// The event-check IPI of a tickle lands on a pCPU (`World::resched_arrives`).
    Resched(PcpuId),
    /// A reschedule that waited for the pCPU's own hypervisor work is due
    /// (`World::serve_resched`).
    ReschedDue(PcpuId),
    SchedTimer(u64),
    VipiArrive(VcpuId, IrqWork),
    WakeThread(ThreadId),
    IoComplete(ThreadId),
    GuestBalance(VmId),
    GuestTick(VcpuId),
    OfflineRetry(VcpuId),
    HotplugStep(VmId),
    /// The tasklet running on a pCPU without a vCPU finished (`hv/tasklet.rs`).
    TaskletDone(PcpuId),
    /// A client request of arrival source `.1` reaches VM `.0` (`guest/requests.rs`).
    RequestArrive(VmId, usize),
    /// Period `k` of the background load begins on a pCPU (`hv::background`).
    Background(PcpuId, u64),
    /// The host timer interrupt at which a vCPU's VMM polls its mailbox (`hv::vipi`).
    VmmPoll(VcpuId),
    /// The exit of running vCPU `.0` that wakes halted vCPU `.1` is handled (`hv::machine`
    /// `wake_after_exit`).
    ExitWake(VcpuId, VcpuId),
    /// An idle pCPU has left its C-state (`hv::cstate`).
    CstateExit(PcpuId),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct PleCfg {
    pub enabled: bool,
    pub window_cycles: u64,
    pub grow: u64,
    pub shrink: u64,
    pub max_cycles: u64,
}

pub struct World {
    pub(crate) q: EventQueue<Ev>,
    pub(crate) topo: Topology,
    pub(crate) costs: CostParams,
    pub(crate) pcpus: Vec<Pcpu>,
    pub(crate) vcpus: Vec<Vcpu>,
    pub(crate) vms: Vec<Vm>,
    pub(crate) threads: Vec<Thread>,
    pub(crate) programs: Vec<Program>,
    pub(crate) calls: Vec<IpiCall>,
    pub(crate) sched: Option<Box<dyn HvScheduler>>,
    pub(crate) facts: Vec<VcpuFacts>,
    pub(crate) vm_facts: Vec<VmFacts>,
    pub(crate) affinity: Vec<Option<Vec<PcpuId>>>,
    pub(crate) pcpu_cur: Vec<Option<VcpuId>>,
    pub(crate) requests: Vec<SchedRequest>,
    /// Requests completed at or before this time are left out of the request summaries
    /// (`Scenario::warmup_ms`; None: all count).
    pub(crate) requests_warmup_ns: Option<Ns>,
    pub(crate) sched_timers: BTreeMap<u64, Timer>,
    pub(crate) ple: PleCfg,
    /// Xen's lazy context switch (`HvScheduler::lazy_context_switch`, `hv::lazy_switch`).
    pub(crate) lazy_context_switch: bool,
    pub(crate) seed: u64,
    /// Dithered hypervisor costs (`hv::jitter`; off unless `host.costs.hv_cost_jitter_pct`).
    pub(crate) hv_jitter: crate::hv::jitter::HvJitter,
    /// Actions applied so far (for the results).
    pub(crate) actions: Vec<control::ActionRecord>,
    pub(crate) idle_wait: IdleWhileWaiting,
    /// The checker's per-VM bound on a vCPU's refill debt and the thread count it was computed
    /// for (`sim::check`; threads are only ever added).
    pub(crate) refill_bound: std::cell::RefCell<(usize, Vec<Ns>)>,
    pub(crate) vipi_delivery: crate::hv::vipi::VipiDelivery,
    pub(crate) vmm_timeslice_ns: Ns,
    pub(crate) halt_poll: crate::hv::halt_poll::HaltPollCfg,
    pub(crate) background: Option<crate::hv::background::Background>,
    /// Virtual PMUs of the vCPUs (synthesised only for policies that read them).
    pub(crate) pmu: crate::hv::perfcounters::Pmu,
    /// Shared-LLC pressure: each socket's recent footprint (`hv::llc`).
    pub(crate) llc: crate::hv::footprint::FootprintDomains,
    /// TLB pressure: each pCPU's recent translations (`hv::tlb`).
    pub(crate) tlb: crate::hv::footprint::FootprintDomains,
    /// The timeline trace, when one is on (`Simulation::enable_trace`).
    pub(crate) trace: Option<crate::trace::Recorder>,
}

pub struct Simulation {
    w: World,
    scenario: Scenario,
    scheduler: String,
    horizon: Ns,
    to_completion: bool,
    check: bool,
    done: bool,
    finalized: bool,
    /// The scenario's built-in controller and when it runs next.
    controller: Option<Box<dyn Controller>>,
    next_control: Ns,
}

fn expand(vm_vcpus: u32, w: &WorkloadSpec, tag: &str, mem: &workloads::MemoryModel) -> Vec<ThreadGroupSpec> {
    match w {
        WorkloadSpec::Hog { threads } => workloads::hog(vm_vcpus, *threads),
        WorkloadSpec::Parallel(p) => workloads::parallel(vm_vcpus, p, tag),
        WorkloadSpec::Forkbench(p) => workloads::forkbench(p),
        WorkloadSpec::Hackbench(p) => workloads::hackbench(p, tag),
        WorkloadSpec::Rambench(p) => workloads::rambench(p),
        WorkloadSpec::Kbuild(p) => workloads::kbuild(vm_vcpus, p, tag),
        WorkloadSpec::Server(p) => workloads::server(vm_vcpus, p, tag),
        WorkloadSpec::Stream(p) => workloads::stream(vm_vcpus, p, tag, mem),
        WorkloadSpec::Epcc(p) => workloads::epcc(vm_vcpus, p, tag),
        WorkloadSpec::Imb(p) => workloads::imb(vm_vcpus, p, tag),
        WorkloadSpec::Custom { groups } => groups.clone(),
    }
}

fn runs_forever(ops: &[OpSpec]) -> bool {
    ops.iter().any(|o| match o {
        OpSpec::Forever { .. } => true,
        OpSpec::Loop { body, .. } | OpSpec::Every { body, .. } | OpSpec::Fork { body, .. } => runs_forever(body),
        _ => false,
    })
}

impl Simulation {
    pub fn new(sc: &Scenario, ov: &Overrides) -> Result<Simulation, ScenarioError> {
        let scheduler = ov.scheduler.clone().unwrap_or_else(|| sc.hypervisor.scheduler.clone());
        let seed = ov.seed.unwrap_or(sc.seed);
        let params = if ov.scheduler.is_some() && ov.scheduler.as_deref() != Some(sc.hypervisor.scheduler.as_str()) {
            BTreeMap::new()
        } else {
            sc.hypervisor.params.clone()
        };
        let sched = sched::build(&scheduler, &params, &sc.hypervisor.ple)?;
        let controller = sc.controller.as_ref().map(crate::controllers::build).transpose()?;
        let topo = Topology::new(sc.host.sockets, sc.host.cores_per_socket, sc.host.numa_nodes, sc.host.numa_distance.clone(), sc.host.cpu_ghz);
        let costs = sc.host.costs.clone();
        let n_p = topo.n_pcpus();
        let n_sockets = topo.sockets as usize;
        let pcpus = (0..n_p)
            .map(|p| Pcpu { socket: topo.socket_of(p), node: topo.node_of(p), idle_since: Some(0), ..Default::default() })
            .collect();
        let ple_spec = &sc.hypervisor.ple;
        let ple = PleCfg {
            enabled: ple_spec.enabled,
            window_cycles: ple_spec.window_cycles,
            grow: ple_spec.grow.unwrap_or(if sched.ple_grows_by_default() { 2 } else { 1 }),
            shrink: ple_spec.shrink,
            max_cycles: ple_spec.window_max_cycles,
        };
        let halt_poll = crate::hv::halt_poll::HaltPollCfg::new(&sc.hypervisor.halt_poll, sched.halt_polls_by_default());
        let background = sc.host.background.as_ref().map(|b| crate::hv::background::Background::new(b, n_p));
        let lazy_context_switch = sched.lazy_context_switch();
        let mut w = World {
            q: EventQueue::new(),
            topo,
            costs,
            pcpus,
            vcpus: Vec::new(),
            vms: Vec::new(),
            threads: Vec::new(),
            programs: Vec::new(),
            calls: Vec::new(),
            sched: Some(sched),
            facts: Vec::new(),
            vm_facts: Vec::new(),
            affinity: Vec::new(),
            pcpu_cur: vec![None; n_p],
            requests: Vec::new(),
            requests_warmup_ns: sc.warmup_ms.map(|ms| (ms * NS_PER_MS as f64).round() as Ns),
            sched_timers: BTreeMap::new(),
            ple,
            lazy_context_switch,
            seed,
            hv_jitter: crate::hv::jitter::HvJitter::new(sc.host.costs.hv_cost_jitter_pct, sc.host.costs.hv_cost_cv, seed, n_p),
            actions: Vec::new(),
            idle_wait: IdleWhileWaiting::new(n_p),
            refill_bound: Default::default(),
            vipi_delivery: sc.hypervisor.vipi_delivery,
            vmm_timeslice_ns: sc.hypervisor.vmm_timeslice_ms * NS_PER_MS,
            halt_poll,
            background,
            pmu: Default::default(),
            llc: crate::hv::footprint::FootprintDomains::new(n_sockets),
            tlb: crate::hv::footprint::FootprintDomains::new(n_p),
            trace: None,
        };
        let (mut all_finite, mut any_finite) = (true, false);
        let mut global_vcpu = 0usize;
        for (i, vs) in sc.vms.iter().enumerate() {
            let vm_name = vs.name.clone().unwrap_or_else(|| format!("vm{i}"));
            let online = vs.guest.online_vcpus.unwrap_or(vs.vcpus);
            let mut vcpu_ids = Vec::new();
            for k in 0..vs.vcpus {
                let mask: Option<Vec<usize>> = match (&vs.pin, &vs.cpus) {
                    (Some(p), _) => Some(vec![p[k as usize] as usize]),
                    (None, Some(c)) => Some(c.iter().map(|&q| q as usize).collect()),
                    (None, None) => None,
                };
                // Outside its mask a vCPU moves to an allowed pCPU (vcpu_set_affinity →
                // vcpu_migrate): here the next allowed one after its default place.
                let default_home = global_vcpu % n_p;
                let home = mask.as_ref().map_or(default_home, |m| {
                    (0..n_p).map(|d| (default_home + d) % n_p).find(|q| m.contains(q)).unwrap_or(m[0])
                });
                global_vcpu += 1;
                let id = w.vcpus.len();
                w.vcpus.push(Vcpu::new(i, k, home, k < online, ple.window_cycles));
                w.affinity.push(mask);
                vcpu_ids.push(id);
            }
            let mut names = Names::default();
            let mut groups_all = Vec::new();
            let mut finite = true;
            for (j, wl) in vs.workloads.iter().enumerate() {
                let tag = format!("w{j}");
                for g in expand(vs.vcpus, wl, &tag, &workloads::MemoryModel::new(&w.topo, &w.costs)) {
                    finite &= !runs_forever(&g.program);
                    groups_all.push((j, g));
                }
            }
            let mut vm = Vm {
                name: vm_name.clone(),
                weight: vs.weight,
                cap_pct: vs.cap_pct,
                vcpus: vcpu_ids.clone(),
                memory_node: vs.memory_node,
                spinlock: vs.guest.spinlock,
                slice_ns: us_to_ns(vs.guest.slice_us),
                balance_ns: us_to_ns(vs.guest.balance_interval_us).max(1),
                tick_ns: us_to_ns(vs.guest.tick_us).max(1),
                tickless: vs.guest.tickless,
                busy_tick: vs.guest.busy_tick,
                ttwu_queue: vs.guest.ttwu_queue,
                wake_placement: vs.guest.wake_placement,
                ttwu_rq_lock: vs.guest.ttwu_rq_lock,
                resched_ipi_once: vs.guest.resched_ipi_once,
                irq_vcpu: vs.guest.irq_vcpu,
                pv: vs.guest.paravirt.clone(),
                pv_spin_ns: w.topo.cycles_to_ns(vs.guest.paravirt.spin_loops.saturating_mul(vs.guest.paravirt.pause_cycles)),
                pv_check_ns: w.topo.cycles_to_ns(crate::guest::paravirt::PV_PREV_CHECK_LOOPS * vs.guest.paravirt.pause_cycles),
                threads: Vec::new(),
                live_threads: 0,
                finite,
                finished_at: None,
                locks: Vec::new(),
                mutexes: Vec::new(),
                rwsems: Vec::new(),
                barriers: Vec::new(),
                queues: Vec::new(),
                conds: Vec::new(),
                next_mm: 0,
                mm: Default::default(),
                io_rng: RngStream::new(seed, &format!("{vm_name}/io")),
                lock_wait: Histogram::default(),
                vipi_latency: Histogram::default(),
                balance_timer: Timer::default(),
                ops: 0,
                last_op_ns: None,
                channel_transfers: 0,
                message_line_transfers: 0,
                skb_cache: Default::default(),
                cross_socket_messages: 0,
                hotplug_spec: vs.guest.hotplug.clone(),
                hotplug: Default::default(),
                passthrough: vs.io_path == crate::scenario::IoPath::Passthrough,
                requests: Default::default(),
                marks: Vec::new(),
            };
            let mut placed = 0u32;
            for (gi, (j, g)) in groups_all.iter().enumerate() {
                let prog = Compiler { names: &mut names, programs: &mut w.programs }.compile(&g.program);
                let mm = vm.next_mm;
                vm.next_mm += 1;
                let affinity = g.affinity.as_ref().map(|a| {
                    let mut m = vec![false; vs.vcpus as usize];
                    for &x in a {
                        m[x as usize] = true;
                    }
                    m
                });
                for k in 0..g.threads {
                    let (aff, home) = if g.bind {
                        let list: Vec<u32> = g.affinity.clone().unwrap_or_else(|| (0..online).collect());
                        let x = list[k as usize % list.len()];
                        let mut m = vec![false; vs.vcpus as usize];
                        m[x as usize] = true;
                        (Some(m), x)
                    } else {
                        let home = match &g.affinity {
                            Some(a) => a[k as usize % a.len()],
                            None => placed % online,
                        };
                        (affinity.clone(), home)
                    };
                    placed += 1;
                    let name = format!("{vm_name}/w{j}/g{gi}/t{k}");
                    let tid = w.threads.len();
                    let slots = w.programs[prog].slots;
                    w.threads.push(Thread::new(ThreadSpawn {
                        vm: i,
                        name,
                        seed,
                        prog,
                        slots,
                        mm,
                        vcpu: vcpu_ids[home as usize],
                        affinity: aff,
                        ws_kib: g.working_set_kib.unwrap_or(256),
                        parent: None,
                    }));
                    vm.threads.push(tid);
                    vm.live_threads += 1;
                    vm.mm.add_user(mm);
                    w.vcpus[vcpu_ids[home as usize]].runq.push_back(tid);
                }
            }
            // In index order (a name's index is its order of first use, not its sort order),
            // so that lock l is the object built for its own name.
            let mut locks: Vec<(&String, usize)> = names.locks.iter().map(|(n, &l)| (n, l)).collect();
            locks.sort_by_key(|&(_, l)| l);
            for (name, l) in locks {
                debug_assert_eq!(vm.locks.len(), l);
                vm.locks.push(SpinLockObj {
                    kind: vs.guest.spinlock,
                    holder: None,
                    waiters: Default::default(),
                    hybrid: vs.guest.paravirt.spinlock && vs.guest.spinlock == crate::scenario::SpinlockKind::Queued,
                    unfair: Vec::new(),
                    pending: false,
                    slow: false,
                    head_hashed: false,
                    rng: RngStream::new(seed, &format!("{vm_name}/lock/{name}")),
                });
            }
            vm.mutexes = (0..names.mutexes.len()).map(|_| MutexObj::default()).collect();
            vm.rwsems = (0..names.rwsems.len()).map(|_| Default::default()).collect();
            let mut barriers: Vec<(usize, u32)> = names.barriers.values().copied().collect();
            barriers.sort();
            vm.barriers = barriers.into_iter().map(|(_, parties)| BarrierObj { parties, ..Default::default() }).collect();
            let mut queues: Vec<(usize, u32, Option<u32>)> = names.queues.values().copied().collect();
            queues.sort();
            vm.queues = queues
                .into_iter()
                .map(|(_, capacity, writable_at)| QueueObj { capacity, writable_at, ..Default::default() })
                .collect();
            vm.conds = (0..names.conds.len()).map(|_| CondObj::default()).collect();
            vm.requests.ports = (0..names.ports.len()).map(|_| Default::default()).collect();
            for (j, wl) in vs.workloads.iter().enumerate() {
                if let Some((port, rate)) = workloads::arrivals(wl, &format!("w{j}")) {
                    let idx = names.ports[&port];
                    let rng = RngStream::new(seed, &format!("{vm_name}/port/{port}"));
                    vm.requests.sources.push(crate::guest::requests::Arrivals::new(idx, rate, rng));
                }
            }
            vm.marks = vec![Default::default(); names.marks.len()];
            for (name, &m) in &names.marks {
                vm.marks[m].name = name.clone();
            }
            all_finite &= vm.finite;
            any_finite |= vm.finite;
            w.vm_facts.push(VmFacts { weight: vs.weight, cap_pct: vs.cap_pct, vcpus: vcpu_ids });
            w.vms.push(vm);
        }
        let pmu_vms: Vec<(String, usize)> = w.vms.iter().map(|vm| (vm.name.clone(), vm.vcpus.len())).collect();
        let reads_pmu = w.sched.as_ref().map_or(false, |s| s.reads_pmu());
        w.pmu = crate::hv::perfcounters::Pmu::new(reads_pmu, sc.host.cpu_ghz, seed, &pmu_vms);
        if let Some(s) = w.sched.as_mut() {
            s.set_seed(seed);
        }
        w.facts = (0..w.vcpus.len()).map(|v| w.facts_of(v)).collect();
        // Whether the run ends, before its horizon, at the event where the last finite VM
        // finishes: without `duration_ms` if every VM is finite, and with `stop = "finite_done"`
        // if one is (validation rejects it otherwise; unvalidated, such a run lasts to its horizon).
        let to_completion = match sc.stop {
            StopRule::Duration => sc.duration_ms.is_none() && all_finite,
            StopRule::FiniteDone => any_finite,
        };
        let horizon_ms = sc.duration_ms.unwrap_or(sc.max_duration_ms);
        let horizon = (horizon_ms * NS_PER_MS as f64).round() as Ns;
        w.start();
        let next_control = controller.as_ref().map_or(Ns::MAX, |c| c.interval_ns().max(1));
        Ok(Simulation {
            w,
            scenario: sc.clone(),
            scheduler,
            horizon,
            to_completion,
            check: ov.check,
            done: false,
            finalized: false,
            controller,
            next_control,
        })
    }

    /// Run until simulated time `t` (or the end of the run, whichever comes first), stopping at
    /// each interval of the built-in controller to let it act.
    pub fn run_until(&mut self, t: Ns) -> Result<(), SimError> {
        let t = t.min(self.horizon);
        while !self.done && self.next_control <= t {
            let at = self.next_control;
            self.run_events_until(at)?;
            if self.done {
                break;
            }
            let mut c = self.controller.take().expect("controller present while next_control is set");
            let stats = self.w.host_stats();
            let actions = c.step(&stats);
            let name = c.name().to_string();
            self.next_control = at + c.interval_ns().max(1);
            self.controller = Some(c);
            self.apply_checked(&name, &actions, &stats).map_err(|e| SimError { at_ns: at, message: format!("controller `{name}` asked for an invalid action: {e}") })?;
        }
        self.run_events_until(t)
    }

    /// What a controller would see now.
    pub fn stats(&self) -> HostStats {
        self.w.host_stats()
    }

    /// Apply actions from an outside controller (`by` names it in the results). All actions
    /// are checked first; if one is invalid none is applied and the error names it
    /// (`actions[1].pcpus: ...`).
    pub fn apply(&mut self, by: &str, actions: &[Action]) -> Result<(), ScenarioError> {
        let stats = self.w.host_stats();
        self.apply_checked(by, actions, &stats)
    }

    fn apply_checked(&mut self, by: &str, actions: &[Action], stats: &HostStats) -> Result<(), ScenarioError> {
        for (i, a) in actions.iter().enumerate() {
            a.validate(stats).map_err(|(field, reason)| ScenarioError::new(format!("actions[{i}].{field}"), reason))?;
            if let (Action::SetCap { cap_pct, .. }, Some(s)) = (a, &self.w.sched) {
                if *cap_pct > 0 && !s.enforces_caps() {
                    return Err(ScenarioError::new(format!("actions[{i}].cap_pct"), format!("scheduler `{}` cannot enforce a cap", s.name())));
                }
            }
        }
        let t_ms = self.w.now() as f64 / NS_PER_MS as f64;
        for a in actions {
            self.w.apply_action(a);
            self.w.actions.push(control::ActionRecord { t_ms, by: by.to_string(), action: a.clone() });
        }
        Ok(())
    }

    fn run_events_until(&mut self, t: Ns) -> Result<(), SimError> {
        while !self.done {
            match self.w.q.peek_time() {
                Some(at) if at <= t => {}
                _ => break,
            }
            let (_, gen, ev) = self.w.q.pop().expect("peeked");
            self.w.handle(ev, gen);
            if self.check {
                self.w.check().map_err(|m| SimError { at_ns: self.w.q.now(), message: m })?;
            }
            if self.to_completion && self.w.vms.iter().all(|vm| !vm.finite || vm.finished_at.is_some()) {
                self.done = true;
            }
        }
        if !self.done {
            self.w.q.advance_to(t.max(self.w.q.now()));
            if t >= self.horizon {
                self.done = true;
            }
        }
        if self.done && !self.finalized {
            self.finalized = true;
            self.w.settle();
            if self.check {
                self.w.check_time_conservation().map_err(|m| SimError { at_ns: self.w.q.now(), message: m })?;
            }
        }
        Ok(())
    }

    pub fn run(&mut self) -> Result<Results, SimError> {
        self.run_until(self.horizon)?;
        Ok(self.results())
    }
    pub fn now_ns(&self) -> Ns {
        self.w.q.now()
    }
    pub fn horizon_ns(&self) -> Ns {
        self.horizon
    }
    pub fn is_done(&self) -> bool {
        self.done
    }
    pub fn events_processed(&self) -> u64 {
        self.w.q.events_popped()
    }
    pub fn results(&self) -> Results {
        crate::metrics::results::build(&self.w, &self.scenario, &self.scheduler)
    }

    /// Record every vCPU's run state over `[from_ns, until_ns)` of simulated time, at most
    /// `max_slices` state slices (`trace`); from now on, so call it before running. Tracing
    /// does not change the run.
    pub fn enable_trace(&mut self, from_ns: Ns, until_ns: Ns, max_slices: usize) -> Result<(), ScenarioError> {
        if from_ns >= until_ns {
            return Err(ScenarioError::new("trace.window", format!("must start before it ends, got {from_ns} ns to {until_ns} ns")));
        }
        if max_slices == 0 {
            return Err(ScenarioError::new("trace.max_slices", "must be at least 1, got 0"));
        }
        self.w.trace = Some(crate::trace::Recorder::new(from_ns, until_ns, max_slices, self.w.q.now(), &self.w.vcpus));
        Ok(())
    }

    /// The trace so far as Chrome Trace Event JSON (`trace`), None if none is on.
    pub fn trace_json(&self) -> Option<String> {
        let t = self.w.trace.as_ref()?;
        Some(t.chrome_json(self.w.q.now(), self.w.pcpus.len(), &self.w.vms, &self.w.vcpus, &self.w.actions))
    }

    /// When the trace's slice cap stopped its recording, if it did.
    pub fn trace_truncated_at_ns(&self) -> Option<Ns> {
        self.w.trace.as_ref()?.truncated_at_ns()
    }

    /// Bring vCPU `vcpu` of VM `vm` online or offline in its guest (CPU hotplug).
    pub fn set_vcpu_online(&mut self, vm: usize, vcpu: u32, online: bool) -> Result<(), ScenarioError> {
        let v = *self
            .w
            .vms
            .get(vm)
            .and_then(|m| m.vcpus.get(vcpu as usize))
            .ok_or_else(|| ScenarioError::new(format!("vms[{vm}].vcpus"), format!("no vCPU {vcpu} in VM {vm}")))?;
        self.w.set_vcpu_online(v, online);
        Ok(())
    }

    /// Per-vCPU run time so far (ns), in VM order.
    pub fn vcpu_run_ns(&self) -> Vec<Ns> {
        self.w.vcpus.iter().map(|v| v.run_ns).collect()
    }

    #[cfg(test)]
    pub(crate) fn world(&mut self) -> &mut World {
        &mut self.w
    }

    /// Break an invariant on purpose (tests of the checker).
    #[doc(hidden)]
    pub fn corrupt_for_test(&mut self) {
        if let Some(p) = self.w.pcpus.iter().position(|p| p.cur.is_some()) {
            let v = self.w.pcpus[p].cur.unwrap();
            let other = (p + 1) % self.w.pcpus.len();
            self.w.pcpus[other].cur = Some(v);
        } else {
            self.w.pcpus[0].cur = Some(0);
        }
    }

    /// Work draws of every guest thread so far (tests of common random numbers).
    #[doc(hidden)]
    pub fn thread_draws(&self) -> Vec<(String, u64, u64)> {
        let mut v: Vec<_> = self.w.threads.iter().map(|t| (t.name.clone(), t.rng.draws(), t.rng.trace())).collect();
        v.sort();
        v
    }
}

pub fn results_json(r: &Results) -> String {
    serde_json::to_string_pretty(r).expect("results serialise")
}

impl World {
    pub(crate) fn now(&self) -> Ns {
        self.q.now()
    }

    fn start(&mut self) {
        self.with_sched(|s, view| s.init(view));
        for v in 0..self.vcpus.len() {
            if self.vcpus[v].online && !self.vcpus[v].runq.is_empty() {
                self.hv_wake(v);
            }
        }
        for v in 0..self.vcpus.len() {
            let vm = &self.vms[self.vcpus[v].vm];
            if (!vm.tickless && self.vcpus[v].run == RunState::Blocked) || (vm.busy_tick && self.vcpus[v].online) {
                let at = vm.tick_ns;
                self.q.arm(&mut self.vcpus[v].tick_timer, at, Ev::GuestTick(v));
            }
        }
        self.start_arrivals();
        self.background_start();
        for vm in 0..self.vms.len() {
            let at = self.vms[vm].balance_ns;
            self.q.arm(&mut self.vms[vm].balance_timer, at, Ev::GuestBalance(vm));
        }
    }

    fn handle(&mut self, ev: Ev, gen: u32) {
        match ev {
            Ev::Exec(v) => {
                if self.vcpus[v].exec_timer.fire(gen) {
                    self.on_exec_timer(v);
                }
            }
            Ev::Slice(p) => {
                if self.pcpus[p].slice_timer.fire(gen) {
                    self.schedule(p, sched::Reason::Timer);
                }
            }
            Ev::Resched(p) => self.resched_arrives(p),
            Ev::ReschedDue(p) => self.serve_resched(p),
            Ev::CstateExit(p) => self.cstate_exit(p),
            Ev::SchedTimer(id) => {
                let fire = self.sched_timers.get_mut(&id).map_or(false, |t| t.fire(gen));
                if fire {
                    self.pmu_refresh();
                    self.with_sched(|s, view| s.timer(view, id));
                }
            }
            Ev::VipiArrive(v, work) => self.vipi_arrive(v, work),
            Ev::WakeThread(t) => self.wake_thread(t, None),
            Ev::IoComplete(t) => self.io_complete(t),
            Ev::GuestTick(v) => {
                if self.vcpus[v].tick_timer.fire(gen) {
                    self.guest_tick(v);
                }
            }
            Ev::OfflineRetry(v) => {
                self.vcpus[v].offline_pending = false;
                self.set_vcpu_online(v, false);
            }
            Ev::HotplugStep(vm) => self.hotplug_step(vm),
            Ev::TaskletDone(p) => {
                if self.pcpus[p].tasklet.timer.fire(gen) {
                    self.tasklet_done(p);
                }
            }
            Ev::RequestArrive(vm, s) => {
                if self.vms[vm].requests.sources[s].timer.fire(gen) {
                    self.request_arrive(vm, s);
                }
            }
            Ev::Background(p, k) => self.background_tick(p, k),
            Ev::ExitWake(w, u) => self.exit_wake(w, u),
            Ev::VmmPoll(v) => {
                if self.vcpus[v].vmm_poll_timer.fire(gen) {
                    self.vmm_poll(v);
                }
            }
            Ev::GuestBalance(vm) => {
                if self.vms[vm].balance_timer.fire(gen) {
                    self.guest_balance(vm);
                }
            }
        }
    }
}
