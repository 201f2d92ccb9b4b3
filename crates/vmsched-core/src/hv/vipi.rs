//! How a virtual IPI reaches a running vCPU, and the guest timer tick of busy vCPUs.
//!
//! Models (seed 004 §5.4 and §6.3, VMkit on Barrelfish):
//! - `ipi` (default, today's KVM/Xen behaviour and VMkit's final design): the sending side
//!   accompanies the virtual IPI with a physical IPI; the target pCPU leaves the guest after
//!   `phys_ipi_ns` with an external-interrupt exit and injects the handler
//!   (`hv/machine.rs deliver_irq`, `vipi_arrive`).
//! - `polling` (VMkit's first design, Barrelfish UMP messages without notification): the
//!   message waits in the target's mailbox until its VMM polls, which happens only when the
//!   vCPU next leaves the guest for another reason: any exit (HLT, PLE, I/O, IPI send, an
//!   external interrupt such as a guest timer tick), a scheduler invocation at a time-slice
//!   boundary, or its next dispatch. Polling costs nothing beyond the exit that was taken
//!   anyway. "There were in fact many [IPIs] and some of them needed almost 80ms, which is the
//!   interrupt period of the hardware timer, to reach their destination" (seed 004 §6.3).
//! - Busy guest timer tick (`vms[].guest.busy_tick`): the guest's LAPIC timer fires every
//!   `tick_us`; on a vCPU that is running guest code it costs an external-interrupt exit
//!   (`exit_ext_intr_ns`) and the tick handler (`irq_handler_ns`), and the exit polls the
//!   mailbox. A descheduled vCPU gets one pending tick (Linux catches up on jiffies in one
//!   tick); a halted vCPU gets ticks only without tickless idle (`tickless = false`,
//!   `guest/kernel.rs guest_tick`).
//!
//! Choices where the seed is vague: only running targets are affected by `polling`. A halted
//! target's VMM is not inside the guest and its poll loop sees the message at once, so it is
//! woken as with `ipi`; a descheduled target finds the message when it is next dispatched in
//! both modes.
//!
//! Leaves out: the cost of the polling loop itself, Barrelfish's 80 ms kernel time slice
//! (the guest's own tick period `tick_us` bounds the delay when `busy_tick` is on), a
//! physical-IPI latency that depends on the NUMA distance.

use serde::{Deserialize, Serialize};

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
}

impl World {
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

    /// A guest timer tick on vCPU `v` (busy-tick guests). Running guest code: an
    /// external-interrupt exit and the tick handler. Descheduled: one pending tick. Halted or
    /// running idle (about to halt): nothing here.
    pub(crate) fn busy_tick(&mut self, v: VcpuId) {
        let now = self.now();
        let tick = IrqWork { left_ns: self.costs.irq_handler_ns, action: IrqAction::Tick, sent_at: now };
        match self.vcpus[v].run {
            RunState::Running(_) if self.vcpus[v].cur.is_some() && !self.vcpus[v].halt_pending => {
                self.advance(v);
                let c = self.costs.exit_ns(ExitReason::ExtIntr);
                let vc = &mut self.vcpus[v];
                vc.count_exit(ExitReason::ExtIntr);
                vc.hv_debt_ns += c;
                vc.irq.push_back(tick);
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
