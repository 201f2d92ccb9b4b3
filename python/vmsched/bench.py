"""`vmsched bench`: simulator speed on four scenarios built here in Python.

* ``small``: 4 pCPUs, two 2-vCPU VMs running a `parallel` workload;
* ``sync-heavy-2vm``: acceptance case 3(b): 12 pCPUs, two 12-vCPU VMs with the sync-heavy
  `parallel` workload (the same scenario as ``scenarios/sync-heavy-2vm.toml``);
* ``host64-32x8``: 64 pCPUs (2 sockets x 32 cores), 32 VMs of 8 vCPUs with a mix of
  sync-heavy parallel, hog, light parallel and kbuild workloads;
* ``specvirt-9t``: seed 001's host at its peak under the original Xen 4.1 (9 tiles: 54 server
  VMs on 24 pCPUs, pass-through I/O, the LLC and TLB pressure models), the kind of run that
  takes most of `vmsched reproduce --all`'s time.

Reported per scenario: simulated events per wall second and simulated seconds per wall
second, each the median of N repetitions (wall time of the event loop only, checking off).
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from typing import Any

from . import _core
from .scenario import Scenario

__all__ = ["sync_heavy", "small", "host64", "specvirt", "bench_scenarios", "measure", "run_bench"]


def sync_heavy_workload() -> dict:
    """The 12-thread sync-heavy `parallel` workload of acceptance case 3."""
    return {
        "kind": "parallel",
        "threads": 12,
        "iterations": 2000,
        "compute_us": {"dist": "exp", "mean_us": 60},
        "locks_per_iteration": 2,
        "cs_us": 3,
        "shootdown_every": 4,
        "barrier_every": 50,
        "barrier_spin_us": 50,
    }


def sync_heavy(n_vms: int = 2, scheduler: str = "credit") -> dict:
    """12 pCPUs on one socket, ``n_vms`` VMs of 12 vCPUs each running the sync-heavy
    workload to completion (case 3(a) with 1 VM, 3(b) with 2)."""
    return {
        "name": f"sync-heavy-{n_vms}vm",
        "seed": 1,
        "host": {"sockets": 1, "cores_per_socket": 12},
        "hypervisor": {"scheduler": scheduler},
        "vms": [
            {"name": f"vm{i}", "vcpus": 12, "workloads": [sync_heavy_workload()]}
            for i in range(n_vms)
        ],
    }


def small(duration_ms: float = 1000.0) -> dict:
    return {
        "name": "bench-small",
        "seed": 1,
        "duration_ms": duration_ms,
        "host": {"sockets": 1, "cores_per_socket": 4},
        "vms": [
            {"name": f"vm{i}", "vcpus": 2,
             "workloads": [{"kind": "parallel", "compute_us": {"dist": "exp", "mean_us": 100},
                            "locks_per_iteration": 1, "cs_us": 2, "shootdown_every": 10}]}
            for i in range(2)
        ],
    }


def host64(duration_ms: float = 1000.0) -> dict:
    vms = []
    for i in range(32):
        kind = i % 4
        if kind == 0:
            w = dict(sync_heavy_workload(), threads=8)
            w.pop("iterations")  # run for the whole duration
        elif kind == 1:
            w = {"kind": "hog"}
        elif kind == 2:
            w = {"kind": "parallel", "compute_us": {"dist": "exp", "mean_us": 500},
                 "locks_per_iteration": 1, "cs_us": 1, "barrier_every": 20}
        else:
            w = {"kind": "kbuild", "units": 100000}
        vms.append({"name": f"vm{i}", "vcpus": 8, "workloads": [w]})
    return {
        "name": "bench-host64-32x8",
        "seed": 1,
        "duration_ms": duration_ms,
        "host": {"sockets": 2, "cores_per_socket": 32},
        "vms": vms,
    }


def specvirt(duration_ms: float = 1000.0) -> dict:
    """The csrc reproductions' original Xen at the seed's 9-tile peak (reproduce/csrc.py)."""
    from .reproduce import csrc

    return csrc.scenario(csrc.PEAK_TILES, "original", duration_ms)


def bench_scenarios(quick: bool = False) -> dict[str, dict]:
    d = 200.0 if quick else 1000.0
    return {
        "small": small(d),
        "sync-heavy-2vm": sync_heavy(2),
        "host64-32x8": host64(d),
        "specvirt-9t": specvirt(d),
    }


def measure(scenario: dict | Scenario, repeat: int = 5, scheduler: str | None = None) -> dict:
    """Run ``repeat`` times; return medians of events/s and simulated s per wall s."""
    sc = Scenario.load(scenario)
    text = sc.to_json()
    walls, events, sim_s = [], [], []
    for _ in range(repeat):
        sim = _core.Simulation(text, scheduler, None, False)
        t0 = time.perf_counter()
        sim.run_until(sim.horizon_ns)
        walls.append(time.perf_counter() - t0)
        events.append(int(sim.events))
        sim_s.append(sim.now_ns / 1e9)

    def rate(num: float, wall: float) -> float:
        return num / wall if wall > 0 else float("inf")

    return {
        "scenario": sc.name,
        "repeat": repeat,
        "events": statistics.median(events),
        "sim_s": statistics.median(sim_s),
        "wall_s_median": statistics.median(walls),
        "events_per_s": statistics.median(rate(e, w) for e, w in zip(events, walls)),
        "sim_s_per_wall_s": statistics.median(rate(s, w) for s, w in zip(sim_s, walls)),
    }


def run_bench(quick: bool = False, repeat: int | None = None) -> dict[str, Any]:
    repeat = repeat if repeat is not None else (3 if quick else 5)
    rows = [dict(measure(sc, repeat), bench=name) for name, sc in bench_scenarios(quick).items()]
    return {
        "quick": quick,
        "machine": {"python": platform.python_version(), "machine": platform.machine(),
                    "processor": platform.processor() or platform.machine()},
        "results": rows,
    }


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=True)
