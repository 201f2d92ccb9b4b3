//! FlexCore's vCPU-Bal control centre: vCPU ballooning driven by pause-loop exits.
//!
//! Source: seed 000_e4beefc956462be7.txt §3.1 (control centre, Fig. 6) and §3.2 (kernel agent).
//! - PLE bookkeeping: PLE exits per vCPU in 1 s buckets, over the last 3 s (`ple_bucket_ms`,
//!   `ple_window_buckets`); the vCPU's scheduled count over the same window.
//! - A vCPU is judged over the window: §3.1 "bookkeeps PLE times at 1-s intervals in last three
//!   seconds ... marks them as contended if the PLE times divided by the scheduled times exceed
//!   a predefined threshold over the 3 s period". The seed's control centre runs before the
//!   applications start (its thread is forked at its initialisation, §3.1; the agent loads
//!   after each guest boots, §3.2; the applications start together in booted VMs, §4.1), so
//!   when a scenario starts the window's earlier buckets are idle seconds: no PLE exits, next
//!   to no dispatches. Summed over the window they add nothing, so the first check (1 s) judges
//!   the history the run has made (`window = "available"`, the default). `window = "full"`
//!   models a control centre started with the scenario: nothing is marked (or ballooned or
//!   re-inflated) before `ple_window_buckets` buckets exist (the 3 s check with the defaults).
//! - Every `T_check_interval` (`check_interval_ms`) a vCPU is contended when
//!   `ple_exits > dispatches × RATIO` over the window; when more than half (`contended_fraction`)
//!   of some VM's online vCPUs are contended, every VM is ballooned.
//! - Ballooning: VM i gets `N_i = W_i · T_pCPU / Σ W` vCPUs (`vcpu_counts`), at least 1 and at
//!   most its configured vCPUs. The guest agent unplugs the highest indices first and never
//!   vCPU 0 (`guest::hotplug`, with the hotplug cost model of `guest.hotplug`).
//! - When every VM has reached its count, the remaining vCPUs are bound 1:1 to pCPUs.
//!
//! Choices where the seed is silent (also in docs/policies.md):
//! - `RATIO` has no value in the seed; its comment reads "PLE times close to schedule count".
//!   We take 0.5: more than every second dispatch of the vCPU ends in a pause-loop exit.
//! - `T_check_interval` has no value; we take 1 s, the bookkeeping granularity.
//! - `N_i` is rounded by largest remainder (ties to the lower VM index) so that Σ N_i = T_pCPU;
//!   a VM whose share exceeds its configured vCPUs keeps them all and the rest is shared among
//!   the others by weight.
//! - Re-inflation (the seed never gives vCPUs back): with `reinflate = "when_not_overcommitted"`
//!   the configured vCPUs of the VMs still active (not finished and using at least
//!   `idle_vm_cpu_pct` of one pCPU over the window) are compared with the pCPUs at each check;
//!   when they fit, every VM gets all its vCPUs back and the binding is lifted. `"never"` keeps
//!   the seed's behaviour.
//! - The control centre's wait for the outgoing vCPUs to halt is polled every `poll_ms`.
//!
//! Left out: the shared-page channel's own cost (the message is a virtual interrupt to vCPU 0)
//! and QEMU's thread parking (an offline vCPU is never scheduled).

use std::collections::VecDeque;

use super::{bind_one_to_one, Action, Controller, HostStats};
use crate::engine::{ms_to_ns, Ns};
use crate::hv::sched::Params;
use crate::scenario::ScenarioError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reinflate {
    Never,
    WhenNotOvercommitted,
}

/// How much PLE history a judgement needs (`window`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WindowRule {
    /// Whatever history the run has made, at least one bucket: the window's older buckets are
    /// the idle seconds before the scenario started.
    Available,
    /// `ple_window_buckets` buckets: the control centre started with the scenario.
    Full,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Watching,
    /// Waiting for the guests to reach these online counts.
    Ballooning(Vec<u32>),
    Bound(Vec<u32>),
}

/// Cumulative counters at a bucket boundary.
#[derive(Debug, Clone)]
struct Snapshot {
    /// Per VM, per vCPU: (PLE exits, dispatches).
    vcpus: Vec<Vec<(u64, u64)>>,
    vm_cpu_ns: Vec<Ns>,
    at_ns: Ns,
}

pub struct FlexCore {
    poll_ns: Ns,
    bucket_ns: Ns,
    window_buckets: usize,
    window_rule: WindowRule,
    check_ns: Ns,
    ratio: f64,
    contended_fraction: f64,
    reinflate: Reinflate,
    idle_vm_cpu_pct: f64,
    hist: VecDeque<Snapshot>,
    next_bucket: Ns,
    next_check: Ns,
    phase: Phase,
}

impl FlexCore {
    pub fn from_params(p: &mut Params) -> Result<Self, ScenarioError> {
        let poll_ms = p.f64("poll_ms", 10.0, 0.001, 1e6)?;
        let bucket_ms = p.f64("ple_bucket_ms", 1000.0, 0.001, 1e6)?;
        let window_buckets = p.u64("ple_window_buckets", 3, 1, 1000)? as usize;
        let window_rule = match p.choice("window", "available", &["available", "full"])? {
            "full" => WindowRule::Full,
            _ => WindowRule::Available,
        };
        let check_ms = p.f64("check_interval_ms", 1000.0, 0.001, 1e7)?;
        let ratio = p.f64("ratio", 0.5, 0.0, 1e6)?;
        let contended_fraction = p.f64("contended_fraction", 0.5, 0.0, 1.0)?;
        let reinflate = match p.choice("reinflate", "when_not_overcommitted", &["when_not_overcommitted", "never"])? {
            "never" => Reinflate::Never,
            _ => Reinflate::WhenNotOvercommitted,
        };
        let idle_vm_cpu_pct = p.f64("idle_vm_cpu_pct", 10.0, 0.0, 1e6)?;
        Ok(FlexCore {
            poll_ns: ms_to_ns(poll_ms).max(1),
            bucket_ns: ms_to_ns(bucket_ms).max(1),
            window_buckets,
            window_rule,
            check_ns: ms_to_ns(check_ms).max(1),
            ratio,
            contended_fraction,
            reinflate,
            idle_vm_cpu_pct,
            hist: VecDeque::new(),
            next_bucket: 0,
            next_check: ms_to_ns(check_ms).max(1),
            phase: Phase::Watching,
        })
    }

    fn snapshot(s: &HostStats) -> Snapshot {
        Snapshot {
            vcpus: s.vms.iter().map(|vm| vm.vcpus.iter().map(|v| (v.ple_exits, v.dispatches)).collect()).collect(),
            vm_cpu_ns: s.vms.iter().map(|vm| vm.cpu_ns()).collect(),
            at_ns: s.now_ns,
        }
    }

    /// Window deltas: the latest snapshot against the one `window_buckets` before it; under
    /// `WindowRule::Full` none until that many buckets exist (the first snapshot is the one at
    /// the first poll, so the first full window spans `window_buckets` buckets less one poll).
    fn window(&self) -> Option<(&Snapshot, &Snapshot)> {
        if self.window_rule == WindowRule::Full && self.hist.len() <= self.window_buckets {
            return None;
        }
        if self.hist.len() < 2 {
            return None;
        }
        Some((self.hist.front()?, self.hist.back()?))
    }

    /// VMs with more than `contended_fraction` of their online vCPUs contended.
    fn contended_vms(&self, s: &HostStats) -> Vec<usize> {
        let Some((old, new)) = self.window() else { return Vec::new() };
        let mut out = Vec::new();
        for (i, vm) in s.vms.iter().enumerate() {
            let mut online = 0u32;
            let mut contended = 0u32;
            for (k, v) in vm.vcpus.iter().enumerate() {
                if !v.online {
                    continue;
                }
                online += 1;
                let ple = new.vcpus[i][k].0 - old.vcpus[i][k].0;
                let sched = new.vcpus[i][k].1 - old.vcpus[i][k].1;
                if vcpu_contended(ple, sched, self.ratio) {
                    contended += 1;
                }
            }
            if online > 0 && contended as f64 > self.contended_fraction * online as f64 {
                out.push(i);
            }
        }
        out
    }

    fn balloon(&mut self, s: &HostStats) -> Vec<Action> {
        let weights: Vec<u32> = s.vms.iter().map(|v| v.weight).collect();
        let max: Vec<u32> = s.vms.iter().map(|v| v.vcpus.len() as u32).collect();
        let targets = vcpu_counts(&weights, &max, s.pcpus.len() as u32);
        let current: Vec<u32> = s.vms.iter().map(|v| v.online_vcpus).collect();
        if matches!(&self.phase, Phase::Bound(t) if *t == targets) && current == targets {
            return Vec::new();
        }
        let acts = (0..s.vms.len())
            .filter(|&i| current[i] != targets[i])
            .map(|i| Action::SetOnlineVcpus { vm: i, count: targets[i] })
            .collect();
        self.phase = Phase::Ballooning(targets);
        acts
    }

    /// The re-inflation rule: whether the VMs still active would fit the host unballooned.
    fn fits_unballooned(&self, s: &HostStats) -> bool {
        let Some((old, new)) = self.window() else { return false };
        let span = new.at_ns.saturating_sub(old.at_ns).max(1) as f64;
        let active: u32 = s
            .vms
            .iter()
            .enumerate()
            .filter(|&(i, vm)| {
                let used_pct = 100.0 * (new.vm_cpu_ns[i] - old.vm_cpu_ns[i]) as f64 / span;
                !vm.finished && used_pct >= self.idle_vm_cpu_pct
            })
            .map(|(_, vm)| vm.vcpus.len() as u32)
            .sum();
        active <= s.pcpus.len() as u32
    }

    fn check(&mut self, s: &HostStats) -> Vec<Action> {
        if let Phase::Bound(_) = self.phase {
            if self.reinflate == Reinflate::WhenNotOvercommitted && self.fits_unballooned(s) {
                self.phase = Phase::Watching;
                let mut acts = Vec::new();
                for (i, vm) in s.vms.iter().enumerate() {
                    if vm.online_vcpus < vm.vcpus.len() as u32 {
                        acts.push(Action::SetOnlineVcpus { vm: i, count: vm.vcpus.len() as u32 });
                    }
                    for (k, v) in vm.vcpus.iter().enumerate() {
                        if v.affinity.is_some() {
                            acts.push(Action::Unpin { vm: i, vcpu: k as u32 });
                        }
                    }
                }
                return acts;
            }
        }
        if matches!(self.phase, Phase::Ballooning(_)) || self.contended_vms(s).is_empty() {
            return Vec::new();
        }
        self.balloon(s)
    }
}

/// The contention test of Fig. 6: PLE exits over the window exceed the scheduled count × RATIO.
pub fn vcpu_contended(ple_exits: u64, dispatches: u64, ratio: f64) -> bool {
    ple_exits > 0 && ple_exits as f64 > dispatches as f64 * ratio
}

/// `N_i = W_i · T_pCPU / Σ W` (seed §3.1) in whole vCPUs: largest-remainder rounding, ties to
/// the lower index; a VM's count is capped at its configured vCPUs (the surplus is shared by the
/// others in proportion to weight) and is at least 1 (so with more VMs than pCPUs the sum
/// exceeds the pCPUs).
pub fn vcpu_counts(weights: &[u32], max_vcpus: &[u32], n_pcpus: u32) -> Vec<u32> {
    let k = weights.len();
    let mut n = vec![0u64; k];
    let mut fixed = vec![false; k];
    loop {
        let taken: u64 = (0..k).filter(|&i| fixed[i]).map(|i| n[i]).sum();
        let free = (n_pcpus as u64).saturating_sub(taken);
        let wsum: u64 = (0..k).filter(|&i| !fixed[i]).map(|i| weights[i] as u64).sum();
        if wsum == 0 {
            break;
        }
        let capped: Vec<usize> = (0..k).filter(|&i| !fixed[i] && weights[i] as u64 * free >= max_vcpus[i] as u64 * wsum).collect();
        let floored: Vec<usize> = (0..k).filter(|&i| !fixed[i] && weights[i] as u64 * free < wsum).collect();
        if capped.is_empty() && !floored.is_empty() {
            for i in floored {
                fixed[i] = true;
                n[i] = 1;
            }
            continue;
        }
        if capped.is_empty() {
            let mut rem: Vec<(u64, usize)> = Vec::new();
            let mut given = 0;
            for i in (0..k).filter(|&i| !fixed[i]) {
                let num = weights[i] as u64 * free;
                n[i] = num / wsum;
                given += n[i];
                rem.push((num % wsum, i));
            }
            rem.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            for &(_, i) in rem.iter().take((free - given) as usize) {
                n[i] += 1;
            }
            break;
        }
        for i in capped {
            fixed[i] = true;
            n[i] = max_vcpus[i] as u64;
        }
    }
    (0..k).map(|i| (n[i] as u32).clamp(1, max_vcpus[i].max(1))).collect()
}

impl Controller for FlexCore {
    fn name(&self) -> &'static str {
        "flexcore"
    }
    fn interval_ns(&self) -> Ns {
        self.poll_ns
    }
    fn step(&mut self, s: &HostStats) -> Vec<Action> {
        if s.now_ns >= self.next_bucket {
            self.hist.push_back(Self::snapshot(s));
            while self.hist.len() > self.window_buckets + 1 {
                self.hist.pop_front();
            }
            self.next_bucket = (s.now_ns / self.bucket_ns + 1) * self.bucket_ns;
        }
        if let Phase::Ballooning(t) = &self.phase {
            let reached = s.vms.iter().zip(t).all(|(vm, &n)| vm.online_vcpus == n);
            if reached {
                let t = t.clone();
                self.phase = Phase::Bound(t);
                return bind_one_to_one(s).unwrap_or_default();
            }
        }
        if s.now_ns >= self.next_check {
            self.next_check = (s.now_ns / self.check_ns + 1) * self.check_ns;
            return self.check(s);
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::tests::host;
    use std::collections::BTreeMap;

    #[test]
    fn seed_example_gives_eight_and_four() {
        assert_eq!(vcpu_counts(&[512, 256], &[12, 12], 12), vec![8, 4]);
    }

    #[test]
    fn counts_round_by_largest_remainder_and_respect_limits() {
        assert_eq!(vcpu_counts(&[256, 256, 256], &[12, 12, 12], 12), vec![4, 4, 4]);
        // 10/3 each: one extra vCPU, to the lowest index.
        assert_eq!(vcpu_counts(&[1, 1, 1], &[8, 8, 8], 10), vec![4, 3, 3]);
        // 3.75 and 1.25.
        assert_eq!(vcpu_counts(&[3, 1], &[8, 8], 5), vec![4, 1]);
        // 5.5 / 3.3 / 2.2 of 11: remainders .5, .3, .2 → the first gets the extra one.
        assert_eq!(vcpu_counts(&[5, 3, 2], &[12, 12, 12], 11), vec![6, 3, 2]);
        // A 2-vCPU VM keeps 2; the other takes the rest.
        assert_eq!(vcpu_counts(&[256, 256], &[2, 12], 12), vec![2, 10]);
        // At least one vCPU each even when VMs outnumber pCPUs.
        assert_eq!(vcpu_counts(&[256, 256, 256], &[4, 4, 4], 2), vec![1, 1, 1]);
        // Tiny weight: at least 1.
        assert_eq!(vcpu_counts(&[1000, 1], &[12, 12], 12), vec![11, 1]);
    }

    #[test]
    fn contention_rule_compares_ple_exits_with_dispatches_times_ratio() {
        assert!(vcpu_contended(60, 100, 0.5));
        assert!(!vcpu_contended(50, 100, 0.5));
        assert!(!vcpu_contended(0, 0, 0.5));
        assert!(vcpu_contended(1, 0, 0.5));
    }

    fn fc(extra: &[(&str, toml::Value)]) -> FlexCore {
        let mut m = BTreeMap::new();
        for (k, v) in extra {
            m.insert(k.to_string(), v.clone());
        }
        let mut p = Params::with_prefix(&m, "controller.params");
        let f = FlexCore::from_params(&mut p).unwrap();
        p.finish("flexcore").unwrap();
        f
    }

    /// Advance the fake host by one second with `ple`/`sched` counts per vCPU of each VM.
    fn tick(s: &mut HostStats, per_vm: &[(u64, u64)]) {
        s.now_ns += 1_000_000_000;
        for (vm, &(ple, sched)) in s.vms.iter_mut().zip(per_vm) {
            for v in vm.vcpus.iter_mut().filter(|v| v.online) {
                v.ple_exits += ple;
                v.dispatches += sched;
                v.run_ns += 1_000_000_000;
            }
        }
    }

    #[test]
    fn balloons_every_vm_when_more_than_half_of_one_vms_vcpus_are_contended() {
        let mut c = fc(&[("poll_ms", toml::Value::Float(1000.0))]);
        let mut s = host(12, &[(12, 512), (12, 256)]);
        assert!(c.step(&s).is_empty());
        tick(&mut s, &[(10, 100), (10, 100)]);
        assert!(c.step(&s).is_empty(), "uncontended");
        // Exactly half of VM 1's vCPUs contended: not yet.
        tick(&mut s, &[(10, 100), (0, 0)]);
        for k in 0..6 {
            s.vms[1].vcpus[k].ple_exits += 200;
        }
        assert!(c.step(&s).is_empty(), "half is not more than half");
        tick(&mut s, &[(10, 100), (0, 0)]);
        for k in 0..7 {
            s.vms[1].vcpus[k].ple_exits += 200;
        }
        let acts = c.step(&s);
        assert_eq!(acts, vec![Action::SetOnlineVcpus { vm: 0, count: 8 }, Action::SetOnlineVcpus { vm: 1, count: 4 }]);
        // While the guests unplug, nothing new is issued.
        tick(&mut s, &[(100, 100), (100, 100)]);
        assert!(c.step(&s).is_empty());
        // Highest indices go: once both VMs reach their counts, bind 1:1.
        for k in 8..12 {
            s.vms[0].vcpus[k].online = false;
        }
        for k in 4..12 {
            s.vms[1].vcpus[k].online = false;
        }
        s.vms[0].online_vcpus = 8;
        s.vms[1].online_vcpus = 4;
        let pins = c.step(&s);
        assert_eq!(pins.len(), 12);
        assert!(pins.iter().all(|a| matches!(a, Action::Pin { pcpus, .. } if pcpus.len() == 1)));
    }

    /// Two contended 12-vCPU VMs of equal weight on 12 pCPUs: ballooned to 6 each at the first
    /// check, then bound.
    fn balloon_two_vms_to_six_and_bind(c: &mut FlexCore) -> HostStats {
        let mut s = host(12, &[(12, 256), (12, 256)]);
        c.step(&s);
        tick(&mut s, &[(100, 100), (100, 100)]);
        assert_eq!(c.step(&s).len(), 2);
        for vm in &mut s.vms {
            for k in 6..12 {
                vm.vcpus[k].online = false;
            }
            vm.online_vcpus = 6;
        }
        tick(&mut s, &[(0, 100), (0, 100)]);
        assert_eq!(c.step(&s).len(), 12, "bound");
        s
    }

    /// Contended from the first second: the check (every second) at which the first
    /// ballooning comes.
    fn first_balloon_s(extra: &[(&str, toml::Value)]) -> u64 {
        let mut p = vec![("poll_ms", toml::Value::Float(1000.0))];
        p.extend(extra.iter().cloned());
        let mut c = fc(&p);
        let mut s = host(12, &[(12, 256), (12, 256)]);
        assert!(c.step(&s).is_empty());
        for t in 1..=10 {
            tick(&mut s, &[(100, 100), (100, 100)]);
            let acts = c.step(&s);
            if !acts.is_empty() {
                assert_eq!(acts, vec![Action::SetOnlineVcpus { vm: 0, count: 6 }, Action::SetOnlineVcpus { vm: 1, count: 6 }]);
                return t;
            }
        }
        panic!("never ballooned");
    }

    #[test]
    fn judges_the_history_it_has_unless_told_to_wait_for_a_full_window() {
        let full = || ("window", toml::Value::String("full".into()));
        assert_eq!(first_balloon_s(&[]), 1);
        assert_eq!(first_balloon_s(&[("ple_window_buckets", toml::Value::Integer(5))]), 1);
        assert_eq!(first_balloon_s(&[full()]), 3);
        assert_eq!(first_balloon_s(&[full(), ("ple_window_buckets", toml::Value::Integer(5))]), 5);
    }

    /// The window's older buckets count as idle seconds: a vCPU contended for one second after
    /// two uncontended ones is judged over all three, so it is marked only if that second
    /// outweighs them.
    #[test]
    fn an_uncontended_past_within_the_window_dilutes_a_contended_second() {
        let mut c = fc(&[("poll_ms", toml::Value::Float(1000.0))]);
        let mut s = host(12, &[(12, 256), (12, 256)]);
        c.step(&s);
        for _ in 0..2 {
            tick(&mut s, &[(0, 100), (0, 100)]);
            assert!(c.step(&s).is_empty());
        }
        // 80 exits in 300 dispatches over the window: 0.27 per dispatch, under RATIO 0.5.
        tick(&mut s, &[(80, 100), (80, 100)]);
        assert!(c.step(&s).is_empty(), "judged over the whole window");
        // One uncontended second leaves the window: 160 exits in 300 dispatches.
        tick(&mut s, &[(80, 100), (80, 100)]);
        assert_eq!(c.step(&s).len(), 2);
    }

    #[test]
    fn reinflates_when_the_active_vms_fit_the_host_again() {
        let mut c = fc(&[("poll_ms", toml::Value::Float(1000.0))]);
        let mut s = balloon_two_vms_to_six_and_bind(&mut c);
        for vm in &mut s.vms {
            for (k, v) in vm.vcpus.iter_mut().enumerate().take(6) {
                v.affinity = Some(vec![k]);
            }
        }
        // VM 1 finishes: VM 0's 12 vCPUs fit the 12 pCPUs again.
        s.vms[1].finished = true;
        for _ in 0..4 {
            tick(&mut s, &[(0, 100), (0, 0)]);
            let acts = c.step(&s);
            if !acts.is_empty() {
                assert!(acts.contains(&Action::SetOnlineVcpus { vm: 0, count: 12 }));
                assert!(acts.contains(&Action::SetOnlineVcpus { vm: 1, count: 12 }));
                assert_eq!(acts.iter().filter(|a| matches!(a, Action::Unpin { .. })).count(), 12);
                return;
            }
        }
        panic!("never re-inflated");
    }

    #[test]
    fn never_reinflates_when_told_not_to() {
        let mut c = fc(&[("poll_ms", toml::Value::Float(1000.0)), ("reinflate", toml::Value::String("never".into()))]);
        let mut s = balloon_two_vms_to_six_and_bind(&mut c);
        s.vms[1].finished = true;
        for _ in 0..5 {
            tick(&mut s, &[(0, 100), (0, 0)]);
            assert!(c.step(&s).is_empty());
        }
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let mut m = BTreeMap::new();
        m.insert("ratio".to_string(), toml::Value::Float(-1.0));
        let e = FlexCore::from_params(&mut Params::with_prefix(&m, "controller.params")).err().unwrap();
        assert_eq!(e.path, "controller.params.ratio");
        let mut m = BTreeMap::new();
        m.insert("reinflate".to_string(), toml::Value::String("sometimes".into()));
        let e = FlexCore::from_params(&mut Params::with_prefix(&m, "controller.params")).err().unwrap();
        assert_eq!(e.path, "controller.params.reinflate");
        assert!(e.reason.contains("when_not_overcommitted"));
        let mut m = BTreeMap::new();
        m.insert("window".to_string(), toml::Value::String("partial".into()));
        let e = FlexCore::from_params(&mut Params::with_prefix(&m, "controller.params")).err().unwrap();
        assert_eq!(e.path, "controller.params.window");
        assert!(e.reason.contains("available"), "{}", e.reason);
    }

    const FLEXCORE_2VM: &str = include_str!("../../../../scenarios/flexcore-sync-heavy-2vm.toml");

    fn run(text: &str) -> crate::sim::Results {
        crate::sim::tests::run_text(text, None)
    }

    #[test]
    fn flexcore_shortens_the_sync_heavy_two_vm_case_and_cuts_ple_exits() {
        let sc = crate::scenario::from_toml_str(FLEXCORE_2VM).unwrap();
        assert_eq!(sc.controller.as_ref().map(|c| c.name.as_str()), Some("flexcore"));
        let baseline_text = FLEXCORE_2VM.replace("[controller]\nname = \"flexcore\"\n", "");
        assert!(crate::scenario::from_toml_str(&baseline_text).unwrap().controller.is_none());
        let base = run(&baseline_text);
        let flex = run(FLEXCORE_2VM);
        let done = |r: &crate::sim::Results| r.vms.iter().map(|v| v.completion_ns.unwrap()).max().unwrap();
        let ple = |r: &crate::sim::Results| r.vms.iter().map(|v| v.ple_exits).sum::<u64>();
        assert!(base.actions.is_empty());
        assert!(matches!(flex.actions[0].action, Action::SetOnlineVcpus { count: 6, .. }), "{:?}", flex.actions[0]);
        // Contended from the start: ballooned at the first check, 1 s; with a control centre
        // started with the scenario (`window = "full"`), at the first full 3 s window.
        assert_eq!(flex.actions[0].t_ms, 1000.0, "{:?}", flex.actions[0]);
        let full = run(&FLEXCORE_2VM.replace("name = \"flexcore\"\n", "name = \"flexcore\"\nparams = { window = \"full\" }\n"));
        assert_eq!(full.actions[0].t_ms, 3000.0, "{:?}", full.actions[0]);
        assert!(done(&flex) < done(&base), "completion {} vs {}", done(&flex), done(&base));
        assert!(ple(&flex) < ple(&base), "PLE exits {} vs {}", ple(&flex), ple(&base));
        // The same run again is byte-identical.
        assert_eq!(crate::sim::results_json(&flex), crate::sim::results_json(&run(FLEXCORE_2VM)));
    }
}
