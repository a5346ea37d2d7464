"""Tick contract of `plan_to` (`behaviours/plan_to.py`): a path planned around what blocks the
straight line, and UNREACHABLE before the arm moves when there is none."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.trees.harness import compile_node, errors, run
from tether.errors import TetherError
from tether.scenes.obstacles import ObstacleScene, shelf_scene

GOAL = [0.3, 0.0, 0.3]
# a wall across the straight line from the start (0, 0, 0.3) to GOAL
WALL = {"wall_1": ([0.15, 0.0, 0.3], [0.01, 0.15, 0.15])}


def _scene() -> ObstacleScene:
    return ObstacleScene({}, WALL, eef=(0.0, 0.0, 0.3))


def test_move_to_through_a_wall_ends_stuck_the_control_case(tmp_path):
    robot = _scene()
    root = compile_node(tmp_path, f"move_to: {{target: {GOAL}, name: go}}", robot)
    result, _ = run(root, robot)
    assert result.tree_status == "FAILURE"
    assert errors()[-1]["code"] == "STUCK"


def test_plan_to_goes_around_a_wall_that_blocks_the_straight_line(tmp_path):
    robot = _scene()
    root = compile_node(tmp_path, f"plan_to: {{target: {GOAL}, name: go}}", robot)
    result, frames = run(root, robot)

    assert result.tree_status == "SUCCESS"
    assert np.linalg.norm(frames[-1].eef - GOAL) <= 0.01
    assert not any(robot.blocked(f.eef) for f in frames)
    # it left the straight line: somewhere the hand passed beside or over the wall
    wall, half = robot.boxes["wall_1"].pos, robot.boxes["wall_1"].half
    assert max(max(abs(f.eef[1]) - half[1], f.eef[2] - wall[2] - half[2]) for f in frames) > 0
    assert all(f.commander == "go" for f in frames[:-1])


@pytest.mark.parametrize("goal", [[0.15, 0.0, 0.3],  # inside the wall
                                  [0.15, 0.0, 0.455]])  # boxed in: see below
def test_plan_to_an_unreachable_target_fails_unreachable_before_moving(tmp_path, goal):
    box = {"lid": ([0.15, 0.0, 0.49], [0.05, 0.05, 0.005]),
           "floor": ([0.15, 0.0, 0.42], [0.05, 0.05, 0.005]),
           **{f"side_{i}": ([0.15 + dx, dy, 0.455], [0.005 if dx else 0.05,
                                                       0.005 if dy else 0.05, 0.035])
              for i, (dx, dy) in enumerate([(0.05, 0), (-0.05, 0), (0, 0.05), (0, -0.05)])}}
    robot = ObstacleScene({}, {**WALL, **box} if goal[2] == 0.3 else box, eef=(0.0, 0.0, 0.3))
    root = compile_node(tmp_path, f"plan_to: {{target: {goal}, planning_checks: 3000}}", robot)
    result, frames = run(root, robot)

    assert result.tree_status == "FAILURE"
    assert len(frames) == 1 and frames[0].action is None and robot.steps == 0
    assert errors()[-1]["code"] == "UNREACHABLE"
    assert errors()[-1]["message"] == (
        "no collision-free arm configuration reaches the target" if goal[2] == 0.3
        else "no collision-free path found in 3000 collision checks")


@pytest.mark.parametrize(("allow", "outcome"), [("[]", "FAILURE"), ("[wall_1]", "SUCCESS")])
def test_plan_to_may_touch_only_what_allow_names(tmp_path, allow, outcome):
    robot = _scene()  # the target is against the wall: within the planner's clearance of it
    root = compile_node(tmp_path, f"plan_to: {{target: [0.14, 0.0, 0.3], allow: {allow}}}", robot)
    result, _ = run(root, robot)
    assert result.tree_status == outcome


def test_plan_to_in_a_kinematic_scene_goes_straight_through_its_boxes(tmp_path):
    """Nothing in a kinematic scene is solid: its configuration space has no obstacles."""
    from tests.trees.harness import scene

    robot = scene()
    root = compile_node(tmp_path, "plan_to: {target: [0.1, 0.0, 0.3]}", robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert np.linalg.norm(robot.eef_pose().pos - [0.1, 0.0, 0.3]) <= 0.01


def test_a_robot_without_geometry_has_no_motion_space_one_clear_error():
    from tests.trees.harness import scene
    from tether.scenes.robot import Robot

    with pytest.raises(TetherError, match="no geometry to plan motions in"):
        Robot.motion_space(scene(), [])


def test_plan_to_allow_must_be_a_list_of_names(tmp_path):
    with pytest.raises(TetherError, match=r"plan_to\.allow: expected a list of object names"):
        compile_node(tmp_path, "plan_to: {target: [0.1, 0.0, 0.3], allow: wall_1}", _scene())


# --- on a LIBERO scene (the Panda among MuJoCo's collision geometry) ---------------------------
LIBERO_TASK = "libero_goal/put_the_bowl_on_the_plate"
# from A to B at the same height the straight line passes through the standing wine bottle
A, B = [-0.30, -0.025, 0.99], [-0.10, -0.025, 0.99]


@pytest.fixture(scope="module")
def libero():
    from tether.scenes.libero_scene import LiberoScene

    scene = LiberoScene(LIBERO_TASK, init_state=0, seed=0)
    yield scene
    scene.close()


def _a_then_b(tmp_path, scene, verb: str):
    scene.reset()
    bottle = scene.pose_of("wine_bottle_1").pos.copy()
    root = compile_node(tmp_path, f"sequence: [move_to: {{target: {A}}}, "
                                  f"{verb}: {{target: {B}, name: go}}]", scene)
    result, frames = run(root, scene, budget=300)
    return result, frames, float(np.linalg.norm(scene.pose_of("wine_bottle_1").pos - bottle))


@pytest.mark.slow
def test_move_to_along_the_blocked_line_knocks_the_bottle_the_control_case(tmp_path, libero):
    _, _, moved = _a_then_b(tmp_path, libero, "move_to")
    assert moved > 0.01


@pytest.mark.slow
def test_plan_to_on_libero_goes_over_the_bottle_and_arrives(tmp_path, libero):
    result, frames, moved = _a_then_b(tmp_path, libero, "plan_to")

    assert result.tree_status == "SUCCESS"
    assert np.linalg.norm(libero.eef_pose().pos - B) <= 0.01
    assert moved < 1e-4  # untouched
    top = libero.extent_of("wine_bottle_1")[1][2]
    going = [f for f in frames if f.commander == "go"]
    assert max(f.eef[2] for f in going) > top  # it passed above the bottle, not through it


@pytest.mark.slow
def test_plan_to_on_libero_out_of_reach_fails_unreachable_before_moving(tmp_path, libero):
    libero.reset()
    root = compile_node(tmp_path, "plan_to: {target: [0.8, 0.0, 0.95], name: go}", libero)
    result, frames = run(root, libero)

    assert result.tree_status == "FAILURE"
    assert len(frames) == 1 and frames[0].action is None and libero.steps == 0
    assert errors()[-1]["code"] == "UNREACHABLE"


@pytest.mark.slow
def test_plan_to_carries_what_the_gripper_holds(tmp_path, libero):
    """The fingers closed on the bowl do not count as a collision along the way."""
    libero.reset()
    plate = libero.pose_of("plate_1").pos
    goal = [float(plate[0]), float(plate[1]), 1.05]
    root = compile_node(tmp_path, "sequence: [{subtree: grasp, with: {object: "
                                  "akita_black_bowl_1}}, "
                                  f"plan_to: {{target: {goal}, name: carry}}]", libero)
    result, _ = run(root, libero, budget=600)

    assert result.tree_status == "SUCCESS"
    assert libero.is_grasped("akita_black_bowl_1")
    assert np.linalg.norm(libero.eef_pose().pos - goal) <= 0.01


# --- plan_grasp --------------------------------------------------------------------------------
def test_plan_grasp_under_a_shelf_comes_in_from_the_side_and_reaches_the_grasp(tmp_path):
    robot = shelf_scene(0)
    root = compile_node(tmp_path, "plan_grasp: {object: cream_cheese_1, name: go}", robot)
    result, frames = run(root, robot)

    assert result.tree_status == "SUCCESS"
    cheese = robot.boxes["cream_cheese_1"].pos
    assert np.linalg.norm(robot.eef_pose().pos - cheese) <= 0.008
    assert not any(robot.blocked(f.eef) for f in frames)
    # the last 10 cm were straight in along +x (the first feasible grasp: from the side)
    way_in = [f.eef for f in frames if np.linalg.norm(f.eef - cheese) < 0.09]
    assert all(abs(p[1] - cheese[1]) < 0.01 and abs(p[2] - cheese[2]) < 0.01 for p in way_in)
    hand = Rotation.from_quat(robot.eef_pose().quat).apply([0.0, 0.0, 1.0])
    assert np.allclose(hand, [1.0, 0.0, 0.0], atol=0.05)


def test_plan_grasp_takes_the_next_feasible_grasp_when_it_starts_again(tmp_path):
    robot = shelf_scene(0)
    tree = ("retry: {n: 2, child: {sequence: [{plan_grasp: {object: cream_cheese_1, name: go}}, "
            "{check: {predicate: grasped, object: cream_cheese_1, error: EMPTY_GRASP}}]}}")
    root = compile_node(tmp_path, tree, robot)
    run(root, robot)  # the gripper never closes: both attempts end EMPTY_GRASP

    assert [e["code"] for e in errors()] == ["EMPTY_GRASP", "EMPTY_GRASP"]
    hand = Rotation.from_quat(robot.eef_pose().quat).apply([0.0, 0.0, 1.0])
    assert np.allclose(hand, [0.0, 1.0, 0.0], atol=0.05)  # the second: from the side, along +y


def test_plan_grasp_with_no_feasible_grasp_fails_unreachable_before_moving(tmp_path):
    robot = shelf_scene(0, sides_blocked=("-x", "+x", "-y", "+y"))
    root = compile_node(tmp_path, "plan_grasp: cream_cheese_1", robot)
    result, frames = run(root, robot)

    assert result.tree_status == "FAILURE" and robot.steps == 0
    assert errors()[-1]["message"] == ("'cream_cheese_1' has no grasp the arm reaches with the "
                                       "hand clear")


@pytest.mark.slow
def test_plan_grasp_on_libero_takes_the_bowl_and_lifts_it(tmp_path, libero):
    libero.reset()
    bowl = "akita_black_bowl_1"
    root = compile_node(tmp_path, f"sequence: [set_gripper: open, plan_grasp: {bowl}, "
                                  "set_gripper: close, move_to: {target: {relative: [0, 0, 0.1]}},"
                                  f" check: {{predicate: lifted, object: {bowl}, height: 0.05}}]",
                        libero)
    result, _ = run(root, libero, budget=300)
    assert result.tree_status == "SUCCESS"
    assert libero.is_grasped(bowl)


@pytest.mark.slow
def test_the_carried_object_moves_with_the_hand_in_the_plan_and_may_not_hit_anything(
        tmp_path, libero):
    """With the bowl held, a hand pose that keeps the fingers 1 cm over the table but sinks the
    bowl hanging below them into it is free only if the bowl is not carried."""
    libero.reset()
    bowl = "akita_black_bowl_1"
    root = compile_node(tmp_path, f"subtree: grasp\nwith: {{object: {bowl}}}", libero)
    result, _ = run(root, libero, budget=400)
    assert result.tree_status == "SUCCESS"
    here = libero.eef_pose()
    below = here.pos[2] - libero.extent_of(bowl)[0][2]  # the bowl's bottom under the fingertips
    table = libero.extent_of("plate_1")[0][2]
    low = here.pos + [0.0, 0.0, table + 0.01 + (below - 0.01) / 2 - here.pos[2]]
    assert below > 0.02

    loose = libero.motion_space([bowl])
    q = loose.solve(low, here.quat, 0)
    assert q is not None and loose.free(q)
    assert not libero.motion_space([bowl], carrying=bowl).free(q)
