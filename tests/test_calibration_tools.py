"""The calibration tools under tools/calibrate/ start from what calibration.toml holds."""
import json
import runpy
from pathlib import Path

import pytest

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


GRID = Path(__file__).resolve().parent.parent / "tools" / "calibrate" / "flexcore_grid.py"

#: Each application's fitted grid axes (calibration.toml flexcore.APP.*) and the baselines the
#: grid must judge its points by (the seed's Fig. 1 ratios; dedup's Fig. 2 shares; swaptions'
#: §4.4 rate).
AXES = {"dedup": (("sections", "shootdown_every", "wait_us"), ("ipi_pct_2vm", "spin_pct_2vm")),
        "vips": (("barrier_every", "cs_us", "shootdown_every"), ()),
        "swaptions": (("barrier_every", "compute_us", "cs_us", "shootdown_every"), ("ple_rate_before_khz",)),
        "streamcluster": (("barrier_every", "cs_us", "shootdown_every"), ())}


@pytest.mark.parametrize("app", sorted(AXES))
def test_flexcore_grid_at_the_recorded_point_builds_the_reproductions_runs(app):
    # At calibration.toml's values the grid's runs must be the reproduction's own APP-1vm and
    # APP-2vm runs, or a refit would measure a model the report never used; another point must
    # change the app's program; the tool must leave the reproduction's values alone; and it
    # must judge a point by the app's fitted baselines, no more, no fewer.
    from vmsched.reproduce import calibration, flexcore

    tool = runpy.run_path(str(GRID), run_name="not_main")
    names, extra = AXES[app]
    point = tuple(calibration.fitted(f"flexcore.{app}.{k}") for k in names)
    recorded = {r.label: r for r in tool["runs_at"](app, names, point)}
    for n in (1, 2):
        for s in flexcore.SEEDS:
            sc = flexcore.scenario(app, n)
            assert json.dumps(recorded[f"{app}-{n}vm@{s}"].scenario, sort_keys=True) == json.dumps(sc, sort_keys=True)
    for i in range(len(names)):
        moved = tuple(v * 2 if j == i else v for j, v in enumerate(point))
        other = tool["runs_at"](app, names, moved)[0].scenario
        assert json.dumps(other, sort_keys=True) != json.dumps(flexcore.scenario(app, 1), sort_keys=True), names[i]
    assert flexcore.fitted is calibration.fitted
    assert set(tool["targets"](app)) == {f"{app}_total_ratio", f"{app}_kernel_ratio"} | {f"{app}_{k}" for k in extra}


def test_flexcore_grid_names_a_bad_axis_and_its_reason(capsys):
    tool = runpy.run_path(str(GRID), run_name="not_main")
    for argv, words in ((["dedup", "sectons=200"], "sectons"), (["vips", "cs_us=ten"], "cs_us"),
                        (["vips", "cs_us"], "NAME=V1,V2"), (["nosuch", "cs_us=1"], "nosuch")):
        with pytest.raises(SystemExit) as e:
            tool["parse"](argv)
        assert e.value.code == 2, argv
        assert words in capsys.readouterr().err, argv


def test_only_swaptions_compute_grain_is_fitted_the_others_keep_the_shared_grain():
    # swaptions alone has a seed PLE rate before ballooning to fit its grain to (§4.4); the
    # other applications keep flexcore.COMPUTE_US, chosen once for all and not fitted.
    from vmsched.reproduce import calibration, flexcore

    assert flexcore.compute_us("swaptions") == calibration.fitted("flexcore.swaptions.compute_us")
    for app in ("dedup", "vips", "streamcluster"):
        assert flexcore.compute_us(app) == flexcore.COMPUTE_US


def _dedup_barriers() -> list[dict]:
    """The ``every`` blocks of dedup's iteration that hold its barrier."""
    from vmsched.reproduce import flexcore

    body = flexcore.workload("dedup", flexcore.TIME_SCALE)["groups"][0]["program"][0]["body"]
    return [op for op in body if op["op"] == "every" and op["body"][0]["op"] == "barrier"]


def test_dedup_alone_keeps_the_shared_barrier_period_the_others_have_theirs_fitted():
    # Rules M and O (session 41): vips', swaptions' and streamcluster's periods are fitted values
    # read through barrier_every(); dedup keeps flexcore.BARRIER_EVERY (rule N: no better fit).
    from vmsched.reproduce import calibration, flexcore

    for app in ("vips", "swaptions", "streamcluster"):
        assert flexcore.barrier_every(app) == calibration.fitted(f"flexcore.{app}.barrier_every")
        assert flexcore.workload(app, flexcore.TIME_SCALE)["barrier_every"] == flexcore.barrier_every(app)
    assert "flexcore.dedup.barrier_every" not in calibration.entries()
    assert [every["n"] for every in _dedup_barriers()] == [flexcore.BARRIER_EVERY]


def test_streamcluster_barrier_spins_as_parsecs_the_stand_in_barriers_keep_the_shared_spin():
    # Rule P (session 41): streamcluster's barrier is PARSEC's own, about 0.1 ms of polling
    # before it blocks; vips' and swaptions' barriers stand for a coupling their programs do not
    # have and keep the shared spin, as does dedup's.
    from vmsched.reproduce import flexcore

    assert flexcore.STREAMCLUSTER_BARRIER_SPIN_US == 100.0
    assert flexcore.workload("streamcluster", flexcore.TIME_SCALE)["barrier_spin_us"] == 100.0
    for app in ("vips", "swaptions"):
        assert flexcore.workload(app, flexcore.TIME_SCALE)["barrier_spin_us"] == flexcore.BARRIER_SPIN_US
    assert [every["body"][0]["spin_us"] for every in _dedup_barriers()] == [flexcore.BARRIER_SPIN_US]


def test_a_calibration_trial_answers_its_values_and_restores_the_recorded_ones():
    # The grids build AND measure a point inside a trial (kernel time counts the point's own
    # sections and shootdowns), so the trial must answer its values for every name it holds,
    # the recorded values for the rest, and hand the recorded reader back, even on an error.
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
