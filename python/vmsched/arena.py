"""``vmsched arena``: every policy on a standard suite of scenarios, on equal terms.

A *contender* is a hypervisor configuration: a scheduler with its parameters, optionally a
controller, PLE settings and paravirtual guest features. Applying it to a scenario replaces the
scenario's own scheduler, scheduler parameters and controller (those belong to the scenario's
default scheduler) and keeps everything else: host, VMs, workloads. Every contender runs every
scenario with the same simulation seeds (``seeds`` of them: the scenario's own seed and the
ones after it); each number is the mean over them, and the primary metric carries its
standard error. The table ranks contenders per scenario by the primary metric, in tiers
(:func:`rank`): a contender shares the rank of its tier's best unless that one is better by more
than ``NOISE_SE`` standard errors of the difference, so equal results share a rank and
differences within the seeds' scatter are not ranked as wins. Overall, by mean rank.

Add your own: ``vmsched arena --contenders my.toml --scenario my-scenario.toml`` where
``my.toml`` holds ``[[contender]]`` tables with the fields of :class:`Contender`, and a
scenario's primary metric is ``--metric`` (default: mean completion when every VM finishes,
else throughput). ``--set KEY=VALUE`` changes a field in every run that has it, after the
contender is applied (e.g. ``vms.*.vcpus=8``; a scheduler parameter reaches every contender,
so pair it with ``--only``). From Python: ``vmsched.arena.run_arena(scenarios, contenders)``.
"""

from __future__ import annotations

import copy
import json
import math
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .htmlreport import HTML_PAGE, atomic_write, html_table, img_tag, md_table, pyplot, save_png, write_json_files


@dataclass(frozen=True)
class Contender:
    name: str
    description: str
    scheduler: str
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Merged into ``hypervisor.ple`` (e.g. ``{"enabled": False}``).
    ple: Mapping[str, Any] = field(default_factory=dict)
    #: ``{"name": ..., "params": {...}}``, or None for no controller.
    controller: Optional[Mapping[str, Any]] = None
    #: Merged into every VM's ``guest.paravirt``.
    paravirt: Mapping[str, Any] = field(default_factory=dict)
    #: Every VM's guest spinlock kind, if set (pv spinlocks need "queued").
    spinlock: Optional[str] = None
    #: A policy written in Python (:mod:`vmsched.control`): ``"FILE.py:Class"`` (an absolute
    #: path once loaded) or ``"module:Class"``, instantiated afresh for every run with
    #: ``python_controller_params`` as keyword arguments.
    python_controller: Optional[str] = None
    python_controller_params: Mapping[str, Any] = field(default_factory=dict)

    def run_controller(self) -> Optional[tuple[str, str]]:
        """The Python controller as a batch run carries it (spec, parameters as JSON)."""
        if self.python_controller is None:
            return None
        return (self.python_controller, json.dumps(dict(self.python_controller_params), sort_keys=True))

    def apply(self, scenario: Mapping[str, Any]) -> dict:
        sc = copy.deepcopy(dict(scenario))
        hv = dict(sc.get("hypervisor") or {})
        hv["scheduler"] = self.scheduler
        hv["params"] = dict(self.params)
        if self.ple:
            hv["ple"] = {**(hv.get("ple") or {}), **self.ple}
        sc["hypervisor"] = hv
        sc.pop("controller", None)
        if self.controller is not None:
            sc["controller"] = dict(self.controller)
        if self.paravirt or self.spinlock:
            for vm in sc.get("vms", []):
                g = dict(vm.get("guest") or {})
                if self.paravirt:
                    g["paravirt"] = {**(g.get("paravirt") or {}), **self.paravirt}
                if self.spinlock:
                    g["spinlock"] = self.spinlock
                vm["guest"] = g
        return sc


#: Every seed system and production mechanism (docs/policies.md has their sources).
CONTENDERS: tuple[Contender, ...] = (
    Contender("credit", "Xen credit (credit1), defaults", "credit"),
    Contender("credit2", "Xen credit2 with its rate limit", "credit2"),
    Contender("credit2-pvspin", "Xen credit2, guests with paravirtual queued spinlocks (a Linux HVM guest's default)",
              "credit2", paravirt={"spinlock": True}, spinlock="queued"),
    Contender("cfs", "KVM on Linux CFS: PLE, directed yield, halt polling", "cfs"),
    Contender("cfs-nople", "KVM on CFS with pause-loop exiting off", "cfs", ple={"enabled": False}),
    Contender("cfs-pvspin", "KVM on CFS, guests with paravirtual queued spinlocks", "cfs",
              paravirt={"spinlock": True}, spinlock="queued"),
    Contender("cfs-pvtlb", "KVM on CFS, guests with paravirtual TLB flush", "cfs",
              paravirt={"tlb_flush": True}),
    Contender("gang", "strict gang scheduling (all of a VM's vCPUs together)", "gang"),
    Contender("relaxed", "VMware-style relaxed co-scheduling", "relaxed_cosched"),
    Contender("balance", "balance scheduling (siblings never share a runqueue)", "balance"),
    Contender("flexcore", "FlexCore vCPU ballooning on KVM/CFS (seed 000)", "cfs",
              controller={"name": "flexcore"}),
    Contender("csrc", "Xen credit with softirq tasklets and CSRC (seed 001)", "credit",
              params={"tasklet": "softirq", "csrc": True}),
    Contender("flex", "Flex: FlexW weights in credit's accounting + FlexS spin-aware switching (seed 002)", "flex"),
    Contender("dp", "DP-Scheduling: affinity-aware dynamic pinning on credit (seed 003)", "dp"),
)


# ---- metrics ----------------------------------------------------------------------------

def _mean(xs: Sequence[float]) -> Optional[float]:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return sum(xs) / len(xs) if xs else None


def metrics(summary: Mapping[str, Any]) -> dict[str, Optional[float]]:
    """The arena's columns, from one run's summary.json."""
    vms = summary["vms"]
    sim_s = summary["sim_time_ns"] / 1e9
    done = [v["completion_ns"] / 1e6 for v in vms if v.get("completion_ns") is not None]
    reqs = [v["requests"] for v in vms if v.get("requests", {}).get("count", 0) > 0]
    return {
        "completion_ms": _mean(done) if len(done) == len(vms) else None,
        "throughput_ops_s": sum(v.get("ops", 0) for v in vms) / sim_s if sim_s > 0 else None,
        "p99_ms": max(r["p99_ms"] for r in reqs) if reqs else None,
        "lag_pct": 100 * _mean([abs(v.get("relative_lag", 0.0)) for v in vms]),
        "spin_pct": 100 * _mean([v.get("spin_fraction", 0.0) for v in vms]),
        "ctxsw_per_pcpu_s": summary["totals"]["context_switches_per_pcpu_s"],
        "migrations": float(sum(v.get("migrations", 0) for v in vms)),
    }


#: Column key → (header, lower is better).
COLUMNS = {
    "completion_ms": ("completion [ms]", True),
    "throughput_ops_s": ("throughput [ops/s]", False),
    "p99_ms": ("p99 [ms]", True),
    "lag_pct": ("|lag| [%]", True),
    "spin_pct": ("spin+IPI [%]", True),
    "ctxsw_per_pcpu_s": ("ctx sw/pCPU-s", True),
    "migrations": ("migrations", True),
}


@dataclass(frozen=True)
class ArenaScenario:
    name: str
    path: Path
    #: Primary metric (a key of COLUMNS), or None: completion if every VM finishes, else
    #: throughput.
    metric: Optional[str] = None
    what: str = ""
    #: Scenario ``warmup_ms`` set for the arena: a latency scenario whose servers start cold
    #: leaves that start out of p99. In mixed-cloud the web server's p99 under its own
    #: scheduler (credit) falls from 10.7 to 6.2 ms with a 100 ms warm-up and stays there with
    #: 200 and 400 ms (session 29, seed 1; 400 leaves a margin). In consolidation some
    #: servers' means settle only after a second (scenarios/arena/consolidation.toml). Not
    #: longer: a policy's own settling (FlexW's weights, FlexCore's ballooning) is part of what
    #: the arena measures.
    warmup_ms: Optional[float] = None


def _suite_dir() -> Path:
    from . import scenarios_dir

    return scenarios_dir()


def suite() -> list[ArenaScenario]:
    d = _suite_dir()
    return [
        ArenaScenario("sync-heavy", d / "arena" / "sync-heavy.toml", "completion_ms", "sync-heavy parallel"),
        ArenaScenario("blocking-heavy", d / "arena" / "blocking-heavy.toml", "completion_ms", "blocking-heavy parallel"),
        ArenaScenario("fairness", d / "arena" / "fairness.toml", "lag_pct", "heterogeneous vCPU counts"),
        ArenaScenario("consolidation", d / "arena" / "consolidation.toml", "p99_ms", "server consolidation (latency)", 1000.0),
        ArenaScenario("cache-sensitive", d / "arena" / "cache-sensitive.toml", "completion_ms", "cache-sensitive (STREAM beside a bursty VM)"),
        ArenaScenario("numa-spread", d / "arena" / "numa-spread.toml", "completion_ms", "NUMA-spread"),
        ArenaScenario("mixed-cloud", d / "arena" / "mixed-cloud.toml", "p99_ms", "mixed cloud host", 400.0),
    ]


# ---- running and ranking ----------------------------------------------------------------

#: Simulation seeds per contender and scenario (``vmsched arena --seeds``).
DEFAULT_SEEDS = 3
#: One contender beats another when its primary metric is better by more than this many
#: standard errors of the difference (about a 95 % two-sided test for normal means).
NOISE_SE = 2.0


@dataclass
class Cell:
    scenario: str
    contender: str
    #: Each column's mean over the seeds (None if any seed has none).
    metrics: dict[str, Optional[float]]
    rank: Optional[int] = None
    #: Standard error of each mean over the seeds (None with one seed).
    se: dict[str, Optional[float]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)
    #: The scenario's primary metric, by which ``rank`` was given.
    primary: Optional[str] = None


def combine(cells: Sequence[Mapping[str, Optional[float]]]) -> tuple[dict, dict]:
    """Per-seed metrics → (mean, standard error of the mean) per column."""
    means: dict[str, Optional[float]] = {}
    ses: dict[str, Optional[float]] = {}
    for k in COLUMNS:
        xs = [m.get(k) for m in cells]
        ok = all(x is not None and math.isfinite(x) for x in xs) and xs
        means[k] = statistics.fmean(xs) if ok else None
        ses[k] = statistics.stdev(xs) / math.sqrt(len(xs)) if ok and len(xs) > 1 else None
    return means, ses


def primary(s: ArenaScenario, cells: Sequence[Cell]) -> str:
    if s.metric is not None:
        return s.metric
    return "completion_ms" if all(c.metrics.get("completion_ms") is not None for c in cells) else "throughput_ops_s"


def beats(a: Cell, b: Cell, key: str) -> bool:
    """``a`` is better than ``b`` on ``key`` by more than ``NOISE_SE`` standard errors of the
    difference (any margin with one seed); a cell without a value beats none and loses to all."""
    va, vb = a.metrics.get(key), b.metrics.get(key)
    if va is None:
        return False
    if vb is None:
        return True
    margin = (vb - va) if COLUMNS[key][1] else (va - vb)
    return margin > NOISE_SE * math.hypot(a.se.get(key) or 0.0, b.se.get(key) or 0.0)


def rank(cells: list[Cell], key: str) -> None:
    """Ranks in tiers, best mean first: a contender shares the rank of its tier's first
    contender unless that one beats it (:func:`beats`); then it opens a new tier, ranked by its
    position (1, 1, 3, ...). So ranks follow the means, and equal results and results within
    the seeds' scatter of the tier's best share a rank. Cells without a value come last."""
    head: Optional[Cell] = None
    for i, c in enumerate(ordered_by_mean(cells, key), 1):
        if head is None or beats(head, c, key):
            head = c
            c.rank = i
        else:
            c.rank = head.rank


def ordered_by_mean(cells: Sequence[Cell], key: str) -> list[Cell]:
    """Best mean first (by name among equals); cells without a value last."""
    sign = 1 if COLUMNS[key][1] else -1
    return sorted(cells, key=lambda c: (c.metrics.get(key) is None,
                                        sign * (c.metrics.get(key) or 0.0), c.contender))


def run_arena(scenarios: Sequence[ArenaScenario], contenders: Sequence[Contender],
              jobs: int | None = None, progress: bool = True,
              out: Path | None = None, overrides: Sequence[Any] = (),
              seeds: int = DEFAULT_SEEDS) -> dict[str, list[Cell]]:
    """Every contender on every scenario, each with ``seeds`` simulation seeds: the scenario's
    own seed and the ones after it. ``overrides`` (``--set KEY=VALUE``,
    :mod:`vmsched.overrides`) change every run, a contender applied, that has the field (as
    ``vmsched reproduce --set`` does); ``run_arena.last_overrides`` then says how many each
    reached. Nothing runs if one reaches none or leaves a run invalid. With ``out``, each
    run's summary.json is written to ``out/<scenario>/<contender>@<seed>.json``."""
    from .batch import Run, simulate_all
    from .overrides import apply_overrides
    from .scenario import Scenario

    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds: expected a whole number >= 1, got {seeds!r}")
    planned: dict[str, list[Run]] = {}
    for s in scenarios:
        base = Scenario.from_file(s.path).to_dict()
        if s.warmup_ms is not None:
            base["warmup_ms"] = s.warmup_ms
        planned[s.name] = [Run(f"{s.name}/{c.name}", Scenario.from_dict(c.apply(base)).to_dict(),
                               controller=c.run_controller())
                           for c in contenders]  # from_dict validates: clear errors
    run_arena.last_overrides = apply_overrides(planned, overrides)

    def seeds_of(run: Run) -> range:
        return range(run.scenario["seed"], run.scenario["seed"] + seeds)

    runs = {(s.name, c.name, seed): Run(f"{run.label}@{seed}", dict(run.scenario, seed=seed),
                                       controller=run.controller)
            for s in scenarios for c, run in zip(contenders, planned[s.name])
            for seed in seeds_of(run)}
    results = simulate_all(runs.values(), jobs=jobs, progress=progress)
    table: dict[str, list[Cell]] = {}
    for s in scenarios:
        texts: dict[str, str] = {}
        cells = []
        for c, run in zip(contenders, planned[s.name]):
            mine = seeds_of(run)
            per_seed = []
            for seed in mine:
                res = results[runs[(s.name, c.name, seed)].key()]
                per_seed.append(metrics(res.summary))
                texts[f"{c.name}@{seed}.json"] = res.json
            means, ses = combine(per_seed)
            cells.append(Cell(s.name, c.name, means, se=ses, seeds=list(mine)))
        if out is not None:
            write_json_files(out / s.name, texts)
        key = primary(s, cells)
        rank(cells, key)
        for c in cells:
            c.primary = key
        table[s.name] = cells
    return table


run_arena.last_overrides = []


def overall(table: Mapping[str, Sequence[Cell]]) -> list[tuple[str, float]]:
    ranks: dict[str, list[int]] = {}
    for cells in table.values():
        for c in cells:
            ranks.setdefault(c.contender, []).append(c.rank or 0)
    return sorted(((k, sum(v) / len(v)) for k, v in ranks.items()), key=lambda kv: (kv[1], kv[0]))


def fmt(v: Optional[float]) -> str:
    if v is None:
        return "—"
    a = abs(v)
    return f"{v:,.0f}" if a >= 1000 else (f"{v:.1f}" if a >= 10 else f"{v:.3g}")


HEADERS = ["rank", "contender"] + [h for h, _ in COLUMNS.values()]


def cell_text(c: Cell, k: str, key: str) -> str:
    """A column's mean; the primary metric with its standard error over the seeds."""
    se = c.se.get(k) if k == key else None
    return fmt(c.metrics.get(k)) + (f" ±{fmt(se)}" if se is not None and c.metrics.get(k) is not None else "")


def rows(cells: Sequence[Cell], key: str) -> list[list[str]]:
    """Table rows, best first; ``key`` is the primary metric (shown with its ± SE)."""
    return [[str(c.rank), c.contender] + [cell_text(c, k, key) for k in COLUMNS]
            for c in ordered_by_mean(cells, key)]


# ---- plots and report -------------------------------------------------------------------

def plot_scenario(s: ArenaScenario, cells: Sequence[Cell], key: str, path: Path) -> Path:
    plt = pyplot()
    cs = ordered_by_mean(cells, key)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    for ax, k in zip(axes, [key, "spin_pct" if key != "spin_pct" else "ctxsw_per_pcpu_s"]):
        vals = [c.metrics.get(k) or 0.0 for c in cs]
        err = [(c.se.get(k) or 0.0) if k == key else 0.0 for c in cs]
        ax.bar(range(len(cs)), vals, yerr=err if any(err) else None, capsize=2,
               color=["#1f77b4" if c.rank == 1 else "#8fb8de" for c in cs])
        ax.set_xticks(range(len(cs)))
        ax.set_xticklabels([c.contender for c in cs], rotation=40, ha="right", fontsize=7)
        ax.set_title(COLUMNS[k][0] + (" (primary)" if k == key else ""), fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(f"{s.name}: {s.what}", fontsize=9)
    fig.tight_layout()
    return save_png(fig, path)


def plot_ranks(table: Mapping[str, Sequence[Cell]], path: Path) -> Path:
    plt = pyplot()
    order = [k for k, _ in overall(table)]
    scen = list(table)
    grid = [[next(c.rank for c in table[s] if c.contender == k) for s in scen] for k in order]
    fig, ax = plt.subplots(figsize=(1.1 * len(scen) + 2.5, 0.32 * len(order) + 1.2))
    im = ax.imshow(grid, cmap="RdYlGn_r", aspect="auto")
    ax.set_xticks(range(len(scen)))
    ax.set_xticklabels(scen, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(order, fontsize=8)
    for i, row in enumerate(grid):
        for j, r in enumerate(row):
            ax.text(j, i, str(r), ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label="rank (1 = best)")
    ax.set_title("rank per scenario (rows by mean rank)", fontsize=9)
    fig.tight_layout()
    return save_png(fig, path)


def write_report(scenarios: Sequence[ArenaScenario], contenders: Sequence[Contender],
                 table: Mapping[str, Sequence[Cell]], out: Path, overrides: Sequence[str] = ()) -> Path:
    """``overrides``: where each ``--set`` landed (``run_arena.last_overrides``), shown first."""
    import html

    out.mkdir(parents=True, exist_ok=True)
    by = {s.name: s for s in scenarios}
    images: dict[str, Path] = {}
    images["ranks"] = plot_ranks(table, out / "ranks.png")
    for name, cells in table.items():
        images[name] = plot_scenario(by[name], cells, primary(by[name], cells), out / name / f"{name}.png")
    n_seeds = max((len(c.seeds) for cells in table.values() for c in cells), default=1)
    method = (f"Generated by `vmsched arena`; every contender runs every scenario with the same "
              f"{n_seeds} simulation seed{'s' if n_seeds > 1 else ''} (the scenario's own and the "
              "ones after it), and each number is the mean over them; the primary metric shows ± "
              "its standard error. Rank 1 is best on the scenario's primary metric. Ranks come "
              "in tiers, best mean first: a contender shares the rank of its tier's best unless "
              f"that one is better by more than {NOISE_SE:g} standard errors of the difference; "
              "then it opens a new tier, ranked by its position. So equal results, and results "
              "within the seeds' scatter of the tier's best, share a rank." + (
                  "" if n_seeds > 1 else " With one seed there is no scatter to measure: only "
                  "equal results share a rank (use --seeds 3 or more)."))
    md = ["# vmsched arena", "", method, ""]
    changed = ("Changed with --set (runs reached of all runs): " + "; ".join(overrides) + "."
               if overrides else "")
    if changed:
        md += [changed, ""]
    md += ["## Contenders", "", md_table(["contender", "what"], [[c.name, c.description] for c in contenders]),
          "", "## Overall (mean rank)", "",
          md_table(["contender", "mean rank"], [[k, f"{v:.2f}"] for k, v in overall(table)]), "",
          "![ranks](ranks.png)", ""]
    body = ["<h1>vmsched arena</h1>", f"<p>{html.escape(method)}</p>"] + (
        [f"<p>{html.escape(changed)}</p>"] if changed else []) + [
            "<h2>Overall (mean rank)</h2>",
            html_table(["contender", "mean rank"], [[k, f"{v:.2f}"] for k, v in overall(table)]),
            img_tag("ranks", images["ranks"].read_bytes())]
    for name, cells in table.items():
        s = by[name]
        key = primary(s, cells)
        warm = (f" Requests completed in the first {s.warmup_ms:g} ms (warm-up) are left out of p99."
                if s.warmup_ms else "")
        md += [f"## {name}: {s.what}", "", f"Scenario `{s.path.name}`; primary metric: {COLUMNS[key][0]}.{warm}", "",
               md_table(HEADERS, rows(cells, key)), "", f"![{name}]({name}/{name}.png)", ""]
        body += [f"<h2>{html.escape(name)}: {html.escape(s.what)}</h2>",
                 f"<p>Primary metric: {html.escape(COLUMNS[key][0])}.{html.escape(warm)}</p>",
                 html_table(HEADERS, rows(cells, key)), img_tag(name, images[name].read_bytes())]
    atomic_write(out / "report.md", "\n".join(md).rstrip() + "\n")
    atomic_write(out / "report.html", HTML_PAGE.replace("%TITLE%", "vmsched arena").replace("%BODY%", "\n".join(body)))
    atomic_write(out / "arena.json", json.dumps(
        {name: [c.__dict__ for c in cells] for name, cells in table.items()}, indent=2, sort_keys=True) + "\n")
    # How the suite was run, beside the numbers (`vmsched compare` notes --set on either side).
    atomic_write(out / "arena-run.json", json.dumps({"overrides": list(overrides)}, indent=2) + "\n")
    return out / "report.html"


# ---- user contenders --------------------------------------------------------------------

FIELDS = {"name", "description", "scheduler", "params", "ple", "controller", "paravirt", "spinlock",
          "python_controller", "python_controller_params"}


def load_contenders(path: str | Path) -> list[Contender]:
    """``[[contender]]`` tables of a TOML file; errors name the table and field."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from .scenario import check_scheduler

    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{p}: not valid TOML: {e}") from None
    items = data.get("contender")
    if not isinstance(items, list) or not items:
        raise ValueError(f"{p}: expected one or more [[contender]] tables")
    out = []
    for i, t in enumerate(items):
        where = f"{p}: contender[{i}]"
        unknown = set(t) - FIELDS
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}; known: {sorted(FIELDS)}")
        for req in ("name", "scheduler"):
            if not isinstance(t.get(req), str) or not t[req]:
                raise ValueError(f"{where}.{req}: required (a non-empty string)")
        check_scheduler(t["scheduler"], path=f"{where}.scheduler")
        for k in ("params", "ple", "paravirt", "python_controller_params"):
            if k in t and not isinstance(t[k], dict):
                raise ValueError(f"{where}.{k}: must be a table")
        spec = t.get("python_controller")
        if spec is not None:
            spec = _resolve_controller(spec, t.get("python_controller_params", {}), p.parent,
                                       f"{where}.python_controller")
        elif "python_controller_params" in t:
            raise ValueError(f"{where}.python_controller_params: given without python_controller")
        out.append(Contender(t["name"], t.get("description", "user contender"), t["scheduler"],
                             t.get("params", {}), t.get("ple", {}), t.get("controller"),
                             t.get("paravirt", {}), t.get("spinlock"), spec,
                             t.get("python_controller_params", {})))
    return out


def _resolve_controller(spec: Any, params: Mapping[str, Any], base: Path, where: str) -> str:
    """Check a contender's Python controller now (it imports, builds with its parameters and
    has ``interval_ms`` and ``step``), so a bad one stops the arena before anything runs; a
    file path becomes absolute (the contenders file's folder is its base)."""
    from .control import load_controller

    if not isinstance(spec, str):
        raise ValueError(f"{where}: expected 'FILE.py:Class' or 'module:Class', got {spec!r}")
    file, sep, name = spec.partition(":")
    if sep and file.endswith(".py"):
        spec = f"{(base / file).resolve()}:{name}"
    try:
        load_controller(spec, params)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return spec
