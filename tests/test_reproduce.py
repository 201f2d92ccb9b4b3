"""`vmsched reproduce`: every reproduction's claims in --quick mode, the honesty rules (seed
values only in expected.py, fitted values only in calibration.toml and still meeting their
baselines), the report (and that it renders in headless Chromium), and the CLI's errors."""

from __future__ import annotations

import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import vmsched.reproduce as rp
from vmsched.reproduce import calibration, expected
from vmsched.reproduce.core import Claim, Quantity, Reproduction, judge, mean_over_seeds, seed_spread

PKG = Path(rp.__file__).resolve().parent


@pytest.fixture(scope="module")
def quick_all(tmp_path_factory):
    """`vmsched reproduce --all --quick` once for the module: (outcomes.json, out dir)."""
    out = tmp_path_factory.mktemp("reproduce")
    r = subprocess.run([sys.executable, "-m", "vmsched", "reproduce", "--all", "--quick",
                        "--quiet", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads((out / "outcomes.json").read_text()), out, r.stdout


def test_every_reproduction_of_the_issue_is_registered():
    names = set(rp.registry())
    assert {"vmkit-table2-3", "vmkit-table9", "vmkit-table10-11", "vmkit-polling"} <= names
    for r in rp.registry().values():
        assert r.quantities and r.claims, r.name
        assert re.fullmatch(r"\d{3}_[0-9a-f]{16}\.txt", r.seed_file), r.name


def test_every_claim_holds_in_quick_mode_or_is_a_documented_gap(quick_all):
    """Each seed direction must hold; the only exceptions are claims whose failure the report
    explains (expected.GAPS). A documented gap that now holds is stale and fails too, unless it
    is marked as seen in full mode only (expected.FullModeOnly)."""
    data, _, _ = quick_all
    for o in data["outcomes"]:
        gaps = expected.GAPS.get(o["name"], {})
        for c in o["claims"]:
            if c["holds"]:
                assert not (c["text"] in gaps and not isinstance(gaps[c["text"]], expected.FullModeOnly)), \
                    f"{o['name']}: stale gap, the claim holds: {c['text']}"
            else:
                assert c["text"] in gaps, f"{o['name']}: claim does not hold and no reason is given: {c['text']}"


def test_report_lists_every_quantity_with_seed_value_and_verdict(quick_all):
    data, out, stdout = quick_all
    md = (out / "report.md").read_text()
    for o in data["outcomes"]:
        assert f"## {o['name']}" in md
        assert (out / o["name"] / f"{o['name']}.png").stat().st_size > 1000
        assert list((out / o["name"] / "runs").glob("*.json"))
        for q in o["quantities"]:
            assert q["label"] in md
            if q["seed"] is not None:  # quick runs may skip quantities the seed has no number for
                assert q["simulated"] is not None or q["key"] in expected.GAPS.get(o["name"], {}), \
                    f"{o['name']}.{q['key']}: no simulated value and no reason"
    assert "Numeric quantities within tolerance" in stdout
    t = data["tally"]
    assert 0 < t["numeric"] and t["within"] <= t["numeric"]


def test_the_report_opens_with_each_reproductions_verdicts_at_a_glance(quick_all):
    """A reader asking "does it reproduce paper X?" finds one row per reproduction, before
    the list of misses, whose counts are that reproduction's own."""
    data, out, _ = quick_all
    md = (out / "report.md").read_text()
    glance = md.index("## At a glance")
    assert glance < md.index("## Out of tolerance or not holding")
    lines = md[glance:].split("\n\n")[1].splitlines()
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]] for line in lines[2:]}
    assert set(rows) == {o["name"] for o in data["outcomes"]}
    for o in data["outcomes"]:
        numeric = [q for q in o["quantities"] if q["seed"] is not None]
        within = sum(1 for q in numeric if q["within"])
        claims = o["claims"]
        expect = f"{within} of {len(numeric)}" if numeric else "—"
        assert rows[o["name"]][2].startswith(expect), (o["name"], rows[o["name"]])
        assert rows[o["name"]][3] == f"{sum(1 for c in claims if c['holds'])} of {len(claims)}"
    assert "At a glance" in (out / "report.html").read_text()


def test_every_gap_names_a_quantity_or_claim_of_its_reproduction():
    """A GAPS entry keyed by a misspelt quantity or an old claim text would never be shown."""
    registry = rp.registry()
    for name, gaps in expected.GAPS.items():
        r = registry[name]
        known = {q.key for q in r.quantities} | {c.text for c in r.claims}
        assert set(gaps) <= known, f"{name}: GAPS entries for nothing: {set(gaps) - known}"


def test_every_gap_has_a_one_line_summary():
    """The report's overview table shows each gap's summary; the full account goes under the
    reproduction's own section."""
    for name, gaps in expected.GAPS.items():
        for key, gap in gaps.items():
            assert isinstance(gap, expected.Gap), f"{name}: {key[:50]}: not a Gap"
            assert gap.summary and "\n" not in gap.summary and len(gap.summary) <= 300, (name, key[:50])
    with pytest.raises(ValueError, match="summary"):
        expected.Gap("", "a reason without a summary")


def test_report_shows_each_reason_in_one_line_above_and_in_full_under_its_reproduction():
    from vmsched.reproduce.core import ClaimResult, Outcome, QuantityResult
    from vmsched.reproduce.report import to_html, to_markdown

    q = QuantityResult(key="k", label="a quantity", unit="%", panel="", simulated=2.0, seed=1.0,
                       tolerance=0.25)
    o = Outcome("demo", "A demo", "seed.txt", "Fig. 1", [q], [ClaimResult("a claim", False)],
                reasons={"k": "FULL-K account", "a claim": "FULL-C account"},
                reason_summaries={"k": "SHORT-K", "a claim": "SHORT-C"})
    md = to_markdown([o], quick=False, wall_s=1.0)
    overview = md.split("## Out of tolerance or not holding")[1].split("\n## ")[0]
    assert "SHORT-K" in overview and "SHORT-C" in overview
    assert "FULL-K" not in overview and "FULL-C" not in overview
    section = md.split("## demo: A demo")[1]
    assert "FULL-K account" in section and "FULL-C account" in section
    page = to_html([o], False, 1.0, {})
    assert page.index("SHORT-K") < page.index("FULL-K account")


def test_reproduction_modules_never_read_seed_values():
    """Only the judging code reads expected.py: no family module imports it."""
    for fam in rp.FAMILIES:
        path = PKG / f"{fam}.py"
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mods = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            assert not any("expected" in m for m in mods), f"{path.name} imports {mods}"


def test_simulated_values_do_not_change_when_the_seed_values_do(monkeypatch):
    repros = rp.select(["vmkit-table2-3", "vmkit-table10-11"], False)
    before = rp.reproduce(repros, quick=True, jobs=1, progress=False)
    rng = random.Random(7)
    scrambled = {name: {k: expected.Seed(s.value * rng.uniform(0.1, 10), s.source, s.analytic)
                        for k, s in vals.items()} for name, vals in expected.SEED.items()}
    monkeypatch.setattr(expected, "SEED", scrambled)
    after = rp.reproduce(repros, quick=True, jobs=1, progress=False)
    for a, b in zip(before, after):
        assert [q.simulated for q in a.quantities] == [q.simulated for q in b.quantities]
        assert [q.seed for q in a.quantities] != [q.seed for q in b.quantities]


def test_calibration_entries_name_their_source_and_target():
    reg = rp.registry()
    for name, f in calibration.entries().items():
        assert re.search(r"\d{3}_[0-9a-f]{16}\.txt", f.fitted_to), f"{name}: fitted_to names no seed file"
        assert f.unit and f.baseline and f.method, name
        if f.target is not None:
            repro, key = f.target
            assert repro in reg, f"{name}: target reproduction {repro} unknown"
            assert key in {q.key for q in reg[repro].quantities}, f"{name}: target {key} unknown"
            assert key in reg[repro].fitted, f"{name}: {repro}.{key} is not marked fitted"
            assert key in expected.SEED.get(repro, {}), f"{name}: no seed value for {key}"


#: Reproductions cheap enough to run in full mode in the tests (vmkit-table2-3 a few seconds,
#: vmkit-polling 12-16 s since its polled build runs Kbuild's serial stages).
CHEAP = ("vmkit-table2-3", "vmkit-polling")


def test_fitted_values_still_meet_their_baselines():
    """Model changes move baselines; a fit that no longer meets its target must be redone."""
    outs = {o.name: o for o in rp.reproduce(rp.select(list(CHEAP), False), jobs=1, progress=False)}
    checked = 0
    for name, f in calibration.entries().items():
        if f.target is None or f.target[0] not in outs:
            continue
        q = next(q for q in outs[f.target[0]].quantities if q.key == f.target[1])
        assert abs(q.simulated - q.seed) <= 0.02 * abs(q.seed), \
            f"{name}: {f.target[1]} is {q.simulated:.4g}, fitted to {q.seed:.4g}: refit"
        checked += 1
    assert checked >= 3


def test_judge_applies_the_relative_and_analytic_tolerances():
    r = Reproduction("x", "s", "f", "t", runs=lambda q: [], measure=lambda r: {},
                     quantities=[Quantity("a", "a"), Quantity("b", "b"), Quantity("c", "c")],
                     claims=[Claim("a above b", lambda q: q["a"] > q["b"]),
                             Claim("needs d", lambda q: q["d"] > 0)])
    seeds = {"a": expected.Seed(100, "s"), "b": expected.Seed(1.39, "s", analytic=True)}
    o = judge(r, {"a": 124.9, "b": 1.47, "c": 3}, seeds, {})
    a, b, c = o.quantities
    assert a.within is True and a.tolerance == 0.25
    assert b.within is False and b.tolerance == 0.05  # 1.47 is 5.8 % off 1.39
    assert c.within is None
    assert o.claims[0].holds and not o.claims[1].holds and "KeyError" in o.claims[1].error


def test_seed_spread_is_the_jackknife_standard_error_over_the_seeds_a_quantity_averages():
    xs = {1: 10.0, 2: 12.0, 3: 11.0, 4: 15.0}
    r = {f"a@{s}": {"x": x} for s, x in xs.items()}
    r |= {f"same@{s}": {"x": 5.0} for s in xs} | {"once": {"x": 7.0}}
    r |= {f"two@{s}": {"x": x} for s, x in xs.items() if s <= 2}
    over4, over2 = mean_over_seeds((1, 2, 3, 4)), mean_over_seeds((1, 2))
    x4 = over4(lambda r, label: r[label]["x"])
    x2 = over2(lambda r, label: r[label]["x"])

    def measure(r):
        return {"mean": x4(r, "a"), "ratio": x4(r, "a") / x4(r, "same"), "same": x4(r, "same"),
                "once": x4(r, "once"), "two": x2(r, "two")}

    full = measure(r)
    se = seed_spread(measure, r, full)
    v = list(xs.values())
    m = sum(v) / 4
    sem = (sum((x - m) ** 2 for x in v) / 3 / 4) ** 0.5
    assert se["mean"] == pytest.approx(sem) and se["ratio"] == pytest.approx(sem / 5.0)
    assert "same" not in se and "once" not in se and "two" not in se
    assert measure(r) == full, "the passes leave no seed out afterwards"


def test_a_run_labelled_with_a_seed_simulates_that_seed():
    """``label@N`` means simulation seed N to the report's 'over seeds' column
    (core.seed_of); no reproduction may use it for anything else (a phase, a size)."""
    from vmsched.reproduce.core import seed_of
    for repro in rp.registry().values():
        for quick in (True, False):
            for run in repro.runs(quick):
                s = seed_of(run.label)
                if s is not None:
                    simulated = run.seed if run.seed is not None else run.scenario.get("seed")
                    assert simulated == s, f"{repro.name}: {run.label} simulates seed {simulated}"


def test_cli_errors_name_the_problem(cli):
    r = cli("reproduce")
    assert r.code == 2 and "--all" in r.err
    r = cli("reproduce", "no-such-thing")
    assert r.code == 2 and "unknown reproduction 'no-such-thing'" in r.err and "vmkit-table9" in r.err
    r = cli("reproduce", "--list")
    assert r.code == 0 and "vmkit-table10-11" in r.out


def test_set_reaches_only_the_runs_with_the_field_and_marks_the_report_exploratory(cli, tmp_path):
    r = cli("reproduce", "flexcore-fig7", "--quick", "-q", "-j", "2", "--out", "o",
            "--set", "controller.params.ratio=0.9")
    assert r.code == 0, r
    scenarios = [json.loads(f.read_text())["scenario"]
                 for f in (tmp_path / "o" / "flexcore-fig7" / "runs").glob("*.json")]
    with_controller = [s for s in scenarios if s.get("controller")]
    assert with_controller and len(with_controller) < len(scenarios), "baselines stay as they are"
    assert all(s["controller"]["params"]["ratio"] == 0.9 for s in with_controller)
    reached = f"controller.params.ratio=0.9: {len(with_controller)} of {len(scenarios)} runs"
    assert "EXPLORATORY" in r.out and reached in r.out, r
    assert "EXPLORATORY" in (tmp_path / "o" / "report.md").read_text()
    assert json.loads((tmp_path / "o" / "outcomes.json").read_text())["overrides"] == [reached]


def test_set_that_reaches_no_run_or_asks_for_docs_is_refused_before_any_run(cli, tmp_path):
    r = cli("reproduce", "flexcore-fig1", "--quick", "-q", "--out", "o",
            "--set", "controller.params.ratio=0.9")
    assert r.code == 2 and "no run of flexcore-fig1 has the field controller.params" in r.err, r
    r = cli("reproduce", "flexcore-fig7", "--quick", "-q", "--out", "o",
            "--set", "hypervisor.params.csrc=true")
    assert r.code == 2 and "hypervisor.params.csrc" in r.err, r
    r = cli("reproduce", "flexcore-fig7", "--quick", "-q", "--out", "o",
            "--set", "controller.params.ratio=high")
    assert r.code == 2 and "controller.params.ratio: expected a number" in r.err, r
    r = cli("reproduce", "flexcore-fig7", "--quick", "-q", "--out", "o", "--docs", "d.md",
            "--set", "controller.params.ratio=0.9")
    assert r.code == 2 and "cannot be combined with --set" in r.err, r
    assert "Traceback" not in r.err
    assert not (tmp_path / "o").exists() and not (tmp_path / "d.md").exists()


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def test_html_report_renders_every_plot_in_headless_chromium(quick_all, tmp_path):
    browser = _chromium()
    if browser is None:
        if os.environ.get("VMSCHED_REQUIRE_CHROMIUM"):
            pytest.fail("chromium is required (VMSCHED_REQUIRE_CHROMIUM is set) but not installed")
        pytest.skip("chromium not installed (Debian: apt-get install chromium)")
    data, out, _ = quick_all
    page = out / "report.html"
    r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
                        "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'data-plots-loaded="(\d+)/(\d+)"', r.stdout)
    assert m, f"the page's load script did not run: {r.stdout[:500]}"
    loaded, total = int(m.group(1)), int(m.group(2))
    assert total == len(data["outcomes"]) and loaded == total, f"{loaded}/{total} plots decoded"


def test_csrc_copy_of_the_server_role_presets_matches_the_core():
    """csrc.py restates the `server` role presets to scale them; a stale copy would silently
    change the fitted workload, so each role must run identically with the copy spelled out."""
    from vmsched import run
    from vmsched.reproduce import csrc

    for role in csrc.PRESET_RATE_PER_S:
        def sc(extra):
            return {"name": "p", "seed": 3, "duration_ms": 60, "host": {"sockets": 1, "cores_per_socket": 2},
                    "vms": [{"vcpus": 2, "workloads": [{"kind": "server", "role": role, **extra}]}]}
        spelled = {"rate_per_s": csrc.PRESET_RATE_PER_S[role],
                   "cpu_us": {"dist": "exp", "mean_us": csrc.PRESET_CPU_US[role]},
                   "working_set_kib": csrc.PRESET_WORKING_SET_KIB[role]}
        a, b = run(sc({})), run(sc(spelled))
        assert a.summary["vms"] == b.summary["vms"], role


def test_table9_rows_place_each_vcpu_on_the_node_the_seed_names():
    """Seed 004 Table 9 names each row by the NUMA nodes of the VM's first and second vCPU, with
    core 4 (node 1) the fixed CPU; node n holds pCPUs 4n..4n+3 on the seed's 4 x 4-core host.
    Every row's runs must pin the vCPUs there, and every row must report all three benchmarks."""
    from vmsched.reproduce import vmkit

    nodes = {"same": (1, 1), "cross": (1, 2), "01": (0, 1), "10": (1, 0), "13": (1, 3)}
    assert set(vmkit.PLACEMENTS) == set(nodes)
    runs = {run.label: run for run in vmkit.TABLE9.runs(False)}
    for row, want in nodes.items():
        pins = vmkit.PLACEMENTS[row]
        assert tuple(p // 4 for p in pins) == want, row
        assert 4 in pins, f"row {row} keeps the seed's fixed core 4"
        for bench in ("forkbench", "kbuild", "hackbench-aff"):
            sc = runs[f"{bench}-{row}"].scenario
            assert sc["vms"][0]["pin"] == pins and sc["host"]["cores_per_socket"] == 4
    keys = {q.key for q in vmkit.TABLE9.quantities}
    assert keys == set(expected.SEED["vmkit-table9"]), "every row's three numbers are quantities"


def test_a_reports_runs_folder_holds_its_own_runs_only(cli, tmp_path):
    runs = tmp_path / "o" / "vmkit-table2-3" / "runs"
    runs.mkdir(parents=True)
    (runs / "gone-warmup@1.json").write_text("{}")
    (tmp_path / "o" / "vmkit-table2-3" / "notes.txt").write_text("mine")
    r = cli("reproduce", "vmkit-table2-3", "--quick", "-q", "-j", "2", "--out", "o")
    assert r.code == 0, r
    names = {f.name for f in runs.glob("*.json")}
    assert "gone-warmup@1.json" not in names
    assert names == {f"{x.label}.json" for x in rp.registry()["vmkit-table2-3"].runs(True)}
    assert (tmp_path / "o" / "vmkit-table2-3" / "notes.txt").read_text() == "mine"


def test_flexcore_runs_on_the_seeds_linux_313_kvm():
    """Seed 000's host is KVM on Linux 3.13.3 (§4.1): a fixed PLE window of 4096 cycles (grow
    and shrink came with 3.18), directed-yield candidates any preempted sibling whether it was
    preempted in guest kernel or user mode (the kernel-mode filter came with 4.15) and never a
    vCPU woken from halt (5.3), no halt polling (4.0); and, with that fixed window, hypervisor
    costs that vary (hv/jitter.rs: constant costs phase-lock its periodic PLE exits): in the
    reproductions and the library's FlexCore scenario the sourced spread of a busy KVM host's
    exits (core.KVM_EXIT_COST_CV, since session 40). Every run of the four reproductions, and
    the library's FlexCore scenario, must keep that host, as the scenario parser reads it."""
    import vmsched
    from vmsched.reproduce import core, flexcore

    def host_313(sc: dict) -> dict:
        parsed = vmsched.Scenario.from_dict(sc).to_dict()
        hv = parsed["hypervisor"]
        assert hv["scheduler"] == "cfs", sc["name"]
        ple = hv["ple"]
        assert (ple["window_cycles"], ple["grow"]) == (4096, 1), sc["name"]
        assert ple["yield_to_kernel_mode"] is False and ple["boost_woken"] is False, sc["name"]
        assert hv["halt_poll"]["max_ns"] == 0, sc["name"]
        return parsed["host"]["costs"]

    runs = [run for rep in flexcore.REPRODUCTIONS for run in rep.runs(True)]
    assert {run.label.split("-", 1)[1].split("@")[0] for run in runs} >= {"1vm", "2vm", "flexcore"}
    library = vmsched.Scenario.from_file(str(Path(vmsched.scenarios_dir()) / "flexcore-sync-heavy-2vm.toml"))
    for sc in [run.scenario for run in runs] + [library.to_dict()]:
        costs = host_313(sc)
        assert (costs["hv_cost_cv"], costs["hv_cost_jitter_pct"]) == (core.KVM_EXIT_COST_CV, 0.0), sc["name"]


def test_flexcore_guests_wake_remote_threads_through_linux_313s_wake_list():
    """Seed 000's guests are Linux 3.13.3 under QEMU 1.7.0 (§4.1), which presented no virtual
    L3 (QEMU 2.8 commit 14c985cffa): no two vCPUs share a cache in the guest's view, so remote
    wake-ups go through the wake list (guest.ttwu_queue). Every VM of every run of the four
    reproductions has it, as the scenario parser reads it."""
    import vmsched
    from vmsched.reproduce import flexcore

    for run in (run for rep in flexcore.REPRODUCTIONS for run in rep.runs(True)):
        parsed = vmsched.Scenario.from_dict(run.scenario).to_dict()
        assert all(vm["guest"]["ttwu_queue"] is True for vm in parsed["vms"]), run.label


def test_vmkit_guests_tick_eight_times_too_slowly_and_native_rows_keep_the_defaults():
    """Seed 004 §6.3 "Timer Issues": VMkit delivers the guest's 10 ms tick every 80 ms, so the
    guest's tick-driven slice and periodic balance stretch eightfold in every VMkit run
    (vmkit.SLOW_TIMER_FACTOR); the native rows run on the hardware's timer."""
    import vmsched
    from vmsched.reproduce import vmkit
    from vmsched.reproduce.core import guest_default_options

    d = guest_default_options()
    kinds = set()
    for rep in vmkit.REPRODUCTIONS:
        for run in rep.runs(True):
            parsed = vmsched.Scenario.from_dict(run.scenario).to_dict()
            native = parsed["host"]["costs"]["world_switch_ns"] == 0
            k = 1 if native else vmkit.SLOW_TIMER_FACTOR
            guest = parsed["vms"][0]["guest"]
            assert guest["slice_us"] == k * d["slice_us"], run.label
            assert guest["balance_interval_us"] == k * d["balance_interval_us"], run.label
            kinds.add(native)
    assert vmkit.SLOW_TIMER_FACTOR == 8 and kinds == {True, False}


def test_vmkit_guests_place_wakeups_as_linux_2632_by_their_topology():
    """Seed 004's guest is Linux 2.6.32 (§7.1) everywhere (rule U, session 44): under VMkit each
    vCPU is an emulated K7 sharing no cache (no search for an idle vCPU, "affine"); natively the
    two CPUs are cores of one Opteron sharing an L3 ("affine_idle_sibling")."""
    import vmsched
    from vmsched.reproduce import vmkit

    seen = set()
    for rep in vmkit.REPRODUCTIONS:
        for run in rep.runs(True):
            parsed = vmsched.Scenario.from_dict(run.scenario).to_dict()
            native = parsed["host"]["costs"]["world_switch_ns"] == 0
            want = "affine_idle_sibling" if native else "affine"
            assert parsed["vms"][0]["guest"]["wake_placement"] == want, run.label
            seen.add(want)
    assert seen == {"affine", "affine_idle_sibling"}
