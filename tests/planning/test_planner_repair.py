"""Plans as LLMs write them: read, checked by the compiler, repaired with exact messages."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from tests.trees.harness import BOWL, PLATE, scene
from tether.models.planners import ChatMessage
from tether.planning.llm import LLMPlanner
from tether.planning.plan import PlanError, check_plan, read_plan
from tether.planning.request import PlanRequest
from tether.scenes.referring import SceneFacts

GOOD = {"instruction": "put the bowl on the plate", "subtasks": [{
    "goal": "bowl on plate", "expect": [{"predicate": "on", "object": "bowl", "target": "plate"}],
    "steps": [{"subtree": "grasp", "with": {"object": "black bowl"}},
              {"subtree": "place", "with": {"object": "black bowl", "target": "plate"}}]}]}


class Scripted:
    """A chat backend that answers with the given replies, in order, and keeps what it saw."""

    name = "scripted"

    def __init__(self, *replies: str):
        self.replies = list(replies)
        self.seen: list[list[ChatMessage]] = []

    def complete(self, messages):
        self.seen.append(list(messages))
        return self.replies.pop(0)


def problems(reply: str) -> list[str]:
    robot = scene()
    try:
        return check_plan(read_plan(reply), robot.resolve)
    except PlanError as exc:
        return exc.problems


def with_step(step: dict) -> str:
    plan = json.loads(json.dumps(GOOD))
    plan["subtasks"][0]["steps"][1] = step
    return json.dumps(plan)


def test_a_well_formed_plan_in_prose_and_a_fence_has_no_problems():
    reply = "Sure! Here is the plan:\n```json\n" + json.dumps(GOOD, indent=2) + "\n```\nDone."
    assert problems(reply) == []


def test_invalid_json_is_reported_with_its_line_and_column():
    assert problems('{"subtasks": [{"goal": "x", "steps": [}]}') == [
        "invalid JSON at line 1 column 39: Expecting value"]


def test_a_reply_without_json_says_what_a_plan_is():
    assert problems("I would pick up the bowl first.") == [
        'the reply contains no JSON object (a plan is {"subtasks": [...]})']


def test_a_hallucinated_node_type_is_named_with_a_did_you_mean():
    assert problems(with_step({"pick_up": {"object": "black bowl"}})) == [
        "subtasks[0].steps[1].pick_up: unknown node type 'pick_up'"]


def test_a_hallucinated_object_is_reported_at_its_parameter():
    found = problems(with_step({"move_to": {"object": "red cup"}}))
    assert found == ["subtasks[0].steps[1].move_to.target: no entity 'red cup' in this scene"]


def test_a_wrong_parameter_type_is_reported_with_what_was_expected():
    assert problems(with_step({"move_to": {"object": "plate", "tolerance": "high"}})) == [
        "subtasks[0].steps[1].move_to.tolerance: expected a number, got 'high'"]


def test_a_bad_expected_effect_is_located_in_expect():
    plan = json.loads(json.dumps(GOOD))
    plan["subtasks"][0]["expect"] = [{"predicate": "grasp", "object": "bowl"}]
    assert problems(json.dumps(plan)) == [
        "subtasks[0].expect[0].predicate: unknown predicate 'grasp' (did you mean 'grasped'?)"]


def test_a_wrong_shape_lists_every_problem():
    assert problems('{"steps": [], "subtasks": [{"goal": 3}]}') == [
        "unknown key 'steps' (a plan has instruction, subtasks)",
        "subtasks[0].goal: expected a string saying what the sub-task achieves",
        "subtasks[0].steps: expected a non-empty list of nodes"]


def request() -> PlanRequest:
    robot = scene()
    return PlanRequest("put the bowl on the plate", SceneFacts.of(robot), resolve=robot.resolve)


def test_the_repair_loop_sends_the_exact_problems_back_and_uses_the_fixed_plan():
    backend = Scripted(with_step({"pick_up": {"object": "black bowl"}}), json.dumps(GOOD))
    plan = LLMPlanner(backend, attempts=3).plan(request())
    assert [s.steps[0]["subtree"] for s in plan.subtasks] == ["grasp"]
    repair = backend.seen[1][-1]
    assert repair.role == "user" and "- subtasks[0].steps[1].pick_up: unknown node type 'pick_up'" \
        in repair.text


def test_the_repair_loop_ends_in_a_clear_failure_after_n_replies():
    backend = Scripted("not json", "{", with_step({"move_to": {"object": "red cup"}}))
    with pytest.raises(PlanError) as exc:
        LLMPlanner(backend, attempts=3).plan(request())
    assert str(exc.value).splitlines() == [
        "no usable plan after 3 replies from the scripted planner; the last one had these "
        "problems:",
        "  subtasks[0].steps[1].move_to.target: no entity 'red cup' in this scene"]


def test_the_prompt_lists_the_scene_and_the_vocabulary_from_the_registry():
    backend = Scripted(json.dumps(GOOD))
    LLMPlanner(backend).plan(request())
    system, user = backend.seen[0][0].text, backend.seen[0][1].text
    assert "- move_to (leaf)" in system and "- grasp(object: entity" in system
    assert f"- {BOWL} (object; also: black bowl)" in user and PLATE in user


def test_a_plan_is_checked_in_memory_and_located_by_plan_path_without_a_file(tmp_path,
                                                                            monkeypatch):
    def no_file(*args, **kwargs):
        raise AssertionError("a plan check wrote a file")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tempfile, "mkdtemp", no_file)
    monkeypatch.setattr(Path, "write_text", no_file)
    monkeypatch.chdir(tmp_path)
    found = problems(with_step({"subtree": "place", "with": {"object": "black bowl",
                                                             "target": "red cup"}}))
    assert found == ["subtasks[0].steps[1].with.target: parameter 'target' of 'place': no entity "
                     "'red cup' in this scene"]
    assert list(tmp_path.iterdir()) == []
