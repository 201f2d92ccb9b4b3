"""Exceptions of vmsched. The Rust core raises these (looked up by name from ``_core``)."""

from __future__ import annotations

__all__ = ["ScenarioError", "SimulationError", "InternalError", "ControllerError"]


class ScenarioError(ValueError):
    """An invalid scenario. ``path`` is the dotted field path (``vms[1].vcpus``), ``reason``
    says what is wrong. ``str(e)`` is ``"path: reason"`` (just the reason when the path is
    empty, e.g. a TOML syntax error)."""

    def __init__(self, path: str, reason: str):
        self.path = str(path)
        # one line: multi-line parser messages are joined
        self.reason = "; ".join(l.strip() for l in str(reason).strip().splitlines() if l.strip())
        super().__init__(self.path, self.reason)

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason

    def __reduce__(self):
        return (type(self), (self.path, self.reason))


class SimulationError(RuntimeError):
    """An invariant violation found by the checking mode (``check=True``) during a run."""

    def __init__(self, at_ns: int, message: str):
        self.at_ns = int(at_ns)
        self.message = str(message)
        super().__init__(self.at_ns, self.message)

    def __str__(self) -> str:
        return f"invariant violated at t={self.at_ns} ns: {self.message}"

    def __reduce__(self):
        return (type(self), (self.at_ns, self.message))


class InternalError(RuntimeError):
    """A bug in the simulator core (a Rust panic), with its message and source location."""


class ControllerError(RuntimeError):
    """A Python controller's ``step`` raised. ``str(e)`` names the controller, the simulated
    time, the exception and where in the controller's code it was raised; the original
    exception is the ``__cause__`` (its traceback is there for a debugger)."""

    def __init__(self, message: str):
        self.message = str(message)
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (type(self), (self.message,))
