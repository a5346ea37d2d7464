"""The plan format's JSON Schema is generated from the node registry and the library."""

from __future__ import annotations

import jsonschema
import pytest

from tether.behaviours.primitives import Wait
from tether.planning.prompt import system_prompt
from tether.planning.schema import plan_schema
from tether.trees import nodes
from tether.trees.nodes import LEAF, NODE_TYPES, NodeType, Spec
from tether.trees.values import Int

PLAN = {"instruction": "put the bowl on the plate", "subtasks": [{
    "goal": "bowl on plate",
    "expect": [{"predicate": "on", "object": "akita_black_bowl_1", "target": "plate_1"}],
    "steps": [{"subtree": "grasp", "with": {"object": "akita_black_bowl_1"}},
              {"retry": {"n": 2, "child": {"move_to": {"object": "plate_1", "at": "top"}}}},
              {"sequence": [{"set_gripper": "open"}, {"wait": 5}]},
              {"check": {"predicate": "grasped", "object": "akita_black_bowl_1"}}]}]}


def valid(plan: dict, **kwargs) -> bool:
    try:
        jsonschema.validate(plan, plan_schema(**kwargs))
        return True
    except jsonschema.ValidationError:
        return False


def test_every_node_type_and_library_tree_is_in_the_schema():
    schema = plan_schema()
    assert set(NODE_TYPES) <= set(schema["$defs"])
    trees = {alt["properties"]["subtree"]["const"] for alt in schema["$defs"]["subtree"]["oneOf"]}
    assert {"grasp", "place", "pick_place", "open_drawer"} <= trees


def test_a_plan_in_the_tree_language_is_valid():
    jsonschema.Draft202012Validator.check_schema(plan_schema())
    assert valid(PLAN)


@pytest.mark.parametrize("step", [{"pick_up": {"object": "bowl"}},
                                  {"move_to": {"object": "plate_1", "tolerance": "high"}},
                                  {"subtree": "grasp", "with": {"thing": "bowl"}},
                                  {"set_gripper": "half"}])
def test_a_wrong_step_is_invalid(step):
    plan = {"subtasks": [{"goal": "g", "steps": [step]}]}
    assert not valid(plan)


def test_with_a_scene_entity_names_are_an_enum():
    assert valid(PLAN, entities=["akita_black_bowl_1", "plate_1"])
    assert not valid(PLAN, entities=["akita_black_bowl_1"])


@pytest.fixture
def new_node_type():
    nodes.register(NodeType("pause_here", LEAF, "Hold for `ticks` ticks.",
                            lambda name, ticks: Wait(name, ticks),
                            params={"ticks": Spec(Int(1), doc="how long")}, primary="ticks"))
    yield
    NODE_TYPES.unregister("pause_here")


def test_a_new_node_type_appears_in_the_schema_and_the_prompt_without_code(new_node_type):
    assert valid({"subtasks": [{"goal": "g", "steps": [{"pause_here": 3}]}]})
    assert not valid({"subtasks": [{"goal": "g", "steps": [{"pause_here": 0}]}]})
    assert "- pause_here (leaf): Hold for `ticks` ticks. Parameters: ticks: int." \
        in system_prompt()
