"""Figure 9 of seed 001 in the csrc reproduction (python/vmsched/reproduce/csrc.py
``fig9_shares``): the hypervisor's time by the VM exit it is spent in, from a run's exit counts,
scheduler counters and host costs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vmsched.reproduce import csrc

COSTS = {"world_switch_ns": 2000, "dpci_tasklet_ns": 1000, "exit_ext_intr_ns": 5000,
         "exit_apic_access_ns": 3000, "exit_ipi_ns": 1500, "exit_hlt_ns": 4000}


def _run() -> dict:
    """Every seed: 2 pCPUs for 1 s; two VMs whose exits add up to 1000 external-interrupt,
    2000 APIC-access (EOI), 400 IPI-send (ICR) and 600 HLT exits; 1200 device interrupts, 200
    of them on an idle pCPU (the tasklet call that keeps the idle vCPU); 1600 switches in
    external-interrupt exits, 800 in HLT exits of which 300 to the idle vCPU."""
    vms = [{"exits": {"ext_intr": 600, "apic_access": 1200, "ipi": 100, "hlt": 200}},
           {"exits": {"ext_intr": 400, "apic_access": 800, "ipi": 300, "hlt": 400}}]
    summary = {"vms": vms, "pcpus": [{"device_irqs": 700}, {"device_irqs": 500}],
               "sim_time_ns": 1_000_000_000,
               "scenario": {"host": {"costs": COSTS}},
               "totals": {"scheduler_counters": {"credit_kept_tasklet": 200,
                                                 "credit_cs_exit_ext_intr": 1600,
                                                 "credit_cs_exit_hlt": 800,
                                                 "credit_block_to_idle": 300}}}
    lab = csrc.label(csrc.PEAK_TILES, "original")
    return {f"{lab}@{s}": SimpleNamespace(summary=summary) for s in csrc.SEEDS}


def test_each_exit_reason_gets_its_exits_the_switches_made_in_them_and_its_tasklets():
    q = csrc.fig9_shares(_run(), csrc.label(csrc.PEAK_TILES, "original"))
    # Per pCPU-second, as % of CPU (1e7 ns per second per %):
    # external interrupts: 500 exits x 5000 + (1200 - 200) / 2 tasklets x 1000
    #   + 800 switches x 2000 = 4.6e6 ns -> 0.46 %;
    # APIC access: 1000 EOI x 3000 + 200 ICR x 1500 = 3.3e6 ns -> 0.33 %;
    # HLT: 300 exits x 4000 + (400 - 150 to idle, free) switches x 2000 = 1.7e6 ns -> 0.17 %.
    assert q == pytest.approx({"hv_ext_intr_pct": 0.46, "hv_apic_access_pct": 0.33,
                               "hv_hlt_pct": 0.17})
