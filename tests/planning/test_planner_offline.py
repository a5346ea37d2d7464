"""The offline `memory` planner: the instruction parser, grounding, remembered plans."""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError
from tether.memory.experience import SUCCESSES, Experience
from tether.memory.store import ExperienceStore
from tether.planning.instructions import Literal, parse
from tether.planning.offline import PLAN_KEY, MemoryPlanner, ground_goals, plan_goals
from tether.planning.request import PlanRequest
from tether.planning.skills import Goal, Part
from tether.scenes.joints import HINGE, SLIDE
from tether.scenes.referring import SceneFacts, ground

BOWLS = {"akita_black_bowl_1": [0.0, 0.2, 0.9], "akita_black_bowl_2": [0.0, 0.0, 0.9],
         "akita_black_bowl_3": [-0.2, -0.1, 0.9]}
FACTS = SceneFacts(
    entities=[*BOWLS, "plate_1", "glazed_rim_porcelain_ramekin_1", "basket_1",
              "basket_1_contain_region", "flat_stove_1", "flat_stove_1_cook_region",
              "wooden_cabinet_1", "wooden_cabinet_1_top_region", "wooden_cabinet_1_bottom_region",
              "wooden_cabinet_1_top_side", "main_table_next_to_plate_region", "porcelain_mug_1",
              "white_yellow_mug_1"],
    aliases={"porcelain dish": "glazed_rim_porcelain_ramekin_1"},
    fixtures={"flat_stove_1", "wooden_cabinet_1"},
    positions={**{k: np.array(v) for k, v in BOWLS.items()}, "plate_1": np.array([0.0, 0.3, 0.9]),
               "glazed_rim_porcelain_ramekin_1": np.array([0.0, -0.25, 0.9])},
    robot_position=np.array([-0.5, 0.0, 1.1]))
# what skill selection knows of them: small graspable things, drawers on slides, a knob's hinge
PARTS = {**{e: Part((0.05, 0.05, 0.05)) for e in FACTS.entities},
         **{e: Part((0.2, 0.15, 0.06), SLIDE, (0.0, 1.0, 0.0)) for e in FACTS.entities
            if e.endswith(("top_region", "bottom_region"))},
         "flat_stove_1": Part((0.3, 0.2, 0.07), HINGE, (0.0, -1.0, 0.0))}


@pytest.mark.parametrize("text,literals", [
    ("pick up the alphabet soup and place it in the basket",
     [Literal("in", "the alphabet soup", "the basket")]),
    ("put both the soup and the sauce in the basket",
     [Literal("in", "the soup", "the basket"), Literal("in", "the sauce", "the basket")]),
    ("open the top drawer and put the bowl inside",
     [Literal("open", "the top drawer"), Literal("in", "the bowl", "the top drawer")]),
    ("put the black bowl in the bottom drawer of the cabinet and close it",
     [Literal("in", "the black bowl", "the bottom drawer of the cabinet"),
      Literal("close", "the bottom drawer of the cabinet")]),
    ("first put the bowl on the plate, then the ramekin on the cookies",
     [Literal("on", "the bowl", "the plate"), Literal("on", "the ramekin", "the cookies")]),
    ("move the cheese so it is right next to the plate",
     [Literal("on", "the cheese", "next to the plate", location=True)]),
    ("of the three black bowls, move the centre one onto the plate",
     [Literal("on", "the centre black bowl", "the plate")]),
    ("push the open top drawer of the wooden cabinet shut",
     [Literal("close", "the open top drawer of the wooden cabinet")]),
    ("the cream cheese sits in front of the drawer; move it onto the plate",
     [Literal("on", "the cream cheese", "the plate")]),
    ("move the black bowl that is on the stove to the plate",
     [Literal("to", "the black bowl that is on the stove", "the plate")]),
])
def test_the_parser_reads_the_standard_verbs(text, literals):
    assert parse(text) == literals


def test_the_parser_quotes_what_it_cannot_read():
    with pytest.raises(TetherError, match="cannot read 'dance a little'"):
        parse("dance a little")


@pytest.mark.parametrize("phrase,role,entity", [
    ("the black bowl between the plate and the ramekin", "object", "akita_black_bowl_2"),
    ("the black bowl next to the plate", "object", "akita_black_bowl_1"),
    ("the bowl nearest the robot", "object", "akita_black_bowl_3"),
    ("the right bowl", "object", "akita_black_bowl_1"),
    ("the small porcelain dish in the clutter", "object", "glazed_rim_porcelain_ramekin_1"),
    ("the white mug", "object", "porcelain_mug_1"),
    ("the yellow and white mug", "object", "white_yellow_mug_1"),
    ("the basket", "in", "basket_1_contain_region"),
    ("the stove", "on", "flat_stove_1_cook_region"),
    ("top side of the cabinet", "on", "wooden_cabinet_1_top_side"),
    ("the cabinet", "on", "wooden_cabinet_1_top_side"),
    ("the top drawer", "in", "wooden_cabinet_1_top_region"),
    ("the lowest drawer of the wooden cabinet", "articulated", "wooden_cabinet_1_bottom_region"),
    ("next to the plate", "location", "main_table_next_to_plate_region"),
])
def test_grounding_uses_names_roles_and_positions(phrase, role, entity):
    assert ground(phrase, FACTS, role=role) == entity


def test_grounding_explains_an_ambiguous_or_unknown_phrase():
    with pytest.raises(TetherError, match="'the bowl' is ambiguous: it could be "
                                          "akita_black_bowl_1, akita_black_bowl_2"):
        ground("the bowl", FACTS)
    with pytest.raises(TetherError, match="no object 'the teapot'"):
        ground("the teapot", FACTS)


def test_in_a_bowl_is_on_it_and_in_a_container_is_in_it():
    goals = ground_goals(parse("put the ramekin in the middle bowl, then the right bowl into the "
                               "basket"), FACTS)
    assert goals == [Goal("on", ("glazed_rim_porcelain_ramekin_1", "akita_black_bowl_2")),
                     Goal("in", ("akita_black_bowl_1", "basket_1_contain_region"))]


def test_to_puts_into_a_receptacle_and_onto_anything_else():
    goals = ground_goals(parse("move the right bowl that is next to the plate to the basket, then "
                               "bring the ramekin to the stove, then the left bowl to the top "
                               "drawer, then the middle bowl to the plate"), FACTS)
    assert goals == [Goal("in", ("akita_black_bowl_1", "basket_1_contain_region")),
                     Goal("on", ("glazed_rim_porcelain_ramekin_1", "flat_stove_1_cook_region")),
                     Goal("in", ("akita_black_bowl_3", "wooden_cabinet_1_top_region")),
                     Goal("on", ("akita_black_bowl_2", "plate_1"))]


def test_an_alias_inside_a_relation_does_not_name_the_object():
    facts = SceneFacts(["cream_cheese_1", "plate_1", "wooden_cabinet_1_top_region"],
                       aliases={"open drawer": "wooden_cabinet_1_top_region"},
                       positions={"cream_cheese_1": np.zeros(3), "plate_1": np.ones(3),
                                  "wooden_cabinet_1_top_region": np.ones(3)})
    assert ground("the cream cheese by the open drawer", facts) == "cream_cheese_1"


def test_on_the_top_of_a_fixture_is_its_top_side_and_closest_to_is_no_destination():
    assert ground_goals(parse("place the bowl nearest the robot on the top of the cabinet"),
                        FACTS) == [Goal("on", ("akita_black_bowl_3", "wooden_cabinet_1_top_side"))]
    assert parse("put the bowl closest to the robot on the plate") == [
        Literal("on", "the bowl closest to the robot", "the plate")]


def test_a_goal_without_a_skill_is_reported_not_guessed():
    with pytest.raises(TetherError, match=r"no skill achieves open\(basket_1\) \(its part moves "
                       r"on no joint a skill works: none\)"):
        plan_goals("open the basket", [Goal("open", ("basket_1",))], PARTS)
    with pytest.raises(TetherError, match=r"no skill achieves fold\(plate_1\) \(skills: close, "):
        plan_goals("fold the plate", [Goal("fold", ("plate_1",))], PARTS)
    with pytest.raises(TetherError, match=r"\(nothing is known of akita_black_bowl_1, plate_1\)"):
        plan_goals("put the bowl on the plate", [Goal("on", ("akita_black_bowl_1", "plate_1"))],
                   {})


def test_turn_off_is_a_skill():
    goals = ground_goals(parse("turn off the stove"), FACTS)
    assert plan_goals("turn off the stove", goals, PARTS).subtasks[0].steps == [
        {"subtree": "turn_off", "with": {"knob": "flat_stove_1"}}]


def test_every_skill_names_a_library_tree_for_its_goal():
    """`close` is pushed shut by `close_drawer`; each skill's subtree says it achieves the goal."""
    import yaml

    from tether.planning.skills import RULES, steps_for
    from tether.trees.compiler import LIBRARY

    goals = ground_goals(parse("push the open top drawer of the wooden cabinet shut"), FACTS)
    assert goals == [Goal("close", ("wooden_cabinet_1_top_region",))]
    plan = plan_goals("shut it", goals, PARTS)
    assert plan.subtasks[0].steps == [
        {"subtree": "close_drawer", "with": {"drawer": "wooden_cabinet_1_top_region"}}]
    for predicate in RULES:
        args = ("basket_1", "plate_1") if predicate in ("on", "in") else (
            "flat_stove_1" if predicate.startswith("turn") else "wooden_cabinet_1_top_region",)
        for step in steps_for(Goal(predicate, args), PARTS):
            doc = yaml.safe_load((LIBRARY / f"{step['subtree']}.yaml").read_text())
            if step["subtree"] != "grasp":
                assert predicate in doc.get("goal", [predicate]), (predicate, step)


def test_the_memory_planner_uses_a_remembered_plan_for_a_paraphrase_the_parser_cannot_read(
        tmp_path):
    store = ExperienceStore(tmp_path / "m.db", embedder="hashing")
    old = plan_goals("put the middle bowl on the plate",
                     [Goal("on", ("akita_black_bowl_2", "plate_1"))], PARTS)
    store.add(Experience(SUCCESSES, task="t", instruction="put the middle bowl on the plate",
                         objects=["akita_black_bowl_2", "plate_1"], outcome="success",
                         metadata={PLAN_KEY: old.to_json()}))
    text = "the middle one, onto the plate with it"  # refused by both
    with pytest.raises(TetherError):
        MemoryPlanner().plan(PlanRequest(text, FACTS, parts=PARTS))
    plan = MemoryPlanner(store, threshold=0.3).plan(PlanRequest(text, FACTS, parts=PARTS))
    assert plan.planner.startswith("memory:")
    assert plan.subtasks[0].expect == [{"predicate": "on", "object": "akita_black_bowl_2",
                                        "target": "plate_1"}]
