"""vmsched: a deterministic discrete-event simulator of SMP virtual machines on shared hosts.

Quick use::

    import vmsched
    sc = vmsched.Scenario.from_file("scenarios/sync-heavy-2vm.toml")
    res = vmsched.run(sc, scheduler="cfs", seed=3)
    res.vms[["name", "completion_ms", "share", "lock_spin_pct"]]
    res.to_dir("out/run1")
"""

from __future__ import annotations

from pathlib import Path

from . import _core
from .control import Controller, Pin, SetCap, SetOnlineVcpus, SetWeight, Unpin
from .errors import ControllerError, InternalError, ScenarioError, SimulationError
from .results import Results
from .runner import Simulation, run
from .scenario import Scenario, catalog, scheduler_names, workload_names

__all__ = [
    "Scenario", "Results", "Simulation", "run", "catalog", "scheduler_names", "workload_names",
    "ScenarioError", "SimulationError", "InternalError", "ControllerError", "scenarios_dir", "example_scenarios", "__version__",
    "Controller", "SetOnlineVcpus", "Pin", "Unpin", "SetWeight", "SetCap",
]

__version__ = _core.__version__


def scenarios_dir() -> Path:
    """The scenario library shipped with the package (``python/vmsched/scenarios`` is a
    symlink to the repository's ``scenarios/``)."""
    return Path(__file__).resolve().parent / "scenarios"


def example_scenarios() -> list[Path]:
    """Every ``*.toml`` of the scenario library, sorted by name."""
    return sorted(scenarios_dir().glob("*.toml"))
