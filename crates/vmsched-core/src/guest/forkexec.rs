//! Fork and exec balancing: where the guest places a new process and where an exec'ing
//! process continues.
//!
//! Models (Linux 2.6.32, the guest kernel of seed 004 §7.1: "a custom built Linux 2.6.32
//! kernel"; the same logic through 3.x):
//! - fork: `sched_fork` (2.6.32; `wake_up_new_task` from 2.6.33) places the child with
//!   `select_task_rq(p, SD_BALANCE_FORK, 0)` before it is first enqueued (kernel/sched.c);
//! - exec: `do_execve` calls `sched_exec`, which asks `select_task_rq(current, SD_BALANCE_EXEC,
//!   0)` and, if that names another CPU, has the migration thread move the task there
//!   (`sched_migrate_task` → `__migrate_task`: dequeue, `set_task_cpu`, enqueue on the
//!   destination, `check_preempt_curr`, which sends a reschedule IPI to an idle remote CPU;
//!   kernel/sched.c);
//! - `select_task_rq_fair` for these flags walks the domains with the flag set and calls
//!   `find_idlest_group` then `find_idlest_cpu` (kernel/sched_fair.c): the least loaded
//!   group other than the local one is chosen only if `100 × this_load ≥ imbalance ×
//!   min_load`, imbalance = 100 + (imbalance_pct − 100)/2; within it the CPU with the least
//!   `weighted_cpuload`, ties to this CPU. `SD_MC_INIT`/`SD_CPU_INIT` (include/linux/topology.h,
//!   2.6.32) set `SD_BALANCE_FORK | SD_BALANCE_EXEC`, `imbalance_pct` 125 and `forkexec_idx`
//!   0, so the load is the instantaneous runqueue weight: with nice-0 tasks, the number of
//!   runnable tasks, the running one included. The forking parent counts on its own vCPU,
//!   the child does not yet; the exec'ing task counts on its vCPU.
//!
//! The guest's vCPUs form one flat domain with a group per vCPU (the VMM's virtual topology
//! gives the guest no shared caches to group them by), scanned from the next vCPU on.
//! A child whose program begins with an exec (`exec = true` on a `fork` op: a shell running a
//! command, make starting the compiler) is balanced twice, as in Linux: at fork and when it
//! first runs. A fork without exec (forkbench's children) is balanced at fork only.
//!
//! Leaves out: the migration thread's own context switch and the exec's work (the program's
//! ops model the child's run time); the group power scaling (`cpu_power`, equal here);
//! hierarchical domains (one level); `SD_PREFER_LOCAL` and the power-saving balance flags.

use crate::sim::state::*;
use crate::sim::World;

/// `imbalance_pct` of the multi-core and CPU domains (include/linux/topology.h `SD_MC_INIT`,
/// `SD_CPU_INIT`, Linux 2.6.32).
pub(crate) const SD_IMBALANCE_PCT: usize = 125;

impl World {
    /// Runnable threads on vCPU `u`, the running one included (`weighted_cpuload` with nice-0
    /// tasks, in units of one task's weight).
    pub(crate) fn vcpu_load(&self, u: VcpuId) -> usize {
        self.vcpus[u].runq.len() + self.vcpus[u].cur.is_some() as usize
    }

    /// `select_task_rq` with `SD_BALANCE_FORK` or `SD_BALANCE_EXEC` for thread `t` asked on
    /// vCPU `this` (`find_idlest_group`, `find_idlest_cpu`; kernel/sched_fair.c 2.6.32).
    pub(crate) fn find_idlest_vcpu(&self, t: ThreadId, this: VcpuId) -> VcpuId {
        let th = &self.threads[t];
        let vm = &self.vms[th.vm];
        let ok = |u: VcpuId| self.vcpus[u].online && th.allowed(self.vcpus[u].idx);
        let n = vm.vcpus.len();
        let start = self.vcpus[this].idx as usize;
        let mut idlest: Option<(usize, VcpuId)> = None;
        for i in 1..n {
            let u = vm.vcpus[(start + i) % n];
            if ok(u) && idlest.map_or(true, |(min, _)| self.vcpu_load(u) < min) {
                idlest = Some((self.vcpu_load(u), u));
            }
        }
        match idlest {
            None => this,
            Some((_, u)) if !ok(this) => u,
            Some((min, u)) => {
                let imbalance = 100 + (SD_IMBALANCE_PCT - 100) / 2;
                if 100 * self.vcpu_load(this) < imbalance * min {
                    this
                } else {
                    u
                }
            }
        }
    }

    /// `sched_exec` for thread `t`, running on its vCPU: migrate it to the idlest vCPU if the
    /// balance says so. Returns true if it left its vCPU (the caller stops stepping it).
    pub(crate) fn sched_exec(&mut self, t: ThreadId) -> bool {
        let v = self.threads[t].vcpu;
        let u = self.find_idlest_vcpu(t, v);
        if u == v || self.vcpus[v].cur != Some(t) {
            return false;
        }
        self.advance(v);
        self.vcpus[v].cur = None;
        self.threads[t].last_ran = Some(self.now());
        self.threads[t].act = Activity::Ready;
        self.threads[t].vcpu = u;
        self.enqueue_thread(t, u, Some(v), None);
        self.guest_pick(v);
        true
    }
}
