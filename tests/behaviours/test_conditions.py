"""Tick contracts of `check` and `guard` (`behaviours/conditions.py`) over named predicates."""

from __future__ import annotations

import pytest

from tests.trees.harness import (
    BOWL,
    CHEESE,
    FAILURE,
    INVALID,
    PLATE,
    RUNNING,
    SUCCESS,
    compile_node,
    errors,
    move_box,
    run,
    scene,
    statuses,
)
from tether.blackboard.episode import storage
from tether.blackboard.references import MissingKey
from tether.errors import TickError


# --- check -------------------------------------------------------------------------------------
def test_check_succeeds_in_one_tick_without_commanding_when_the_predicate_holds(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "check: {predicate: gripper_open, name: open?}", robot)
    robot.step([0, 0, 0, 0, 0, 0, -1])  # the gripper was last commanded open
    result, frames = run(root, robot)
    assert [f.status["open?"] for f in frames] == [SUCCESS]
    assert frames[0].action is None and result.steps == 1


def test_check_fails_in_one_tick_and_is_never_running(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"check: {{predicate: grasped, object: {BOWL}}}", robot)
    result, frames = run(root, robot)
    assert [f.root for f in frames] == [FAILURE]
    assert result.steps == 0


def test_check_without_error_writes_no_error_code(tmp_path):
    robot = scene()
    run(compile_node(tmp_path, f"check: {{predicate: grasped, object: {BOWL}}}", robot), robot)
    assert storage()["/errors/last"] is None and errors() == []


def test_check_with_error_writes_that_code_to_errors_last_when_it_fails(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        check: {{predicate: grasped, object: {BOWL}, error: EMPTY_GRASP, name: holding?}}
        """, robot)
    run(root, robot)
    last = storage()["/errors/last"]
    assert last["code"] == "EMPTY_GRASP" and last["node"] == "holding?" and last["step"] == 0
    assert errors() == [last]


def test_check_with_error_writes_nothing_when_it_succeeds(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        check: {{predicate: on, object: {CHEESE}, target: {PLATE}, error: TARGET_MOVED}}
        """, robot)
    robot.boxes[CHEESE].pos[:] = [0.25, 0.0, 0.03]  # resting on the plate
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS" and errors() == []


def test_check_shorthand_names_a_predicate_without_arguments(tmp_path):
    robot = scene(goal=[])
    root = compile_node(tmp_path, "check: task_success", robot)
    assert root.name == "check task_success()"
    assert run(root, robot)[0].tree_status == "SUCCESS"


def test_check_arguments_take_their_predicates_defaults(tmp_path):
    robot = scene()
    # near: distance defaults to 0.05 m; the gripper starts 28 cm above the bowl's centre
    far = compile_node(tmp_path, f"check: {{predicate: near, object: gripper, target: {BOWL}}}",
                       robot)
    assert run(far, robot)[0].tree_status == "FAILURE"
    close = compile_node(tmp_path, f"""
        check: {{predicate: near, object: gripper, target: {BOWL}, distance: 0.3}}
        """, robot)
    assert run(close, robot)[0].tree_status == "SUCCESS"


def test_check_reads_a_blackboard_reference_when_it_is_ticked_not_when_compiled(tmp_path):
    robot = scene()
    robot.boxes[CHEESE].pos[:] = [0.25, 0.0, 0.03]  # the cheese is on the plate, the bowl is not
    root = compile_node(tmp_path, f"""
        sequence:
          - set: {{key: thing, value: {CHEESE}}}
          - check: {{predicate: on, object: "${{/user/thing}}", target: {PLATE}}}
        """, robot)
    assert run(root, robot)[0].tree_status == "SUCCESS"
    root = compile_node(tmp_path, f"""
        sequence:
          - set: {{key: thing, value: {BOWL}}}
          - check: {{predicate: on, object: "${{/user/thing}}", target: {PLATE}}}
        """, robot)
    assert run(root, robot)[0].tree_status == "FAILURE"


def test_check_of_a_blackboard_key_nobody_wrote_raises_missing_key(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "check: {predicate: grasped, object: '${/user/nobody}'}", robot)
    with pytest.raises(TickError, match="blackboard key '/user/nobody' has not been written") \
            as caught:
        run(root, robot)
    assert isinstance(caught.value.__cause__, MissingKey)


# --- guard -------------------------------------------------------------------------------------
GUARDED_REACH = f"""
    guard:
      predicate: near
      object: {BOWL}
      target: {PLATE}
      distance: 0.2
      name: bowl still there
      child: {{move_to: {{target: {{object: {BOWL}, offset: [0, 0, 0.1]}}, name: reach}}}}
    """


def test_guard_reflects_its_child_while_the_predicate_holds(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, GUARDED_REACH, robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert statuses(frames, "bowl still there") == statuses(frames, "reach")
    assert errors() == []


def test_guard_stops_the_running_child_when_the_predicate_stops_holding_and_the_robot_holds(
        tmp_path):
    robot = scene()
    root = compile_node(tmp_path, GUARDED_REACH, robot)
    # after tick 3 the bowl is pushed far from the plate
    result, frames = run(root, robot, events={3: move_box(BOWL, [-0.2, 0.0, 0.02])})
    assert statuses(frames, "reach") == [RUNNING] * 3 + [INVALID]
    assert statuses(frames, "bowl still there") == [RUNNING] * 3 + [FAILURE]
    assert all(f.commander == "reach" for f in frames[:3])
    assert frames[3].action is None  # the child never ran on the tick the guard failed
    assert result.tree_status == "FAILURE" and result.steps == 3


def test_guard_holds_the_robot_when_it_stops_its_child_inside_a_running_tree(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector:
          - guard:
              predicate: near
              object: {BOWL}
              target: {PLATE}
              distance: 0.2
              child: {{move_to: {{target: {{object: {BOWL}, offset: [0, 0, 0.1]}}, name: reach}}}}
          - wait: {{steps: 3, name: after}}
        """, robot)
    _, frames = run(root, robot, events={2: move_box(BOWL, [-0.2, 0.0, 0.02])})
    assert statuses(frames, "reach")[:3] == [RUNNING, RUNNING, INVALID]
    assert frames[2].status["after"] == RUNNING
    assert frames[2].holds_since(frames[1])  # no command on the preempting tick: the arm holds


def test_guard_failing_writes_condition_failed(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, GUARDED_REACH, robot)
    run(root, robot, events={1: move_box(BOWL, [-0.2, 0.0, 0.02])})
    assert [e["code"] for e in errors()] == ["CONDITION_FAILED"]
    assert errors()[0]["node"] == "bowl still there"


def test_guard_checks_its_predicate_before_the_first_tick_of_its_child(tmp_path):
    robot = scene()
    robot.boxes[BOWL].pos[:] = [-0.2, 0.0, 0.02]
    root = compile_node(tmp_path, GUARDED_REACH, robot)
    result, frames = run(root, robot)
    assert frames[0].status["reach"] == INVALID  # never ticked
    assert "reach" not in frames[0].visited
    assert result.tree_status == "FAILURE" and result.steps == 0


def test_guard_with_a_reference_reads_the_blackboard_every_tick(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - set: {{key: watched, value: {BOWL}}}
          - guard:
              predicate: near
              object: "${{/user/watched}}"
              target: {PLATE}
              distance: 0.2
              child: {{wait: {{steps: 5, name: pause}}}}
        """, robot)
    _, frames = run(root, robot, events={2: move_box(BOWL, [-0.2, 0.0, 0.02])})
    assert statuses(frames, "pause") == [RUNNING, RUNNING, INVALID]
