"""Batches of simulations run in parallel with one progress bar (used by ``vmsched reproduce``
and ``vmsched arena``).

Identical runs (same scenario, scheduler and seed) are simulated once and shared. Each
worker process returns the run's ``summary.json`` text; results are deterministic, so the
number of workers never changes them.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from .results import Results


@dataclass(frozen=True)
class Run:
    """One simulation: a scenario (as a dict in the scenario schema), with optional
    scheduler and seed overrides. ``label`` names it within its batch."""

    label: str
    scenario: Mapping[str, Any]
    scheduler: Optional[str] = None
    seed: Optional[int] = None
    #: A Python controller for the run: its spec and its parameters as JSON
    #: (:func:`vmsched.control.load_controller`; a fresh instance per run).
    controller: Optional[tuple[str, str]] = None

    def key(self) -> str:
        """Identity of the simulation (equal keys give byte-identical results)."""
        return json.dumps([self.scenario, self.scheduler, self.seed]
                          + ([list(self.controller)] if self.controller else []), sort_keys=True)


def _simulate(scenario: Mapping, scheduler, seed, controller=None) -> tuple[str, float]:
    from .control import load_controller
    from .runner import run

    obj = load_controller(controller[0], json.loads(controller[1])) if controller else None
    res = run(dict(scenario), scheduler=scheduler, seed=seed, controller=obj)
    return res.json, float(res.wall_s or 0.0)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def simulate_all(runs: Iterable[Run], jobs: int | None = None,
                 progress: bool = True) -> dict[str, Results]:
    """Simulate every distinct run; returns results by :meth:`Run.key`."""
    distinct: dict[str, Run] = {}
    for r in runs:
        distinct.setdefault(r.key(), r)
    jobs = default_jobs() if jobs is None else jobs
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(distinct), unit="run", desc="simulating", file=sys.stderr,
                   disable=None, dynamic_ncols=True)
    out: dict[str, Results] = {}
    try:
        if jobs <= 1 or len(distinct) <= 1:
            for k, r in distinct.items():
                text, wall = _simulate(r.scenario, r.scheduler, r.seed, r.controller)
                out[k] = Results(text, wall_s=wall)
                if bar is not None:
                    bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futs = {pool.submit(_simulate, r.scenario, r.scheduler, r.seed, r.controller): k
                        for k, r in distinct.items()}
                for f in as_completed(futs):
                    text, wall = f.result()
                    out[futs[f]] = Results(text, wall_s=wall)
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return out
