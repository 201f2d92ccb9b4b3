"""Re-solve seed 001's original Xen at its peak (9 tiles) and measure its growths 1 -> 9 tiles.

The calibration of the csrc reproductions (python/vmsched/reproduce/calibration.toml, `csrc.*`)
fits, on the ORIGINAL configuration only (no softirq tasklets, no CSRC):
- at 9 tiles, by a damped fixed-point iteration: the load (Table 1: 26,551 switches per
  pCPU-second), the request scale (Figure 16: 92 % busy), the external-interrupt, HLT,
  APIC-access (EOI) and (since session 18) I/O-instruction exit costs (Figure 9: 12, 3.73,
  4.78 and 2.94 % of the CPU), the full world
  switch's cost (Table 1: switching 7.28 % of the CPU, lazy switches at sched_call_ns) and the
  reference CPI of the hypervisor's costs (set to the measured totals.hv_llc_cpi_factor);
- for a point of the cache model (LLC exponent alpha, LLC stall ratio k, TLB stall ratio r, TLB
  exponent beta), the three growths 1 -> 9 tiles the recorded criterion compares (Figures 7-8:
  CPI x1.88, LLC misses x2.67, TLB misses x1.38; least sum of squared relative errors).

The trial points are built by csrc.scenario itself, so they hold everything the reproduction
sets that is not fitted, among it (since session 15) Xen 4.1's guest TLB flush at every full
context switch with its sourced walk cost, csrc.TLB_WALK_CYCLES (40 cycles; fixed, not a
parameter of the point; printed at the start and in RESULT).

Session 14's solve (written as scratch by its helpers and kept here so the next refit does not
start from nothing; sessions 12-13's were lost). It starts from calibration.toml's current
values. Not run by the tests. Seeds 1-8, 3000 ms runs, both cores.

Usage (from the repository root, with .venv active):
    python tools/calibrate/csrc_peak_solve.py ALPHA K R BETA [STEPS]
prints each step and a final RESULT line (JSON: the solved point, its growths, its 9-tile
measures). Never look at a with-policy run before choosing a point.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, field, make_dataclass, replace

from vmsched.batch import Run, simulate_all
from vmsched.reproduce import csrc, expected
from vmsched.reproduce.calibration import fitted

SEEDS = csrc.SEEDS
MS = 3000.0
#: pCPUs of the scenario csrc.scenario builds.
N_PCPUS = csrc.SOCKETS * csrc.THREADS_PER_SOCKET


def _seed(key: str) -> float:
    """A baseline's seed value, from the one place seed values live (reproduce/expected.py)."""
    (value,) = [q[key].value for name, q in expected.SEED.items() if name.startswith("csrc") and key in q]
    return value


#: The original's baselines at its peak (Table 1, Figures 9 and 16), and its growths 1 -> 9
#: tiles (Figures 7-8) that the cache model's criterion compares.
TARGETS = {"switches": _seed("context_switches_per_pcpu_s"), "busy": _seed("busy_original_pct") / 100,
           "ext": _seed("hv_ext_intr_pct"), "hlt": _seed("hv_hlt_pct"),
           "apic": _seed("hv_apic_access_pct"), "io": _seed("hv_io_pct"),
           "sw": _seed("context_switch_cpu_pct")}
GROWTH_TARGETS = {"cpi": _seed("cpi_growth_original"), "llc": _seed("llc_miss_growth_original"),
                  "tlb": _seed("tlb_miss_growth_original")}


#: The point's fields and the calibration.toml entries they stand for.
KEYS = {"alpha": "csrc.host.llc_miss_exponent", "k": "csrc.host.llc_stall_at_capacity_ratio",
        "r": "csrc.host.tlb_stall_at_capacity_ratio", "beta": "csrc.host.tlb_miss_exponent",
        "load": "csrc.specvirt.load", "scale": "csrc.specvirt.request_scale",
        "ext": "csrc.host.exit_ext_intr_ns", "hlt": "csrc.host.exit_hlt_ns",
        "eoi": "csrc.host.exit_apic_eoi_ns", "io": "csrc.host.exit_io_ns", "ref": "csrc.host.hv_costs_reference_cpi",
        "window": "csrc.host.llc_window_ns", "disk_us": "csrc.specvirt.disk_us",
        "ws": "csrc.host.world_switch_ns"}


def _default(name: str):
    return field(default_factory=lambda: fitted(KEYS[name]))


#: A point: the cache model's four parameters (alpha, k, r, beta) and what the solve fits at
#: the peak, one float field per entry of KEYS (calibration.toml's values by default).
P = make_dataclass("P", [(name, float, _default(name)) for name in KEYS], frozen=True)


def build(p: P, tiles: int, ms: float) -> dict:
    """The reproduction's original configuration (csrc.scenario) at the point ``p``."""
    values = {KEYS[name]: v for name, v in asdict(p).items()}
    return csrc.scenario(tiles, "original", ms, fitted=lambda key: values.get(key, fitted(key)))


def simulate(p: P, tiles_list) -> dict:
    runs = [Run(f"{csrc.label(t, 'original')}@{s}", build(p, t, MS), seed=s)
            for t in tiles_list for s in SEEDS]
    res = simulate_all(runs, jobs=2, progress=False)
    return {run.label: res[run.key()] for run in runs}


def mean(r, lab, key):
    return csrc.total(r, lab, key)


def exits_per_s(r, lab, reason):
    vals = []
    for s in SEEDS:
        summ = r[f"{lab}@{s}"].summary
        vals.append(sum(v["exits"][reason] for v in summ["vms"]) / (summ["sim_time_ns"] / 1e9))
    return sum(vals) / len(vals)


def measure9(r) -> dict:
    lab = csrc.label(9, "original")
    sh = csrc.hv_by_exit_pct(r, lab)
    return {
        "switches": mean(r, lab, "context_switches_per_pcpu_s"),
        "busy": csrc.busy(r, lab),
        "hv": mean(r, lab, "hv_fraction"),
        "ext": sh["hv_ext_intr_pct"], "hlt": sh["hv_hlt_pct"], "apic": sh["hv_apic_access_pct"],
        "io": sh["hv_io_pct"],
        "hv_cpi": mean(r, lab, "hv_llc_cpi_factor"),
        "n_ext": exits_per_s(r, lab, "ext_intr"), "n_hlt": exits_per_s(r, lab, "hlt"),
        "n_eoi": exits_per_s(r, lab, "apic_eoi"), "n_io": exits_per_s(r, lab, "io"),
        "cpi": mean(r, lab, "llc_cpi_factor"), "llc": mean(r, lab, "llc_miss_rate_rel"),
        "tlb": mean(r, lab, "tlb_miss_rate_rel"),
        "cause_hlt": csrc.cause_share(r, lab, "cause_hlt_pct"),
        "cause_ext": csrc.cause_share(r, lab, "cause_ext_intr_pct"),
        "full": mean(r, lab, "state_switches_per_pcpu_s"),
        "lazy": mean(r, lab, "lazy_switches_per_pcpu_s"),
        "sw": csrc.switching_cpu_pct(r, lab),
    }


def sse_peak(m) -> float:
    """The peak targets' sum of squared relative errors (the stop rule's)."""
    return ((m["switches"] / TARGETS["switches"] - 1) ** 2 + (m["busy"] / TARGETS["busy"] - 1) ** 2
            + sum((m[k] / TARGETS[k] - 1) ** 2 for k in ("ext", "hlt", "apic", "io", "sw")))


def within1(m) -> bool:
    return abs(m["switches"] / TARGETS["switches"] - 1) <= 0.01 and abs(m["busy"] / TARGETS["busy"] - 1) <= 0.01


def step(p: P, m: dict, d: float) -> P:
    n_p = N_PCPUS  # pCPUs of the scenario; shares are % of n_p x T, counts per second (all VMs)
    def newton(cost, key, count):
        # share% = 100 * count * cost_eff / (n_p * 1e9); d share / d cost = 100 * count / (n_p * 1e9)
        return max(100.0, cost + d * (TARGETS[key] - m[key]) / 100 * n_p * 1e9 / count)
    guest_now = m["busy"] - m["hv"]
    guest_want = TARGETS["busy"] - m["hv"]
    return replace(p,
                   load=p.load * (TARGETS["switches"] / m["switches"]) ** d,
                   scale=p.scale * (guest_want / guest_now) ** d,
                   ext=newton(p.ext, "ext", m["n_ext"]), hlt=newton(p.hlt, "hlt", m["n_hlt"]),
                   eoi=newton(p.eoi, "apic", m["n_eoi"]), io=newton(p.io, "io", m["n_io"]),
                   # lazy switches cost the scheduler path, tied to the full switch (session 22)
                   ws=max(100.0, p.ws + d * (TARGETS["sw"] - m["sw"]) / 100 * 1e9
                          / (m["full"] + m["lazy"] * csrc.sched_call_per_world_switch())),
                   ref=round(m["hv_cpi"], 4))


def solve(p: P, steps: int, d: float = 0.7, log=print):
    best = None
    for i in range(steps):
        m = measure9(simulate(p, [9]))
        e = sse_peak(m)
        log(f"  step {i}: {fmt(p)} -> sw {m['switches']:.0f} busy {100*m['busy']:.2f} ext {m['ext']:.2f} "
            f"hlt {m['hlt']:.2f} apic {m['apic']:.2f} io {m['io']:.2f} sw {m['sw']:.2f} (full {m['full']:.0f} lazy {m['lazy']:.0f}) hvcpi {m['hv_cpi']:.3f} causes ext {m['cause_ext']:.2f} hlt {m['cause_hlt']:.2f} peak sse {e:.5f} within1 {within1(m)}")
        if best is None or (within1(m), -e) > (within1(best[1]), -sse_peak(best[1])):
            best = (p, m)
        if within1(m) and e < 0.0005 and abs(m["hv_cpi"] / p.ref - 1) < 0.005:
            break
        p = step(p, m, d)
    return best


def growths(p: P, log=print) -> dict:
    r = simulate(p, [1, 9])
    l1, l9 = csrc.label(1, "original"), csrc.label(9, "original")
    g = {k: mean(r, l9, key) / mean(r, l1, key)
         for k, key in (("cpi", "llc_cpi_factor"), ("llc", "llc_miss_rate_rel"), ("tlb", "tlb_miss_rate_rel"))
         if mean(r, l1, key) > 0}
    m9 = measure9(r)
    out = {**g, "sse": sum((g[k] / GROWTH_TARGETS[k] - 1) ** 2 for k in g),
           "cpi1": mean(r, l1, "llc_cpi_factor"), "cpi9": mean(r, l9, "llc_cpi_factor"),
           "llc1": mean(r, l1, "llc_miss_rate_rel"), "llc9": mean(r, l9, "llc_miss_rate_rel"),
           "tlb1": mean(r, l1, "tlb_miss_rate_rel"), "tlb9": mean(r, l9, "tlb_miss_rate_rel"),
           "resp1": csrc.response_ms(r, l1), "cause_hlt": m9["cause_hlt"], "m9": m9}
    return out


def fmt(p: P) -> str:
    return (f"a {p.alpha} k {p.k} r {p.r} b {p.beta} load {p.load:.4f} scale {p.scale:.4f} "
            f"ext {p.ext:.0f} hlt {p.hlt:.0f} eoi {p.eoi:.0f} io {p.io:.0f} ref {p.ref:.3f} ws {p.ws:.0f}")


def main() -> None:
    """The command line; ``CSRC_START`` (JSON, e.g. '{"load": 1.163}') overrides the start."""
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: csrc_peak_solve.py ALPHA K R BETA [STEPS]")
    alpha, k, r, beta = map(float, sys.argv[1:5])
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    start = replace(P(), **json.loads(os.environ.get("CSRC_START", "{}")))
    p0 = replace(start, alpha=alpha, k=k, r=r, beta=beta)
    print("start", fmt(p0), "tlb_walk_cycles", csrc.TLB_WALK_CYCLES, flush=True)
    best_p, best_m = solve(p0, steps, log=lambda s: print(s, flush=True))
    g = growths(best_p)
    m9 = g.pop("m9")
    print("RESULT", json.dumps({"p": asdict(best_p), "tlb_walk_cycles": csrc.TLB_WALK_CYCLES,
                                "growth": g, "m9": m9}), flush=True)


if __name__ == "__main__":
    main()
