"""The calibration tools under tools/calibrate/ start from what calibration.toml holds."""
import json
import runpy
from pathlib import Path

from vmsched.reproduce import csrc

SOLVE = Path(__file__).resolve().parent.parent / "tools" / "calibrate" / "csrc_peak_solve.py"


def test_csrc_peak_solve_starts_from_the_calibrated_original_scenario():
    # The solve's scenario at its default point (calibration.toml's values) must be the one
    # the reproduction runs, or a refit would start from a model the report never used.
    tool = runpy.run_path(str(SOLVE), run_name="not_main")
    for tiles in (1, 9):
        built = tool["build"](tool["P"](), tiles, 3000.0)
        expected = csrc.scenario(tiles, "original", 3000.0)
        assert json.dumps(built, sort_keys=True) == json.dumps(expected, sort_keys=True), tiles


def test_csrc_peak_solve_builds_its_points_with_xen41s_tlb_flush_at_the_sourced_walk_cost():
    # The walk cost is a sourced constant (csrc.TLB_WALK_CYCLES, 40 cycles), not a parameter of
    # the solve's point: every trial point must flush the guest TLB at a full switch (a walk
    # cost above 0 turns the flush on, hv/tlb.rs) at that cost, at 1 tile as at the peak.
    tool = runpy.run_path(str(SOLVE), run_name="not_main")
    assert csrc.TLB_WALK_CYCLES == 40
    for tiles in (1, 9):
        built = tool["build"](tool["P"](alpha=0.5, beta=0.4), tiles, 3000.0)
        assert built["host"]["costs"]["tlb_walk_cycles"] == 40, tiles


LITERAL = SOLVE.parent / "csrc_literal_tiles.py"


def test_literal_tiles_place_each_vcpu0_as_xen41_on_the_least_populated_second_thread():
    # Xen 4.1's default_vcpu0_location: only non-primary hyperthreads, the least populated,
    # ties to the highest-numbered; vCPU k on the CPU after vCPU k-1's (CPUs 12-23 are the
    # second threads in the MADT order the tool assumes).
    tool = runpy.run_path(str(LITERAL), run_name="not_main")
    cpus = tool["xen41_vcpu0_cpus"]([2, 1, 1] + [1] * 10)
    assert cpus[:3] == [23, 22, 21]          # the 2-vCPU domain also fills CPU 0 (23 + 1 mod 24)
    assert cpus[12] == 23                    # every second thread holds one vCPU: back to the top
    assert [tool["xen41_cpu_socket"](c) for c in (0, 5, 6, 11, 12, 17, 18, 23)] == [0, 0, 1, 1, 0, 0, 1, 1]


def test_literal_tiles_add_six_vms_a_tile_at_one_rate_whatever_the_load():
    tool = runpy.run_path(str(LITERAL), run_name="not_main")
    small, large = (tool["scenario_literal"](t, "original", 1000.0) for t in (1, 9))
    assert (len(small["vms"]), len(large["vms"])) == (6, 54)
    assert sum(vm["vcpus"] for vm in large["vms"]) == 72
    assert small["host"]["sockets"] * small["host"]["cores_per_socket"] == 24
    rate = {vm["name"]: vm["workloads"][0]["rate_per_s"] for vm in large["vms"]}
    assert rate["t0-web"] == rate["t8-web"] == small["vms"][0]["workloads"][0]["rate_per_s"]
