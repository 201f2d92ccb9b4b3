"""``vmsched compare OLD NEW``: what moved between two ``vmsched reproduce`` outputs.

A researcher who changes the model (a mechanism, a default, a policy) wants to know which
reproduced numbers it moved and which verdicts it flipped, before reading either report. Each
side is an output folder of ``vmsched reproduce`` (its ``outcomes.json``) or that file itself.
The comparison lists the tally (quantities within tolerance, claims holding) on both sides,
every quantity whose simulated value moved by more than ``min_change`` (relative) or whose
verdict changed, every claim that flipped, and what only one side has. It reads the files
only; it runs nothing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional


class CompareError(ValueError):
    """An input that is not a ``vmsched reproduce`` (or, for :mod:`vmsched.arena_compare`, a
    ``vmsched arena``) output; the message names the file."""


@dataclass
class Moved:
    reproduction: str
    label: str
    old: Optional[float]
    new: Optional[float]
    old_within: Optional[bool]
    new_within: Optional[bool]

    @property
    def change(self) -> Optional[float]:
        """Relative change, new / old - 1 (None when either is missing or old is 0)."""
        if self.old is None or self.new is None or self.old == 0:
            return None
        return self.new / self.old - 1


@dataclass
class Comparison:
    old_tally: Mapping[str, int]
    new_tally: Mapping[str, int]
    moved: list[Moved] = field(default_factory=list)
    flipped: list[tuple[str, str, Optional[bool], Optional[bool]]] = field(default_factory=list)
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_output(path: str | Path, file: str, command: str) -> tuple[Path, Any]:
    """``path`` (an output folder of ``vmsched <command>``, or its ``file`` itself) and the JSON
    that file holds; a missing or unreadable file is a :class:`CompareError` naming it."""
    p = Path(path)
    f = p / file if p.is_dir() else p
    try:
        return f, json.loads(f.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompareError(f"{f}: no such file (give a vmsched {command} output folder or its "
                           f"{file})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CompareError(f"{f}: not a JSON file ({e})") from None


def load(path: str | Path) -> dict:
    """The ``outcomes.json`` of a ``vmsched reproduce`` output folder (or the file itself)."""
    f, data = read_output(path, "outcomes.json", "reproduce")
    if not isinstance(data, dict) or not isinstance(data.get("outcomes"), list) or "tally" not in data:
        raise CompareError(f"{f}: not a vmsched reproduce outcomes.json (no 'outcomes' and 'tally')")
    missing = [k for k in TALLY_KEYS if k not in data["tally"]]
    if missing:
        raise CompareError(f"{f}: its tally lacks {', '.join(missing)} (written by another vmsched "
                           f"version?)")
    return data


#: What the tally must hold (reproduce/report.py writes it).
TALLY_KEYS = ("within", "numeric", "claims_hold", "claims")


def _value(q: Mapping[str, Any]) -> Optional[float]:
    v = q.get("simulated")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def compare(old: Mapping[str, Any], new: Mapping[str, Any], min_change: float = 0.0) -> Comparison:
    """What moved from ``old`` to ``new`` (two loaded ``outcomes.json``). A quantity is listed
    when its verdict changed or its value moved by more than ``min_change`` (relative; 0: any
    change at all)."""
    if min_change < 0 or not math.isfinite(min_change):
        raise CompareError(f"min_change must be a finite fraction >= 0, got {min_change}")
    c = Comparison(old["tally"], new["tally"])
    for side, d in (("old", old), ("new", new)):
        if d.get("overrides"):
            c.notes.append(f"the {side} side is exploratory (--set {'; '.join(d['overrides'])})")
    if bool(old.get("quick")) != bool(new.get("quick")):
        c.notes.append("one side ran --quick and the other did not: their numbers differ by design")
    olds = {o["name"]: o for o in old["outcomes"]}
    news = {o["name"]: o for o in new["outcomes"]}
    c.only_old += [f"reproduction {n}" for n in olds if n not in news]
    c.only_new += [f"reproduction {n}" for n in news if n not in olds]
    for name in [n for n in olds if n in news]:
        oq = {q["key"]: q for q in olds[name]["quantities"]}
        nq = {q["key"]: q for q in news[name]["quantities"]}
        c.only_old += [f"{name}: {oq[k]['label']}" for k in oq if k not in nq]
        c.only_new += [f"{name}: {nq[k]['label']}" for k in nq if k not in oq]
        for k in [k for k in oq if k in nq]:
            a, b = oq[k], nq[k]
            m = Moved(name, b["label"], _value(a), _value(b), a.get("within"), b.get("within"))
            ch = m.change
            value_moved = (m.old != m.new) if ch is None else abs(ch) > min_change
            if value_moved or m.old_within != m.new_within:
                c.moved.append(m)
        oc = {x["text"]: x.get("holds") for x in olds[name]["claims"]}
        nc = {x["text"]: x.get("holds") for x in news[name]["claims"]}
        c.only_old += [f"{name}: claim: {t}" for t in oc if t not in nc]
        c.only_new += [f"{name}: claim: {t}" for t in nc if t not in oc]
        c.flipped += [(name, t, oc[t], nc[t]) for t in oc if t in nc and oc[t] != nc[t]]
    return c


def _verdict(within: Optional[bool]) -> str:
    return "—" if within is None else ("within" if within else "out")


def _num(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:.4g}"


def lines(c: Comparison, table) -> list[str]:
    """The comparison as text; ``table(headers, rows)`` formats a table (the CLI's)."""
    ot, nt = c.old_tally, c.new_tally
    out = [f"quantities within tolerance: {ot['within']} of {ot['numeric']} -> "
           f"{nt['within']} of {nt['numeric']}",
           f"claims holding: {ot['claims_hold']} of {ot['claims']} -> {nt['claims_hold']} of {nt['claims']}"]
    out += [f"note: {n}" for n in c.notes]
    if c.moved:
        rows = [[m.reproduction, m.label, _num(m.old), _num(m.new),
                 "—" if m.change is None else f"{100 * m.change:+.2f} %",
                 _verdict(m.old_within) + ("" if m.old_within == m.new_within else f" -> {_verdict(m.new_within)}")]
                for m in c.moved]
        out += ["", f"{len(c.moved)} quantities moved:",
                table(["reproduction", "quantity", "old", "new", "change", "verdict"], rows)]
    else:
        out += ["", "no quantity moved"]
    if c.flipped:
        out += ["", f"{len(c.flipped)} claims flipped:"]
        out += [f"  {name}: {'holds' if new else 'DOES NOT HOLD'} (was {'holding' if old else 'not holding'}): {text}"
                for name, text, old, new in c.flipped]
    for what, items in (("only in the old output", c.only_old), ("only in the new output", c.only_new)):
        if items:
            out += ["", f"{what}:"] + [f"  {i}" for i in items]
    return out
