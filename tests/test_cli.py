"""The `vmsched` command line: list, run, examples, bench, and flag errors."""

from __future__ import annotations

import json
import textwrap

import pytest

import vmsched


def test_list_shows_schedulers_and_workloads(cli):
    r = cli("list")
    assert r.code == 0, r
    for name in ("credit", "cfs", "rr", "hog", "parallel", "hackbench", "kbuild"):
        assert name in r.out, name
    # description and source columns
    assert "source" in r.out and "description" in r.out
    cat = json.loads(cli("list", "--json").out)
    names = [e["name"] for e in cat["schedulers"]]
    assert {"credit", "cfs", "rr"} <= set(names)
    for e in cat["schedulers"] + cat["workloads"]:
        assert e["description"] and e["source"], e


def test_run_prints_table_and_writes_results(cli, tiny_toml, tmp_path):
    r = cli("run", tiny_toml.name, "--check", "--out", "res", "--seed", "3", "--scheduler", "rr")
    assert r.code == 0, r
    assert "scheduler=rr" in r.out and "seed=3" in r.out
    assert "a" in r.out and "b" in r.out
    out = tmp_path / "res"
    for f in ("summary.json", "vms.csv", "vcpus.csv", "pcpus.csv",
              "vms.parquet", "vcpus.parquet", "pcpus.parquet"):
        assert (out / f).is_file(), f
    s = json.loads((out / "summary.json").read_text())
    assert s["schema_version"] == 1
    assert s["scheduler"] == "rr" and s["seed"] == 3
    assert s["scenario"]["name"] == "tiny"
    # no temporary directories left behind
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_an_output_folder_that_cannot_be_made_is_named_not_its_temporary(cli, tiny_toml, tmp_path):
    (tmp_path / "file").write_text("x")
    r = cli("run", tiny_toml.name, "-q", "--out", "file/res")
    assert r.code == 2 and "file/res: cannot write results there" in r.err and ".tmp" not in r.err, r


def test_run_prints_the_policys_own_counters_when_it_has_some(cli, tiny_toml):
    r = cli("run", tiny_toml.name, "--scheduler", "credit2")
    assert r.code == 0, r
    line = next(x for x in r.out.splitlines() if x.startswith("scheduler counters:"))
    assert "credit2_schedule" in line and "credit2_migrated" in line
    # rr keeps no counters of its own: no line.
    assert "scheduler counters" not in cli("run", tiny_toml.name, "--scheduler", "rr").out


def test_run_set_changes_the_scenario_before_it_runs(cli, tiny_toml, tmp_path):
    r = cli("run", tiny_toml.name, "-q", "--check", "--out", "res", "--set", "vms.*.vcpus=2",
            "--set", "hypervisor.params.tslice_ms=10")
    assert r.code == 0, r
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert [vm["vcpus"] for vm in s["scenario"]["vms"]] == [2, 2]
    assert s["scenario"]["hypervisor"]["params"]["tslice_ms"] == 10


def test_run_set_with_a_wrong_value_names_the_field_not_a_json_position(cli, tiny_toml):
    r = cli("run", tiny_toml.name, "--set", "vms.0.vcpus=many")
    assert r.code == 2 and "vms[0].vcpus" in r.err and tiny_toml.name in r.err, r
    assert "column" not in r.err, r


def test_run_says_when_a_run_to_completion_stopped_at_its_limit_unfinished(cli, write):
    finite = """\
        name = "short-limit"
        seed = 1
        max_duration_ms = {limit}
        [host]
        cores_per_socket = 2
        [[vms]]
        name = "batch"
        vcpus = 2
        workloads = [{{ kind = "parallel", threads = 2, iterations = 200 }}]
        """
    write("cut.toml", textwrap.dedent(finite.format(limit=5)))
    r = cli("run", "cut.toml")
    assert r.code == 0, r
    assert "max_duration_ms (5 ms)" in r.err and "batch unfinished" in r.err, r
    write("done.toml", textwrap.dedent(finite.format(limit=600000)))
    r = cli("run", "done.toml")
    assert r.code == 0 and "unfinished" not in r.err, r


def test_run_says_when_a_vm_stopped_making_progress_long_before_the_end():
    from types import SimpleNamespace

    from vmsched.cli import stalled_note

    def res(end_ms, *vms):
        return SimpleNamespace(sim_time_ns=int(end_ms * 1e6), summary={"vms": [
            {"name": n, "finished": f, "last_op_ns": None if t is None else int(t * 1e6)} for n, f, t in vms]})

    note = stalled_note(res(9000, ("vm0", False, 4401), ("vm1", False, 8999)))
    assert note and "in vm0 after 4,401 ms" in note and "vm1" not in note and "9,000 ms" in note, note
    assert "hv_cost_jitter_pct" in note
    assert stalled_note(res(9000, ("vm0", True, 4401))) is None, "a finished VM has stopped, not stalled"
    assert stalled_note(res(9000, ("vm0", False, None))) is None, "no compute operation at all: not judged"
    assert stalled_note(res(1500, ("vm0", False, 600))) is None, "less than 1 s without one"


def test_results_say_when_each_vm_last_started_a_compute_operation():
    import vmsched

    from conftest import tiny_dict

    r = vmsched.run(vmsched.Scenario.from_dict(tiny_dict()))
    for vm in r.summary["vms"]:
        assert 0 < vm["last_op_ns"] <= r.sim_time_ns, vm


def test_run_takes_a_policy_written_in_python(cli, tiny_toml, write):
    write("halve.py", textwrap.dedent("""
        import vmsched

        class Halve(vmsched.Controller):
            def __init__(self, interval_ms=1.0, vm=0):
                self.interval_ms, self.vm, self.done = interval_ms, vm, False

            def step(self, stats):
                if self.done:
                    return []
                self.done = True
                n = stats["vms"][self.vm]["online_vcpus"]
                return [vmsched.SetOnlineVcpus(vm=self.vm, count=max(1, n // 2))]
    """))
    r = cli("run", tiny_toml.name, "--quiet", "--out", "res", "--python-controller", "halve.py:Halve",
            "--controller-param", "interval_ms=2.5")
    assert r.code == 0, r
    acts = json.loads((tiny_toml.parent / "res" / "summary.json").read_text())["actions"]
    assert [(a["by"], a["action"], a["t_ms"]) for a in acts] == [("Halve", "set_online_vcpus", 2.5)]
    r = cli("run", tiny_toml.name, "--python-controller", "halve.py:Halve", "--controller-param", "every=2")
    assert r.code == 2 and "Halve(**params) failed" in r.err and "every" in r.err, r


def test_a_python_controller_that_raises_gets_one_line_naming_it(cli, tiny_toml, write):
    write("oops.py", "import vmsched\n\nclass Oops(vmsched.Controller):\n    interval_ms = 2.0\n\n"
                     "    def step(self, stats):\n        return stats['no_such_key']\n")
    r = cli("run", tiny_toml.name, "--quiet", "--out", "res", "--python-controller", "oops.py:Oops")
    assert r.code == 2 and "Traceback" not in r.text, r
    assert len(r.err.strip().splitlines()) == 1, r
    assert "Oops.step() at t=2 ms raised KeyError: 'no_such_key'" in r.err and "oops.py:7" in r.err, r
    assert not (tiny_toml.parent / "res").exists()
    (tiny_toml.parent / "c.toml").write_text('[[contender]]\nname = "oops"\nscheduler = "credit"\n'
                                             'python_controller = "oops.py:Oops"\n')
    r = cli("arena", "--quiet", "--out", "out", "--contenders", "c.toml", "--only", "fairness",
            "--only", "oops", "--seeds", "2", "--jobs", "2")
    assert r.code == 2 and "Traceback" not in r.text and "Oops.step()" in r.err, r
    assert not (tiny_toml.parent / "out").exists()


def test_run_quiet_prints_nothing(cli, tiny_toml):
    r = cli("run", tiny_toml.name, "--quiet", "--check")
    assert r.code == 0 and r.out == "", r


@pytest.mark.parametrize("args,needle", [
    (["run", "X", "--seed", "-1"], "--seed"),
    (["run", "X", "--seed", "abc"], "--seed"),
    (["run", "X", "--bogus"], "--bogus"),
    (["run", "X", "--scheduler", "nope"], "nope"),
    (["run"], "SCENARIO"),
    (["frobnicate"], "frobnicate"),
    ([], "COMMAND"),
    (["bench", "--repeat", "0"], "--repeat"),
    (["examples", "--scheduler", "nope"], "nope"),
    (["run", "X", "--set", "tslice_ms"], "KEY=VALUE"),
    (["run", "X", "--set", "hypervisor.params.tslce_ms=10"], "hypervisor.params.tslce_ms"),
    (["run", "X", "--set", "vms.*.vcpus=many"], "vms[0].vcpus"),
    (["run", "X", "--set", "controller.params.ratio=0.9"], "controller.params"),
    (["run", "X", "--set", "vms.7.vcpus=2"], "X"),
    (["run", "X", "--python-controller", "nope.py:P"], "no such file"),
    (["run", "X", "--python-controller", "nope"], "'FILE.py:Class'"),
    (["run", "X", "--controller-param", "every=2"], "without --python-controller"),
])
def test_bad_flags_exit_2_in_one_line(cli, tiny_toml, args, needle):
    args = [tiny_toml.name if a == "X" else a for a in args]
    needle = tiny_toml.name if needle == "X" else needle
    r = cli(*args)
    assert r.code == 2, r
    assert "Traceback" not in r.text, r
    assert len(r.err.strip().splitlines()) == 1, r
    assert needle in r.err, r


def test_help_and_version(cli):
    r = cli("--help")
    assert r.code == 0 and "run" in r.out and "validate" in r.out
    r = cli("--version")
    assert r.code == 0 and vmsched.__version__ in r.out


def test_examples_writes_per_scheduler_results(cli, tmp_path):
    r = cli("examples", "--only", "fairness-1234", "--scheduler", "rr", "--scheduler", "credit",
            "--out", "ex", "--check", "--quiet")
    assert r.code == 0, r
    for sched in ("rr", "credit"):
        s = json.loads((tmp_path / "ex" / "fairness-1234" / sched / "summary.json").read_text())
        assert s["scheduler"] == sched
    header = r.out.splitlines()[0]
    for col in ("scenario", "scheduler", "VM", "share", "lock spin %", "IPI wait %",
                "ctx sw/pCPU-s"):
        assert col in header, col
    assert (tmp_path / "ex" / "summary.txt").is_file()


def test_examples_unknown_only_pattern(cli):
    r = cli("examples", "--only", "no-such-scenario", "--out", "ex")
    assert r.code == 2 and "Traceback" not in r.text, r


def test_bench_builders_are_valid():
    from vmsched import bench

    for name, d in bench.bench_scenarios(quick=True).items():
        sc = vmsched.Scenario.from_dict(d)
        assert sc.to_dict()["vms"], name
    big = vmsched.Scenario.from_dict(bench.host64(10))
    assert big.n_pcpus == 64 and len(big.to_dict()["vms"]) == 32
    assert all(vm["vcpus"] == 8 for vm in big.to_dict()["vms"])


def test_bench_quick_reports_rates(cli, tmp_path):
    r = cli("bench", "--quick", "--repeat", "1", "--json", "bench.json")
    assert r.code == 0, r
    for name in ("small", "sync-heavy-2vm", "host64-32x8", "specvirt-9t"):
        assert name in r.out, name
    rep = json.loads((tmp_path / "bench.json").read_text())
    assert [x["bench"] for x in rep["results"]] == ["small", "sync-heavy-2vm", "host64-32x8", "specvirt-9t"]
    for x in rep["results"]:
        assert x["events"] > 0 and x["events_per_s"] > 0 and x["sim_s_per_wall_s"] > 0


def test_run_with_another_scheduler_says_which_scenario_params_it_does_not_pass_on(cli):
    r = cli("run", str(vmsched.scenarios_dir() / "dp-stream.toml"), "--scheduler", "dp", "--quiet")
    assert r.code == 0, r
    assert "hypervisor.params (load_balance_ratelimit_us, ratelimit_us, wake)" in r.err, r
    assert "belong to credit" in r.err, r
    same = cli("run", str(vmsched.scenarios_dir() / "dp-stream.toml"), "--scheduler", "credit", "--quiet")
    assert same.code == 0 and "hypervisor.params" not in same.err, same
