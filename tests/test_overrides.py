"""`--set KEY=VALUE` (vmsched.overrides): parsing, where an override lands, and its errors."""

from __future__ import annotations

import pytest

from vmsched.overrides import OverrideError, apply, parse

from conftest import tiny_dict


def test_values_are_toml_and_anything_else_is_a_bare_string():
    assert parse("hypervisor.params.tslice_ms=10").value == 10
    assert parse("a=0.9").value == 0.9
    assert parse("a=true").value is True
    assert parse('a="credit2"').value == "credit2"
    assert parse("hypervisor.scheduler=credit2").value == "credit2"
    assert parse("a={ enabled = false }").value == {"enabled": False}
    assert parse("a=[1, 2]").value == [1, 2]
    assert parse(" a.b = 3 ").path == ("a", "b")


def test_a_field_path_as_errors_print_it_can_be_pasted_into_set():
    assert parse("vms[0].vcpus=4").path == ("vms", "0", "vcpus")
    assert parse("vms[*].guest.slice_us=3000").path == ("vms", "*", "guest", "slice_us")
    assert parse("vms[1].workloads[0].threads=2").path == ("vms", "1", "workloads", "0", "threads")


@pytest.mark.parametrize("text,needle", [
    ("noequals", "expected KEY=VALUE"),
    ("=3", "expected KEY=VALUE"),
    ("a..b=3", "empty segment"),
    ("a=", "empty value"),
])
def test_malformed_overrides_are_refused_with_the_reason(text, needle):
    with pytest.raises(OverrideError, match=needle):
        parse(text)


def test_an_override_sets_a_new_leaf_but_needs_its_containers():
    sc = tiny_dict(hypervisor={"scheduler": "credit", "params": {}})
    out, n = apply(sc, parse("hypervisor.params.tslice_ms=10"))
    assert n == 1 and out["hypervisor"]["params"] == {"tslice_ms": 10}
    assert sc["hypervisor"]["params"] == {}, "the input is not modified"
    _, n = apply(sc, parse("controller.params.ratio=0.9"))
    assert n == 0, "a run without a controller is not reached"


def test_a_table_the_parser_fills_in_is_created_for_the_override():
    sc = tiny_dict()
    assert "costs" not in sc["host"]
    out, n = apply(sc, parse("host.costs.hv_cost_jitter_pct=2"))
    assert n == 1 and out["host"]["costs"] == {"hv_cost_jitter_pct": 2}
    assert "costs" not in sc["host"], "the input is not modified"
    _, n = apply(sc, parse("host.nosuch.x=1"))
    assert n == 0, "a table the parser does not know is not invented"


def test_lists_take_an_index_or_a_star():
    sc = tiny_dict()
    out, n = apply(sc, parse("vms.*.vcpus=3"))
    assert n == 2 and [v["vcpus"] for v in out["vms"]] == [3, 3]
    out, n = apply(sc, parse("vms.1.vcpus=4"))
    assert n == 1 and [v["vcpus"] for v in out["vms"]] == [2, 4]
    with pytest.raises(OverrideError, match="vms has 2 elements, no index 5"):
        apply(sc, parse("vms.5.vcpus=1"))
    with pytest.raises(OverrideError, match="is a list"):
        apply(sc, parse("vms.par.vcpus=1"))


def test_the_python_api_takes_override_text_and_refuses_other_types():
    with pytest.raises(TypeError, match="KEY=VALUE"):
        parse(0.9)
    from vmsched.batch import Run
    from vmsched.reproduce import apply_overrides

    planned = {"r": [Run("a", tiny_dict(controller={"name": "flexcore"})), Run("b", tiny_dict())]}
    assert apply_overrides(planned, ["controller.params.ratio=0.9"]) == [
        "controller.params.ratio=0.9: 1 of 2 runs"]
    assert planned["r"][0].scenario["controller"]["params"] == {"ratio": 0.9}
    assert "controller" not in planned["r"][1].scenario
