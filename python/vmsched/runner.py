"""Running scenarios."""

from __future__ import annotations

import json
import numbers
import sys
import time
import traceback
from typing import Any, Mapping, Union

from . import _core
from .control import action_dicts, check_controller
from .errors import ControllerError
from .results import Results
from .scenario import PathLike, Scenario, check_scheduler

__all__ = ["run", "Simulation", "check_args"]


class Simulation:
    """Step-by-step control of one run: ``Simulation(scenario, scheduler=None, seed=None,
    check=False)`` with ``scenario`` a :class:`Scenario`, a dict, a file path or the
    scenario's JSON text (``Scenario.to_json()``). It has ``run_until(t_ns)``, ``now_ns``,
    ``horizon_ns``, ``done``, ``events``, ``results_json()``, ``stats_json()`` and
    ``apply_json(by, actions_json)``, those of the core's simulation, with the arguments
    checked here so that a bad one is named."""

    __slots__ = ("_sim",)

    def __init__(self, scenario: Any, scheduler: str | None = None, seed: int | None = None,
                 check: bool = False):
        if isinstance(scenario, str) and scenario.lstrip().startswith("{"):
            sc = Scenario.from_json(scenario)
        else:
            sc = Scenario.load(scenario)
        if scheduler is not None:
            check_scheduler(scheduler, path="hypervisor.scheduler")
        check_args(None, seed, check)
        self._sim = _core.Simulation(sc.to_json(), scheduler, None if seed is None else int(seed.__index__()), check)

    def run_until(self, t_ns: int) -> None:
        """Advance to simulated time ``t_ns`` (clamped to the horizon)."""
        if isinstance(t_ns, bool) or not hasattr(t_ns, "__index__"):
            raise TypeError(f"t_ns must be a whole number of nanoseconds, got {t_ns!r}")
        t = t_ns.__index__()
        if t < 0:
            raise ValueError(f"t_ns must be ≥ 0 (simulated time runs forward from 0), got {t}")
        self._sim.run_until(min(t, U64_MAX))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sim, name)

    def __repr__(self) -> str:
        return repr(self._sim)

#: A run advances in this many steps (for the progress bar and Ctrl-C responsiveness).
DEFAULT_CHUNKS = 200

#: First step of a run-to-completion scenario (doubles while steps take < 50 ms of wall time).
COMPLETION_STEP_NS = 10_000_000

U64_MAX = 2**64 - 1

#: At most this many vCPU state slices in a trace (about 100 MB of JSON; Perfetto's UI loads
#: traces up to a few hundred MB; docs/results.md, Timeline trace).
TRACE_MAX_SLICES = 500_000


def trace_window_ns(trace: Any, horizon_ns: int) -> tuple[int, int] | None:
    """``trace`` as a window of simulated time in ns: False/None (no trace), True (the whole
    run) or ``(from_ms, until_ms)``. Bad values raise with the argument's name."""
    if trace is None or trace is False:
        return None
    if trace is True:
        return 0, horizon_ns
    if isinstance(trace, (str, bytes)) or not hasattr(trace, "__len__") or len(trace) != 2:
        raise TypeError(f"trace must be True, False or (from_ms, until_ms), got {trace!r}")
    a, b = trace
    for name, v in (("from_ms", a), ("until_ms", b)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v < float("inf"):
            raise ValueError(f"trace {name} must be a finite number of ms >= 0, got {v!r}")
    if not a < b:
        raise ValueError(f"trace window must start before it ends, got {a} ms to {b} ms")
    return min(round(a * 1e6), U64_MAX - 1), min(round(b * 1e6), U64_MAX)


def check_args(scheduler: Any = None, seed: Any = None, check: Any = False,
               progress: Any = False) -> None:
    """Validate the Python-side arguments of :func:`run` with clear errors."""
    if scheduler is not None:
        check_scheduler(scheduler, path="scheduler")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            # accept numpy integers
            if hasattr(seed, "__index__") and not isinstance(seed, bool):
                seed = seed.__index__()
            else:
                raise TypeError(f"seed must be a non-negative integer, got {type(seed).__name__}")
        if not 0 <= seed <= U64_MAX:
            raise ValueError(f"seed must be a non-negative integer below 2**64, got {seed}")
    if not isinstance(check, bool):
        raise TypeError(f"check must be True or False, got {type(check).__name__}")
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True or False, got {type(progress).__name__}")


def _step(controller: Any, stats: dict, by: str) -> Any:
    """``controller.step(stats)``; an exception it raises becomes a :class:`ControllerError`
    that says when and where (the deepest frame of the controller's own code)."""
    try:
        return controller.step(stats)
    except Exception as e:
        last = traceback.extract_tb(e.__traceback__)[-1]
        raise ControllerError(f"{by}.step() at t={stats['now_ns'] / 1e6:g} ms raised "
                              f"{type(e).__name__}: {e} ({last.filename}:{last.lineno})") from e


def run(scenario: Union[Scenario, Mapping[str, Any], PathLike],
        scheduler: str | None = None,
        seed: int | None = None,
        check: bool = False,
        progress: bool = False,
        chunks: int = DEFAULT_CHUNKS,
        controller: Any = None,
        trace: Any = False) -> Results:
    """Run a scenario (a :class:`Scenario`, a dict or a file path) to its end.

    ``scheduler`` and ``seed`` override the scenario's own; ``check=True`` asserts the
    model's invariants after every event (raises :class:`SimulationError` on a violation);
    ``progress=True`` shows a progress bar on stderr for runs longer than a second.
    ``controller`` is a Python controller (see :mod:`vmsched.control`): its ``step(stats)`` is
    called every ``controller.interval_ms`` of simulated time and its actions are applied
    (beside the scenario's own ``[controller]``, if any). ``trace`` records every vCPU's run
    state (True: the whole run; ``(from_ms, until_ms)``: a window of simulated time) as Chrome
    Trace Event JSON, in ``Results.trace_json`` (``Results.write_trace(path)``; it opens in
    ui.perfetto.dev); tracing does not change the run.
    """
    check_args(scheduler, seed, check, progress)
    interval_ns = None
    if controller is not None:
        interval_ns = max(1, round(check_controller(controller) * 1e6))
        by = str(getattr(controller, "name", "") or type(controller).__name__)
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise ValueError(f"chunks must be a positive integer, got {chunks!r}")
    sc = Scenario.load(scenario)
    if seed is not None:
        seed = int(seed.__index__())
    sim = _core.Simulation(sc.to_json(), scheduler, seed, check)

    horizon = int(sim.horizon_ns)
    window = trace_window_ns(trace, horizon)
    if window is not None:
        sim.enable_trace(window[0], window[1], TRACE_MAX_SLICES)
    # A scenario with a duration advances in `chunks` equal steps. A run-to-completion
    # scenario's horizon is only a safety limit, so it starts with small steps that grow while
    # they are cheap. The chunking does not change results: run_until is exact.
    fixed = sc.to_dict().get("duration_ms") is not None
    step = max(1, -(-horizon // chunks)) if fixed else min(max(1, horizon), COMPLETION_STEP_NS)
    bar = None
    if progress:
        from tqdm import tqdm

        desc = f"{sc.name} [{scheduler or sc.scheduler}]"
        if fixed:
            bar = tqdm(total=round(horizon / 1e9, 6), unit="sim-s", delay=1.0, file=sys.stderr,
                       disable=None,
                       desc=desc, leave=False,
                       bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.3f}/{total:.3f} "
                                  "sim-s [{elapsed}<{remaining}]")
        else:
            bar = tqdm(total=None, unit="sim-s", delay=1.0, file=sys.stderr, desc=desc,
                       disable=None,
                       leave=False,
                       bar_format="{desc}: {n:.3f} sim-s until all VMs finish [{elapsed}]")
    t0 = time.perf_counter()
    try:
        target = 0
        shown = 0
        next_control = interval_ns if interval_ns is not None else horizon + 1
        while not sim.done and target < horizon:
            target = min(target + step, horizon)
            c0 = time.perf_counter()
            while next_control <= target and not sim.done:
                sim.run_until(next_control)
                if sim.done:
                    break
                stats = json.loads(sim.stats_json())
                acts = action_dicts(_step(controller, stats, by), where=f"{by}.step()")
                if acts:
                    sim.apply_json(by, json.dumps(acts))
                next_control += interval_ns
            sim.run_until(target)
            if not fixed and time.perf_counter() - c0 < 0.05:
                step *= 2
            if bar is not None:
                now = min(int(sim.now_ns), horizon)
                bar.update(round((now - shown) / 1e9, 6))
                shown = now
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    res = Results(sim.results_json(), wall_s=wall)
    if window is not None:
        res.trace_json = sim.trace_json()
        res.trace_truncated_at_ns = sim.trace_truncated_at_ns
    return res

