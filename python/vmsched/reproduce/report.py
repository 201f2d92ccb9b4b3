"""The reproduction report: a printed table, ``report.md`` and a self-contained ``report.html``
(page layout in :mod:`vmsched.htmlreport`)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Sequence

from ..htmlreport import HTML_PAGE, atomic_write as _atomic, html_table as _html_table, img_tag, md_table
from .core import Outcome, QuantityResult


def fmt(v: float | None) -> str:
    if v is None:
        return "—"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    return f"{v:.3g}"


def verdict(q: QuantityResult) -> str:
    w = q.within
    if w is None:
        return "no seed value" if q.seed is None else "not modelled"
    return ("holds" if w else "out") + (" (fitted)" if q.fitted else "")


def tolerance(q: QuantityResult) -> str:
    return "—" if q.tolerance is None else f"±{q.tolerance * 100:.0f} %"


def spread(q: QuantityResult) -> str:
    """The simulated value's standard error over simulation seeds, to two significant digits."""
    se = q.seed_se
    if se is None:
        return "—"
    return f"±{float(f'{se:.2g}'):g}" if se < 100 else "±" + fmt(se)


def rows(o: Outcome) -> list[list[str]]:
    return [[q.label + (f" [{q.unit}]" if q.unit else ""), fmt(q.seed), fmt(q.simulated),
             spread(q), tolerance(q), verdict(q)] for q in o.quantities]


HEADERS = ["quantity", "seed", "vmsched", "over seeds", "tolerance", "verdict"]

#: What the "over seeds" column is (the Markdown and HTML reports say it once).
SPREAD_NOTE = ("'over seeds' is the jackknife standard error of the simulated value over the "
               "simulation seeds it averages (leave one seed out; — when it averages none or "
               "the same value in every seed).")


def tally(outcomes: Sequence[Outcome]) -> dict:
    numeric = [q for o in outcomes for q in o.quantities if q.seed is not None]
    within = [q for q in numeric if q.within]
    fitted = [q for q in numeric if q.fitted]
    claims = [c for o in outcomes for c in o.claims]
    return {
        "numeric": len(numeric), "within": len(within), "fitted": len(fitted),
        "within_not_fitted": len([q for q in within if not q.fitted]),
        "not_fitted": len(numeric) - len(fitted),
        "claims": len(claims), "claims_hold": len([c for c in claims if c.holds]),
    }


def summary_lines(outcomes: Sequence[Outcome], quick: bool, wall_s: float,
                  overrides: Sequence[str] = ()) -> list[str]:
    t = tally(outcomes)
    pct = 100.0 * t["within"] / t["numeric"] if t["numeric"] else 0.0
    exploratory = [
        "EXPLORATORY, not the reference setup: run with --set "
        + "; ".join(overrides) + ". The reasons given for misses describe the reference runs "
        "(docs/reproductions.md)."] if overrides else []
    return exploratory + [
        f"Mode: {'--quick (shortened runs; numbers are not comparable with the seeds)' if quick else 'full'}; "
        f"{len(outcomes)} reproductions; wall time {wall_s:.0f} s.",
        f"Numeric quantities within tolerance: {t['within']} of {t['numeric']} ({pct:.0f} %); "
        f"of them fitted to baselines: {t['fitted']}; not fitted, within: "
        f"{t['within_not_fitted']} of {t['not_fitted']}.",
        f"Directional claims holding: {t['claims_hold']} of {t['claims']}.",
    ]


AT_A_GLANCE = ["reproduction", "seed", "quantities within", "claims holding"]


def at_a_glance(outcomes: Sequence[Outcome]) -> list[list[str]]:
    """One row per reproduction: its seed and figure, its numeric quantities within tolerance
    (of those with a seed value; fitted ones counted apart) and its claims holding."""
    out = []
    for o in outcomes:
        t = tally([o])
        within = (f"{t['within']} of {t['numeric']}" + (f" ({t['fitted']} fitted)" if t["fitted"] else "")
                  if t["numeric"] else "— (the seed gives no number)")
        out.append([o.name, f"{o.seed_file}, {o.figure}", within, f"{t['claims_hold']} of {t['claims']}"])
    return out


NO_ANALYSIS = "no analysis yet"


def shortfalls(o: Outcome) -> list[tuple[str, str, str]]:
    """The reproduction's quantities out of tolerance and claims not holding: (what, why in
    one line, why in full)."""
    out = []
    for q in o.quantities:
        if q.seed is not None and not q.within:
            out.append((f"{q.label}: seed {fmt(q.seed)}, vmsched {fmt(q.simulated)}",
                        o.reason_summaries.get(q.key, NO_ANALYSIS), o.reasons.get(q.key, NO_ANALYSIS)))
    for c in o.claims:
        if not c.holds:
            if c.error:
                out.append((f"claim: {c.text}", c.error, c.error))
            else:
                out.append((f"claim: {c.text}", o.reason_summaries.get(c.text, NO_ANALYSIS),
                            o.reasons.get(c.text, NO_ANALYSIS)))
    return out


def failures(outcomes: Sequence[Outcome]) -> list[tuple[str, str, str]]:
    """Every reproduction's shortfalls for the overview table: (reproduction, what, why in
    one line)."""
    return [(o.name, what, short) for o in outcomes for what, short, _ in shortfalls(o)]


def to_markdown(outcomes: Sequence[Outcome], quick: bool, wall_s: float,
                plots: dict[str, str] | None = None, overrides: Sequence[str] = ()) -> str:
    parts = ["# vmsched reproductions", "",
             "Generated by `vmsched reproduce`; do not edit by hand. Seed values come from "
             "`python/vmsched/reproduce/expected.py`, fitted model inputs from "
             "`python/vmsched/reproduce/calibration.toml` (see docs/calibration.md). "
             + SPREAD_NOTE, ""]
    parts += [f"- {s}" for s in summary_lines(outcomes, quick, wall_s, overrides)] + [""]
    parts += ["## At a glance", "", md_table(AT_A_GLANCE, at_a_glance(outcomes)), ""]
    fails = failures(outcomes)
    if fails:
        parts += ["## Out of tolerance or not holding", "",
                  "Each reason in one line; the full account (numbers, the runs they come from, "
                  "what was tried) is under the reproduction's own section below.", "",
                  md_table(["reproduction", "what", "why"], fails), ""]
    for o in outcomes:
        parts += [f"## {o.name}: {o.title}", "", f"Seed `{o.seed_file}`, {o.figure}.", ""]
        parts += [md_table(HEADERS, rows(o)), ""]
        if o.claims:
            parts += ["Claims:", ""]
            parts += [f"- {'holds' if c.holds else 'DOES NOT HOLD'}: {c.text}"
                      + (f" ({c.error})" if c.error else "") for c in o.claims] + [""]
        if o.notes:
            parts += [o.notes, ""]
        short = shortfalls(o)
        if short:
            parts += ["Why it falls short:", ""]
            parts += [f"- **{what}**: {full}" for what, _, full in short] + [""]
        if plots and o.name in plots:
            parts += [f"![{o.name}]({plots[o.name]})", ""]
    return "\n".join(parts).rstrip() + "\n"


def to_html(outcomes: Sequence[Outcome], quick: bool, wall_s: float,
            images: dict[str, bytes], overrides: Sequence[str] = ()) -> str:
    e = html.escape
    body = ["<h1>vmsched reproductions</h1>", "<ul>"]
    body += [f"<li>{e(s)}</li>" for s in summary_lines(outcomes, quick, wall_s, overrides)]
    body += ["</ul>", f"<p>{e(SPREAD_NOTE)}</p>",
             "<h2>At a glance</h2>", _html_table(AT_A_GLANCE, at_a_glance(outcomes))]
    fails = failures(outcomes)
    if fails:
        body += ["<h2>Out of tolerance or not holding</h2>",
                 "<p>Each reason in one line; the full account is under the reproduction's own "
                 "section below.</p>",
                 _html_table(["reproduction", "what", "why"], fails)]
    for o in outcomes:
        body += [f'<h2 id="{e(o.name)}">{e(o.name)}: {e(o.title)}</h2>',
                 f"<p>Seed <code>{e(o.seed_file)}</code>, {e(o.figure)}.</p>",
                 _html_table(HEADERS, rows(o), verdict_col=5)]
        if o.claims:
            body.append("<ul>" + "".join(
                f'<li class="{"ok" if c.holds else "bad"}">{"holds" if c.holds else "DOES NOT HOLD"}: {e(c.text)}</li>'
                for c in o.claims) + "</ul>")
        if o.notes:
            body.append(f"<p>{e(o.notes)}</p>")
        short = shortfalls(o)
        if short:
            body.append("<p>Why it falls short:</p><ul>" + "".join(
                f"<li><b>{e(what)}</b>: {e(full)}</li>" for what, _, full in short) + "</ul>")
        if o.name in images:
            body.append(img_tag(f"{o.name} plot", images[o.name]))
    return HTML_PAGE.replace("%TITLE%", "vmsched reproductions").replace("%BODY%", "\n".join(body))


def write_report(outcomes: Sequence[Outcome], out: Path, quick: bool, wall_s: float,
                 overrides: Sequence[str] = ()) -> Path:
    from .plots import plot_outcome

    out.mkdir(parents=True, exist_ok=True)
    images, rel = {}, {}
    for o in outcomes:
        folder = out / o.name
        folder.mkdir(parents=True, exist_ok=True)
        _atomic(folder / "outcome.json", json.dumps(o.as_dict(), indent=2, sort_keys=True) + "\n")
        p = plot_outcome(o, folder / f"{o.name}.png")
        if p is not None:
            images[o.name] = p.read_bytes()
            rel[o.name] = f"{o.name}/{p.name}"
    _atomic(out / "report.md", to_markdown(outcomes, quick, wall_s, rel, overrides))
    _atomic(out / "report.html", to_html(outcomes, quick, wall_s, images, overrides))
    _atomic(out / "outcomes.json", json.dumps({"quick": quick, "tally": tally(outcomes),
                                               "overrides": list(overrides),
                                               "outcomes": [o.as_dict() for o in outcomes]},
                                              indent=2, sort_keys=True) + "\n")
    return out / "report.html"
