"""Seed 003 (DP-Scheduling, affinity-aware dynamic pinning on Xen credit), §5: Figures 6-9.

The seed's host (§5.1): two quad-core Xeon 5405 packages, every two cores sharing a 6 MB L2,
so four L2 domains of two cores (the library scenarios ``scenarios/dp-*.toml``), an 8-vCPU
benchmark VM beside an 8-vCPU competing VM (the seed names no competing load; the library's
computes 3 ms and sleeps 1 ms on average per thread). Each figure is a sweep: STREAM
bandwidth by array size (Fig. 6), EPCC running time by thread count (Fig. 7), IMB Sendrecv and
Exchange speed by message size (Figs. 8, 9), under ``credit`` and ``dp``. Both run on the
credit of the seed's hypervisor ("Xen 3.4.3", §5.1): the scenarios' ``wake = "xen34"`` with no
rate limits (docs/policies.md ## credit_wake), kept for ``dp`` by setting the scenario's
scheduler rather than overriding it.

The seed's figures carry no numbers in its text, so every result here is directional and
nothing is fitted. STREAM is averaged over a few simulation seeds: a run's bandwidth depends
much on where the barrier-synchronised threads happen to be placed early on.

Leaves out: Figure 1 (L2 misses native vs virtualised; the model has no native mode).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .core import Claim, Quantity, Reproduction, Run

S003 = "003_4dc0d6f8eb99c3eb.txt"
SCHEDULERS = ("credit", "dp")


def library(name: str, scheduler: str) -> dict:
    """A library scenario under `scheduler`, keeping its hypervisor params (Xen 3.4's credit:
    no rate limits, ``wake = "xen34"``), which ``dp`` takes too: a run whose scheduler
    override differs from the scenario's would drop them."""
    import vmsched

    d = vmsched.Scenario.from_file(str(Path(vmsched.scenarios_dir()) / f"{name}.toml")).to_dict()
    d["hypervisor"]["scheduler"] = scheduler
    return d


def _bench(results: Mapping[str, Any], label: str, key: str) -> float:
    vm = results[label].summary["vms"][0]
    v = vm.get("bench", {}).get("w0", {}).get(key)
    return float("nan") if v is None or not vm["finished"] else float(v)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


# ---- Figure 6: STREAM bandwidth by array size ------------------------------------------

#: Array sizes (KiB, each of the three arrays). A thread's slice is 3 × size / 8; a core's L2
#: share is 3 MiB, so the arrays outgrow the cache above 8 MiB.
STREAM_KIB = {False: (1024, 2048, 4096, 8192, 16384, 32768), True: (1024, 4096, 32768)}
STREAM_SEEDS = {False: (1, 2, 3), True: (1, 2, 3)}
#: KiB of array per thread and run, the same for every size (iterations = this / array_kib);
#: shorter runs finish before the competing VM disturbs them.
STREAM_WORK_KIB = {False: 4000 * 1024, True: 4000 * 1024}
STREAM_DURATION_MS = 30000


def stream_scenario(array_kib: int, quick: bool, scheduler: str = "credit") -> dict:
    d = library("dp-stream", scheduler)
    d["duration_ms"] = STREAM_DURATION_MS
    d["name"] = f"dp-stream-{array_kib}kib"
    d["vms"][0]["workloads"][0].update(array_kib=array_kib,
                                       iterations=max(10, STREAM_WORK_KIB[quick] // array_kib))
    return d


def _stream_runs(quick: bool) -> list[Run]:
    return [Run(f"{s}-{kib}kib-seed{seed}", stream_scenario(kib, quick, s), scheduler=s, seed=seed)
            for kib in STREAM_KIB[quick] for s in SCHEDULERS for seed in STREAM_SEEDS[quick]]


def _stream_measure(r: Mapping[str, Any]) -> dict[str, float]:
    q: dict[str, float] = {}
    sizes = sorted({int(k.split("-")[1][:-3]) for k in r})
    for kib in sizes:
        for s in SCHEDULERS:
            labels = [k for k in r if k.startswith(f"{s}-{kib}kib-")]
            q[f"{s}_{kib}kib_gbs"] = _mean([_bench(r, k, "bandwidth_bytes_per_s_per_thread") for k in labels]) / 1e9
        q[f"dp_over_credit_{kib}kib"] = q[f"dp_{kib}kib_gbs"] / q[f"credit_{kib}kib_gbs"]
    q["gap_smallest"] = q[f"dp_over_credit_{sizes[0]}kib"]
    q["gap_largest"] = q[f"dp_over_credit_{sizes[-1]}kib"]
    q["dp_below_credit_sizes"] = float(sum(q[f"dp_over_credit_{k}kib"] < 1.0 for k in sizes))
    return q


def _mib(kib: int) -> str:
    return f"{kib // 1024} MiB"


STREAM = Reproduction(
    name="dp-stream", seed_file=S003, figure="Figure 6",
    title="STREAM (8 threads) bandwidth per thread by array size, credit vs DP",
    runs=_stream_runs, measure=_stream_measure,
    quantities=[Quantity(f"{s}_{kib}kib_gbs", f"{s}, {_mib(kib)} arrays", "GB/s", "bandwidth per thread")
                for kib in STREAM_KIB[False] for s in SCHEDULERS]
    + [Quantity(f"dp_over_credit_{kib}kib", f"DP / credit, {_mib(kib)}", "×", "DP / credit")
       for kib in STREAM_KIB[False]],
    claims=[
        Claim("DP gets more bandwidth than credit while the arrays fit in the cache (smallest size)",
              lambda q: q["gap_smallest"] > 1.0),
        Claim("the gap shrinks as the arrays outgrow the cache (DP/credit at the largest size "
              "below that at the smallest)",
              lambda q: q["gap_largest"] < q["gap_smallest"]),
        Claim("DP is not below credit at any array size",
              lambda q: q["dp_below_credit_sizes"] == 0),
    ],
    notes="Bandwidth per thread, mean over simulation seeds 1-3, same bytes streamed at every "
          "size. The benchmark's threads meet at a barrier after each pass (the library "
          "scenario; OpenMP `parallel for`); the seed calls its threads unsynchronised, but "
          "without the barrier neither scheduler migrates the threads in the model and DP "
          "shows no gain at all (about 5 % below credit).",
)


# ---- Figure 7: EPCC synchronisation time by thread count --------------------------------

EPCC_THREADS = {False: (2, 4, 6, 8), True: (2, 8)}
EPCC_CONSTRUCTS = ("barrier", "reduction", "critical")


def epcc_scenario(threads: int, construct: str, scheduler: str = "credit") -> dict:
    d = library("dp-epcc", scheduler)
    d["duration_ms"] = 20000
    d["name"] = f"dp-epcc-{construct}-{threads}t"
    d["vms"][0]["workloads"][0].update(threads=threads, construct=construct)
    return d


def _epcc_runs(quick: bool) -> list[Run]:
    return [Run(f"{s}-{c}-{t}t", epcc_scenario(t, c, s), scheduler=s)
            for t in EPCC_THREADS[quick] for c in EPCC_CONSTRUCTS for s in SCHEDULERS]


def _epcc_measure(r: Mapping[str, Any]) -> dict[str, float]:
    q: dict[str, float] = {}
    threads = sorted({int(k.split("-")[2][:-1]) for k in r})
    for t in threads:
        for s in SCHEDULERS:
            # The suite's running time: the three constructs' timed loops together.
            q[f"{s}_{t}t_ms"] = sum(_bench(r, f"{s}-{c}-{t}t", "test_ns") for c in EPCC_CONSTRUCTS) / 1e6
        q[f"gap_{t}t_ms"] = q[f"credit_{t}t_ms"] - q[f"dp_{t}t_ms"]
    q["gap_fewest_ms"] = q[f"gap_{threads[0]}t_ms"]
    q["gap_most_ms"] = q[f"gap_{threads[-1]}t_ms"]
    return q


EPCC = Reproduction(
    name="dp-epcc", seed_file=S003, figure="Figure 7",
    title="EPCC OpenMP microbenchmarks (barrier, reduction, critical) running time by threads",
    runs=_epcc_runs, measure=_epcc_measure,
    quantities=[Quantity(f"{s}_{t}t_ms", f"{s}, {t} threads", "ms", "running time")
                for t in EPCC_THREADS[False] for s in SCHEDULERS]
    + [Quantity(f"gap_{t}t_ms", f"credit − DP, {t} threads", "ms", "gap")
       for t in EPCC_THREADS[False]],
    claims=[
        Claim("DP runs the suite faster than credit with as many threads as vCPUs",
              lambda q: q["gap_most_ms"] > 0),
        Claim("the gap grows with the number of threads",
              lambda q: q["gap_most_ms"] > q["gap_fewest_ms"]),
    ],
    notes="Running time = the timed loops of barrier, reduction and critical (2000 "
          "constructs each, 1 µs delay) added up.",
)


# ---- Figures 8-9: IMB Sendrecv and Exchange by message size ----------------------------

IMB_BYTES = {False: (4, 64, 1024, 16384, 131072, 1048576, 4194304), True: (64, 1024, 16384, 1048576)}
IMB_PATTERNS = ("sendrecv", "exchange")
#: The seed's CPU-bound range, where it reports DP ahead: 128 B to 128 KiB.
CPU_BOUND = (128, 131072)
IMB_DURATION_MS = 20000


def imb_reps(msg_bytes: int, quick: bool) -> int:
    """Repetitions: about 80 MiB moved per rank (fewer in quick mode), 20 to 5000."""
    total = (20 if quick else 80) << 20
    return max(20, min(5000 if not quick else 1500, total // msg_bytes))


def imb_scenario(pattern: str, msg_bytes: int, quick: bool, scheduler: str = "credit") -> dict:
    d = library("dp-imb", scheduler)
    d["duration_ms"] = IMB_DURATION_MS
    d["name"] = f"dp-imb-{pattern}-{msg_bytes}b"
    d["vms"][0]["workloads"][0].update(pattern=pattern, msg_bytes=msg_bytes,
                                       reps=imb_reps(msg_bytes, quick))
    return d


def _imb_runs(quick: bool) -> list[Run]:
    return [Run(f"{s}-{p}-{b}b", imb_scenario(p, b, quick, s), scheduler=s)
            for p in IMB_PATTERNS for b in IMB_BYTES[quick] for s in SCHEDULERS]


def _imb_measure(r: Mapping[str, Any]) -> dict[str, float]:
    q: dict[str, float] = {}
    sizes = sorted({int(k.split("-")[2][:-1]) for k in r})
    for p in IMB_PATTERNS:
        for b in sizes:
            for s in SCHEDULERS:
                q[f"{p}_{s}_{b}b_mibs"] = _bench(r, f"{s}-{p}-{b}b", "throughput_mib_per_s")
            q[f"{p}_dp_over_credit_{b}b"] = q[f"{p}_dp_{b}b_mibs"] / q[f"{p}_credit_{b}b_mibs"]
        ratios = [q[f"{p}_dp_over_credit_{b}b"] for b in sizes if CPU_BOUND[0] <= b <= CPU_BOUND[1]]
        # NaN (a run that did not finish) makes the claim fail, as it should.
        q[f"{p}_worst_ratio_cpu_bound"] = min(ratios) if all(x == x for x in ratios) else float("nan")
    return q


def _size(b: int) -> str:
    return f"{b // 1048576} MiB" if b >= 1048576 else f"{b // 1024} KiB" if b >= 1024 else f"{b} B"


IMB = Reproduction(
    name="dp-imb", seed_file=S003, figure="Figures 8 and 9",
    title="IMB Sendrecv and Exchange (8 ranks) transfer speed by message size, credit vs DP",
    runs=_imb_runs, measure=_imb_measure,
    quantities=[Quantity(f"{p}_{s}_{b}b_mibs", f"{p} {s}, {_size(b)}", "MiB/s", f"{p}")
                for p in IMB_PATTERNS for b in IMB_BYTES[False] for s in SCHEDULERS]
    + [Quantity(f"{p}_dp_over_credit_{b}b", f"{p} DP / credit, {_size(b)}", "×", "DP / credit")
       for p in IMB_PATTERNS for b in IMB_BYTES[False]],
    claims=[
        Claim("Sendrecv: DP is faster than credit at every message size of the CPU-bound range "
              "(128 B - 128 KiB)", lambda q: q["sendrecv_worst_ratio_cpu_bound"] > 1.0),
        Claim("Exchange: DP is faster than credit at every message size of the CPU-bound range "
              "(128 B - 128 KiB)", lambda q: q["exchange_worst_ratio_cpu_bound"] > 1.0),
    ],
    notes="Transfer speed as IMB reports it (results vms[].bench throughput_mib_per_s); a run "
          "that does not finish within 20 s has no speed.",
)

REPRODUCTIONS = [STREAM, EPCC, IMB]
