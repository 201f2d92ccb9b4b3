//! The boundary between controllers and the simulated host: what a controller may observe
//! (`host_stats`) and how its actions change the world (`apply_action`). Everything a controller
//! sees or does passes through here.

use crate::controllers::{Action, HostStats, PcpuStats, VcpuStats, VmStats};
use crate::sim::state::*;
use crate::sim::World;

/// One applied action, kept for the results (when, by whom, what).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ActionRecord {
    pub t_ms: f64,
    pub by: String,
    #[serde(flatten)]
    pub action: Action,
}

impl World {
    /// Cumulative counters up to now, without changing any state.
    pub(crate) fn host_stats(&self) -> HostStats {
        let now = self.now();
        // Busy and idle time up to now, by the rules that close their intervals (background
        // spin time is neither), so that a controller reads the same at the same instant
        // whenever those intervals were last closed.
        let pcpus = (0..self.pcpus.len())
            .map(|p| PcpuStats { node: self.pcpus[p].node, busy_ns: self.busy_now(p), idle_ns: self.idle_now(p) })
            .collect();
        let vms = self
            .vms
            .iter()
            .map(|vm| {
                let vcpus: Vec<VcpuStats> = vm
                    .vcpus
                    .iter()
                    .map(|&v| {
                        let vc = &self.vcpus[v];
                        let since = now - vc.state_since;
                        let (state, pcpu, run, steal) = match vc.run {
                            RunState::Running(p) => ("running", p, now - vc.seg_start, 0),
                            RunState::Runnable => ("runnable", vc.last_pcpu, 0, since),
                            RunState::Blocked => ("halted", vc.last_pcpu, 0, 0),
                            RunState::Offline => ("offline", vc.last_pcpu, 0, 0),
                        };
                        VcpuStats {
                            online: vc.online,
                            state: state.into(),
                            pcpu,
                            affinity: self.affinity[v].clone(),
                            run_ns: vc.run_ns + run,
                            steal_ns: vc.steal_ns + steal,
                            dispatches: vc.dispatches,
                            ple_exits: vc.exits[crate::host::ExitReason::Ple.index()],
                        }
                    })
                    .collect();
                VmStats {
                    name: vm.name.clone(),
                    weight: vm.weight,
                    cap_pct: vm.cap_pct,
                    online_vcpus: vcpus.iter().filter(|v| v.online).count() as u32,
                    finished: vm.finished_at.is_some(),
                    vcpus,
                }
            })
            .collect();
        HostStats { now_ns: now, pcpus, vms }
    }

    /// Carry out a validated action (see `Action::validate`).
    pub(crate) fn apply_action(&mut self, a: &Action) {
        match *a {
            Action::SetOnlineVcpus { vm, count } => self.hotplug_request(vm, count),
            Action::Pin { vm, vcpu, ref pcpus } => {
                let v = self.vms[vm].vcpus[vcpu as usize];
                let mut list = pcpus.clone();
                list.sort_unstable();
                list.dedup();
                self.set_affinity(v, Some(list));
            }
            Action::Unpin { vm, vcpu } => {
                let v = self.vms[vm].vcpus[vcpu as usize];
                self.set_affinity(v, None);
            }
            Action::SetWeight { vm, weight } => {
                self.vms[vm].weight = weight;
                self.vm_facts[vm].weight = weight;
            }
            Action::SetCap { vm, cap_pct } => {
                self.vms[vm].cap_pct = cap_pct;
                self.vm_facts[vm].cap_pct = cap_pct;
            }
        }
    }

    /// Change a vCPU's hard affinity. Like Xen's `vcpu_set_hard_affinity` → `vcpu_migrate`
    /// (xen/common/sched/core.c): a queued vCPU is put to sleep and woken again so that the
    /// scheduler re-places it; a running vCPU on a pCPU it may no longer use is taken off it
    /// (the pCPU reschedules) and woken elsewhere.
    pub(crate) fn set_affinity(&mut self, v: VcpuId, aff: Option<Vec<PcpuId>>) {
        if self.vcpus[v].run == RunState::Runnable {
            // A waiting vCPU is counted under its hard affinity (metrics::idle_wait): it waits
            // under the new one from now on.
            let now = self.q.now();
            self.idle_wait.set_waiting(self.affinity[v].as_deref(), false, now);
            self.idle_wait.set_waiting(aff.as_deref(), true, now);
        }
        self.affinity[v] = aff;
        let allowed = |w: &World, p: PcpuId| w.affinity[v].as_ref().map_or(true, |a| a.contains(&p));
        match self.vcpus[v].run {
            RunState::Running(p) if !allowed(self, p) => {
                self.schedule(p, crate::hv::sched::Reason::Block);
                self.hv_wake(v);
            }
            RunState::Runnable => {
                self.set_run(v, RunState::Blocked);
                self.with_sched(|s, view| s.sleep(view, v));
                self.hv_wake(v);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::controllers::Action;
    use crate::engine::NS_PER_MS;
    use crate::scenario::from_toml_str;
    use crate::sim::{results_json, Overrides, Simulation};

    const SYNC_2VM: &str = include_str!("../../../../scenarios/sync-heavy-2vm.toml");

    fn sim(text: &str, scheduler: &str) -> Simulation {
        let sc = from_toml_str(text).unwrap();
        Simulation::new(&sc, &Overrides { scheduler: Some(scheduler.into()), check: true, ..Default::default() }).unwrap()
    }

    #[test]
    fn observing_at_intervals_does_not_change_the_run() {
        for s in ["credit", "cfs"] {
            let mut a = sim(SYNC_2VM, s);
            a.run_until(60 * NS_PER_MS).unwrap();
            let mut b = sim(SYNC_2VM, s);
            for k in 1..=60 {
                b.run_until(k * NS_PER_MS).unwrap();
                let _ = b.stats();
                b.apply("observer", &[]).unwrap();
            }
            assert_eq!(results_json(&a.results()), results_json(&b.results()), "{s}");
        }
    }

    /// pCPU busy and idle time read by a controller must not depend on when the intervals
    /// behind them were last closed (a running vCPU's at its own events or a PMU refresh, an
    /// idle pCPU's at a background period or a dispatch). With background spins the closing
    /// rules take the spin out of both, so an open interval must be read by the same rules:
    /// before, it was read whole, and closing it made busy or idle time drop by the spin's part.
    #[test]
    fn pcpu_stats_read_the_same_whether_or_not_open_intervals_were_closed() {
        let sc = from_toml_str(include_str!("../../../../scenarios/vmkit-sched-pattern.toml")).unwrap();
        let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
        let mut differed_before = 0;
        for k in 1..=400 {
            s.run_until(k * NS_PER_MS).unwrap();
            let open = s.stats();
            let w = &mut s.w;
            let spinning = (0..w.pcpus.len()).filter(|&p| w.background_left(p) > 0).count();
            for v in 0..w.vcpus.len() {
                w.advance(v);
            }
            for p in 0..w.pcpus.len() {
                w.close_idle(p);
            }
            let closed = s.stats();
            assert_eq!(open.pcpus, closed.pcpus, "at {k} ms");
            differed_before += spinning;
        }
        // The check could only fail if spins overlapped the samples: 15 or 30 ms of every 80 ms
        // on both pCPUs, so about 28 % of 400 samples x 2 pCPUs.
        assert!(differed_before > 100, "{differed_before} samples inside a spin");
    }

    #[test]
    fn stats_counters_are_cumulative_and_match_the_results() {
        let mut s = sim(SYNC_2VM, "cfs");
        s.run_until(30 * NS_PER_MS).unwrap();
        let st = s.stats();
        s.run_until(31 * NS_PER_MS).unwrap();
        let st2 = s.stats();
        assert_eq!(st.now_ns, 30 * NS_PER_MS);
        for (a, b) in st.vms.iter().zip(&st2.vms) {
            for (x, y) in a.vcpus.iter().zip(&b.vcpus) {
                assert!(y.run_ns >= x.run_ns && y.dispatches >= x.dispatches && y.ple_exits >= x.ple_exits);
                // Every vCPU's time is accounted up to now.
                assert!(x.run_ns + x.steal_ns <= st.now_ns);
            }
        }
        let busy: u64 = st2.pcpus.iter().map(|p| p.busy_ns + p.idle_ns).sum();
        assert_eq!(busy, 12 * 31 * NS_PER_MS, "each pCPU is busy or idle at every instant");
        let cpu: u64 = st2.vms.iter().map(|v| v.cpu_ns()).sum();
        let pbusy: u64 = st2.pcpus.iter().map(|p| p.busy_ns).sum();
        assert_eq!(cpu, pbusy);
    }

    #[test]
    fn pinning_moves_running_and_queued_vcpus_onto_their_pcpu() {
        for s in ["credit", "credit2", "cfs", "rr"] {
            let mut m = sim(SYNC_2VM, s);
            m.run_until(20 * NS_PER_MS).unwrap();
            // Pin all of VM 0 onto pCPUs 0-5 (two vCPUs per pCPU) and VM 1 onto pCPU 11.
            let mut acts: Vec<Action> = (0..12).map(|k| Action::Pin { vm: 0, vcpu: k, pcpus: vec![k as usize / 2] }).collect();
            acts.extend((0..12).map(|k| Action::Pin { vm: 1, vcpu: k, pcpus: vec![11] }));
            m.apply("test", &acts).unwrap();
            for t in 21..40 {
                m.run_until(t * NS_PER_MS).unwrap();
                let st = m.stats();
                for (i, vm) in st.vms.iter().enumerate() {
                    for (k, v) in vm.vcpus.iter().enumerate() {
                        if v.state == "running" {
                            let want = if i == 0 { k / 2 } else { 11 };
                            assert_eq!(v.pcpu, want, "{s}: vm{i} vcpu{k} at {t} ms");
                        }
                    }
                }
            }
            // Unpinning lets them spread again (credit: once accounting makes VM 0 OVER and
            // the other pCPUs steal from pCPU 11).
            let acts: Vec<Action> = (0..2).flat_map(|vm| (0..12).map(move |k| Action::Unpin { vm, vcpu: k })).collect();
            m.apply("test", &acts).unwrap();
            m.run_until(200 * NS_PER_MS).unwrap();
            let used: std::collections::BTreeSet<usize> = m.stats().vms[1].vcpus.iter().map(|v| v.pcpu).collect();
            assert!(used.len() > 1, "{s}: VM 1 still on one pCPU after unpin");
            let r = m.results();
            assert_eq!(r.actions.len(), 48);
            assert_eq!(r.actions[0].by, "test");
        }
    }

    #[test]
    fn weight_changes_shift_cpu_shares() {
        let text = r#"
            duration_ms = 600
            [host]
            cores_per_socket = 2
            [[vms]]
            vcpus = 2
            [[vms.workloads]]
            kind = "hog"
            threads = 2
            [[vms]]
            vcpus = 2
            [[vms.workloads]]
            kind = "hog"
            threads = 2
        "#;
        for s in ["credit", "credit2", "cfs"] {
            let mut m = sim(text, s);
            m.run_until(100 * NS_PER_MS).unwrap();
            let before = m.stats();
            m.apply("test", &[Action::SetWeight { vm: 0, weight: 768 }]).unwrap();
            m.run_until(600 * NS_PER_MS).unwrap();
            let after = m.stats();
            let d = |i: usize| after.vms[i].cpu_ns() - before.vms[i].cpu_ns();
            let share0 = d(0) as f64 / (d(0) + d(1)) as f64;
            assert!(share0 > 0.65, "{s}: VM 0 share {share0:.3} after weight 768 vs 256");
        }
    }

    #[test]
    fn invalid_actions_are_rejected_whole_with_the_index() {
        let mut m = sim(SYNC_2VM, "cfs");
        m.run_until(5 * NS_PER_MS).unwrap();
        let e = m
            .apply("test", &[Action::SetWeight { vm: 0, weight: 512 }, Action::Pin { vm: 0, vcpu: 0, pcpus: vec![12] }])
            .unwrap_err();
        assert_eq!(e.path, "actions[1].pcpus");
        assert!(e.reason.contains("no pCPU 12"), "{e}");
        assert_eq!(m.stats().vms[0].weight, 256, "nothing applied");
    }
}
