"""The executive's memory hooks: the event recorder writes one event per finished leaf (not per
poll), with error codes and boundaries; `open_store` understands none/fresh/PATH."""

from __future__ import annotations

from tests.trees.harness import BOWL, compile_node, scene
from tether.blackboard.events import event_log
from tether.session.memory import EventRecorder, open_store
from tether.trees.episode import run_episode


def test_the_recorder_logs_each_finished_leaf_once_with_its_error(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          name: pick
          children:
            - move_to: {{object: {BOWL}, offset: [0, 0, 0.05]}}
            - set_gripper: close
            - check: {{predicate: grasped, object: {BOWL}, error: EMPTY_GRASP}}
        """, robot)
    run_episode(root, robot, budget=300, observers=(EventRecorder(robot),))
    events = event_log()
    assert [(e.action, e.outcome, e.error, e.boundary) for e in events] == [
        ("move_to", "SUCCESS", None, False),
        ("set_gripper", "SUCCESS", None, False),
        ("check", "FAILURE", "EMPTY_GRASP", False),
        ("sequence", "FAILURE", None, True),
    ]
    assert events[0].render() == f"At step 12, move_to {BOWL}+[0, 0, 0.05] succeeded: 0.2 cm to go."


def test_a_polled_check_is_logged_when_its_result_changes(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        parallel:
          success_on: [settle]
          children:
            - check: {predicate: gripper_open}
            - sequence:
                name: settle
                children:
                  - wait: 3
                  - set_gripper: close
        """, robot)
    run_episode(root, robot, budget=300, observers=(EventRecorder(robot),))
    checks = [e for e in event_log() if e.action == "check"]
    assert [(c.outcome, c.boundary) for c in checks] == [("SUCCESS", False)]


def test_open_store_none_fresh_or_a_path(tmp_path):
    assert open_store("none", tmp_path) is None
    assert open_store("fresh", tmp_path / "run").path == tmp_path / "run" / "memory.db"
    assert open_store(tmp_path / "named.db", tmp_path).path == tmp_path / "named.db"
