"""Fuzz the scenario parser and the simulator with bad input: the built-in scenarios
(scenarios/*.toml, scenarios/arena/), normalised (every default filled in), then one to three
fields changed at random: a number made zero, negative, huge, fractional, NaN or a string; a
string emptied or misspelt; a list emptied or given a null; a key deleted; an unknown key added.

The standard (README, "Bad input"): a bad scenario gets a ScenarioError that names the field and
the reason, never a panic or a raw Python exception; a scenario the parser accepts runs (with the
invariant checker after every event) without an error. So a case fails when
- the parser raises anything but ScenarioError, or a ScenarioError with no field path;
- an accepted scenario raises anything while it runs (panic; invariant violation: the run is
  repeated under the invariant checker, as far as a second of wall time takes it);
- an accepted scenario's run does not finish within ``--timeout-s`` of wall time (a hang: a run
  of at most 100 ms of simulated time should take well under a second), or needs more than
  ``--max-memory-gb`` of address space (the worker dies).

Each case runs in a worker process, so a hang or a crash of the interpreter costs that case only;
the worker is restarted at the next case. Deterministic: case i of --seed S is the same case
whatever ran before it (its generator is seeded with S and i), as long as the schema keeps its
fields (the mutations are drawn over the normalised scenario's fields).

Usage (from the repository root, with .venv active):
    python tools/fuzz_inputs.py [--seed N] [--cases N] [--timeout-s S] [--out DIR]
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import random
import selectors
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

#: Simulated time of an accepted case: short, so that a slow case stands out as a hang.
DURATIONS_MS = (20, 50, 100)

#: Wall time the checked run of a case may take; it checks as much of the run as fits.
CHECKED_BUDGET_S = 1.0


def scenario_files() -> list[Path]:
    return sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "scenarios" / "arena").glob("*.toml"))


def _paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every position below ``node`` (dict keys and list indices), parents before children."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


def _get(d: Any, path: tuple) -> Any:
    for p in path:
        d = d[p]
    return d


def bad_value(old: Any, rng: random.Random) -> Any:
    """A replacement for ``old`` that a careless user (or a script) might write."""
    if isinstance(old, bool):
        return rng.choice([0, 2, "yes", None, []])
    if isinstance(old, int):
        if rng.random() < 0.5:  # legal but extreme: the simulation, not the parser, must cope
            return rng.choice([0, 1, 2, old * 1000, old * 1_000_000, max(1, old // 1000), 2 ** 32 - 1])
        return rng.choice([0, -1, -(2 ** 40), 2 ** 31, 2 ** 53, 2 ** 63, 2 ** 64, 10 ** 30, 0.5, old + 0.5,
                           float("inf"), float("-inf"), float("nan"), "12", None, True, [old]])
    if isinstance(old, float):
        if rng.random() < 0.5:
            return rng.choice([0.0, 1e-9, 0.001, 1.0, old * 1000, old * 1e6, old / 1000, 1e12])
        return rng.choice([0.0, -0.0, -1.0, -1e300, 1e300, 1e-300, float("inf"), float("nan"), "0.5", None,
                           10 ** 30, [old]])
    if isinstance(old, str):
        return rng.choice(["", " ", old + "x", old.upper(), "\u00e9\u00e9", "x" * 10_000, 0, None, [old]])
    if isinstance(old, list):
        choices = [[], [None], {}, "[]", 0]
        if old:
            choices += [old + [copy.deepcopy(old[0])] * rng.choice([1, 50]), old[:1], old[::-1]]
        return rng.choice(choices)
    if isinstance(old, dict):
        return rng.choice([{}, [], None, "", 1])
    return rng.choice([0, "", [], {}])


def mutate(d: dict, rng: random.Random) -> list[str]:
    """Apply one to three mutations to ``d`` in place; returns what was done, for the report."""
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        paths = list(_paths(d))
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _get(d, path[:-1]), path[-1]
        where = ".".join(str(p) for p in path)
        r = rng.random()
        if r < 0.12 and isinstance(parent, dict):
            del parent[key]
            done.append(f"del {where}")
        elif r < 0.2 and isinstance(parent, dict):
            parent[rng.choice(["bogus", "vcpu", "weigth", "duration"])] = rng.choice([1, "x", True])
            done.append(f"unknown key beside {where}")
        else:
            new = bad_value(parent[key], rng)
            parent[key] = new
            shown = repr(new) if len(repr(new)) < 40 else repr(new)[:37] + "..."
            done.append(f"{where} = {shown}")
    return done


def make_case(seed: int, i: int, parsed: dict[str, dict]) -> dict[str, Any]:
    rng = random.Random(f"fuzz-inputs:{seed}:{i}")
    f = rng.choice(sorted(parsed))
    d = copy.deepcopy(parsed[f])
    d["duration_ms"] = rng.choice(DURATIONS_MS)
    d.pop("warmup_ms", None)
    return {"file": f, "scenario": d, "mutations": mutate(d, rng), "sim_seed": rng.randint(1, 1000)}


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """Parse and (when accepted) run one case; the verdict and what was raised."""
    from vmsched import _core
    from vmsched.errors import ScenarioError
    from vmsched.scenario import Scenario

    d = case["scenario"]
    try:
        sc = Scenario.from_dict(d)
    except ScenarioError as e:
        if not e.path and "`" not in e.reason:  # a missing top-level field is named in backquotes
            return {"verdict": "fail", "stage": "parse", "error": f"ScenarioError without a field path: {e}"}
        return {"verdict": "refused", "error": str(e)[:300]}
    except Exception as e:  # noqa: BLE001 - anything but ScenarioError is the bug we look for
        return {"verdict": "fail", "stage": "parse", "error": f"{type(e).__name__}: {str(e)[:300]}"}
    dur = sc.to_dict().get("duration_ms")
    if not isinstance(dur, (int, float)) or not math.isfinite(dur) or dur > max(DURATIONS_MS) * 10:
        return {"verdict": "accepted-long", "error": f"duration_ms {dur}: not run"}
    try:
        # The invariant checker walks the whole state after every event: a case with thousands
        # of guest threads would take minutes under it. So each case runs first without it, to
        # its end (a panic or a hang shows there), then again under it for as much of the run
        # as CHECKED_BUDGET_S of wall time allows.
        sim = _core.Simulation(sc.to_json(), None, case["sim_seed"], False)
        sim.run_until(sim.horizon_ns)
        sim.results_json()
        sim = _core.Simulation(sc.to_json(), None, case["sim_seed"], True)
        t0, step = time.monotonic(), max(1, sim.horizon_ns // 50)
        while not sim.done and time.monotonic() - t0 < CHECKED_BUDGET_S:
            sim.run_until(min(sim.now_ns + step, sim.horizon_ns))
    except Exception as e:  # noqa: BLE001
        return {"verdict": "fail", "stage": "run", "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
    return {"verdict": "ran"}


def worker(seed: int, start: int, end: int, max_memory_gb: float, case_file: Path | None = None) -> None:
    """Run cases start..end-1, one JSON line each on stdout (the parent times them). The
    address space is capped, so a case that allocates without bound dies at once (reported as
    the worker dying) instead of swapping the machine."""
    import resource

    from vmsched.scenario import Scenario

    limit = int(max_memory_gb * 2 ** 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if case_file is not None:
        print(json.dumps({"case": 0, **run_case(json.loads(case_file.read_text()))}), flush=True)
        return

    parsed = {str(f.relative_to(ROOT)): Scenario.load(f).to_dict() for f in scenario_files()}
    for i in range(start, end):
        case = make_case(seed, i, parsed)
        print(json.dumps({"case": i, "started": True}), flush=True)
        out = run_case(case)
        print(json.dumps({"case": i, **out}), flush=True)


def campaign(seed: int, cases: int, timeout_s: float = 20.0, out: Path | None = None,
             max_memory_gb: float = 4.0) -> dict[str, Any]:
    """Run ``cases`` cases in worker processes; returns counts and the failures (with the
    scenario written under ``out`` when given)."""
    from vmsched.scenario import Scenario

    parsed = {str(f.relative_to(ROOT)): Scenario.load(f).to_dict() for f in scenario_files()}
    counts = {"ran": 0, "refused": 0, "accepted-long": 0}
    failures: list[dict[str, Any]] = []
    i = 0
    while i < cases:
        # stderr to a file, not a pipe: a worker printing many panics must not block on it.
        errf = tempfile.TemporaryFile("w+")
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--seed", str(seed), "--start", str(i), "--end", str(cases),
             "--max-memory-gb", str(max_memory_gb)],
            stdout=subprocess.PIPE, stderr=errf, text=True, cwd=ROOT)
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        current, started_at, verdict = i, time.monotonic(), None
        while True:
            left = timeout_s - (time.monotonic() - started_at)
            if left <= 0 or not sel.select(timeout=left):
                proc.kill()
                verdict = {"verdict": "fail", "stage": "run", "error": f"hang: no verdict within {timeout_s:g} s"}
                break
            line = proc.stdout.readline()
            if not line:  # the worker died (a crash of the interpreter)
                proc.wait()
                errf.seek(0)
                err = errf.read().strip().splitlines()
                verdict = {"verdict": "fail", "stage": "run",
                           "error": f"worker died (exit {proc.returncode}): {err[-1][:300] if err else ''}"}
                break
            msg = json.loads(line)
            if msg.get("started"):
                current, started_at = msg["case"], time.monotonic()
                continue
            if msg["verdict"] == "fail":
                failures.append(_report(seed, msg["case"], msg, parsed, out))
            else:
                counts[msg["verdict"]] += 1
            i = msg["case"] + 1
            if i >= cases:
                break
        sel.close()
        errf.close()
        if verdict is not None:
            failures.append(_report(seed, current, verdict, parsed, out))
            i = current + 1
        proc.wait()
    return {"cases": cases, **counts, "failures": failures}


def run_isolated(case: dict[str, Any], timeout_s: float = 20.0, max_memory_gb: float = 4.0) -> dict[str, Any]:
    """One case (``{"scenario": ..., "sim_seed": ...}``) in a worker of its own: its verdict
    (``verdict``, and ``error`` unless it ran), a hang or a dead worker included. For a case
    written by hand, e.g. a regression test: campaign case numbers shift whenever the schema
    gains a field, since the mutations are drawn over the normalised scenario's fields."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(case, f, allow_nan=True)
    try:
        p = subprocess.run(
            [sys.executable, __file__, "--worker", "--case-file", f.name, "--max-memory-gb", str(max_memory_gb)],
            capture_output=True, text=True, cwd=ROOT, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"verdict": "fail", "stage": "run", "error": f"hang: no verdict within {timeout_s:g} s"}
    finally:
        Path(f.name).unlink(missing_ok=True)
    done = [m for m in (json.loads(l) for l in p.stdout.splitlines() if l.strip()) if not m.get("started")]
    if not done:
        err = p.stderr.strip().splitlines()
        return {"verdict": "fail", "stage": "run", "error": f"worker died (exit {p.returncode}): {err[-1][:300] if err else ''}"}
    return done[0]


def _report(seed: int, i: int, verdict: dict, parsed: dict, out: Path | None) -> dict[str, Any]:
    case = make_case(seed, i, parsed)
    rep = {"case": i, "file": case["file"], "mutations": case["mutations"], "sim_seed": case["sim_seed"],
           "stage": verdict["stage"], "error": verdict["error"]}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"input-case{i}.json"
        path.write_text(json.dumps(case["scenario"], indent=1, allow_nan=True))
        rep["scenario"] = str(path)
    return rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--timeout-s", type=float, default=20.0, help="wall time one case may take")
    ap.add_argument("--out", type=Path, default=Path("out/fuzz"), help="where failing scenarios are written")
    ap.add_argument("--max-memory-gb", type=float, default=4.0, help="address space one worker may use")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--end", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--case-file", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(a.seed, a.start, a.end, a.max_memory_gb, a.case_file)
        return 0
    if a.cases < 1 or a.timeout_s <= 0:
        ap.error("--cases must be at least 1 and --timeout-s positive")
    r = campaign(a.seed, a.cases, a.timeout_s, a.out, a.max_memory_gb)
    for f in r["failures"]:
        print(f"FAIL case {f['case']} ({f['stage']}): {f['file']} with {'; '.join(f['mutations'])}: {f['error']}")
        if "scenario" in f:
            print(f"  replay: vmsched run {f['scenario']} --seed {f['sim_seed']} --check")
    print(f"{r['cases']} cases: {r['ran']} ran, {r['refused']} refused by the parser, "
          f"{r['accepted-long']} accepted with a long duration (not run), {len(r['failures'])} failed")
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
