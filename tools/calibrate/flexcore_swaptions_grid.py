"""Measure seed 000's swaptions baselines (Fig. 1's 2VM/1VM total and kernel ratios and §4.4's
PLE rate before ballooning, which is the 2VM run's rate) over a grid of its fitted grain
(python/vmsched/reproduce/calibration.toml, `flexcore.swaptions.*`).

Each point runs swaptions-1vm and swaptions-2vm at full length (time scale 10, the recorded
iterations per worker), simulation seeds 1-3, with no FlexCore, and prints one JSON line: the
two ratios and the rate as the reproductions measure them, each seed's total ratio, the 2VM
PLE count (times the time scale), how many of the three targets lie within +-25 % and their
sum of squared log errors. Never look at a FlexCore or started-ballooned run before choosing a
point.

Session 23's rule (calibration.toml, flexcore.swaptions.compute_us): stable points only (each
seed's total ratio within 20 % of the mean), the least sum of squared log errors, Fig. 1's
claims holding (total > 2, kernel > total); adopt only a point with all three within; then
the length to Table 1 by the iterations' one-step method.

Usage (from the repository root, with .venv active):
    python tools/calibrate/flexcore_swaptions_grid.py COMPUTE_US CS_US SHOOTDOWN_EVERY [JOBS]
each a comma-separated list, e.g. `400 7,8.5 70,85 2`. Not run by the tests.
"""
from __future__ import annotations

import itertools
import sys

from vmsched.batch import Run
from vmsched.reproduce import calibration, expected
from vmsched.reproduce import flexcore as fc

#: The three baselines and their seed values, from the one place seed values live.
KEYS = ("swaptions_total_ratio", "swaptions_kernel_ratio", "swaptions_ple_rate_before_khz")
TARGETS = {k: v for name, q in expected.SEED.items() if name.startswith("flexcore")
           for k, v in ((k, q[k].value) for k in KEYS if k in q)}


def values_at(compute_us: float, cs_us: float, shootdown_every: int) -> dict[str, float]:
    return {"flexcore.swaptions.compute_us": compute_us, "flexcore.swaptions.cs_us": cs_us,
            "flexcore.swaptions.shootdown_every": shootdown_every}


def runs_at(compute_us: float, cs_us: float, shootdown_every: int) -> list[Run]:
    """swaptions-1vm and swaptions-2vm at the point, built by flexcore.scenario itself."""
    with calibration.trial(fc, values_at(compute_us, cs_us, shootdown_every)):
        return [Run(f"swaptions-{n}vm@{s}", fc.scenario("swaptions", n), seed=s)
                for n in (1, 2) for s in fc.SEEDS]


def measure(r, point: tuple[float, float, int]) -> dict:
    """The three baselines at ``point`` (kernel time counts the point's sections)."""
    with calibration.trial(fc, values_at(*point)):
        got = {"swaptions_total_ratio": fc.done_s(r, "swaptions-2vm") / fc.done_s(r, "swaptions-1vm"),
               "swaptions_kernel_ratio": fc.kernel_s(r, "swaptions-2vm") / fc.kernel_s(r, "swaptions-1vm"),
               "swaptions_ple_rate_before_khz": fc.ple(r, "swaptions-2vm") / fc.sim_s(r, "swaptions-2vm") / 1e3}
    per_seed = [r[f"swaptions-2vm@{s}"].summary["sim_time_ns"] / r[f"swaptions-1vm@{s}"].summary["sim_time_ns"]
                for s in fc.SEEDS]
    return {**{k: round(v, 3) for k, v in got.items()},
            "per_seed_total": [round(x, 2) for x in per_seed],
            "ple_2vm_1e7": round(fc.ple(r, "swaptions-2vm") * fc.TIME_SCALE / 1e7, 3),
            **calibration.scores(got, TARGETS)}


def main() -> None:
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: flexcore_swaptions_grid.py COMPUTE_US CS_US SHOOTDOWN_EVERY [JOBS]")
    grid = [(c, cs, int(every)) for c, cs, every in
            itertools.product(*[[float(x) for x in a.split(",")] for a in sys.argv[1:4]])]
    calibration.run_grid(grid, runs_at, measure, int(sys.argv[4]) if len(sys.argv) == 5 else 1)


if __name__ == "__main__":
    main()
