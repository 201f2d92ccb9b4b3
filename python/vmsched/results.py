"""Results of a run: the summary JSON of ``docs/results.md`` and pandas tables built from it.

Tables (one row per VM / vCPU / pCPU) flatten nested objects into columns joined by ``_``:
``guest_ns.lock_spin`` becomes ``guest_ns_lock_spin``, ``exits.ple`` becomes ``exits_ple``,
``lock_wait.p99_ns`` becomes ``lock_wait_p99_ns``. Lists (histogram buckets) stay in the JSON
only. Unknown keys are kept, so new fields of the core appear as new columns.

Derived columns added to ``vms`` (computed here, not in summary.json):

* ``guest_cpu_ns``: guest CPU time, the sum of ``guest_ns`` except ``hv`` (hypervisor
  overhead), ``halted`` and ``steal`` (i.e. ``cpu_ns - guest_ns.hv``);
* ``lock_spin_pct``, ``ipi_wait_pct``, ``barrier_spin_pct``, ``useful_pct``: each as a
  percentage of ``guest_cpu_ns``;
* ``completion_ms``: ``completion_ns / 1e6`` (NaN when the VM did not finish);
* ``ops_per_s``: ``ops`` per simulated second (a throughput for endless workloads).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .htmlreport import atomic_write

if TYPE_CHECKING:  # pandas is imported when a table is first built (fast CLI start-up)
    import pandas as pd

__all__ = ["Results", "flatten"]

#: guest_ns categories that are not guest CPU time.
NOT_GUEST_CPU = ("hv", "halted", "steal")

#: Files written by :meth:`Results.to_dir`.
TABLES = ("vms", "vcpus", "pcpus")


def flatten(row: dict, prefix: str = "") -> dict:
    """Flatten nested dicts to ``a_b`` keys; drop lists (histogram buckets)."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "_"))
        elif isinstance(v, (list, tuple)):
            continue
        else:
            out[key] = v
    return out


def _table(rows: Iterable[dict]) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame([flatten(r) for r in rows])


class Results:
    """Results of one run. ``json`` is the exact text of summary.json (byte-stable for a
    given scenario and seed); ``summary`` is it parsed; ``vms``/``vcpus``/``pcpus`` are
    DataFrames."""

    def __init__(self, json_text: str, wall_s: float | None = None):
        self.json = json_text
        self.summary: dict = json.loads(json_text)
        #: wall-clock seconds of the run (not part of summary.json, which stays deterministic)
        self.wall_s = wall_s
        #: the run's timeline trace (Chrome Trace Event JSON), if it was asked for
        #: (``vmsched.run(..., trace=...)``), and when its slice cap stopped it (ns), if it did
        self.trace_json: str | None = None
        self.trace_truncated_at_ns: int | None = None
        self._tables: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_dir(cls, path: str | os.PathLike) -> "Results":
        return cls((Path(path) / "summary.json").read_text(encoding="utf-8"))

    # -- scalar accessors ----------------------------------------------------------------
    @property
    def schema_version(self) -> int | None:
        return self.summary.get("schema_version")

    @property
    def scheduler(self) -> str | None:
        return self.summary.get("scheduler")

    @property
    def seed(self) -> int | None:
        return self.summary.get("seed")

    @property
    def sim_time_ns(self) -> int:
        return int(self.summary.get("sim_time_ns", 0) or 0)

    @property
    def events(self) -> int:
        return int(self.summary.get("events", 0) or 0)

    # -- tables ----------------------------------------------------------------------------
    def _get(self, name: str) -> pd.DataFrame:
        if name not in self._tables:
            rows = self.summary.get(name, []) or []
            if name == "actions":
                # keep the pCPU list of `pin` actions (flatten drops lists)
                rows = [{**r, "pcpus": ",".join(map(str, r["pcpus"]))} if "pcpus" in r else r for r in rows]
            df = _table(rows)
            if name == "vms":
                df = _derive_vm_columns(df, self.sim_time_ns)
            self._tables[name] = df
        return self._tables[name].copy()

    @property
    def vms(self) -> pd.DataFrame:
        return self._get("vms")

    @property
    def vcpus(self) -> pd.DataFrame:
        return self._get("vcpus")

    @property
    def pcpus(self) -> pd.DataFrame:
        return self._get("pcpus")

    @property
    def actions(self) -> pd.DataFrame:
        """Controller actions in the order applied: ``t_ms``, ``by``, ``action`` and the
        action's fields (``vm``, ``vcpu``, ``count``, ``pcpus``, ``weight``, ``cap_pct``); ``pcpus`` is a comma-separated list."""
        return self._get("actions")

    @property
    def totals(self) -> dict:
        """Host-wide figures (``totals`` of summary.json; empty if absent)."""
        return dict(self.summary.get("totals") or {})

    def host_ctx_switches_per_pcpu_s(self) -> float:
        """Mean context switches per pCPU per simulated second (NaN if unknown)."""
        t = self.totals.get("context_switches_per_pcpu_s")
        if t is not None:
            return float(t)
        p = self.pcpus
        if "context_switches_per_s" in p and len(p):
            return float(p["context_switches_per_s"].mean())
        if "context_switches" in p and len(p) and self.sim_time_ns > 0:
            return float(p["context_switches"].sum() / len(p) / (self.sim_time_ns / 1e9))
        return float("nan")

    # -- output ----------------------------------------------------------------------------
    def to_dir(self, path: str | os.PathLike, parquet: bool = True) -> Path:
        """Write summary.json (the exact bytes of the core's JSON), vms/vcpus/pcpus as CSV
        and (by default) Parquet. Files are written to a temporary directory first and then
        renamed into place, so a reader never sees a half-written file."""
        dest = Path(path)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
        except OSError as e:  # name the folder asked for, not the temporary one
            raise OSError(e.errno, f"cannot write results there ({e.strerror or e})", str(dest)) from None
        try:
            with open(tmp / "summary.json", "w", encoding="utf-8", newline="\n") as f:
                f.write(self.json)
                if not self.json.endswith("\n"):
                    f.write("\n")
            for name in TABLES:
                df = getattr(self, name)
                df.to_csv(tmp / f"{name}.csv", index=False, lineterminator="\n")
                if parquet:
                    df.to_parquet(tmp / f"{name}.parquet", index=False, engine="pyarrow")
            if not dest.exists():
                try:
                    os.rename(tmp, dest)  # the whole directory appears at once
                    return dest
                except OSError:
                    dest.mkdir(parents=True, exist_ok=True)
            if not dest.is_dir():
                raise NotADirectoryError(f"{dest}: exists and is not a directory")
            for f in sorted(tmp.iterdir()):  # each file replaced atomically
                os.replace(f, dest / f.name)
            return dest
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def write_trace(self, path: str | os.PathLike) -> Path:
        """Write the run's timeline trace (``run(..., trace=...)``) to ``path``, atomically
        (a temporary file renamed into place). Open it in ui.perfetto.dev."""
        if self.trace_json is None:
            raise ValueError("no trace: run with trace=True or trace=(from_ms, until_ms)")
        dest = Path(path)
        if dest.is_dir():
            raise IsADirectoryError(f"{dest}: is a directory, expected a file name for the trace")
        dest.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(dest, self.trace_json)
        return dest

    def __repr__(self) -> str:
        return (f"<Results scheduler={self.scheduler} seed={self.seed} "
                f"sim_time={self.sim_time_ns / 1e9:.3f}s events={self.events} "
                f"vms={len(self.summary.get('vms', []) or [])}>")


def _derive_vm_columns(df: pd.DataFrame, sim_time_ns: int) -> pd.DataFrame:
    import pandas as pd

    if df.empty:
        return df
    cats = [c for c in df.columns if c.startswith("guest_ns_")]
    on_cpu = [c for c in cats if c[len("guest_ns_"):] not in NOT_GUEST_CPU]
    if on_cpu:
        df["guest_cpu_ns"] = df[on_cpu].fillna(0).sum(axis=1)
        denom = df["guest_cpu_ns"].where(df["guest_cpu_ns"] > 0)
        for cat in ("useful", "lock_spin", "ipi_wait", "barrier_spin"):
            col = f"guest_ns_{cat}"
            if col in df:
                df[f"{cat}_pct"] = 100.0 * df[col] / denom
    if "completion_ns" in df:
        df["completion_ms"] = pd.to_numeric(df["completion_ns"], errors="coerce") / 1e6
    if "ops" in df and sim_time_ns > 0:
        df["ops_per_s"] = df["ops"] / (sim_time_ns / 1e9)
    return df
