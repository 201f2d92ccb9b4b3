"""Controllers in Python: observe the host at intervals, return actions.

A controller is an object with an ``interval_ms`` attribute and a ``step(stats)`` method.
``stats`` is a dict of cumulative counters (the same shape as the Rust ``HostStats``, see
``docs/controllers.md``)::

    {"now_ns": ..., "pcpus": [{"node", "busy_ns", "idle_ns"}, ...],
     "vms": [{"name", "weight", "cap_pct", "online_vcpus", "finished",
              "vcpus": [{"online", "state", "pcpu", "affinity", "run_ns", "steal_ns",
                         "dispatches", "ple_exits"}, ...]}, ...]}

``step`` returns a list of actions (the classes below, or dicts of the same JSON shape such as
``{"action": "pin", "vm": 0, "vcpu": 1, "pcpus": [3]}``); ``None`` or ``[]`` means no change.
The simulator checks every action (an invalid one raises :class:`ScenarioError` naming it, e.g.
``actions[1].pcpus``) and applies them at the current simulated time; an online-count change
then takes the guest's hotplug time. Nothing here depends on the simulator, so the same
controller can later drive a real host.

Example::

    class HalveWhenSpinning(vmsched.Controller):
        interval_ms = 500
        def step(self, stats):
            vm = stats["vms"][0]
            ple = sum(v["ple_exits"] for v in vm["vcpus"])
            if ple > 10_000 and vm["online_vcpus"] > 1:
                return [vmsched.SetOnlineVcpus(vm=0, count=vm["online_vcpus"] // 2)]
            return []

    vmsched.run("scenarios/sync-heavy-2vm.toml", controller=HalveWhenSpinning())
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["Controller", "SetOnlineVcpus", "Pin", "Unpin", "SetWeight", "SetCap", "action_dicts",
           "check_controller", "load_controller"]


class Controller:
    """Base class of Python controllers (subclassing is optional: any object with
    ``interval_ms`` and ``step`` works). The base class only observes: its ``step`` returns no
    actions, so a subclass overrides ``step`` to act."""

    #: Simulated time between two calls of ``step``.
    interval_ms: float = 100.0
    #: Name recorded with each action in the results.
    name: str = ""

    def step(self, stats: dict) -> Sequence[Any] | None:
        return []


@dataclass(frozen=True)
class SetOnlineVcpus:
    """Hot-(un)plug vCPUs in the guest until ``count`` are online (highest indices go first;
    vCPU 0 never goes)."""
    vm: int
    count: int
    action = "set_online_vcpus"


@dataclass(frozen=True)
class Pin:
    """Restrict a vCPU to these pCPUs (one pCPU binds it)."""
    vm: int
    vcpu: int
    pcpus: tuple
    action = "pin"


@dataclass(frozen=True)
class Unpin:
    """Let a vCPU run on any pCPU."""
    vm: int
    vcpu: int
    action = "unpin"


@dataclass(frozen=True)
class SetWeight:
    vm: int
    weight: int
    action = "set_weight"


@dataclass(frozen=True)
class SetCap:
    """Cap in percent of one pCPU; 0 removes it."""
    vm: int
    cap_pct: int
    action = "set_cap"


_ACTIONS = (SetOnlineVcpus, Pin, Unpin, SetWeight, SetCap)


def action_dicts(actions: Any, where: str = "step()") -> list[dict]:
    """Turn what a controller returned into the JSON-shaped dicts the core accepts; type errors
    name the offending item."""
    if actions is None:
        return []
    if isinstance(actions, (str, bytes, dict)) or not isinstance(actions, Sequence):
        raise TypeError(f"{where} must return a list of actions or None, got {type(actions).__name__}")
    out = []
    for i, a in enumerate(actions):
        if isinstance(a, _ACTIONS):
            d = {"action": a.action}
            for f in dataclasses.fields(a):
                v = getattr(a, f.name)
                d[f.name] = list(v) if f.name == "pcpus" else v
            out.append(d)
        elif isinstance(a, dict):
            out.append(dict(a))
        else:
            raise TypeError(f"{where} result[{i}] must be an action (vmsched.Pin, ...) or a dict, "
                            f"got {type(a).__name__}")
    return out


def check_controller(controller: Any) -> float:
    """Check a controller object; return its interval in ms."""
    step = getattr(controller, "step", None)
    if not callable(step):
        raise TypeError(f"controller must have a step(stats) method, got {type(controller).__name__}")
    interval = getattr(controller, "interval_ms", None)
    if isinstance(interval, bool) or not isinstance(interval, (int, float)):
        raise TypeError(f"controller.interval_ms must be a number of milliseconds, got {interval!r}")
    if not math.isfinite(interval) or interval <= 0:
        raise ValueError(f"controller.interval_ms must be > 0, got {interval}")
    if interval < 1e-3:
        raise ValueError(f"controller.interval_ms must be at least 0.001 ms (1 µs), got {interval}")
    return float(interval)


def load_controller(spec: str, params: Mapping[str, Any] | None = None, base: Path | None = None) -> Any:
    """A fresh controller from ``spec``, ``"FILE.py:Class"`` (a path, relative to ``base`` if
    given) or ``"package.module:Class"`` (importable), called with ``params`` as keyword
    arguments. Each call returns a new instance, so a controller's state never leaks from one
    run into the next. Errors say what is wrong with the spec (``ValueError``)."""
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ValueError(f"expected 'FILE.py:Class' or 'module:Class', got {spec!r}")
    where, name = spec.split(":")
    if where.endswith(".py"):
        path = Path(where) if base is None else Path(base) / where
        path = path.resolve()
        if not path.is_file():
            raise ValueError(f"{spec!r}: no such file {path}")
        # One module per file, named after its path so two files never share a module.
        mod_name = "vmsched_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
        module = sys.modules.get(mod_name)
        if module is None:
            loader_spec = importlib.util.spec_from_file_location(mod_name, path)
            module = importlib.util.module_from_spec(loader_spec)
            try:
                loader_spec.loader.exec_module(module)
            except Exception as e:
                raise ValueError(f"{spec!r}: importing {path} failed: {type(e).__name__}: {e}") from None
            sys.modules[mod_name] = module
    else:
        try:
            module = importlib.import_module(where)
        except Exception as e:
            raise ValueError(f"{spec!r}: cannot import module {where!r}: {type(e).__name__}: {e}") from None
    cls = getattr(module, name, None)
    if cls is None or not callable(cls):
        raise ValueError(f"{spec!r}: {where} has no class or factory named {name!r}")
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(f"{spec!r}: parameters must be a table, got {type(params).__name__}")
    try:
        controller = cls(**dict(params or {}))
    except Exception as e:
        raise ValueError(f"{spec!r}: {name}(**params) failed: {type(e).__name__}: {e}") from None
    try:
        check_controller(controller)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{spec!r}: {e}") from None
    return controller
