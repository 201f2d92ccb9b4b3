//! Linux 2.6.32's wake-up placement and new-idle pull rules: `guest.wake_placement` =
//! `affine` or `affine_idle_sibling` (the default `prev_or_idle` is `guest::kernel`'s
//! `select_vcpu`). Seed 004's guest is "a custom built Linux 2.6.32 kernel" (§7.1), run under
//! VMkit and natively.
//!
//! Models (Linux 2.6.32, read in BuzzBumbleBee/gtab-2632 kernel/sched_fair.c and
//! kernel/sched.c, a 2.6.32.11 tree; pershoot/gtab-2632 kernel/sched_features.h;
//! mikuhatsune001/linux2.6.32 include/linux/topology.h):
//! - `try_to_wake_up` asks `select_task_rq(p, SD_BALANCE_WAKE, wake_flags)`. In
//!   `select_task_rq_fair` the CPU running the wake-up (`cpu`, here the waker's vCPU) is an
//!   affine candidate if the task may run there (`AFFINE_WAKEUPS`, on in sched_features.h) and
//!   a domain with `SD_WAKE_AFFINE` spans it and the task's previous CPU (`prev_cpu`). 2.6.32's
//!   multi-core and package domains (`SD_MC_INIT`, `SD_CPU_INIT`) both set `SD_WAKE_AFFINE` and
//!   neither `SD_BALANCE_WAKE` nor `SD_PREFER_LOCAL`: a wake-up is never balanced over the
//!   domain (`find_idlest_group`), and without an affine candidate the task stays on
//!   `prev_cpu`. With one, the target is `cpu` if `cpu == prev_cpu` or `wake_affine` agrees,
//!   else `prev_cpu`, and the result is `select_idle_sibling(p, target)`.
//! - `wake_affine`, with `wake_idx` 0 (both domains): loads are the instantaneous
//!   `weighted_cpuload`, with nice-0 tasks one unit per runnable task, the running one
//!   included, the woken one (on no runqueue yet) not. `this_load` is the waker CPU's load,
//!   less the waker's own for a sync wake-up (`WF_SYNC`); `load` is `prev_cpu`'s. Affine if
//!   `this_load` is 0 or `100 × (this_load + 1) ≤ imbalance × load`, imbalance = 100 +
//!   (imbalance_pct − 100)/2 = 112 (`imbalance_pct` 125 in both domains), or if `this_load ≤
//!   load` and `this_load + load ≤` the waker CPU's load per task (`cpu_avg_load_per_task`: one
//!   task's weight if it has a task). Every task is in the root group (`effective_load` is the
//!   identity there).
//! - Sync wake-ups: a socket or pipe wakes its peer with `wake_up_interruptible_sync*`
//!   (net/core/sock.c `sock_def_readable` and `sock_def_write_space`, net/unix/af_unix.c
//!   `unix_write_space`, 2.6.31-2.6.34's `sk->sk_sleep` versions), and an exiting child wakes its
//!   parent in wait4 with `__wake_up_sync_key` (kernel/exit.c `__wake_up_parent`):
//!   `SYNC_WAKEUPS` (on) keeps the hint. So the model's queue wake-ups (`put`, `get`) and
//!   child-exit wake-ups are sync; mutex, futex, timer and device wake-ups are not. The exiting
//!   child wakes its parent before it leaves its vCPU (`exit_notify` precedes the last
//!   `schedule()`), so the parent lands on the child's vCPU when that runs nothing else.
//! - `select_idle_sibling(p, target)`: the target if it is `cpu` and idle, `prev_cpu` if that
//!   is the target and idle; else it walks the target's domains while they have
//!   `SD_SHARE_PKG_RESOURCES` and takes the first idle CPU of the span that the task may use
//!   (lowest number first), else the target. `SD_MC_INIT` has the flag, `SD_CPU_INIT` does
//!   not. A guest whose vCPUs are separate packages sharing no cache (VMkit's emulated AMD K7,
//!   seed 004 §6.2.1, whose CPUID names neither cores nor a shared cache, so the multi-core
//!   level spans one CPU and is dropped) has only the package level and never searches:
//!   `affine`. A guest whose vCPUs are cores of one socket sharing an L3 (native Linux on two
//!   cores of the seed's Opteron 8380, `maxcpus`, §7.1) searches the whole VM:
//!   `affine_idle_sibling`. `idle_cpu` is "running the idle task": a vCPU with no current
//!   thread, even if a woken thread already waits on its runqueue.
//! - New-idle balancing (`idle_balance`, called by `schedule` when the runqueue is empty):
//!   it stamps `idle_stamp` and pulls nothing while the CPU's `avg_idle` is under
//!   `sysctl_sched_migration_cost` (0.5 ms, not scaled by the CPU count, kernel/sched_fair.c).
//!   `try_to_wake_up` onto a CPU with a stamp folds the idle time into `avg_idle` (an eighth's
//!   weight, `update_avg`; capped at twice the migration cost, its initial value) and clears the
//!   stamp; a successful pull clears it too. A pull skips a cache-hot task (`can_migrate_task` →
//!   `task_hot`: it stopped running less than the migration cost ago; a task that never ran is
//!   cold, its `exec_start` being 0).
//! - Wake-up preemption on the waker's own vCPU, which affine wake-ups make the usual target:
//!   `check_preempt_wakeup` runs for the local CPU too and `resched_task` only sets
//!   need-resched there; modelled in `guest::resched` (`check_preempt_wakeup`) for these two
//!   placements only (`WAKEUP_SYNC` is off: a sync wake-up preempts by the same granularity
//!   rule as any other).
//!
//! Leaves out:
//! - `SYNC_LESS` (on): a sync hint is dropped when the waker's or the wakee's `avg_overlap` (how
//!   long it ran on after its last wake-up of another task before it slept) exceeds the
//!   migration cost. The model's sync wakers (a socket peer after a message, a child at exit)
//!   overlap by a message's work at most, microseconds.
//! - A pull of a hot task after failed balances (`nr_balance_failed > cache_nice_tries`, 1:
//!   the counter grows with failed periodic balances, which the model's `guest_balance` does not
//!   count; it moves hot threads too) and active balancing of a running task.
//! - `CACHE_HOT_BUDDY`: a buddy is hot only if the pulling CPU has tasks, never at new-idle.
//! - How much a pull moves (one thread, as the model's new-idle pull always did; 2.6.32 moves
//!   up to the computed imbalance) and the group power and power-saving flags.
//! - The spurious idle passes of a vCPU with nothing to run (after an interrupt) do not restamp
//!   `idle_stamp`: the stamp marks where the vCPU's idle period began and is cleared when it
//!   switches a thread in.

use crate::engine::Ns;
use crate::guest::forkexec::SD_IMBALANCE_PCT;
use crate::sim::state::*;
use crate::sim::World;

/// `sysctl_sched_migration_cost`: 0.5 ms (kernel/sched_fair.c, Linux 2.6.32; not scaled with
/// the number of CPUs, unlike the latency and granularities).
pub const MIGRATION_COST_NS: Ns = 500_000;

/// `rq->avg_idle` at boot and its cap: twice the migration cost (kernel/sched.c `sched_init`,
/// `try_to_wake_up`).
pub const INITIAL_AVG_IDLE_NS: Ns = 2 * MIGRATION_COST_NS;

/// `wake_affine`'s imbalance: 100 + (imbalance_pct − 100)/2 (kernel/sched_fair.c).
const WAKE_IMBALANCE_PCT: usize = 100 + (SD_IMBALANCE_PCT - 100) / 2;

/// `wake_affine` on loads in units of one nice-0 task: `this_load` is the waker CPU's load
/// (less the waker for a sync wake-up), `load` the previous CPU's, `waker_cpu_has_tasks`
/// whether the waker's CPU has any runnable task (its load per task is then one unit).
pub fn wake_affine(this_load: usize, load: usize, waker_cpu_has_tasks: bool) -> bool {
    let balanced = this_load == 0 || 100 * (this_load + 1) <= WAKE_IMBALANCE_PCT * load;
    let tl_per_task = waker_cpu_has_tasks as usize;
    balanced || (this_load <= load && this_load + load <= tl_per_task)
}

impl World {
    /// `select_task_rq_fair(p, SD_BALANCE_WAKE, wake_flags)` of Linux 2.6.32 for thread `t`,
    /// woken by code on vCPU `waker` (None: a timer or device event, taken to run on the
    /// thread's previous vCPU). `sync_from`: the thread doing a sync wake-up; its weight comes
    /// off its vCPU's load if it still runs there. `idle_sibling`: the vCPUs share a cache
    /// domain (`SD_SHARE_PKG_RESOURCES`), so an idle one is searched for.
    pub(crate) fn select_vcpu_2632(&self, t: ThreadId, waker: Option<VcpuId>, sync_from: Option<ThreadId>, idle_sibling: bool) -> VcpuId {
        let th = &self.threads[t];
        let vm = &self.vms[th.vm];
        let ok = |u: VcpuId| self.vcpus[u].online && th.allowed(self.vcpus[u].idx);
        let prev = th.vcpu;
        let cpu = waker.unwrap_or(prev);
        // An affine domain exists if the task may run on `cpu` and `prev` is in the domain
        // (online); otherwise the task stays on `prev`.
        let new = if ok(cpu) && self.vcpus[prev].online {
            let target = if cpu == prev || self.wake_affine_2632(cpu, prev, sync_from) { cpu } else { prev };
            self.select_idle_sibling_2632(t, cpu, target, idle_sibling)
        } else {
            prev
        };
        if ok(new) {
            return new;
        }
        // `select_fallback_rq`: an allowed online CPU.
        vm.vcpus.iter().copied().find(|&u| ok(u)).unwrap_or(prev)
    }

    /// `wake_affine` for a wake-up run on vCPU `cpu` of a thread last on `prev`.
    fn wake_affine_2632(&self, cpu: VcpuId, prev: VcpuId, sync_from: Option<ThreadId>) -> bool {
        let here = self.vcpu_load(cpu);
        let waker_runs_here = sync_from.map_or(false, |w| self.vcpus[cpu].cur == Some(w));
        let this_load = here - waker_runs_here as usize;
        wake_affine(this_load, self.vcpu_load(prev), here > 0)
    }

    /// `select_idle_sibling(p, target)` for thread `t` woken on vCPU `cpu`.
    fn select_idle_sibling_2632(&self, t: ThreadId, cpu: VcpuId, target: VcpuId, search: bool) -> VcpuId {
        let th = &self.threads[t];
        let idle = |u: VcpuId| self.vcpus[u].online && self.vcpus[u].cur.is_none();
        let prev = th.vcpu;
        if target == cpu && idle(cpu) {
            return cpu;
        }
        if target == prev && idle(prev) {
            return prev;
        }
        if search {
            // The shared-cache domain spans the VM: its first idle vCPU the thread may use.
            if let Some(u) = self.vms[th.vm].vcpus.iter().copied().find(|&u| idle(u) && th.allowed(self.vcpus[u].idx)) {
                return u;
            }
        }
        target
    }

    /// `try_to_wake_up`'s update of `avg_idle` on vCPU `u`, which a thread was just woken onto.
    pub(crate) fn note_wakeup_onto(&mut self, u: VcpuId) {
        let now = self.now();
        let vc = &mut self.vcpus[u];
        if let Some(stamp) = vc.idle_stamp.take() {
            let delta = now.saturating_sub(stamp);
            vc.avg_idle_ns = if delta > INITIAL_AVG_IDLE_NS { INITIAL_AVG_IDLE_NS } else { update_avg(vc.avg_idle_ns, delta) };
        }
    }

    /// `idle_balance`'s entry on vCPU `v`, whose runqueue is empty: stamp the start of its idle
    /// period (unless one is open) and say whether it may pull (its average idle period is at
    /// least the migration cost).
    pub(crate) fn idle_balance_allowed(&mut self, v: VcpuId) -> bool {
        let now = self.now();
        let vc = &mut self.vcpus[v];
        vc.idle_stamp.get_or_insert(now);
        vc.avg_idle_ns >= MIGRATION_COST_NS
    }

    /// `task_hot`: thread `t` stopped running less than the migration cost ago.
    pub(crate) fn task_hot(&self, t: ThreadId) -> bool {
        self.threads[t].last_ran.map_or(false, |at| self.now().saturating_sub(at) < MIGRATION_COST_NS)
    }
}

/// `update_avg`: avg += (sample − avg) / 8, the division an arithmetic shift (kernel/sched.c).
fn update_avg(avg: Ns, sample: Ns) -> Ns {
    let diff = sample as i64 - avg as i64;
    (avg as i64 + (diff >> 3)) as Ns
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scenario::from_toml_str;
    use crate::sim::{Overrides, Simulation};

    /// A 2-vCPU VM (`placement`) with `threads` threads that only compute, not yet run: the
    /// tests set their vCPUs and the runqueues by hand, then ask where a wake-up goes.
    pub(crate) fn vm(placement: &str, threads: u32) -> Simulation {
        let text = format!(
            r#"
[host]
sockets = 1
cores_per_socket = 2
[hypervisor]
scheduler = "credit"
[[vms]]
vcpus = 2
guest = {{ wake_placement = "{placement}" }}
[[vms.workloads]]
kind = "custom"
groups = [ {{ threads = {threads}, program = [ {{ op = "compute", us = 10.0 }} ] }} ]
"#
        );
        Simulation::new(&from_toml_str(&text).expect("parses"), &Overrides::default()).expect("builds")
    }

    /// Thread `t` runs on vCPU `v`, threads `queued` wait on its runqueue.
    fn put(w: &mut World, v: VcpuId, t: Option<ThreadId>, queued: &[ThreadId]) {
        w.vcpus[v].cur = t;
        w.vcpus[v].runq = queued.iter().copied().collect();
        for &q in t.iter().chain(queued) {
            w.threads[q].vcpu = v;
        }
    }

    #[test]
    fn wake_affine_follows_the_2632_load_test() {
        // The waker alone on its CPU (sync): always affine.
        assert!(wake_affine(0, 0, true));
        assert!(wake_affine(0, 5, true));
        // One other task beside the waker: affine only if the previous CPU carries as much.
        assert!(!wake_affine(1, 0, true));
        assert!(!wake_affine(1, 1, true));
        assert!(wake_affine(1, 2, true));
        // 100 × (this + 1) ≤ 112 × load: from nine tasks on, one more on the waker's side passes.
        assert!(wake_affine(9, 9, true) && !wake_affine(10, 9, true) && !wake_affine(8, 8, true));
    }

    #[test]
    fn a_sync_affine_wake_lands_on_the_wakers_vcpu() {
        let mut sim = vm("affine", 3);
        let w = sim.world();
        let (v0, v1) = (0, 1);
        // Waker 0 alone on vCPU 0; the sleeper 1 last ran on vCPU 1, which runs thread 2.
        put(w, v0, Some(0), &[]);
        put(w, v1, Some(2), &[]);
        w.threads[1].vcpu = v1;
        assert_eq!(w.select_vcpu_2632(1, Some(v0), Some(0), false), v0, "sync: the waker's weight comes off");
        // Not sync: vCPU 0 carries the waker (1) against vCPU 1's one task: 100 × 2 > 112 × 1.
        assert_eq!(w.select_vcpu_2632(1, Some(v0), None, false), v1);
    }

    #[test]
    fn an_idle_vcpu_is_not_chosen_under_the_affine_placement() {
        let mut sim = vm("affine", 4);
        let w = sim.world();
        // The sleeper 1 last ran on vCPU 0, where the waker 0 runs with thread 2 queued; vCPU 1
        // is idle. wake_affine: this_load 1 (sync), load 1 (prev = this CPU): cpu == prev, so
        // the target is vCPU 0 and, with no shared cache, no idle vCPU is searched for.
        put(w, 0, Some(0), &[2]);
        put(w, 1, None, &[]);
        w.threads[1].vcpu = 0;
        assert_eq!(w.select_vcpu_2632(1, Some(0), Some(0), false), 0);
        // With a shared cache the idle vCPU 1 is found.
        assert_eq!(w.select_vcpu_2632(1, Some(0), Some(0), true), 1);
        // The default placement takes the idle vCPU too.
        assert_eq!(w.select_vcpu_prev_or_idle(1), 1);
    }

    #[test]
    fn an_idle_previous_vcpu_keeps_its_thread_when_the_wakers_is_busier() {
        let mut sim = vm("affine", 4);
        let w = sim.world();
        // Waker 0 on vCPU 0 with two queued; the sleeper 3 last ran on idle vCPU 1: not affine
        // (this_load 2 > 0 = load), so the target is its idle previous vCPU.
        put(w, 0, Some(0), &[1, 2]);
        put(w, 1, None, &[]);
        w.threads[3].vcpu = 1;
        assert_eq!(w.select_vcpu_2632(3, Some(0), Some(0), false), 1);
    }

    #[test]
    fn a_thread_that_may_not_run_on_the_wakers_vcpu_stays_on_its_previous_one() {
        let mut sim = vm("affine_idle_sibling", 3);
        let w = sim.world();
        put(w, 0, Some(0), &[]);
        put(w, 1, Some(2), &[]);
        w.threads[1].vcpu = 1;
        w.threads[1].affinity = Some(vec![false, true]);
        // No affine domain: no idle search either, even with a shared cache.
        assert_eq!(w.select_vcpu_2632(1, Some(0), Some(0), true), 1);
    }

    #[test]
    fn a_cache_hot_thread_is_not_pulled_by_a_newly_idle_vcpu() {
        let mut sim = vm("affine", 3);
        let w = sim.world();
        w.q.advance_to(10 * MIGRATION_COST_NS);
        let now = w.now();
        // vCPU 0 runs thread 0 with thread 1 queued, which stopped running a moment ago.
        put(w, 0, Some(0), &[1]);
        put(w, 1, None, &[]);
        w.threads[1].last_ran = Some(now - MIGRATION_COST_NS / 2);
        assert!(w.task_hot(1));
        assert_eq!(w.newidle_pull(1), None, "hot: stays");
        w.threads[1].last_ran = Some(now - MIGRATION_COST_NS);
        assert!(!w.task_hot(1));
        assert_eq!(w.newidle_pull(1), Some(1), "cold: pulled");
        assert_eq!(w.vcpus[1].idle_stamp, None, "a pull ends the idle period");
    }

    #[test]
    fn a_vcpu_whose_idle_periods_are_short_does_not_pull() {
        let mut sim = vm("affine", 3);
        let w = sim.world();
        w.q.advance_to(10 * MIGRATION_COST_NS);
        put(w, 0, Some(0), &[1]);
        put(w, 1, None, &[]);
        // Short idle periods: each 0.1 ms before a wake-up arrives, folded in at 1/8.
        for _ in 0..20 {
            assert!(w.idle_balance_allowed(1) || w.vcpus[1].avg_idle_ns < MIGRATION_COST_NS);
            let at = w.now() + 100_000;
            w.q.advance_to(at);
            w.note_wakeup_onto(1);
        }
        assert!(w.vcpus[1].avg_idle_ns < MIGRATION_COST_NS, "avg_idle {}", w.vcpus[1].avg_idle_ns);
        assert_eq!(w.newidle_pull(1), None, "the cold queued thread stays: no new-idle balance");
        // A long idle period resets the average to its cap.
        let at = w.now() + 5 * MIGRATION_COST_NS;
        w.q.advance_to(at);
        w.note_wakeup_onto(1);
        assert_eq!(w.vcpus[1].avg_idle_ns, INITIAL_AVG_IDLE_NS);
    }

    #[test]
    fn update_avg_moves_an_eighth_of_the_way() {
        assert_eq!(update_avg(800, 0), 700);
        assert_eq!(update_avg(0, 800), 100);
        assert_eq!(update_avg(1_000_000, 1_000_000), 1_000_000);
    }
}
