"""The ``vmsched`` command line.

Exit codes: 0 success; 2 bad input (bad flag, unreadable file, invalid scenario: a one-line
message naming the field, never a traceback); 3 the invariant checker (``--check``) found a
violation; 70 internal error (a bug: a panic in the Rust core); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from .errors import ControllerError, InternalError, ScenarioError, SimulationError

PROG = "vmsched"
EXAMPLE_SCHEDULERS = ("credit", "cfs", "rr")

EXIT_USAGE = 2
EXIT_SIM = 3
EXIT_INTERNAL = 70  # EX_SOFTWARE


class UsageError(Exception):
    """A user error reported as one line with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage + message)
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(EXIT_USAGE)


def _seed(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer below 2**64, got {text}")
    return v


def _trace_window(text: str) -> tuple[float, float]:
    """``--trace-window FROM:UNTIL`` in ms of simulated time."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected FROM:UNTIL in ms, e.g. 100:300, got {text!r}")
    if not (0 <= a < b < float("inf")):
        raise argparse.ArgumentTypeError(f"expected 0 <= FROM < UNTIL (ms), got {text!r}")
    return a, b


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return v


# -- table formatting ---------------------------------------------------------------------

def _fmt(v: Any, spec: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf"
        return format(v, spec or ".3g")
    return str(v)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    rows = [list(map(str, r)) for r in rows]
    widths = [len(h) for h in headers]
    for r in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, r)]
    left = [all(not _numeric(r[i]) for r in rows) if rows else True for i in range(len(headers))]

    def line(cells):
        return "  ".join(c.ljust(w) if l else c.rjust(w)
                         for c, w, l in zip(cells, widths, left)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def _numeric(s: str) -> bool:
    s = s.strip().rstrip("%").replace(",", "")
    if s in ("-", "inf"):
        return True
    try:
        float(s.split()[0])
        return True
    except (ValueError, IndexError):
        return False


def _val(row: dict, key: str) -> Any:
    v = row.get(key)
    try:
        if v is not None and isinstance(v, float) and math.isnan(v):
            return None
    except TypeError:
        pass
    return v


def _pct(v: Any) -> str:
    return "-" if v is None else _fmt(float(v), ".1f")


def _done_or_throughput(vm: dict) -> str:
    if vm.get("completion_ms") is not None and not _isnan(vm.get("completion_ms")):
        return f"{vm['completion_ms']:.1f} ms"
    if vm.get("ops_per_s") is not None and not _isnan(vm.get("ops_per_s")):
        return f"{float(vm['ops_per_s']):.1f} ops/s"
    return "-"


def _isnan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _share(vm: dict) -> str:
    s = _val(vm, "share")
    return "-" if s is None else f"{100 * float(s):.1f}%"


def vm_table(res) -> str:
    headers = ["VM", "vCPUs", "weight", "done/throughput", "CPU s", "share", "ideal",
               "rel.lag", "useful %", "lock spin %", "IPI wait %", "steal s", "PLE exits"]
    rows = []
    for vm in res.vms.to_dict("records"):
        ideal = _val(vm, "ideal_share")
        rows.append([
            vm.get("name", vm.get("vm", "?")),
            _fmt(vm.get("vcpus")),
            _fmt(vm.get("weight")),
            _done_or_throughput(vm),
            _fmt(vm.get("cpu_ns", 0) / 1e9 if vm.get("cpu_ns") is not None else None, ".3f"),
            _share(vm),
            "-" if ideal is None else f"{100 * float(ideal):.1f}%",
            _fmt(_val(vm, "relative_lag"), "+.3f") if _val(vm, "relative_lag") is not None else "-",
            _pct(_val(vm, "useful_pct")),
            _pct(_val(vm, "lock_spin_pct")),
            _pct(_val(vm, "ipi_wait_pct")),
            _fmt(vm["guest_ns_steal"] / 1e9, ".3f") if _val(vm, "guest_ns_steal") is not None else "-",
            _fmt(_val(vm, "ple_exits")),
        ])
    return format_table(headers, rows)


def run_header(res, name: str) -> str:
    wall = f", wall {res.wall_s:.2f} s" if res.wall_s is not None else ""
    ctx = res.host_ctx_switches_per_pcpu_s()
    return (f"{name}: scheduler={res.scheduler} seed={res.seed} "
            f"simulated {res.sim_time_ns / 1e9:.3f} s, {res.events} events{wall}; "
            f"context switches per pCPU-second: {_fmt(ctx, '.1f')}")


def counters_line(res) -> str | None:
    """The policy's own event counters (``totals.scheduler_counters``: credit's switch causes,
    credit2's perf counters, CSRC's skips, ...) in one line, or None when it has none."""
    c = (res.summary.get("totals") or {}).get("scheduler_counters") or {}
    if not c:
        return None
    return "scheduler counters: " + ", ".join(f"{k} {v:,}" for k, v in sorted(c.items()))


def unfinished_note(res) -> str | None:
    """A run to completion that stopped at its limit with VMs unfinished, in one line (None
    otherwise): the table's throughput column then hides that their work did not complete."""
    sc = res.summary.get("scenario") or {}
    limit_ms = sc.get("max_duration_ms")
    if sc.get("duration_ms") is not None or limit_ms is None or res.sim_time_ns < limit_ms * 1e6:
        return None
    names = [vm.get("name") or f"vm{i}" for i, vm in enumerate(res.summary.get("vms") or [])
             if not vm.get("finished")]
    if not names:
        return None
    return (f"note: the run stopped at max_duration_ms ({limit_ms:g} ms) with {', '.join(names)} "
            f"unfinished; raise max_duration_ms if their work is only long, or see docs/scenarios.md "
            f"(what validation does not catch) and docs/model.md (the directed-yield ping-pong) "
            f"for runs that cannot finish")


def stalled_note(res) -> str | None:
    """VMs that stopped starting compute operations long before the run ended (the last tenth
    of the run and at least 1 s of simulated time without one) and did not finish, in one line
    (None otherwise): a livelock the throughput column would average away."""
    end = res.sim_time_ns
    quiet_ns = max(1e9, 0.1 * end)
    stalled = [(vm.get("name") or f"vm{i}", vm["last_op_ns"]) for i, vm in enumerate(res.summary.get("vms") or [])
               if not vm.get("finished") and vm.get("last_op_ns") is not None and end - vm["last_op_ns"] >= quiet_ns]
    if not stalled:
        return None
    which = " or ".join(f"in {name} after {t / 1e6:,.0f} ms" for name, t in stalled)
    return (f"note: no compute operation started {which}, of a {end / 1e6:,.0f} ms run: "
            f"a livelock? (see docs/model.md, the directed-yield ping-pong, and "
            f"host.costs.hv_cost_jitter_pct)")


# -- commands -----------------------------------------------------------------------------

def _load(path: str):
    from .scenario import Scenario

    try:
        return Scenario.from_file(path)
    except ScenarioError as e:
        raise UsageError(f"{path}: {e}") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected a scenario file") from None
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None


def _check_scheduler_flag(name: str | None) -> None:
    if name is None:
        return
    from .scenario import scheduler_names

    known = scheduler_names()
    if name not in known:
        raise UsageError(f"--scheduler: unknown scheduler '{name}' (known: {', '.join(known)})")


def _overrides(texts: Sequence[str] | None) -> list:
    """The ``--set`` flags parsed (an ``OverrideError`` is a ``ValueError``: ``main`` reports it
    in one line, exit 2, as it does the overrides' errors raised later)."""
    from .overrides import parse

    return [parse(t) for t in texts or ()]


def _apply_to_scenario(sc, overrides: Sequence, source: str):
    """``vmsched run``'s ``--set``: every override must reach a field of the one scenario."""
    from .batch import Run
    from .overrides import apply_overrides
    from .scenario import Scenario

    if not overrides:
        return sc
    planned = {source: [Run("scenario", sc.to_dict())]}
    apply_overrides(planned, overrides)
    return Scenario.from_dict(planned[source][0].scenario)


def cmd_run(a: argparse.Namespace) -> int:
    from .runner import TRACE_MAX_SLICES, run

    _check_scheduler_flag(a.scheduler)
    sc = _apply_to_scenario(_load(a.scenario), _overrides(a.set), a.scenario)
    dropped = sorted(sc.to_dict().get("hypervisor", {}).get("params", {}))
    if a.scheduler and a.scheduler != sc.scheduler and dropped:
        print(f"note: --scheduler {a.scheduler} runs with its defaults; the scenario's "
              f"hypervisor.params ({', '.join(dropped)}) belong to {sc.scheduler} and are not "
              f"passed on (set scheduler = \"{a.scheduler}\" in the file to keep them)",
              file=sys.stderr)
    if a.trace_window and not a.trace:
        raise UsageError("--trace-window: given without --trace FILE.json")
    if a.trace and Path(a.trace).is_dir():
        raise UsageError(f"--trace {a.trace}: is a directory, expected a file name")
    res = run(sc, scheduler=a.scheduler, seed=a.seed, check=a.check, progress=not a.quiet,
              controller=_python_controller(a.python_controller, a.controller_param),
              trace=(a.trace_window or True) if a.trace else False)
    if a.out:
        res.to_dir(a.out, parquet=not a.no_parquet)
    if a.trace:
        res.write_trace(a.trace)
        if res.trace_truncated_at_ns is not None:
            print(f"note: the trace stopped at {res.trace_truncated_at_ns / 1e6:.3f} ms, after "
                  f"{TRACE_MAX_SLICES:,} state slices; trace a shorter window with --trace-window",
                  file=sys.stderr)
    if not a.quiet:
        print(run_header(res, sc.name))
        print(vm_table(res))
        if counters := counters_line(res):
            print(counters)
        for note in (unfinished_note(res), stalled_note(res)):
            if note:
                print(note, file=sys.stderr)
        if a.out:
            print(f"results written to {a.out}/summary.json (+ vms/vcpus/pcpus .csv"
                  f"{'' if a.no_parquet else ' and .parquet'})")
        if a.trace:
            print(f"trace written to {a.trace} (open it in ui.perfetto.dev)")
    return 0


def _python_controller(spec: str | None, params: Sequence[str] | None):
    """``--python-controller`` with its ``--controller-param KEY=VALUE`` flags, built by
    :func:`vmsched.control.load_controller` (the arena's ``python_controller`` does the same)."""
    from .control import load_controller
    from .overrides import parse

    if spec is None:
        if params:
            raise UsageError("--controller-param: given without --python-controller")
        return None
    kw = {}
    for text in params or ():
        ov = parse(text)
        if len(ov.path) != 1:
            raise UsageError(f"--controller-param {text!r}: expected NAME=VALUE (one name, no dots)")
        kw[ov.path[0]] = ov.value
    try:
        return load_controller(spec, kw)
    except ValueError as e:
        raise UsageError(f"--python-controller {e}") from None


def cmd_validate(a: argparse.Namespace) -> int:
    from .scenario import Scenario

    bad = 0
    for path in a.scenarios:
        try:
            Scenario.from_file(path)
        except ScenarioError as e:
            print(f"{path}: {e}")
            bad += 1
        except IsADirectoryError:
            print(f"{path}: is a directory, expected a scenario file")
            bad += 1
        except OSError as e:
            print(f"{path}: {e.strerror or e}")
            bad += 1
        else:
            print(f"{path}: OK")
    return EXIT_USAGE if bad else 0


def cmd_list(a: argparse.Namespace) -> int:
    from .scenario import catalog

    cat = catalog()
    if a.json:
        print(json.dumps(cat, indent=2))
        return 0
    for section in ("schedulers", "controllers", "workloads"):
        print(f"{section}:")
        print(format_table(["name", "description", "source"],
                           [[e["name"], e["description"], e["source"]] for e in cat[section]]))
        print()
    return 0


def cmd_examples(a: argparse.Namespace) -> int:
    from . import example_scenarios
    from .runner import run

    schedulers = a.scheduler or list(EXAMPLE_SCHEDULERS)
    for s in schedulers:
        _check_scheduler_flag(s)
    paths = example_scenarios()
    if a.only:
        import fnmatch

        paths = [p for p in paths if any(fnmatch.fnmatch(p.stem, pat) for pat in a.only)]
    if not paths:
        raise UsageError("no example scenarios found" + (f" matching {a.only}" if a.only else ""))
    scenarios = [(p, _load(str(p))) for p in paths]
    out = Path(a.out)
    headers = ["scenario", "scheduler", "VM", "done/throughput", "share", "lock spin %",
               "IPI wait %", "ctx sw/pCPU-s"]
    rows, records = [], []
    for path, sc in scenarios:
        for sched in schedulers:
            res = run(sc, scheduler=sched, check=a.check, progress=not a.quiet)
            res.to_dir(out / path.stem / sched)
            ctx = res.host_ctx_switches_per_pcpu_s()
            for vm in res.vms.to_dict("records"):
                row = [path.stem, sched, vm.get("name", vm.get("vm")), _done_or_throughput(vm),
                       _share(vm), _pct(_val(vm, "lock_spin_pct")),
                       _pct(_val(vm, "ipi_wait_pct")), _fmt(ctx, ".1f")]
                rows.append(row)
                records.append(dict(zip(headers, row)))
            if not a.quiet:
                print(f"  {path.stem} [{sched}]: {res.sim_time_ns / 1e9:.3f} simulated s, "
                      f"{res.events} events, {res.wall_s:.2f} wall s", file=sys.stderr)
    table = format_table(headers, rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.txt").write_text(table + "\n", encoding="utf-8")
    print(table)
    print(f"\nresults: {out}/<scenario>/<scheduler>/summary.json (table in {out}/summary.txt)")
    return 0


def cmd_bench(a: argparse.Namespace) -> int:
    from .bench import run_bench, to_json

    report = run_bench(quick=a.quick, repeat=a.repeat)
    headers = ["benchmark", "events", "simulated s", "events/s (median)",
               "sim s per wall s (median)", "repeats"]
    rows = [[r["bench"], f"{r['events']:,.0f}",
             f"{r['sim_s']:.3f}", _fmt(float(r["events_per_s"]), ",.0f"),
             _fmt(float(r["sim_s_per_wall_s"]), ".3g"), str(r["repeat"])]
            for r in report["results"]]
    print(format_table(headers, rows))
    if a.json:
        Path(a.json).write_text(to_json(report) + "\n", encoding="utf-8")
    return 0


def cmd_reproduce(a: argparse.Namespace) -> int:
    from .reproduce import registry, reproduce, select
    from .reproduce.report import HEADERS, failures, rows, summary_lines

    if a.list:
        reg = registry()
        print(format_table(["reproduction", "seed", "figure", "what"],
                           [[r.name, r.seed_file, r.figure, r.title] for r in reg.values()]))
        return 0
    if not a.names and not a.all:
        raise UsageError("name one or more reproductions or pass --all (see --list)")
    if a.names and a.all:
        raise UsageError("give reproduction names or --all, not both")
    overrides = _overrides(a.set)
    if overrides and a.docs:
        raise UsageError("--docs writes the reference report (docs/reproductions.md) and "
                         "cannot be combined with --set")
    try:
        repros = select(a.names, a.all)
    except KeyError as e:
        raise UsageError(e.args[0])
    out = Path(a.out)
    outcomes = reproduce(repros, quick=a.quick, out=out, jobs=a.jobs, progress=not a.quiet,
                         overrides=overrides)
    for o in outcomes:
        print(f"\n{o.name}: {o.title} ({o.seed_file}, {o.figure})")
        print(format_table(HEADERS, rows(o)))
        for c in o.claims:
            print(f"  {'holds' if c.holds else 'DOES NOT HOLD'}: {c.text}")
    print()
    for line in summary_lines(outcomes, a.quick, reproduce.last_wall_s,
                              reproduce.last_overrides):
        print(line)
    fails = failures(outcomes)
    if fails:
        print(f"{len(fails)} quantities or claims out of tolerance or not holding: see the report")
    print(f"report: {out / 'report.html'} and {out / 'report.md'}")
    if a.docs:
        import shutil

        shutil.copyfile(out / "report.md", a.docs)
        print(f"copied the Markdown report to {a.docs}")
    return 0


def cmd_arena(a: argparse.Namespace) -> int:
    from . import arena

    overrides = _overrides(a.set)
    contenders = list(arena.CONTENDERS)
    if a.contenders:
        contenders += arena.load_contenders(a.contenders)
    names = [c.name for c in contenders]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError(f"--contenders: name(s) {dup} already taken")
    if a.metric and a.metric not in arena.COLUMNS:
        raise UsageError(f"--metric: unknown metric {a.metric!r}; known: {', '.join(arena.COLUMNS)}")
    scenarios = arena.suite()
    for path in a.scenario or []:
        _load(path)  # clear error on a bad file
        scenarios.append(arena.ArenaScenario(Path(path).stem, Path(path), a.metric, "user scenario"))
    if a.only:
        import fnmatch

        for pat in a.only:
            if not any(fnmatch.fnmatch(n, pat) for n in [c.name for c in contenders] + [s.name for s in scenarios]):
                raise UsageError(f"--only {pat!r} matches no contender and no scenario (see --list)")
        keep = lambda n: any(fnmatch.fnmatch(n, pat) for pat in a.only)
        contenders = [c for c in contenders if keep(c.name)] or contenders
        scenarios = [s for s in scenarios if keep(s.name)] or scenarios
    if a.list:
        print(format_table(["contender", "scheduler", "what"],
                           [[c.name, c.scheduler, c.description] for c in contenders]))
        print()
        print(format_table(["scenario", "file", "what"], [[s.name, s.path.name, s.what] for s in scenarios]))
        return 0
    out = Path(a.out)
    table = arena.run_arena(scenarios, contenders, jobs=a.jobs, progress=not a.quiet, out=out,
                            overrides=overrides,
                            seeds=arena.DEFAULT_SEEDS if a.seeds is None else a.seeds)
    for line in arena.run_arena.last_overrides:
        print(f"--set {line}")
    for s in scenarios:
        cells = table[s.name]
        key = arena.primary(s, cells)
        print(f"\n{s.name}: {s.what} (rank by {arena.COLUMNS[key][0]})")
        print(format_table(arena.HEADERS, arena.rows(cells, key)))
    print("\noverall (mean rank): " + ", ".join(f"{k} {v:.2f}" for k, v in arena.overall(table)))
    report = arena.write_report(scenarios, contenders, table, out, arena.run_arena.last_overrides)
    print(f"report: {report} and {out / 'report.md'}")
    return 0


def cmd_compare(a: argparse.Namespace) -> int:
    from . import arena_compare
    from .reproduce import compare
    from .reproduce.compare import CompareError

    kinds = [arena_compare.is_arena_output(p) for p in (a.old, a.new)]
    if kinds[0] != kinds[1]:
        arena_side, other = (a.old, a.new) if kinds[0] else (a.new, a.old)
        raise CompareError(f"{arena_side} is a vmsched arena output and {other} is not: compare "
                           f"two arena outputs or two reproduce outputs")
    if kinds[0]:
        m = arena_compare
        c = m.compare(m.load(a.old), m.load(a.new), a.min_change / 100.0,
                      m.overrides_of(a.old), m.overrides_of(a.new))
    else:
        m = compare
        c = m.compare(m.load(a.old), m.load(a.new), a.min_change / 100.0)
    for line in m.lines(c, format_table):
        print(line)
    return 0


def _nonnegative_pct(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a percentage >= 0, got {text!r}")
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a percentage >= 0, got {text}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Deterministic simulator of SMP virtual machines on "
                "shared hosts.", epilog="Exit codes: 0 ok, 2 bad input, 3 invariant violation, "
                "70 internal error.")
    from . import __version__

    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    r = sub.add_parser("run", help="run one scenario and print a per-VM summary")
    r.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    r.add_argument("--scheduler", metavar="NAME", help="override the hypervisor scheduler")
    r.add_argument("--seed", type=_seed, metavar="N", help="override the scenario seed")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="change one scenario field, e.g. hypervisor.params.tslice_ms=10 or "
                   "vms.*.vcpus=4 (a TOML value; repeatable)")
    r.add_argument("--out", metavar="DIR", help="write DIR/summary.json, vms/vcpus/pcpus "
                   ".csv and .parquet")
    r.add_argument("--check", action="store_true", help="check invariants after every event")
    r.add_argument("--trace", metavar="FILE.json", help="write a timeline of every vCPU and pCPU "
                   "(Chrome Trace Event JSON; open it in ui.perfetto.dev)")
    r.add_argument("--trace-window", type=_trace_window, metavar="FROM:UNTIL",
                   help="trace only this window of simulated time, in ms (default: the whole run, "
                   "up to 500,000 state slices)")
    r.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")
    r.add_argument("--no-parquet", action="store_true", help="write CSV and JSON only")
    r.add_argument("--python-controller", metavar="FILE.py:CLASS",
                   help="run a policy written in Python beside the scenario's own controller "
                   "('FILE.py:Class' or 'module:Class'; see docs/controllers.md)")
    r.add_argument("--controller-param", action="append", metavar="NAME=VALUE",
                   help="a keyword argument of the Python controller's class (a TOML value; "
                   "repeatable)")
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("validate", help="check scenario files")
    v.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    v.set_defaults(func=cmd_validate)

    ls = sub.add_parser("list", help="list schedulers, controllers and workloads")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=cmd_list)

    e = sub.add_parser("examples", help="run the example scenarios under credit, cfs and rr")
    e.add_argument("--out", default="out/examples", metavar="DIR",
                   help="results folder (default: out/examples)")
    e.add_argument("--scheduler", action="append", metavar="NAME",
                   help="scheduler to use (repeatable; default: credit, cfs, rr)")
    e.add_argument("--only", action="append", metavar="GLOB",
                   help="only scenarios whose name matches (repeatable)")
    e.add_argument("--check", action="store_true", help="check invariants after every event")
    e.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    e.set_defaults(func=cmd_examples)

    b = sub.add_parser("bench", help="simulator speed: events/s and simulated s per wall s")
    b.add_argument("--quick", action="store_true", help="shorter runs, 3 repetitions")
    b.add_argument("--repeat", type=_positive_int, metavar="N", help="repetitions (median)")
    b.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    b.set_defaults(func=cmd_bench)

    rp = sub.add_parser("reproduce", help="reproduce the seed documents' evaluations and "
                        "report seed vs simulated values")
    rp.add_argument("names", nargs="*", metavar="NAME", help="reproductions to run (see --list)")
    rp.add_argument("--all", action="store_true", help="run every reproduction")
    rp.add_argument("--quick", action="store_true", help="shortened runs (for tests; numbers "
                    "are not comparable with the seeds)")
    rp.add_argument("--list", action="store_true", help="list the reproductions and exit")
    rp.add_argument("--out", default="out/reproduce", metavar="DIR",
                    help="report, plots and raw results (default: out/reproduce)")
    rp.add_argument("--jobs", "-j", type=_positive_int, metavar="N",
                    help="simulations in parallel (default: the CPUs available)")
    rp.add_argument("--docs", metavar="FILE", help="also copy the Markdown report to FILE "
                    "(docs/reproductions.md is generated this way)")
    rp.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    rp.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="exploratory: change a field in every run whose scenario has it "
                    "(or its parser fills it in at its default), e.g. controller.params.ratio=0.9 "
                    "(a parameter the seed does not give) or host.costs.hv_cost_cv=0.2; "
                    "the report is marked as not the reference (repeatable)")
    rp.set_defaults(func=cmd_reproduce)
    cp = sub.add_parser("compare", help="what moved between two vmsched reproduce outputs "
                        "(quantities, verdicts, claims) or two vmsched arena outputs (primary "
                        "metrics, ranks)")
    cp.add_argument("old", metavar="OLD", help="a vmsched reproduce output folder or its "
                    "outcomes.json, or a vmsched arena output folder or its arena.json")
    cp.add_argument("new", metavar="NEW", help="the same kind, after the change")
    cp.add_argument("--min-change", type=_nonnegative_pct, default=0.0, metavar="PCT",
                    help="list a quantity (arena: a result) only if it moved by more than PCT %% "
                    "or its verdict (arena: rank) changed (default 0: every change)")
    cp.set_defaults(func=cmd_compare)

    ar = sub.add_parser("arena", help="run every policy on the standard scenario suite and "
                        "rank them")
    ar.add_argument("--out", default="out/arena", metavar="DIR",
                    help="report, plots and raw results (default: out/arena)")
    ar.add_argument("--contenders", metavar="FILE", help="TOML file of extra [[contender]] "
                    "tables (name, scheduler, params, ple, controller, paravirt, spinlock, "
                    "python_controller = 'FILE.py:Class', python_controller_params)")
    ar.add_argument("--scenario", action="append", metavar="FILE",
                    help="add a scenario of your own (repeatable)")
    ar.add_argument("--metric", metavar="KEY", help="primary metric of the added scenarios "
                    "(completion_ms, throughput_ops_s, p99_ms, lag_pct, spin_pct, "
                    "ctxsw_per_pcpu_s, migrations)")
    ar.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="change a field in every run that has it, the contender applied, e.g. "
                    "vms.*.vcpus=8 (a TOML value; repeatable)")
    ar.add_argument("--seeds", type=_positive_int, metavar="N",
                    help="simulation seeds per contender and scenario: the scenario's own and "
                    "the N-1 after it; numbers are means, and contenders within the seeds' "
                    "scatter share a rank (default: 3)")
    ar.add_argument("--only", action="append", metavar="GLOB",
                    help="only contenders / scenarios whose name matches (repeatable)")
    ar.add_argument("--jobs", "-j", type=_positive_int, metavar="N",
                    help="simulations in parallel (default: the CPUs available)")
    ar.add_argument("--list", action="store_true", help="list contenders and scenarios")
    ar.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    ar.set_defaults(func=cmd_arena)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        return int(a.func(a) or 0)
    except BrokenPipeError:  # e.g. `vmsched list | head`
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 0
    except UsageError as e:
        _err(str(e))
        return EXIT_USAGE
    except ScenarioError as e:
        where = getattr(a, "scenario", None)
        _err(f"{where}: {e}" if where else str(e))
        return EXIT_USAGE
    except SimulationError as e:
        _err(str(e))
        return EXIT_SIM
    except ControllerError as e:
        _err(str(e))
        return EXIT_USAGE
    except InternalError as e:
        _err(f"internal error in the simulator core (please report): {e}")
        return EXIT_INTERNAL
    except (TypeError, ValueError) as e:
        _err(str(e))
        return EXIT_USAGE
    except OSError as e:
        name = f"{e.filename}: " if getattr(e, "filename", None) else ""
        _err(f"{name}{e.strerror or e}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("interrupted")
        return 130


def _err(msg: str) -> None:
    msg = " ".join(str(msg).split("\n"))
    sys.stderr.write(f"{PROG}: {msg}\n")


if __name__ == "__main__":
    sys.exit(main())
