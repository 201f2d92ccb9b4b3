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


GRID = Path(__file__).resolve().parent.parent / "tools" / "calibrate" / "flexcore_dedup_grid.py"


def test_flexcore_dedup_grid_at_the_recorded_point_builds_the_reproductions_runs():
    # At calibration.toml's values the grid's runs must be the reproduction's own dedup-1vm and
    # dedup-2vm runs, or a refit would measure a model the report never used; another point
    # must change dedup's program, and the tool must leave the reproduction's values alone.
    from vmsched.reproduce import calibration, flexcore

    tool = runpy.run_path(str(GRID), run_name="not_main")
    point = [int(calibration.fitted(f"flexcore.dedup.{k}")) for k in ("sections", "shootdown_every", "wait_us")]
    recorded = {r.label: r for r in tool["runs_at"](*point)}
    for n in (1, 2):
        for s in flexcore.SEEDS:
            sc = flexcore.scenario("dedup", n)
            assert json.dumps(recorded[f"dedup-{n}vm@{s}"].scenario, sort_keys=True) == json.dumps(sc, sort_keys=True)
    other = tool["runs_at"](point[0] + 40, point[1], point[2])[0].scenario
    assert json.dumps(other, sort_keys=True) != json.dumps(flexcore.scenario("dedup", 1), sort_keys=True)
    assert flexcore.fitted is calibration.fitted
    assert set(tool["TARGETS"]) == set(tool["KEYS"])


SWAPTIONS_GRID = Path(__file__).resolve().parent.parent / "tools" / "calibrate" / "flexcore_swaptions_grid.py"


def test_flexcore_swaptions_grid_at_the_recorded_point_builds_the_reproductions_runs():
    # At calibration.toml's values the grid's runs must be the reproduction's own swaptions-1vm
    # and swaptions-2vm runs; a point with another compute grain must change the workload (the
    # grain is read through flexcore.compute_us, not the shared constant); and the tool must
    # leave the reproduction's values alone.
    from vmsched.reproduce import calibration, flexcore

    tool = runpy.run_path(str(SWAPTIONS_GRID), run_name="not_main")
    point = [calibration.fitted(f"flexcore.swaptions.{k}") for k in ("compute_us", "cs_us")]
    every = int(calibration.fitted("flexcore.swaptions.shootdown_every"))
    recorded = {r.label: r for r in tool["runs_at"](*point, every)}
    for n in (1, 2):
        for s in flexcore.SEEDS:
            sc = flexcore.scenario("swaptions", n)
            assert json.dumps(recorded[f"swaptions-{n}vm@{s}"].scenario, sort_keys=True) == json.dumps(sc, sort_keys=True)
    other = tool["runs_at"](point[0] + 100, point[1], every)[0].scenario
    assert other["vms"][0]["workloads"][0]["compute_us"]["mean_us"] == point[0] + 100
    assert json.dumps(flexcore.scenario("swaptions", 1), sort_keys=True) == json.dumps(
        recorded["swaptions-1vm@1"].scenario, sort_keys=True)
    assert flexcore.fitted is calibration.fitted
    assert set(tool["TARGETS"]) == set(tool["KEYS"])


def test_only_swaptions_compute_grain_is_fitted_the_others_keep_the_shared_grain():
    # swaptions alone has a seed PLE rate before ballooning to fit its grain to (§4.4); the
    # other applications keep flexcore.COMPUTE_US, chosen once for all and not fitted.
    from vmsched.reproduce import calibration, flexcore

    assert flexcore.compute_us("swaptions") == calibration.fitted("flexcore.swaptions.compute_us")
    for app in ("dedup", "vips", "streamcluster"):
        assert flexcore.compute_us(app) == flexcore.COMPUTE_US


def test_a_calibration_trial_answers_its_values_and_restores_the_recorded_ones():
    # The grids build AND measure a point inside a trial (kernel time counts the point's own
    # sections and shootdowns), so the trial must answer its values for every name it holds,
    # the recorded values for the rest, and hand the recorded reader back, even on an error.
    import pytest
    from vmsched.reproduce import calibration, flexcore

    cs = calibration.fitted("flexcore.swaptions.cs_us")
    with calibration.trial(flexcore, {"flexcore.swaptions.cs_us": cs + 1.0}):
        assert flexcore.fitted("flexcore.swaptions.cs_us") == cs + 1.0
        assert flexcore.fitted("flexcore.vips.cs_us") == calibration.fitted("flexcore.vips.cs_us")
        inside = flexcore.kernel_work_ns("swaptions", 100)
    assert flexcore.fitted is calibration.fitted
    assert inside == pytest.approx(flexcore.kernel_work_ns("swaptions", 100) + 12 * 100 * 2 * 1.0 * 1e3)
    with pytest.raises(RuntimeError):
        with calibration.trial(flexcore, {"flexcore.swaptions.cs_us": 0.0}):
            raise RuntimeError("a failed run")
    assert flexcore.fitted is calibration.fitted
