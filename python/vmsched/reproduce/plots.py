"""Figures of a reproduction: the seed's value beside the simulated one, per quantity.

One panel per quantity group (``Quantity.panel``, quantities sharing a unit); the seed's bar
carries its tolerance band, the simulated one twice its standard error over simulation seeds
(``QuantityResult.seed_se``) where it averages seeds. Written as PNG with matplotlib's Agg backend (no display).
"""

from __future__ import annotations

from pathlib import Path

from ..htmlreport import pyplot, save_png
from .core import Outcome

SEED_COLOUR = "#9e9e9e"
SIM_COLOUR = "#1f77b4"
MISS_COLOUR = "#d62728"


def plot_outcome(o: Outcome, path: Path) -> Path | None:
    plt = pyplot()
    panels: dict[str, list] = {}
    for q in o.quantities:
        if q.simulated is None and q.seed is None:
            continue
        panels.setdefault(q.panel or q.unit or "value", []).append(q)
    if not panels:
        return None
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(max(4.0, 3.2 * n + 0.5 * sum(len(v) for v in panels.values())), 3.6),
                             squeeze=False)
    for ax, (panel, qs) in zip(axes[0], panels.items()):
        xs = range(len(qs))
        w = 0.38
        seed_vals = [q.seed if q.seed is not None else 0.0 for q in qs]
        err = [q.seed * q.tolerance if q.seed is not None and q.tolerance else 0.0 for q in qs]
        ax.bar([x - w / 2 for x in xs], seed_vals, w, yerr=err, capsize=3, color=SEED_COLOUR,
               label="seed (± tolerance)")
        sim_vals = [q.simulated if q.simulated is not None else 0.0 for q in qs]
        colours = [MISS_COLOUR if q.within is False else SIM_COLOUR for q in qs]
        sim_err = [2 * q.seed_se if q.seed_se is not None else 0.0 for q in qs]
        ax.bar([x + w / 2 for x in xs], sim_vals, w, yerr=sim_err, capsize=3, color=colours,
               label="vmsched (± 2 SE over seeds)")
        for x, q in zip(xs, qs):
            if q.simulated is None:
                ax.annotate("not modelled", (x + w / 2, 0), rotation=90, ha="center", va="bottom",
                            fontsize=7)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([_wrap(q.label) for q in qs], fontsize=7, rotation=20, ha="right")
        unit = qs[0].unit
        ax.set_title(panel, fontsize=9)
        ax.set_ylabel(unit, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
    axes[0][0].legend(fontsize=7, loc="best")
    fig.suptitle(f"{o.name}: {o.title} ({o.figure})", fontsize=9)
    fig.tight_layout()
    return save_png(fig, path)


def _wrap(text: str, width: int = 22) -> str:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    lines.append(cur)
    return "\n".join(lines)
