"""Fitted model inputs: the one place they live is ``calibration.toml`` beside this file.

Issue 4's rule: workload models may be fitted only to the seeds' *baseline* measurements (no
policy: the default scheduler, the un-optimised system, the non-contended run). Each entry of
``calibration.toml`` names the value, its unit, the seed figure or table it was fitted to,
the baseline run that reproduces that figure and how the fit was made. Every result about a
policy then comes out of the simulation with these inputs and nothing else; the test
``tests/test_reproduce.py`` re-runs each baseline and checks it still meets its target.
"""

from __future__ import annotations

import json
import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PATH = Path(__file__).resolve().parent / "calibration.toml"
REQUIRED = ("value", "unit", "fitted_to", "baseline", "method")


@dataclass(frozen=True)
class Fitted:
    name: str
    value: float
    unit: str
    fitted_to: str
    baseline: str
    method: str
    #: The baseline quantity the fit targets: (reproduction, quantity key), or None.
    target: tuple[str, str] | None = None


class CalibrationError(ValueError):
    pass


@lru_cache(maxsize=None)
def entries() -> dict[str, Fitted]:
    data = tomllib.loads(PATH.read_text(encoding="utf-8"))
    out: dict[str, Fitted] = {}

    def walk(node: dict, prefix: str) -> None:
        if "value" in node:
            missing = [k for k in REQUIRED if k not in node]
            if missing:
                raise CalibrationError(f"{PATH.name}: [{prefix}] lacks {', '.join(missing)}")
            unknown = set(node) - set(REQUIRED) - {"target"}
            if unknown:
                raise CalibrationError(f"{PATH.name}: [{prefix}] unknown keys {sorted(unknown)}")
            t = node.get("target")
            out[prefix] = Fitted(prefix, float(node["value"]), str(node["unit"]),
                                 str(node["fitted_to"]), str(node["baseline"]),
                                 str(node["method"]),
                                 tuple(t.split(":", 1)) if t else None)  # type: ignore[arg-type]
            return
        for k, v in node.items():
            if not isinstance(v, dict):
                raise CalibrationError(f"{PATH.name}: {prefix + '.' if prefix else ''}{k} is "
                                       "not an entry (value, unit, fitted_to, baseline, method)")
            walk(v, f"{prefix}.{k}" if prefix else k)

    walk(data, "")
    return out


def fitted(name: str) -> float:
    """The fitted value ``name`` (e.g. ``"vmkit.forkbench.fork_us"``)."""
    try:
        return entries()[name].value
    except KeyError:
        raise CalibrationError(f"no fitted value {name!r} in {PATH.name}") from None


@contextmanager
def trial(module: ModuleType, values: Mapping[str, float]) -> Iterator[None]:
    """Within the block, ``module.fitted`` answers ``values`` for their names and the recorded
    values for the rest: how a calibration tool (tools/calibrate/) builds and measures a trial
    point with a reproduction's own code. The recorded values are back after the block."""
    recorded = module.fitted
    module.fitted = lambda name: values[name] if name in values else recorded(name)
    try:
        yield
    finally:
        module.fitted = recorded


def scores(got: Mapping[str, float], targets: Mapping[str, float]) -> dict[str, float]:
    """How a trial point meets its baselines: how many lie within +-25 % of their seed values
    and the sum of the squared log errors (the grids' selection measures)."""
    return {"within": sum(abs(got[k] / targets[k] - 1) <= 0.25 for k in targets),
            "ssle": round(sum(math.log(got[k] / targets[k]) ** 2 for k in targets), 4)}


def run_grid(points: Sequence[tuple], runs_at: Callable[..., list], measure: Callable[[Any, tuple], dict],
             jobs: int = 1) -> None:
    """Simulate each point's runs and print one JSON line per point as it ends (a point near a
    collapse can take minutes: session 21's 32-point batch run whole showed nothing for 43 min)."""
    from ..batch import simulate_all

    for point in points:
        runs = runs_at(*point)
        res = simulate_all(runs, jobs=jobs, progress=False)
        r = {run.label: res[run.key()] for run in runs}
        print(json.dumps({"point": point, **measure(r, point)}), flush=True)
