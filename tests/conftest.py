"""Shared fixtures. The CLI is run as `python -m vmsched` in a subprocess (exit codes, stderr),
the API in-process. The invariant checker (`check=True` / `--check`) is on in every run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"

#: A small valid scenario (TOML): 2 pCPUs, two 1-vCPU VMs of hogs, 50 ms.
BASE_TOML = textwrap.dedent("""\
    name = "tiny"
    seed = 1
    duration_ms = 50

    [host]
    sockets = 1
    cores_per_socket = 2

    [hypervisor]
    scheduler = "credit"

    [[vms]]
    name = "a"
    vcpus = 1
    workloads = [{ kind = "hog" }]

    [[vms]]
    name = "b"
    vcpus = 1
    workloads = [{ kind = "hog" }]
    """)


def load_tool(name: str):
    """A script of tools/ (not a package) as a module, e.g. ``load_tool("fuzz_inputs")``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tiny_dict(**top) -> dict:
    """A small valid scenario as a dict: 4 pCPUs, a 2-vCPU parallel VM and a 1-vCPU hog."""
    d = {
        "name": "tiny-parallel",
        "seed": 1,
        "duration_ms": 50,
        "host": {"sockets": 1, "cores_per_socket": 4},
        "vms": [
            {"name": "par", "vcpus": 2,
             "workloads": [{"kind": "parallel", "compute_us": {"dist": "exp", "mean_us": 50},
                            "locks_per_iteration": 1, "cs_us": 2, "shootdown_every": 4,
                            "barrier_every": 10, "barrier_spin_us": 20}]},
            {"name": "hog", "vcpus": 1, "workloads": [{"kind": "hog"}]},
        ],
    }
    d.update(top)
    return d


class CliResult:
    def __init__(self, cp: subprocess.CompletedProcess):
        self.code = cp.returncode
        self.out = cp.stdout
        self.err = cp.stderr

    @property
    def text(self) -> str:
        return self.out + self.err

    def __repr__(self) -> str:
        return f"<exit {self.code}\nstdout:\n{self.out}\nstderr:\n{self.err}>"


@pytest.fixture
def cli(tmp_path):
    """Run `vmsched ARGS...` (as `python -m vmsched`) in tmp_path."""

    def run(*args: str, timeout: float = 600) -> CliResult:
        cp = subprocess.run([sys.executable, "-m", "vmsched", *map(str, args)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=timeout)
        return CliResult(cp)

    return run


@pytest.fixture
def write(tmp_path):
    """Write a text file into tmp_path and return its path."""

    def w(name: str, text: str) -> Path:
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        return p

    return w


@pytest.fixture
def tiny_toml(write) -> Path:
    return write("tiny.toml", BASE_TOML)
