"""Scenarios: load from TOML/JSON files or build from Python dicts; always validated by the
Rust core, so a :class:`Scenario` object is known to be valid and carries every default
filled in (``to_dict()`` shows the normalised form).

The schema is documented in ``docs/model.md``; errors name the field path::

    >>> Scenario.from_dict({"host": {"cores_per_socket": 4}, "vms": [{"vcpus": 0, "workloads": []}]})
    Traceback (most recent call last):
    vmsched.errors.ScenarioError: vms[0].vcpus: must be ≥ 1
"""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Union

from . import _core
from .errors import ScenarioError

__all__ = ["Scenario", "scheduler_names", "workload_names", "catalog"]

PathLike = Union[str, "os.PathLike[str]"]

_CATALOG: dict | None = None


def catalog() -> dict:
    """``{"schedulers": [{name, description, source}, ...], "workloads": [...]}``."""
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = json.loads(_core.catalog_json())
    return copy.deepcopy(_CATALOG)


def scheduler_names() -> list[str]:
    return [e["name"] for e in catalog()["schedulers"]]


def workload_names() -> list[str]:
    return [e["name"] for e in catalog()["workloads"]]


def check_scheduler(name: Any, path: str = "hypervisor.scheduler") -> str:
    """Check a scheduler name against the catalogue; raise ScenarioError naming ``path``."""
    if not isinstance(name, str):
        raise TypeError(f"scheduler must be a string such as 'credit', got {type(name).__name__}")
    known = scheduler_names()
    if name not in known:
        raise ScenarioError(path, f"unknown scheduler '{name}' (known: {', '.join(known)})")
    return name


def _json_default(o: Any) -> Any:
    # numpy scalars and arrays, pathlib paths, sets/tuples of plain values
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError(f"value {o!r} of type {type(o).__name__} is not allowed in a scenario")


def _unserialisable(node: Any, path: str = "") -> tuple[str, str] | None:
    """The path (``vms[1].guest.tick_us``, as the core names fields) and reason of the first value
    a scenario cannot hold: a NaN or infinite number, a non-string key, an unsupported type."""
    if isinstance(node, float):
        return None if math.isfinite(node) else (path, f"must be a finite number, got {node}")
    if isinstance(node, Mapping):
        for k, v in node.items():
            if not isinstance(k, str):
                return (path, f"keys must be strings, got {k!r}")
            bad = _unserialisable(v, f"{path}.{k}" if path else k)
            if bad:
                return bad
        return None
    if isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            bad = _unserialisable(v, f"{path}[{i}]")
            if bad:
                return bad
        return None
    if node is None or isinstance(node, (str, int, bool)):
        return None
    try:
        return _unserialisable(_json_default(node), path)
    except TypeError as e:
        return (path, str(e))


def _toml_syntax_reason(text: str) -> str | None:
    """A TOML syntax error with its line and column (the core's parser reports the path of
    schema errors but not the position of syntax errors); None if tomllib is unavailable or
    finds no syntax error."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        return None
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return f"TOML syntax error: {e}"
    return None


class Scenario:
    """A validated scenario. Build with :meth:`from_file`, :meth:`from_toml`,
    :meth:`from_json` or :meth:`from_dict`; never construct from unvalidated data."""

    __slots__ = ("_data", "_json", "source")

    def __init__(self, normalised_json: str, source: str | None = None):
        # Internal: `normalised_json` must come from the Rust validator.
        self._json = normalised_json
        self._data = json.loads(normalised_json)
        self.source = source

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def from_toml(cls, text: str, source: str | None = None) -> "Scenario":
        if not isinstance(text, str):
            raise TypeError(f"TOML text must be a str, got {type(text).__name__}")
        try:
            normalised = _core.validate_toml(text)
        except ScenarioError as e:
            if not e.path:
                raise ScenarioError("", _toml_syntax_reason(text) or e.reason) from None
            raise
        sc = cls(normalised, source)
        sc._check_names()
        return sc

    @classmethod
    def from_json(cls, text: str, source: str | None = None) -> "Scenario":
        if not isinstance(text, str):
            raise TypeError(f"JSON text must be a str, got {type(text).__name__}")
        sc = cls(_core.validate_json(text), source)
        sc._check_names()
        return sc

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Scenario":
        if isinstance(data, Scenario):
            return data
        if not isinstance(data, Mapping):
            raise TypeError(f"a scenario must be a dict, got {type(data).__name__}")
        try:
            text = json.dumps(data, default=_json_default, allow_nan=False)
        except (TypeError, ValueError) as e:
            bad = None if "Circular" in str(e) else _unserialisable(data)
            raise ScenarioError(*(bad or ("", f"scenario is not JSON-serialisable: {e}"))) from None
        return cls.from_json(text)

    @classmethod
    def from_file(cls, path: PathLike) -> "Scenario":
        """Load a ``.toml`` (or ``.json``) scenario file. The TOML is parsed by the Rust core
        (the same parser as ``vmsched validate``), so errors carry field paths."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise ScenarioError("", f"not a UTF-8 text file ({e.reason})") from None
        if p.suffix.lower() == ".json":
            return cls.from_json(text, source=str(p))
        return cls.from_toml(text, source=str(p))

    @classmethod
    def load(cls, obj: Union["Scenario", Mapping[str, Any], PathLike]) -> "Scenario":
        """Accept a Scenario, a dict or a file path."""
        if isinstance(obj, Scenario):
            return obj
        if isinstance(obj, Mapping):
            return cls.from_dict(obj)
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_file(obj)
        raise TypeError(
            f"scenario must be a Scenario, a dict or a file path, got {type(obj).__name__}"
        )

    # -- accessors ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The normalised scenario (every default filled in) as a fresh dict."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        return self._json

    @property
    def name(self) -> str:
        return self._data.get("name", "scenario")

    @property
    def scheduler(self) -> str:
        return self._data.get("hypervisor", {}).get("scheduler", "credit")

    @property
    def seed(self) -> int:
        return self._data.get("seed", 1)

    @property
    def n_pcpus(self) -> int:
        h = self._data["host"]
        return int(h.get("sockets", 1)) * int(h["cores_per_socket"])

    def replace(self, **changes: Any) -> "Scenario":
        """A copy with top-level fields replaced (validated again), e.g. ``replace(seed=7)``."""
        d = self.to_dict()
        d.update(changes)
        return Scenario.from_dict(d)

    def _check_names(self) -> None:
        # Guard in front of the core: an unknown scheduler name fails at load time with the
        # same path the core uses, whatever stage of the core catches it.
        check_scheduler(self.scheduler)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._data == other._data

    def __repr__(self) -> str:
        n = len(self._data.get("vms", []))
        return (f"<Scenario {self.name!r}: {self.n_pcpus} pCPUs, {n} VMs, "
                f"scheduler={self.scheduler}>")
