//! A minimal stand-in for the machine, for rule-level tests of a policy: vCPU facts, pCPUs,
//! and the policy's tickles and timers, with dispatch and deschedule done the way
//! `hv/machine.rs` does them (without costs, guest activity or slice timers; a tickle is
//! served at once instead of a physical IPI later).

use std::collections::BTreeMap;

use super::{HvScheduler, Reason, SchedRequest, SchedView, VcpuFacts, VmFacts};
use crate::engine::Ns;
use crate::host::Topology;
use crate::sim::state::{PcpuId, RunState, VcpuId};

pub(crate) struct Kit {
    pub now: Ns,
    pub topo: Topology,
    pub vcpus: Vec<VcpuFacts>,
    pub vms: Vec<VmFacts>,
    pub affinity: Vec<Option<Vec<PcpuId>>>,
    pub pcpu_cur: Vec<Option<VcpuId>>,
    /// How long a vCPU switched out while runnable stays in its pCPU's scheduling tail
    /// (`VcpuFacts::sched_tail_until`, set as `World::schedule` does); 0 by default (the kit's
    /// switches cost nothing).
    pub sched_tail_ns: Ns,
    requests: Vec<SchedRequest>,
    timers: BTreeMap<u64, Ns>,
}

impl Kit {
    /// `n_pcpus` pCPUs on one socket; VMs of the given sizes (weight 256), vCPUs numbered in
    /// VM order, each halted, last run on pCPU `index % n_pcpus`.
    pub fn new(n_pcpus: usize, vm_sizes: &[usize]) -> Kit {
        let mut vcpus = Vec::new();
        let mut vms = Vec::new();
        for (vm, &k) in vm_sizes.iter().enumerate() {
            let mut ids = Vec::new();
            for i in 0..k {
                let id = vcpus.len();
                vcpus.push(VcpuFacts {
                    vm,
                    idx: i as u32,
                    run: RunState::Blocked,
                    last_pcpu: id % n_pcpus,
                    preempted: false,
                    preempted_in_kernel: false,
                    dy_runnable: false,
                    pi_pending: false,
                    spinning: false,
                    ac_pct: 50,
                    pmu: Default::default(),
                    sched_tail_until: 0,
                });
                ids.push(id);
            }
            vms.push(VmFacts { weight: 256, cap_pct: 0, vcpus: ids });
        }
        let n_v = vcpus.len();
        Kit {
            now: 0,
            topo: Topology::new(1, n_pcpus as u32, None, None, 2.0),
            vcpus,
            vms,
            affinity: vec![None; n_v],
            pcpu_cur: vec![None; n_pcpus],
            sched_tail_ns: 0,
            requests: Vec::new(),
            timers: BTreeMap::new(),
        }
    }

    pub fn with<R>(&mut self, f: impl FnOnce(&mut SchedView) -> R) -> R {
        let mut view = SchedView {
            now: self.now,
            topo: &self.topo,
            vcpus: &self.vcpus,
            vms: &self.vms,
            affinity: &self.affinity,
            pcpu_cur: &self.pcpu_cur,
            requests: &mut self.requests,
        };
        f(&mut view)
    }

    pub fn init(&mut self, s: &mut dyn HvScheduler) {
        self.with(|v| s.init(v));
        self.serve(s);
    }

    /// Wake a halted vCPU (`hv_wake`) and serve the tickles it causes.
    pub fn wake(&mut self, s: &mut dyn HvScheduler, v: VcpuId) {
        self.vcpus[v].run = RunState::Runnable;
        self.with(|view| s.wake(view, v));
        self.serve(s);
    }

    /// Wake a halted vCPU that last ran on pCPU `p` (where credit-like policies queue it).
    pub fn wake_on(&mut self, s: &mut dyn HvScheduler, v: VcpuId, p: PcpuId) {
        self.vcpus[v].last_pcpu = p;
        self.wake(s, v);
    }

    /// Several halted vCPUs become runnable at the same instant (e.g. one broadcast IPI):
    /// all are runnable before the policy hears of the first.
    pub fn wake_all(&mut self, s: &mut dyn HvScheduler, vs: &[VcpuId]) {
        for &v in vs {
            self.vcpus[v].run = RunState::Runnable;
        }
        for &v in vs {
            self.with(|view| s.wake(view, v));
        }
        self.serve(s);
    }

    /// The running vCPU `v` halts (HLT): its pCPU reschedules with `Reason::Block`.
    pub fn halt(&mut self, s: &mut dyn HvScheduler, v: VcpuId) {
        let RunState::Running(p) = self.vcpus[v].run else { panic!("vcpu {v} is not running") };
        self.schedule(s, p, Reason::Block);
        self.serve(s);
    }

    /// `World::schedule`: ask the policy, then carry out its decision.
    pub fn schedule(&mut self, s: &mut dyn HvScheduler, p: PcpuId, why: Reason) {
        let prev = self.pcpu_cur[p];
        let prev_runnable = prev.is_some() && why != Reason::Block;
        let d = self.with(|view| s.do_schedule(view, p, prev, prev_runnable, why));
        if d.next.is_some() && d.next == prev {
            return;
        }
        if let Some(x) = prev {
            self.pcpu_cur[p] = None;
            let f = &mut self.vcpus[x];
            f.last_pcpu = p;
            f.preempted = prev_runnable;
            f.run = if prev_runnable { RunState::Runnable } else { RunState::Blocked };
            if prev_runnable && d.next.is_some() {
                f.sched_tail_until = self.now + self.sched_tail_ns;
            }
        }
        if let Some(n) = d.next {
            assert_eq!(self.vcpus[n].run, RunState::Runnable, "policy picked vcpu {n} which is {:?}", self.vcpus[n].run);
            assert!(self.affinity[n].as_ref().map_or(true, |a| a.contains(&p)), "vcpu {n} not allowed on pcpu {p}");
            self.pcpu_cur[p] = Some(n);
            let f = &mut self.vcpus[n];
            f.run = RunState::Running(p);
            f.last_pcpu = p;
            f.preempted = false;
        }
    }

    /// The pCPUs the policy asked to reschedule and that are not served yet, in order.
    pub fn pending_tickles(&self) -> Vec<PcpuId> {
        self.requests.iter().filter_map(|r| if let SchedRequest::Tickle(p) = r { Some(*p) } else { None }).collect()
    }

    /// Serve pending tickles (rescheduling each pCPU at once) and record timers, until quiet.
    pub fn serve(&mut self, s: &mut dyn HvScheduler) {
        for _ in 0..10_000 {
            let reqs = std::mem::take(&mut self.requests);
            if reqs.is_empty() {
                return;
            }
            let mut tickled: Vec<PcpuId> = Vec::new();
            for r in reqs {
                match r {
                    SchedRequest::Tickle(p) => {
                        if !tickled.contains(&p) {
                            tickled.push(p);
                        }
                    }
                    SchedRequest::Timer { id, at } => {
                        self.timers.insert(id, at.max(self.now));
                    }
                }
            }
            for p in tickled {
                self.schedule(s, p, Reason::Timer);
            }
        }
        panic!("policy keeps tickling");
    }

    /// Let time pass to `to`, firing the policy's timers in time order.
    pub fn advance(&mut self, s: &mut dyn HvScheduler, to: Ns) {
        loop {
            self.serve(s);
            let next = self.timers.iter().filter(|(_, &at)| at <= to).min_by_key(|(&id, &at)| (at, id)).map(|(&id, &at)| (id, at));
            let Some((id, at)) = next else { break };
            self.timers.remove(&id);
            self.now = self.now.max(at);
            self.with(|view| s.timer(view, id));
        }
        self.now = to;
        self.serve(s);
    }

    pub fn running_on(&self, v: VcpuId) -> Option<PcpuId> {
        match self.vcpus[v].run {
            RunState::Running(p) => Some(p),
            _ => None,
        }
    }
}
