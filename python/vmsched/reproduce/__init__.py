"""``vmsched reproduce``: the seeds' evaluations, set up, run and judged.

Each family module (one per seed document) lists its :class:`Reproduction` objects in
``REPRODUCTIONS``; :func:`registry` collects them in the order of the issue. :func:`reproduce`
simulates every run (in parallel, identical runs once), measures, judges against
:mod:`.expected`, and writes plots, raw results and the Markdown/HTML report.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Sequence

from ..overrides import Override, apply_overrides
from .core import Claim, Outcome, Quantity, Reproduction, Run, judge, seed_spread

__all__ = ["Reproduction", "Run", "Quantity", "Claim", "Outcome", "registry", "reproduce",
           "FAMILIES"]

#: Family modules, one per seed document, in the order of issue 4.
FAMILIES = ("flexcore", "csrc", "flex", "dp", "vmkit")


def registry() -> dict[str, Reproduction]:
    out: dict[str, Reproduction] = {}
    for fam in FAMILIES:
        mod = importlib.import_module(f"{__name__}.{fam}")
        for r in mod.REPRODUCTIONS:
            if r.name in out:
                raise ValueError(f"two reproductions named {r.name!r}")
            out[r.name] = r
    return out


def select(names: Sequence[str], all_: bool) -> list[Reproduction]:
    reg = registry()
    if all_:
        return list(reg.values())
    unknown = [n for n in names if n not in reg]
    if unknown:
        raise KeyError(f"unknown reproduction {', '.join(map(repr, unknown))}; "
                       f"known: {', '.join(reg)}")
    return [reg[n] for n in dict.fromkeys(names)]


def reproduce(repros: Sequence[Reproduction], quick: bool = False, out: str | Path | None = None,
              jobs: int | None = None, progress: bool = True,
              overrides: Sequence[Override | str] = ()) -> list[Outcome]:
    """Run, measure and judge ``repros``; write the report under ``out`` if given. The wall
    time of the whole call is ``reproduce.last_wall_s`` afterwards. ``overrides`` (``--set``,
    :mod:`vmsched.overrides`) change the runs whose scenarios have their fields, for an
    exploratory run; ``reproduce.last_overrides`` then says which runs each reached."""
    from . import expected
    from ..batch import simulate_all

    t0 = time.perf_counter()
    planned = {r.name: list(r.runs(quick)) for r in repros}
    for name, runs in planned.items():
        labels = [x.label for x in runs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{name}: run labels are not unique: {labels}")
    applied = apply_overrides(planned, overrides)
    reproduce.last_overrides = applied
    results = simulate_all([x for runs in planned.values() for x in runs], jobs=jobs,
                           progress=progress)
    outcomes = []
    for r in repros:
        by_label = {x.label: results[x.key()] for x in planned[r.name]}
        simulated = dict(r.measure(by_label))
        outcomes.append(judge(r, simulated, expected.SEED.get(r.name, {}),
                              expected.GAPS.get(r.name, {}),
                              seed_spread(r.measure, by_label, simulated)))
        if out is not None:
            _write_runs(Path(out) / r.name, by_label)
    wall = time.perf_counter() - t0
    reproduce.last_wall_s = wall
    if out is not None:
        from .report import write_report

        write_report(outcomes, Path(out), quick=quick, wall_s=wall, overrides=applied)
    return outcomes


def _write_runs(folder: Path, by_label: dict) -> None:
    """The raw results of a reproduction's runs, one ``runs/<label>.json`` each; result files
    of runs it no longer has (from an earlier vmsched, or the other mode) are removed."""
    from ..htmlreport import write_json_files

    write_json_files(folder / "runs", {f"{label}.json": res.json for label, res in by_label.items()})


reproduce.last_wall_s = 0.0
reproduce.last_overrides = []
