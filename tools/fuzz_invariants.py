"""Fuzz the simulator's invariants: the built-in scenarios (scenarios/*.toml, scenarios/arena/)
under every scheduler or arena contender, each case perturbed at random (host size, vCPU counts,
guest options, hypervisor options, a controller), run with the invariant checker after every
event.

A case the scenario parser refuses is fine (the error names the field; counted as invalid). A
case that raises anything else is a failure: an invariant violation or an internal error, with
the scenario written out so it can be replayed. Deterministic: the same --seed gives the same
cases.

Session 38 wrote it and found with it that a halt-polling vCPU under credit's idle-vCPU tasklets
had its pCPU count a run twice (`a_tasklet_call_that_ends_a_halt_poll_runs_the_tasklets_in_the_idle_vcpu`
in crates/vmsched-core/src/sim/tests.rs). `tests/test_fuzz_invariants.py` runs a short
campaign; longer ones are for the command line.

Usage (from the repository root, with .venv active):
    python tools/fuzz_invariants.py [--seed N] [--cases N] [--durations-ms 50,200,500] [--out DIR]
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from vmsched import _core  # noqa: E402
from vmsched.arena import CONTENDERS  # noqa: E402
from vmsched.errors import ScenarioError  # noqa: E402
from vmsched.scenario import Scenario  # noqa: E402

#: Every scheduler in the catalogue (`vmsched list`), so a new one is fuzzed as soon as it is added.
SCHEDULERS = tuple(s["name"] for s in json.loads(_core.catalog_json())["schedulers"])


def scenario_files() -> list[Path]:
    return sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "scenarios" / "arena").glob("*.toml"))


def perturb(d: dict[str, Any], rng: random.Random, scheduler: str) -> None:
    """Change ``d`` (a parsed scenario) in place: each option with its own chance."""
    host, hv = d["host"], d.setdefault("hypervisor", {})
    if rng.random() < 0.5:
        host["cores_per_socket"] = rng.choice([1, 2, 3, 4, 6])
        host["sockets"] = rng.choice([1, 2])
        host.pop("numa_nodes", None)
        for vm in d["vms"]:
            for k in ("pin", "cpus", "memory_node"):
                vm.pop(k, None)
    for vm in d["vms"]:
        if rng.random() < 0.3:
            vm["vcpus"] = rng.choice([1, 2, 3, 4, 8])
            vm.pop("pin", None)
            vm.setdefault("guest", {})["online_vcpus"] = None
        g = vm.setdefault("guest", {})
        if rng.random() < 0.3:
            g["ttwu_queue"] = True
        if rng.random() < 0.2:
            g["busy_tick"], g["tick_us"] = True, rng.choice([1000, 4000, 80000])
        if rng.random() < 0.2:
            g.setdefault("paravirt", {})["spinlock"] = True
            g["spinlock"] = "queued"
        elif rng.random() < 0.2:
            g["spinlock"] = rng.choice(["ticket", "tas", "queued"])
        if rng.random() < 0.2:
            g.setdefault("paravirt", {})["tlb_flush"] = True
        if rng.random() < 0.2:
            g["slice_us"] = rng.choice([100, 3000, 24000])
        if rng.random() < 0.1 and vm["vcpus"] > 1:
            g["online_vcpus"] = rng.randint(1, vm["vcpus"])
        if rng.random() < 0.1:
            vm["weight"] = rng.choice([64, 256, 1024])
        if rng.random() < 0.1:
            vm["cap_pct"] = rng.choice([0, 50, 100])
    r = rng.random()
    if r < 0.3:
        host.setdefault("costs", {})["hv_cost_jitter_pct"] = rng.choice([0, 2, 20])
        host["costs"].pop("hv_cost_cv", None)
    elif r < 0.45:
        # From `r` itself, so that the cases drawn after it are those of the campaigns before
        # this option existed (the test's seeds keep their recorded failures).
        host.setdefault("costs", {})["hv_cost_cv"] = (0.2, 0.5, 2.0)[min(2, int((r - 0.3) / 0.05))]
        host["costs"]["hv_cost_jitter_pct"] = 0
    if rng.random() < 0.2:
        hv["vipi_delivery"] = rng.choice(["ipi", "polling", "posted"])
    if rng.random() < 0.2:
        hv["halt_poll"] = {"max_ns": rng.choice([0, 200_000])}
    if rng.random() < 0.3:
        hv.setdefault("ple", {})["enabled"] = rng.random() < 0.5
    if scheduler in ("credit", "dp", "flex") and hv.get("scheduler") == scheduler and rng.random() < 0.5:
        prm = hv.setdefault("params", {})
        if rng.random() < 0.5:
            prm["tasklet"] = rng.choice(["idle_vcpu", "softirq"])
        if rng.random() < 0.3:
            prm["csrc"] = True
    r = rng.random()
    if r < 0.15:
        d["controller"] = {"name": "flexcore", "params": {"check_interval_ms": rng.choice([20, 100]), "ple_bucket_ms": 20}}
    elif r < 0.25:
        d["controller"] = {"name": "flexw"}


def campaign(seed: int, cases: int, durations_ms: list[int], out: Path | None = None) -> dict[str, Any]:
    """Run ``cases`` perturbed cases; returns counts and the failures (file, scheduler, seed,
    message, and the scenario where ``out`` is given)."""
    rng = random.Random(seed)
    parsed = {f: Scenario.load(f).to_dict() for f in scenario_files()}
    files = list(parsed)
    ran, invalid, failures = 0, 0, []
    for i in range(cases):
        f = rng.choice(files)
        scheduler = rng.choice(SCHEDULERS)
        d = copy.deepcopy(parsed[f])
        if rng.random() < 0.3:
            # One of the arena's contenders: a whole hypervisor configuration as users run it.
            contender = rng.choice(CONTENDERS)
            d, scheduler = contender.apply(d), contender.scheduler
        d["duration_ms"] = rng.choice(durations_ms)
        perturb(d, rng, scheduler)
        sim_seed = rng.randint(1, 1000)
        try:
            text = Scenario.from_dict(d).to_json()
            sim = _core.Simulation(text, scheduler, sim_seed, True)
        except ScenarioError:
            invalid += 1
            continue
        ran += 1
        try:
            sim.run_until(sim.horizon_ns)
        except Exception as e:  # an invariant violation or an internal error
            fail = {"case": i, "file": str(f.relative_to(ROOT)), "scheduler": scheduler, "seed": sim_seed,
                    "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                path = out / f"case{i}.json"
                path.write_text(json.dumps(d, indent=1))
                fail["scenario"] = str(path)
            failures.append(fail)
    return {"cases": cases, "ran": ran, "invalid": invalid, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--durations-ms", default="50,200,500", help="comma-separated; one is drawn per case")
    ap.add_argument("--out", type=Path, default=Path("out/fuzz"), help="where failing scenarios are written")
    a = ap.parse_args(argv)
    try:
        durations = [int(x) for x in a.durations_ms.split(",")]
    except ValueError:
        ap.error(f"--durations-ms: expected comma-separated whole milliseconds, got {a.durations_ms!r}")
    r = campaign(a.seed, a.cases, durations, a.out)
    for f in r["failures"]:
        print(f"FAIL case {f['case']}: {f['file']} under {f['scheduler']}, seed {f['seed']}: {f['error']}")
        if "scenario" in f:
            print(f"  replay: vmsched run {f['scenario']} --scheduler {f['scheduler']} --seed {f['seed']} --check")
    print(f"{r['cases']} cases: {r['ran']} ran, {r['invalid']} refused by the parser, {len(r['failures'])} failed")
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
