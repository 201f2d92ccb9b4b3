"""Controllers: Python controllers called at intervals, their actions, errors, and the built-in
FlexCore controller from a scenario's [controller] table."""

from __future__ import annotations

import pytest

import vmsched
from conftest import SCENARIOS, tiny_dict


class Recorder(vmsched.Controller):
    """Records what it sees; optionally returns fixed actions once."""

    def __init__(self, interval_ms=5.0, once=None):
        self.interval_ms = interval_ms
        self.seen = []
        self.once = once

    def step(self, stats):
        self.seen.append(stats)
        acts, self.once = self.once, None
        return acts


def test_an_observing_controller_does_not_change_the_run():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    plain = vmsched.run(sc, check=True)
    rec = Recorder(interval_ms=2.5)
    observed = vmsched.run(sc, check=True, controller=rec)
    assert observed.json == plain.json
    # Called every 2.5 ms of the 50 ms run (the last call would be at the end).
    assert [s["now_ns"] for s in rec.seen] == [round(2.5e6 * k) for k in range(1, 20)]
    s = rec.seen[-1]
    assert set(s) == {"now_ns", "pcpus", "vms"}
    assert len(s["pcpus"]) == 4 and [v["name"] for v in s["vms"]] == ["par", "hog"]
    v = s["vms"][0]["vcpus"][0]
    assert set(v) == {"online", "state", "pcpu", "affinity", "run_ns", "steal_ns", "dispatches", "ple_exits"}
    # Counters are cumulative.
    runs = [st["vms"][1]["vcpus"][0]["run_ns"] for st in rec.seen]
    assert runs == sorted(runs) and runs[-1] > runs[0]


def test_pin_actions_move_vcpus_and_are_recorded():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    pins = [vmsched.Pin(vm=0, vcpu=0, pcpus=[3]), vmsched.Pin(vm=0, vcpu=1, pcpus=[3]),
            {"action": "pin", "vm": 1, "vcpu": 0, "pcpus": [2]}]
    rec = Recorder(interval_ms=10, once=pins)
    r = vmsched.run(sc, check=True, controller=rec)
    last = rec.seen[-1]
    assert [v["affinity"] for v in last["vms"][0]["vcpus"]] == [[3], [3]]
    assert {v["pcpu"] for v in last["vms"][0]["vcpus"]} == {3}
    assert last["vms"][1]["vcpus"][0]["pcpu"] == 2
    acts = r.actions
    assert list(acts["action"]) == ["pin", "pin", "pin"]
    assert list(acts["pcpus"]) == ["3", "3", "2"]
    assert set(acts["by"]) == {"Recorder"} and set(acts["t_ms"]) == {10.0}
    # Two vCPUs share pCPU 3 after 10 ms: they steal from each other.
    assert r.vcpus["steal_ns"].iloc[0] > 0


def test_set_online_vcpus_takes_the_guests_hotplug_time():
    d = tiny_dict(duration_ms=2000)
    d["vms"][0]["vcpus"] = 4
    d["vms"][0]["guest"] = {"hotplug": {"mode": "serial", "kthread_park_ms": 100, "cpu_down_ms": 200}}
    rec = Recorder(interval_ms=50, once=[vmsched.SetOnlineVcpus(vm=0, count=2)])
    vmsched.run(d, check=True, controller=rec)
    online = {s["now_ns"] // 1_000_000: s["vms"][0]["online_vcpus"] for s in rec.seen}
    # Requested at 50 ms: vCPU 3 goes at about 350 ms, vCPU 2 at about 650 ms.
    assert online[300] == 4 and online[400] == 3 and online[600] == 3 and online[700] == 2
    assert [v["online"] for v in rec.seen[-1]["vms"][0]["vcpus"]] == [True, True, False, False]


def test_invalid_actions_raise_scenario_error_naming_the_action():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.run(sc, controller=Recorder(once=[vmsched.SetWeight(vm=0, weight=512),
                                                 vmsched.Pin(vm=0, vcpu=0, pcpus=[9])]))
    assert e.value.path == "actions[1].pcpus" and "no pCPU 9" in e.value.reason
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.run(sc, controller=Recorder(once=[{"action": "teleport", "vm": 0}]))
    assert e.value.path.startswith("actions[0]") and "teleport" in e.value.reason
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.run(sc, controller=Recorder(once=[{"action": "set_cap", "vm": 0, "cap_pct": 999}]))
    assert e.value.path == "actions[0].cap_pct"


@pytest.mark.parametrize("bad, exc, text", [
    (object(), TypeError, "step(stats)"),
    (type("C", (), {"step": lambda self, s: [], "interval_ms": 0})(), ValueError, "interval_ms must be > 0"),
    (type("C", (), {"step": lambda self, s: [], "interval_ms": "1"})(), TypeError, "interval_ms"),
])
def test_bad_controllers_are_rejected_before_running(bad, exc, text):
    with pytest.raises(exc, match=text.replace("(", r"\(").replace(")", r"\)")):
        vmsched.run(vmsched.Scenario.from_dict(tiny_dict()), controller=bad)


def test_a_step_that_returns_something_else_names_the_controller():
    class Bad(vmsched.Controller):
        interval_ms = 5

        def step(self, stats):
            return [42]

    with pytest.raises(TypeError, match=r"Bad.step\(\) result\[0\]"):
        vmsched.run(vmsched.Scenario.from_dict(tiny_dict()), controller=Bad())


def test_scenario_controller_table_is_validated():
    ok = vmsched.Scenario.from_file(SCENARIOS / "flexcore-sync-heavy-2vm.toml")
    assert ok.to_dict()["controller"]["name"] == "flexcore"
    d = tiny_dict(controller={"name": "flexcor"})
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.Scenario.from_dict(d)
    assert e.value.path == "controller.name" and "flexcore" in e.value.reason
    d = tiny_dict(controller={"name": "flexcore", "params": {"ratio": -1}})
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.Scenario.from_dict(d)
    assert e.value.path == "controller.params.ratio"
    d = tiny_dict(controller={"name": "flexcore", "params": {"ratoi": 1}})
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.Scenario.from_dict(d)
    assert e.value.path == "controller.params.ratoi" and "ratio" in e.value.reason


def test_flexcore_from_a_scenario_balloons_the_contended_vms():
    sc = vmsched.Scenario.from_file(SCENARIOS / "flexcore-sync-heavy-2vm.toml")
    # Only the first 1.5 s: the check at 1 s (the window's older buckets are the idle seconds
    # before the run, seed §3.1) balloons both VMs to 6 vCPUs.
    r = vmsched.run(sc.replace(duration_ms=1500), check=True)
    acts = r.actions
    assert list(acts["action"][:2]) == ["set_online_vcpus", "set_online_vcpus"]
    assert list(acts["count"][:2]) == [6, 6] and set(acts["by"]) == {"flexcore"}
    assert float(acts["t_ms"].iloc[0]) == 1000.0


def test_list_shows_controllers(cli):
    out = cli("list")
    assert out.code == 0
    assert "controllers:" in out.out and "flexcore" in out.out
    assert "flexcore" in [c["name"] for c in vmsched.catalog()["controllers"]]


def test_the_base_controller_observes_without_acting():
    sc = vmsched.Scenario.from_dict(tiny_dict())
    assert vmsched.Controller().step({"now_ns": 0, "pcpus": [], "vms": []}) == []
    assert vmsched.run(sc, check=True, controller=vmsched.Controller()).json == vmsched.run(sc, check=True).json


def test_load_controller_builds_a_fresh_instance_from_a_module_or_a_file(tmp_path, monkeypatch):
    from vmsched.control import load_controller

    (tmp_path / "my_policy.py").write_text(
        "import vmsched\n"
        "class Every(vmsched.Controller):\n"
        "    def __init__(self, interval_ms=5.0):\n"
        "        self.interval_ms = interval_ms\n"
        "        self.seen = []\n"
        "    def step(self, stats):\n"
        "        self.seen.append(stats['now_ns'])\n"
        "        return []\n")
    by_file = load_controller("my_policy.py:Every", {"interval_ms": 2.5}, base=tmp_path)
    assert by_file.interval_ms == 2.5
    again = load_controller(f"{tmp_path / 'my_policy.py'}:Every")
    assert again is not by_file and again.seen == [] and type(again) is type(by_file)
    monkeypatch.syspath_prepend(str(tmp_path))
    by_module = load_controller("my_policy:Every")
    assert by_module.interval_ms == 5.0
    r = vmsched.run(vmsched.Scenario.from_dict(tiny_dict()), controller=by_module)
    assert len(by_module.seen) >= 2 and r.summary["sim_time_ns"] > 0
    with pytest.raises(ValueError, match="cannot import module 'no_such_policy'"):
        load_controller("no_such_policy:Every")
    with pytest.raises(ValueError, match="parameters must be a table"):
        load_controller("my_policy:Every", [1])


def test_a_controller_that_raises_stops_the_run_with_a_controller_error_naming_it():
    class Broken(vmsched.Controller):
        interval_ms = 3.0

        def step(self, stats):
            return 1 / 0

    with pytest.raises(vmsched.ControllerError, match=r"Broken\.step\(\) at t=3 ms raised ZeroDivisionError") as e:
        vmsched.run(vmsched.Scenario.from_dict(tiny_dict()), controller=Broken())
    assert isinstance(e.value.__cause__, ZeroDivisionError)
