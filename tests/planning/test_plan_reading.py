"""Reading a plan (`tether/planning/plan.py` `read_plan`): what JSON allows but no plan may hold,
non-finite numbers and runaway nesting, is one located `PlanError`, never a traceback."""

from __future__ import annotations

import json

import pytest

from tether.errors import TetherError
from tether.planning.plan import PlanError, read_plan


def plan_text(tolerance: str) -> str:
    return ('{"subtasks": [{"goal": "reach", "steps": [{"move_to": {"target": [0.1, 0, 0.2], '
            f'"tolerance": {tolerance}}}}}]}}]}}')


@pytest.mark.parametrize(("number", "shown"), [
    ("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf"), ("1e999", "inf"),
])
def test_a_number_that_is_not_finite_is_located_by_plan_path(number, shown):
    with pytest.raises(PlanError) as caught:
        read_plan(plan_text(number))
    assert caught.value.problems == [
        f"subtasks[0].steps[0].move_to.tolerance: must be a finite number, got {shown}"]
    assert isinstance(caught.value, TetherError)


def test_a_finite_plan_reads():
    plan = read_plan(plan_text("0.01"))
    assert plan.subtasks[0].steps == [{"move_to": {"target": [0.1, 0, 0.2], "tolerance": 0.01}}]


def test_an_already_parsed_plan_is_checked_too():
    with pytest.raises(PlanError, match=r"subtasks\[0\]\.steps\[0\]\.move_to\.tolerance: must be "
                                        "a finite number, got nan"):
        read_plan(json.loads(plan_text("NaN")))


@pytest.mark.parametrize("depth", [200, 5000])
def test_a_plan_nested_thousands_deep_is_an_error_not_a_recursion_error(depth):
    steps = '{"invert": ' * depth + '{"wait": 1}' + "}" * depth
    text = f'{{"subtasks": [{{"goal": "deep", "steps": [{steps}]}}]}}'
    with pytest.raises(PlanError) as caught:
        read_plan(text)
    assert caught.value.problems == [{
        200: "subtasks[0].steps[0].invert.invert.invert.invert…invert.invert: nested more than 150 "
             "levels deep",
        5000: "the plan: nested more than 150 levels deep"}[depth]]


def test_a_plan_s_grasps_at_any_depth_are_handed_to_a_policy():
    plan = read_plan({"subtasks": [{"goal": "g", "steps": [
        {"subtree": "grasp", "with": {"object": "bowl"}},
        {"retry": {"n": 2, "child": {"subtree": "grasp", "with": {"object": "plate"}}}},
        {"subtree": "place", "with": {"object": "bowl", "target": "plate"}}]}]})
    steps = plan.grasping_with({"policy": "goal_act", "unstaged": 70}).subtasks[0].steps
    want = {"policy": "goal_act", "unstaged": 70}
    assert steps[0] == {"subtree": "vla_grasp", "with": {"object": "bowl", **want}}
    assert steps[1]["retry"]["child"] == {"subtree": "vla_grasp",
                                          "with": {"object": "plate", **want}}
    assert steps[2] == {"subtree": "place", "with": {"object": "bowl", "target": "plate"}}
    assert plan.subtasks[0].steps[0]["subtree"] == "grasp"  # the plan itself is kept
