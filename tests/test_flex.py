"""Seed 002 (Flex, slides) reproductions: which host each run of the family stands for."""

from __future__ import annotations

from vmsched.reproduce import flex


def test_flex_xen_hosts_switch_lazily_and_the_kvm_host_does_not():
    # Every run of the family is a Xen host (credit, FlexW, FlexS, balance over credit), whose
    # context_switch skips the state switch to the idle vCPU and back to the vCPU whose state
    # the pCPU holds (Xen 3.4.4 / 4.2.2 xen/arch/x86/domain.c; core.XEN_HOST_PARAMS), except
    # balance+cap over cfs, Sukwong & Kim's KVM host, where cfs has no such option.
    for quick in (True, False):
        for repro in flex.REPRODUCTIONS:
            for run in repro.runs(quick):
                hv = run.scenario["hypervisor"]
                params = hv.get("params", {})
                kvm = hv["scheduler"] == "balance" and params.get("host") == "cfs"
                assert params.get("lazy_context_switch", False) is (not kvm), (repro.name, run.label)
    # The KVM host is in the mix (the seed's headline comparison), so the rule above is tested.
    assert any(r.scenario["hypervisor"].get("params", {}).get("host") == "cfs"
               for r in flex.PARALLEL.runs(True))


def test_balance_caps_kvm_host_is_linux_2_6s():
    # Sukwong & Kim's KVM host (Linux 2.6.3x) predates 4.15's kernel-mode filter and 5.3's
    # woken-vCPU candidates: any preempted sibling is a candidate, no vCPU woken from halt is;
    # its PLE window is fixed (3.18 made it grow) and it has no halt polling (4.0), so its
    # hypervisor costs vary as a busy KVM host's exits do (core.KVM_EXIT_COST_CV, hv/jitter.rs;
    # constant costs phase-lock a fixed window).
    import vmsched
    from vmsched.reproduce import core

    kvm = [r for r in flex.PARALLEL.runs(False) if r.scenario["hypervisor"].get("params", {}).get("host") == "cfs"]
    assert kvm
    for run in kvm:
        sc = vmsched.Scenario.from_dict(run.scenario).to_dict()
        ple = sc["hypervisor"]["ple"]
        assert ple["yield_to_kernel_mode"] is False and ple["boost_woken"] is False, run.label
        assert ple["grow"] == 1 and sc["hypervisor"]["halt_poll"]["max_ns"] == 0, run.label
        costs = sc["host"]["costs"]
        assert (costs["hv_cost_cv"], costs["hv_cost_jitter_pct"]) == (core.KVM_EXIT_COST_CV, 0.0), run.label
