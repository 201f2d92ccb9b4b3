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


def test_csrc_peak_solve_fits_every_exit_cost_the_scenario_takes_from_calibration():
    # Each Figure 9 exit cost the reproduction reads from calibration.toml (csrc.EXIT_COSTS,
    # since session 18 the I/O instruction's too) must be a field of the solve's point with a
    # Figure 9 target, or a refit of the peak would leave it at a stale value.
    tool = runpy.run_path(str(SOLVE), run_name="not_main")
    entries = set(tool["KEYS"].values())
    for cost in csrc.EXIT_COSTS:
        assert f"csrc.host.{cost}" in entries, cost
    assert {"ext", "hlt", "apic", "io"} <= set(tool["TARGETS"])
