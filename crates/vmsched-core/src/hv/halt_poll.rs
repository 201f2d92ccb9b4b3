//! KVM halt polling: a vCPU that executes HLT keeps its pCPU and polls for a wake-up event
//! for up to its own poll window before really blocking in the host scheduler.
//!
//! Models (`virt/kvm/kvm_main.c`: `kvm_vcpu_halt`, `grow_halt_poll_ns`,
//! `shrink_halt_poll_ns`, `kvm_vcpu_max_halt_poll_ns`; reference §8 "KVM halt poll"):
//! - each vCPU has a window `halt_poll_ns`, starting at 0 (no polling), clamped to the maximum
//!   `max_ns` (module parameter `halt_poll_ns`, x86 default `KVM_HALT_POLL_NS_DEFAULT` =
//!   200 000 ns) before use;
//! - on a halt with a window > 0 the vCPU polls: it stays on its pCPU, its time counts as
//!   `halt_poll` (on the pCPU as hypervisor time); an event during the poll (an interrupt, a
//!   thread queued on the vCPU, a granted pv lock) ends the halt at once, without the block
//!   and wake round trip through the host scheduler (no HLT block, no wake, no world switch);
//! - the poll stops when the window ends, or as soon as the pCPU's host runqueue holds another
//!   task (`kvm_vcpu_can_poll`: `single_task_running()`, `HvScheduler::single_task_running`,
//!   checked at the start and after every scheduler call, a task queued later ending the poll
//!   after `phys_ipi_ns`), or when the host scheduler runs on that pCPU (`need_resched()`); the
//!   vCPU then blocks;
//! - after the halt (a successful poll, or when a blocked vCPU runs again), with `halt_ns` the
//!   whole halt including the poll: no change if `halt_ns ≤ window`; shrink if the window is
//!   non-zero and `halt_ns > max_ns`; grow if `window < max_ns` and `halt_ns < max_ns`. Grow:
//!   `window × grow`, at least `grow_start_ns`, at most `max_ns`. Shrink: `window / shrink`
//!   (`shrink = 0`: reset to 0), and 0 if below `grow_start_ns`. Defaults `grow` 2,
//!   `grow_start_ns` 10 000, `shrink` 0 (module parameters `halt_poll_ns_grow`,
//!   `halt_poll_ns_grow_start`, `halt_poll_ns_shrink`).
//!
//! Leaves out: `vcpu_valid_wakeup` (every wake-up counts as valid), the guest-side
//! `cpuidle-haltpoll` driver, per-VM `KVM_CAP_HALT_POLL`, a halt with an event already pending
//! (the HLT exit finds it and the vCPU never halts, so no window update). Polling is on by
//! default only under `cfs` (KVM); Xen does not halt-poll.

use serde::{Deserialize, Serialize};

use crate::engine::Ns;
use crate::hv::sched::Reason;
use crate::scenario::ScenarioError;
use crate::sim::state::*;
use crate::sim::World;

/// Largest accepted window or start value (as `host.costs.*_ns`).
const MAX_NS: u64 = 1_000_000_000_000;

/// `KVM_HALT_POLL_NS_DEFAULT` on x86 (arch/x86/include/asm/kvm_host.h), reference §8.
pub const KVM_HALT_POLL_NS_DEFAULT: u64 = 200_000;

/// `hypervisor.halt_poll`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HaltPollSpec {
    /// Largest poll window (`halt_poll_ns`); 0 turns polling off. Unset: 200 000 under
    /// schedulers modelling KVM (`cfs`), 0 otherwise.
    #[serde(default)]
    pub max_ns: Option<u64>,
    /// `halt_poll_ns_grow` = 2 (virt/kvm/kvm_main.c); 0 never grows.
    #[serde(default = "d_grow")]
    pub grow: u64,
    /// `halt_poll_ns_grow_start` = 10 000 ns (virt/kvm/kvm_main.c).
    #[serde(default = "d_grow_start_ns")]
    pub grow_start_ns: u64,
    /// `halt_poll_ns_shrink` = 0, i.e. reset (virt/kvm/kvm_main.c).
    #[serde(default)]
    pub shrink: u64,
}

fn d_grow() -> u64 {
    2
}
fn d_grow_start_ns() -> u64 {
    10_000
}

impl Default for HaltPollSpec {
    fn default() -> Self {
        HaltPollSpec { max_ns: None, grow: d_grow(), grow_start_ns: d_grow_start_ns(), shrink: 0 }
    }
}

/// Effective halt-poll settings of a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct HaltPollCfg {
    pub max_ns: Ns,
    pub grow: u64,
    pub grow_start_ns: Ns,
    pub shrink: u64,
}

impl HaltPollCfg {
    pub fn new(spec: &HaltPollSpec, kvm_default: bool) -> Self {
        let max_ns = spec.max_ns.unwrap_or(if kvm_default { KVM_HALT_POLL_NS_DEFAULT } else { 0 });
        HaltPollCfg { max_ns, grow: spec.grow, grow_start_ns: spec.grow_start_ns, shrink: spec.shrink }
    }
}

pub(crate) fn validate(spec: &HaltPollSpec) -> Result<(), ScenarioError> {
    if let Some(m) = spec.max_ns {
        if m > MAX_NS {
            return Err(ScenarioError::new("hypervisor.halt_poll.max_ns", format!("must be at most 10^12 ns, got {m}")));
        }
    }
    if spec.grow > 1_000 {
        return Err(ScenarioError::new("hypervisor.halt_poll.grow", format!("must lie in [0, 1000], got {}", spec.grow)));
    }
    if spec.shrink > 1_000 {
        return Err(ScenarioError::new("hypervisor.halt_poll.shrink", format!("must lie in [0, 1000], got {}", spec.shrink)));
    }
    if spec.grow_start_ns > MAX_NS {
        return Err(ScenarioError::new(
            "hypervisor.halt_poll.grow_start_ns",
            format!("must be at most 10^12 ns, got {}", spec.grow_start_ns),
        ));
    }
    Ok(())
}

/// KVM `grow_halt_poll_ns` (clamped to the maximum, as `kvm_vcpu_halt` does before use).
pub fn grow_halt_poll(val: Ns, grow: u64, grow_start: Ns, max: Ns) -> Ns {
    if grow == 0 {
        return val.min(max);
    }
    val.saturating_mul(grow).max(grow_start).min(max)
}

/// KVM `shrink_halt_poll_ns`.
pub fn shrink_halt_poll(val: Ns, shrink: u64, grow_start: Ns) -> Ns {
    let v = if shrink == 0 { 0 } else { val / shrink };
    if v < grow_start {
        0
    } else {
        v
    }
}

/// The window update at the end of `kvm_vcpu_halt`, for a halt that lasted `halt_ns`.
pub fn update_halt_poll(cur: Ns, halt_ns: Ns, c: &HaltPollCfg) -> Ns {
    if c.max_ns == 0 {
        0
    } else if halt_ns <= cur {
        cur
    } else if cur > 0 && halt_ns > c.max_ns {
        shrink_halt_poll(cur, c.shrink, c.grow_start_ns)
    } else if cur < c.max_ns && halt_ns < c.max_ns {
        grow_halt_poll(cur, c.grow, c.grow_start_ns, c.max_ns)
    } else {
        cur
    }
}

impl World {
    /// Something would end a halt of `v` now (`kvm_vcpu_check_block`): a thread to run, an
    /// interrupt queued or pending.
    pub(crate) fn halt_has_work(&self, v: VcpuId) -> bool {
        let vc = &self.vcpus[v];
        let waiting_in_kvm_wait = vc.cur.map_or(false, |t| matches!(self.threads[t].act, Activity::PvWait { .. }));
        (vc.cur.is_some() && !waiting_in_kvm_wait) || !vc.runq.is_empty() || !vc.irq.is_empty() || !vc.pending_irq.is_empty()
    }

    /// `v` halts on `p` with nothing to do. Returns true if it polls instead of blocking.
    pub(crate) fn halt_poll_begin(&mut self, v: VcpuId, p: PcpuId) -> bool {
        let now = self.now();
        let c = self.halt_poll;
        let vc = &mut self.vcpus[v];
        vc.halt_started = Some(now);
        vc.halt_poll_ns = vc.halt_poll_ns.min(c.max_ns);
        if c.max_ns == 0 || vc.halt_poll_ns == 0 {
            return false;
        }
        vc.halt_polls += 1;
        let single = self.sched.as_ref().map_or(true, |s| s.single_task_running(p));
        if !single {
            return false;
        }
        let vc = &mut self.vcpus[v];
        vc.poll_until = Some(now + vc.halt_poll_ns);
        self.arm_exec(v);
        true
    }

    /// The execution timer of a polling vCPU fired. Returns true if the caller has nothing more
    /// to do (still polling, or the vCPU blocked); false if the poll succeeded and the vCPU
    /// continues with its work.
    pub(crate) fn halt_poll_step(&mut self, v: VcpuId) -> bool {
        let Some(until) = self.vcpus[v].poll_until else { return false };
        let RunState::Running(p) = self.vcpus[v].run else { return false };
        if self.halt_has_work(v) {
            self.halt_poll_succeeded(v);
            return false;
        }
        if self.now() < until {
            self.arm_exec(v);
            return true;
        }
        self.vcpus[v].poll_until = None;
        self.schedule(p, Reason::Block);
        self.arm_idle_tick(v);
        true
    }

    /// After a scheduler call: a poll stops as soon as another task is queued on its pCPU
    /// (`kvm_vcpu_can_poll` re-checks `single_task_running()` on every iteration). The pCPU is
    /// made to reschedule (a tickle), which ends the poll and blocks the vCPU.
    pub(crate) fn halt_poll_recheck(&mut self) {
        if self.halt_poll.max_ns == 0 {
            return;
        }
        for p in 0..self.pcpus.len() {
            let Some(v) = self.pcpus[p].cur else { continue };
            if self.vcpus[v].poll_until.is_some() && !self.sched.as_ref().map_or(true, |s| s.single_task_running(p)) {
                self.tickle(p);
            }
        }
    }

    /// End a poll because the host scheduler runs on the vCPU's pCPU (`need_resched`). Returns
    /// true if `v` was polling and now blocks: `kvm_vcpu_block` checks `kvm_vcpu_check_block`
    /// once more before its schedule(), so a wake-up that came during the poll (a pv kick's
    /// `pv_unhalted`) ends the halt instead, as a successful poll.
    pub(crate) fn halt_poll_interrupted(&mut self, v: VcpuId) -> bool {
        if self.vcpus[v].poll_until.is_none() {
            return false;
        }
        if self.halt_has_work(v) {
            self.halt_poll_succeeded(v);
            return false;
        }
        self.vcpus[v].poll_until = None;
        true
    }

    /// The poll of `v` found work: the vCPU continues.
    fn halt_poll_succeeded(&mut self, v: VcpuId) {
        self.vcpus[v].poll_until = None;
        self.vcpus[v].halt_polls_successful += 1;
        self.halt_poll_resume(v);
    }

    /// The halt of `v` ended (successful poll, or dispatched after blocking): update its window.
    pub(crate) fn halt_poll_resume(&mut self, v: VcpuId) {
        let Some(start) = self.vcpus[v].halt_started.take() else { return };
        let halt_ns = self.now() - start;
        let c = self.halt_poll;
        let vc = &mut self.vcpus[v];
        vc.halt_poll_ns = update_halt_poll(vc.halt_poll_ns, halt_ns, &c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> HaltPollCfg {
        HaltPollCfg::new(&HaltPollSpec::default(), true)
    }

    #[test]
    fn defaults_are_kvms_x86_module_parameters() {
        let c = cfg();
        assert_eq!((c.max_ns, c.grow, c.grow_start_ns, c.shrink), (200_000, 2, 10_000, 0));
        assert_eq!(HaltPollCfg::new(&HaltPollSpec::default(), false).max_ns, 0);
    }

    #[test]
    fn window_grows_from_grow_start_by_factor_up_to_the_maximum() {
        let c = cfg();
        assert_eq!(grow_halt_poll(0, 2, 10_000, 200_000), 10_000);
        assert_eq!(grow_halt_poll(10_000, 2, 10_000, 200_000), 20_000);
        assert_eq!(grow_halt_poll(160_000, 2, 10_000, 200_000), 200_000);
        assert_eq!(grow_halt_poll(50_000, 0, 10_000, 200_000), 50_000, "grow 0 never grows");
        // Halts a little longer than the window (but shorter than the maximum) grow it step by
        // step: 0 -> 10 -> 20 -> 40 -> 80 -> 160 -> 200 µs (capped), then it stays.
        let mut w = 0;
        let mut seen = vec![];
        for _ in 0..7 {
            w = update_halt_poll(w, (w + 5_000).min(199_000), &c);
            seen.push(w);
        }
        assert_eq!(seen, vec![10_000, 20_000, 40_000, 80_000, 160_000, 200_000, 200_000]);
    }

    #[test]
    fn long_halts_reset_the_window_and_halts_within_it_keep_it() {
        let c = cfg();
        assert_eq!(update_halt_poll(40_000, 30_000, &c), 40_000, "woken within the window: unchanged");
        assert_eq!(update_halt_poll(40_000, 250_000, &c), 0, "longer than max: shrink 0 resets");
        assert_eq!(update_halt_poll(0, 250_000, &c), 0, "no window, long halt: stays off");
        assert_eq!(update_halt_poll(200_000, 200_000, &c), 200_000);
        let div = HaltPollCfg { shrink: 2, ..c };
        assert_eq!(update_halt_poll(80_000, 250_000, &div), 40_000);
        assert_eq!(shrink_halt_poll(15_000, 2, 10_000), 0, "below grow_start: off");
        let off = HaltPollCfg { max_ns: 0, ..c };
        assert_eq!(update_halt_poll(40_000, 1_000, &off), 0);
    }
}
