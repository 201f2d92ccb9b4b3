//! Guest address spaces: which vCPUs may hold a process's translations (`mm_cpumask`), lazy
//! TLB mode, and the TLB shootdowns that fork, the last exit of an address space and
//! `shootdown` ops send to those vCPUs.
//!
//! Models (Linux x86 guest; seed 004 §7.2 "during process creation an IPI was triggered"):
//! - `switch_mm`: a vCPU that switches to a thread of another address space leaves the old
//!   one's `mm_cpumask` and joins the new one's (2.6.32 `arch/x86/include/asm/mmu_context.h
//!   switch_mm`; 4.x `arch/x86/mm/tlb.c switch_mm_irqs_off`, "Stop remote flushes for the
//!   previous mm").
//! - Lazy TLB: a vCPU that goes idle keeps the last address space loaded (`active_mm`,
//!   `enter_lazy_tlb`) and stays in its mask. A flush IPI makes it leave (`leave_mm`; 4.x
//!   `flush_tlb_func_common` switches a lazy CPU to `init_mm`), so a lazy vCPU takes at most
//!   one flush IPI per address space.
//! - `flush_tlb_mm_range`: the sender flushes locally and, if another vCPU is in the mask,
//!   sends function-call IPIs to all of them and spins until every handler ran
//!   (`native_flush_tlb_others` → `smp_call_function_many(..., wait = 1)`, reference §4.9-4.10).
//! - fork: `dup_mmap` write-protects the parent's private pages for copy-on-write and ends with
//!   `flush_tlb_mm(oldmm)` (kernel/fork.c), before the child is woken (`wake_up_new_task`).
//!   Threads (`share_mm`) share the address space and flush nothing.
//! - exit: `exit_mm` → `mmput`; the last user's `exit_mmap` unmaps everything and
//!   `tlb_finish_mmu` flushes the address space on its mask (mm/mmap.c, mm/memory.c). The
//!   exiting vCPU is lazy on it by then and is not a target.
//!
//! Choices: every shootdown goes to the whole mask, lazy vCPUs included, as in 2.6.32
//! (the seed's guest, seed 004 §7.1) up to 4.18. Since 4.19 a flush that frees no page tables
//! skips lazy CPUs (`tlb_is_not_lazy`), but fork's `flush_tlb_mm` and `exit_mmap` free page
//! tables and still reach them. A halted lazy target is woken by the IPI (a wake-up round trip
//! through the hypervisor) at once with `vipi_delivery = "ipi"`, at the next host time slice
//! with `"polling"` (`hv::vipi`), while the sender spins.
//!
//! Leaves out: exec (a forked child runs its program in the fresh address space of the
//! fork), copy-on-write faults and their single-page flushes, PCID/ASIDs, 6.x's
//! once-a-second `mm_cpumask` trimming, CPU offline clearing the masks (offline vCPUs are
//! never targets).

use std::collections::{BTreeMap, BTreeSet};

use crate::sim::state::*;
use crate::sim::World;

/// Per-VM address-space bookkeeping.
#[derive(Debug, Default)]
pub struct VmMm {
    /// Address space → vCPUs in its `mm_cpumask`.
    cpumask: BTreeMap<usize, BTreeSet<VcpuId>>,
    /// Address space → live threads using it (`mm_users`).
    users: BTreeMap<usize, u32>,
}

impl VmMm {
    pub fn add_user(&mut self, mm: usize) {
        *self.users.entry(mm).or_default() += 1;
    }

    /// Drop a user; true if it was the last one.
    fn drop_user(&mut self, mm: usize) -> bool {
        let n = self.users.entry(mm).or_default();
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.users.remove(&mm);
            true
        } else {
            false
        }
    }

    fn leave(&mut self, mm: usize, v: VcpuId) {
        if let Some(s) = self.cpumask.get_mut(&mm) {
            s.remove(&v);
            if s.is_empty() {
                self.cpumask.remove(&mm);
            }
        }
    }

}

impl World {
    /// Thread `t` becomes current on vCPU `v`: load its address space.
    pub(crate) fn switch_mm(&mut self, v: VcpuId, t: ThreadId) {
        let mm = self.threads[t].mm;
        let vm = self.vcpus[v].vm;
        match self.vcpus[v].loaded_mm {
            // Already in this mm's cpumask (a flush that removes it also clears loaded_mm).
            Some(old) if old == mm => return,
            Some(old) => self.vms[vm].mm.leave(old, v),
            None => {}
        }
        self.vms[vm].mm.cpumask.entry(mm).or_default().insert(v);
        self.vcpus[v].loaded_mm = Some(mm);
    }

    /// `flush_tlb_mm_range` of `mm` by thread `t`: IPIs to every other online vCPU in the mask
    /// (pv TLB flush may defer some). Returns true if `t` now waits for acknowledgements.
    pub(crate) fn flush_tlb_mm(&mut self, t: ThreadId, mm: usize) -> bool {
        let v = self.threads[t].vcpu;
        let vm = self.threads[t].vm;
        let targets: Vec<VcpuId> = self.vms[vm]
            .mm
            .cpumask
            .get(&mm)
            .map(|s| s.iter().copied().filter(|&u| u != v && self.vcpus[u].online).collect())
            .unwrap_or_default();
        let targets = self.pv_filter_flush_targets(vm, targets);
        self.send_call(t, targets, Some(mm))
    }

    /// `exit_mm` of thread `t`: the last user of the address space unmaps it and flushes it
    /// everywhere it may be cached. Returns true if `t` waits for acknowledgements.
    pub(crate) fn exit_mm(&mut self, t: ThreadId) -> bool {
        let vm = self.threads[t].vm;
        let mm = self.threads[t].mm;
        if !self.vms[vm].mm.drop_user(mm) {
            return false;
        }
        self.flush_tlb_mm(t, mm)
    }

    /// The flush handler of `mm` ran on vCPU `v`: a lazy vCPU (not running a thread of `mm`)
    /// leaves the address space.
    pub(crate) fn flush_received(&mut self, v: VcpuId, mm: usize) {
        let running_mm = self.vcpus[v].cur.map_or(false, |x| self.threads[x].mm == mm);
        if self.vcpus[v].loaded_mm == Some(mm) && !running_mm {
            let vm = self.vcpus[v].vm;
            self.vms[vm].mm.leave(mm, v);
            self.vcpus[v].loaded_mm = None;
        }
    }
}
