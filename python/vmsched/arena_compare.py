"""``vmsched compare OLD NEW`` on two ``vmsched arena`` outputs: whose numbers and ranks moved.

A change to the model (a mechanism, a default, the suite's cost dither), to a contender or to a
scenario can reshuffle the arena; an operator or a researcher wants to see how before reading
either report. Each side is an output folder of ``vmsched arena`` (its ``arena.json``) or that
file itself. The comparison gives the overall mean rank of every contender on both sides and,
per scenario, every contender whose primary metric moved by more than ``min_change``
(relative) or whose rank changed, and what only one side has. Each move says whether it lies
beyond the seeds' scatter (more than ``NOISE_SE`` standard errors of the difference, the test
the arena ranks by): with three seeds a tail latency can move by half and a rank by several
places between two runs that differ only in noise. Mean ranks are taken over the scenarios both
sides ran. A side run with ``--set`` (its ``arena-run.json``) is noted. It reads the files only;
it runs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .arena import COLUMNS, NOISE_SE, fmt
from .reproduce.compare import CompareError, read_output


def is_arena_output(path: str | Path) -> bool:
    """Whether ``path`` is an arena output folder or its ``arena.json`` (by name, not content)."""
    p = Path(path)
    return (p / "arena.json").is_file() if p.is_dir() else p.name == "arena.json"


def load(path: str | Path) -> dict[str, list[dict]]:
    """The ``arena.json`` of a ``vmsched arena`` output folder (or the file itself): per
    scenario, its cells (contender, metrics, rank, primary)."""
    f, data = read_output(path, "arena.json", "arena")
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise CompareError(f"{f}: not a vmsched arena arena.json (scenario -> list of cells)")
    for name, cells in data.items():
        for c in cells:
            if (not isinstance(c, dict) or not {"contender", "metrics", "rank"} <= set(c)
                    or not isinstance(c["metrics"], dict) or not isinstance(c.get("se", {}), dict)):
                raise CompareError(f"{f}: scenario {name!r}: a cell without contender, metrics "
                                   f"and rank (metrics and se are tables)")
            if c.get("primary") not in COLUMNS:
                raise CompareError(f"{f}: scenario {name!r}, contender {c['contender']!r}: no "
                                   f"primary metric (written by an older vmsched? run the arena "
                                   f"again)")
    return data


def overrides_of(path: str | Path) -> list[str]:
    """Where each ``--set`` of the run landed, from the ``arena-run.json`` beside its
    ``arena.json`` (empty when there is none: none was set, or an older vmsched wrote it)."""
    p = Path(path)
    f = (p if p.is_dir() else p.parent) / "arena-run.json"
    if not f.is_file():
        return []
    _, data = read_output(f, "arena-run.json", "arena")
    got = data.get("overrides") if isinstance(data, dict) else None
    if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
        raise CompareError(f"{f}: 'overrides' must be a list of strings")
    return got


@dataclass
class Moved:
    scenario: str
    contender: str
    metric: str
    old: Optional[float]
    new: Optional[float]
    old_rank: Optional[int]
    new_rank: Optional[int]
    #: Standard errors of the two means over their seeds (None with one seed).
    old_se: Optional[float] = None
    new_se: Optional[float] = None

    @property
    def beyond_scatter(self) -> Optional[bool]:
        """Whether the move exceeds ``NOISE_SE`` standard errors of the difference (None when
        a side has no value or no standard error)."""
        if None in (self.old, self.new, self.old_se, self.new_se):
            return None
        return abs(self.new - self.old) > NOISE_SE * math.hypot(self.old_se, self.new_se)

    @property
    def change(self) -> Optional[float]:
        """Relative change of the primary metric, new / old - 1 (None when either is missing or
        old is 0)."""
        if self.old is None or self.new is None or self.old == 0:
            return None
        return self.new / self.old - 1


@dataclass
class ArenaComparison:
    #: Contender -> (old mean rank, new mean rank), over the scenarios both sides ran.
    overall: dict[str, tuple[Optional[float], Optional[float]]] = field(default_factory=dict)
    moved: list[Moved] = field(default_factory=list)
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _value(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _mean_ranks(data: Mapping[str, list[dict]], scenarios: list[str]) -> dict[str, float]:
    ranks: dict[str, list[int]] = {}
    for s in scenarios:
        for c in data[s]:
            ranks.setdefault(c["contender"], []).append(c["rank"] or 0)
    return {k: sum(v) / len(v) for k, v in ranks.items()}


def compare(old: Mapping[str, list[dict]], new: Mapping[str, list[dict]],
            min_change: float = 0.0, old_overrides: Sequence[str] = (),
            new_overrides: Sequence[str] = ()) -> ArenaComparison:
    """What moved from ``old`` to ``new`` (two loaded ``arena.json``). A contender is listed
    under a scenario when its rank changed or its primary metric moved by more than
    ``min_change`` (relative; 0: any change at all). ``*_overrides``: each side's ``--set``
    (:func:`overrides_of`), noted."""
    if min_change < 0 or not math.isfinite(min_change):
        raise CompareError(f"min_change must be a finite fraction >= 0, got {min_change}")
    c = ArenaComparison()
    for side, ov in (("old", old_overrides), ("new", new_overrides)):
        if ov:
            c.notes.append(f"the {side} side ran with --set {'; '.join(ov)}")
    both = [s for s in old if s in new]
    c.only_old += [f"scenario {s}" for s in old if s not in new]
    c.only_new += [f"scenario {s}" for s in new if s not in old]
    for s in both:
        oc = {x["contender"]: x for x in old[s]}
        nc = {x["contender"]: x for x in new[s]}
        c.only_old += [f"{s}: {k}" for k in oc if k not in nc]
        c.only_new += [f"{s}: {k}" for k in nc if k not in oc]
        keys = {x["primary"] for x in old[s]} | {x["primary"] for x in new[s]}
        if len(keys) > 1:
            c.notes.append(f"{s}: the sides rank by different metrics ({', '.join(sorted(keys))}); "
                           f"each side's own is shown")
        for k in [k for k in nc if k in oc]:
            a, b = oc[k], nc[k]
            m = Moved(s, k, b["primary"], _value(a["metrics"].get(a["primary"])),
                      _value(b["metrics"].get(b["primary"])), a["rank"], b["rank"],
                      _value((a.get("se") or {}).get(a["primary"])),
                      _value((b.get("se") or {}).get(b["primary"])))
            ch = m.change
            value_moved = (m.old != m.new) if ch is None else abs(ch) > min_change
            if value_moved or m.old_rank != m.new_rank:
                c.moved.append(m)
    ro, rn = _mean_ranks(old, both), _mean_ranks(new, both)
    c.overall = {k: (ro.get(k), rn.get(k))
                 for k in sorted(set(ro) | set(rn), key=lambda k: (rn.get(k, math.inf), k))}
    return c


def lines(c: ArenaComparison, table) -> list[str]:
    """The comparison as text; ``table(headers, rows)`` formats a table (the CLI's)."""
    out = ["overall (mean rank over the scenarios both sides ran):",
           table(["contender", "old", "new", "change"],
                 [[k, "—" if o is None else f"{o:.2f}", "—" if n is None else f"{n:.2f}",
                   "—" if o is None or n is None else f"{n - o:+.2f}"]
                  for k, (o, n) in c.overall.items()])]
    out += [f"note: {n}" for n in c.notes]
    if c.moved:
        rows = [[m.scenario, m.contender, COLUMNS[m.metric][0], fmt(m.old), fmt(m.new),
                 "—" if m.change is None else f"{100 * m.change:+.2f} %",
                 str(m.old_rank) + ("" if m.old_rank == m.new_rank else f" -> {m.new_rank}"),
                 {None: "—", True: "beyond", False: "within"}[m.beyond_scatter]]
                for m in c.moved]
        beyond = sum(1 for m in c.moved if m.beyond_scatter)
        out += ["", f"{len(c.moved)} results moved (primary metric, rank); {beyond} beyond the seeds' "
                f"scatter ({NOISE_SE:g} standard errors of the difference):",
                table(["scenario", "contender", "metric", "old", "new", "change", "rank", "scatter"], rows)]
    else:
        out += ["", "no result moved"]
    for what, items in (("only in the old output", c.only_old), ("only in the new output", c.only_new)):
        if items:
            out += ["", f"{what}:"] + [f"  {i}" for i in items]
    return out
