"""The timeline trace (docs/results.md, Timeline trace): what it records, that it leaves the run
unchanged, and its errors."""

import json

import pytest

import vmsched
from vmsched.runner import trace_window_ns

from conftest import SCENARIOS


def _ns(x: float) -> int:
    return round(x * 1000)


def test_a_trace_tiles_each_vcpus_window_and_leaves_the_run_unchanged(tmp_path):
    sc = vmsched.Scenario.from_file(SCENARIOS / "flexcore-sync-heavy-2vm.toml").replace(duration_ms=1500)
    plain = vmsched.run(sc)
    # A window around FlexCore's first action (1000 ms) short enough to stay under the trace's
    # slice limit: the fixed PLE window's ping-pong switches make many slices.
    traced = vmsched.run(sc, trace=(900, 1100))
    assert plain.trace_json is None
    assert traced.json == plain.json
    doc = json.loads(traced.trace_json)
    assert doc["otherData"]["window_ns"] == [900_000_000, 1_100_000_000]
    assert "truncated_at_ns" not in doc["otherData"]
    events = doc["traceEvents"]
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events if e["name"] in ("process_name", "thread_name")}
    assert names[(0, None)] == "host" and names[(1, None)] == "vm vm0" and names[(2, 11)] == "vCPU11"
    per_vcpu: dict = {}
    for e in events:
        if e["ph"] == "X" and e["pid"] > 0:
            per_vcpu.setdefault((e["pid"], e["tid"]), []).append((_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e["name"]))
    assert len(per_vcpu) == 24
    for k, s in per_vcpu.items():
        s.sort()
        assert s[0][0] == 900_000_000 and s[-1][1] == 1_100_000_000, k
        assert all(a[1] == b[0] for a, b in zip(s, s[1:])), k
    # Each VM's exits per ms, by reason: its PLE exits are there.
    counters = [e for e in events if e["ph"] == "C" and e["name"] == "exits/ms"]
    assert {e["pid"] for e in counters} == {1, 2} and any(e["args"].get("ple", 0) > 0 for e in counters)
    # FlexCore balloons at 1000 ms: an instant event on the host.
    acts = [e for e in events if e["ph"] == "i"]
    assert acts and acts[0]["name"] == "flexcore" and acts[0]["ts"] == 1_000_000.0
    assert acts[0]["args"]["action"] == "set_online_vcpus"
    assert not any(name == "offline" for s in per_vcpu.values() for (_, _, name) in s)
    out = traced.write_trace(tmp_path / "sub" / "t.json")
    assert out.read_text() == traced.trace_json
    assert not [p for p in out.parent.iterdir() if p.name != "t.json"], "no temporary file left"


def test_a_trace_shows_the_vcpus_flexcore_took_offline():
    sc = vmsched.Scenario.from_file(SCENARIOS / "flexcore-sync-heavy-2vm.toml").replace(duration_ms=5300)
    doc = json.loads(vmsched.run(sc, trace=(5100, 5300)).trace_json)
    offline = {(e["pid"], e["tid"]) for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == "offline"}
    assert offline == {(vm, k) for vm in (1, 2) for k in range(6, 12)}


@pytest.mark.parametrize("bad, err", [("yes", TypeError), ((1,), TypeError), ((5, 5), ValueError),
                                      ((-1, 5), ValueError), ((0, float("nan")), ValueError)])
def test_a_bad_trace_argument_is_refused_with_its_reason(bad, err):
    with pytest.raises(err, match="trace"):
        trace_window_ns(bad, 10**9)


def test_a_trace_window_takes_any_real_number_of_ms():
    import numpy as np

    assert trace_window_ns((np.int64(1), np.float64(2.5)), 10**9) == (1_000_000, 2_500_000)
    assert trace_window_ns(True, 10**9) == (0, 10**9) and trace_window_ns(False, 10**9) is None
    start, end = trace_window_ns((1e300, 2e300), 10**9)
    assert start < end <= 2**64 - 1


def test_write_trace_without_a_trace_says_how_to_get_one(tmp_path):
    res = vmsched.run(vmsched.Scenario.from_file(SCENARIOS / "flexcore-sync-heavy-2vm.toml").replace(duration_ms=10))
    with pytest.raises(ValueError, match="trace=True"):
        res.write_trace(tmp_path / "t.json")
    assert not list(tmp_path.iterdir())


def test_cli_trace_writes_the_file_and_refuses_a_window_without_it(cli, tmp_path):
    path = tmp_path / "t.json"
    r = cli("run", str(SCENARIOS / "flexcore-sync-heavy-2vm.toml"), "--set", "duration_ms=50",
            "--trace", str(path), "--trace-window", "10:20", "-q")
    assert r.code == 0, r
    assert json.loads(path.read_text())["otherData"]["window_ns"] == [10_000_000, 20_000_000]
    r = cli("run", str(SCENARIOS / "flexcore-sync-heavy-2vm.toml"), "--trace-window", "10:20")
    assert r.code == 2 and "--trace-window" in r.err and len(r.err.strip().splitlines()) == 1, r
    r = cli("run", str(SCENARIOS / "flexcore-sync-heavy-2vm.toml"), "--trace", str(path), "--trace-window", "20:10")
    assert r.code == 2 and "FROM < UNTIL" in r.err, r
    r = cli("run", str(SCENARIOS / "flexcore-sync-heavy-2vm.toml"), "--trace", str(tmp_path))
    assert r.code == 2 and "is a directory" in r.err, r
