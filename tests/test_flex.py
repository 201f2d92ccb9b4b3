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
