"""``--set KEY=VALUE``: change one field of a scenario from the command line.

``KEY`` is a dotted path into the scenario schema (docs/model.md), e.g.
``hypervisor.params.tslice_ms`` or ``controller.params.ratio``; a list is entered by index
(``vms.0.vcpus``, or ``vms[0].vcpus`` as errors name a field) or, for every element, by ``*``
(``vms.*.vcpus``). ``VALUE`` is a TOML
value (``0.9``, ``true``, ``"credit2"``, ``[1, 2]``, ``{ enabled = false }``); anything that
does not parse as one is taken as a bare string, so ``hypervisor.scheduler=credit2`` works.

Every container on the path but the last must exist, in the scenario or among its defaults
(a table the scenario leaves out, such as ``host.costs``, is created when the scenario parser
fills it in); the last field may be new (a parameter left at its default). Values are checked
by the same validator as a scenario file, so a misspelt parameter or a wrong type fails with
the field's path.

``vmsched run`` applies each override to its one scenario, which must have the path;
``vmsched reproduce`` applies it to every run whose scenario has the path (a controller's parameter reaches only the runs with
that controller; the baselines stay as they are) and reports the runs it reached. A reproduction
run with overrides is exploratory: its report says so, and it is never the reference
``docs/reproductions.md``.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from .batch import Run

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

__all__ = ["Override", "OverrideError", "parse", "apply", "apply_overrides"]


class OverrideError(ValueError):
    """A malformed ``--set`` or one that reaches no field; the message names the override."""


@dataclass(frozen=True)
class Override:
    text: str
    path: tuple[str, ...]
    value: Any

    def __str__(self) -> str:
        return self.text


def parse(text: str) -> Override:
    """``"a.b.c=VALUE"`` → :class:`Override`."""
    if not isinstance(text, str):
        raise TypeError(f"an override is a 'KEY=VALUE' string, got {type(text).__name__}")
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise OverrideError(f"--set {text!r}: expected KEY=VALUE, e.g. "
                            f"hypervisor.params.tslice_ms=10")
    # `vms[0].vcpus`, as scenario errors name a field, is `vms.0.vcpus`.
    key = re.sub(r"\[\s*(\d+|\*)\s*\]", r".\1", key).lstrip(".")
    path = tuple(s.strip() for s in key.split("."))
    if any(not s for s in path):
        raise OverrideError(f"--set {text!r}: empty segment in the key {key!r}")
    return Override(text=f"{key}={raw.strip()}", path=path, value=_value(raw.strip()))


def _value(raw: str) -> Any:
    if not raw:
        raise OverrideError("--set: empty value (quote an empty string as \"\")")
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def apply(scenario: Mapping[str, Any], ov: Override) -> tuple[dict, int]:
    """A deep copy of ``scenario`` with ``ov`` applied, and the number of fields it set (0 when
    the scenario lacks a container on the path). A list index out of range is an error."""
    try:
        return _apply(scenario, ov)
    except _PathError as e:
        raise OverrideError(f"--set {ov}: {e}") from None


def _apply(scenario: Mapping[str, Any], ov: Override) -> tuple[dict, int]:
    data = copy.deepcopy(dict(scenario))
    n = _set(data, ov.path, ov.value, ())
    if n == 0:
        # A container the scenario leaves out may still be one its parser fills in.
        defaults = _defaults(data)
        if defaults is not None:
            n = _set(data, ov.path, ov.value, (), defaults)
    return data, n


def _defaults(scenario: dict) -> dict | None:
    """The scenario as its parser fills it in (every table at its defaults), or None if it does
    not parse (the caller's validation reports why)."""
    from .errors import ScenarioError
    from .scenario import Scenario

    try:
        return Scenario.from_dict(scenario).to_dict()
    except (ScenarioError, TypeError, ValueError):
        return None


class _PathError(OverrideError):
    """A path that cannot be followed (the caller says which override and which scenario)."""


def _set(node: Any, path: tuple[str, ...], value: Any, at: tuple[str, ...], defaults: Any = None) -> int:
    """Set ``value`` at ``path`` under ``node``; ``defaults`` is the same place in the scenario
    as its parser fills it in, whose tables are created where ``node`` lacks them."""
    seg, rest = path[0], path[1:]
    if isinstance(node, list):
        if seg == "*":
            idxs = range(len(node))
        else:
            try:
                i = int(seg)
            except ValueError:
                raise _PathError(f"{_where(at)} is a list; index it with a number or '*', "
                                 f"not {seg!r}") from None
            if not 0 <= i < len(node):
                raise _PathError(f"{_where(at)} has {len(node)} elements, no index {i}")
            idxs = [i]
        if not rest:
            for i in idxs:
                node[i] = copy.deepcopy(value)
            return len(idxs)
        return sum(_set(node[i], rest, value, at + (str(i),), _child(defaults, i)) for i in idxs)
    if isinstance(node, dict):
        keys = list(node) if seg == "*" else [seg]
        if not rest:
            for k in keys:
                node[k] = copy.deepcopy(value)
            return len(keys)
        for k in keys:
            if k not in node and isinstance(_child(defaults, k), dict):
                node[k] = {}
        return sum(_set(node[k], rest, value, at + (k,), _child(defaults, k)) for k in keys if k in node)
    return 0


def _child(defaults: Any, key: str | int) -> Any:
    if isinstance(defaults, dict):
        return defaults.get(key)
    if isinstance(defaults, list) and isinstance(key, int) and 0 <= key < len(defaults):
        return defaults[key]
    return None


def apply_overrides(planned: dict[str, list["Run"]],
                    overrides: Sequence[Override | str]) -> list[str]:
    """Apply each override to every planned run whose scenario has its path (in place; runs
    grouped by name, e.g. by reproduction), check the changed scenarios, and describe where
    each landed ("KEY=VALUE: 6 of 24 runs"). Raises :class:`OverrideError` for an override
    that reaches no run or leaves a scenario invalid. An override may be given as its
    ``"KEY=VALUE"`` text."""
    from .errors import ScenarioError
    from .scenario import Scenario

    overrides = [ov if isinstance(ov, Override) else parse(ov) for ov in overrides]
    total = sum(len(runs) for runs in planned.values())
    reached = {ov.text: 0 for ov in overrides}
    for name, runs in planned.items():
        for i, run in enumerate(runs):
            sc, changed = run.scenario, False
            for ov in overrides:
                try:
                    sc, n = _apply(sc, ov)
                except _PathError as e:
                    raise OverrideError(f"--set {ov}: {_run_of(run.label, name)}: {e}") from None
                if n:
                    reached[ov.text] += 1
                    changed = True
            if changed:
                try:
                    Scenario.from_dict(sc)
                except ScenarioError as e:
                    raise OverrideError(f"--set {', '.join(map(str, overrides))}: "
                                        f"{_run_of(run.label, name)}: {e}") from None
                runs[i] = dataclasses.replace(run, scenario=sc)
    for ov in overrides:
        if not reached[ov.text]:
            raise OverrideError(f"--set {ov}: no run of {', '.join(planned)} has the field "
                                f"{'.'.join(ov.path[:-1]) or ov.path[0]} (nothing was run)")
    return [f"{t}: {n} of {total} runs" for t, n in reached.items()]


def _run_of(label: str, group: str) -> str:
    return f"run {label} of {group}"


def _where(at: tuple[str, ...]) -> str:
    return ".".join(at) if at else "the scenario"
