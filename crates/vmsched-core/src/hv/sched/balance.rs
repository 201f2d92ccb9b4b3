//! Balance scheduling (Sukwong & Kim, EuroSys 2011, "Is co-scheduling too expensive for SMP
//! VMs?"): a host scheduler (CFS, as in the paper's KVM, or Xen credit with `host =
//! "credit"`) with the placement constraint that two sibling vCPUs of a VM never share a
//! pCPU's runqueue (running or queued there).
//!
//! Models (reference/related-work.md §3.8; seed 004 §"related work" [SK11]):
//! - the paper sets each vCPU's CPU affinity dynamically to exclude the pCPUs whose runqueue
//!   holds one of its siblings, and leaves everything else to the host scheduler. This wrapper
//!   does the same: before each CFS decision that places or moves vCPUs (wake placement
//!   `select_task_rq`, new-idle and periodic load balancing) it hands CFS a view whose hard
//!   affinity of every vCPU is its configured affinity minus the pCPUs occupied by a sibling;
//! - siblings are not forced to run at the same time (no gang, no co-stop): spreading them
//!   over runqueues only makes it likely that they run together, and rules out "vCPU
//!   stacking" (a lock waiter queued behind its lock holder on one pCPU);
//! - all other behaviour is CFS's (`cfs.rs`): vruntime order, per-VM shares, wake-up
//!   preemption, PLE + directed yield, and its parameters;
//! - `host = "credit"`: the same rule over Xen credit (`credit.rs`, every credit parameter
//!   applies, caps included: a capped VM's units are parked as `csched_acct` parks them). For
//!   a Xen testbed that compares against balance scheduling (seed 002, "Scheduling strategies
//!   for comparison: Xen default credit scheduler, Balance+cap+CO [Sukwong-Eurosys11]" beside
//!   "Implement Flex in Xen's credit scheduler"): the rule is an affinity, and credit places,
//!   steals and moves units only within `SchedView::allowed`, so it applies unchanged.
//!
//! Leaves out: the paper's patch details beyond the affinity rule. When the rule leaves a vCPU
//! no allowed pCPU (more runnable siblings than pCPUs, or pinning), its configured affinity
//! applies and the event is counted (`balance_fallbacks`), since the vCPU must run somewhere.

use super::forward_hooks;
use super::cfs::{Cfs, PleYield};
use super::credit::Credit;
use super::{Decision, HvScheduler, Params, Reason, SchedView};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, RunState, VcpuId};
#[cfg(test)]
use crate::engine::NS_PER_MS;

/// A host scheduler balance scheduling can constrain: it keeps per-pCPU runqueues and places
/// vCPUs only within `SchedView::allowed`.
pub trait BalanceHost: HvScheduler {
    /// The pCPU whose runqueue `v` is queued on, if it is queued.
    fn queued_on(&self, v: VcpuId) -> Option<PcpuId>;
}

impl BalanceHost for Cfs {
    fn queued_on(&self, v: VcpuId) -> Option<PcpuId> {
        Cfs::queued_on(self, v)
    }
}

impl BalanceHost for Credit {
    fn queued_on(&self, v: VcpuId) -> Option<PcpuId> {
        Credit::queued_on(self, v)
    }
}

pub struct Balance<S: BalanceHost = Cfs> {
    inner: S,
    fallbacks: u64,
}

/// `balance` with its host scheduler (`hypervisor.params.host`: `"cfs"`, the default, or
/// `"credit"`).
pub fn build(p: &mut Params, ple: PleYield) -> Result<Box<dyn HvScheduler>, ScenarioError> {
    Ok(match p.choice("host", "cfs", &["cfs", "credit"])? {
        "credit" => Box::new(Balance::over(Credit::from_params(p)?)),
        _ => Box::new(Balance::over(Cfs::from_params(p, ple)?)),
    })
}

impl<S: BalanceHost> Balance<S> {
    pub fn over(inner: S) -> Self {
        Balance { inner, fallbacks: 0 }
    }

    /// The pCPU whose runqueue holds `v` (running there or queued), if any.
    pub fn runqueue_of(&self, view: &SchedView, v: VcpuId) -> Option<PcpuId> {
        match view.vcpus[v].run {
            RunState::Running(p) => Some(p),
            _ => self.inner.queued_on(v),
        }
    }

    /// Every vCPU's affinity minus the pCPUs that hold one of its siblings, and whether the
    /// rule left the vCPU nowhere to go (then its configured affinity applies).
    fn masks(&self, view: &SchedView) -> (Vec<Option<Vec<PcpuId>>>, Vec<bool>) {
        let n = view.n_pcpus();
        // Per VM and pCPU: how many of the VM's vCPUs its runqueue holds, and the last one seen.
        let mut count = vec![vec![0u32; n]; view.vms.len()];
        for v in 0..view.vcpus.len() {
            if let Some(p) = self.runqueue_of(view, v) {
                count[view.vcpus[v].vm][p] += 1;
            }
        }
        let mut fell_back = vec![false; view.vcpus.len()];
        let masks = (0..view.vcpus.len())
            .map(|v| {
                let vm = view.vcpus[v].vm;
                let own = self.runqueue_of(view, v);
                let siblings_on = |p: PcpuId| count[vm][p] - (own == Some(p)) as u32;
                let mask: Vec<PcpuId> = (0..n).filter(|&p| view.allowed(v, p) && siblings_on(p) == 0).collect();
                if mask.is_empty() {
                    fell_back[v] = true;
                    view.affinity[v].clone()
                } else if mask.len() == n {
                    None
                } else {
                    Some(mask)
                }
            })
            .collect();
        (masks, fell_back)
    }

    /// Run `f` on CFS with the sibling-excluding affinities.
    fn constrained<R>(&mut self, view: &mut SchedView, wakee: Option<VcpuId>, f: impl FnOnce(&mut S, &mut SchedView) -> R) -> R {
        let (masks, fell_back) = self.masks(view);
        if wakee.map_or(false, |v| fell_back[v]) {
            self.fallbacks += 1;
        }
        let mut v2 = SchedView {
            now: view.now,
            topo: view.topo,
            vcpus: view.vcpus,
            vms: view.vms,
            affinity: &masks,
            pcpu_cur: view.pcpu_cur,
            requests: &mut *view.requests,
        };
        f(&mut self.inner, &mut v2)
    }
}

impl<S: BalanceHost> HvScheduler for Balance<S> {
    forward_hooks!(inner: pause_exit, vipi_pending, directed_yield, tasklet_mode, wakes_after_exit, lazy_context_switch, ple_grows_by_default, yield_stats, halt_polls_by_default, single_task_running, enforces_caps, set_seed);

    fn name(&self) -> &'static str {
        "balance"
    }

    fn init(&mut self, view: &mut SchedView) {
        self.inner.init(view);
    }

    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        self.constrained(view, Some(v), |c, w| c.wake(w, v));
    }

    fn sleep(&mut self, view: &mut SchedView, v: VcpuId) {
        self.inner.sleep(view, v);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, why: Reason) -> Decision {
        self.constrained(view, None, |c, w| c.do_schedule(w, p, prev, prev_runnable, why))
    }

    fn timer(&mut self, view: &mut SchedView, id: u64) {
        self.constrained(view, None, |c, w| c.timer(w, id));
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = vec![("balance_fallbacks", self.fallbacks)];
        c.extend(self.inner.counters());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hv::sched::testkit::Kit;
    use std::collections::BTreeMap;

    /// 2 pCPUs busy with VM 1's vCPUs 2 and 3; VM 0's vCPUs 0 and 1 last ran on pCPU 0.
    fn stacked_wake(s: &mut dyn HvScheduler) -> Kit {
        let mut k = Kit::new(2, &[2, 2]);
        k.init(s);
        k.vcpus[3].last_pcpu = 1;
        k.wake(s, 2);
        k.wake(s, 3);
        assert!(k.running_on(2).is_some() && k.running_on(3).is_some());
        k.vcpus[0].last_pcpu = 0;
        k.vcpus[1].last_pcpu = 0;
        k.wake(s, 0);
        k.wake(s, 1);
        k
    }

    #[test]
    fn siblings_never_share_a_runqueue() {
        let params = BTreeMap::new();
        // Plain CFS stacks both siblings on their previous pCPU's runqueue ...
        let mut cfs = Cfs::from_params(&mut Params::new(&params), PleYield::default()).unwrap();
        let _k = stacked_wake(&mut cfs);
        assert_eq!((cfs.queued_on(0), cfs.queued_on(1)), (Some(0), Some(0)));
        // ... balance scheduling puts the second one elsewhere.
        let mut b = Balance::over(Cfs::from_params(&mut Params::new(&params), PleYield::default()).unwrap());
        let mut k = stacked_wake(&mut b);
        let rq = |k: &mut Kit, b: &Balance, v| k.with(|view| b.runqueue_of(view, v));
        let (r0, r1) = (rq(&mut k, &b, 0), rq(&mut k, &b, 1));
        assert!(r0.is_some() && r1.is_some());
        assert_ne!(r0, r1);
        // Load balancing and rescheduling keep it so.
        for t in 1..=40 {
            k.advance(&mut b, t * NS_PER_MS);
            for p in 0..2 {
                k.schedule(&mut b, p, Reason::Timer);
            }
            for vm in [0, 1] {
                let (a, c) = (rq(&mut k, &b, 2 * vm), rq(&mut k, &b, 2 * vm + 1));
                assert!(a.is_none() || a != c, "t={t} ms: VM {vm}'s vCPUs share runqueue {a:?}");
            }
        }
        assert_eq!(b.counters(), vec![("balance_fallbacks", 0)]);
    }

    #[test]
    fn over_credit_siblings_never_share_a_runqueue() {
        // Xen credit queues a woken unit on the pCPU it last ran on when no pCPU is idle
        // (`csched_unit_wake` → `__runq_insert`), so both siblings stack on pCPU 0 ...
        let params = BTreeMap::new();
        let mut credit = Credit::from_params(&mut Params::new(&params)).unwrap();
        let _k = stacked_wake(&mut credit);
        assert_eq!((credit.queued_on(0), credit.queued_on(1)), (Some(0), Some(0)));
        // ... and balance scheduling over credit queues the second one on the other pCPU, and
        // keeps the siblings apart through credit's ticks, accounting, steals and slices.
        let mut b = Balance::over(Credit::from_params(&mut Params::new(&params)).unwrap());
        let mut k = stacked_wake(&mut b);
        let rq = |k: &mut Kit, b: &Balance<Credit>, v| k.with(|view| b.runqueue_of(view, v));
        let mut together = 0;
        for t in 0..=120 {
            if t > 0 {
                k.advance(&mut b, t * NS_PER_MS);
                for p in 0..2 {
                    k.schedule(&mut b, p, Reason::Timer);
                }
            }
            for vm in [0, 1] {
                let (a, c) = (rq(&mut k, &b, 2 * vm), rq(&mut k, &b, 2 * vm + 1));
                assert!(a.is_some() && c.is_some() && a != c, "t={t} ms: VM {vm}'s vCPUs on runqueues {a:?} {c:?}");
                together += (k.running_on(2 * vm).is_some() && k.running_on(2 * vm + 1).is_some()) as u32;
            }
        }
        // Each VM holds both pCPUs in turn: its siblings run side by side.
        assert!(together > 0);
        assert_eq!(b.counters()[0], ("balance_fallbacks", 0));
    }

    #[test]
    fn the_host_scheduler_is_cfs_or_credit_and_credit_enforces_caps() {
        let host = |h: &str| -> BTreeMap<String, toml::Value> { [("host".to_string(), toml::Value::String(h.into()))].into_iter().collect() };
        for h in ["cfs", "credit"] {
            let m = host(h);
            let mut p = Params::new(&m);
            let s = build(&mut p, PleYield::default()).unwrap();
            p.finish("balance").unwrap();
            assert_eq!(s.name(), "balance");
            assert!(s.enforces_caps(), "{h}");
        }
        // Credit's own parameters pass through; CFS's are unknown to it.
        let mut m = host("credit");
        m.insert("tslice_ms".into(), toml::Value::Float(10.0));
        let mut p = Params::new(&m);
        build(&mut p, PleYield::default()).unwrap();
        assert!(p.finish("balance").is_ok());
        m.insert("sched_latency_ms".into(), toml::Value::Float(6.0));
        let mut p = Params::new(&m);
        build(&mut p, PleYield::default()).unwrap();
        assert_eq!(p.finish("balance").unwrap_err().path, "hypervisor.params.sched_latency_ms");
        let m = host("rr");
        let e = build(&mut Params::new(&m), PleYield::default()).err().unwrap();
        assert_eq!(e.path, "hypervisor.params.host");
    }
}
