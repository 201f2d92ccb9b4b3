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
//! - the refill after an address-space switch under nested paging: `switch_mm`'s `load_cr3`
//!   (2.6.32; the seed's i386 K7 guest has no PCID, and user pages are not global) empties
//!   the vCPU's TLB of the old process's user entries, so the incoming thread re-walks its
//!   pages, min(`working_set_kib` / 4, `tlb_entries`) walks. Natively those walks are part of
//!   the work; under nested paging each costs `host.costs.nested_walk_extra_ns` more (seed
//!   004 §2.3; §7.2: "After the TLB flush, the TLB must be refilled ... The cost for walking
//!   the page table is different in a virtualized setting, as there are two nested page
//!   tables involved"), charged as stalled guest time with the thread's refill debt
//!   (`World::owe_start`) and counted as page walks (`tlb_miss_rate_rel`). A switch back to
//!   the lazily loaded address space loads nothing and owes nothing.
//!
//! Choices: every shootdown goes to the whole mask, lazy vCPUs included, as in 2.6.32
//! (the seed's guest, seed 004 §7.1) up to 4.18. Since 4.19 a flush that frees no page tables
//! skips lazy CPUs (`tlb_is_not_lazy`), but fork's `flush_tlb_mm` and `exit_mmap` free page
//! tables and still reach them. A halted lazy target is woken by the IPI (a wake-up round trip
//! through the hypervisor) at once with `vipi_delivery = "ipi"`, at the next host time slice
//! with `"polling"` (`hv::vipi`), while the sender spins.
//!
//! Leaves out: exec (a forked child runs its program in the fresh address space of the
//! fork), copy-on-write faults and their single-page flushes, PCID/ASIDs, the walks after a
//! flush IPI or a fork's local flush (only a switch's are charged), walks a thread would not
//! need because it touches only part of its working set before it stops, 6.x's
//! once-a-second `mm_cpumask` trimming, CPU offline clearing the masks (offline vCPUs are
//! never targets).

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::Ns;
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
    /// Thread `t` becomes current on vCPU `v`: load its address space; a load (CR3 write)
    /// leaves `t` owing its nested-paging walks (`guest_switch_walks_ns`).
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
        self.vcpus[v].address_space_loads += 1;
        self.vcpus[v].guest_walks_owed_ns = self.guest_switch_walks_ns(t);
    }

    /// The nested-paging part of thread `t`'s walks after an address-space switch: one per
    /// page of its working set, at most the TLB's entries, each
    /// `host.costs.nested_walk_extra_ns`; 0 when that is 0.
    pub(crate) fn guest_switch_walks_ns(&self, t: ThreadId) -> Ns {
        let extra = self.costs.nested_walk_extra_ns;
        if extra == 0 {
            return 0;
        }
        (self.threads[t].ws_kib as u64 / 4).min(self.costs.tlb_entries as u64) * extra
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

#[cfg(test)]
mod tests {
    use crate::sim::tests::run_text;
    use crate::sim::Results;

    fn run(text: &str) -> Results {
        run_text(text, None)
    }

    /// Two hogs on one vCPU, switched every guest slice (1 ms), in their own address spaces
    /// (two groups) or sharing one (`same_mm`: one group of two threads); no cache refill, so
    /// the refill time is the nested-paging walks alone.
    fn hogs(same_mm: bool, ws_kib: u32, extra_ns: u64) -> Results {
        let groups = if same_mm {
            format!("{{ threads = 2, working_set_kib = {ws_kib}, program = [{{ op = \"compute\", us = 20000 }}] }}")
        } else {
            (0..2)
                .map(|_| format!("{{ threads = 1, working_set_kib = {ws_kib}, program = [{{ op = \"compute\", us = 20000 }}] }}"))
                .collect::<Vec<_>>()
                .join(",\n  ")
        };
        run(&format!(
            r#"
[host]
cores_per_socket = 1
[host.costs]
cache_refill_ns_per_mib = 0
nested_walk_extra_ns = {extra_ns}
[[vms]]
vcpus = 1
pin = [0]
guest = {{ slice_us = 1000 }}
[[vms.workloads]]
kind = "custom"
groups = [
  {groups},
]
"#
        ))
    }

    #[test]
    fn a_switch_to_another_address_space_owes_each_page_walk_its_nested_paging_extra() {
        let off = hogs(false, 32, 0);
        let on = hogs(false, 32, 1_000);
        assert_eq!(off.vcpus[0].cache_refill_ns, 0);
        let walks = on.vcpus[0].cache_refill_ns;
        // 32 KiB: 8 pages a switch, 1 us each; some 40 switches over the two 20-ms hogs.
        assert!(walks >= 20 * 8_000, "{walks} ns of walks");
        assert_eq!(walks % 8_000, 0, "whole switches' walks: {walks} ns");
        // The walks stall guest time: the run takes that much longer.
        let (t_off, t_on) = (off.vms[0].completion_ns.unwrap(), on.vms[0].completion_ns.unwrap());
        assert_eq!(t_on - t_off, walks);
    }

    #[test]
    fn threads_of_one_address_space_switch_without_walks() {
        // Only the first load of the address space walks (from the idle vCPU's none).
        let r = hogs(true, 32, 1_000);
        assert_eq!(r.vcpus[0].cache_refill_ns, 8_000);
        let base = hogs(true, 32, 0).vms[0].completion_ns.unwrap();
        assert_eq!(r.vms[0].completion_ns.unwrap(), base + 8_000);
    }

    #[test]
    fn the_guest_counts_its_switches_and_the_address_space_loads_among_them() {
        let apart = hogs(false, 32, 0);
        let (switches, loads) = (apart.vcpus[0].guest_switches, apart.vcpus[0].address_space_loads);
        // Two 20-ms hogs sliced every 1 ms alternate: some 40 switches, each a load.
        assert!(switches >= 20, "{switches} switches");
        assert_eq!(loads, switches);
        // Sharing an address space, the same switches load it once.
        let shared = hogs(true, 32, 0);
        assert_eq!(shared.vcpus[0].guest_switches, switches);
        assert_eq!(shared.vcpus[0].address_space_loads, 1);
    }

    #[test]
    fn a_slice_end_that_repicks_the_only_thread_is_no_switch() {
        let r = run(r#"
[host]
cores_per_socket = 1
[[vms]]
vcpus = 1
pin = [0]
guest = { slice_us = 1000 }
[[vms.workloads]]
kind = "custom"
groups = [{ threads = 1, program = [{ op = "compute", us = 20000 }] }]
"#);
        assert_eq!(r.vcpus[0].guest_switches, 1);
        assert_eq!(r.vcpus[0].address_space_loads, 1);
    }

    #[test]
    fn a_switch_walks_at_most_the_tlbs_entries() {
        // 8 MiB is 2,048 pages; the default TLB holds 512.
        let walks = hogs(false, 8 * 1024, 1_000).vcpus[0].cache_refill_ns;
        assert!(walks > 0);
        assert_eq!(walks % 512_000, 0, "{walks} ns of walks");
    }
}
