"""The tick loop (`trees/episode.py`): one tick is one control step, the robot holds when no leaf
commands, budgets count steps, every episode starts clean, success is the task's own test."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from tests.trees.harness import (
    BOWL,
    CHEESE,
    PLATE,
    Status,
    compile_node,
    compile_path,
    errors,
    node_file,
    run,
    scene,
    tree_file,
)
from tether.behaviours.primitives import MoveTo, Wait
from tether.blackboard.episode import CommandConflict, storage
from tether.blackboard.references import MissingKey
from tether.errors import TetherError, TickError
from tether.scenes.robot import CLOSE
from tether.trees.episode import interrupt_between_ticks, run_episode

PICK_PLACE_STEPS = f"""
      - move_to: {{object: {BOWL}}}
      - set_gripper: close
      - move_to: {{object: {PLATE}, at: top, offset: [0, 0, 0.03]}}
      - set_gripper: open
"""
PICK_PLACE = "sequence:" + PICK_PLACE_STEPS


def test_one_tick_is_one_control_step(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{wait: 3}, {move_to: [0.1, 0, 0.2]}, {wait: 2}]",
                        robot)
    result, frames = run(root, robot)
    assert [f.steps for f in frames[:-1]] == list(range(1, len(frames)))
    assert result.steps == len(frames) - 1  # the tick on which the root finishes is not stepped
    assert result.sim_time == pytest.approx(result.steps * robot.control_dt)


def test_the_robot_holds_its_pose_when_no_leaf_commands(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{move_to: [0.1, 0, 0.2]}, {wait: 5}]", robot)
    _, frames = run(root, robot)
    moved = [i for i, f in enumerate(frames) if f.action is not None]
    held = frames[moved[-1] + 2:]  # the tick move_to succeeds is stepped without a command too
    assert len(held) >= 4
    assert all(f.holds_since(frames[moved[-1] + 1]) for f in held)


def test_the_robot_holds_the_gripper_as_last_commanded(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{set_gripper: close}, {wait: 5}]", robot)
    run(root, robot)
    assert robot.gripper_command == CLOSE and robot.gripper_width() == 0.0


def test_two_commanders_in_one_tick_raise_command_conflict(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        parallel:
          - move_to: {target: [0.1, 0, 0.3], name: first}
          - rotate: {yaw: 0.5, name: second}
        """, robot)
    with pytest.raises(TickError, match="two leaves commanded the robot in one tick") as caught:
        run(root, robot)
    assert isinstance(caught.value.__cause__, CommandConflict)
    assert robot.steps == 0


def test_budget_ends_the_episode_after_that_many_steps_with_ended_by_budget(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "wait: {steps: 100, name: long wait}", robot)
    result, frames = run(root, robot, budget=7)
    assert result.ended_by == "budget"
    assert result.steps == 7 and len(frames) == 7
    assert result.tree_status == "RUNNING"
    assert result.node_status == {"long wait": "RUNNING"}  # as it was when the budget ran out
    assert root.status == Status.INVALID  # and the tree was stopped


def test_budget_counts_steps_already_taken_by_the_robot(tmp_path):
    robot = scene()
    robot.hold()
    robot.hold()
    result, _ = run(compile_node(tmp_path, "wait: 100", robot), robot, budget=5)
    assert result.steps == 5


def test_a_tree_that_finishes_within_its_budget_ends_by_tree(tmp_path):
    robot = scene()
    result, _ = run(compile_node(tmp_path, "wait: 3", robot), robot, budget=4)
    assert (result.ended_by, result.tree_status, result.steps) == ("tree", "SUCCESS", 3)


def test_every_episode_starts_from_a_clean_blackboard(tmp_path):
    robot = scene()
    first = compile_node(tmp_path, f"""
        sequence:
          - set: {{key: note, value: remembered}}
          - check: {{predicate: grasped, object: {BOWL}, error: EMPTY_GRASP}}
        """, robot)
    run(first, robot)
    assert storage()["/user/note"] == "remembered" and len(errors()) == 1
    (tmp_path / "second").mkdir()
    second = compile_node(tmp_path / "second", "wait: 1", robot)
    run(second, robot, task="t2")
    assert "/user/note" not in storage()
    assert storage()["/errors/last"] is None and errors() == []
    assert storage()["/task/name"] == "t2"


def test_a_reference_to_a_key_written_in_an_earlier_episode_is_not_found(tmp_path):
    robot = scene()
    run(compile_node(tmp_path, f"set: {{key: obj, value: {BOWL}}}", robot), robot)
    (tmp_path / "b").mkdir()
    root = compile_node(tmp_path / "b", "check: {predicate: grasped, object: '${/user/obj}'}",
                        robot)
    with pytest.raises(TickError) as caught:
        run(root, robot)
    assert isinstance(caught.value.__cause__, MissingKey)


def test_the_episode_writes_the_task_namespace(tmp_path):
    robot = scene()
    run(compile_node(tmp_path, "wait: 0", robot), robot, task="demo/put_bowl",
        instruction="put the bowl on the plate", params={"object": BOWL})
    store = storage()
    assert store["/task/name"] == "demo/put_bowl"
    assert store["/task/instruction"] == "put the bowl on the plate"
    assert store["/task/params"] == {"object": BOWL}
    assert store["/scene/entities"] == [BOWL, PLATE, CHEESE]


def test_success_is_the_tasks_own_predicate_not_the_trees_status(tmp_path):
    robot = scene()
    result, _ = run(compile_node(tmp_path, "wait: 1", robot), robot)
    assert (result.tree_status, result.success) == ("SUCCESS", False)

    robot = scene()
    (tmp_path / "b").mkdir()
    root = compile_node(tmp_path / "b", f"""sequence:{PICK_PLACE_STEPS}
      - check: {{predicate: grasped, object: {BOWL}}}  # fails: the bowl was let go
""", robot)
    result, _ = run(root, robot)
    assert (result.tree_status, result.success) == ("FAILURE", True)


def test_until_goal_ends_the_episode_at_the_first_step_the_goal_holds(tmp_path):
    """LIBERO's protocol: the goal held after step 5 (and broke again after step 7)."""
    def briefly() -> bool:
        return 5 <= robot.steps <= 7

    robot = scene()
    root = compile_node(tmp_path, "wait: {steps: 100, name: long wait}", robot)
    result, frames = run(root, robot, budget=20, outcome=briefly, until_goal=True)
    assert (result.ended_by, result.success, result.steps, len(frames)) == ("goal", True, 5, 5)
    assert result.tree_status == "RUNNING" and root.status == Status.INVALID

    robot = scene()
    (tmp_path / "b").mkdir()
    root = compile_node(tmp_path / "b", "wait: {steps: 100, name: long wait}", robot)
    result, _ = run(root, robot, budget=20, outcome=briefly)
    assert (result.ended_by, result.success, result.steps) == ("budget", False, 20)


def test_a_pick_and_place_tree_achieves_the_task_on_the_kinematic_scene(tmp_path):
    robot = scene()
    result, _ = run(compile_node(tmp_path, PICK_PLACE, robot), robot)
    assert result.success and result.tree_status == "SUCCESS"
    assert robot.pose_of(BOWL).pos[:2] == pytest.approx([0.25, 0.0], abs=0.01)


def test_the_result_records_the_final_status_of_every_node_by_path(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        selector:
          - check: {predicate: grasped, object: plate_1, error: EMPTY_GRASP}
          - sequence: [{wait: 0}, {wait: 0}]
          - wait: {steps: 2, name: never}
        """, robot)
    result, _ = run(root, robot)
    assert result.node_status == {
        "selector": "SUCCESS",
        "selector/check grasped(plate_1)": "FAILURE",
        "selector/sequence": "SUCCESS",
        "selector/sequence/wait 0": "SUCCESS",
        "selector/sequence/wait 0#2": "SUCCESS",
        "selector/never": "INVALID",
    }
    assert [e["code"] for e in result.errors] == ["EMPTY_GRASP"]


def test_node_status_shows_children_a_memory_selector_skipped_when_resuming_as_invalid(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        selector:
          - check: {predicate: grasped, object: plate_1, name: first try}
          - wait: {steps: 2, name: second try}
        """, robot)
    result, frames = run(root, robot)
    assert frames[0].status["first try"] == Status.FAILURE
    # py_trees resets the children before the one it resumes, so the record shows INVALID
    assert result.node_status["selector/first try"] == "INVALID"
    assert result.node_status["selector/second try"] == "SUCCESS"


def test_observers_see_every_tick_with_its_action_and_commander(tmp_path):
    robot = scene()
    seen = []
    root = compile_node(tmp_path, "sequence: [{wait: 1}, {move_to: {target: [0, 0, 0.2], "
                        "name: down}}]", robot)
    run_episode(root, robot, budget=50, observers=(seen.append,))
    assert [t.index for t in seen] == list(range(1, len(seen) + 1))
    assert seen[0].action is None and seen[0].commander is None and seen[0].tip == "wait 1"
    assert seen[1].commander == "down" and isinstance(seen[1].action, np.ndarray)
    assert seen[-1].root == Status.SUCCESS


# --- an exception while the tree runs: one located line (TickError) ----------------------------
READS_NOBODY = """
sequence:
  name: pick
  children:
    - wait: 1
    - check: {predicate: grasped, object: "${/user/nobody}", name: holding}
"""


def test_a_missing_key_ends_the_episode_as_one_line_naming_the_node_and_its_line(tmp_path,
                                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)  # the file is shown relative to the working directory
    robot = scene()
    root = compile_path(node_file(tmp_path, READS_NOBODY), robot).root
    with pytest.raises(TickError) as caught:
        run(root, robot)
    error = caught.value
    assert str(error) == ("tree.yaml:6: in 'pick/holding': blackboard key '/user/nobody' has not "
                          "been written")
    assert (error.node, error.origin) == ("pick/holding", "tree.yaml:6")
    assert isinstance(error, TetherError)
    assert isinstance(error.__cause__, MissingKey)
    assert robot.steps == 1  # the wait's tick was stepped, the failing tick was not


def test_an_error_inside_a_subtree_names_the_line_in_the_subtrees_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tree_file(tmp_path, """
        tree: part
        root:
          sequence:
            - wait: 1
            - check: {predicate: grasped, object: "${/user/nobody}", name: holding}
        """, "part.yaml")
    path = node_file(tmp_path, "sequence: [{wait: 1}, {subtree: part, name: grasp}]")
    robot = scene()
    with pytest.raises(TickError) as caught:
        run(compile_path(path, robot).root, robot)
    assert str(caught.value) == ("part.yaml:5: in 'sequence/grasp/holding': blackboard key "
                                 "'/user/nobody' has not been written")


def test_a_guard_whose_predicate_raises_is_the_node_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    robot = scene()
    root = compile_node(tmp_path, """
        guard:
          predicate: near
          object: "${/user/nobody}"
          target: plate_1
          child: {wait: 5}
        """, robot)
    with pytest.raises(TickError) as caught:
        run(root, robot)
    assert caught.value.origin == "tree.yaml:2"
    assert caught.value.node == root.name
    assert isinstance(caught.value.__cause__, MissingKey)


def test_any_exception_in_a_leaf_is_located_with_its_type(tmp_path, monkeypatch):
    def broken(self):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(Wait, "update", broken)
    monkeypatch.chdir(tmp_path)
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{move_to: [0.1, 0, 0.3]}, {wait: 2}]", robot)
    with pytest.raises(TickError) as caught:
        run(root, robot)
    assert str(caught.value) == ("tree.yaml:2: in 'sequence/wait 2': ZeroDivisionError: "
                                 "division by zero")
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


def test_an_exception_in_terminate_when_the_budget_stops_the_tree_is_located(tmp_path,
                                                                            monkeypatch):
    def broken(self, new_status):
        raise RuntimeError("cannot let go")

    monkeypatch.setattr(MoveTo, "terminate", broken)
    monkeypatch.chdir(tmp_path)
    robot = scene()
    root = compile_node(tmp_path, "move_to: {target: [0.1, 0, 0.3], name: reach}", robot)
    with pytest.raises(TickError, match=r"^tree.yaml:2: in 'reach': RuntimeError: cannot let go$"):
        run(root, robot, budget=2)


def test_an_exception_in_setup_is_located(tmp_path, monkeypatch):
    def broken(self, **kwargs):
        raise ValueError("no robot for me")

    monkeypatch.setattr(Wait, "setup", broken)
    monkeypatch.chdir(tmp_path)
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{wait: 1, name: pause}]", robot)
    with pytest.raises(TickError, match=r"^tree.yaml:2: in 'sequence/pause': ValueError: no robot "
                                        r"for me$"):
        run(root, robot)
    assert robot.steps == 0


def test_an_exception_outside_every_node_of_the_tree_is_not_relocated(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "wait: 3", robot)

    def observer(tick):
        raise KeyError("an observer's own bug")

    with pytest.raises(KeyError):
        run_episode(root, robot, budget=5, observers=(observer,))


def test_a_tree_100_nodes_deep_runs(tmp_path):
    robot = scene()
    node = "{wait: 1}"
    for _ in range(99):
        node = f"{{invert: {node}}}"
    root = compile_node(tmp_path, node, robot)
    result, _ = run(root, robot)
    assert len(result.node_status) == 100
    assert result.tree_status == "FAILURE"  # 99 inverters of a success


# --- Ctrl-C: taken at the next tick boundary ----------------------------------------------------
@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, as in a command run at a terminal (a background test run
    may ignore SIGINT)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_in_the_middle_of_a_step_ends_the_episode_after_that_step(tmp_path,
                                                                         python_sigint):
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{move_to: [0.1, 0, 0.2]}, {wait: 50}]", robot)
    step = robot.step

    def ctrl_c_on_third(action):
        if robot.steps == 2:
            os.kill(os.getpid(), signal.SIGINT)  # delivered while the step is under way
        step(action)

    robot.step = ctrl_c_on_third
    with pytest.raises(KeyboardInterrupt):
        run_episode(root, robot, budget=100)
    assert robot.steps == 3
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_raises_at_once(python_sigint):
    with interrupt_between_ticks() as interrupted:
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            interrupted()


def test_an_ignored_ctrl_c_stays_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupt_between_ticks() as interrupted:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            interrupted()
    finally:
        signal.signal(signal.SIGINT, before)
