//! CFS bandwidth control for KVM VMs: a per-VM cgroup quota per period (`cpu.max`, cgroup v1
//! `cpu.cfs_quota_us`/`cpu.cfs_period_us`), the state `cfs.rs` keeps to throttle a capped VM.
//!
//! Models (Linux `kernel/sched/fair.c`, 5.4-6.5; reference/hypervisor-mechanisms.md §5.1, §7):
//! - the VM's cgroup has a global pool (`cfs_bandwidth::runtime`) refilled to the quota by the
//!   period timer (`sched_cfs_period_timer` → `do_sched_cfs_period_timer` →
//!   `__refill_cfs_bandwidth_runtime`; no burst, so unused runtime does not carry over);
//! - each pCPU's cfs_rq of the group runs on local runtime (`runtime_remaining`) charged as its
//!   vCPU threads run (`__account_cfs_rq_runtime` from `update_curr`); when it is used up the
//!   cfs_rq pulls up to `sched_cfs_bandwidth_slice_us` (5 ms) minus its debt from the pool
//!   (`assign_cfs_rq_runtime`); local slices do not expire (5.4, "Fix low cpu usage with high
//!   throttling by removing expiration of cpu-local slices");
//! - if the pool is empty the cfs_rq is throttled (`throttle_cfs_rq`): its vCPU threads leave
//!   the pCPU's runqueue (the running one is preempted) and threads waking onto it wait there
//!   unseen; the period timer pays each throttled cfs_rq's debt plus 1 ns, in the order they
//!   were throttled, while the pool lasts (`distribute_cfs_runtime`), and unthrottles those it
//!   paid (`unthrottle_cfs_rq`, their group entity is enqueued as a wake-up);
//! - a cfs_rq that empties returns its local runtime above `min_cfs_rq_runtime` (1 ms) to the
//!   pool (`return_cfs_rq_runtime`);
//! - setting a new quota refills the pool, zeroes every local runtime and unthrottles every
//!   cfs_rq (`tg_set_cfs_bandwidth`); a quota of "max" (cap 0) turns the control off.
//! - `vms[].cap_pct` (Xen's cap: percent of one pCPU, for the whole VM) maps to the whole-VM
//!   quota `cap_pct / 100 × period`, which is libvirt's `<cputune>` `global_period` /
//!   `global_quota` (`virsh schedinfo --set global_quota=...`), not the per-vCPU
//!   `period`/`quota`.
//!
//! Leaves out: the slack timer that hands returned runtime to throttled cfs_rqs 5 ms after a
//! return (`sched_cfs_slack_timer`; here they wait for the next period), the period timer
//! going idle when the group is idle, `cpu.max.burst`, and the hierarchy above the VM's group.
//! Where the kernel notices an exhausted cfs_rq at the next tick or update (up to one tick of
//! overrun), this model ends the vCPU's slice exactly when its local runtime runs out (as the
//! kernel does with `HRTICK`).

use crate::engine::{Ns, NS_PER_MS};
use crate::sim::state::{PcpuId, VcpuId, VmId};

/// `min_cfs_rq_runtime` (fair.c): local runtime a cfs_rq keeps when it returns the rest.
const MIN_CFS_RQ_RUNTIME_NS: i64 = NS_PER_MS as i64;

#[derive(Debug, Clone, Default)]
struct VmBandwidth {
    /// The cap the pool is set up for (0 = no quota).
    cap_pct: u32,
    /// `cfs_bandwidth::runtime`, ns.
    runtime_ns: i64,
    /// Per pCPU: the group's cfs_rq `runtime_remaining`, ns.
    local_ns: Vec<i64>,
    /// Per pCPU: throttled vCPU threads of the VM waiting on that pCPU's throttled cfs_rq.
    parked: Vec<Vec<VcpuId>>,
    /// pCPUs whose cfs_rq is throttled, in the order they were (`throttled_cfs_rq` list).
    throttled: Vec<PcpuId>,
    timer_armed: bool,
}

/// Per-VM bandwidth state. `cfs.rs` drives it from its own hooks.
#[derive(Debug, Clone)]
pub struct Bandwidth {
    pub period_ns: Ns,
    pub slice_ns: Ns,
    vms: Vec<VmBandwidth>,
    pub throttles: u64,
    pub unthrottles: u64,
    /// Whether any VM ever had a quota (the counters are reported only then).
    pub used: bool,
}

impl Bandwidth {
    pub fn new(period_ns: Ns, slice_ns: Ns) -> Self {
        Bandwidth { period_ns, slice_ns, vms: Vec::new(), throttles: 0, unthrottles: 0, used: false }
    }

    pub fn init(&mut self, n_vms: usize, n_pcpus: usize) {
        self.vms = vec![VmBandwidth { local_ns: vec![0; n_pcpus], parked: vec![Vec::new(); n_pcpus], ..Default::default() }; n_vms];
    }

    /// `cap_pct / 100 × period`, ns.
    pub fn quota_ns(&self, cap_pct: u32) -> i64 {
        (cap_pct as u128 * self.period_ns as u128 / 100) as i64
    }

    pub fn capped(&self, vm: VmId) -> bool {
        self.vms[vm].cap_pct > 0
    }

    /// Take up a (new) cap of `vm` (`tg_set_cfs_bandwidth`). Returns the vCPUs it unthrottled,
    /// with their pCPUs, and whether the period timer must be armed now.
    pub fn set_cap(&mut self, vm: VmId, cap_pct: u32) -> (Vec<(PcpuId, VcpuId)>, bool) {
        let quota = self.quota_ns(cap_pct);
        let b = &mut self.vms[vm];
        if b.cap_pct == cap_pct {
            return (Vec::new(), false);
        }
        b.cap_pct = cap_pct;
        b.runtime_ns = quota;
        b.local_ns.iter_mut().for_each(|l| *l = 0);
        let mut freed = Vec::new();
        for p in std::mem::take(&mut b.throttled) {
            freed.extend(std::mem::take(&mut b.parked[p]).into_iter().map(|v| (p, v)));
            self.unthrottles += 1;
        }
        let arm = cap_pct > 0 && !b.timer_armed;
        b.timer_armed |= arm;
        self.used |= cap_pct > 0;
        (freed, arm)
    }

    /// Charge `ran_ns` of run time on pCPU `p` to the VM's cfs_rq there.
    pub fn charge(&mut self, vm: VmId, p: PcpuId, ran_ns: Ns) {
        if self.capped(vm) {
            self.vms[vm].local_ns[p] -= ran_ns as i64;
        }
    }

    /// Whether the VM's cfs_rq on `p` may run, pulling a slice from the pool if its local
    /// runtime is used up (`assign_cfs_rq_runtime`).
    pub fn has_runtime(&mut self, vm: VmId, p: PcpuId) -> bool {
        if !self.capped(vm) {
            return true;
        }
        let slice = self.slice_ns as i64;
        let b = &mut self.vms[vm];
        if b.local_ns[p] > 0 {
            return true;
        }
        let amount = b.runtime_ns.min(slice - b.local_ns[p]).max(0);
        b.runtime_ns -= amount;
        b.local_ns[p] += amount;
        b.local_ns[p] > 0
    }

    /// Local runtime left on `p` (ns), if the VM is capped.
    pub fn local_left_ns(&self, vm: VmId, p: PcpuId) -> Option<Ns> {
        self.capped(vm).then(|| self.vms[vm].local_ns[p].max(0) as Ns)
    }

    pub fn is_throttled(&self, vm: VmId, p: PcpuId) -> bool {
        !self.vms[vm].parked[p].is_empty() || self.vms[vm].throttled.contains(&p)
    }

    /// Throttle the VM's cfs_rq on `p` (if it is not already) and park `v` on it.
    pub fn park(&mut self, vm: VmId, p: PcpuId, v: VcpuId) {
        let b = &mut self.vms[vm];
        if !b.throttled.contains(&p) {
            b.throttled.push(p);
            self.throttles += 1;
        }
        b.parked[p].push(v);
    }

    /// Drop `v` from the throttled cfs_rq it waits on (it went to sleep or offline). Returns
    /// whether it was parked.
    pub fn unpark(&mut self, vm: VmId, v: VcpuId) -> bool {
        let b = &mut self.vms[vm];
        for q in b.parked.iter_mut() {
            if let Some(i) = q.iter().position(|&x| x == v) {
                q.remove(i);
                return true;
            }
        }
        false
    }

    pub fn is_parked(&self, vm: VmId, v: VcpuId) -> bool {
        self.vms[vm].parked.iter().any(|q| q.contains(&v))
    }

    /// The VM's cfs_rq on `p` emptied: return local runtime above `min_cfs_rq_runtime`.
    pub fn cfs_rq_emptied(&mut self, vm: VmId, p: PcpuId) {
        if !self.capped(vm) {
            return;
        }
        let b = &mut self.vms[vm];
        let slack = b.local_ns[p] - MIN_CFS_RQ_RUNTIME_NS;
        if slack > 0 && !b.throttled.contains(&p) {
            b.runtime_ns += slack;
            b.local_ns[p] -= slack;
        }
    }

    /// The VM's period timer fired: refill and distribute. Returns the vCPUs unthrottled (with
    /// their pCPUs) and whether to re-arm the timer.
    pub fn period_timer(&mut self, vm: VmId) -> (Vec<(PcpuId, VcpuId)>, bool) {
        let quota = self.quota_ns(self.vms[vm].cap_pct);
        let b = &mut self.vms[vm];
        if b.cap_pct == 0 {
            b.timer_armed = false;
            return (Vec::new(), false);
        }
        b.runtime_ns = quota;
        let mut freed = Vec::new();
        let mut still = Vec::new();
        for p in std::mem::take(&mut b.throttled) {
            let amount = b.runtime_ns.min(1 - b.local_ns[p]).max(0);
            b.runtime_ns -= amount;
            b.local_ns[p] += amount;
            if b.local_ns[p] > 0 {
                freed.extend(std::mem::take(&mut b.parked[p]).into_iter().map(|v| (p, v)));
                self.unthrottles += 1;
            } else {
                still.push(p);
            }
        }
        b.throttled = still;
        (freed, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = NS_PER_MS;

    #[test]
    fn cap_maps_to_a_whole_vm_quota_per_period() {
        let b = Bandwidth::new(100 * MS, 5 * MS);
        assert_eq!(b.quota_ns(50), 50 * MS as i64);
        assert_eq!(b.quota_ns(250), 250 * MS as i64, "a cap above 100 spans several pCPUs");
    }

    #[test]
    fn local_runtime_comes_in_slices_until_the_pool_is_dry() {
        let mut b = Bandwidth::new(100 * MS, 5 * MS);
        b.init(1, 2);
        b.set_cap(0, 12);
        // Quota 12 ms: two 5 ms slices, then the 2 ms left, then nothing.
        assert!(b.has_runtime(0, 0));
        assert_eq!(b.local_left_ns(0, 0), Some(5 * MS));
        b.charge(0, 0, 5 * MS);
        assert!(b.has_runtime(0, 0));
        b.charge(0, 0, 6 * MS);
        assert!(b.has_runtime(0, 0), "the last 2 ms pay the 1 ms debt and leave 1 ms");
        assert_eq!(b.local_left_ns(0, 0), Some(1 * MS));
        b.charge(0, 0, 1 * MS);
        assert!(!b.has_runtime(0, 0));
        assert!(!b.has_runtime(0, 1), "the pool is shared by every pCPU's cfs_rq");
    }
}
