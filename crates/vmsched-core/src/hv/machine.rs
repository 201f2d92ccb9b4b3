//! The hypervisor's machinery around the scheduler: dispatching and descheduling vCPUs,
//! world-switch and exit costs, time accounting, the cache-warmth refill on dispatch,
//! virtual-interrupt delivery, HLT, and pause-loop exits.
//!
//! Models:
//! - a running vCPU first pays its hypervisor debt (world switch, exit handling), then runs
//!   pending interrupt handlers, then refills its cold working set, then its guest thread;
//!   each is an interval, never a loop (`advance`, `arm_exec`). A thread dispatched inside a
//!   spinlock critical section runs the section before the refill, and so does a spin-wait
//!   (`refill_deferred`);
//! - virtual IPIs (reference §4.9, seed 004 §5): to a running vCPU via a physical IPI that
//!   forces an external-interrupt exit and injection; to a runnable-but-descheduled vCPU,
//!   pending until it next runs; to a halted vCPU, waking it in the hypervisor;
//! - HLT exits block the vCPU unless an interrupt or thread is already pending
//!   (`kvm_vcpu_check_block`);
//! - pause-loop exiting (reference §4.1): a vCPU spinning at CPL0 for `ple_window` cycles
//!   exits; the window grows by `grow` per exit and shrinks (resets with shrink = 0) when the
//!   vCPU is scheduled in after being scheduled out; the scheduler's `pause_exit` decides.
//!
//! Also: virtual-IPI delivery modes and busy guest ticks (`hv::vipi`), KVM halt polling
//! (`hv::halt_poll`) and a per-pCPU background load (`hv::background`) hook in here.
//!
//! Leaves out: IPI virtualisation (the sender's ICR write always exits; posted interrupts
//! are `hv::vipi`'s `posted` delivery), exit handling while descheduled (an exit's cost is
//! paid when the vCPU next runs if it was descheduled at the exit).

use crate::engine::Ns;
use crate::host::{cache_warmth, refill_parts_ns, ExitReason};
use crate::hv::sched::{HvScheduler, Reason, SchedRequest, SchedView, VcpuFacts};
use crate::metrics::cputime::ticks_in;
use crate::sim::state::*;
use crate::sim::{Ev, World};
use crate::trace::Preempted;

/// A stretch `(from, to]` a vCPU ran, in the order `advance_time` charges it: the hypervisor's
/// work up to `hv_end`, an interrupt handler up to `irq_end`, then the rest, in kernel mode or
/// not (`rest_kernel`; None while the guest has halted and KVM polls).
struct RunSpan {
    from: Ns,
    hv_end: Ns,
    irq_end: Ns,
    to: Ns,
    rest_kernel: Option<bool>,
}

/// What a thread owes on starting on a pCPU (`World::thread_refill`): the refill's time, of
/// it the page walks, and the cache part's misses to memory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RefillOwed {
    pub ns: Ns,
    pub walks_ns: Ns,
    pub dram_ns: f64,
}

impl World {
    pub(crate) fn facts_of(&self, v: VcpuId) -> VcpuFacts {
        let vc = &self.vcpus[v];
        VcpuFacts {
            vm: vc.vm,
            idx: vc.idx,
            run: vc.run,
            last_pcpu: vc.last_pcpu,
            preempted: vc.preempted,
            preempted_in_kernel: vc.preempted_in_kernel,
            dy_runnable: vc.dy_runnable,
            pi_pending: self.vipi_is_posted() && vc.run == RunState::Runnable && !vc.pending_irq.is_empty(),
            spinning: vc.cur.map_or(false, |t| self.threads[t].act.kernel_spin()),
            ac_pct: vc.ac_pct,
            pmu: self.pmu.counters(v),
            sched_tail_until: vc.sched_tail_until,
        }
    }

    fn sync_facts(&mut self, v: VcpuId) {
        self.facts[v] = self.facts_of(v);
    }

    /// Call the scheduler with a fresh view, then carry out what it asked for.
    pub(crate) fn with_sched<R>(&mut self, f: impl FnOnce(&mut dyn HvScheduler, &mut SchedView) -> R) -> R {
        let mut s = self.sched.take().expect("scheduler re-entered");
        let mut requests = std::mem::take(&mut self.requests);
        let r = {
            let mut view = SchedView {
                now: self.q.now(),
                topo: &self.topo,
                vcpus: &self.facts,
                vms: &self.vm_facts,
                affinity: &self.affinity,
                pcpu_cur: &self.pcpu_cur,
                requests: &mut requests,
            };
            f(s.as_mut(), &mut view)
        };
        self.sched = Some(s);
        for req in requests.drain(..) {
            match req {
                SchedRequest::Tickle(p) => self.tickle(p),
                SchedRequest::Timer { id, at } => {
                    let at = at.max(self.q.now());
                    let t = self.sched_timers.entry(id).or_default();
                    self.q.arm(t, at, Ev::SchedTimer(id));
                }
            }
        }
        self.requests = requests;
        self.halt_poll_recheck();
        r
    }

    /// When the hypervisor work that pCPU `p` is doing for its current vCPU (world switch, exit
    /// handling) ends, if it has not yet: a reschedule IPI is taken only after it, as the host
    /// finishes a VM entry or an exit handler before it handles the interrupt.
    pub(crate) fn hv_work_ends(&mut self, p: PcpuId) -> Option<Ns> {
        let v = self.pcpu_cur[p]?;
        self.advance_time(v);
        let vc = &self.vcpus[v];
        (vc.hv_debt_ns > 0).then(|| self.q.now() + vc.bg_debt_ns + vc.hv_debt_ns)
    }

    pub(crate) fn tickle(&mut self, p: PcpuId) {
        if !self.pcpus[p].resched_pending {
            self.pcpus[p].resched_pending = true;
            let at = self.q.now() + self.costs.phys_ipi_ns;
            self.q.push(at, Ev::Resched(p));
        }
    }

    /// The event-check IPI of a reschedule asked of pCPU `p` (`tickle`) arrives: an idle `p`
    /// first leaves its C-state (`hv::cstate`).
    pub(crate) fn resched_arrives(&mut self, p: PcpuId) {
        let now = self.now();
        if !self.pcpus[p].resched_pending || self.cstate_wake(p, now).is_none() {
            self.serve_resched(p);
        }
    }

    /// A reschedule asked of pCPU `p` is due: served unless tasklets run there, after the
    /// hypervisor work `p` is doing.
    pub(crate) fn serve_resched(&mut self, p: PcpuId) {
        if self.pcpus[p].resched_pending && !self.in_tasklet(p) {
            if let Some(at) = self.hv_work_ends(p) {
                self.q.push(at, Ev::ReschedDue(p));
            } else {
                self.pcpus[p].resched_pending = false;
                let why = if std::mem::take(&mut self.pcpus[p].yield_pending) { Reason::Yield } else { Reason::Timer };
                self.schedule(p, why);
            }
        }
    }

    /// Charge the time since the last run-state change to steal or halted time.
    pub(crate) fn close_state_interval(&mut self, v: VcpuId) {
        let now = self.q.now();
        let jiffy = self.vms[self.vcpus[v].vm].tick_ns;
        let vc = &mut self.vcpus[v];
        let dt = now - vc.state_since;
        match vc.run {
            RunState::Runnable => {
                vc.steal_ns += dt;
                vc.cputime.preempted(vc.state_since, now, jiffy);
            }
            RunState::Blocked => vc.halted_ns += dt,
            _ => {}
        }
        vc.state_since = now;
    }

    pub(crate) fn set_run(&mut self, v: VcpuId, new: RunState) {
        self.close_state_interval(v);
        let old = self.vcpus[v].run;
        if (old == RunState::Runnable) != (new == RunState::Runnable) {
            self.idle_wait.set_waiting(self.affinity[v].as_deref(), new == RunState::Runnable, self.q.now());
        }
        self.vcpus[v].run = new;
        if new == RunState::Blocked {
            self.vcpus[v].cputime.halted();
        }
        self.sync_facts(v);
        if let Some(t) = self.trace.as_mut() {
            t.state_changed(v, new, self.q.now());
        }
    }

    /// Account the time a running vCPU spent since its segment started (and what its virtual
    /// PMU counted meanwhile, `hv/perfcounters.rs`); its current thread's working set is now in
    /// this pCPU's cache (the refill model follows threads, not vCPUs).
    pub(crate) fn advance(&mut self, v: VcpuId) {
        if self.pmu.enabled() {
            let before = self.vcpus[v].t;
            self.advance_time(v);
            self.pmu.account(v, &before, &self.vcpus[v].t);
        } else {
            self.advance_time(v);
        }
        if let (RunState::Running(p), Some(t)) = (self.vcpus[v].run, self.vcpus[v].cur) {
            self.threads[t].cache_at = Some((p, self.pcpus[p].busy_ns));
            self.llc_touch(t, p);
            self.tlb_touch(t, p);
        }
    }

    /// `pcpus[p].busy_ns` brought up to now without changing any state: the vCPU running on
    /// `p` is accounted lazily (`advance_time`, at its own events), so the stored value lags by
    /// its open interval less the background debt it pays first, which `advance_time` does not
    /// count as busy. Readers of another pCPU's busy time use this, so that when the
    /// interval was last closed (e.g. by `pmu_refresh` at a scheduler timer, only when the
    /// policy reads the PMU) does not change what they read.
    pub(crate) fn busy_now(&self, p: PcpuId) -> Ns {
        let pc = &self.pcpus[p];
        let open = pc.cur.map_or(0, |v| {
            let vc = &self.vcpus[v];
            matches!(vc.run, RunState::Running(q) if q == p).then(|| (self.q.now() - vc.seg_start).saturating_sub(vc.bg_debt_ns)).unwrap_or(0)
        });
        pc.busy_ns + open
    }

    /// Refill owed when thread `t` starts executing on pCPU `p`: its working set is warm where
    /// it last ran, less what other work (other vCPUs, or other threads of its own vCPU) ran
    /// there since. A thread that never ran owes nothing. With the TLB flush (`hv::tlb`,
    /// `tlb_walk_cycles`) the refill includes the page walks of a thread without valid
    /// translations on `p`. The LLC and TLB accounting (`hv::llc`) counts it as it is paid
    /// (`pay_refill`).
    pub(crate) fn thread_refill(&self, t: ThreadId, p: PcpuId) -> RefillOwed {
        let walks_ns = self.tlb_walks_ns(t, p);
        let (cache_ns, dram_ns) = self.cache_refill_ns(t, p);
        RefillOwed { ns: walks_ns + cache_ns, walks_ns, dram_ns }
    }

    /// Thread `t` starts on vCPU `v` running on pCPU `p` (a dispatch, or a guest thread
    /// switch on a running vCPU): `v` owes its refill on `p` and the nested-paging walks of a
    /// guest address-space switch, if one came before (`guest::mm`).
    pub(crate) fn owe_start(&mut self, v: VcpuId, t: ThreadId, p: PcpuId) {
        let mut owed = self.thread_refill(t, p);
        let walks = std::mem::take(&mut self.vcpus[v].guest_walks_owed_ns);
        owed.ns += walks;
        owed.walks_ns += walks;
        self.owe_refill(v, t, p, owed);
    }

    /// Vcpu `v`, whose thread `t` starts on pCPU `p`, owes `owed` more: its debt becomes
    /// `refill_debt_after`'s, and the debt's parts (walks, misses to memory) follow it, scaled
    /// down with it where the cap drops some.
    pub(crate) fn owe_refill(&mut self, v: VcpuId, t: ThreadId, p: PcpuId, owed: RefillOwed) {
        let debt = self.refill_debt_after(v, t, p, owed.ns);
        let vc = &mut self.vcpus[v];
        let before_cap = vc.refill_debt_ns + owed.ns;
        let k = if before_cap > 0 { debt as f64 / before_cap as f64 } else { 0.0 };
        vc.refill_debt_walks_ns = (vc.refill_debt_walks_ns + owed.walks_ns as f64) * k;
        vc.refill_debt_dram_ns = (vc.refill_debt_dram_ns + owed.dram_ns) * k;
        vc.refill_debt_ns = debt;
    }

    /// Vcpu `v` spends `r` ns of its run on pCPU `p` paying its refill debt: the pCPU's refill
    /// counters (`llc_cpi_factor`, `llc_miss_rate_rel`, `tlb_miss_rate_rel`) take what was
    /// paid, its walks and misses to memory pro rata.
    fn pay_refill(vc: &mut Vcpu, pc: &mut Pcpu, r: Ns) {
        if r == 0 {
            return;
        }
        let f = r as f64 / vc.refill_debt_ns as f64;
        let (walks, dram) = (vc.refill_debt_walks_ns * f, vc.refill_debt_dram_ns * f);
        vc.refill_debt_ns -= r;
        vc.refill_debt_walks_ns -= walks;
        vc.refill_debt_dram_ns -= dram;
        vc.t.cache_refill += r;
        pc.tlb_walk_ns += walks;
        pc.llc_refill_ns += r as f64 - walks;
        pc.llc_refill_dram_ns += dram;
    }

    /// The refill waits while `v`'s thread spin-waits, takes over a granted spinlock or runs
    /// its critical section (`Activity::on_few_lines`): the refill is the thread's working set
    /// (`ws_kib`) re-fetched after foreign work, which the thread touches when it runs its own
    /// code again; a spin loop polls one word, the hand-off reads the lock word and the section
    /// touches the few lines it protects, whose costs their lengths hold. Paying the whole
    /// working set first would let a holder dispatched for a few µs at a time (directed yields
    /// from its waiters' pause-loop exits rescheduling its pCPU, Linux `yield_to(p, true)`)
    /// never finish its section while every waiter spins (session 23: a FlexCore run of dedup
    /// livelocked so), a waiter granted the lock while descheduled never finish the hand-off
    /// (session 30: two such waiters of two VMs sharing a pCPU, each dispatched by its own VM's
    /// spinners' directed yields for less than the world switch, held a FlexCore dedup run with
    /// I/O waits for 16 s), and a dispatched spinner refetch a working set before it reads the
    /// word it waits on (session 31).
    pub(crate) fn refill_deferred(&self, v: VcpuId) -> bool {
        self.vcpus[v]
            .cur
            .map_or(false, |t| self.threads[t].act.on_few_lines())
    }

    /// Refill debt of a vCPU after `owed` more for thread `t` on pCPU `p`: what it still owed
    /// plus `owed`, at most `t`'s whole working set from memory (as from where it last ran,
    /// with nothing kept) and all its page walks. The debt is the time of misses still to
    /// come; a vCPU descheduled before it paid has not refetched what it owed, and what it
    /// has not refetched cannot be lost twice, so a vCPU dispatched for moments at a time
    /// (a preempted lock holder given directed yields) does not owe more with each dispatch.
    pub(crate) fn refill_debt_after(&self, v: VcpuId, t: ThreadId, p: PcpuId, owed: Ns) -> Ns {
        if self.vcpus[v].refill_debt_ns == 0 {
            return owed;
        }
        let whole = self.threads[t].cache_at.map_or(0.0, |(last, _)| {
            let (dram, _) = refill_parts_ns(&self.topo, &self.costs, last, p, self.threads[t].ws_kib, 0.0, self.vms[self.threads[t].vm].memory_node);
            dram
        });
        let cap = whole.round() as Ns + self.tlb_walks_all_ns(t) + self.guest_switch_walks_ns(t);
        (self.vcpus[v].refill_debt_ns + owed).min(cap.max(owed))
    }

    /// The cache part of `thread_refill`, and its part from memory.
    fn cache_refill_ns(&self, t: ThreadId, p: PcpuId) -> (Ns, f64) {
        let Some((last, left_busy)) = self.threads[t].cache_at else { return (0, 0.0) };
        let foreign = self.busy_now(last).saturating_sub(left_busy);
        let warmth = cache_warmth(&self.topo, &self.costs, last, p, foreign);
        let (dram, llc) =
            refill_parts_ns(&self.topo, &self.costs, last, p, self.threads[t].ws_kib, warmth, self.vms[self.threads[t].vm].memory_node);
        ((dram + llc).round() as Ns, dram)
    }

    /// Interrupts are masked on `v`: its thread spins for, or holds, a spinlock taken with
    /// interrupts off (`spin_lock_irq`/`spin_lock_irqsave`: x86 `arch_spin_lock_flags` spins
    /// with them off until Linux 4.x's queued locks). Queued interrupts, a function-call IPI
    /// among them, wait in the virtual APIC until the release (`spin_unlock_irq`); the exits
    /// that brought them are charged as usual.
    pub(crate) fn irqs_masked(&self, v: VcpuId) -> bool {
        self.vcpus[v].cur.map_or(false, |t| {
            let th = &self.threads[t];
            th.irqs_off
                && (matches!(th.act, Activity::SpinLock { .. } | Activity::LockGranted { .. }) || th.act.in_critical_section())
        })
    }

    fn advance_time(&mut self, v: VcpuId) {
        if let Some(span) = self.advance_time_buckets(v) {
            self.account_ticks(v, span);
        }
    }

    /// The guest's tick accounting over a stretch `v` ran (`metrics::cputime`).
    fn account_ticks(&mut self, v: VcpuId, span: RunSpan) {
        let jiffy = self.vms[self.vcpus[v].vm].tick_ns;
        let c = &mut self.vcpus[v].cputime;
        let Some(rest_kernel) = span.rest_kernel else {
            // Halt polling: the guest has halted (NOHZ idle).
            return c.halted();
        };
        let handler = span.irq_end > span.hv_end;
        c.ran(ticks_in(span.from, span.hv_end, jiffy), handler || rest_kernel, jiffy);
        c.ran(ticks_in(span.hv_end, span.irq_end, jiffy), true, jiffy);
        c.ran(ticks_in(span.irq_end, span.to, jiffy), rest_kernel, jiffy);
    }

    /// Charge `v`'s run since its last accounting to its time buckets; returns the stretch's
    /// parts in order (hypervisor work, then an interrupt handler, then the rest) for the
    /// guest's tick accounting, or None if there was nothing to charge.
    fn advance_time_buckets(&mut self, v: VcpuId) -> Option<RunSpan> {
        let now = self.q.now();
        let RunState::Running(p) = self.vcpus[v].run else { return None };
        let from = self.vcpus[v].seg_start;
        if now == from {
            return None;
        }
        let masked = self.irqs_masked(v);
        let deferred = self.vcpus[v].refill_debt_ns > 0 && self.refill_deferred(v);
        let rest_kernel = self.vcpus[v].cur.map_or(true, |t| {
            let a = &self.threads[t].act;
            a.preempt_disabled() || a.kernel_spin()
        });
        let vc = &mut self.vcpus[v];
        let mut dt = now - from;
        vc.seg_start = now;
        vc.run_ns += dt;
        let pc = &mut self.pcpus[p];
        let b = dt.min(vc.bg_debt_ns);
        vc.bg_debt_ns -= b;
        vc.t.hv += b;
        pc.hv_ns += b;
        pc.hv_by_exit_ns[ExitReason::slot(None)] += b;
        pc.bg_ns += b;
        dt -= b;
        pc.busy_ns += dt;
        let h = dt.min(vc.hv_debt_ns);
        vc.hv_debt_ns -= h;
        vc.t.hv += h;
        pc.hv_ns += h;
        pc.guest_ns += dt - h;
        dt -= h;
        let hv_end = from + b + h;
        let mut irq_end = hv_end;
        if dt > 0 && !masked {
            if let Some(w) = vc.irq.front_mut() {
                let x = dt.min(w.left_ns);
                w.left_ns -= x;
                vc.t.irq += x;
                dt -= x;
                irq_end += x;
            }
        }
        let span = |rest_kernel| Some(RunSpan { from, hv_end, irq_end, to: now, rest_kernel });
        if dt > 0 && (vc.irq.is_empty() || masked) && !deferred {
            let r = dt.min(vc.refill_debt_ns);
            Self::pay_refill(vc, pc, r);
            dt -= r;
        }
        if dt == 0 {
            return span(Some(rest_kernel));
        }
        if vc.poll_until.is_some() {
            vc.t.halt_poll += dt;
            pc.guest_ns -= dt;
            pc.hv_ns += dt;
            pc.hv_by_exit_ns[ExitReason::slot(Some(ExitReason::Hlt))] += dt;
            return span(None);
        }
        let Some(t) = vc.cur else {
            if vc.rq_lock_spin {
                vc.t.lock_spin += dt;
            } else {
                vc.t.irq += dt;
            }
            return span(Some(true));
        };
        let speed = self.speed(v, p, t);
        let th = &mut self.threads[t];
        let vc = &mut self.vcpus[v];
        match &mut th.act {
            Activity::Compute { left, .. } => {
                *left -= dt as f64 * speed;
                vc.t.useful += dt;
                th.slice_used_ns += dt;
                let pc = &mut self.pcpus[p];
                let work = dt as f64 / vc.cpi_factor;
                pc.llc_compute_ns += dt as f64;
                pc.llc_work_ns += work;
                pc.tlb_stall_ns += work * vc.tlb_stall_ratio;
            }
            Activity::LockGranted { left, .. } => {
                *left = left.saturating_sub(dt);
                vc.t.lock_spin += dt;
            }
            Activity::SpinLock { pv_left, .. } => {
                if *pv_left != Ns::MAX {
                    *pv_left = pv_left.saturating_sub(dt);
                }
                vc.t.lock_spin += dt;
                vc.ple_spun_ns += dt;
                th.ac.note_memory_access(dt);
            }
            Activity::IpiWait { .. } => {
                vc.t.ipi_wait += dt;
                vc.ple_spun_ns += dt;
                th.ac.note_memory_access(dt);
            }
            Activity::MutexSpin { left, .. } => {
                *left = left.saturating_sub(dt);
                vc.t.mutex_spin += dt;
                vc.ple_spun_ns += dt;
                th.ac.note_memory_access(dt);
            }
            Activity::BarrierSpin { left, .. } => {
                *left = left.saturating_sub(dt);
                vc.t.barrier_spin += dt;
                th.slice_used_ns += dt;
                th.ac.note_memory_access(dt);
            }
            _ => vc.t.useful += dt,
        }
        span(Some(rest_kernel))
    }

    /// Work done per ns of guest compute by thread `t` of vCPU `v` on pCPU `p`: remote memory
    /// (`Topology::mem_speed`) and the socket's LLC pressure at `v`'s dispatch (`hv::llc`).
    fn speed(&self, v: VcpuId, p: PcpuId, t: ThreadId) -> f64 {
        let llc = 1.0 / self.vcpus[v].cpi_factor;
        match self.threads[t].act {
            Activity::Compute { mem_fraction, .. } if mem_fraction > 0.0 => {
                let vm = &self.vms[self.threads[t].vm];
                llc * self.topo.mem_speed(&self.costs, p, vm.memory_node, mem_fraction)
            }
            _ => llc,
        }
    }

    fn ple_window_ns(&self, v: VcpuId) -> Ns {
        self.topo.cycles_to_ns(self.vcpus[v].ple_window_cycles)
    }

    /// (Re-)arm the execution timer of a running vCPU at its next boundary.
    pub(crate) fn arm_exec(&mut self, v: VcpuId) {
        let RunState::Running(p) = self.vcpus[v].run else {
            self.vcpus[v].exec_timer.cancel();
            return;
        };
        let masked = self.irqs_masked(v);
        let vc = &self.vcpus[v];
        let t0 = vc.seg_start;
        let at: Option<Ns> = if vc.bg_debt_ns + vc.hv_debt_ns > 0 {
            Some(t0 + vc.bg_debt_ns + vc.hv_debt_ns)
        } else if let Some(until) = vc.poll_until {
            Some(if self.halt_has_work(v) { t0 } else { until.max(t0) })
        } else if let Some(w) = vc.irq.front().filter(|_| !masked) {
            Some(t0 + w.left_ns)
        } else if vc.halt_pending {
            Some(t0)
        } else if vc.refill_debt_ns > 0 && !self.refill_deferred(v) {
            Some(t0 + vc.refill_debt_ns)
        } else {
            match vc.cur {
                // A `schedule()` spinning for its runqueue lock waits for the holder's release
                // (`guest::rqlock`).
                None if vc.rq_lock_spin && !vc.rq_lock_holders.is_empty() => None,
                None => Some(t0),
                Some(t) => {
                    let th = &self.threads[t];
                    let vm = &self.vms[th.vm];
                    let slice_end = if !vc.runq.is_empty() && !th.act.preempt_disabled() {
                        Some(t0 + vm.slice_ns.saturating_sub(th.slice_used_ns))
                    } else {
                        None
                    };
                    let ple_at = if self.ple.enabled && th.act.kernel_spin() {
                        Some(t0 + self.ple_window_ns(v).saturating_sub(vc.ple_spun_ns))
                    } else {
                        None
                    };
                    let own = match &th.act {
                        Activity::Ready => Some(t0),
                        Activity::Compute { left, .. } => {
                            let speed = self.speed(v, p, t);
                            Some(t0 + (left.max(0.0) / speed).ceil() as Ns)
                        }
                        Activity::LockGranted { left, .. } => Some(t0 + left),
                        Activity::MutexSpin { left, .. } | Activity::BarrierSpin { left, .. } => Some(t0 + left),
                        Activity::SpinLock { pv_left, .. } => (*pv_left != Ns::MAX).then(|| t0 + pv_left),
                        Activity::IpiWait { .. } => None,
                        Activity::PvWait { .. } => None,
                        Activity::Blocked | Activity::Exited => Some(t0),
                    };
                    [own, slice_end, ple_at].into_iter().flatten().min()
                }
            }
        };
        let vc = &mut self.vcpus[v];
        match at {
            Some(at) => self.q.arm(&mut vc.exec_timer, at, Ev::Exec(v)),
            None => vc.exec_timer.cancel(),
        }
    }

    /// Run the scheduler on pCPU `p` and carry out its decision.
    pub(crate) fn schedule(&mut self, p: PcpuId, why: Reason) {
        let prev = self.pcpus[p].cur;
        let mut why = why;
        let mut poll_ended = false;
        if let Some(v) = prev {
            self.advance(v);
            if self.halt_poll_interrupted(v) {
                // The halt-polling vCPU blocks. A call made to run tasklets in the idle vCPU
                // (`hv::tasklet`) stays one: the tasklets start on this pCPU when it returns.
                poll_ended = true;
                if why != Reason::Tasklet {
                    why = Reason::Block;
                }
                self.arm_idle_tick(v);
            }
            self.sync_facts(v);
        }
        let prev_runnable = prev.map_or(false, |v| self.vcpus[v].online && why != Reason::Block && !poll_ended);
        // The VM exit this call is handled in (as `hv::sched::switch_causes` counts the
        // switch): HLT for a block, PAUSE for a yield, an external interrupt (device
        // interrupt, timer, event-check IPI) for anything else on a pCPU that runs a vCPU or
        // that ran tasklets queued in such an exit; none on an idle pCPU.
        let exit = match why {
            Reason::Block => Some(ExitReason::Hlt),
            Reason::Yield => Some(ExitReason::Ple),
            _ if prev.is_some() || self.pcpus[p].tasklet.after_exit => Some(ExitReason::ExtIntr),
            _ => None,
        };
        let d = self.with_sched(|s, view| s.do_schedule(view, p, prev, prev_runnable, why));
        self.pcpus[p].sched_calls += 1;
        if d.next.is_some() && d.next == prev {
            let v = prev.unwrap();
            self.owe_hv(v, exit, self.costs.sched_call_ns);
            self.arm_exec(v);
            self.poll_mailbox(v);
        } else {
            if let Some(v) = prev {
                self.deschedule(v, prev_runnable);
                self.vcpus[v].steal_preempted = prev_runnable && why != Reason::Yield;
            }
            match d.next {
                Some(n) => {
                    self.pcpus[p].context_switches += 1;
                    let full = self.dispatch(n, p, exit);
                    if let Some(v) = prev.filter(|_| prev_runnable && full) {
                        self.sched_tail(v, p);
                    }
                }
                None => {
                    // A switch to the idle vCPU is a context switch too (Xen's `sched_ctx`
                    // counts every `schedule` with prev != next, common/schedule.c).
                    if prev.is_some() {
                        self.pcpus[p].context_switches += 1;
                        // The tasklet path charges its own switch with its work (`hv::tasklet`).
                        if self.lazy_context_switch && why != Reason::Tasklet {
                            self.lazy_switch_to_idle(p, exit);
                        }
                    }
                    self.pcpu_idle_start(p)
                }
            }
        }
        let pc = &mut self.pcpus[p];
        // A slice with no vCPU is a re-check of an idle pCPU a policy kept idle (CSRC with
        // `csrc_keeps_idle`); its timer does not wait for a C-state exit.
        match d.slice_ns {
            Some(s) => {
                let at = self.q.now() + s.max(1);
                self.q.arm(&mut pc.slice_timer, at, Ev::Slice(p));
            }
            None => pc.slice_timer.cancel(),
        }
    }

    /// Runnable `v` was switched out of pCPU `p` by a full switch: until the switch has saved
    /// its state it is in `p`'s scheduling tail, where no other pCPU may steal it. Xen sets
    /// `is_running` at dispatch and clears it only in `context_saved(prev)`, which the x86
    /// `context_switch` calls after `__context_switch` (the state save and load;
    /// xen/arch/x86/domain.c, 3.x to 4.x alike); `csched_runq_steal` takes only a vCPU that
    /// `__csched_vcpu_is_migrateable` (`!vc->is_running`: "Don't pick up work that's in the
    /// peer's scheduling tail"; Xen 3.4 and 4.1 `xen/common/sched_credit.c`, current Xen
    /// "still in peer_cpu's scheduling tail"). The model's switch is instantaneous with its
    /// cost a debt of the incoming vCPU; the tail is the part of it after the scheduler's pick:
    /// the state switch, `world_switch_ns - sched_call_ns` (the split `hv::lazy_switch` uses
    /// for a state save), at `p`'s CPI. A switch to the idle vCPU, or a lazy one, has no
    /// `__context_switch` before `context_saved`: no tail.
    fn sched_tail(&mut self, v: VcpuId, p: PcpuId) {
        let state_ns = self.costs.world_switch_ns.saturating_sub(self.costs.sched_call_ns);
        let until = self.q.now() + self.hv_time_ns(p, state_ns);
        self.vcpus[v].sched_tail_until = until;
        self.sync_facts(v);
    }

    fn deschedule(&mut self, v: VcpuId, runnable: bool) {
        self.advance(v);
        let RunState::Running(p) = self.vcpus[v].run else { return };
        let kernel = self.vcpus[v].cur.map_or(false, |t| {
            let a = &self.threads[t].act;
            a.preempt_disabled() || a.kernel_spin()
        }) || !self.vcpus[v].irq.is_empty();
        let why = match self.vcpus[v].cur.map(|t| &self.threads[t].act) {
            _ if !runnable => Preempted::Plain,
            Some(Activity::Compute { then: AfterCompute::ReleaseLock(_), .. }) => Preempted::LockHolder,
            Some(Activity::LockGranted { .. }) => Preempted::LockWaiter,
            _ if kernel => Preempted::InKernel,
            _ => Preempted::Plain,
        };
        match why {
            Preempted::LockHolder => self.vcpus[v].lhp += 1,
            Preempted::LockWaiter => self.vcpus[v].lwp += 1,
            _ => {}
        }
        self.ac_refresh(v);
        let vc = &mut self.vcpus[v];
        vc.last_pcpu = p;
        vc.exec_timer.cancel();
        vc.ple_spun_ns = 0;
        vc.bg_debt_ns = 0;
        vc.preempted = runnable;
        vc.preempted_in_kernel = runnable && kernel;
        self.pcpus[p].cur = None;
        self.pcpu_cur[p] = None;
        let new = if !self.vcpus[v].online {
            RunState::Offline
        } else if runnable {
            RunState::Runnable
        } else {
            RunState::Blocked
        };
        self.set_run(v, new);
        if let (RunState::Runnable, Some(tr)) = (new, self.trace.as_mut()) {
            tr.preempted(v, why);
        }
    }

    /// Run vCPU `v` on pCPU `p`; the world switch belongs to VM exit `exit` (`schedule`).
    /// Returns whether the switch was a full one (not lazy, `hv::lazy_switch`).
    fn dispatch(&mut self, v: VcpuId, p: PcpuId, exit: Option<ExitReason>) -> bool {
        let now = self.q.now();
        debug_assert!(self.pcpus[p].cur.is_none());
        self.pcpu_idle_end(p);
        let idle_hv_left = self.idle_hv_take(p);
        // A full switch (not the lazy one back to the loaded vCPU, `hv::lazy_switch`) flushes
        // the pCPU's guest TLB entries before the incoming thread's refill is reckoned.
        let full = !self.switch_is_lazy(p, Some(v));
        if full {
            self.tlb_flush(p);
        }
        let last = self.vcpus[v].last_pcpu;
        if let Some(t) = self.vcpus[v].cur {
            self.owe_start(v, t, p);
        }
        self.pcpus[p].cur = Some(v);
        self.pcpu_cur[p] = Some(v);
        self.cpi_sample(v, p);
        if last != p {
            self.vcpus[v].migrations += 1;
            self.pcpus[p].migrations_in += 1;
        }
        let was_out = self.vcpus[v].run == RunState::Runnable;
        let bg_left = self.background_left(p);
        self.set_run(v, RunState::Running(p));
        let ple = self.ple;
        let vc = &mut self.vcpus[v];
        vc.dispatches += 1;
        vc.last_pcpu = p;
        vc.seg_start = now;
        // The switch (full, or lazy: `hv::lazy_switch`), after any sync of `v`'s state that
        // another pCPU held lazily; the pCPU's own lazy switch to idle, if unfinished, first.
        let (sync_ipi_ns, sync_ns) = self.lazy_sync_for(v, p);
        let switch_ns = self.switch_cost_ns(p, Some(v));
        self.owe_hv(v, exit, switch_ns + sync_ns);
        if sync_ipi_ns > 0 {
            self.owe_hv_time(v, exit, sync_ipi_ns);
        }
        let vc = &mut self.vcpus[v];
        vc.hv_debt_ns += idle_hv_left;
        vc.bg_debt_ns = bg_left;
        vc.preempted = false;
        vc.preempted_in_kernel = false;
        vc.dy_runnable = false;
        vc.steal_preempted = false;
        vc.ple_spun_ns = 0;
        if was_out && ple.grow > 1 {
            vc.ple_window_cycles = shrink_window(vc.ple_window_cycles, ple.window_cycles, ple.shrink);
        }
        let pending = std::mem::take(&mut vc.pending_irq);
        vc.irq.extend(pending);
        if std::mem::take(&mut vc.flush_pending) {
            vc.irq.push_back(IrqWork { left_ns: self.costs.ipi_handler_ns, action: IrqAction::Nothing, sent_at: now });
        }
        self.sync_facts(v);
        self.halt_poll_resume(v);
        self.pv_resume(v);
        self.resume_spinner(v);
        self.arm_exec(v);
        full
    }

    /// The pCPU has nothing to run from now on (idle time and idle-while-waiting start).
    pub(crate) fn pcpu_idle_start(&mut self, p: PcpuId) {
        if self.pcpus[p].idle_since.is_none() {
            let now = self.q.now();
            self.pcpus[p].idle_since = Some(now);
            self.idle_wait.set_idle(p, true, now);
        }
    }

    /// The pCPU starts running something (a vCPU, or tasklets in the idle vCPU's context).
    pub(crate) fn pcpu_idle_end(&mut self, p: PcpuId) {
        if self.pcpus[p].idle_since.is_some() {
            self.close_idle(p);
            self.pcpus[p].idle_since = None;
            self.idle_wait.set_idle(p, false, self.q.now());
        }
    }

    /// Wake a halted vCPU in the hypervisor.
    pub(crate) fn hv_wake(&mut self, v: VcpuId) {
        if self.vcpus[v].run != RunState::Blocked {
            return;
        }
        self.set_run(v, RunState::Runnable);
        self.vcpus[v].ple_spun_ns = 0;
        self.with_sched(|s, view| s.wake(view, v));
    }

    /// Wake halted vCPU `v` for an event KVM's `kvm_arch_dy_runnable` sees (an accepted
    /// interrupt's `KVM_REQ_EVENT`, a pv kick's `pv.pv_unhalted`): it stays `dy_runnable` until
    /// it runs (`hv/sched/cfs.rs`, Linux 5.3's directed-yield candidates).
    pub(crate) fn hv_wake_by_event(&mut self, v: VcpuId) {
        if self.vcpus[v].run == RunState::Blocked {
            self.vcpus[v].dy_runnable = true;
        }
        self.hv_wake(v);
    }

    /// Running vCPU `w`'s code woke idle vCPU `u` (a wake-up IPI: an ICR-write exit). The
    /// hypervisor wakes `u` while it handles `w`'s exit (`vcpu_kick` -> `vcpu_wake` ->
    /// credit's `__runq_tickle`), and a SCHEDULE_SOFTIRQ that the wake-up raises on `w`'s own
    /// pCPU is handled on the way back to the guest (`do_softirq` before VM entry); a raise on
    /// the local CPU sends no IPI (`cpu_raise_softirq`). An idle pCPU tickled by the same
    /// wake-up must take its event-check IPI and leave `pm_idle` before its own `do_softirq`
    /// (x86 `idle_loop`: `(*pm_idle)(); do_tasklet(); do_softirq();`). The model charges the
    /// exit's handling as one interval (`exit_ipi_ns`), so the wake-up is placed at its end,
    /// as softirq tasklets are (`hv::tasklet`): `w`'s pCPU then reschedules at once and the
    /// idler's reschedule comes `phys_ipi_ns` later (`local_softirq_schedule`).
    /// Only where the scheduler says so (`HvScheduler::wakes_after_exit`); elsewhere `u` is
    /// woken at once.
    pub(crate) fn wake_after_exit(&mut self, w: VcpuId, u: VcpuId) {
        if !self.wakes_after_exit() {
            return self.kick_idle_vcpu(u);
        }
        self.wake_when_exit_handled(w, u);
    }

    /// Whether the scheduler places wake-ups raised in an exit at the exit's end
    /// (`HvScheduler::wakes_after_exit`).
    fn wakes_after_exit(&self) -> bool {
        self.sched.as_ref().map_or(false, |s| s.wakes_after_exit())
    }

    fn wake_when_exit_handled(&mut self, w: VcpuId, u: VcpuId) {
        match self.vcpus[w].running_on().and_then(|p| self.hv_work_ends(p)) {
            Some(at) => self.q.push(at, Ev::ExitWake(w, u)),
            None => self.exit_wake(w, u),
        }
    }

    /// A virtual interrupt sent by running vCPU `w`'s code in an exit (a function-call IPI):
    /// to a halted target it is pending and wakes it when the exit is handled
    /// (`wake_after_exit`); otherwise as `deliver_irq`.
    pub(crate) fn deliver_irq_in_exit(&mut self, w: VcpuId, u: VcpuId, work: IrqWork) {
        if self.wakes_after_exit() && self.vcpus[u].run == RunState::Blocked && !self.vipi_is_polled() {
            self.vcpus[u].pending_irq.push(work);
            return self.wake_when_exit_handled(w, u);
        }
        self.deliver_irq(u, work)
    }

    /// `w`'s exit is handled (`wake_after_exit`): wake `u`, then serve a reschedule it asked of
    /// `w`'s pCPU. More hypervisor work owed by `w` meanwhile (another exit) comes first.
    pub(crate) fn exit_wake(&mut self, w: VcpuId, u: VcpuId) {
        let Some(p) = self.vcpus[w].running_on() else { return self.kick_idle_vcpu(u) };
        if let Some(at) = self.hv_work_ends(p) {
            return self.q.push(at, Ev::ExitWake(w, u));
        }
        let asked_before = self.pcpus[p].resched_pending;
        self.kick_idle_vcpu(u);
        self.local_softirq_schedule(p, asked_before);
    }

    /// A SCHEDULE_SOFTIRQ raised on pCPU `p` by its own hypervisor work just done (a wake-up
    /// in an exit's handling, a softirq tasklet's delivery) is handled at once, before VM
    /// entry: `__do_softirq` (xen/common/softirq.c) loops until nothing is pending. The IPI
    /// event that `tickle` queued for it then finds nothing pending. A request made before
    /// (`asked_before`) keeps its IPI.
    pub(crate) fn local_softirq_schedule(&mut self, p: PcpuId, asked_before: bool) {
        if !asked_before && self.pcpus[p].resched_pending && self.hv_work_ends(p).is_none() && !self.in_tasklet(p) {
            self.pcpus[p].resched_pending = false;
            let why = if std::mem::take(&mut self.pcpus[p].yield_pending) { Reason::Yield } else { Reason::Timer };
            self.schedule(p, why);
        }
    }

    /// The guest executes HLT: an exit, then the vCPU blocks unless work is pending.
    pub(crate) fn start_halt(&mut self, v: VcpuId) {
        let vc = &mut self.vcpus[v];
        if vc.halt_pending {
            return;
        }
        vc.halt_pending = true;
        self.count_exit(v, ExitReason::Hlt);
        self.owe_hv(v, Some(ExitReason::Hlt), self.costs.exit_hlt_ns);
        self.arm_exec(v);
        self.poll_mailbox(v);
    }

    fn finish_halt(&mut self, v: VcpuId) {
        self.vcpus[v].halt_pending = false;
        if self.halt_has_work(v) {
            self.arm_exec(v);
            return;
        }
        if let RunState::Running(p) = self.vcpus[v].run {
            if self.halt_poll_begin(v, p) {
                return;
            }
            self.schedule(p, Reason::Block);
        }
        self.arm_idle_tick(v);
    }

    /// A halted vCPU of a guest without tickless idle is woken by its next timer tick.
    pub(crate) fn arm_idle_tick(&mut self, v: VcpuId) {
        let vm = &self.vms[self.vcpus[v].vm];
        if !vm.tickless && self.vcpus[v].online {
            let tick = vm.tick_ns;
            let at = (self.q.now() / tick + 1) * tick;
            self.q.arm(&mut self.vcpus[v].tick_timer, at, Ev::GuestTick(v));
        }
    }

    /// Hypervisor work of `ns` (a cost at the reference CPI: `hv_cost_ns`) that vCPU `v` owes
    /// (paid before its guest code runs on), counted under the VM exit `exit` it is handled in
    /// (`Pcpu::hv_by_exit_ns`, on the pCPU it runs on or last ran on).
    pub(crate) fn owe_hv(&mut self, v: VcpuId, exit: Option<ExitReason>, ns: Ns) {
        let ns = self.hv_cost_ns(self.vcpus[v].pcpu(), ns);
        self.owe_hv_time(v, exit, ns);
    }

    /// As `owe_hv` for a time that does not follow the CPI (a cache line's transfer).
    pub(crate) fn owe_hv_time(&mut self, v: VcpuId, exit: Option<ExitReason>, ns: Ns) {
        let vc = &mut self.vcpus[v];
        vc.hv_debt_ns += ns;
        self.pcpus[vc.pcpu()].hv_by_exit_ns[ExitReason::slot(exit)] += ns;
    }

    /// Count a VM exit of vCPU `v` (the results' `exits`, and the trace's exit counters).
    pub(crate) fn count_exit(&mut self, v: VcpuId, r: ExitReason) {
        self.vcpus[v].count_exit(r);
        if let Some(t) = self.trace.as_mut() {
            t.exit(self.vcpus[v].vm, r, self.q.now());
        }
    }

    /// Charge an exit to a running (or about to run) vCPU.
    pub(crate) fn charge_exit(&mut self, v: VcpuId, r: ExitReason) {
        self.advance(v);
        self.count_exit(v, r);
        self.owe_hv(v, Some(r), self.costs.exit_ns(r));
        self.arm_exec(v);
        self.poll_mailbox(v);
    }

    /// Deliver a virtual interrupt to vCPU `v`.
    pub(crate) fn deliver_irq(&mut self, v: VcpuId, work: IrqWork) {
        self.deliver_irq_as(v, work, true)
    }

    /// As `deliver_irq`; `raises_event`: KVM accepts it through the local APIC with
    /// `KVM_REQ_EVENT` (every interrupt but the LAPIC timer's, which wakes a halted vCPU with
    /// `KVM_REQ_UNBLOCK`, lapic.c `apic_timer_expired`), so a halted target wakes by event
    /// (`hv_wake_by_event`).
    pub(crate) fn deliver_irq_as(&mut self, v: VcpuId, work: IrqWork, raises_event: bool) {
        match self.vcpus[v].run {
            RunState::Running(_) if self.vcpus[v].poll_until.is_some() => self.inject_without_exit(v, work),
            RunState::Running(_) | RunState::Blocked if self.vipi_is_polled() => self.mailbox_post(v, work),
            RunState::Running(_) => {
                let at = self.q.now() + self.costs.phys_ipi_ns;
                self.q.push(at, Ev::VipiArrive(v, work));
            }
            RunState::Runnable => {
                self.vcpus[v].pending_irq.push(work);
                self.with_sched(|s, view| s.vipi_pending(view, v));
            }
            RunState::Blocked => {
                self.vcpus[v].pending_irq.push(work);
                if raises_event {
                    self.hv_wake_by_event(v);
                } else {
                    self.hv_wake(v);
                }
            }
            RunState::Offline => self.irq_dropped(self.vcpus[v].vm, work),
        }
    }

    pub(crate) fn vipi_arrive(&mut self, v: VcpuId, work: IrqWork) {
        match self.vcpus[v].run {
            RunState::Running(_) if self.vcpus[v].poll_until.is_some() || self.vipi_is_posted() => {
                self.inject_without_exit(v, work)
            }
            RunState::Running(_) => {
                self.advance(v);
                self.count_exit(v, ExitReason::ExtIntr);
                self.owe_hv(v, Some(ExitReason::ExtIntr), self.costs.exit_ext_intr_ns);
                self.vcpus[v].irq.push_back(work);
                self.arm_exec(v);
                self.poll_mailbox(v);
            }
            _ => self.deliver_irq(v, work),
        }
    }

    /// An interrupt that running vCPU `v` takes without an exit: a halt-polling vCPU is outside
    /// the guest already, so the poll loop sees it (`kvm_vcpu_kick` of a vCPU not in guest
    /// mode); a posted interrupt's notification is handled inside the guest (`hv::vipi`).
    fn inject_without_exit(&mut self, v: VcpuId, work: IrqWork) {
        self.advance(v);
        self.vcpus[v].irq.push_back(work);
        self.arm_exec(v);
    }

    /// The execution timer of a running vCPU fired: something reached its end.
    pub(crate) fn on_exec_timer(&mut self, v: VcpuId) {
        self.advance(v);
        if self.vcpus[v].hv_debt_ns + self.vcpus[v].bg_debt_ns > 0 {
            return self.arm_exec(v);
        }
        if !self.vcpus[v].rq_locks_held.is_empty() {
            self.release_rq_locks(v);
        }
        if self.halt_poll_step(v) {
            return;
        }
        while self.vcpus[v].irq.front().map_or(false, |w| w.left_ns == 0) {
            let w = self.vcpus[v].irq.pop_front().unwrap();
            if self.costs.exit_apic_eoi_ns > 0 && !self.vipi_is_posted() {
                // The handler's EOI write: an APIC-access exit (host `exit_apic_eoi_ns`).
                self.charge_exit(v, ExitReason::ApicEoi);
            }
            self.irq_done(v, w);
            if self.vcpus[v].running_on().is_none() {
                return;
            }
        }
        if !self.vcpus[v].irq.is_empty() && !self.irqs_masked(v) {
            return self.arm_exec(v);
        }
        if self.vcpus[v].halt_pending {
            return self.finish_halt(v);
        }
        if self.vcpus[v].refill_debt_ns > 0 && !self.refill_deferred(v) {
            return self.arm_exec(v);
        }
        let Some(t) = self.vcpus[v].cur else {
            return self.guest_pick(v);
        };
        // The return from an interrupt handler is a preemption point for a local wake-up's
        // need-resched mark (`guest::resched`, 2.6.32 placements only).
        if self.vcpus[v].need_resched.is_some() && self.preempt_local(v) {
            return;
        }
        let ple_due = self.ple.enabled && self.threads[t].act.kernel_spin() && self.vcpus[v].ple_spun_ns >= self.ple_window_ns(v);
        let slice_due = !self.vcpus[v].runq.is_empty()
            && !self.threads[t].act.preempt_disabled()
            && self.threads[t].slice_used_ns >= self.vms[self.threads[t].vm].slice_ns;
        match self.threads[t].act.clone() {
            Activity::Ready => self.step(t),
            Activity::Compute { left, then, .. } if left < 0.5 => self.compute_done(t, then),
            Activity::LockGranted { lock, left: 0, .. } => self.enter_critical_section(t, lock),
            Activity::SpinLock { lock, since, pv_left: 0 } => self.pv_wait(t, lock, since),
            Activity::MutexSpin { mutex, left: 0, .. } => self.mutex_spin_timeout(t, mutex),
            Activity::BarrierSpin { barrier, left: 0, .. } => self.barrier_spin_timeout(t, barrier),
            Activity::Blocked | Activity::Exited => {
                self.vcpus[v].cur = None;
                self.guest_pick(v)
            }
            _ if ple_due => self.ple_exit(v),
            _ if slice_due => self.guest_preempt(v),
            _ => self.arm_exec(v),
        }
    }

    fn ple_exit(&mut self, v: VcpuId) {
        let RunState::Running(p) = self.vcpus[v].run else { return };
        let ple = self.ple;
        self.count_exit(v, ExitReason::Ple);
        self.owe_hv(v, Some(ExitReason::Ple), self.costs.exit_ple_ns);
        let vc = &mut self.vcpus[v];
        vc.ple_spun_ns = 0;
        vc.ple_window_cycles = grow_window(vc.ple_window_cycles, ple.window_cycles, ple.grow, ple.max_cycles);
        self.poll_mailbox(v);
        let vm = self.vcpus[v].vm;
        for i in 0..self.vm_facts[vm].vcpus.len() {
            self.sync_facts(self.vm_facts[vm].vcpus[i]);
        }
        let resched = self.with_sched(|s, view| s.pause_exit(view, v));
        if resched && self.vcpus[v].running_on() == Some(p) {
            self.schedule(p, Reason::Yield);
        } else {
            self.arm_exec(v);
        }
    }
}

/// KVM `__grow_ple_window`.
pub fn grow_window(val: u64, base: u64, grow: u64, max: u64) -> u64 {
    let v = if grow < 1 {
        base
    } else if grow < base {
        val.saturating_mul(grow)
    } else {
        val.saturating_add(grow)
    };
    v.min(max)
}

/// KVM `__shrink_ple_window`.
pub fn shrink_window(val: u64, base: u64, shrink: u64) -> u64 {
    let v = if shrink < 1 {
        base
    } else if shrink < base {
        val / shrink
    } else {
        val.saturating_sub(shrink)
    };
    v.max(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ple_window_grows_by_factor_and_resets_on_shrink_zero() {
        assert_eq!(grow_window(4096, 4096, 2, u32::MAX as u64), 8192);
        assert_eq!(grow_window(8192, 4096, 2, 10_000), 10_000);
        assert_eq!(grow_window(4096, 4096, 1, u32::MAX as u64), 4096);
        assert_eq!(shrink_window(65536, 4096, 0), 4096);
        assert_eq!(shrink_window(65536, 4096, 2), 32768);
        assert_eq!(shrink_window(5000, 4096, 2), 4096);
    }

    /// KVM `__grow_ple_window` / `__shrink_ple_window` (arch/x86/kvm/x86.h): a modifier below
    /// the base multiplies or divides, one at or above it adds or subtracts; grow is capped at
    /// `ple_window_max`, shrink floored at the base `ple_window`; a modifier of 0 resets.
    #[test]
    fn ple_window_modifiers_at_or_above_the_base_add_and_subtract_within_the_clamps() {
        let base = 4096;
        assert_eq!(grow_window(4096, base, 0, u64::MAX), base, "grow 0 resets to base");
        assert_eq!(grow_window(4096, base, 4096, u64::MAX), 8192, "grow = base adds");
        assert_eq!(grow_window(10_000, base, 5000, u64::MAX), 15_000, "grow > base adds");
        assert_eq!(grow_window(10_000, base, 5000, 12_000), 12_000, "capped at the maximum");
        assert_eq!(grow_window(u32::MAX as u64, base, 2, u32::MAX as u64), u32::MAX as u64, "stays at UINT_MAX");
        assert_eq!(grow_window(3, 1, 3, 100), 6, "base 1: grow 3 adds");
        assert_eq!(shrink_window(20_000, base, 5000), 15_000, "shrink > base subtracts");
        assert_eq!(shrink_window(6000, base, 5000), base, "floored at base (KVM's unsigned val - modifier would wrap here)");
        assert_eq!(shrink_window(65_536, base, 4), 16_384, "shrink < base divides");
        assert_eq!(shrink_window(4096, base, 4), base, "never below base");
        // Grow then shrink round trip with the KVM defaults (grow 2, shrink 0).
        let mut w = base;
        for _ in 0..5 {
            w = grow_window(w, base, 2, u32::MAX as u64);
        }
        assert_eq!(w, 4096 * 32);
        assert_eq!(shrink_window(w, base, 0), base);
    }

    /// What `guest_wake_beside_an_idle_pcpu` saw 10 µs after the wake-up.
    struct WakeBeside {
        /// `u`'s run state and its migrations meanwhile.
        u_run: RunState,
        u_migrations: u64,
        /// `w`'s run state.
        w_run: RunState,
        p: PcpuId,
        q: PcpuId,
        /// `q`'s C-state exits meanwhile (`hv::cstate`).
        q_cstate_exits: u64,
    }

    /// Two pCPUs of one socket, Xen 4.1's credit: a 2-vCPU VM whose one thread computes on
    /// vCPU `w` (pCPU `p`) and whose vCPU `u` is halted, last on `p`; the other pCPU `q`
    /// idles, leaving its C-state `idle_exit_latency_ns` after an event reaches it. `w`'s code
    /// wakes a thread onto `u` (a wake-up IPI).
    fn guest_wake_beside_an_idle_pcpu(idle_exit_latency_ns: u64) -> WakeBeside {
        use crate::engine::{NS_PER_MS, NS_PER_US};
        use crate::scenario::from_toml_str;
        use crate::sim::{Overrides, Simulation};
        let text = format!(
            r#"
duration_ms = 50
[host]
cores_per_socket = 2
costs = {{ idle_exit_latency_ns = {idle_exit_latency_ns} }}
[hypervisor]
scheduler = "credit"
params = {{ wake = "xen41", ratelimit_us = 0, load_balance_ratelimit_us = 0 }}
[[vms]]
vcpus = 2
workloads = [{{ kind = "custom", groups = [
  {{ threads = 1, program = [{{ op = "forever", body = [{{ op = "compute", us = 1000 }}] }}] }},
  {{ threads = 1, program = [{{ op = "sleep", us = 1000000000 }}] }},
] }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        s.run_until(15 * NS_PER_MS).unwrap();
        let w_ = s.world();
        let (w, u) = if w_.vcpus[0].cur.is_some() { (0, 1) } else { (1, 0) };
        let RunState::Running(p) = w_.vcpus[w].run else { panic!("the computing vCPU runs") };
        let q = 1 - p;
        if (w_.vcpus[u].run, w_.pcpus[q].cur) != (RunState::Blocked, None) {
            panic!("setup: vCPU {u} halted, pCPU {q} idle");
        }
        let sleeper = 1;
        assert_eq!(w_.threads[sleeper].vcpu, u, "the sleeping thread belongs to the halted vCPU");
        w_.vcpus[u].last_pcpu = p;
        let migrations = w_.vcpus[u].migrations;
        let exits = w_.pcpus[q].cstate_exits;
        w_.threads[sleeper].act = Activity::Ready;
        w_.enqueue_thread(sleeper, u, Some(w), Some(NS_PER_MS));
        s.run_until(15 * NS_PER_MS + 10 * NS_PER_US).unwrap();
        let w_ = s.world();
        WakeBeside {
            u_run: w_.vcpus[u].run,
            u_migrations: w_.vcpus[u].migrations - migrations,
            w_run: w_.vcpus[w].run,
            p,
            q,
            q_cstate_exits: w_.pcpus[q].cstate_exits - exits,
        }
    }

    #[test]
    fn a_guest_wake_onto_the_wakers_pcpu_runs_there_before_a_tickled_idler_can_steal_it() {
        // `u` (BOOST) outranks `w` (UNDER) and is queued on `p`, which it tickles; `p` being
        // busy, it tickles the idle `q` too (4.1 `__runq_tickle`). `p` handles its own
        // SCHEDULE_SOFTIRQ when `w`'s ICR-write exit (`exit_ipi_ns`, 1.5 µs) is handled, and
        // switches to `u`; `q` takes the event-check IPI `phys_ipi_ns` (1 µs) later and finds
        // only `w`, in its scheduling tail (world_switch_ns − sched_call_ns = 2.24 µs), so it
        // keeps idling. Before session 15 the wake came at the exit's start, `p`'s reschedule
        // waited for the exit's end (1.5 µs) and `q`'s came after 1 µs and stole `u`.
        let r = guest_wake_beside_an_idle_pcpu(0);
        assert_eq!((r.u_run, r.u_migrations), (RunState::Running(r.p), 0));
        assert_eq!((r.w_run, r.q_cstate_exits), (RunState::Runnable, 0), "w waits on p");
    }

    #[test]
    fn an_idler_that_leaves_its_c_state_after_the_preempted_vcpus_tail_steals_it() {
        // As above, but `q` waits in C1 (`hv::cstate`, 3 µs): it answers the event-check IPI
        // 1 + 3 µs after the tickle, when `w` has left `p`'s scheduling tail, and takes it.
        let r = guest_wake_beside_an_idle_pcpu(3_000);
        assert_eq!((r.u_run, r.u_migrations), (RunState::Running(r.p), 0), "u still runs where it was woken");
        assert_eq!((r.w_run, r.q_cstate_exits), (RunState::Running(r.q), 1), "out of C1, q steals the preempted w");
    }

}
