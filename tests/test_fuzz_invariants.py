"""The invariant checker over perturbed built-in scenarios (tools/fuzz_invariants.py): every
scheduler and arena contender, random host sizes, vCPU counts, guest and hypervisor options and
controllers. The campaigns below include cases that failed before session 38's fix of halt polling
under credit's idle-vCPU tasklets (two each in seeds 9 and 15)."""

import json
from pathlib import Path

import pytest

from conftest import load_tool

from vmsched.errors import SimulationError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fuzz():
    return load_tool("fuzz_invariants")


@pytest.mark.parametrize("seed", [9, 15])
def test_perturbed_builtin_scenarios_keep_every_invariant(fuzz, seed, tmp_path):
    r = fuzz.campaign(seed, 200, [50, 200, 500], tmp_path)
    assert r["failures"] == [], r["failures"][:3]
    assert r["ran"] >= 0.9 * r["cases"], "most perturbed cases must be valid scenarios, or the test proves little"


def test_a_failing_case_is_reported_with_its_scenario(fuzz, tmp_path, monkeypatch):
    class Broken:
        def __init__(self, text, scheduler, seed, check):
            self.horizon_ns = 1

        def run_until(self, t):
            raise SimulationError(1, "pcpu 0: made up")

    monkeypatch.setattr(fuzz._core, "Simulation", Broken)
    r = fuzz.campaign(1, 3, [50], tmp_path)
    assert len(r["failures"]) == r["ran"] == 3
    f = r["failures"][0]
    assert "invariant violated" in f["error"] and f["scheduler"] in fuzz.SCHEDULERS
    assert json.loads(Path(f["scenario"]).read_text())["duration_ms"] == 50
