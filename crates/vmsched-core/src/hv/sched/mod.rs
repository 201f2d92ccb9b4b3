//! Hypervisor schedulers (data plane), one file per policy.

pub fn catalog() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("credit", "Xen credit1: 30 ms slice, 10 ms tick, BOOST/UNDER/OVER, work stealing, caps, ratelimit", "xen/common/sched/credit.c; reference §1"),
        ("cfs", "Linux CFS as KVM's host scheduler: vruntime per pCPU, per-VM cgroup weights, load balancing, PLE + directed yield", "kernel/sched/fair.c, virt/kvm/kvm_main.c; reference §4-5"),
        ("rr", "global round robin with a fixed slice (teaching, cross-checks)", "textbook"),
    ]
}
