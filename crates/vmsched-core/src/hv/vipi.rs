//! How a virtual IPI reaches a running vCPU, and the guest timer tick of busy vCPUs.
//!
//! Models (seed 004 §5.4, §6.1 and §6.3, VMkit on Barrelfish):
//! - `ipi` (default, today's KVM/Xen behaviour and VMkit's final design): the sending side
//!   accompanies the virtual IPI with a physical IPI; the target pCPU leaves the guest after
//!   `phys_ipi_ns` with an external-interrupt exit and injects the handler
//!   (`hv/machine.rs deliver_irq`, `vipi_arrive`). A halted target is woken at once.
//! - `polling` (VMkit's first design, Barrelfish UMP messages without notification): the
//!   message waits in the target's mailbox until its VMM polls. "There is no way to poll while
//!   the VM is running" (§6.3): a running target's VMM sees it at the vCPU's next exit (HLT,
//!   PLE, I/O, IPI send, a guest timer tick with `busy_tick`, a scheduler invocation), at the
//!   latest at the host timer interrupt that ends the kernel time slice
//!   (`hypervisor.vmm_timeslice_ms`, 80 ms in Barrelfish), which exits the VM. A halted
//!   target's VMM has given its pCPU back to the host kernel (§6.1: the VMM "execute[s] the
//!   `hlt` instruction", leaving the domain "in a state suitable for rescheduling"); Barrelfish
//!   looks at a dispatcher's UMP channels and deferred events only when it runs it again
//!   (lib/barrelfish/dispatch.c `disp_run` triggers deferred events on each upcall;
//!   lib/barrelfish/waitset.c `poll_channels_disabled` polls the UMP channels), which for an
//!   idle core is the next timer interrupt (kernel/arch/x86_64/init.c programs the APIC timer
//!   to `kernel_timeslice`). So a halted target wakes at the next time-slice boundary: "the
//!   delay between interrupt detection and interrupt handling can be as high as 80ms, which is
//!   the duration of Barrelfish's scheduling period" (§6.1); IPIs "needed almost 80ms, which
//!   is the interrupt period of the hardware timer, to reach their destination" (§6.3). This
//!   covers every IPI the guest sends to a halted vCPU: function calls (TLB shootdowns, which
//!   the sender spins on, `guest/mm.rs`) and the reschedule IPI that wakes an idle vCPU for a
//!   woken thread (`guest/kernel.rs wake_thread`). Polling costs nothing beyond the exits.
//! - `posted` (Intel APICv's posted interrupts with virtual-interrupt delivery, AMD AVIC; on
//!   by default where the hardware has them, KVM's `enable_apicv`, Xen's posted interrupts):
//!   the sender sets the interrupt in the target's posted-interrupt descriptor and sends the
//!   notification vector; a running target's processor takes it without a VM exit
//!   (`vmx_deliver_posted_interrupt`, arch/x86/kvm/vmx/vmx.c), so the handler starts
//!   `phys_ipi_ns` after the send with no `ext_intr` exit, and its EOI is virtualised (no
//!   `exit_apic_eoi_ns`). A descheduled target keeps the interrupt in its descriptor until its
//!   next VM entry; while it waits, Linux 5.3+'s directed yield counts it as a candidate even
//!   when preempted in user mode (`kvm_arch_dy_has_pending_interrupt`; `VcpuFacts::pi_pending`,
//!   `hv/sched/cfs.rs`, with `hypervisor.ple.boost_woken`). A halted target is woken by the
//!   wake-up vector as under `ipi`. The sender's ICR write still exits (no IPI virtualisation,
//!   which Sapphire Rapids added), as do the host's timer interrupts (busy ticks).
//! - Busy guest timer tick (`vms[].guest.busy_tick`): the guest's LAPIC timer fires every
//!   `tick_us`; on a vCPU that is running guest code it costs an external-interrupt exit
//!   (`exit_ext_intr_ns`) and the tick handler (`irq_handler_ns`), and the exit polls the
//!   mailbox. A descheduled vCPU gets one pending tick (Linux catches up on jiffies in one
//!   tick); a halted vCPU gets ticks only without tickless idle (`tickless = false`,
//!   `guest/kernel.rs guest_tick`).
//!
//! Choices where the seed is vague: time-slice boundaries fall on multiples of
//! `vmm_timeslice_ms` on every pCPU (the phase `hv/background.rs` also uses for the seed's
//! 80 ms timer, §7.5.1). A descheduled (runnable) target finds the message when it is next
//! dispatched in both modes. Timer and device wake-ups of a halted vCPU (`waker = None`) stay
//! immediate: the model's guest timers are not VMkit's deferred events.
//!
//! Leaves out: the cost of the polling loop itself, the host timer interrupt's exit when no
//! message waits (one exit per 80 ms), Barrelfish's slow guest timer (§6.3 "Timer Issues":
//! the guest's 10 ms tick arrives every 80 ms; set `busy_tick` with `tick_us = 80000`, or
//! stretch the guest's tick-driven slice and balance as `reproduce/vmkit.py` does), a
//! physical-IPI latency that depends on the NUMA distance (`hv::xsocket` charges the message's
//! line across sockets, not the interrupt itself).

use serde::{Deserialize, Serialize};

use crate::engine::Ns;
use crate::host::ExitReason;
use crate::sim::state::*;
use crate::sim::{Ev, World};

/// `hypervisor.vipi_delivery`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VipiDelivery {
    /// A physical IPI forces the running target out of the guest (seed 004 §5.4).
    #[default]
    Ipi,
    /// The target sees the message only at its next VM exit (seed 004 §6.3).
    Polling,
    /// Posted interrupts (APICv): the notification IPI is taken by a running target without
    /// leaving the guest.
    Posted,
}

/// Barrelfish's kernel time slice, the period of its timer interrupt: 80 ms (seed 004 §6.3
/// "The time slice is currently 80ms in Barrelfish"; §7.5.1 "The hardware timer fires every
/// 80ms").
pub fn default_vmm_timeslice_ms() -> u64 {
    80
}

/// `hypervisor.vmm_timeslice_ms`.
pub fn validate_timeslice(ms: u64) -> Result<(), crate::scenario::ScenarioError> {
    if !(1..=10_000).contains(&ms) {
        return Err(crate::scenario::ScenarioError::new(
            "hypervisor.vmm_timeslice_ms",
            format!("must lie in 1..=10000 ms (Barrelfish uses 80), got {ms}"),
        ));
    }
    Ok(())
}

/// The first time-slice boundary (host timer interrupt) strictly after `now`.
pub fn next_timeslice_boundary_ns(now: Ns, timeslice_ns: Ns) -> Ns {
    (now / timeslice_ns + 1) * timeslice_ns
}

impl World {
    /// `polling`: leave `work` in the mailbox of running or halted vCPU `v`; its VMM sees it
    /// at the vCPU's next exit or, at the latest, at the next host timer interrupt.
    pub(crate) fn mailbox_post(&mut self, v: VcpuId, work: IrqWork) {
        self.vcpus[v].pending_irq.push(work);
        let at = next_timeslice_boundary_ns(self.now(), self.vmm_timeslice_ns);
        if self.vcpus[v].vmm_poll_timer.armed_at().map_or(true, |t| t > at) {
            self.q.arm(&mut self.vcpus[v].vmm_poll_timer, at, Ev::VmmPoll(v));
        }
    }

    /// A woken thread was queued on idle vCPU `v` by another vCPU. Under `polling` a halted
    /// `v` sees the reschedule IPI only when its VMM polls (true: the caller must not wake
    /// it); the IPI's handler is the `schedule()` that picks the thread, so the message
    /// carries no handler time of its own.
    pub(crate) fn wake_ipi_polled(&mut self, v: VcpuId) -> bool {
        if !self.vipi_is_polled() || self.vcpus[v].run != RunState::Blocked {
            return false;
        }
        let now = self.now();
        self.mailbox_post(v, IrqWork { left_ns: 0, action: IrqAction::Nothing, sent_at: now });
        true
    }

    /// The host timer interrupt on the pCPU of vCPU `v` (or, for a halted `v`, the kernel
    /// upcall of its VMM's dispatcher): the VMM polls its mailbox.
    pub(crate) fn vmm_poll(&mut self, v: VcpuId) {
        if self.vcpus[v].pending_irq.is_empty() {
            return;
        }
        match self.vcpus[v].run {
            RunState::Running(_) => self.charge_exit(v, ExitReason::ExtIntr),
            RunState::Blocked => self.hv_wake(v),
            RunState::Runnable | RunState::Offline => {}
        }
    }

    /// The VMM of running vCPU `v` looks at its mailbox during an exit it takes anyway: any
    /// message left there by `polling` delivery is injected (runs after the exit's cost).
    /// Under `ipi` delivery the mailbox of a running vCPU is always empty.
    pub(crate) fn poll_mailbox(&mut self, v: VcpuId) {
        if self.vcpus[v].pending_irq.is_empty() || self.vcpus[v].running_on().is_none() {
            return;
        }
        self.advance(v);
        let pending = std::mem::take(&mut self.vcpus[v].pending_irq);
        self.vcpus[v].irq.extend(pending);
        self.arm_exec(v);
    }

    /// Whether a virtual interrupt for running vCPU `v` waits for its next exit.
    pub(crate) fn vipi_is_polled(&self) -> bool {
        self.vipi_delivery == VipiDelivery::Polling
    }

    /// Whether virtual interrupts are posted (APICv): no exit to take them, EOI virtualised.
    pub(crate) fn vipi_is_posted(&self) -> bool {
        self.vipi_delivery == VipiDelivery::Posted
    }

    /// A guest timer tick on vCPU `v` (busy-tick guests). Running guest code: an
    /// external-interrupt exit and the tick handler. Descheduled: one pending tick. Halted or
    /// running idle (about to halt): nothing here.
    pub(crate) fn busy_tick(&mut self, v: VcpuId) {
        let now = self.now();
        let tick = IrqWork { left_ns: self.costs.irq_handler_ns, action: IrqAction::Tick, sent_at: now };
        match self.vcpus[v].run {
            RunState::Running(_) if self.vcpus[v].cur.is_some() && !self.vcpus[v].halt_pending => {
                self.advance(v);
                self.count_exit(v, ExitReason::ExtIntr);
                self.owe_hv(v, Some(ExitReason::ExtIntr), self.costs.exit_ext_intr_ns);
                self.vcpus[v].irq.push_back(tick);
                self.arm_exec(v);
                self.poll_mailbox(v);
            }
            RunState::Runnable => {
                if !self.vcpus[v].pending_irq.iter().any(|w| w.action == IrqAction::Tick) {
                    self.vcpus[v].pending_irq.push(tick);
                }
            }
            _ => {}
        }
    }

    /// Re-arm the periodic tick of a busy-tick guest's vCPU at the next multiple of `tick_us`.
    pub(crate) fn arm_busy_tick(&mut self, v: VcpuId) {
        let vm = &self.vms[self.vcpus[v].vm];
        if !vm.busy_tick || !self.vcpus[v].online {
            return;
        }
        let tick = vm.tick_ns;
        let at = (self.now() / tick + 1) * tick;
        self.q.arm(&mut self.vcpus[v].tick_timer, at, Ev::GuestTick(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::from_toml_str;
    use crate::sim::{Overrides, Results, Simulation};

    #[test]
    fn the_vmm_polls_at_the_next_timeslice_boundary_strictly_after_now() {
        let ts = 80_000_000;
        assert_eq!(next_timeslice_boundary_ns(0, ts), 80_000_000);
        assert_eq!(next_timeslice_boundary_ns(79_999_999, ts), 80_000_000);
        assert_eq!(next_timeslice_boundary_ns(80_000_000, ts), 160_000_000);
    }

    #[test]
    fn a_timeslice_outside_1_to_10000_ms_is_rejected_naming_the_field() {
        assert!(validate_timeslice(1).is_ok() && validate_timeslice(80).is_ok());
        for bad in [0, 10_001] {
            let e = validate_timeslice(bad).unwrap_err().to_string();
            assert!(e.contains("hypervisor.vmm_timeslice_ms"), "{e}");
        }
        let text = "[host]\ncores_per_socket = 1\n[hypervisor]\nvmm_timeslice_ms = 0\n[[vms]]\nvcpus = 1\n[[vms.workloads]]\nkind = \"hog\"\n";
        let e = from_toml_str(text).unwrap_err().to_string();
        assert!(e.contains("hypervisor.vmm_timeslice_ms"), "{e}");
    }

    /// Thread A on vCPU0 computes 1 ms and sends a function-call IPI (it spins until the
    /// handler ran) to vCPU1, which is halted all along.
    fn call_to_halted(delivery: &str, timeslice_ms: u64) -> Results {
        let text = format!(
            r#"
[host]
cores_per_socket = 2
[hypervisor]
vipi_delivery = "{delivery}"
vmm_timeslice_ms = {timeslice_ms}
[[vms]]
vcpus = 2
pin = [0, 1]
[[vms.workloads]]
kind = "custom"
groups = [{{ threads = 1, affinity = [0], bind = true, program = [{{ op = "compute", us = 1000 }}, {{ op = "call_all" }}] }}]
"#
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).expect("builds").run().expect("runs")
    }

    #[test]
    fn a_halted_target_sees_a_polled_vipi_at_the_next_timeslice_boundary_and_an_ipi_at_once() {
        let c = crate::host::CostParams::default();
        let ipi = call_to_halted("ipi", 80);
        let h = &ipi.vms[0].vipi_latency;
        assert_eq!(h.count, 1);
        // Woken at once: the wake-up and world switch, then the handler; far below 1 ms.
        assert!(h.max_ns >= c.ipi_handler_ns && h.max_ns < 100_000, "ipi: {} ns", h.max_ns);
        for ts_ms in [80, 20] {
            let polled = call_to_halted("polling", ts_ms);
            let h = &polled.vms[0].vipi_latency;
            assert_eq!(h.count, 1);
            // Sent at about 1 ms; the VMM of halted vCPU1 runs again at the boundary.
            let wait = ts_ms * 1_000_000 - 1_000_000;
            assert!((wait - 50_000..wait + 100_000).contains(&h.max_ns), "polling, {ts_ms} ms slices: {} ns", h.max_ns);
            // The sender spun for it all along.
            assert!(polled.vms[0].completion_ns.unwrap() > ts_ms * 1_000_000);
        }
    }
}
