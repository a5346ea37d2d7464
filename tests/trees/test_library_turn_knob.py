"""turn_on.yaml, turn_off.yaml: the knob tree (turn_knob.yaml) on LIBERO's flat stove."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.scenes.predicates import evaluate
from tether.session.run import RunConfig, run
from tether.session.session import SessionConfig
from tether.trees.compiler import LIBRARY, compile_tree, goal_bindings, read_tree_file

TREE = LIBRARY / "turn_on.yaml"
TASK = "libero_goal/turn_on_the_stove"


def test_turn_on_binds_its_stove_from_a_turn_on_goal():
    tf = read_tree_file(TREE)
    assert goal_bindings(tf, [("turn_on", "flat_stove_1")]) == {"knob": "flat_stove_1"}
    assert compile_tree(TREE, placeholders=True).nodes >= 1


@pytest.mark.slow
def test_turn_on_turns_the_knob_past_libero_s_on_angle(tmp_path: Path):
    from tether.scenes.libero_scene import LiberoScene

    scene = LiberoScene(TASK, 0)
    try:
        assert not evaluate(scene, "turn_on", {"object": "flat_stove_1"})
    finally:
        scene.close()
    record = run(RunConfig(TREE, SessionConfig(TASK, seed=0, init_state=0, runs=tmp_path)))
    assert record.result.success, record.result.errors
    assert record.result.tree_status == "SUCCESS"


LIT = "libero_10/KITCHEN_SCENE8_put_both_moka_pots_on_the_stove"  # starts with the stove on


def test_turn_off_binds_its_knob_from_a_turn_off_goal():
    tf = read_tree_file(LIBRARY / "turn_off.yaml")
    assert goal_bindings(tf, [("turn_off", "flat_stove_1")]) == {"knob": "flat_stove_1"}
    assert compile_tree(LIBRARY / "turn_off.yaml", placeholders=True).nodes >= 1


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the push stalls 2 cm after touching the lit knob's bar "
                   "(libero_10/8's stove at 1.44 rad): from the robot's side the push runs into "
                   "the stove's top, from the pointer's side the hand stands over it; not solved")
def test_turn_off_turns_a_lit_stove_off(tmp_path: Path):
    from tether.scenes.libero_scene import LiberoScene

    scene = LiberoScene(LIT, 0)
    try:
        assert evaluate(scene, "turn_on", {"object": "flat_stove_1"})
        assert scene.joint_of("flat_stove_1").open > 0.5
    finally:
        scene.close()
    record = run(RunConfig(LIBRARY / "turn_off.yaml", SessionConfig(
        LIT, seed=0, init_state=0, runs=tmp_path), given={"knob": "flat_stove_1"}))
    # the tree's last step checks `turn_off`: it succeeds only with the stove off
    assert record.result.tree_status == "SUCCESS", record.result.errors
