"""Rule-based diagnosis: the first error is the cause; remedies change only memory-chosen
parameters and skip values already tried."""

from __future__ import annotations

from tether.memory.diagnosis import approach_directions, diagnose


def error(code: str, node: str = "reach grasp point") -> dict:
    return {"code": code, "node": node, "message": "no progress", "step": 55}


def test_a_blocked_approach_proposes_the_next_untried_direction():
    d = diagnose(success=False, errors=[error("STUCK"), error("CONDITION_FAILED")],
                 ended_by="tree", params={"approach": [0, 0, 0.1]},
                 tried={"approach": [[-0.1, 0, 0]]})
    assert (d.error, d.node) == ("STUCK", "reach grasp point")
    assert d.remedy == {"approach": [0.1, 0.0, 0.0]}
    assert "blocked" in d.cause


def test_an_empty_grasp_adds_an_attempt_and_a_timeout_raises_step_caps():
    d = diagnose(success=False, errors=[error("EMPTY_GRASP")], ended_by="tree",
                 params={"attempts": 2, "max_steps": 100}, tried={})
    assert d.remedy == {"attempts": 3}
    d = diagnose(success=False, errors=[error("TIMEOUT")], ended_by="tree",
                 params={"attempts": 2, "max_steps": 100}, tried={})
    assert d.remedy == {"max_steps": 151}


def test_no_remedy_when_every_direction_has_failed():
    dirs = approach_directions(0.1)
    d = diagnose(success=False, errors=[error("STUCK")], ended_by="tree",
                 params={"approach": dirs[0]}, tried={"approach": dirs[1:]})
    assert d.remedy == {}


def test_a_spent_budget_without_errors_is_diagnosed_as_such():
    d = diagnose(success=False, errors=[], ended_by="budget", params={}, tried={})
    assert d.error == "BUDGET_EXHAUSTED" and d.remedy == {}


def test_success_needs_no_remedy():
    assert diagnose(success=True, errors=[], ended_by="tree", params={"a": 1}, tried={}).remedy \
        == {}
