"""The memory nodes: `retrieve` writes the memory keys in one tick (defaults when memory is off)
and leaves read its choice through `${/memory/params/NAME}`; `remember` adds a note event."""

from __future__ import annotations

import numpy as np

from tests.trees.harness import BOWL, compile_node, run, scene
from tether.blackboard.episode import storage
from tether.blackboard.events import event_log
from tether.memory.experience import SUCCESSES, Experience
from tether.memory.store import ExperienceStore


def test_retrieve_succeeds_in_one_tick_and_a_move_to_uses_its_choice(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - retrieve: {{defaults: {{approach: [0, 0, 0.05]}}}}
          - move_to: {{object: {BOWL}, offset: "${{/memory/params/approach}}", tolerance: 0.005}}
        """, robot)
    result, frames = run(root, robot)
    assert frames[0].status["retrieve approach"].value == "SUCCESS"
    assert result.tree_status == "SUCCESS"
    assert np.allclose(robot.eef_pose().pos, robot.pose_of(BOWL).pos + [0, 0, 0.05], atol=0.005)
    assert storage()["/memory/advice"]["approach"]["source"] == "default"


def test_retrieve_takes_the_store_from_setup(tmp_path):
    robot = scene()
    store = ExperienceStore(tmp_path / "m.db", "hashing")
    store.add(Experience(partition=SUCCESSES, task="t", instruction="move the bowl",
                         objects=robot.entities(), outcome="success",
                         params={"approach": [0, 0, 0.08]}))
    root = compile_node(tmp_path, "retrieve: {defaults: {approach: [0, 0, 0.05]}}", robot)
    run(root, robot, instruction="move the bowl", memory=store)
    assert storage()["/memory/params/approach"] == [0, 0, 0.08]


def test_remember_adds_a_note_event_with_placeholders_filled(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence:
          - wait: 2
          - remember: {note: "task ${/task/name} half done", boundary: true}
        """, robot)
    run(root, robot, task="demo")
    notes = [e for e in event_log() if e.outcome == "NOTE"]
    assert [(n.args, n.boundary, n.step) for n in notes] == [("task demo half done", True, 2)]
    assert notes[0].render() == "At step 2, note: task demo half done."
