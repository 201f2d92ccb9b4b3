"""`vmsched compare`: what moved between two `vmsched reproduce` outputs (values, verdicts,
claims, what only one side has), and its errors on inputs that are not such outputs."""

from __future__ import annotations

import copy
import json

import pytest

from vmsched.reproduce.compare import CompareError, compare, load


def _q(key: str, simulated: float, within: bool) -> dict:
    return {"key": key, "label": f"the {key}", "simulated": simulated, "within": within,
            "seed": 1.0, "tolerance": 0.25, "unit": "×", "fitted": False}


def _outcomes() -> dict:
    return {"quick": False, "overrides": [],
            "tally": {"within": 2, "numeric": 3, "claims_hold": 1, "claims": 2},
            "outcomes": [{"name": "r1",
                          "quantities": [_q("a", 1.0, True), _q("b", 2.0, True), _q("c", 5.0, False)],
                          "claims": [{"text": "a holds", "holds": True}, {"text": "b holds", "holds": False}]},
                         {"name": "r2", "quantities": [_q("d", 1.0, True)], "claims": []}]}


def test_compare_lists_moved_values_flipped_verdicts_and_claims_and_one_sided_items():
    old, new = _outcomes(), _outcomes()
    r1 = new["outcomes"][0]
    r1["quantities"][0]["simulated"] = 1.001            # a: moves 0.1 %, still within
    r1["quantities"][2].update(simulated=4.0, within=True)  # c: out -> within
    r1["claims"][1]["holds"] = True                     # b's claim flips
    r1["quantities"].append(_q("e", 3.0, True))         # new quantity
    del new["outcomes"][1]                              # r2 gone
    new["tally"] = {"within": 3, "numeric": 3, "claims_hold": 2, "claims": 2}
    c = compare(old, new)
    assert [(m.label, m.old_within, m.new_within) for m in c.moved] == [
        ("the a", True, True), ("the c", False, True)]
    assert c.moved[0].change == pytest.approx(0.001)
    assert c.flipped == [("r1", "b holds", False, True)]
    assert c.only_old == ["reproduction r2"] and c.only_new == ["r1: the e"]
    # Above 0.5 % only the verdict change is left.
    assert [m.label for m in compare(old, new, 0.005).moved] == ["the c"]
    assert compare(old, copy.deepcopy(old)).moved == []


def test_compare_says_when_the_sides_are_not_alike():
    old, new = _outcomes(), _outcomes()
    new["quick"], new["overrides"] = True, ["x.y=1: 2 of 3 runs"]
    notes = compare(old, new).notes
    assert any("exploratory" in n and "x.y=1" in n for n in notes)
    assert any("--quick" in n for n in notes)


def test_the_cli_compares_two_output_folders_and_names_a_bad_input(cli, tmp_path):
    for side, data in (("a", _outcomes()), ("b", _outcomes())):
        (tmp_path / side).mkdir()
        if side == "b":
            data["outcomes"][0]["quantities"][1]["simulated"] = 2.5
        (tmp_path / side / "outcomes.json").write_text(json.dumps(data))
    r = cli("compare", "a", "b")
    assert r.code == 0, r
    assert "1 quantities moved" in r.out and "the b" in r.out and "+25.00 %" in r.out
    (tmp_path / "bad.json").write_text("{}")
    r = cli("compare", "a", "bad.json")
    assert r.code == 2 and "bad.json" in r.err and "outcomes" in r.err and "Traceback" not in r.err
    r = cli("compare", "a", "nowhere")
    assert r.code == 2 and "nowhere" in r.err
    r = cli("compare", "a", "b", "--min-change", "-3")
    assert r.code == 2 and "--min-change" in r.err
    (tmp_path / "old.json").write_text(json.dumps({"outcomes": [], "tally": {"within": 1}}))
    with pytest.raises(CompareError, match="lacks numeric, claims_hold, claims"):
        load(tmp_path / "old.json")
    with pytest.raises(CompareError, match="not a JSON file"):
        (tmp_path / "junk.json").write_text("not json")
        load(tmp_path / "junk.json")


# ---- two arena outputs ---------------------------------------------------------------------

def _cell(contender: str, completion: float, rank: int, se: float | None = None) -> dict:
    return {"scenario": "s", "contender": contender, "primary": "completion_ms", "rank": rank,
            "metrics": {"completion_ms": completion, "spin_pct": 1.0},
            "se": {"completion_ms": se, "spin_pct": None}, "seeds": [1]}


def _arena() -> dict:
    return {"sync": [_cell("credit", 100.0, 2), _cell("cfs", 50.0, 1)],
            "blocking": [_cell("credit", 10.0, 1), _cell("cfs", 20.0, 2)]}


def test_arena_compare_lists_moved_metrics_changed_ranks_and_mean_ranks():
    from vmsched import arena_compare as ac

    old, new = _arena(), _arena()
    new["sync"] = [_cell("credit", 40.0, 1), _cell("cfs", 50.0, 2)]   # credit overtakes cfs
    new["blocking"][1]["metrics"]["completion_ms"] = 20.02          # cfs moves 0.1 %, same rank
    new["sync"].append(_cell("mine", 60.0, 3))
    new["numa"] = [_cell("cfs", 1.0, 1)]
    c = ac.compare(old, new)
    assert [(m.scenario, m.contender, m.old_rank, m.new_rank) for m in c.moved] == [
        ("sync", "credit", 2, 1), ("sync", "cfs", 1, 2), ("blocking", "cfs", 2, 2)]
    assert c.moved[0].change == pytest.approx(-0.6)
    assert c.moved[0].beyond_scatter is None  # one seed: no scatter to judge by
    # Mean ranks over sync and blocking only (numa is on one side).
    assert c.overall == {"credit": (1.5, 1.0), "cfs": (1.5, 2.0), "mine": (None, 3.0)}
    assert c.only_new == ["scenario numa", "sync: mine"] and c.only_old == []
    # Above 1 % only the rank changes are left.
    assert [m.contender for m in ac.compare(old, new, 0.01).moved] == ["credit", "cfs"]
    assert ac.compare(old, copy.deepcopy(old)).moved == []


def test_arena_compare_says_whether_a_move_lies_beyond_the_seeds_scatter():
    from vmsched import arena_compare as ac

    old = {"sync": [_cell("credit", 100.0, 1, se=3.0), _cell("cfs", 50.0, 1, se=4.0)]}
    new = {"sync": [_cell("credit", 110.0, 1, se=4.0), _cell("cfs", 40.0, 1, se=1.0)]}
    # credit: 10 against 2 x hypot(3, 4) = 10: not beyond; cfs: 10 against 2 x 4.12 = 8.2: beyond.
    assert [(m.contender, m.beyond_scatter) for m in ac.compare(old, new).moved] == [
        ("credit", False), ("cfs", True)]


def test_the_cli_compares_two_arena_outputs_and_refuses_a_mixed_pair(cli, tmp_path):
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        data = _arena()
        if side == "b":
            data["sync"] = [_cell("credit", 40.0, 1), _cell("cfs", 50.0, 2)]
        (tmp_path / side / "arena.json").write_text(json.dumps(data))
    r = cli("compare", "a", "b")
    assert r.code == 0, r
    assert "2 results moved" in r.out and "2 -> 1" in r.out and "-60.00 %" in r.out
    assert "0 beyond the seeds' scatter" in r.out and "--set" not in r.out
    assert "overall (mean rank" in r.out
    # A side run with --set says so (its arena-run.json, beside arena.json).
    (tmp_path / "b" / "arena-run.json").write_text(json.dumps({"overrides": ["x.y=1: 3 of 3 runs"]}))
    r = cli("compare", "a", "b")
    assert r.code == 0 and "the new side ran with --set x.y=1: 3 of 3 runs" in r.out, r
    (tmp_path / "b" / "arena-run.json").write_text(json.dumps({"overrides": "x"}))
    r = cli("compare", "a", "b")
    assert r.code == 2 and "arena-run.json" in r.err and "Traceback" not in r.err
    (tmp_path / "b" / "arena-run.json").unlink()
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "outcomes.json").write_text(json.dumps(_outcomes()))
    r = cli("compare", "a", "rep")
    assert r.code == 2 and "arena output" in r.err and "Traceback" not in r.err
    old = _arena()
    del old["sync"][0]["primary"]
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "arena.json").write_text(json.dumps(old))
    r = cli("compare", "old", "b")
    assert r.code == 2 and "primary metric" in r.err and "run the arena again" in r.err
    bad = _arena()
    bad["sync"][0]["metrics"] = [1, 2]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "arena.json").write_text(json.dumps(bad))
    r = cli("compare", "bad", "b")
    assert r.code == 2 and "scenario 'sync'" in r.err and "Traceback" not in r.err
