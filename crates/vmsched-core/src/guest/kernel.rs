//! The guest kernel of each VM: guest threads running programs on vCPUs, a guest scheduler,
//! synchronisation and inter-processor interrupts.
//!
//! Models (Linux guest, reference §4.9-4.10):
//! - per-vCPU runqueues, round robin with a time slice counted in vCPU run time (Linux with
//!   steal-time accounting charges a task only for time its vCPU really ran), wake-up placement
//!   (by default the previous vCPU if idle, else an idle vCPU, else the previous one —
//!   `select_task_rq`; `guest.wake_placement` selects Linux 2.6.32's wake-affine placement
//!   and new-idle rules instead, `guest::wakeaffine`),
//!   fork and exec balancing of new processes (`guest::forkexec`),
//!   new-idle pulls and periodic balancing, CPU affinity masks, offline vCPUs skipped;
//! - an idle vCPU executes HLT at once (tickless idle);
//! - spinlocks: ticket and queued locks hand over in FIFO order, so a waiter whose vCPU is
//!   descheduled stalls everyone behind it (lock-waiter preemption); test-and-set lets any
//!   running spinner take a free lock. Native qspinlock is FIFO as a ticket lock is (pending
//!   waiter, then the MCS queue in order; the fast path needs the whole lock word zero:
//!   `kernel/locking/qspinlock.c queued_spin_lock_slowpath`), so both share one model; they
//!   differ in cache traffic: all ticket waiters poll one line, so a ticket hand-off grows with
//!   the running waiters (`guest::ticket`), a queued one does not. A pv
//!   qspinlock (hybrid queued/unfair) is modelled in `guest::paravirt`. Critical sections run with guest preemption disabled,
//!   but the hypervisor may still preempt the vCPU (lock-holder preemption);
//! - `smp_call_function_many` with wait: the sender spins (preemption off) until every target
//!   ran the handler; TLB shootdowns (`shootdown` ops, fork, the last exit of an address
//!   space) target the vCPUs in the address space's `mm_cpumask`, lazy ones included
//!   (`guest::mm`);
//! - blocking mutex (optional optimistic spin), sleeping rw-semaphore (`guest::rwsem`), barrier (spin-then-block or pure blocking),
//!   condition variable, bounded queue (an operation on queue state last written on another
//!   pCPU fetches it from there: `guest::channel`); waking a thread onto an idle vCPU sends a reschedule
//!   IPI (an exit on the sender, a wake of the halted target); a sleeper woken onto a busy
//!   remote vCPU preempts its thread with a reschedule IPI, and under a 2.6.32
//!   `wake_placement` one woken onto its waker's own busy vCPU preempts the waker at its next
//!   preemption point, without an IPI (`guest::resched`);
//! - I/O: an I/O exit, then a device latency, then a device interrupt on the VM's irq vCPU
//!   whose handler wakes the thread.
//!
//! Leaves out: the guest timer tick while busy unless `busy_tick` is on (`hv::vipi`; slice
//! ends are exact either way), guest context-switch cost, priorities/nice inside the guest, RCU, page faults.

use crate::engine::{us_to_ns, Ns};
use crate::guest::program::Instr;
use crate::host::ExitReason;
use crate::scenario::{DurationUs, SpinlockKind, WakePlacement};
use crate::sim::state::*;
use crate::sim::{Ev, World};

fn draw(rng: &mut crate::engine::RngStream, d: &DurationUs) -> Ns {
    let us = match *d {
        DurationUs::Fixed { us } => us,
        DurationUs::Exp { mean_us } => rng.exp(mean_us),
        DurationUs::Uniform { min_us, max_us } => min_us + (max_us - min_us) * rng.uniform(),
        DurationUs::Lognormal { mean_us, cv } => rng.lognormal(mean_us, cv),
    };
    us_to_ns(us)
}

const MAX_INSTRS_PER_STEP: u32 = 100_000;
/// How often a pending CPU offline re-checks for a preemptible moment.
const OFFLINE_RETRY_NS: Ns = 10_000;

impl World {
    pub(crate) fn running_cur(&self, t: ThreadId) -> Option<VcpuId> {
        let v = self.threads[t].vcpu;
        (self.vcpus[v].cur == Some(t) && self.vcpus[v].running_on().is_some()).then_some(v)
    }

    /// Change what thread `t` does; if it is on a running vCPU, account and re-arm first.
    pub(crate) fn set_act(&mut self, t: ThreadId, act: Activity) {
        match self.running_cur(t) {
            Some(v) => {
                self.advance(v);
                self.threads[t].act = act;
                self.arm_exec(v);
            }
            None => self.threads[t].act = act,
        }
    }

    /// A vCPU with no current thread picks one (its runqueue, else a new-idle pull from a
    /// sibling running at least two threads), or halts.
    pub(crate) fn guest_pick(&mut self, v: VcpuId) {
        debug_assert!(self.vcpus[v].cur.is_none());
        // `schedule()` first takes the vCPU's runqueue lock, which a waker may hold
        // (`guest::rqlock`), then clears need-resched: a local wake-up's mark and a remote
        // one's sent IPI (`guest::resched`).
        self.vcpus[v].rq_lock_spin = self.rq_lock_contended(v);
        if self.vcpus[v].rq_lock_spin {
            return self.arm_exec(v);
        }
        self.vcpus[v].need_resched = None;
        self.vcpus[v].resched_ipi_sent = false;
        let next = self.vcpus[v].runq.pop_front().or_else(|| self.newidle_pull(v));
        match next {
            Some(t) => {
                // The vCPU's idle period, if one was open (2.6.32 placements), ends
                // (`guest::wakeaffine`).
                self.vcpus[v].idle_stamp = None;
                self.threads[t].vcpu = v;
                self.threads[t].slice_used_ns = 0;
                self.vcpus[v].cur = Some(t);
                if self.vcpus[v].last_switched_in.replace(t) != Some(t) {
                    self.vcpus[v].guest_switches += 1;
                }
                self.switch_mm(v, t);
                if let Some(p) = self.vcpus[v].running_on() {
                    // A thread switched in on a running vCPU refills what it lost (a halted
                    // vCPU's wake-up dispatch carried no thread to charge).
                    self.owe_start(v, t, p);
                    self.cpi_sample(v, p);
                }
                self.ac_switch_in(v, t);
                self.resume_spinner(v);
                self.arm_exec(v);
            }
            None => {
                self.vcpus[v].last_switched_in = None;
                self.start_halt(v)
            }
        }
    }

    /// New-idle balance of vCPU `v`, whose runqueue is empty. Under a 2.6.32 placement it is
    /// skipped while `v`'s average idle period is under the migration cost, and a cache-hot
    /// thread is not pulled (`guest::wakeaffine`).
    pub(crate) fn newidle_pull(&mut self, v: VcpuId) -> Option<ThreadId> {
        let vm = self.vcpus[v].vm;
        let rules_2632 = self.vms[vm].wake_placement.is_2632();
        if rules_2632 && !self.idle_balance_allowed(v) {
            return None;
        }
        let idx = self.vcpus[v].idx;
        let mut best: Option<(usize, VcpuId)> = None;
        for &u in &self.vms[vm].vcpus {
            if u == v || !self.vcpus[u].online {
                continue;
            }
            // A sibling whose only task is the one queued for it (nothing current) is not a
            // donor: `find_busiest_queue` skips runqueues with nr_running == 1.
            let n = self.vcpus[u].runq.len();
            let nr_running = n + self.vcpus[u].cur.is_some() as usize;
            if n > 0 && nr_running >= 2 && best.map_or(true, |(bn, _)| n > bn) {
                best = Some((n, u));
            }
        }
        let (_, u) = best?;
        let pos = self.vcpus[u].runq.iter().rposition(|&t| self.threads[t].allowed(idx) && !(rules_2632 && self.task_hot(t)))?;
        if rules_2632 {
            self.vcpus[v].idle_stamp = None;
        }
        self.vcpus[u].runq.remove(pos)
    }

    /// Guest slice expired: the current thread goes to the back of its runqueue.
    pub(crate) fn guest_preempt(&mut self, v: VcpuId) {
        let Some(t) = self.vcpus[v].cur.take() else { return };
        self.threads[t].last_ran = Some(self.now());
        self.vcpus[v].runq.push_back(t);
        self.guest_pick(v);
    }

    /// A thread that was spinning on a test-and-set lock may take it as soon as it runs again.
    pub(crate) fn resume_spinner(&mut self, v: VcpuId) {
        let Some(t) = self.vcpus[v].cur else { return };
        if let Activity::SpinLock { lock, since, .. } = self.threads[t].act {
            let vm = self.threads[t].vm;
            let l = &mut self.vms[vm].locks[lock];
            if l.hybrid {
                self.pv_settle(vm, lock);
            } else if l.kind == SpinlockKind::Tas && l.holder.is_none() {
                l.holder = Some(t);
                l.waiters.retain(|&x| x != t);
                self.threads[t].act = Activity::LockGranted { lock, left: self.costs.lock_handoff_ns, since };
            }
        }
        if let Activity::MutexSpin { mutex, .. } = self.threads[t].act {
            self.mutex_take_if_free(t, mutex);
        }
    }

    /// A mutex spinner that was descheduled when the mutex was released finds it free.
    fn mutex_take_if_free(&mut self, t: ThreadId, m: usize) -> bool {
        let mx = &mut self.vms[self.threads[t].vm].mutexes[m];
        if mx.holder.is_some() {
            return false;
        }
        mx.holder = Some(t);
        mx.spinners.retain(|&s| s != t);
        let cs = self.threads[t].pending_ns as f64;
        self.threads[t].act = Activity::Compute { left: cs, mem_fraction: 0.0, then: AfterCompute::ReleaseMutex(m) };
        true
    }

    /// Thread `t` leaves its vCPU to wait; the vCPU picks something else.
    pub(crate) fn block(&mut self, t: ThreadId) {
        let v = self.threads[t].vcpu;
        self.threads[t].blocked_at = self.now();
        self.threads[t].last_ran = Some(self.now());
        if self.vcpus[v].cur == Some(t) {
            self.advance(v);
            self.threads[t].act = Activity::Blocked;
            self.vcpus[v].cur = None;
            self.guest_pick(v);
        } else {
            self.threads[t].act = Activity::Blocked;
        }
    }

    /// The vCPU a waking thread goes to under the default `prev_or_idle` placement
    /// (`select_task_rq`): its previous vCPU if idle, else any idle vCPU, else the previous one.
    pub(crate) fn select_vcpu_prev_or_idle(&self, t: ThreadId) -> VcpuId {
        let th = &self.threads[t];
        let vm = &self.vms[th.vm];
        let ok = |u: VcpuId| self.vcpus[u].online && th.allowed(self.vcpus[u].idx);
        let idle = |u: VcpuId| ok(u) && self.vcpus[u].cur.is_none() && self.vcpus[u].runq.is_empty();
        let prev = th.vcpu;
        if idle(prev) {
            return prev;
        }
        let n = vm.vcpus.len();
        let start = self.vcpus[prev].idx as usize;
        for i in 1..=n {
            let u = vm.vcpus[(start + i) % n];
            if idle(u) {
                return u;
            }
        }
        if ok(prev) {
            return prev;
        }
        vm.vcpus.iter().copied().find(|&u| ok(u)).unwrap_or(prev)
    }

    /// Make a blocked thread runnable. `waker` is the vCPU whose code woke it (it pays the
    /// reschedule IPI), or None for a timer or device.
    pub(crate) fn wake_thread(&mut self, t: ThreadId, waker: Option<VcpuId>) {
        self.wake_thread_from(t, waker, None);
    }

    /// `wake_thread` with Linux's sync hint (`WF_SYNC`): `sync_from` is the thread doing a sync
    /// wake-up (a socket or pipe peer, an exiting child), which the 2.6.32 placements take off
    /// its vCPU's load (`guest::wakeaffine`).
    pub(crate) fn wake_thread_from(&mut self, t: ThreadId, waker: Option<VcpuId>, sync_from: Option<ThreadId>) {
        let mut slept = None;
        if self.threads[t].act == Activity::Blocked {
            self.threads[t].act = Activity::Ready;
            slept = Some(self.now() - self.threads[t].blocked_at);
        }
        let placement = self.vms[self.threads[t].vm].wake_placement;
        let u = match placement {
            WakePlacement::PrevOrIdle => self.select_vcpu_prev_or_idle(t),
            WakePlacement::Affine => self.select_vcpu_2632(t, waker, sync_from, false),
            WakePlacement::AffineIdleSibling => self.select_vcpu_2632(t, waker, sync_from, true),
        };
        if placement.is_2632() {
            self.note_wakeup_onto(u);
        }
        self.enqueue_thread(t, u, waker, slept);
    }

    /// Put runnable thread `t` on vCPU `u`'s runqueue; `waker` (the vCPU whose code did it)
    /// preempts a busy `u` or wakes an idle one with a reschedule IPI.
    pub(crate) fn enqueue_thread(&mut self, t: ThreadId, u: VcpuId, waker: Option<VcpuId>, slept: Option<Ns>) {
        self.threads[t].vcpu = u;
        if let Some(w) = waker.filter(|&w| w != u && self.vcpus[u].cur.is_some() && self.vms[self.vcpus[u].vm].ttwu_queue) {
            return self.ttwu_queue_remote(w, u, t, slept);
        }
        self.vcpus[u].runq.push_back(t);
        if self.vcpus[u].cur.is_some() {
            if let Some(w) = waker {
                self.check_preempt_wakeup(w, u, t, slept);
            }
            return;
        }
        if let Some(w) = waker {
            if w != u {
                if self.resched_ipi_already_sent(u) {
                    return;
                }
                self.charge_exit(w, ExitReason::Ipi);
                self.hold_rq_lock_for_ipi(w, u);
                self.wake_message_cross_socket(w, u);
                if self.wake_ipi_polled(u) {
                    return;
                }
                self.reschedule_ipi_eoi(u);
                return self.wake_after_exit(w, u);
            }
        }
        self.kick_idle_vcpu(u);
    }

    /// The reschedule IPI that wakes idle vCPU `u` runs a handler that acknowledges it
    /// (Linux's `smp_reschedule_interrupt` → `ack_APIC_irq`, arch/x86/kernel/smp.c); the model
    /// keeps only that EOI write, an APIC-access exit where the host has one
    /// (`exit_apic_eoi_ns` > 0, no posted interrupts): interrupt work of no length, taken before
    /// the idle vCPU picks the thread. On other hosts the wake-up carries no interrupt work (a
    /// polled wake-up, `hv::vipi` `wake_ipi_polled`, posts the same empty work to the mailbox).
    fn reschedule_ipi_eoi(&mut self, u: VcpuId) {
        if self.costs.exit_apic_eoi_ns == 0 || self.vipi_is_posted() {
            return;
        }
        let work = IrqWork { left_ns: 0, action: IrqAction::Nothing, sent_at: self.now() };
        match self.vcpus[u].run {
            RunState::Running(_) => {
                self.advance(u);
                self.vcpus[u].irq.push_back(work);
            }
            RunState::Blocked | RunState::Runnable => self.vcpus[u].pending_irq.push(work),
            RunState::Offline => {}
        }
    }

    /// An idle vCPU got a thread: wake it if halted, or let it pick the thread if running.
    pub(crate) fn kick_idle_vcpu(&mut self, u: VcpuId) {
        match self.vcpus[u].run {
            // The wake-up IPI is an accepted interrupt (`KVM_REQ_EVENT`).
            RunState::Blocked => self.hv_wake_by_event(u),
            RunState::Running(_) => {
                self.advance(u);
                self.arm_exec(u);
            }
            _ => {}
        }
    }

    /// Execute thread `t`'s program until it starts something that takes time or blocks.
    pub(crate) fn step(&mut self, t: ThreadId) {
        let v = self.threads[t].vcpu;
        for _ in 0..MAX_INSTRS_PER_STEP {
            // A preemption point: a local wake-up may have asked this thread to give way
            // (`guest::resched`, 2.6.32 placements only).
            if self.vcpus[v].need_resched.is_some() && self.vcpus[v].cur == Some(t) && self.preempt_local(v) {
                return;
            }
            let th = &mut self.threads[t];
            let instr = self.programs[th.prog].code[th.pc].clone();
            th.pc += 1;
            match instr {
                Instr::Compute { us, mem_fraction } => {
                    let drawn = draw(&mut th.rng, &us);
                    let debt = std::mem::take(&mut th.comm_debt_ns);
                    th.ac.note_compute(drawn, mem_fraction);
                    th.ac.note_memory_access(debt);
                    let ns = drawn + debt;
                    let now = self.q.now();
                    let vm = &mut self.vms[th.vm];
                    vm.ops += 1;
                    vm.last_op_ns = Some(now);
                    return self.set_act(t, Activity::Compute { left: ns as f64, mem_fraction, then: AfterCompute::Next });
                }
                Instr::Lock { lock, spread, cs_us, irqs_off, guards } => {
                    // A lock family's member is drawn first (only then: spread 1 draws nothing).
                    let lock = if spread > 1 { lock + th.rng.below(spread as usize) } else { lock };
                    th.pending_ns = draw(&mut th.rng, &cs_us);
                    th.pending_guard = guards;
                    th.irqs_off = irqs_off;
                    return self.lock_acquire(t, lock);
                }
                Instr::Mutex { mutex, cs_us, spin_us } => {
                    th.pending_ns = draw(&mut th.rng, &cs_us);
                    return self.mutex_acquire(t, mutex, us_to_ns(spin_us));
                }
                Instr::RwsemDown { sem, write, wait_lock } => {
                    if self.rwsem_down(t, sem, write, wait_lock) {
                        return;
                    }
                }
                Instr::RwsemUp { sem, write, wait_lock } => {
                    if self.rwsem_up(t, sem, write, wait_lock) {
                        return;
                    }
                }
                Instr::Barrier { barrier, spin_us } => {
                    if self.barrier_arrive(t, barrier, us_to_ns(spin_us)) {
                        return;
                    }
                }
                Instr::Put { queue, msg_lines } => {
                    if self.queue_put(t, queue, msg_lines) {
                        return;
                    }
                }
                Instr::Get { queue } => {
                    if self.queue_get(t, queue) {
                        return;
                    }
                }
                Instr::CondWait { cond } => {
                    let vm = th.vm;
                    self.vms[vm].conds[cond].waiters.push_back(t);
                    return self.block(t);
                }
                Instr::CondSignal { cond } => {
                    let vm = th.vm;
                    if let Some(w) = self.vms[vm].conds[cond].waiters.pop_front() {
                        self.wake_thread(w, Some(v));
                    }
                }
                Instr::Shootdown { local_us } => {
                    let ns = us_to_ns(local_us);
                    return self.set_act(t, Activity::Compute { left: ns as f64, mem_fraction: 0.0, then: AfterCompute::SendShootdown });
                }
                Instr::CallAll => {
                    let vm = th.vm;
                    let targets: Vec<VcpuId> =
                        self.vms[vm].vcpus.iter().copied().filter(|&u| u != v && self.vcpus[u].online).collect();
                    if self.send_call(t, targets, None) {
                        return;
                    }
                }
                Instr::Io { us } => {
                    let ns = draw(&mut self.vms[th.vm].io_rng, &us);
                    th.ac.note_io();
                    // A pass-through device (SR-IOV VF) is driven by MMIO writes the guest
                    // makes directly: no exit to a device model.
                    if !self.vms[th.vm].passthrough {
                        self.charge_exit(v, ExitReason::Io);
                    }
                    let at = self.now() + ns;
                    self.q.push(at, Ev::IoComplete(t));
                    return self.block(t);
                }
                Instr::PortIo => self.charge_exit(v, ExitReason::Io),
                Instr::Sleep { us } => {
                    let ns = draw(&mut th.rng, &us);
                    let at = self.now() + ns;
                    self.q.push(at, Ev::WakeThread(t));
                    return self.block(t);
                }
                Instr::FlushTlbMm => {
                    let mm = th.mm;
                    if self.flush_tlb_mm(t, mm) {
                        return;
                    }
                }
                Instr::ExitMm => {
                    if self.exit_mm(t) {
                        return;
                    }
                }
                Instr::Exec => {
                    if self.sched_exec(t) {
                        return;
                    }
                }
                Instr::Fork { prog, share_mm, wait } => {
                    self.fork(t, prog, share_mm);
                    if wait {
                        self.threads[t].waiting_children = true;
                        return self.block(t);
                    }
                }
                Instr::LoopStart { slot, count, end } => {
                    if count == 0 {
                        th.pc = end;
                    } else {
                        th.slots[slot] = count;
                    }
                }
                Instr::LoopEnd { slot, start } => {
                    th.slots[slot] -= 1;
                    if th.slots[slot] > 0 {
                        th.pc = start;
                    }
                }
                Instr::Every { slot, n, end } => {
                    th.slots[slot] += 1;
                    if th.slots[slot] % n != 0 {
                        th.pc = end;
                    }
                }
                Instr::Accept { port } => {
                    if self.request_accept(t, port) {
                        return self.block(t);
                    }
                }
                Instr::Respond => self.request_respond(t),
                Instr::Jump { to } => th.pc = to,
                Instr::Mark { mark } => {
                    let vm = th.vm;
                    self.vms[vm].marks[mark].record(self.q.now(), t);
                }
                Instr::Exit => return self.thread_exit(t),
            }
        }
        // A program that loops without doing anything: give it a token of work so time moves.
        self.set_act(t, Activity::Compute { left: 1000.0, mem_fraction: 0.0, then: AfterCompute::Next });
    }

    pub(crate) fn compute_done(&mut self, t: ThreadId, then: AfterCompute) {
        self.threads[t].act = Activity::Ready;
        match then {
            AfterCompute::Next => {}
            AfterCompute::ReleaseLock(l) => {
                self.lock_release(t, l);
                // The end of an rw-semaphore's wait_lock section (`guest::rwsem`).
                if let Some(s) = self.threads[t].rwsem_next.take() {
                    if self.rwsem_step(t, s) {
                        return;
                    }
                }
            }
            AfterCompute::ReleaseMutex(m) => self.mutex_release(t, m),
            AfterCompute::SendShootdown => {
                let mm = self.threads[t].mm;
                if self.flush_tlb_mm(t, mm) {
                    return;
                }
            }
        }
        self.step(t);
    }

    // ---- spinlocks ----

    pub(crate) fn lock_acquire(&mut self, t: ThreadId, lock: usize) {
        let now = self.now();
        let vm = self.threads[t].vm;
        self.threads[t].lock_req_at = now;
        if self.vms[vm].locks[lock].hybrid {
            return self.pv_lock_acquire(t, lock);
        }
        let l = &mut self.vms[vm].locks[lock];
        let free = l.holder.is_none() && (l.waiters.is_empty() || l.kind == SpinlockKind::Tas);
        if free {
            l.holder = Some(t);
            self.vms[vm].lock_wait.record(0);
            let cs = self.critical_section_ns(t);
            self.set_act(t, Activity::Compute { left: cs, mem_fraction: 0.0, then: AfterCompute::ReleaseLock(lock) });
        } else {
            l.waiters.push_back(t);
            let v = self.threads[t].vcpu;
            self.advance(v);
            self.vcpus[v].ple_spun_ns = 0;
            let pv_left = self.pv_spin_budget(vm);
            self.set_act(t, Activity::SpinLock { lock, since: now, pv_left });
        }
    }

    fn lock_release(&mut self, t: ThreadId, lock: usize) {
        self.threads[t].irqs_off = false;
        let vm = self.threads[t].vm;
        let l = &mut self.vms[vm].locks[lock];
        debug_assert_eq!(l.holder, Some(t));
        l.holder = None;
        if l.hybrid {
            return self.pv_unlock(t, lock);
        }
        let next = match l.kind {
            SpinlockKind::Ticket | SpinlockKind::Queued => l.waiters.pop_front(),
            SpinlockKind::Tas => {
                let running: Vec<usize> = l
                    .waiters
                    .iter()
                    .enumerate()
                    .filter(|(_, &w)| {
                        let u = self.threads[w].vcpu;
                        self.vcpus[u].cur == Some(w) && self.vcpus[u].running_on().is_some()
                    })
                    .map(|(i, _)| i)
                    .collect();
                if running.is_empty() {
                    None
                } else {
                    let i = running[l.rng.below(running.len())];
                    l.waiters.remove(i)
                }
            }
        };
        if let Some(w) = next {
            self.vms[vm].locks[lock].holder = Some(w);
            if self.running_cur(w).is_none() {
                let u = self.threads[w].vcpu;
                self.vcpus[u].lwp += 1;
            }
            let (since, halted) = match self.threads[w].act {
                Activity::SpinLock { since, .. } => (since, false),
                Activity::PvWait { since, .. } => (since, true),
                _ => (self.now(), false),
            };
            let polls = if self.vms[vm].locks[lock].kind == SpinlockKind::Ticket { self.ticket_poll_ns(t, w, lock) } else { 0 };
            self.set_act(w, Activity::LockGranted { lock, left: self.costs.lock_handoff_ns + polls, since });
            if halted {
                let kicker = self.running_cur(t);
                self.pv_kick(kicker, w);
            }
        }
    }

    pub(crate) fn enter_critical_section(&mut self, t: ThreadId, lock: usize) {
        let vm = self.threads[t].vm;
        let wait = self.now() - self.threads[t].lock_req_at;
        self.vms[vm].lock_wait.record(wait);
        let cs = self.critical_section_ns(t);
        self.set_act(t, Activity::Compute { left: cs, mem_fraction: 0.0, then: AfterCompute::ReleaseLock(lock) });
    }

    /// The section thread `t` runs once granted its spinlock: the drawn time and, for a queue's
    /// state lock, the fetch of the queue's state from the pCPU that last wrote it
    /// (`guest::channel`), which the holder makes with the lock held.
    pub(crate) fn critical_section_ns(&mut self, t: ThreadId) -> f64 {
        let fetch = match self.threads[t].pending_guard.take() {
            Some(q) => self.channel_fetch(t, q),
            None => 0,
        };
        (self.threads[t].pending_ns + fetch) as f64
    }

    // ---- mutex ----

    fn mutex_acquire(&mut self, t: ThreadId, m: usize, spin_ns: Ns) {
        let vm = self.threads[t].vm;
        let mx = &mut self.vms[vm].mutexes[m];
        if mx.holder.is_none() {
            mx.holder = Some(t);
            let cs = self.threads[t].pending_ns as f64;
            self.set_act(t, Activity::Compute { left: cs, mem_fraction: 0.0, then: AfterCompute::ReleaseMutex(m) });
        } else if spin_ns > 0 {
            mx.spinners.push(t);
            let now = self.now();
            let v = self.threads[t].vcpu;
            self.advance(v);
            self.vcpus[v].ple_spun_ns = 0;
            self.set_act(t, Activity::MutexSpin { mutex: m, left: spin_ns, since: now });
        } else {
            mx.sleepers.push_back(t);
            self.block(t);
        }
    }

    fn mutex_release(&mut self, t: ThreadId, m: usize) {
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        let mx = &mut self.vms[vm].mutexes[m];
        mx.holder = None;
        let spinner = mx.spinners.iter().position(|&s| {
            let u = self.threads[s].vcpu;
            self.vcpus[u].cur == Some(s) && self.vcpus[u].running_on().is_some()
        });
        let next = match spinner {
            Some(i) => Some((mx.spinners.remove(i), false)),
            None => mx.sleepers.pop_front().map(|s| (s, true)),
        };
        if let Some((w, sleeping)) = next {
            self.vms[vm].mutexes[m].holder = Some(w);
            let cs = self.threads[w].pending_ns as f64;
            self.set_act(w, Activity::Compute { left: cs, mem_fraction: 0.0, then: AfterCompute::ReleaseMutex(m) });
            if sleeping {
                self.wake_thread(w, Some(v));
            }
        }
    }

    pub(crate) fn mutex_spin_timeout(&mut self, t: ThreadId, m: usize) {
        if self.mutex_take_if_free(t, m) {
            return self.arm_exec(self.threads[t].vcpu);
        }
        let vm = self.threads[t].vm;
        let mx = &mut self.vms[vm].mutexes[m];
        mx.spinners.retain(|&s| s != t);
        mx.sleepers.push_back(t);
        self.block(t);
    }

    // ---- barrier ----

    /// Returns true if the thread waits (spins or blocks).
    fn barrier_arrive(&mut self, t: ThreadId, b: usize, spin_ns: Ns) -> bool {
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        let bar = &mut self.vms[vm].barriers[b];
        bar.arrived += 1;
        if bar.arrived >= bar.parties {
            bar.arrived = 0;
            bar.gen += 1;
            let spinners = std::mem::take(&mut bar.spinners);
            let sleepers = std::mem::take(&mut bar.sleepers);
            for s in spinners {
                self.set_act(s, Activity::Ready);
            }
            for s in sleepers {
                self.wake_thread(s, Some(v));
            }
            false
        } else if spin_ns > 0 {
            let gen = bar.gen;
            bar.spinners.push(t);
            self.set_act(t, Activity::BarrierSpin { barrier: b, gen, left: spin_ns });
            true
        } else {
            bar.sleepers.push(t);
            self.block(t);
            true
        }
    }

    pub(crate) fn barrier_spin_timeout(&mut self, t: ThreadId, b: usize) {
        let vm = self.threads[t].vm;
        let bar = &mut self.vms[vm].barriers[b];
        bar.spinners.retain(|&s| s != t);
        bar.sleepers.push(t);
        self.block(t);
    }

    // ---- queues ----

    /// Returns true if the thread blocked. A message of `msg_lines` cache lines is written
    /// into a buffer when it enters the queue and read (and the buffer freed) when it leaves
    /// (`guest::channel`).
    fn queue_put(&mut self, t: ThreadId, q: usize, msg_lines: u32) -> bool {
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        self.channel_touch(t, q);
        let qu = &mut self.vms[vm].queues[q];
        qu.msg_lines = msg_lines;
        if let Some(g) = qu.getters.pop_front() {
            self.wake_thread_from(g, Some(v), Some(t));
            self.channel_touch(g, q);
            let written = self.message_write(t, msg_lines);
            self.message_read(g, written, msg_lines);
            false
        } else if qu.items < qu.capacity {
            qu.items += 1;
            if let Some(p) = self.message_write(t, msg_lines) {
                self.vms[vm].queues[q].in_flight.push_back(p);
            }
            false
        } else {
            qu.putters.push_back(t);
            self.block(t);
            true
        }
    }

    fn queue_get(&mut self, t: ThreadId, q: usize) -> bool {
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        self.channel_touch(t, q);
        let qu = &mut self.vms[vm].queues[q];
        if qu.items > 0 {
            qu.items -= 1;
            let lines = qu.msg_lines;
            let written = qu.in_flight.pop_front();
            self.message_read(t, written, lines);
            let qu = &self.vms[vm].queues[q];
            let woken = match qu.writable_at {
                None => qu.putters.len().min(1),
                Some(w) if qu.items <= w => qu.putters.len().min((qu.capacity - qu.items) as usize),
                Some(_) => 0,
            };
            for _ in 0..woken {
                let qu = &mut self.vms[vm].queues[q];
                let p = qu.putters.pop_front().expect("counted above");
                qu.items += 1;
                self.wake_thread_from(p, Some(v), Some(t));
                self.channel_touch(p, q);
                if let Some(w) = self.message_write(p, lines) {
                    self.vms[vm].queues[q].in_flight.push_back(w);
                }
            }
            false
        } else {
            qu.getters.push_back(t);
            self.block(t);
            true
        }
    }

    // ---- IPIs ----

    /// Send function-call IPIs and spin for the acknowledgements. Returns true if waiting.
    pub(crate) fn send_call(&mut self, t: ThreadId, targets: Vec<VcpuId>, flush_mm: Option<usize>) -> bool {
        if targets.is_empty() {
            return false;
        }
        let v = self.threads[t].vcpu;
        let id = self.calls.len();
        self.calls.push(IpiCall { sender: t, outstanding: targets.len() as u32, flush_mm });
        let now = self.now();
        for &u in &targets {
            self.charge_exit(v, ExitReason::Ipi);
            // Across sockets: the message and the handler's read of the flush state delay the
            // handler; the sender re-reads the cleared mask (`hv::xsocket`).
            let state_ns = self.cross_socket_ns(v, u);
            let left_ns = self.costs.ipi_handler_ns + self.vipi_message_ns(v, u) + state_ns;
            self.threads[t].comm_debt_ns += state_ns;
            self.deliver_irq_in_exit(v, u, IrqWork { left_ns, action: IrqAction::CallAck(id), sent_at: now });
        }
        self.advance(v);
        self.vcpus[v].ple_spun_ns = 0;
        self.set_act(t, Activity::IpiWait { call: id });
        self.pv_sched_yield(v, &targets);
        true
    }

    /// An interrupt handler finished on vCPU `v`.
    pub(crate) fn irq_done(&mut self, v: VcpuId, w: IrqWork) {
        let vm = self.vcpus[v].vm;
        match w.action {
            IrqAction::CallAck(id) => {
                let lat = self.now() - w.sent_at;
                self.vms[vm].vipi_latency.record(lat);
                if let Some(mm) = self.calls[id].flush_mm {
                    self.flush_received(v, mm);
                }
                self.ack(id);
            }
            IrqAction::Resched(t, last_buddy) => {
                let lat = self.now() - w.sent_at;
                self.vms[vm].vipi_latency.record(lat);
                self.resched_ipi(v, t, last_buddy);
            }
            IrqAction::WakeList(u) => {
                let lat = self.now() - w.sent_at;
                self.vms[vm].vipi_latency.record(lat);
                self.sched_ttwu_pending(u);
            }
            IrqAction::IoDone(t) => self.wake_thread(t, Some(v)),
            IrqAction::Hotplug(vm) => self.hotplug_notified(vm),
            IrqAction::RequestRx(port) => self.request_received(vm, port, w.sent_at, Some(v)),
            IrqAction::Nothing | IrqAction::Tick => {}
        }
    }

    /// An interrupt for an offline vCPU: the guest never sees it; acknowledge calls so
    /// senders do not hang (Linux does not target offline CPUs).
    pub(crate) fn irq_dropped(&mut self, vm: VmId, w: IrqWork) {
        match w.action {
            IrqAction::CallAck(id) => self.ack(id),
            IrqAction::IoDone(t) => self.wake_thread(t, None),
            IrqAction::Hotplug(vm) => self.hotplug_notified(vm),
            IrqAction::RequestRx(port) => self.request_received(vm, port, w.sent_at, None),
            IrqAction::WakeList(u) => self.hand_on_wake_list(u),
            IrqAction::Resched(..) | IrqAction::Nothing | IrqAction::Tick => {}
        }
    }

    fn ack(&mut self, id: usize) {
        let c = &mut self.calls[id];
        c.outstanding -= 1;
        if c.outstanding == 0 {
            let s = c.sender;
            if matches!(self.threads[s].act, Activity::IpiWait { call } if call == id) {
                self.set_act(s, Activity::Ready);
            }
        }
    }

    pub(crate) fn io_complete(&mut self, t: ThreadId) {
        let vm = self.threads[t].vm;
        let now = self.now();
        self.device_interrupt(vm, IrqWork { left_ns: self.costs.irq_handler_ns, action: IrqAction::IoDone(t), sent_at: now });
    }

    // ---- processes ----

    fn fork(&mut self, parent: ThreadId, prog: usize, share_mm: bool) {
        let v = self.threads[parent].vcpu;
        let p = &mut self.threads[parent];
        p.forks += 1;
        p.live_children += 1;
        let name = format!("{}/c{}", p.name, p.forks);
        let vm = p.vm;
        let mm = if share_mm {
            p.mm
        } else {
            let m = self.vms[vm].next_mm;
            self.vms[vm].next_mm += 1;
            m
        };
        let slots = self.programs[prog].slots;
        let p = &self.threads[parent];
        let child = Thread::new(ThreadSpawn {
            vm,
            name,
            seed: self.seed,
            prog,
            slots,
            mm,
            vcpu: p.vcpu,
            affinity: p.affinity.clone(),
            ws_kib: p.ws_kib,
            parent: Some(parent),
        });
        let id = self.threads.len();
        self.threads.push(child);
        self.vms[vm].threads.push(id);
        self.vms[vm].live_threads += 1;
        self.vms[vm].mm.add_user(mm);
        let u = self.find_idlest_vcpu(id, v);
        self.enqueue_thread(id, u, Some(v), None);
    }

    fn thread_exit(&mut self, t: ThreadId) {
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        // Under a 2.6.32 placement the child wakes its waiting parent (a sync wake-up) before it
        // leaves its vCPU, as `exit_notify` runs before the last `schedule()`
        // (`guest::wakeaffine`); the default placement keeps the model's older order.
        let wake_first = self.vms[vm].wake_placement.is_2632();
        if !wake_first {
            self.block(t);
            self.threads[t].act = Activity::Exited;
        }
        self.vms[vm].live_threads -= 1;
        if let Some(p) = self.threads[t].parent {
            let pt = &mut self.threads[p];
            pt.live_children -= 1;
            if pt.live_children == 0 && pt.waiting_children {
                pt.waiting_children = false;
                if wake_first {
                    self.wake_thread_from(p, Some(v), Some(t));
                } else {
                    self.wake_thread(p, Some(v));
                }
            }
        }
        if wake_first {
            self.block(t);
            self.threads[t].act = Activity::Exited;
        }
        if self.vms[vm].live_threads == 0 {
            self.vms[vm].finished_at = Some(self.now());
        }
    }

    /// Periodic timer interrupt of a halted vCPU in a guest without tickless idle: the vCPU is
    /// woken, runs the timer handler, finds nothing to do and halts again.
    /// With `busy_tick` (`hv::vipi`), busy vCPUs tick too and the timer is periodic.
    pub(crate) fn guest_tick(&mut self, v: VcpuId) {
        let vm = self.vcpus[v].vm;
        if self.vcpus[v].run == RunState::Blocked && !self.vms[vm].tickless {
            let now = self.now();
            self.deliver_irq_as(v, IrqWork { left_ns: self.costs.irq_handler_ns, action: IrqAction::Nothing, sent_at: now }, false);
        }
        if self.vms[vm].busy_tick {
            self.busy_tick(v);
            self.arm_busy_tick(v);
        }
    }

    /// CPU hotplug. Offlining migrates the vCPU's threads to the remaining online vCPUs (wake
    /// placement) and removes the vCPU from the hypervisor's runqueues; an offline vCPU is never
    /// scheduled. Onlining leaves it halted until work arrives (guest balancing moves threads).
    /// The time the guest takes to do this is the caller's concern (a controller's action cost).
    pub fn set_vcpu_online(&mut self, v: VcpuId, online: bool) {
        let vm = self.vcpus[v].vm;
        if self.vcpus[v].online == online {
            return;
        }
        if online {
            self.vcpus[v].online = true;
            // A vCPU taken offline while preempted kept its preempted flags; cpu_up boots it
            // afresh (halted, not preempted), so the steal-time flag is clear.
            let vc = &mut self.vcpus[v];
            vc.preempted = false;
            vc.preempted_in_kernel = false;
            vc.steal_preempted = false;
            self.set_run(v, RunState::Blocked);
            self.arm_busy_tick(v);
            return;
        }
        if self.vms[vm].vcpus.iter().filter(|&&u| self.vcpus[u].online).count() <= 1 {
            return;
        }
        // stop_machine: the CPU goes down only once its current thread may be preempted
        // (not inside or waiting for a spinlock or an IPI).
        if self.vcpus[v].cur.map_or(false, |t| self.threads[t].act.preempt_disabled()) {
            if !self.vcpus[v].offline_pending {
                self.vcpus[v].offline_pending = true;
                let at = self.now() + OFFLINE_RETRY_NS;
                self.q.push(at, Ev::OfflineRetry(v));
            }
            return;
        }
        self.advance(v);
        self.vcpus[v].online = false;
        self.vcpus[v].rq_lock_spin = false;
        self.release_rq_locks(v);
        let mut moving: Vec<ThreadId> = self.vcpus[v].runq.drain(..).collect();
        self.vcpus[v].need_resched = None;
        if let Some(t) = self.vcpus[v].cur.take() {
            self.threads[t].last_ran = Some(self.now());
            moving.insert(0, t);
        }
        let mut irqs: Vec<IrqWork> = self.vcpus[v].irq.drain(..).collect();
        irqs.append(&mut self.vcpus[v].pending_irq);
        self.vcpus[v].halt_pending = false;
        match self.vcpus[v].run {
            RunState::Running(p) => self.schedule(p, crate::hv::sched::Reason::Block),
            RunState::Runnable => {
                self.with_sched(|s, view| s.sleep(view, v));
                self.set_offline_state(v);
            }
            _ => self.set_offline_state(v),
        }
        for t in moving {
            self.wake_thread(t, None);
        }
        for w in irqs {
            self.irq_dropped(vm, w);
        }
        // A wake list whose reschedule IPI is still on its way (`phys_ipi_ns`) goes now; the
        // IPI will find it empty.
        self.hand_on_wake_list(v);
        self.hotplug_offline_done(vm, v);
    }

    fn set_offline_state(&mut self, v: VcpuId) {
        self.vcpus[v].exec_timer.cancel();
        self.vcpus[v].tick_timer.cancel();
        self.set_run(v, RunState::Offline);
    }

    /// Periodic guest load balancing: move queued threads from the busiest to the idlest
    /// online vCPU while they differ by two or more.
    pub(crate) fn guest_balance(&mut self, vm: VmId) {
        let vcpus: Vec<VcpuId> = self.vms[vm].vcpus.iter().copied().filter(|&u| self.vcpus[u].online).collect();
        for _ in 0..vcpus.len() {
            let load = |u: VcpuId| self.vcpu_load(u);
            let Some(&hi) = vcpus.iter().max_by_key(|&&u| (load(u), std::cmp::Reverse(u))) else { break };
            let Some(&lo) = vcpus.iter().min_by_key(|&&u| (load(u), u)) else { break };
            if load(hi) < load(lo) + 2 {
                break;
            }
            let idx = self.vcpus[lo].idx;
            let Some(pos) = self.vcpus[hi].runq.iter().rposition(|&t| self.threads[t].allowed(idx)) else { break };
            let t = self.vcpus[hi].runq.remove(pos).unwrap();
            self.threads[t].vcpu = lo;
            self.vcpus[lo].runq.push_back(t);
            if self.vcpus[lo].cur.is_none() {
                self.kick_idle_vcpu(lo);
            }
        }
        let at = self.now() + self.vms[vm].balance_ns;
        if self.vms[vm].finished_at.is_none() {
            self.q.arm(&mut self.vms[vm].balance_timer, at, Ev::GuestBalance(vm));
        }
    }
}
