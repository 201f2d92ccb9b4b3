//! Strict gang scheduling (co-scheduling) of each VM's vCPUs: a VM runs only as a whole.
//!
//! Models (seed 004 §"gang scheduling" and ESX 2.x strict co-scheduling as described there and
//! in reference/related-work.md §3.4; Ousterhout-style time slots as in the vendor
//! descriptions cited in reference/hypervisor-mechanisms.md §6):
//! - the schedulable entity is a *gang*: the runnable (or running) vCPUs of one VM. A gang is
//!   co-started only when there are enough free pCPUs for **all** of them, each on its own
//!   pCPU, and all of them are co-stopped together when the gang's slice (`slice_ms`) ends:
//!   the slice timer tickles every pCPU of the gang, and every pCPU re-plans at the same
//!   instant (`SchedView::tickle`, `SchedView::arm`);
//! - while a gang runs, its pCPUs are reserved for it. A member that halts (HLT) or goes
//!   offline leaves its pCPU idle until the slice ends (it resumes there if it wakes); no other
//!   VM may use that pCPU. This is the fragmentation of strict co-scheduling, measured as
//!   `pcpus[].idle_while_waiting_ns` when another VM is waiting;
//! - a gang whose members have all halted ends its slice early (an empty slot row serves
//!   nobody);
//! - a member that was halted when its gang was co-started and wakes during the slice joins
//!   the gang on a free pCPU if there is one (it runs simultaneously with its siblings, which is
//!   the point of co-scheduling), else it waits for its VM's next co-start;
//! - which gang next: proportional share by VM weight. A gang is charged
//!   reserved-pCPUs x time / weight (idle reserved pCPUs included: it holds them); waiting
//!   gangs are considered in increasing charge and co-started in that order **while they fit**,
//!   with no backfilling past the first gang that does not fit (so a wide VM is never starved by
//!   narrower ones slipping into the holes; the holes stay idle). A VM that becomes runnable
//!   after having nothing runnable starts at the smallest charge of the competing VMs (no
//!   banked credit for sleeping);
//! - placement: each member keeps the pCPU it last ran on when it is free, else the first free
//!   pCPU on the same socket, else any free pCPU; members with the tightest hard affinity are
//!   placed first (a greedy matching).
//!
//! Leaves out: ESX 2.x's skew accounting as the trigger of the co-stop (a strict gang never
//! builds skew, the slice end is the co-stop), backfilling, gang packing into an Ousterhout
//! matrix ahead of time (gangs are placed when they are co-started), and the cost of the
//! cross-pCPU rendezvous itself beyond one physical IPI per pCPU. A VM that could never fit
//! (more runnable vCPUs than pCPUs, or affinities that cannot be matched) is co-started with
//! the members that can be placed when the whole host is free, so that it is not blocked
//! forever. PLE exits do not yield: the pCPU is reserved for the spinning vCPU anyway.

use super::{Decision, HvScheduler, Params, Reason, SchedView};
use crate::engine::{Ns, NS_PER_MS};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId, VmId};

pub struct Gang {
    slice_ns: Ns,
    /// The VM whose gang holds each pCPU for the current slice.
    owner: Vec<Option<VmId>>,
    /// The member assigned to each pCPU.
    slot: Vec<Option<VcpuId>>,
    slot_of: Vec<Option<PcpuId>>,
    running: Vec<bool>,
    slice_end: Vec<Ns>,
    /// Reserved pCPU-ns / weight so far.
    charge: Vec<f64>,
    held: Vec<u32>,
    charged_until: Vec<Ns>,
    co_starts: u64,
    joins: u64,
    early_ends: u64,
}

fn runnable(view: &SchedView, v: VcpuId) -> bool {
    matches!(view.vcpus[v].run, RunState::Runnable | RunState::Running(_))
}

impl Gang {
    pub fn from_params(p: &mut Params) -> Result<Self, ScenarioError> {
        // Xen credit1's 30 ms time slice, which the Xen co-scheduling prototypes kept
        // (reference/related-work.md §3.6, Weng'09; hypervisor-mechanisms.md §1).
        let slice_ms = p.f64("slice_ms", 30.0, 0.1, 1000.0)?;
        Ok(Gang {
            slice_ns: (slice_ms * NS_PER_MS as f64) as Ns,
            owner: Vec::new(),
            slot: Vec::new(),
            slot_of: Vec::new(),
            running: Vec::new(),
            slice_end: Vec::new(),
            charge: Vec::new(),
            held: Vec::new(),
            charged_until: Vec::new(),
            co_starts: 0,
            joins: 0,
            early_ends: 0,
        })
    }

    /// Whether VM `vm`'s gang is running (tests).
    pub fn is_running(&self, vm: VmId) -> bool {
        self.running[vm]
    }

    /// The pCPU reserved for vCPU `v` in its gang's current slice (tests).
    pub fn slot_of(&self, v: VcpuId) -> Option<PcpuId> {
        self.slot_of[v]
    }

    fn account(&mut self, view: &SchedView, vm: VmId) {
        let dt = view.now.saturating_sub(self.charged_until[vm]) as f64;
        self.charge[vm] += self.held[vm] as f64 * dt / view.vms[vm].weight.max(1) as f64;
        self.charged_until[vm] = view.now;
    }

    fn assign(&mut self, vm: VmId, v: VcpuId, p: PcpuId) {
        self.owner[p] = Some(vm);
        self.slot[p] = Some(v);
        self.slot_of[v] = Some(p);
        self.held[vm] += 1;
    }

    /// A free pCPU for `v`: where it runs or last ran, else the same socket, else any.
    fn free_pcpu(&self, view: &SchedView, v: VcpuId, free: &[bool]) -> Option<PcpuId> {
        let n = view.n_pcpus();
        let home = match view.vcpus[v].run {
            RunState::Running(q) => q,
            _ => view.vcpus[v].last_pcpu,
        };
        let ok = |p: PcpuId| free[p] && view.allowed(v, p);
        if ok(home) {
            return Some(home);
        }
        let sock = view.topo.socket_of(home);
        let scan = || (1..n).map(move |i| (home + i) % n);
        scan().find(|&p| ok(p) && view.topo.socket_of(p) == sock).or_else(|| scan().find(|&p| ok(p)))
    }

    /// Place every runnable member of `vm` on a distinct free pCPU. Returns the placement and
    /// whether it is complete.
    fn place(&self, view: &SchedView, vm: VmId) -> (Vec<(VcpuId, PcpuId)>, bool) {
        let n = view.n_pcpus();
        let mut members: Vec<VcpuId> = view.vms[vm].vcpus.iter().copied().filter(|&v| runnable(view, v)).collect();
        members.sort_by_key(|&v| (view.affinity[v].as_ref().map_or(n, |a| a.len()), v));
        let mut free: Vec<bool> = self.owner.iter().map(Option::is_none).collect();
        let mut out = Vec::new();
        for &v in &members {
            if let Some(p) = self.free_pcpu(view, v, &free) {
                free[p] = false;
                out.push((v, p));
            }
        }
        let complete = out.len() == members.len();
        (out, complete)
    }

    fn co_start(&mut self, view: &mut SchedView, vm: VmId, placement: &[(VcpuId, PcpuId)]) {
        self.account(view, vm);
        for &(v, p) in placement {
            self.assign(vm, v, p);
        }
        self.running[vm] = true;
        self.slice_end[vm] = view.now + self.slice_ns;
        self.co_starts += 1;
        view.arm(vm as u64, self.slice_end[vm]);
    }

    fn co_stop(&mut self, view: &SchedView, vm: VmId) {
        self.account(view, vm);
        for &v in &view.vms[vm].vcpus {
            if let Some(p) = self.slot_of[v].take() {
                self.owner[p] = None;
                self.slot[p] = None;
            }
        }
        self.held[vm] = 0;
        self.running[vm] = false;
    }

    /// Co-start waiting gangs in increasing charge while they fit, then tickle every pCPU
    /// whose assignment differs from what it runs (except `skip`, which is scheduling now).
    fn replan(&mut self, view: &mut SchedView, skip: Option<PcpuId>) {
        let mut waiting: Vec<VmId> = (0..view.vms.len()).filter(|&vm| !self.running[vm] && view.vms[vm].vcpus.iter().any(|&v| runnable(view, v))).collect();
        waiting.sort_by(|&a, &b| self.charge[a].total_cmp(&self.charge[b]).then(a.cmp(&b)));
        for vm in waiting {
            let (placement, complete) = self.place(view, vm);
            let host_free = self.owner.iter().all(Option::is_none);
            if complete || (host_free && !placement.is_empty()) {
                self.co_start(view, vm, &placement);
            } else {
                break;
            }
        }
        for p in 0..view.n_pcpus() {
            if Some(p) == skip {
                continue;
            }
            let want = self.slot[p].filter(|&v| runnable(view, v));
            if view.pcpu_cur[p] != want && (want.is_some() || view.pcpu_cur[p].is_some()) {
                view.tickle(p);
            }
        }
    }

    /// Whether any member holding a pCPU, other than `except`, can run.
    fn gang_alive(&self, view: &SchedView, vm: VmId, except: Option<VcpuId>) -> bool {
        view.vms[vm].vcpus.iter().any(|&v| Some(v) != except && self.slot_of[v].is_some() && runnable(view, v))
    }

    fn end_early_if_empty(&mut self, view: &mut SchedView, vm: VmId, except: Option<VcpuId>, skip: Option<PcpuId>) {
        if self.running[vm] && !self.gang_alive(view, vm, except) {
            self.early_ends += 1;
            self.co_stop(view, vm);
            self.replan(view, skip);
        }
    }
}

impl HvScheduler for Gang {
    fn name(&self) -> &'static str {
        "gang"
    }

    fn init(&mut self, view: &mut SchedView) {
        let n = view.n_pcpus();
        let nv = view.vcpus.len();
        let nvm = view.vms.len();
        self.owner = vec![None; n];
        self.slot = vec![None; n];
        self.slot_of = vec![None; nv];
        self.running = vec![false; nvm];
        self.slice_end = vec![0; nvm];
        self.charge = vec![0.0; nvm];
        self.held = vec![0; nvm];
        self.charged_until = vec![0; nvm];
    }

    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        let vm = view.vcpus[v].vm;
        if self.running[vm] {
            if let Some(p) = self.slot_of[v] {
                view.tickle(p);
                return;
            }
            let free: Vec<bool> = self.owner.iter().map(Option::is_none).collect();
            if let Some(p) = self.free_pcpu(view, v, &free) {
                self.account(view, vm);
                self.assign(vm, v, p);
                self.joins += 1;
                view.tickle(p);
            }
            return;
        }
        let newly = !view.vms[vm].vcpus.iter().any(|&u| u != v && runnable(view, u));
        if newly {
            let floor = (0..view.vms.len())
                .filter(|&o| o != vm && (self.running[o] || view.vms[o].vcpus.iter().any(|&u| runnable(view, u))))
                .map(|o| self.charge[o])
                .fold(f64::INFINITY, f64::min);
            if floor.is_finite() && self.charge[vm] < floor {
                self.charge[vm] = floor;
            }
            self.charged_until[vm] = view.now;
        }
        self.replan(view, None);
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        let vm = view.vcpus[v].vm;
        self.end_early_if_empty(view, vm, Some(v), None);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, _why: Reason) -> Decision {
        if let Some(x) = prev {
            if !prev_runnable {
                self.end_early_if_empty(view, view.vcpus[x].vm, Some(x), Some(p));
            }
        }
        let next = match self.slot[p] {
            Some(v) if Some(v) == prev => prev_runnable.then_some(v),
            Some(v) if view.vcpus[v].run == RunState::Runnable => Some(v),
            // Still running elsewhere (its old pCPU has not re-planned yet): that pCPU
            // tickles this one when it lets the vCPU go.
            _ => None,
        };
        if let Some(x) = prev {
            if prev_runnable && next != Some(x) {
                if let Some(r) = self.slot_of[x].filter(|&r| r != p) {
                    view.tickle(r);
                }
            }
        }
        Decision { next, slice_ns: None }
    }

    fn timer(&mut self, view: &mut SchedView, id: u64) {
        let vm = id as VmId;
        if vm < self.running.len() && self.running[vm] && view.now >= self.slice_end[vm] {
            self.co_stop(view, vm);
            self.replan(view, None);
        }
    }

    fn pause_exit(&mut self, _view: &mut SchedView, _v: VcpuId) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("gang_co_starts", self.co_starts), ("gang_joins", self.joins), ("gang_early_ends", self.early_ends)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hv::sched::testkit::Kit;
    use std::collections::BTreeMap;

    fn gang() -> Gang {
        Gang::from_params(&mut Params::new(&BTreeMap::new())).unwrap()
    }

    const SLICE: Ns = 30 * NS_PER_MS;

    #[test]
    fn a_gang_co_starts_only_when_all_its_runnable_vcpus_fit() {
        // 4 pCPUs; VM 0 has vCPUs 0-2, VM 1 has vCPUs 3-4.
        let mut k = Kit::new(4, &[3, 2]);
        let mut s = gang();
        k.init(&mut s);
        for v in 0..3 {
            k.wake(&mut s, v);
        }
        assert!((0..3).all(|v| k.running_on(v).is_some()));
        k.wake_all(&mut s, &[3, 4]);
        // VM 1 needs two pCPUs and one is free: nothing of it runs, the free pCPU idles.
        assert!(!s.is_running(1));
        assert_eq!(k.pcpu_cur.iter().filter(|c| c.is_none()).count(), 1);
        assert!(k.running_on(3).is_none() && k.running_on(4).is_none());
        // At the slice end VM 0 co-stops as a whole and VM 1 (less charged) co-starts; VM 0's
        // three vCPUs do not fit in the two pCPUs left, so those stay idle.
        k.advance(&mut s, SLICE);
        assert!(s.is_running(1) && !s.is_running(0));
        assert!(k.running_on(3).is_some() && k.running_on(4).is_some());
        assert!((0..3).all(|v| k.running_on(v).is_none() && k.vcpus[v].run == RunState::Runnable));
        assert_eq!(k.pcpu_cur.iter().filter(|c| c.is_none()).count(), 2);
        // Charges are reserved pCPU-time: after VM 1's first slice it has used 2 x 30 ms
        // against VM 0's 3 x 30 ms, so it gets a second slice, then VM 0 runs all three again.
        k.advance(&mut s, 2 * SLICE);
        assert!(s.is_running(1) && !s.is_running(0));
        k.advance(&mut s, 3 * SLICE);
        assert!((0..3).all(|v| k.running_on(v).is_some()));
        assert!(k.running_on(3).is_none() && k.running_on(4).is_none());
    }

    #[test]
    fn members_run_on_distinct_pcpus_and_start_and_stop_together() {
        // 4 pCPUs, three 2-vCPU VMs: two gangs fit at a time.
        let mut k = Kit::new(4, &[2, 2, 2]);
        let mut s = gang();
        k.init(&mut s);
        k.wake_all(&mut s, &[0, 1, 2, 3, 4, 5]);
        let mut seen_running = [false; 3];
        for step in 0..=12 {
            k.advance(&mut s, step * SLICE / 2);
            let mut busy: Vec<PcpuId> = (0..6).filter_map(|v| k.running_on(v)).collect();
            let n = busy.len();
            busy.sort();
            busy.dedup();
            assert_eq!(busy.len(), n, "two vCPUs on one pCPU");
            for vm in 0..3 {
                let running = (0..2).filter(|i| k.running_on(vm * 2 + i).is_some()).count();
                assert!(running == 0 || running == 2, "t={step}: VM {vm} runs {running} of 2 vCPUs");
                assert_eq!(running == 2, s.is_running(vm));
                seen_running[vm] |= running == 2;
            }
            assert_eq!(n, 4, "two gangs fill the host");
        }
        assert_eq!(seen_running, [true; 3], "every VM gets slices");
    }

    #[test]
    fn a_halted_member_leaves_its_pcpu_idle_until_the_slice_ends() {
        // 3 pCPUs: VM 0 (vCPUs 0-1) runs, VM 1 (vCPUs 2-3) needs two pCPUs and waits.
        let mut k = Kit::new(3, &[2, 2]);
        let mut s = gang();
        k.init(&mut s);
        k.wake_all(&mut s, &[0, 1]);
        k.wake_all(&mut s, &[2, 3]);
        let p0 = k.running_on(0).unwrap();
        k.now = NS_PER_MS;
        k.halt(&mut s, 0);
        assert_eq!(k.pcpu_cur[p0], None, "the halted member's pCPU idles");
        assert_eq!(s.slot_of(0), Some(p0), "and stays reserved for it");
        assert!(k.running_on(2).is_none() && k.running_on(3).is_none(), "VM 1 still does not fit");
        // It wakes within the slice and resumes on its reserved pCPU.
        k.now = 2 * NS_PER_MS;
        k.wake(&mut s, 0);
        assert_eq!(k.running_on(0), Some(p0));
    }

    #[test]
    fn a_gang_whose_members_all_halt_ends_its_slice_early() {
        let mut k = Kit::new(2, &[2, 2]);
        let mut s = gang();
        k.init(&mut s);
        for v in 0..4 {
            k.wake(&mut s, v);
        }
        assert!(s.is_running(0) && !s.is_running(1));
        k.now = NS_PER_MS;
        k.halt(&mut s, 0);
        assert!(k.running_on(2).is_none(), "one member still runs: the gang keeps both pCPUs");
        k.halt(&mut s, 1);
        assert!(s.is_running(1), "no member of VM 0 can run: VM 1 co-starts at once");
        assert!(k.running_on(2).is_some() && k.running_on(3).is_some());
    }
}
