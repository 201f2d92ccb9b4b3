//! Linux CFS as the host scheduler of KVM vCPU threads, with KVM's pause-loop handler.
//!
//! Models (reference/hypervisor-mechanisms.md §4-5; `kernel/sched/fair.c` up to 6.5,
//! `virt/kvm/kvm_main.c`):
//! - per-pCPU runqueues ordered by weighted virtual runtime; slice = period x w / sum(w) with
//!   period = max(sched_latency, nr x min_granularity); latency 6 ms, min granularity
//!   0.75 ms, wake-up granularity 1 ms, each scaled by 1 + ilog2(min(#pCPUs, 8))
//!   (SCHED_TUNABLESCALING_LOG);
//! - one cgroup per VM (as libvirt sets up) with `cpu.shares` = the VM weight: the group's
//!   weight is spread over its runnable vCPU threads as `calc_group_shares` does when every
//!   thread carries the same load, so each runnable vCPU thread weighs shares / #runnable;
//! - sleeper placement `vruntime = max(vruntime, min_vruntime - latency/2)`
//!   (GENTLE_FAIR_SLEEPERS, `place_entity`) and wake-up preemption beyond the wake-up
//!   granularity. A blocked thread keeps its absolute vruntime; when it wakes on another pCPU's
//!   runqueue its vruntime is re-anchored first, minus the old runqueue's min_vruntime plus the
//!   new one's (`migrate_task_rq_fair` subtracts, `enqueue_entity` adds back before
//!   `place_entity`; fair.c up to 6.5: "As blocked tasks retain absolute vruntime the migration
//!   needs to deal with this by subtracting the old and adding the new min_vruntime");
//! - wake placement `select_task_rq_fair`: previous pCPU if idle, else an idle pCPU sharing
//!   its LLC, else any idle pCPU, else the previous pCPU;
//! - periodic load balancing (interval = #pCPUs ms, x16 when busy; imbalance_pct 117) and
//!   new-idle balancing; migrated threads keep their lag relative to min_vruntime;
//! - KVM PLE exits call `kvm_vcpu_on_spin`: round robin from the last boosted vCPU, skipping
//!   vCPUs that are not ready, preempted in user mode, or, every other time, still inside
//!   their own `kvm_vcpu_on_spin` (`kvm_vcpu_eligible_for_directed_yield`: a vCPU
//!   descheduled by its own directed yield, whose `yield_to` ends in `schedule()`, is
//!   `in_spin_loop`, and each look at it toggles its `dy_eligible`; a vCPU the host preempted
//!   while it spun in the guest is not in_spin_loop and is no exception; leaving
//!   `kvm_vcpu_on_spin` clears `dy_eligible`). The user-mode filter is the
//!   `yield_to_kernel_mode` argument of Linux 4.15+ ("KVM: add spinlock optimization
//!   framework"); with `hypervisor.ple.yield_to_kernel_mode = false` any preempted vCPU is a
//!   candidate, as in
//!   Linux 3.x-4.14's `kvm_vcpu_on_spin(struct kvm_vcpu *me)` (virt/kvm/kvm_main.c: skips
//!   only vCPUs not `preempted`, itself, halted ones not runnable, and the `dy_eligible`
//!   toggle). Linux 5.3+ ("KVM: Boost vCPUs that are delivering interrupts") scans for
//!   `vcpu->ready` instead: a vCPU woken from halt that has not run since is a candidate too
//!   if `vcpu_dy_runnable` (an interrupt's `KVM_REQ_EVENT` or a pv kick's `pv_unhalted`), and
//!   the kernel-mode filter applies only to preempted vCPUs (`hypervisor.ple.boost_woken`,
//!   default true; false: the 3.x-5.2 rule). With posted interrupts (`vipi_delivery =
//!   "posted"`) the same 5.3 change lets a vCPU preempted in user mode through the filter
//!   while an interrupt waits in its PI descriptor (`kvm_arch_dy_has_pending_interrupt`).
//!   `yield_to` sets the target as next buddy on its runqueue and reschedules that pCPU, and
//!   the spinner yields (skip buddy); up to 3 failed attempts.
//!   Buddies are hints, as in `pick_next_entity`: the next buddy runs, and the skip buddy is
//!   passed over, only if that is not too unfair to the leftmost entity
//!   (`wakeup_preempt_entity` < 1, i.e. within one wake-up granularity of vruntime);
//! - the hypercall yields (`kvm_sched_yield`, after `KVM_HC_KICK_CPU` and
//!   `KVM_HC_SCHED_YIELD`) do nothing when the yielder is alone on its runqueue
//!   (`single_task_running`).
//!
//! - CFS bandwidth control of each VM's cgroup (`cfs_bandwidth.rs`): `vms[].cap_pct` (and the
//!   controller's `SetCap`, read at every hook) is a whole-VM quota of cap/100 × `cfs_period_us`
//!   (100 ms); a vCPU thread whose cfs_rq has no runtime left is throttled off its runqueue
//!   until the period timer refills the pool. Throttled threads do not count as runnable in
//!   the VM's share split, and load balancing moves no thread onto a throttled cfs_rq
//!   (`throttled_lb_pair`).
//!
//! Leaves out: PELT load averages (instantaneous runnable counts instead), scheduling-domain
//! hierarchy (one domain over all pCPUs), cache-hot migration resistance, EEVDF (6.6+).

use super::cfs_bandwidth::Bandwidth;
use super::{Decision, HvScheduler, Params, Reason, SchedView};
use crate::engine::{Ns, NS_PER_MS, NS_PER_US};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId, VmId};

const NICE_0_LOAD: f64 = 1024.0;
const BALANCE_TIMER_BASE: u64 = 0;
/// Period timers of the VMs' bandwidth control, one per VM (below `relaxed_cosched`'s ids).
const BANDWIDTH_TIMER_BASE: u64 = 1 << 32;

#[derive(Debug, Clone, Default)]
struct Ent {
    vruntime: f64,
    on_rq: Option<PcpuId>,
    /// The runqueue whose min_vruntime `vruntime` is relative to: the last it was queued on.
    home: PcpuId,
    exec_start: Ns,
    active: bool,
}

/// How KVM's PLE handler (`kvm_vcpu_on_spin`) picks a directed-yield target
/// (`hypervisor.ple.directed_yield`, `hypervisor.ple.yield_to_kernel_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PleYield {
    /// Yield at all on a PLE exit.
    pub directed_yield: bool,
    /// Only to a vCPU preempted in guest kernel mode (Linux 4.15+); false: to any preempted one.
    pub yield_to_kernel_mode: bool,
    /// Also to a vCPU woken from halt that has not run since (Linux 5.3+, `vcpu->ready`).
    pub boost_woken: bool,
}

impl Default for PleYield {
    fn default() -> Self {
        PleYield::of(&crate::scenario::PleSpec::default())
    }
}

impl PleYield {
    pub fn of(ple: &crate::scenario::PleSpec) -> Self {
        PleYield {
            directed_yield: ple.directed_yield.unwrap_or(true),
            yield_to_kernel_mode: ple.yield_to_kernel_mode,
            boost_woken: ple.boost_woken,
        }
    }
}

pub struct Cfs {
    directed_yield: bool,
    yield_to_kernel_mode: bool,
    boost_woken: bool,
    latency_ns: f64,
    min_gran_ns: f64,
    wakeup_gran_ns: f64,
    imbalance_pct: f64,
    busy_factor: u64,
    ents: Vec<Ent>,
    rq: Vec<Vec<VcpuId>>,
    min_vruntime: Vec<f64>,
    next_buddy: Vec<Option<VcpuId>>,
    skip_buddy: Vec<Option<VcpuId>>,
    active_per_vm: Vec<u32>,
    last_boosted: Vec<usize>,
    dy_eligible: Vec<bool>,
    /// Descheduled by its own directed yield and not run since: still inside its
    /// `kvm_vcpu_on_spin` (`vcpu->spin_loop.in_spin_loop`).
    in_spin_loop: Vec<bool>,
    balance_interval_ns: Ns,
    dy_attempted: u64,
    dy_successful: u64,
    bw: Bandwidth,
}

impl Cfs {
    pub fn from_params(p: &mut Params, ple: PleYield) -> Result<Self, ScenarioError> {
        let latency_ms = p.f64("sched_latency_ms", 6.0, 0.1, 1000.0)?;
        let min_gran_ms = p.f64("sched_min_granularity_ms", 0.75, 0.01, 1000.0)?;
        let wakeup_ms = p.f64("sched_wakeup_granularity_ms", 1.0, 0.0, 1000.0)?;
        let imbalance_pct = p.f64("imbalance_pct", 117.0, 100.0, 1000.0)?;
        let busy_factor = p.f64("busy_factor", 16.0, 1.0, 1000.0)?;
        // Bandwidth control: cgroup `cpu.cfs_period_us` default 100 ms (`default_cfs_period`;
        // libvirt `global_period` range 1000-1000000 us), `sched_cfs_bandwidth_slice_us` 5 ms.
        let cfs_period_us = p.u64("cfs_period_us", 100_000, 1_000, 1_000_000)?;
        let cfs_bandwidth_slice_us = p.u64("cfs_bandwidth_slice_us", 5_000, 1, 1_000_000)?;
        Ok(Cfs {
            directed_yield: ple.directed_yield,
            yield_to_kernel_mode: ple.yield_to_kernel_mode,
            boost_woken: ple.boost_woken,
            latency_ns: latency_ms * NS_PER_MS as f64,
            min_gran_ns: min_gran_ms * NS_PER_MS as f64,
            wakeup_gran_ns: wakeup_ms * NS_PER_MS as f64,
            imbalance_pct,
            busy_factor: busy_factor as u64,
            ents: Vec::new(),
            rq: Vec::new(),
            min_vruntime: Vec::new(),
            next_buddy: Vec::new(),
            skip_buddy: Vec::new(),
            active_per_vm: Vec::new(),
            last_boosted: Vec::new(),
            dy_eligible: Vec::new(),
            in_spin_loop: Vec::new(),
            balance_interval_ns: 0,
            dy_attempted: 0,
            dy_successful: 0,
            bw: Bandwidth::new(cfs_period_us * NS_PER_US, cfs_bandwidth_slice_us * NS_PER_US),
        })
    }

    /// The runqueue `v` waits on (None while running, blocked or off the runqueues).
    pub(crate) fn queued_on(&self, v: VcpuId) -> Option<PcpuId> {
        self.ents[v].on_rq
    }

    fn weight(&self, view: &SchedView, v: VcpuId) -> f64 {
        let vm = view.vcpus[v].vm;
        let shares = view.vms[vm].weight as f64 * NICE_0_LOAD / 256.0;
        shares / self.active_per_vm[vm].max(1) as f64
    }

    fn load(&self, view: &SchedView, p: PcpuId) -> f64 {
        let mut l: f64 = self.rq[p].iter().map(|&v| self.weight(view, v)).sum();
        if let Some(c) = view.pcpu_cur[p] {
            l += self.weight(view, c);
        }
        l
    }

    fn update_curr(&mut self, view: &SchedView, p: PcpuId) {
        if let Some(c) = view.pcpu_cur[p] {
            let w = self.weight(view, c);
            let e = &mut self.ents[c];
            let ran = view.now.saturating_sub(e.exec_start);
            e.vruntime += ran as f64 * NICE_0_LOAD / w;
            e.exec_start = view.now;
            self.bw.charge(view.vcpus[c].vm, p, ran);
        }
        self.update_min_vruntime(view, p);
    }

    fn update_min_vruntime(&mut self, view: &SchedView, p: PcpuId) {
        let mut m = f64::INFINITY;
        if let Some(c) = view.pcpu_cur[p] {
            m = self.ents[c].vruntime;
        }
        for &v in &self.rq[p] {
            m = m.min(self.ents[v].vruntime);
        }
        if m.is_finite() && m > self.min_vruntime[p] {
            self.min_vruntime[p] = m;
        }
    }

    fn enqueue(&mut self, p: PcpuId, v: VcpuId) {
        self.rq[p].push(v);
        self.ents[v].on_rq = Some(p);
        self.ents[v].home = p;
    }

    fn dequeue(&mut self, v: VcpuId) {
        if let Some(p) = self.ents[v].on_rq.take() {
            self.rq[p].retain(|&x| x != v);
            if self.next_buddy[p] == Some(v) {
                self.next_buddy[p] = None;
            }
        }
    }

    fn set_active(&mut self, view: &SchedView, v: VcpuId, on: bool) {
        if self.ents[v].active != on {
            self.ents[v].active = on;
            let vm = view.vcpus[v].vm;
            if on {
                self.active_per_vm[vm] += 1;
            } else {
                self.active_per_vm[vm] -= 1;
            }
        }
    }

    /// Take up cap changes: the scenario's at start, the controller's `SetCap` later
    /// (`tg_set_cfs_bandwidth` unthrottles every cfs_rq of the group).
    fn sync_caps(&mut self, view: &mut SchedView) {
        for vm in 0..view.vms.len() {
            let (freed, arm) = self.bw.set_cap(vm, view.vms[vm].cap_pct);
            if arm {
                view.arm(BANDWIDTH_TIMER_BASE + vm as u64, view.now + self.bw.period_ns);
            }
            for (p, v) in freed {
                self.set_active(view, v, true);
                self.place_and_enqueue(view, p, v);
            }
        }
    }

    /// Whether a thread of `vm` waits on `p`'s runqueue.
    fn vm_queued_on(&self, view: &SchedView, vm: VmId, p: PcpuId) -> bool {
        self.rq[p].iter().any(|&x| view.vcpus[x].vm == vm)
    }

    /// `v` waits on `vm`'s throttled cfs_rq on `p`: off the runqueue, out of the share split.
    fn park(&mut self, view: &SchedView, p: PcpuId, v: VcpuId) {
        self.ents[v].home = p;
        self.bw.park(view.vcpus[v].vm, p, v);
        self.set_active(view, v, false);
    }

    /// `throttle_cfs_rq`: `vm`'s threads queued on `p` leave the runqueue.
    fn throttle(&mut self, view: &SchedView, vm: VmId, p: PcpuId) {
        let vs: Vec<VcpuId> = self.rq[p].iter().copied().filter(|&x| view.vcpus[x].vm == vm).collect();
        for v in vs {
            self.dequeue(v);
            self.park(view, p, v);
        }
    }

    /// Queue runnable `v` on `p` as a wake-up (sleeper placement, wake-up preemption); onto a
    /// throttled cfs_rq it waits unseen.
    fn place_and_enqueue(&mut self, view: &mut SchedView, p: PcpuId, v: VcpuId) {
        self.update_curr(view, p);
        let home = self.ents[v].home;
        if home != p {
            self.ents[v].vruntime += self.min_vruntime[p] - self.min_vruntime[home];
        }
        let floor = self.min_vruntime[p] - self.latency_ns / 2.0;
        let e = &mut self.ents[v];
        if e.vruntime < floor {
            e.vruntime = floor;
        }
        if self.bw.is_throttled(view.vcpus[v].vm, p) {
            self.park(view, p, v);
            return;
        }
        self.enqueue(p, v);
        match view.pcpu_cur[p] {
            None => view.tickle(p),
            Some(c) => {
                let gran = self.wakeup_gran_ns * NICE_0_LOAD / self.weight(view, v);
                if self.ents[c].vruntime - self.ents[v].vruntime > gran {
                    view.tickle(p);
                }
            }
        }
    }

    fn select_rq(&self, view: &SchedView, v: VcpuId) -> PcpuId {
        let n = view.n_pcpus();
        let prev = view.vcpus[v].last_pcpu;
        let free = |p: PcpuId| view.is_idle(p) && self.rq[p].is_empty() && view.allowed(v, p);
        if free(prev) {
            return prev;
        }
        let sock = view.topo.socket_of(prev);
        let scan = || (1..=n).map(move |i| (prev + i) % n);
        if let Some(p) = scan().find(|&p| view.topo.socket_of(p) == sock && free(p)) {
            return p;
        }
        if let Some(p) = scan().find(|&p| free(p)) {
            return p;
        }
        if view.allowed(v, prev) {
            prev
        } else {
            (0..n).find(|&p| view.allowed(v, p)).unwrap_or(0)
        }
    }

    fn period(&self, nr: usize) -> f64 {
        self.latency_ns.max(nr as f64 * self.min_gran_ns)
    }

    /// `wakeup_preempt_entity(se, left) < 1`: running `se` instead of the leftmost entity is
    /// "not too unfair" (`se` is at most one wake-up granularity of `left` ahead).
    fn not_too_unfair(&self, view: &SchedView, se: VcpuId, left: VcpuId) -> bool {
        let gran = self.wakeup_gran_ns * NICE_0_LOAD / self.weight(view, left);
        self.ents[se].vruntime - self.ents[left].vruntime <= gran
    }

    /// `pick_next_entity` (fair.c up to 6.5): the leftmost entity; the second one instead if
    /// the leftmost is the skip buddy and that is not too unfair; the next buddy if that is
    /// not too unfair to the leftmost.
    fn pick(&mut self, view: &SchedView, p: PcpuId) -> Option<VcpuId> {
        let skip = self.skip_buddy[p].take();
        let next = self.next_buddy[p].take().filter(|&b| self.ents[b].on_rq == Some(p));
        let by_vruntime = |a: &&VcpuId, b: &&VcpuId| self.ents[**a].vruntime.total_cmp(&self.ents[**b].vruntime);
        let left = *self.rq[p].iter().min_by(by_vruntime)?;
        let mut se = left;
        if skip == Some(left) {
            if let Some(&second) = self.rq[p].iter().filter(|&&v| v != left).min_by(by_vruntime) {
                if self.not_too_unfair(view, second, left) {
                    se = second;
                }
            }
        }
        if let Some(b) = next {
            if self.not_too_unfair(view, b, left) {
                se = b;
            }
        }
        Some(se)
    }

    fn migrate(&mut self, from: PcpuId, to: PcpuId, v: VcpuId) {
        self.dequeue(v);
        let e = &mut self.ents[v];
        e.vruntime = e.vruntime - self.min_vruntime[from] + self.min_vruntime[to];
        self.enqueue(to, v);
    }

    /// Periodic / new-idle load balancing toward `p`. Returns whether anything moved.
    fn balance(&mut self, view: &mut SchedView, p: PcpuId, newidle: bool) -> bool {
        let n = view.n_pcpus();
        let this = self.load(view, p);
        let mut busiest = None;
        let mut bl = 0.0;
        for q in 0..n {
            if q == p || self.rq[q].is_empty() {
                continue;
            }
            let l = self.load(view, q);
            if l > bl {
                bl = l;
                busiest = Some(q);
            }
        }
        let Some(q) = busiest else { return false };
        if !newidle && bl * 100.0 <= this * self.imbalance_pct {
            return false;
        }
        let imbalance = if newidle { f64::INFINITY } else { (bl - this) / 2.0 };
        let mut moved = 0.0;
        let mut any = false;
        let cands: Vec<VcpuId> = self.rq[q].iter().rev().copied().collect();
        for v in cands {
            if !view.allowed(v, p) || self.bw.is_throttled(view.vcpus[v].vm, p) {
                continue;
            }
            let w = self.weight(view, v);
            if !newidle && w > imbalance - moved + 1e-9 {
                continue;
            }
            self.migrate(q, p, v);
            moved += w;
            any = true;
            if newidle || moved >= imbalance {
                break;
            }
        }
        any
    }

    /// `yield_to`: boost `t` on its runqueue; returns 1 on success, 0 if not possible, -1 if
    /// neither runqueue has anything else to run (-ESRCH).
    fn yield_to(&mut self, view: &mut SchedView, me_p: PcpuId, t: VcpuId) -> i32 {
        let Some(q) = self.ents[t].on_rq else { return 0 };
        let nr_me = self.rq[me_p].len() + 1;
        let nr_t = self.rq[q].len() + view.pcpu_cur[q].is_some() as usize;
        if nr_me == 1 && nr_t == 1 {
            return -1;
        }
        self.next_buddy[q] = Some(t);
        if q != me_p {
            view.tickle(q);
        }
        1
    }
}

impl HvScheduler for Cfs {
    fn name(&self) -> &'static str {
        "cfs"
    }

    fn init(&mut self, view: &mut SchedView) {
        let n = view.n_pcpus();
        let factor = 1.0 + (n.min(8) as f64).log2().floor();
        self.latency_ns *= factor;
        self.min_gran_ns *= factor;
        self.wakeup_gran_ns *= factor;
        self.ents = vec![Ent::default(); view.vcpus.len()];
        self.rq = vec![Vec::new(); n];
        self.min_vruntime = vec![0.0; n];
        self.next_buddy = vec![None; n];
        self.skip_buddy = vec![None; n];
        self.active_per_vm = vec![0; view.vms.len()];
        self.last_boosted = vec![usize::MAX; view.vms.len()];
        self.dy_eligible = vec![false; view.vcpus.len()];
        self.in_spin_loop = vec![false; view.vcpus.len()];
        self.balance_interval_ns = n as Ns * NS_PER_MS;
        for p in 0..n {
            view.arm(BALANCE_TIMER_BASE + p as u64, self.balance_interval_ns + p as Ns * 1000);
        }
        self.bw.init(view.vms.len(), n);
        self.sync_caps(view);
    }

    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        if self.ents[v].on_rq.is_some() || self.bw.is_parked(view.vcpus[v].vm, v) {
            return;
        }
        self.sync_caps(view);
        self.set_active(view, v, true);
        let p = self.select_rq(view, v);
        self.place_and_enqueue(view, p, v);
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        let vm = view.vcpus[v].vm;
        let p = self.ents[v].home;
        if !self.bw.unpark(vm, v) {
            self.dequeue(v);
        }
        self.set_active(view, v, false);
        if self.bw.capped(vm) && view.pcpu_cur[p].map_or(true, |c| view.vcpus[c].vm != vm) && !self.vm_queued_on(view, vm, p) {
            self.bw.cfs_rq_emptied(vm, p);
        }
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        self.sync_caps(view);
        self.update_curr(view, p);
        if let Some(v) = prev {
            let vm = view.vcpus[v].vm;
            if prev_runnable && !self.bw.has_runtime(vm, p) {
                self.throttle(view, vm, p);
                self.park(view, p, v);
            } else if prev_runnable {
                self.enqueue(p, v);
                if why == Reason::Yield {
                    self.skip_buddy[p] = Some(v);
                }
            } else {
                self.set_active(view, v, false);
                if self.bw.capped(vm) && !self.vm_queued_on(view, vm, p) {
                    self.bw.cfs_rq_emptied(vm, p);
                }
            }
        }
        if self.rq[p].is_empty() {
            self.balance(view, p, true);
        }
        // `pick_next_task_fair`: an entity whose cfs_rq has no runtime left throttles it
        // (`check_cfs_rq_runtime`) and the pick starts again.
        let next = loop {
            let Some(v) = self.pick(view, p) else { break None };
            let vm = view.vcpus[v].vm;
            if self.bw.has_runtime(vm, p) {
                break Some(v);
            }
            self.throttle(view, vm, p);
            if self.rq[p].is_empty() {
                self.balance(view, p, true);
            }
        };
        if let Some(v) = next {
            self.dequeue(v);
            self.ents[v].exec_start = view.now;
            // Back from the schedule() of its own directed yield, a vCPU leaves
            // kvm_vcpu_on_spin: in_spin_loop off, dy_eligible cleared.
            if std::mem::take(&mut self.in_spin_loop[v]) {
                self.dy_eligible[v] = false;
            }
        }
        let slice = next.map(|v| {
            let nr = self.rq[p].len() + 1;
            let total: f64 = self.rq[p].iter().map(|&x| self.weight(view, x)).sum::<f64>() + self.weight(view, v);
            let slice = ((self.period(nr) * self.weight(view, v) / total.max(1.0)).max(self.min_gran_ns)) as Ns;
            // A capped VM's thread runs at most until its cfs_rq's local runtime is used up.
            self.bw.local_left_ns(view.vcpus[v].vm, p).map_or(slice, |left| slice.min(left.max(1)))
        });
        Decision { next, slice_ns: slice }
    }

    fn timer(&mut self, view: &mut SchedView, id: u64) {
        self.sync_caps(view);
        if id >= BANDWIDTH_TIMER_BASE {
            // `sched_cfs_period_timer`: refill the VM's pool, unthrottle what it pays for.
            let (freed, rearm) = self.bw.period_timer((id - BANDWIDTH_TIMER_BASE) as VmId);
            for (p, v) in freed {
                self.set_active(view, v, true);
                self.place_and_enqueue(view, p, v);
            }
            if rearm {
                view.arm(id, view.now + self.bw.period_ns);
            }
            return;
        }
        let p = (id - BALANCE_TIMER_BASE) as PcpuId;
        self.update_curr(view, p);
        let moved = self.balance(view, p, false);
        if moved && view.pcpu_cur[p].is_none() {
            view.tickle(p);
        }
        let busy = view.pcpu_cur[p].is_some();
        let interval = if busy { self.balance_interval_ns * self.busy_factor } else { self.balance_interval_ns };
        view.arm(id, view.now + interval);
    }

    fn pause_exit(&mut self, view: &mut SchedView, me: VcpuId) -> bool {
        if !self.directed_yield {
            return false;
        }
        let RunState::Running(me_p) = view.vcpus[me].run else { return false };
        let vm = view.vcpus[me].vm;
        // The VM's vCPU list outlives the view's mutable borrows (`SchedView::vms` is `&'a`).
        let vms = view.vms;
        let vcpus = &vms[vm].vcpus;
        let n = vcpus.len();
        if n < 2 {
            return false;
        }
        self.dy_attempted += 1;
        let start = self.last_boosted[vm].wrapping_add(1) % n;
        let mut tries = 3;
        for i in 0..n {
            let idx = (start + i) % n;
            let t = vcpus[idx];
            if t == me {
                continue;
            }
            let f = view.vcpus[t];
            let candidate = if f.preempted {
                !self.yield_to_kernel_mode || f.preempted_in_kernel || (self.boost_woken && f.pi_pending)
            } else {
                self.boost_woken && f.dy_runnable
            };
            if f.run != RunState::Runnable || !candidate {
                continue;
            }
            // kvm_vcpu_eligible_for_directed_yield.
            if self.in_spin_loop[t] {
                let eligible = self.dy_eligible[t];
                self.dy_eligible[t] = !eligible;
                if !eligible {
                    continue;
                }
            }
            self.update_curr(view, me_p);
            let r = self.yield_to(view, me_p, t);
            if r > 0 {
                self.last_boosted[vm] = idx;
                self.dy_successful += 1;
                // yield_to ends in schedule(): the yielder is descheduled inside its
                // kvm_vcpu_on_spin.
                self.in_spin_loop[me] = true;
                return true;
            } else if r < 0 {
                tries -= 1;
                if tries == 0 {
                    break;
                }
            }
        }
        // kvm_vcpu_on_spin returns without yielding: "Ensure vcpu is not eligible during next
        // spinloop".
        self.dy_eligible[me] = false;
        false
    }

    fn directed_yield(&mut self, view: &mut SchedView, me: VcpuId, target: VcpuId) -> bool {
        let RunState::Running(me_p) = view.vcpus[me].run else { return false };
        self.dy_attempted += 1;
        // `kvm_sched_yield` (x86.c): no yield if this vCPU thread is alone on its runqueue
        // (`single_task_running`) or the target is not ready.
        if self.rq[me_p].is_empty() || view.vcpus[target].run != RunState::Runnable {
            return false;
        }
        self.update_curr(view, me_p);
        if self.yield_to(view, me_p, target) > 0 {
            self.dy_successful += 1;
            true
        } else {
            false
        }
    }

    fn ple_grows_by_default(&self) -> bool {
        true
    }

    fn halt_polls_by_default(&self) -> bool {
        true
    }

    fn single_task_running(&self, p: PcpuId) -> bool {
        self.rq.get(p).map_or(true, |q| q.is_empty())
    }

    fn yield_stats(&self) -> (u64, u64) {
        (self.dy_attempted, self.dy_successful)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        if self.bw.used {
            vec![("cfs_throttles", self.bw.throttles), ("cfs_unthrottles", self.bw.unthrottles)]
        } else {
            Vec::new()
        }
    }

    fn enforces_caps(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hv::sched::testkit::Kit;
    use std::collections::BTreeMap;

    const MS: Ns = NS_PER_MS;

    fn cfs() -> Cfs {
        Cfs::from_params(&mut Params::new(&BTreeMap::new()), PleYield::default()).unwrap()
    }

    /// Drive pCPU 0 through `to` the way the machine does: a decision at every slice end.
    fn run_slices(k: &mut Kit, s: &mut Cfs, to: Ns) {
        while k.now < to {
            let left = k.running_on(0).and_then(|_| s.bw.local_left_ns(0, 0)).unwrap_or(MS);
            let next = (k.now + left.max(1)).min(to);
            k.advance(s, next);
            if k.running_on(0).is_some() {
                k.schedule(s, 0, Reason::Timer);
            }
        }
    }

    #[test]
    fn a_capped_vm_is_throttled_at_its_quota_and_unthrottled_at_the_period_refresh() {
        // 1 pCPU, one 1-vCPU VM capped at 30 %: quota 30 ms per 100 ms period.
        let mut k = Kit::new(1, &[1]);
        k.vms[0].cap_pct = 30;
        let mut s = cfs();
        k.init(&mut s);
        k.wake(&mut s, 0);
        assert_eq!(k.running_on(0), Some(0));
        assert_eq!(s.bw.local_left_ns(0, 0), Some(5 * MS), "runs on 5 ms slices of local runtime");
        run_slices(&mut k, &mut s, 29 * MS);
        assert_eq!(k.running_on(0), Some(0), "still within the quota at 29 ms");
        run_slices(&mut k, &mut s, 31 * MS);
        assert_eq!(k.running_on(0), None, "throttled once 30 ms are used");
        assert_eq!(k.vcpus[0].run, RunState::Runnable, "throttled, not blocked");
        assert_eq!(s.bw.throttles, 1);
        // Nothing changes until the period timer refills the pool at 100 ms.
        k.advance(&mut s, 99 * MS);
        assert_eq!(k.running_on(0), None);
        k.advance(&mut s, 100 * MS);
        assert_eq!(k.running_on(0), Some(0), "unthrottled by the period timer");
        assert_eq!(s.bw.unthrottles, 1);
        run_slices(&mut k, &mut s, 200 * MS);
        assert_eq!(s.bw.throttles, 2, "throttled again 30 ms into the second period");
    }

    #[test]
    fn a_throttled_vm_leaves_the_pcpu_to_others_and_its_waking_threads_wait() {
        // 1 pCPU: VM 0 (2 vCPUs) capped at 20 %, VM 1 uncapped.
        let mut k = Kit::new(1, &[2, 1]);
        k.vms[0].cap_pct = 20;
        let mut s = cfs();
        k.init(&mut s);
        k.wake(&mut s, 0);
        run_slices(&mut k, &mut s, 21 * MS);
        assert_eq!(k.running_on(0), None, "20 ms used: throttled");
        k.wake(&mut s, 2);
        assert_eq!(k.running_on(2), Some(0), "the uncapped VM runs");
        k.wake(&mut s, 1);
        assert!(s.queued_on(1).is_none() && s.bw.is_parked(0, 1), "a sibling waking onto the throttled cfs_rq waits off the runqueue");
        k.advance(&mut s, 100 * MS);
        for v in [0, 1] {
            assert!(k.running_on(v).is_some() || s.queued_on(v).is_some(), "vCPU {v} back on the runqueue after the refresh");
        }
    }

    #[test]
    fn a_cap_set_or_lifted_at_run_time_takes_effect() {
        let mut k = Kit::new(1, &[1]);
        let mut s = cfs();
        k.init(&mut s);
        k.wake(&mut s, 0);
        run_slices(&mut k, &mut s, 50 * MS);
        assert_eq!(s.bw.local_left_ns(0, 0), None, "no cap, no bandwidth control");
        // The controller's SetCap: 10 % from 50 ms on (a fresh 10 ms pool).
        k.vms[0].cap_pct = 10;
        k.schedule(&mut s, 0, Reason::Timer);
        run_slices(&mut k, &mut s, 61 * MS);
        assert_eq!(k.running_on(0), None, "throttled after 10 ms under the new cap");
        // Lifting the cap unthrottles at the next scheduler hook.
        k.vms[0].cap_pct = 0;
        k.advance(&mut s, 70 * MS);
        assert_eq!(k.running_on(0), Some(0));
    }

    #[test]
    fn a_thread_waking_on_another_runqueue_keeps_its_lag_not_its_absolute_vruntime() {
        // 2 pCPUs, three 1-vCPU VMs (one thread of weight 1024 each: vruntime = run time).
        // vCPU 0 runs alone on pCPU 0; vCPUs 1 and 2, pinned to pCPU 1, take turns there.
        let mut k = Kit::new(2, &[1, 1, 1]);
        k.affinity[1] = Some(vec![1]);
        k.affinity[2] = Some(vec![1]);
        k.vcpus[2].last_pcpu = 1;
        let mut s = Cfs::from_params(&mut Params::new(&BTreeMap::new()), PleYield::default()).unwrap();
        k.init(&mut s);
        for v in 0..3 {
            k.wake(&mut s, v);
        }
        assert_eq!((k.running_on(0), k.running_on(1)), (Some(0), Some(1)));
        for i in 1..=10 {
            k.advance(&mut s, i * 10 * MS);
            k.schedule(&mut s, 1, Reason::Timer);
        }
        k.halt(&mut s, 0);
        // pCPU 0's min_vruntime is 100 ms, pCPU 1's about 50 ms.
        let lag = s.ents[0].vruntime - s.min_vruntime[0];
        assert!(s.min_vruntime[0] - s.min_vruntime[1] >= 40.0 * MS as f64);
        // vCPU 0 wakes, now allowed only on pCPU 1, and queues there.
        k.affinity[0] = Some(vec![1]);
        k.wake(&mut s, 0);
        assert_eq!(s.ents[0].on_rq, Some(1));
        assert!((s.ents[0].vruntime - s.min_vruntime[1] - lag).abs() < 1.0, "placed at its lag on the new runqueue");
        // So it gets the pCPU within two turns, instead of waiting until the others have run 50 ms.
        let mut ran = false;
        for i in 1..=2 {
            k.advance(&mut s, 100 * MS + i * 10 * MS);
            k.schedule(&mut s, 1, Reason::Timer);
            ran |= k.running_on(0) == Some(1);
        }
        assert!(ran);
    }

    /// One pCPU, one 2-vCPU VM: vCPU 1 runs, vCPU 0 waits on the runqueue, preempted in guest
    /// user mode (or kernel mode); vCPU 1 takes a PLE exit. Returns whether it yielded.
    fn pause_exit_with_preempted_sibling(yield_to_kernel_mode: bool, sibling_in_kernel: bool) -> bool {
        let ple = PleYield { directed_yield: true, yield_to_kernel_mode, boost_woken: true };
        pause_exit_with_preempted_sibling_as(ple, sibling_in_kernel, false)
    }

    /// As `pause_exit_with_preempted_sibling`, with the PLE rule and whether a posted interrupt
    /// waits in the sibling's PI descriptor (`pi_pending`).
    fn pause_exit_with_preempted_sibling_as(ple: PleYield, sibling_in_kernel: bool, pi_pending: bool) -> bool {
        let mut k = Kit::new(1, &[2]);
        let mut s = sibling_preempted(&mut k, ple);
        k.vcpus[0].preempted_in_kernel = sibling_in_kernel;
        k.vcpus[0].pi_pending = pi_pending;
        let yielded = k.with(|view| s.pause_exit(view, 1));
        assert_eq!(s.yield_stats(), (1, yielded as u64));
        yielded
    }

    #[test]
    fn a_spinner_yields_to_a_user_mode_preempted_sibling_only_without_yield_to_kernel_mode() {
        // Linux 4.15+ (`yield_to_kernel_mode`): only a sibling preempted in kernel mode.
        assert!(!pause_exit_with_preempted_sibling(true, false));
        assert!(pause_exit_with_preempted_sibling(true, true));
        // Linux 3.x-4.14 `kvm_vcpu_on_spin`: any preempted sibling.
        assert!(pause_exit_with_preempted_sibling(false, false));
        assert!(pause_exit_with_preempted_sibling(false, true));
    }

    #[test]
    fn a_spinner_yields_to_a_user_mode_preempted_sibling_with_a_posted_interrupt_from_linux_5_3() {
        // Linux 5.3+ with APICv: `kvm_arch_dy_has_pending_interrupt` lets it through the
        // kernel-mode filter.
        let rule = |boost_woken| PleYield { directed_yield: true, yield_to_kernel_mode: true, boost_woken };
        assert!(pause_exit_with_preempted_sibling_as(rule(true), false, true));
        assert!(!pause_exit_with_preempted_sibling_as(rule(true), false, false));
        // Before 5.3 the filter looked at the mode alone.
        assert!(!pause_exit_with_preempted_sibling_as(rule(false), false, true));
    }

    /// One pCPU, one 2-vCPU VM: vCPU 1 runs, vCPU 0 was halted and has just been woken
    /// (`dy_runnable`: by an interrupt or a pv kick, or not: by its LAPIC timer) and waits on
    /// the runqueue without having run; vCPU 1 takes a PLE exit. Returns whether it yielded.
    fn pause_exit_with_woken_sibling(boost_woken: bool, dy_runnable: bool) -> bool {
        let mut k = Kit::new(1, &[2]);
        let ple = PleYield { directed_yield: true, yield_to_kernel_mode: true, boost_woken };
        let mut s = Cfs::from_params(&mut Params::new(&BTreeMap::new()), ple).unwrap();
        k.init(&mut s);
        k.wake(&mut s, 1);
        assert_eq!(k.running_on(1), Some(0));
        k.vcpus[0].dy_runnable = dy_runnable;
        k.wake(&mut s, 0);
        assert!(!k.vcpus[0].preempted && k.vcpus[0].run == RunState::Runnable, "vCPU 0 woke and waits");
        k.with(|view| s.pause_exit(view, 1))
    }

    #[test]
    fn a_spinner_yields_to_a_sibling_woken_by_an_interrupt_only_from_linux_5_3() {
        // Linux 5.3+ `kvm_vcpu_on_spin`: `vcpu->ready` (set by `kvm_vcpu_wake_up`) and, while the
        // woken vCPU still counts as blocking, `vcpu_dy_runnable` (KVM_REQ_EVENT, pv_unhalted);
        // the kernel-mode filter applies only to preempted vCPUs.
        assert!(pause_exit_with_woken_sibling(true, true));
        assert!(!pause_exit_with_woken_sibling(true, false), "a timer wake-up is not dy_runnable");
        // Linux 3.x-5.2: only `vcpu->preempted` vCPUs are candidates.
        assert!(!pause_exit_with_woken_sibling(false, true));
    }

    /// One pCPU, one 2-vCPU VM under PLE rule `ple`: run until vCPU 1 holds the pCPU and
    /// vCPU 0 waits, preempted.
    fn sibling_preempted(k: &mut Kit, ple: PleYield) -> Cfs {
        let mut s = Cfs::from_params(&mut Params::new(&BTreeMap::new()), ple).unwrap();
        k.init(&mut s);
        k.wake(&mut s, 0);
        k.wake(&mut s, 1);
        for i in 1..=50 {
            if k.running_on(1).is_some() {
                break;
            }
            k.advance(&mut s, i * MS);
            k.schedule(&mut s, 0, Reason::Timer);
        }
        assert_eq!(k.running_on(1), Some(0), "vCPU 1 got the pCPU");
        assert!(k.vcpus[0].preempted && k.vcpus[0].run == RunState::Runnable, "vCPU 0 was preempted");
        s
    }

    /// Linux 3.13's rule: any preempted sibling is a candidate.
    const KVM_3_13: PleYield = PleYield { directed_yield: true, yield_to_kernel_mode: false, boost_woken: false };

    #[test]
    fn a_sibling_preempted_while_spinning_in_the_guest_is_a_yield_candidate_at_every_exit() {
        // kvm_vcpu_eligible_for_directed_yield toggles dy_eligible only for a vCPU in_spin_loop
        // (inside its own kvm_vcpu_on_spin); vCPU 0 was preempted by the host while it spun on
        // a guest lock, so each PLE exit of vCPU 1 may boost it.
        let mut k = Kit::new(1, &[2]);
        let mut s = sibling_preempted(&mut k, KVM_3_13);
        k.vcpus[0].spinning = true;
        assert!(k.with(|view| s.pause_exit(view, 1)), "first exit");
        assert!(k.with(|view| s.pause_exit(view, 1)), "second exit");
    }

    #[test]
    fn a_sibling_descheduled_by_its_own_directed_yield_is_a_candidate_every_other_time() {
        // vCPU 1 yields to vCPU 0 and is descheduled inside its kvm_vcpu_on_spin (in_spin_loop,
        // dy_eligible false). vCPU 0's PLE exits skip it once (toggling dy_eligible) and boost
        // it at the next look.
        let mut k = Kit::new(1, &[2]);
        let mut s = sibling_preempted(&mut k, KVM_3_13);
        assert!(k.with(|view| s.pause_exit(view, 1)), "vCPU 1 yields to vCPU 0");
        k.schedule(&mut s, 0, Reason::Yield);
        assert_eq!(k.running_on(0), Some(0), "the boosted vCPU 0 runs");
        assert!(k.vcpus[1].preempted && !k.vcpus[1].spinning, "vCPU 1 waits, descheduled by its yield");
        assert!(!k.with(|view| s.pause_exit(view, 0)), "skipped while dy_eligible is false");
        assert!(k.with(|view| s.pause_exit(view, 0)), "boosted at the next look");
        // Back on the pCPU it has left its spin loop: an ordinary preempted vCPU again.
        k.schedule(&mut s, 0, Reason::Yield);
        assert_eq!(k.running_on(1), Some(0), "vCPU 1 runs again");
        assert!(!s.in_spin_loop[1] && !s.dy_eligible[1], "out of kvm_vcpu_on_spin, dy_eligible cleared");
    }
}
