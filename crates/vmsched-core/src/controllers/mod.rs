//! The control plane: controllers that watch a host at a fixed interval of simulated time and
//! act on it, the way a management daemon beside the hypervisor would.
//!
//! A controller sees only `HostStats` — cumulative per-vCPU, per-VM and per-pCPU counters of
//! the kind a real host exposes — and answers with `Action`s. Nothing here refers to simulator
//! internals, so the same controller can later drive a real KVM/libvirt host. The mapping of
//! each counter and action to what a real host offers:
//!
//! | here | KVM/libvirt | Xen |
//! |---|---|---|
//! | `run_ns` | `virDomainGetVcpus` cpuTime, `/proc/<tid>/schedstat` field 1 | `xl vcpu-list` Time |
//! | `steal_ns` | schedstat field 2 (run delay) | runstate `RUNSTATE_runnable` |
//! | `dispatches` | schedstat field 3 (timeslices run) | `vcpu_runstate_info` changes |
//! | `ple_exits` | `kvm:kvm_exit` tracepoint, reason PAUSE_INSTRUCTION | `xentrace` TRC_HVM_PAUSE |
//! | `SetOnlineVcpus` | `virsh setvcpus --guest` (guest agent CPU hotplug) | `xl vcpu-set` |
//! | `Pin`/`Unpin` | `virsh vcpupin` | `xl vcpu-pin` |
//! | `SetWeight`/`SetCap` | cgroup `cpu.weight`/`cpu.max` (`virsh schedinfo`) | `xl sched-credit -w/-c` |
//!
//! Costs and latencies: an online-count change is carried out by the guest's hotplug agent
//! (`guest::hotplug`), which takes the seed's measured hotplug time per vCPU; pinning, weight
//! and cap changes take effect at once (they are a system call or a hypercall in reality) and the
//! scheduler applies them at its next decision. What is left out: failures of actions on a real
//! host (a guest that refuses to unplug); the simulator applies every valid action.

pub mod flexcore;
pub mod flexw;

use serde::{Deserialize, Serialize};

use crate::engine::Ns;
use crate::scenario::{ControllerSpec, ScenarioError};

/// What a controller sees at each interval. Counters are cumulative since the start of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostStats {
    pub now_ns: Ns,
    pub pcpus: Vec<PcpuStats>,
    pub vms: Vec<VmStats>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PcpuStats {
    /// NUMA node of the pCPU.
    pub node: u32,
    /// Time spent running vCPUs (guest plus hypervisor work on their behalf). A background
    /// spin (`host.background`) is neither busy nor idle time.
    pub busy_ns: Ns,
    /// Time with nothing to run, outside background spins.
    pub idle_ns: Ns,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VmStats {
    pub name: String,
    pub weight: u32,
    /// Cap in percent of one pCPU (0 = none).
    pub cap_pct: u32,
    /// Online vCPUs in the guest right now.
    pub online_vcpus: u32,
    /// Whether the VM's workload has finished.
    pub finished: bool,
    pub vcpus: Vec<VcpuStats>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VcpuStats {
    pub online: bool,
    /// "running", "runnable", "halted" or "offline".
    pub state: String,
    /// The pCPU it runs on, or last ran on.
    pub pcpu: usize,
    /// Hard affinity (None = any pCPU).
    pub affinity: Option<Vec<usize>>,
    pub run_ns: Ns,
    /// Time runnable but waiting for a pCPU.
    pub steal_ns: Ns,
    /// Times dispatched onto a pCPU.
    pub dispatches: u64,
    /// Pause-loop exits.
    pub ple_exits: u64,
}

impl VmStats {
    pub fn cpu_ns(&self) -> Ns {
        self.vcpus.iter().map(|v| v.run_ns).sum()
    }
}

/// A request from a controller. VMs and vCPUs are addressed by index (VM order of the scenario,
/// vCPU index inside the VM).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Hot-(un)plug vCPUs in the guest until `count` are online: the highest indices go first,
    /// vCPU 0 never goes. Takes the guest's hotplug time.
    SetOnlineVcpus { vm: usize, count: u32 },
    /// Restrict a vCPU to these pCPUs (one pCPU = bind).
    Pin { vm: usize, vcpu: u32, pcpus: Vec<usize> },
    /// Let a vCPU run anywhere.
    Unpin { vm: usize, vcpu: u32 },
    SetWeight { vm: usize, weight: u32 },
    /// Percent of one pCPU; 0 removes the cap.
    SetCap { vm: usize, cap_pct: u32 },
}

/// `SetWeight` takes the scenario's weight range (Xen credit's `xl sched-credit -w`).
pub use crate::scenario::MAX_WEIGHT;

impl Action {
    /// Check an action against the host it is meant for; an error is (field, reason).
    pub fn validate(&self, host: &HostStats) -> Result<(), (&'static str, String)> {
        let vm_of = |vm: usize| {
            host.vms.get(vm).ok_or_else(|| ("vm", format!("no VM {vm} (the host has {} VMs)", host.vms.len())))
        };
        let vcpu_of = |vm: usize, vcpu: u32| -> Result<(), (&'static str, String)> {
            let n = vm_of(vm)?.vcpus.len();
            if vcpu as usize >= n {
                return Err(("vcpu", format!("VM {vm} has {n} vCPUs, got {vcpu}")));
            }
            Ok(())
        };
        match self {
            Action::SetOnlineVcpus { vm, count } => {
                let n = vm_of(*vm)?.vcpus.len() as u32;
                if *count == 0 || *count > n {
                    return Err(("count", format!("must be between 1 and the VM's {n} vCPUs, got {count}")));
                }
            }
            Action::Pin { vm, vcpu, pcpus } => {
                vcpu_of(*vm, *vcpu)?;
                if pcpus.is_empty() {
                    return Err(("pcpus", "must name at least one pCPU (use unpin to allow all)".into()));
                }
                if let Some(p) = pcpus.iter().find(|&&p| p >= host.pcpus.len()) {
                    return Err(("pcpus", format!("no pCPU {p} (the host has {})", host.pcpus.len())));
                }
            }
            Action::Unpin { vm, vcpu } => vcpu_of(*vm, *vcpu)?,
            Action::SetWeight { vm, weight } => {
                vm_of(*vm)?;
                if *weight == 0 || *weight > MAX_WEIGHT {
                    return Err(("weight", format!("must be between 1 and {MAX_WEIGHT}, got {weight}")));
                }
            }
            Action::SetCap { vm, cap_pct } => {
                let n = vm_of(*vm)?.vcpus.len() as u32;
                if *cap_pct > 100 * n {
                    return Err(("cap_pct", format!("must be ≤ {} (100 per vCPU; 0 = no cap), got {cap_pct}", 100 * n)));
                }
            }
        }
        Ok(())
    }
}

/// A control policy. `step` runs every `interval_ns` of simulated time, first at `interval_ns`.
pub trait Controller: Send {
    fn name(&self) -> &'static str;
    fn interval_ns(&self) -> Ns;
    fn step(&mut self, stats: &HostStats) -> Vec<Action>;
}

/// Pin each VM's online vCPUs one-to-one onto pCPUs: VMs take consecutive pCPU ranges in VM
/// order (so a VM stays inside a socket when it fits), in vCPU order. Returns `None` when the
/// online vCPUs outnumber the pCPUs.
pub fn bind_one_to_one(host: &HostStats) -> Option<Vec<Action>> {
    let mut next = 0usize;
    let mut out = Vec::new();
    for (i, vm) in host.vms.iter().enumerate() {
        for (k, v) in vm.vcpus.iter().enumerate() {
            if !v.online {
                continue;
            }
            if next >= host.pcpus.len() {
                return None;
            }
            out.push(Action::Pin { vm: i, vcpu: k as u32, pcpus: vec![next] });
            next += 1;
        }
    }
    Some(out)
}

/// Build a built-in controller from the scenario's `[controller]` table.
pub fn build(spec: &ControllerSpec) -> Result<Box<dyn Controller>, ScenarioError> {
    let mut p = crate::hv::sched::Params::with_prefix(&spec.params, "controller.params");
    let c: Box<dyn Controller> = match spec.name.as_str() {
        "flexcore" => Box::new(flexcore::FlexCore::from_params(&mut p)?),
        "flexw" => Box::new(flexw::FlexW::from_params(&mut p)?),
        other => {
            let known: Vec<&str> = catalog().iter().map(|c| c.0).collect();
            return Err(ScenarioError::new("controller.name", format!("unknown controller `{other}` (known: {})", known.join(", "))));
        }
    };
    p.finish(&spec.name)?;
    Ok(c)
}

pub fn catalog() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        (
            "flexcore",
            "FlexCore vCPU ballooning: PLE-based contention detection, weight-proportional vCPU counts, guest hotplug, 1:1 binding",
            "seed 000_e4beefc956462be7.txt §3",
        ),
        (
            "flexw",
            "Flex's FlexW as a controller: every 30 ms, VM lag against GPS shares of the measured demand (run + steal) compounds into real-time VM weights (SetWeight, gain 0.25), reset every 10 s; the seed's in-accounting FlexW is credit's flexw option",
            "seed 002_4e0f89b222427189.txt (FlexW Design, Practical Considerations)",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn host(pcpus: usize, vms: &[(u32, u32)]) -> HostStats {
        HostStats {
            now_ns: 0,
            pcpus: (0..pcpus).map(|_| PcpuStats { node: 0, busy_ns: 0, idle_ns: 0 }).collect(),
            vms: vms
                .iter()
                .enumerate()
                .map(|(i, &(n, w))| VmStats {
                    name: format!("vm{i}"),
                    weight: w,
                    cap_pct: 0,
                    online_vcpus: n,
                    finished: false,
                    vcpus: (0..n)
                        .map(|k| VcpuStats {
                            online: true,
                            state: "running".into(),
                            pcpu: k as usize % pcpus,
                            affinity: None,
                            run_ns: 0,
                            steal_ns: 0,
                            dispatches: 0,
                            ple_exits: 0,
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn actions_are_checked_against_the_host_and_name_the_field() {
        let h = host(4, &[(2, 256)]);
        let bad = [
            (Action::SetOnlineVcpus { vm: 0, count: 0 }, "count:"),
            (Action::SetOnlineVcpus { vm: 0, count: 3 }, "count:"),
            (Action::SetOnlineVcpus { vm: 1, count: 1 }, "vm:"),
            (Action::Pin { vm: 0, vcpu: 2, pcpus: vec![0] }, "vcpu:"),
            (Action::Pin { vm: 0, vcpu: 0, pcpus: vec![] }, "pcpus:"),
            (Action::Pin { vm: 0, vcpu: 0, pcpus: vec![4] }, "pcpus:"),
            (Action::SetWeight { vm: 0, weight: 0 }, "weight:"),
            (Action::SetCap { vm: 0, cap_pct: 201 }, "cap_pct:"),
        ];
        for (a, field) in bad {
            let e = a.validate(&h).unwrap_err();
            assert_eq!(format!("{}:", e.0), field, "{a:?}: {e:?}");
            assert!(!e.1.is_empty());
        }
        assert!(Action::Pin { vm: 0, vcpu: 1, pcpus: vec![3] }.validate(&h).is_ok());
        assert!(Action::SetCap { vm: 0, cap_pct: 200 }.validate(&h).is_ok());
    }

    #[test]
    fn actions_round_trip_through_json_with_a_tag() {
        let a = Action::Pin { vm: 1, vcpu: 2, pcpus: vec![3] };
        let s = serde_json::to_string(&a).unwrap();
        assert_eq!(s, r#"{"action":"pin","vm":1,"vcpu":2,"pcpus":[3]}"#);
        assert_eq!(serde_json::from_str::<Action>(&s).unwrap(), a);
        assert!(serde_json::from_str::<Action>(r#"{"action":"pin","vm":1,"vcpu":2,"pcpus":[3],"x":1}"#).is_err());
    }

    #[test]
    fn one_to_one_binding_gives_each_online_vcpu_its_own_pcpu() {
        let mut h = host(12, &[(12, 512), (12, 256)]);
        for k in 8..12 {
            h.vms[0].vcpus[k].online = false;
        }
        for k in 4..12 {
            h.vms[1].vcpus[k].online = false;
        }
        let pins = bind_one_to_one(&h).unwrap();
        assert_eq!(pins.len(), 12);
        let mut used: Vec<usize> = pins
            .iter()
            .map(|a| match a {
                Action::Pin { pcpus, .. } => pcpus[0],
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(pins[8], Action::Pin { vm: 1, vcpu: 0, pcpus: vec![8] });
        used.sort();
        used.dedup();
        assert_eq!(used.len(), 12);
        let all = host(4, &[(3, 1), (2, 1)]);
        assert!(bind_one_to_one(&all).is_none());
    }
}
