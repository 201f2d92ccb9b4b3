"""The Python API: scenarios, runs, results tables and files, argument checks, determinism."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import vmsched
from conftest import BASE_TOML, SCENARIOS, tiny_dict


# -- scenarios ------------------------------------------------------------------------------

def test_scenario_roundtrip_fills_defaults(tiny_toml):
    sc = vmsched.Scenario.from_file(tiny_toml)
    d = sc.to_dict()
    assert d["name"] == "tiny" and d["host"]["cores_per_socket"] == 2
    assert d["vms"][0]["weight"] == 256  # default filled in
    assert "costs" in d["host"]
    # the normalised form is a fixed point
    assert vmsched.Scenario.from_dict(d) == sc
    assert vmsched.Scenario.from_toml(BASE_TOML) == sc
    assert sc.n_pcpus == 2 and sc.scheduler == "credit"
    # to_dict returns a copy
    d["name"] = "changed"
    assert sc.name == "tiny"


def test_scenario_built_in_python():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    assert sc.name == "tiny-parallel"
    assert sc.replace(seed=9).seed == 9
    with pytest.raises(vmsched.ScenarioError):
        sc.replace(vms=[])


def test_scenario_load_accepts_types(tiny_toml):
    assert vmsched.Scenario.load(str(tiny_toml)) == vmsched.Scenario.load(tiny_toml)
    with pytest.raises(TypeError):
        vmsched.Scenario.load(42)
    with pytest.raises(TypeError):
        vmsched.Scenario.from_dict([1, 2])
    with pytest.raises(TypeError):
        vmsched.Scenario.from_toml(b"bytes")


def test_scenario_rejects_non_json_values():
    d = tiny_dict()
    d["description"] = object()
    with pytest.raises(vmsched.ScenarioError):
        vmsched.Scenario.from_dict(d)
    d = tiny_dict(duration_ms=float("nan"))
    with pytest.raises(vmsched.ScenarioError):
        vmsched.Scenario.from_dict(d)


def test_library_scenarios_validate():
    files = vmsched.example_scenarios()
    names = {p.stem for p in files}
    assert {"sync-heavy-1vm", "sync-heavy-2vm", "fairness-1234", "consolidation-small"} <= names
    # the package's scenario library is the repository's scenarios/ folder
    assert {p.name for p in SCENARIOS.glob("*.toml")} == {p.name for p in files}
    for p in files:
        vmsched.Scenario.from_file(p)


def test_bench_case_3b_matches_scenario_file():
    from vmsched import bench

    a = vmsched.Scenario.from_dict(bench.sync_heavy(2)).to_dict()
    b = vmsched.Scenario.from_file(SCENARIOS / "sync-heavy-2vm.toml").to_dict()
    for d in (a, b):
        d.pop("description")
    assert a == b


def test_catalog():
    assert {"credit", "cfs", "rr"} <= set(vmsched.scheduler_names())
    assert {"hog", "parallel", "kbuild", "hackbench"} <= set(vmsched.workload_names())


# -- argument validation ------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,exc,needle", [
    ({"scheduler": 3}, TypeError, "scheduler"),
    ({"scheduler": "nope"}, vmsched.ScenarioError, "nope"),
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": 2**64}, ValueError, "seed"),
    ({"seed": 1.5}, TypeError, "seed"),
    ({"seed": "7"}, TypeError, "seed"),
    ({"seed": True}, TypeError, "seed"),
    ({"check": "yes"}, TypeError, "check"),
    ({"progress": 1}, TypeError, "progress"),
    ({"chunks": 0}, ValueError, "chunks"),
])
def test_run_argument_errors(kwargs, exc, needle):
    with pytest.raises(exc) as ei:
        vmsched.run(tiny_dict(), **kwargs)
    assert needle in str(ei.value)


def test_run_rejects_bad_scenario_argument():
    with pytest.raises(TypeError):
        vmsched.run(12)
    with pytest.raises(FileNotFoundError):
        vmsched.run("no-such-file.toml")


def test_simulation_class_errors():
    with pytest.raises(vmsched.ScenarioError):
        vmsched.Simulation("{not json")
    with pytest.raises(vmsched.ScenarioError) as ei:
        vmsched.Simulation(vmsched.Scenario.from_dict(tiny_dict()).to_json(), scheduler="nope")
    assert ei.value.path == "hypervisor.scheduler"


def test_simulation_takes_a_scenario_dict_or_path_and_names_bad_arguments():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    a = vmsched.Simulation(sc, seed=2)
    b = vmsched.Simulation(tiny_dict(), seed=2)
    c = vmsched.Simulation(sc.to_json(), None, 2, False)
    for s in (a, b, c):
        s.run_until(10**15)
    assert a.results_json() == b.results_json() == c.results_json()
    with pytest.raises(ValueError, match="t_ns must be ≥ 0"):
        a.run_until(-5)
    with pytest.raises(TypeError, match="t_ns must be a whole number"):
        a.run_until(2.5)
    with pytest.raises(ValueError, match="seed must be"):
        vmsched.Simulation(sc, seed=-1)
    with pytest.raises(TypeError, match="scheduler must be a string"):
        vmsched.Simulation(sc, scheduler=3)
    with pytest.raises(vmsched.ScenarioError, match="JSON syntax error") as ei:
        vmsched.Simulation("{not json")
    assert ei.value.path == ""


# -- runs and results ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_results():
    return vmsched.run(vmsched.Scenario.from_dict(tiny_dict()), check=True)


def test_results_structure(tiny_results):
    res = tiny_results
    s = res.summary
    assert s["schema_version"] == 1
    for key in ("scenario", "scheduler", "seed", "sim_time_ns", "events", "vms", "vcpus", "pcpus"):
        assert key in s, key
    assert res.scheduler == "credit" and res.seed == 1
    assert res.sim_time_ns == 50_000_000
    assert isinstance(res.vms, pd.DataFrame) and len(res.vms) == 2
    assert len(res.vcpus) == 3 and len(res.pcpus) == 4
    for col in ("vm", "name", "vcpus", "weight", "finished", "completion_ns", "cpu_ns", "share",
                "ideal_share", "relative_lag", "ple_exits", "guest_ns_useful",
                "guest_ns_lock_spin", "guest_ns_ipi_wait", "guest_ns_steal", "exits_ple",
                "lock_wait_p99_ns", "vipi_latency_count", "guest_cpu_ns", "lock_spin_pct",
                "ipi_wait_pct", "completion_ms"):
        assert col in res.vms.columns, col
    for col in ("vm", "vcpu", "run_ns", "steal_ns", "halted_ns", "migrations", "dispatches",
                "guest_switches", "address_space_loads"):
        assert col in res.vcpus.columns, col
    for col in ("pcpu", "socket", "node", "idle_ns", "hv_ns", "guest_ns", "sched_calls",
                "context_switches", "context_switches_per_s", "migrations_in"):
        assert col in res.pcpus.columns, col
    # the tables are copies
    v = res.vms
    v.loc[0, "name"] = "x"
    assert res.vms.loc[0, "name"] == "par"


def test_results_accounting_is_consistent(tiny_results):
    res = tiny_results
    T = res.sim_time_ns
    for p in res.pcpus.to_dict("records"):
        assert p["idle_ns"] + p["hv_ns"] + p["guest_ns"] == T, p
    vms = res.vms
    assert (vms["cpu_ns"] >= 0).all()
    assert math.isclose(vms["share"].sum(), vms["cpu_ns"].sum() / (4 * T), rel_tol=1e-9)
    on = [c for c in vms.columns if c.startswith("guest_ns_")
          and c not in ("guest_ns_halted", "guest_ns_steal")]
    assert (vms[on].sum(axis=1) == vms["cpu_ns"]).all()


def test_to_dir_writes_all_files(tiny_results, tmp_path):
    out = tiny_results.to_dir(tmp_path / "a" / "b")
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["summary.json", "vms.csv", "vcpus.csv", "pcpus.csv",
                            "vms.parquet", "vcpus.parquet", "pcpus.parquet"])
    assert (out / "summary.json").read_text() == tiny_results.json.rstrip("\n") + "\n"
    pq = pd.read_parquet(out / "vms.parquet")
    csv = pd.read_csv(out / "vms.csv")
    assert list(pq.columns) == list(tiny_results.vms.columns) == list(csv.columns)
    assert len(pd.read_parquet(out / "pcpus.parquet")) == 4
    # writing again replaces the files; nothing temporary is left behind
    tiny_results.to_dir(out)
    assert sorted(p.name for p in out.iterdir()) == names
    assert [p.name for p in out.parent.iterdir()] == ["b"]
    back = vmsched.Results.from_dir(out)
    assert back.summary == tiny_results.summary


def test_to_dir_csv_only(tiny_results, tmp_path):
    out = tiny_results.to_dir(tmp_path / "c", parquet=False)
    assert not list(out.glob("*.parquet")) and (out / "vms.csv").is_file()


def test_to_dir_refuses_a_file(tiny_results, tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(OSError):
        tiny_results.to_dir(f)
    assert f.read_text() == "x"


def test_determinism_byte_identical(tmp_path):
    sc = vmsched.Scenario.from_dict(tiny_dict())
    a = vmsched.run(sc, seed=5, check=True)
    b = vmsched.run(sc, seed=5, check=True)
    assert a.json == b.json
    a.to_dir(tmp_path / "a")
    b.to_dir(tmp_path / "b")
    for f in ("summary.json", "vms.csv", "vcpus.csv", "pcpus.csv"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_seed_override_is_recorded():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    r = vmsched.run(sc, seed=11, check=True)
    assert r.seed == 11 and r.summary["scenario"]["seed"] == 1
    assert vmsched.run(sc, check=True).seed == 1


def test_scheduler_override_is_recorded():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    for s in ("credit", "cfs", "rr"):
        r = vmsched.run(sc, scheduler=s, check=True)
        assert r.scheduler == s
        assert r.summary["scenario"]["hypervisor"]["scheduler"] == "credit"


def test_chunking_does_not_change_results():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    a = vmsched.run(sc, check=True, chunks=1)
    b = vmsched.run(sc, check=True, chunks=97)
    assert a.json == b.json


def test_simulation_stepping():
    text = vmsched.Scenario.from_dict(tiny_dict()).to_json()
    sim = vmsched.Simulation(text, None, None, True)
    assert sim.horizon_ns == 50_000_000 and sim.now_ns == 0 and not sim.done
    sim.run_until(10_000_000)
    assert sim.now_ns == 10_000_000 and not sim.done
    sim.run_until(10**12)  # clamped to the horizon
    assert sim.done and sim.now_ns == sim.horizon_ns
    assert sim.events > 0
    assert json.loads(sim.results_json())["sim_time_ns"] == sim.horizon_ns


def test_run_to_completion_finishes():
    d = tiny_dict()
    d.pop("duration_ms")
    d["vms"] = [{"name": "par", "vcpus": 2,
                 "workloads": [{"kind": "parallel", "iterations": 200, "cs_us": 2}]}]
    r = vmsched.run(d, check=True, progress=True)
    vm = r.vms.iloc[0]
    assert bool(vm["finished"]) and vm["completion_ns"] > 0
    assert r.sim_time_ns < 1_000_000_000
