"""What a reproduction is, and how one is run and judged.

A :class:`Reproduction` sets up one experiment of a seed document: the runs (scenario,
scheduler, seed), a ``measure`` function that turns their results into named quantities, and
the seed's directional claims as predicates over those quantities. It never sees the seed's
numbers: they live only in :mod:`vmsched.reproduce.expected`, which is read after the
simulation, by :func:`judge`, to put the seed's value beside the simulated one.

Tolerances (issue 4): a simulated quantity holds when it lies within ±25 % (relative) of the
seed's value, or ±5 % where the seed derives the value analytically (``Seed.analytic``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ..batch import Run  # noqa: F401  (family modules build their runs from here)

#: Relative tolerance for a measured seed value, and for one the seed derives analytically.
TOLERANCE_MEASURED = 0.25
TOLERANCE_ANALYTIC = 0.05


@functools.lru_cache(maxsize=1)
def _defaults() -> dict[str, Any]:
    """A scenario that sets nothing it can leave out, as the scenario parser fills it in."""
    from ..scenario import Scenario

    sc = {"host": {"cores_per_socket": 1}, "vms": [{"vcpus": 1, "workloads": [{"kind": "rambench"}]}]}
    return Scenario.from_dict(sc).to_dict()


def host_default_costs() -> dict[str, Any]:
    """The host model's default costs (host/mod.rs ``CostParams``; docs/model.md gives each
    one's source), as a scenario that sets none of them gets them."""
    return dict(_defaults()["host"]["costs"])


def guest_default_options() -> dict[str, Any]:
    """The guest model's default options (scenario ``vms[].guest``; docs/scenarios.md gives
    each one), as a VM that sets none of them gets them."""
    return dict(_defaults()["vms"][0]["guest"])


#: Every Xen host of the reproductions switches context lazily, as Xen does (docs/policies.md
#: ## lazy_context_switch, hv/lazy_switch.rs): ``context_switch`` in xen/arch/x86/domain.c runs
#: ``__context_switch`` (save the state of ``per_cpu(curr_vcpu, cpu)``, load the next vCPU's,
#: ``write_ptbase``) only when the next vCPU is neither the idle vCPU nor the one whose state the
#: pCPU still holds (``if ( (per_cpu(curr_vcpu, cpu) == next) || is_idle_vcpu(next) )``); a
#: state held lazily elsewhere is saved by that pCPU's ``__sync_lazy_execstate`` from the flush
#: IPI. Arch code, the same under every scheduler: read in Xen 3.4.4 (huddy1985/xen-3.4.4, for
#: seed 003's 3.4.3; session 15) and 4.2.2 (lostzoumo/xen-4.2.2, for seed 001's 4.1; session
#: 14); seed 002 names no version (Flex is PPoPP'14), and every version between has it. The
#: costs are each host's: csrc fits the full switch (calibration.toml csrc.host.world_switch_ns)
#: and, since session 22, keeps the scheduler path at the defaults' ratio to it
#: (csrc.sched_call_per_world_switch); flex and dp keep the host defaults, not fitted (docs/model.md): a full switch
#: ``world_switch_ns`` 2,740 ns, a lazy one ``sched_call_ns`` 500 ns (an estimate, the scheduler
#: path alone), the flush IPI ``phys_ipi_ns`` 1,000 ns (an estimate).
XEN_HOST_PARAMS: Mapping[str, Any] = {"lazy_context_switch": True}

#: The PLE flags of a KVM host before Linux 3.18 (seed 000's 3.13, balance scheduling's
#: 2.6.3x; docs/scenarios.md, "An older KVM host"): a fixed window, directed-yield candidates
#: any preempted sibling (no 4.15 kernel-mode filter) and never a vCPU woken from halt (5.3).
PRE_3_18_KVM_PLE: Mapping[str, Any] = {"grow": 1, "boost_woken": False, "yield_to_kernel_mode": False}


#: The spread of a busy KVM host's exit handling times, as a coefficient of variation of each
#: hypervisor cost (``host.costs.hv_cost_cv``: a log-normal factor of mean 1, hv/jitter.rs).
#: Source: a ``perf kvm stat`` report on qemu-devel (Liang Li, "Re: About the performance of
#: hyper-v", 1 June 2021). perf prints each exit reason's mean with its relative standard error
#: (tools/perf/util/stat.c: sqrt(var / n) / mean), so one exit's CV is that error x sqrt(n):
#: APIC_WRITE 0.75, EXTERNAL_INTERRUPT 0.69, DR_ACCESS 0.44, VMCALL 0.41, EOI_INDUCED 0.18; the
#: median, 0.44. Every reproduction host that is a KVM host with a fixed PLE window takes it:
#: seed 000's Linux 3.13 (since session 40, rule H, calibration.toml's flexcore records) and
#: flex-parallel's balance+cap Linux 2.6.3x (session 40, rule I). Sessions 36-39 dithered both
#: by a uniform ±2 % instead (``hv_cost_jitter_pct``, the least that ended the phase locks of
#: constant costs, unsourced); docs/calibration.md, "Timing noise and phase locks". A sourced
#: input, not fitted.
KVM_EXIT_COST_CV = 0.44


def spread(host: Mapping[str, Any]) -> dict[str, Any]:
    """``host`` with its hypervisor costs spread as a busy KVM host's exits are
    (:data:`KVM_EXIT_COST_CV`)."""
    return {**host, "costs": {**host.get("costs", {}), "hv_cost_cv": KVM_EXIT_COST_CV}}


@dataclass(frozen=True)
class Quantity:
    """A number a reproduction reports. ``panel`` groups quantities drawn together."""

    key: str
    label: str
    unit: str = ""
    panel: str = ""


@dataclass(frozen=True)
class Claim:
    """A directional claim of the seed, checked on simulated quantities only."""

    text: str
    holds: Callable[[Mapping[str, float]], bool]


@dataclass
class Reproduction:
    name: str
    seed_file: str
    figure: str
    title: str
    runs: Callable[[bool], Sequence[Run]]
    measure: Callable[[Mapping[str, Any]], Mapping[str, float]]
    quantities: Sequence[Quantity]
    claims: Sequence[Claim] = ()
    #: What the model leaves out that matters for this experiment (shown in the report).
    notes: str = ""
    #: Keys of `quantities` whose model inputs were fitted to this very seed value (a
    #: baseline): reported, but marked as calibration rather than reproduction.
    fitted: Sequence[str] = ()


@dataclass
class QuantityResult:
    key: str
    label: str
    unit: str
    panel: str
    simulated: Optional[float]
    seed: Optional[float] = None
    tolerance: Optional[float] = None
    source: str = ""
    fitted: bool = False
    #: Jackknife standard error of ``simulated`` over the simulation seeds it averages
    #: (:func:`seed_spread`); None when it averages no seeds.
    seed_se: Optional[float] = None

    @property
    def within(self) -> Optional[bool]:
        if self.seed is None or self.simulated is None or self.tolerance is None:
            return None
        if not math.isfinite(self.simulated):
            return False
        return abs(self.simulated - self.seed) <= self.tolerance * abs(self.seed) + 1e-12

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["within"] = self.within
        return d


@dataclass
class ClaimResult:
    text: str
    holds: bool
    error: str = ""


@dataclass
class Outcome:
    """A reproduction's judged result."""

    name: str
    title: str
    seed_file: str
    figure: str
    quantities: list[QuantityResult]
    claims: list[ClaimResult]
    notes: str = ""
    #: Why a quantity (by key) or claim (by text) falls short, in full, and in one line.
    reasons: dict[str, str] = field(default_factory=dict)
    reason_summaries: dict[str, str] = field(default_factory=dict)

    def numeric(self) -> list[QuantityResult]:
        return [q for q in self.quantities if q.within is not None]

    def as_dict(self) -> dict:
        return {
            "name": self.name, "title": self.title, "seed_file": self.seed_file,
            "figure": self.figure, "notes": self.notes, "reasons": self.reasons,
            "reason_summaries": self.reason_summaries,
            "quantities": [q.as_dict() for q in self.quantities],
            "claims": [c.__dict__ for c in self.claims],
        }


def judge(repro: Reproduction, simulated: Mapping[str, float],
          seed_values: Mapping[str, Any], reasons: Mapping[str, str],
          seed_se: Mapping[str, float] | None = None) -> Outcome:
    """Put each simulated quantity beside the seed's value and check the claims. ``reasons``
    are the reproduction's ``expected.GAPS`` entries (a plain string is its own summary).

    ``simulated`` comes from ``repro.measure`` alone; ``seed_values`` maps quantity keys to
    :class:`~vmsched.reproduce.expected.Seed` entries."""
    qs = []
    for q in repro.quantities:
        v = simulated.get(q.key)
        s = seed_values.get(q.key)
        qs.append(QuantityResult(
            key=q.key, label=q.label, unit=q.unit, panel=q.panel,
            simulated=None if v is None else float(v),
            seed=None if s is None else float(s.value),
            tolerance=None if s is None else (TOLERANCE_ANALYTIC if s.analytic else TOLERANCE_MEASURED),
            source="" if s is None else s.source,
            fitted=q.key in repro.fitted,
            seed_se=(seed_se or {}).get(q.key),
        ))
    claims = []
    for c in repro.claims:
        try:
            claims.append(ClaimResult(c.text, bool(c.holds(simulated))))
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            claims.append(ClaimResult(c.text, False, f"{type(e).__name__}: {e}"))
    return Outcome(repro.name, repro.title, repro.seed_file, repro.figure, qs, claims,
                   notes=repro.notes, reasons={k: str(v) for k, v in reasons.items()},
                   reason_summaries={k: getattr(v, "summary", str(v)) for k, v in reasons.items()})


def trimmed_mean(values: Sequence[float], trim_fraction: float = 0.0) -> float:
    """Mean of ``values`` without their ``floor(trim_fraction * n)`` lowest and as many highest
    (a symmetric trimmed mean; seed 003 §5.3 averages its runs "except for some few abnormal
    points"). With nothing to drop it is the plain mean, summed in the given order. A NaN (a
    run that did not finish) makes the result NaN, so a claim over it fails as it should."""
    if not 0.0 <= trim_fraction < 0.5:
        raise ValueError(f"trim_fraction must be in [0, 0.5), got {trim_fraction}")
    xs = list(values)
    if not xs:
        raise ValueError("trimmed_mean of no values")
    if any(math.isnan(x) for x in xs):
        return float("nan")
    k = int(trim_fraction * len(xs))
    kept = sorted(xs)[k:len(xs) - k] if k else xs
    return sum(kept) / len(kept)


#: The simulation seed a jackknife pass leaves out of every mean over seeds (``seed_spread``).
_LEFT_OUT: contextvars.ContextVar[Optional[int]] = contextvars.ContextVar("left_out", default=None)


def mean_over_seeds(seeds: Sequence[int], trim_fraction: float = 0.0
                    ) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Decorator for a measure ``fn(results, label, *args)``: a label run once is measured as
    it is; a label without ``@seed`` is the mean of ``fn`` over the runs ``label@s``, s in
    ``seeds`` (the families that average simulation seeds label their runs so), trimmed by
    ``trim_fraction`` at each end (:func:`trimmed_mean`; 0 = the plain mean). Inside
    :func:`seed_spread`'s passes one seed is left out."""
    def wrap(fn: Callable[..., float]) -> Callable[..., float]:
        @functools.wraps(fn)
        def mean(r: Mapping[str, Any], label: str, *args: Any) -> float:
            if label in r:
                return fn(r, label, *args)
            return trimmed_mean([fn(r, f"{label}@{s}", *args) for s in kept(seeds)],
                                trim_fraction)
        return mean
    return wrap


def seed_of(label: str) -> Optional[int]:
    """The simulation seed of a run labelled ``...@seed``, or None."""
    m = re.search(r"@(\d+)$", label)
    return int(m.group(1)) if m else None


def kept(seeds: Sequence[int]) -> list[int]:
    """``seeds`` less the one a :func:`seed_spread` pass leaves out (only from more than two).
    Every mean over simulation seeds takes its seeds from here."""
    out = _LEFT_OUT.get()
    return [s for s in seeds if s != out] if len(seeds) > 2 else list(seeds)


def seeds_in(results: Mapping[str, Any], prefix: str = "") -> list[int]:
    """The simulation seeds of the runs labelled ``prefix...@seed`` in ``results``, as
    :func:`kept` leaves them."""
    return kept(sorted({s for k in results if k.startswith(prefix)
                        for s in [seed_of(k)] if s is not None}))


@contextlib.contextmanager
def leaving_out(seed: int):
    """Every :func:`mean_over_seeds` mean inside leaves simulation seed ``seed`` out."""
    token = _LEFT_OUT.set(seed)
    try:
        yield
    finally:
        _LEFT_OUT.reset(token)


def seed_spread(measure: Callable[[Mapping[str, Any]], Mapping[str, float]],
                results: Mapping[str, Any], full: Mapping[str, float]) -> dict[str, float]:
    """Jackknife standard errors of a reproduction's quantities over the n simulation seeds its
    runs are labelled with (``label@seed``; a reproduction's seeded runs share one set):
    ``measure`` is run again leaving out one seed at a time (x_i), and
    SE = sqrt((n - 1) / n * sum((x_i - mean)^2)) (the jackknife of Quenouille and Tukey; for a
    plain mean it is the usual standard error of the mean). Quantities that no omission moves
    (from runs without seeds, or the same in every seed) get none; nor do means over two seeds
    or fewer, which are not jackknifed."""
    seeds = sorted({s for label in results for s in [seed_of(label)] if s is not None})
    if len(seeds) < 3:
        return {}
    passes = []
    for s in seeds:
        with leaving_out(s):
            try:
                passes.append(dict(measure(results)))
            except (KeyError, ValueError, ZeroDivisionError, IndexError):
                return {}
    n, out = len(passes), {}
    for key, v in full.items():
        xs = [p.get(key) for p in passes]
        if (v is None or not math.isfinite(v) or any(x is None or not math.isfinite(x) for x in xs)
                or all(x == v for x in xs)):
            continue
        m = sum(xs) / n
        out[key] = math.sqrt((n - 1) / n * sum((x - m) ** 2 for x in xs))
    return out
