//! World state shared by the host, hypervisor and guest layers: pCPUs, vCPUs, VMs, guest
//! threads and synchronisation objects. Behaviour lives in `hv::machine` (hypervisor side)
//! and `guest::kernel` (guest side); this file holds only data.

use std::collections::VecDeque;

use crate::engine::{Ns, RngStream, Timer};
use crate::host::ExitReason;
use crate::metrics::cputime::GuestCputime;
use crate::metrics::{Histogram, TimeBuckets};
use crate::scenario::SpinlockKind;

pub type PcpuId = usize;
pub type VcpuId = usize;
pub type VmId = usize;
pub type ThreadId = usize;

/// Hypervisor run state of a vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Running(PcpuId),
    /// Runnable, waiting in a hypervisor runqueue (its time counts as steal).
    Runnable,
    /// Halted (HLT) in the hypervisor until an interrupt.
    Blocked,
    /// Offline in the guest: never scheduled.
    Offline,
}

#[derive(Debug, Default)]
pub struct Pcpu {
    pub socket: u32,
    pub node: u32,
    pub cur: Option<VcpuId>,
    /// Guest + hypervisor time run here (drives cache eviction of departed vCPUs).
    pub busy_ns: Ns,
    pub idle_ns: Ns,
    pub hv_ns: Ns,
    pub guest_ns: Ns,
    pub idle_since: Option<Ns>,
    pub slice_timer: Timer,
    pub resched_pending: bool,
    /// The idle pCPU is leaving its C-state (`hv::cstate`): what reached it is handled then.
    pub cstate_exit_at: Option<Ns>,
    /// C-state exits taken (`hv::cstate`).
    pub cstate_exits: u64,
    /// The pending reschedule is a (directed) yield of the current vCPU.
    pub yield_pending: bool,
    pub sched_calls: u64,
    pub context_switches: u64,
    pub migrations_in: u64,
    pub tasklet: crate::hv::tasklet::PcpuTasklets,
    /// Whose state the pCPU holds, lazy-switch work and switch counts by kind
    /// (`hv::lazy_switch`).
    pub lazy: crate::hv::lazy_switch::PcpuLazy,
    /// Current or last background spin (`hv::background`) and the background time so far.
    pub bg_start: Ns,
    pub bg_until: Ns,
    pub bg_ns: Ns,
    /// Guest compute run here, and its work in time at no LLC stall (`hv::llc`) (ns).
    pub llc_compute_ns: f64,
    pub llc_work_ns: f64,
    /// The TLB stall within that compute (`hv::tlb`) (ns).
    pub tlb_stall_ns: f64,
    /// TLB flushes of this pCPU at full context switches and the page walks they cost the
    /// threads that re-filled their translations here (`hv::tlb`, `tlb_walk_cycles`), as paid
    /// (ns).
    pub tlb_flushes: u64,
    pub tlb_walk_ns: f64,
    /// Cache refills paid by threads running here (`World::pay_refill`: the time a refill
    /// debt took, not what a dispatch owed, part of which a cap may drop), and their part
    /// from memory (ns).
    pub llc_refill_ns: f64,
    pub llc_refill_dram_ns: f64,
    /// Hypervisor costs charged here while they scale with the socket's CPI
    /// (`host.costs.hv_costs_reference_cpi`): their sum at the reference CPI, and the sum of
    /// each times the CPI it was charged at (ns, ns x CPI factor).
    pub hv_cost_ref_ns: f64,
    pub hv_cost_cpi_ns: f64,
    /// Every hypervisor cost charged here through `World::hv_cost_ns` as work at CPI factor 1
    /// (ns; in proportion to the instructions it retires): a cost stated at the reference CPI
    /// counts cost / reference, a fixed time (reference 0) its time (`totals.hv_work_ns`).
    pub hv_work_ns: f64,
    /// Hypervisor time charged here by the VM exit whose handling it belongs to (seed 001
    /// Figure 9's breakdown, XenTrace's exit reasons), indexed by `ExitReason::slot`; the
    /// last slot is time outside any exit (tasklets and switches on an idle pCPU, background
    /// load). Charged when incurred: a vCPU's debt counts here before it is paid.
    pub hv_by_exit_ns: [Ns; ExitReason::SLOTS],
}

/// A unit of interrupt work the vCPU runs before resuming its thread.
#[derive(Debug, Clone)]
pub struct IrqWork {
    pub left_ns: Ns,
    pub action: IrqAction,
    pub sent_at: Ns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqAction {
    /// Function-call IPI handler: acknowledge call `call`.
    CallAck(usize),
    /// Device interrupt: wake the thread whose I/O completed.
    IoDone(ThreadId),
    /// A message from the host to the VM's hotplug agent (`guest::hotplug`).
    Hotplug(VmId),
    /// Network receive interrupt: a client request arrived on a port (`sent_at` = arrival).
    RequestRx(usize),
    /// Guest timer tick handler (`hv::vipi` busy ticks).
    Tick,
    /// Reschedule IPI handler: the woken thread preempts the current one (`guest::resched`);
    /// true if the preempted thread becomes the vCPU's last buddy (2.6.32's `LAST_BUDDY`,
    /// decided at the wake-up).
    Resched(ThreadId, bool),
    /// Reschedule IPI handler of a wake list (`guest.ttwu_queue`): queue the threads on the
    /// vCPU's wake list (`sched_ttwu_pending`).
    WakeList(VcpuId),
    Nothing,
}

#[derive(Debug)]
pub struct Vcpu {
    pub vm: VmId,
    pub idx: u32,
    pub run: RunState,
    pub last_pcpu: PcpuId,
    pub state_since: Ns,
    /// Start of the current accounting segment while running.
    pub seg_start: Ns,
    /// Hypervisor time owed before the guest runs (world switch, exits).
    pub hv_debt_ns: Ns,
    pub irq: VecDeque<IrqWork>,
    /// Interrupts that arrived while descheduled; injected at the next dispatch.
    pub pending_irq: Vec<IrqWork>,
    /// Threads woken onto this vCPU through its wake list (`guest.ttwu_queue`), with how long
    /// each slept, until its reschedule IPI's handler queues them (`guest::resched`).
    pub wake_list: Vec<(ThreadId, Option<Ns>)>,
    /// A wake-up run by this vCPU's own code onto its own runqueue asked its current thread to
    /// give way to this woken thread (Linux's `resched_task` on the local CPU: need-resched set,
    /// no IPI), at the thread's next preemption point (`guest::resched`; only under a 2.6.32
    /// `wake_placement`). Cleared whenever the vCPU switches threads. The flag: the preempted
    /// thread becomes the vCPU's last buddy (2.6.32's `LAST_BUDDY`, decided at the wake-up).
    pub need_resched: Option<(ThreadId, bool)>,
    pub refill_debt_ns: Ns,
    /// Of the refill debt: the page walks (`hv::tlb`) and the cache part's misses to memory,
    /// paid pro rata with it (`World::pay_refill`) (ns).
    pub refill_debt_walks_ns: f64,
    pub refill_debt_dram_ns: f64,
    pub halt_pending: bool,
    /// pv TLB flush deferred while preempted: flush when next dispatched.
    pub flush_pending: bool,
    /// Guest side.
    pub online: bool,
    /// A `cpu_down` waits in stop_machine for this vCPU to reach a preemptible point
    /// (`guest::kernel::set_vcpu_online`); its retry is queued.
    pub offline_pending: bool,
    pub cur: Option<ThreadId>,
    pub runq: VecDeque<ThreadId>,
    pub exec_timer: Timer,
    /// Guest periodic tick while halted (only without tickless idle).
    pub tick_timer: Timer,
    /// Next host timer interrupt at which the VMM polls a waiting message (`hv::vipi`).
    pub vmm_poll_timer: Timer,
    /// PLE: current window (cycles) and spin time since the last exit or dispatch.
    pub ple_window_cycles: u64,
    pub ple_spun_ns: Ns,
    /// KVM flags: descheduled while runnable, and whether it was then in guest kernel mode.
    pub preempted: bool,
    pub preempted_in_kernel: bool,
    /// Woken from halt since it last ran by an accepted interrupt or a pv kick (KVM's
    /// `kvm_arch_dy_runnable`: `KVM_REQ_EVENT`, `pv.pv_unhalted`), which makes it a
    /// directed-yield candidate under Linux 5.3+ (`hv/sched/cfs.rs`); cleared at dispatch.
    pub dy_runnable: bool,
    /// `steal_time.preempted & KVM_VCPU_PREEMPTED` as the guest reads it (`vcpu_is_preempted`,
    /// pv TLB flush): set when descheduled while runnable *at an instruction boundary*, i.e.
    /// preempted through a host interrupt exit (tick, remote reschedule), not when it yielded
    /// from a PLE or hypercall exit (x86.c `kvm_steal_time_set_preempted` checks
    /// `at_instruction_boundary`, set only on external-interrupt exits, commit 6cd88243c7e0,
    /// Linux 6.0 and stable); cleared when it next runs (`record_steal_time`).
    pub steal_preempted: bool,
    /// End of its scheduling tail (`VcpuFacts::sched_tail_until`, `World::schedule`).
    pub sched_tail_until: Ns,
    /// Accounting.
    pub t: TimeBuckets,
    /// The guest's own tick-sampled accounting of this vCPU (`metrics::cputime`).
    pub cputime: GuestCputime,
    pub run_ns: Ns,
    pub steal_ns: Ns,
    pub halted_ns: Ns,
    pub dispatches: u64,
    pub migrations: u64,
    /// Guest threads its kernel switched in (from another thread or from idle; re-picking the
    /// thread that was running is no switch, as `schedule()` with `prev == next`), and the
    /// address-space loads among them (`guest::mm` `switch_mm`); the thread last switched in
    /// (`None` once the idle task runs).
    pub guest_switches: u64,
    pub last_switched_in: Option<ThreadId>,
    pub address_space_loads: u64,
    pub exits: [u64; ExitReason::ALL.len()],
    pub lhp: u64,
    pub lwp: u64,
    /// Affinity coefficient of the task last switched in (DP-Scheduling PI slot, seed 003 §3.3).
    pub ac_pct: u8,
    /// Background spin of its pCPU still to sit out (`hv::background`).
    pub bg_debt_ns: Ns,
    /// KVM halt polling (`hv::halt_poll`): window, start of the current halt, end of the
    /// current poll, polls attempted and successful.
    pub halt_poll_ns: Ns,
    pub halt_started: Option<Ns>,
    pub poll_until: Option<Ns>,
    pub halt_polls: u64,
    pub halt_polls_successful: u64,
    /// The address space whose translations this vCPU holds (`active_mm`; lazy while idle),
    /// see `guest::mm`.
    pub loaded_mm: Option<usize>,
    /// The nested-paging walks its thread owes after a guest address-space switch, charged
    /// with its next refill (`guest::mm`, `host.costs.nested_walk_extra_ns`).
    pub guest_walks_owed_ns: Ns,
    /// Shared-LLC and TLB pressure sampled at its last dispatch or thread switch-in
    /// (`World::cpi_sample`, `hv::llc`, `hv::tlb`): cycles per instruction of its guest
    /// compute relative to no misses, and the TLB stall's part of it (stall cycles per cycle
    /// of work).
    pub cpi_factor: f64,
    pub tlb_stall_ratio: f64,
    /// Linux 2.6.32's `rq->avg_idle` and `rq->idle_stamp` (`guest::wakeaffine`, read only
    /// under a 2.6.32 `wake_placement`): the running average of its idle periods, and when it
    /// last went through the new-idle balance with nothing to run.
    pub avg_idle_ns: Ns,
    pub idle_stamp: Option<Ns>,
    /// The vCPUs whose wake-ups hold this vCPU's runqueue lock, and the runqueues this vCPU's
    /// wake-ups hold; whether its `schedule()` spins for its lock (`guest::rqlock`).
    pub rq_lock_holders: Vec<VcpuId>,
    pub rq_locks_held: Vec<VcpuId>,
    pub rq_lock_spin: bool,
    /// A wake-up's reschedule IPI is on its way to this vCPU and it has not scheduled since
    /// (need-resched set; only under `guest.resched_ipi_once`, `guest::resched`).
    pub resched_ipi_sent: bool,
}

impl Vcpu {
    pub fn new(vm: VmId, idx: u32, pcpu: PcpuId, online: bool, ple_window_cycles: u64) -> Self {
        Vcpu {
            vm,
            idx,
            run: if online { RunState::Blocked } else { RunState::Offline },
            last_pcpu: pcpu,
            state_since: 0,
            seg_start: 0,
            hv_debt_ns: 0,
            irq: VecDeque::new(),
            pending_irq: Vec::new(),
            wake_list: Vec::new(),
            need_resched: None,
            refill_debt_ns: 0,
            refill_debt_walks_ns: 0.0,
            refill_debt_dram_ns: 0.0,
            halt_pending: false,
            flush_pending: false,
            online,
            offline_pending: false,
            cur: None,
            runq: VecDeque::new(),
            exec_timer: Timer::default(),
            tick_timer: Timer::default(),
            vmm_poll_timer: Timer::default(),
            ple_window_cycles,
            ple_spun_ns: 0,
            preempted: false,
            preempted_in_kernel: false,
            dy_runnable: false,
            steal_preempted: false,
            sched_tail_until: 0,
            t: TimeBuckets::default(),
            cputime: GuestCputime::default(),
            run_ns: 0,
            steal_ns: 0,
            halted_ns: 0,
            dispatches: 0,
            migrations: 0,
            guest_switches: 0,
            last_switched_in: None,
            address_space_loads: 0,
            exits: [0; ExitReason::ALL.len()],
            lhp: 0,
            lwp: 0,
            ac_pct: crate::guest::affinity::AC_INITIAL_PCT as u8,
            bg_debt_ns: 0,
            halt_poll_ns: 0,
            halt_started: None,
            poll_until: None,
            halt_polls: 0,
            halt_polls_successful: 0,
            loaded_mm: None,
            guest_walks_owed_ns: 0,
            cpi_factor: 1.0,
            tlb_stall_ratio: 0.0,
            avg_idle_ns: crate::guest::wakeaffine::INITIAL_AVG_IDLE_NS,
            idle_stamp: None,
            rq_lock_holders: Vec::new(),
            rq_locks_held: Vec::new(),
            rq_lock_spin: false,
            resched_ipi_sent: false,
        }
    }
    pub fn count_exit(&mut self, r: ExitReason) {
        self.exits[r.index()] += 1;
    }
    pub fn running_on(&self) -> Option<PcpuId> {
        match self.run {
            RunState::Running(p) => Some(p),
            _ => None,
        }
    }
    /// The pCPU it runs on or, not running, last ran on (where it runs next).
    pub fn pcpu(&self) -> PcpuId {
        self.running_on().unwrap_or(self.last_pcpu)
    }
}

/// What a guest thread does while its vCPU runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Activity {
    /// About to execute its next instruction.
    Ready,
    /// Work left (ns at full speed) and what completes when it is done.
    Compute { left: f64, mem_fraction: f64, then: AfterCompute },
    /// Spinning on a guest spinlock (kernel mode, PAUSE loop: PLE sees it). `pv_left` is the
    /// spin budget before a paravirtual waiter halts (`Ns::MAX` without pv spinlocks).
    SpinLock { lock: usize, since: Ns, pv_left: Ns },
    /// A paravirtual spinlock waiter that halted its vCPU (`kvm_wait`) until kicked.
    PvWait { lock: usize, since: Ns },
    /// A spinlock was handed over; the hand-off completes when this much run time has passed.
    LockGranted { lock: usize, left: Ns, since: Ns },
    /// Waiting for function-call IPI acknowledgements (kernel, preemption off, PLE sees it).
    IpiWait { call: usize },
    /// Spin-then-block at a barrier (user mode: no PLE on Intel, which exits only at CPL0).
    BarrierSpin { barrier: usize, gen: u64, left: Ns },
    /// Adaptive mutex: optimistic spin in the kernel before sleeping.
    MutexSpin { mutex: usize, left: Ns, since: Ns },
    /// Off the CPU, waiting for an event.
    Blocked,
    Exited,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterCompute {
    Next,
    /// End of a spinlock critical section: release the lock.
    ReleaseLock(usize),
    ReleaseMutex(usize),
    /// Local flush done: send the shootdown IPIs.
    SendShootdown,
}

impl Activity {
    /// Guest preemption is disabled (spinlock held or awaited, IPI wait).
    pub fn preempt_disabled(&self) -> bool {
        match self {
            Activity::Compute { then, .. } => !matches!(then, AfterCompute::Next | AfterCompute::ReleaseMutex(_)),
            Activity::SpinLock { .. } | Activity::PvWait { .. } | Activity::LockGranted { .. } | Activity::IpiWait { .. } => true,
            _ => false,
        }
    }
    /// Inside a spinlock critical section (the lock held, its section's work running).
    pub fn in_critical_section(&self) -> bool {
        matches!(self, Activity::Compute { then: AfterCompute::ReleaseLock(_), .. })
    }
    /// Touching only a few lines, not the thread's working set: polling a word in a spin-wait
    /// (a spinlock's, an IPI's acknowledgement, a mutex owner's, a barrier's), taking over a
    /// granted lock (the hand-off) or running a spinlock's critical section. Such work runs
    /// before its vCPU pays a refill debt (`World::refill_deferred`).
    pub fn on_few_lines(&self) -> bool {
        matches!(
            self,
            Activity::LockGranted { .. }
                | Activity::SpinLock { .. }
                | Activity::IpiWait { .. }
                | Activity::MutexSpin { .. }
                | Activity::BarrierSpin { .. }
        ) || self.in_critical_section()
    }
    /// Spinning in a PAUSE loop at CPL0, visible to pause-loop exiting.
    pub fn kernel_spin(&self) -> bool {
        matches!(self, Activity::SpinLock { .. } | Activity::IpiWait { .. } | Activity::MutexSpin { .. })
    }
}

#[derive(Debug)]
pub struct Thread {
    pub vm: VmId,
    pub name: String,
    pub prog: usize,
    pub pc: usize,
    pub slots: Vec<u64>,
    pub mm: usize,
    pub vcpu: VcpuId,
    pub affinity: Option<Vec<bool>>,
    pub act: Activity,
    pub rng: RngStream,
    pub ws_kib: u32,
    pub slice_used_ns: Ns,
    pub parent: Option<ThreadId>,
    pub live_children: u32,
    pub waiting_children: bool,
    pub lock_req_at: Ns,
    /// Duration drawn for the critical section awaiting its lock.
    pub pending_ns: Ns,
    /// The queue whose state the awaited lock guards (`Instr::Lock`'s `guards`): fetched when
    /// the lock is granted, inside the section.
    pub pending_guard: Option<usize>,
    /// The spinlock it spins for or holds was taken with interrupts off (`OpSpec::Lock`).
    pub irqs_off: bool,
    pub forks: u64,
    /// Arrival time of the client request taken by the last `accept`.
    pub request_since: Option<Ns>,
    /// Affinity coefficient and its statistics (seed 003 §3, `guest::affinity`).
    pub ac: crate::guest::affinity::TaskAffinity,
    /// The pCPU whose cache holds this thread's working set and that pCPU's `busy_ns` when
    /// the thread last ran there (None: never ran, nothing cached yet). See `hv/machine.rs`.
    pub cache_at: Option<(PcpuId, Ns)>,
    /// When the thread last blocked (wakeup preemption, `guest::resched`).
    pub blocked_at: Ns,
    /// When the thread last stopped running on a vCPU (blocked, preempted or migrated by
    /// exec; Linux's `se.exec_start` as `put_prev_entity` leaves it), None if it never ran:
    /// the cache-hot test of 2.6.32's new-idle pull (`guest::wakeaffine`).
    pub last_ran: Option<Ns>,
    /// Coherence misses on pipe/socket state owed by this thread, paid with its next compute
    /// (`guest::channel`).
    pub comm_debt_ns: Ns,
    /// The socket whose LLC last held this thread's working set and when it last ran there
    /// (`hv::llc`; None: never ran, or the LLC pressure model is off).
    pub llc_touch: Option<crate::hv::footprint::FootprintEntry>,
    /// The pCPU whose TLB last held this thread's translations and when it last ran there
    /// (`hv::tlb`; None: never ran, or the TLB pressure model is off).
    pub tlb_touch: Option<crate::hv::footprint::FootprintEntry>,
    /// The rw-semaphore step this thread takes when it releases the wait_lock it holds
    /// (`guest::rwsem`).
    pub rwsem_next: Option<crate::guest::rwsem::RwsemStep>,
}

/// Where a new guest thread starts and what it runs.
pub struct ThreadSpawn {
    pub vm: VmId,
    pub name: String,
    pub seed: u64,
    pub prog: usize,
    pub slots: usize,
    pub mm: usize,
    pub vcpu: VcpuId,
    pub affinity: Option<Vec<bool>>,
    pub ws_kib: u32,
    pub parent: Option<ThreadId>,
}

impl Thread {
    /// A runnable thread at the start of its program, with its own random stream.
    pub fn new(s: ThreadSpawn) -> Thread {
        Thread {
            vm: s.vm,
            rng: RngStream::new(s.seed, &s.name),
            name: s.name,
            prog: s.prog,
            pc: 0,
            slots: vec![0; s.slots],
            mm: s.mm,
            vcpu: s.vcpu,
            affinity: s.affinity,
            act: Activity::Ready,
            ws_kib: s.ws_kib,
            slice_used_ns: 0,
            parent: s.parent,
            live_children: 0,
            waiting_children: false,
            lock_req_at: 0,
            pending_ns: 0,
            pending_guard: None,
            irqs_off: false,
            forks: 0,
            request_since: None,
            cache_at: None,
            llc_touch: None,
            tlb_touch: None,
            rwsem_next: None,
            blocked_at: 0,
            last_ran: None,
            comm_debt_ns: 0,
            ac: Default::default(),
        }
    }

    pub fn allowed(&self, vcpu_idx: u32) -> bool {
        self.affinity.as_ref().map_or(true, |a| a.get(vcpu_idx as usize).copied().unwrap_or(false))
    }
}

#[derive(Debug)]
pub struct SpinLockObj {
    pub kind: SpinlockKind,
    pub holder: Option<ThreadId>,
    /// FIFO of waiters (ticket order for ticket and queued locks; the MCS queue of a pv
    /// qspinlock, head first).
    pub waiters: VecDeque<ThreadId>,
    /// pv qspinlock (`guest::paravirt`): the hybrid queued/unfair mode is on.
    pub hybrid: bool,
    /// pv qspinlock: spinners in `pv_hybrid_queued_unfair_trylock`, not in the MCS queue.
    pub unfair: Vec<ThreadId>,
    /// pv qspinlock: the pending bit (the queue head is in its active spin loop; no stealing).
    pub pending: bool,
    /// pv qspinlock: the lock word is `_Q_SLOW_VAL` (the head is hashed; the unlocker kicks it).
    pub slow: bool,
    /// pv qspinlock: the current queue head has hashed itself once (`lp` set).
    pub head_hashed: bool,
    pub rng: RngStream,
}

#[derive(Debug, Default)]
pub struct MutexObj {
    pub holder: Option<ThreadId>,
    pub sleepers: VecDeque<ThreadId>,
    pub spinners: Vec<ThreadId>,
}

#[derive(Debug, Default)]
pub struct BarrierObj {
    pub parties: u32,
    pub arrived: u32,
    pub gen: u64,
    pub sleepers: Vec<ThreadId>,
    pub spinners: Vec<ThreadId>,
}

#[derive(Debug, Default)]
pub struct QueueObj {
    pub capacity: u32,
    /// Blocked writers wake only when a get leaves at most this many messages, all at once
    /// (`OpSpec::Put` `writable_at`); None: one per freed slot.
    pub writable_at: Option<u32>,
    pub items: u32,
    pub getters: VecDeque<ThreadId>,
    pub putters: VecDeque<ThreadId>,
    /// The pCPU whose cache holds the queue's shared state (`guest::channel`).
    pub last_pcpu: Option<PcpuId>,
    /// Cache lines of one message's buffer, as the last put gave them (`guest::channel`).
    pub msg_lines: u32,
    /// Where each queued message was written: the writer's pCPU, oldest first.
    pub in_flight: VecDeque<PcpuId>,
}

#[derive(Debug, Default)]
pub struct CondObj {
    pub waiters: VecDeque<ThreadId>,
}

/// An in-flight `smp_call_function_many` (or TLB shootdown).
#[derive(Debug)]
pub struct IpiCall {
    pub sender: ThreadId,
    pub outstanding: u32,
    /// A TLB shootdown of this address space (lazy targets leave it, `guest::mm`).
    pub flush_mm: Option<usize>,
}

#[derive(Debug)]
pub struct Vm {
    pub name: String,
    pub weight: u32,
    pub cap_pct: u32,
    pub vcpus: Vec<VcpuId>,
    pub memory_node: u32,
    pub spinlock: SpinlockKind,
    pub slice_ns: Ns,
    pub balance_ns: Ns,
    pub tick_ns: Ns,
    pub tickless: bool,
    pub busy_tick: bool,
    /// Remote wake-ups onto busy vCPUs go through their wake lists (`guest::resched`).
    pub ttwu_queue: bool,
    /// Where a woken thread goes, and the new-idle rules with it (`guest::wakeaffine`).
    pub wake_placement: crate::scenario::WakePlacement,
    /// A wake-up's reschedule IPI is sent holding the target's runqueue lock (`guest::rqlock`).
    pub ttwu_rq_lock: bool,
    /// At most one reschedule IPI per vCPU until it schedules (`guest::resched`).
    pub resched_ipi_once: bool,
    pub irq_vcpu: u32,
    pub pv: crate::scenario::ParavirtSpec,
    /// pv spinlock spin budget before halting.
    pub pv_spin_ns: Ns,
    /// pv spinlock: time between two `pv_wait_early` checks (`PV_PREV_CHECK_MASK` + 1 loops).
    pub pv_check_ns: Ns,
    pub threads: Vec<ThreadId>,
    pub live_threads: u32,
    pub finite: bool,
    pub finished_at: Option<Ns>,
    pub locks: Vec<SpinLockObj>,
    pub mutexes: Vec<MutexObj>,
    pub rwsems: Vec<crate::guest::rwsem::RwsemObj>,
    pub barriers: Vec<BarrierObj>,
    pub queues: Vec<QueueObj>,
    pub conds: Vec<CondObj>,
    pub next_mm: usize,
    /// Users and `mm_cpumask` of each address space (`guest::mm`).
    pub mm: crate::guest::mm::VmMm,
    pub io_rng: RngStream,
    pub lock_wait: Histogram,
    pub vipi_latency: Histogram,
    pub balance_timer: Timer,
    pub ops: u64,
    /// When the last compute operation started (progress: `VmResult::last_op_ns`).
    pub last_op_ns: Option<Ns>,
    /// Queue operations that fetched the queue's state from another pCPU (`guest::channel`).
    pub channel_transfers: u64,
    /// Message-buffer cache lines fetched from another pCPU (`guest::channel`).
    pub message_line_transfers: u64,
    /// Freed socket buffers per vCPU and in the shared pool (`guest::channel`).
    pub skb_cache: crate::guest::channel::SkbCache,
    /// Virtual IPIs whose message crossed sockets (`hv::xsocket`).
    pub cross_socket_messages: u64,
    pub hotplug_spec: crate::scenario::HotplugSpec,
    pub hotplug: crate::guest::hotplug::HotplugAgent,
    /// Devices are pass-through (SR-IOV): interrupts take the dpci tasklet path.
    pub passthrough: bool,
    /// Client request ports and their arrival streams (`guest/requests.rs`).
    pub requests: crate::guest::requests::VmRequests,
    /// Passes through `mark` ops, indexed as interned by the program compiler.
    pub marks: Vec<crate::metrics::MarkStat>,
}
