"""turn_on.yaml: the knob tree turns LIBERO's flat stove on."""

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
    assert goal_bindings(tf, [("turn_on", "flat_stove_1")]) == {"stove": "flat_stove_1"}
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
