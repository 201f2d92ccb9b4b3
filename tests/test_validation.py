"""Bad scenario files give a clear error naming the field and a non-zero exit code
(acceptance 8), through the CLI and through the Python API; never a traceback."""

from __future__ import annotations

import pytest

import vmsched
from conftest import BASE_TOML

# (id, transformation of the base TOML, substrings the error must contain)
BAD = [
    ("missing-field", lambda t: t.replace("cores_per_socket = 2\n", ""),
     ["host", "cores_per_socket"]),
    ("missing-vms", lambda t: t[:t.index("[[vms]]")], ["vms"]),
    ("wrong-type", lambda t: t.replace("vcpus = 1", 'vcpus = "one"', 1), ["vms[0].vcpus"]),
    ("wrong-type-host", lambda t: t.replace("cores_per_socket = 2", "cores_per_socket = 2.5"),
     ["host.cores_per_socket"]),
    ("negative-duration", lambda t: t.replace("duration_ms = 50", "duration_ms = -5"),
     ["duration_ms"]),
    ("negative-workload-time",
     lambda t: t.replace('workloads = [{ kind = "hog" }]',
                         'workloads = [{ kind = "parallel", cs_us = -3 }]', 1),
     ["vms[0].workloads[0]", "cs_us"]),
    ("unknown-scheduler", lambda t: t.replace('scheduler = "credit"', 'scheduler = "nope"'),
     ["hypervisor.scheduler", "nope"]),
    ("unknown-workload", lambda t: t.replace('kind = "hog"', 'kind = "bogus"', 1),
     ["vms[0].workloads[0]", "bogus"]),
    ("unknown-field", lambda t: t.replace("vcpus = 1", "vcpus = 1\nvcpu_count = 3", 1),
     ["vms[0]", "vcpu_count"]),
    ("zero-vcpus", lambda t: t.replace("vcpus = 1", "vcpus = 0", 1), ["vms[0].vcpus"]),
    ("zero-vcpus-second-vm", lambda t: t.replace('name = "b"\nvcpus = 1', 'name = "b"\nvcpus = 0'),
     ["vms[1].vcpus"]),
    ("too-many-pinned-vcpus",
     lambda t: t.replace('name = "a"\nvcpus = 1', 'name = "a"\nvcpus = 3\npin = [0, 1, 2]'),
     ["vms[0].pin"]),
    ("pin-out-of-range", lambda t: t.replace('name = "a"\nvcpus = 1', 'name = "a"\nvcpus = 1\npin = [5]'),
     ["vms[0].pin"]),
    ("toml-syntax", lambda t: t.replace("[host]", "[host"), ["line 5"]),
]


@pytest.mark.parametrize("case,mutate,needles", BAD, ids=[b[0] for b in BAD])
def test_cli_validate_names_the_field(cli, write, case, mutate, needles):
    text = mutate(BASE_TOML)
    assert text != BASE_TOML
    path = write(f"{case}.toml", text)
    r = cli("validate", path.name)
    assert r.code == 2, r
    assert "Traceback" not in r.text, r
    line = r.out.strip()
    assert len(line.splitlines()) == 1, r
    assert line.startswith(f"{path.name}: "), r
    for n in needles:
        assert n in line, (n, r)


@pytest.mark.parametrize("case,mutate,needles", BAD, ids=[b[0] for b in BAD])
def test_cli_run_rejects_bad_file_in_one_line(cli, write, case, mutate, needles):
    path = write(f"{case}.toml", mutate(BASE_TOML))
    r = cli("run", path.name, "--quiet")
    assert r.code == 2, r
    assert "Traceback" not in r.text, r
    assert len(r.err.strip().splitlines()) == 1, r
    assert needles[0] in r.err, r


@pytest.mark.parametrize("case,mutate,needles", BAD, ids=[b[0] for b in BAD])
def test_api_raises_scenario_error_with_path(case, mutate, needles):
    with pytest.raises(vmsched.ScenarioError) as ei:
        vmsched.Scenario.from_toml(mutate(BASE_TOML))
    e = ei.value
    assert isinstance(e, ValueError)
    assert isinstance(e.path, str) and isinstance(e.reason, str) and e.reason
    assert str(e) == (f"{e.path}: {e.reason}" if e.path else e.reason)
    for n in needles:
        assert n in str(e), (n, str(e))


def test_validate_ok_and_mixed(cli, tiny_toml, write):
    r = cli("validate", tiny_toml.name)
    assert r.code == 0, r
    assert r.out.strip() == f"{tiny_toml.name}: OK"
    bad = write("bad.toml", BASE_TOML.replace("vcpus = 1", "vcpus = 0", 1))
    r = cli("validate", tiny_toml.name, bad.name)
    assert r.code == 2, r
    lines = r.out.strip().splitlines()
    assert lines[0] == f"{tiny_toml.name}: OK"
    assert lines[1].startswith("bad.toml: vms[0].vcpus: ")


def test_missing_file(cli):
    r = cli("validate", "does-not-exist.toml")
    assert r.code == 2 and "does-not-exist.toml" in r.out and "Traceback" not in r.text, r
    r = cli("run", "does-not-exist.toml")
    assert r.code == 2 and "does-not-exist.toml" in r.err and "Traceback" not in r.text, r
    assert len(r.err.strip().splitlines()) == 1, r


def test_directory_instead_of_file(cli, tmp_path):
    (tmp_path / "d").mkdir()
    r = cli("run", "d")
    assert r.code == 2 and "Traceback" not in r.text, r


def test_json_scenario_errors_name_the_field():
    with pytest.raises(vmsched.ScenarioError) as ei:
        vmsched.Scenario.from_json('{"host": {"cores_per_socket": 2}, "vms": [{"vcpus": -1, "workloads": []}]}')
    assert "vms[0].vcpus" in str(ei.value)
    assert ei.value.path.startswith("vms[0].vcpus")


def test_from_dict_errors_name_the_field():
    d = {"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "workloads": [{"kind": "hog"}]},
                                                   {"vcpus": 0, "workloads": [{"kind": "hog"}]}]}
    with pytest.raises(vmsched.ScenarioError) as ei:
        vmsched.Scenario.from_dict(d)
    assert ei.value.path == "vms[1].vcpus"


def test_scenario_error_pickles():
    import pickle

    e = vmsched.ScenarioError("vms[1].vcpus", "must be ≥ 1")
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.path, e2.reason, str(e2)) == (e.path, e.reason, str(e))


@pytest.mark.parametrize("bad,path,needle", [
    (float("nan"), "vms[0].guest.slice_us", "finite"),
    (float("inf"), "vms[0].guest.slice_us", "finite"),
    (object(), "vms[0].guest.slice_us", "not allowed"),
])
def test_a_value_json_cannot_hold_is_named_by_its_field(bad, path, needle):
    d = {"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "guest": {"slice_us": bad}, "workloads": [{"kind": "hog"}]}]}
    with pytest.raises(vmsched.ScenarioError) as ei:
        vmsched.Scenario.from_dict(d)
    assert ei.value.path == path and needle in ei.value.reason, ei.value


def test_a_wrong_field_inside_a_workload_table_is_named_by_its_path():
    d = {"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "workloads": [{"kind": "parallel", "threads": "2"}]}]}
    with pytest.raises(vmsched.ScenarioError) as ei:
        vmsched.Scenario.from_dict(d)
    assert ei.value.path == "vms[0].workloads[0].threads", ei.value
