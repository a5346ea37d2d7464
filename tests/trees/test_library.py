"""The authored tree library: every tree validates, and pick_place solves real LIBERO tasks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import py_trees
import pytest

from tether.replay.recorder import FrameSettings
from tether.replay.trace import read_trace
from tether.scenes.grasps import STALLS
from tether.session.run import RunConfig, run
from tether.session.session import SessionConfig
from tether.trees.compiler import LIBRARY, compile_tree

FAILURE = py_trees.common.Status.FAILURE

LIBRARY_TREES = sorted(LIBRARY.glob("*.yaml"))


def test_library_has_the_trees_the_readme_names():
    names = {p.stem for p in LIBRARY_TREES}
    assert {"pick_place", "grasp", "place"} <= names


@pytest.mark.parametrize("path", LIBRARY_TREES, ids=lambda p: p.stem)
def test_every_library_tree_compiles_without_a_task(path: Path):
    compiled = compile_tree(path, placeholders=True)
    assert compiled.nodes >= 1


@pytest.mark.slow
@pytest.mark.parametrize("task, init_state", [
    ("libero_goal/put_the_bowl_on_the_plate", 0),
    ("libero_spatial/0", 1),
    ("libero_spatial/7", 2),
])
def test_pick_place_succeeds_on_libero(task: str, init_state: int, tmp_path: Path):
    record = run(RunConfig(LIBRARY / "pick_place.yaml", SessionConfig(
        task, seed=init_state, init_state=init_state, runs=tmp_path, frames=FrameSettings(),
        memory="none")))  # frames: see test_viewer
    result = record.result
    assert result.success, (task, init_state, result.errors)
    assert result.tree_status == "SUCCESS"
    run_dir = Path(record.run_dir)
    assert {"result.json", "trace.jsonl", "tree.txt"} <= {p.name for p in run_dir.iterdir()}
    assert sum(r["k"] == "tick" for r in read_trace(run_dir)) >= result.steps


@pytest.mark.slow
def test_pick_place_comes_back_from_above_when_the_bowl_jumps_under_the_descending_hand(
        tmp_path: Path):
    """`object_move` at seed 10: the bowl jumps 8 cm as the hand comes down to its rim. The
    descent stops (TARGET_MOVED) rather than follow it sideways at rim height, and the grasp is
    taken again from above (followed, the bowl was shoved away and never held: STUCK, then
    EMPTY_GRASP to the end)."""
    record = run(RunConfig(LIBRARY / "pick_place.yaml", SessionConfig(
        "libero_goal/put_the_bowl_on_the_plate", seed=10, init_state=10, runs=tmp_path,
        frames=FrameSettings(), memory="none", perturb=("object_move",))))
    result = record.result
    assert result.success, result.errors
    assert [e["code"] for e in result.errors][0] == "TARGET_MOVED"


def _place_through_a_stall(tmp_path: Path, robot, object: str, target: str, **params) -> None:
    """Run `place` of `object` onto `target` (the gripper closed on it): a motion stalls on the
    way (STUCK is recorded) and still the placing succeeds and `on` holds."""
    from tests.trees.harness import compile_path, tree_file
    from tests.trees.harness import run as run_tree

    path = tree_file(tmp_path, f"""
        root:
          sequence:
            - set_gripper: close
            - subtree: place
              with: {json.dumps({"object": object, "target": target, **params})}
        """)
    result, _ = run_tree(compile_path(path, robot).root, robot)
    assert "STUCK" in [e["code"] for e in result.errors]
    assert result.tree_status == "SUCCESS"
    assert robot.goal_predicate("on", [object, target])


@pytest.mark.parametrize("unstaged, staged", [(150, False), (0, True)])
def test_the_harness_calls_the_policy_from_where_the_robot_stands_before_staging(
        tmp_path: Path, unstaged: int, staged: bool):
    """`vla_pick_place` with `unstaged` steps lets a policy trained from the start pose grasp from
    there (no staging); with 0 it stages above the object at once. Either way the place follows."""
    from tests.trees.harness import BOWL, PLATE, compile_path, scene, tree_file
    from tests.trees.harness import run as run_tree

    robot = scene()
    path = tree_file(tmp_path, f"""
        root:
          subtree: vla_pick_place
          with: {json.dumps({"object": BOWL, "target": PLATE, "policy": "expert",
                             "unstaged": unstaged})}
        """)
    result, frames = run_tree(compile_path(path, robot).root, robot, budget=600)
    visited = set().union(*(f.visited for f in frames))
    assert result.tree_status == "SUCCESS" and robot.goal_predicate("on", [BOWL, PLATE])
    assert ("staged grasp" in visited) == staged
    assert "expert from where the robot stands" in visited


@pytest.mark.parametrize("follow, staged", [(300, False), (0, True)])
def test_the_first_call_goes_on_past_unstaged_while_the_hand_closes_in(
        tmp_path: Path, follow: int, staged: bool):
    """Cut at 10 steps, on its way down to the bowl, the first call is staged at once; with
    `follow` it goes on while the hand closes in and grasps from where the robot stood."""
    from tests.trees.harness import BOWL, PLATE, compile_path, scene, tree_file
    from tests.trees.harness import run as run_tree

    robot = scene()
    path = tree_file(tmp_path, f"""
        root:
          subtree: vla_pick_place
          with: {json.dumps({"object": BOWL, "target": PLATE, "policy": "expert",
                             "unstaged": 10, "follow": follow})}
        """)
    result, frames = run_tree(compile_path(path, robot).root, robot, budget=600)
    visited = set().union(*(f.visited for f in frames))
    assert result.tree_status == "SUCCESS" and robot.goal_predicate("on", [BOWL, PLATE])
    assert ("staged grasp" in visited) == staged


def test_the_harness_stages_when_the_policy_from_where_the_robot_stands_takes_another_object(
        tmp_path: Path):
    """A policy that lifts another object than the task's (its training task, told another) is
    stopped as soon as it has (`lifted_other`), and the grasp is staged above the right object."""
    from tests.trees.harness import BOWL, CHEESE, PLATE, compile_path, scene, tree_file
    from tests.trees.harness import run as run_tree
    from tether.models.policies import POLICIES, register_policy
    from tether.models.scripted import ScriptedConfig

    register_policy("takes_the_cheese", ScriptedConfig(object=CHEESE))
    try:
        robot = scene()
        path = tree_file(tmp_path, f"""
            root:
              subtree: vla_pick_place
              with: {json.dumps({"object": BOWL, "target": PLATE, "unstaged": 150,
                                 "policy": "takes_the_cheese"})}
            """)
        result, frames = run_tree(compile_path(path, robot).root, robot, budget=200)
    finally:
        POLICIES.unregister("takes_the_cheese")
    assert "PREEMPTED" in [e["code"] for e in result.errors]
    preempted = next(f for f in frames if f.status["no other object taken"] == FAILURE)
    assert preempted.steps < 150
    assert "staged grasp" in set().union(*(f.visited for f in frames))


@pytest.mark.parametrize("approach", [0.10, 0.0])
def test_the_harness_stages_the_policy_where_the_library_s_grasp_comes_down(
        tmp_path: Path, approach: float):
    """Staged, the hand comes down to the grasp point as `grasp` does (`reach_grasp`) and stops
    `approach` above it: 10 cm for a grasp policy trained from there, 0 where the library's own
    whole-task demonstrations closed the gripper. The policy then takes the bowl from there."""
    from tests.trees.harness import BOWL, compile_path, scene, tree_file
    from tests.trees.harness import run as run_tree
    from tether.scenes.grasps import clear_grasp

    robot = scene()
    point, _ = clear_grasp(robot, BOWL, 0.0)
    path = tree_file(tmp_path, f"""
        root:
          subtree: vla_grasp
          with: {json.dumps({"object": BOWL, "policy": "expert", "over": 0.20,
                             "approach": approach})}
        """)
    result, frames = run_tree(compile_path(path, robot).root, robot, budget=300)
    first = next(f for f in frames if f.commander == "expert grasp")
    before = frames[frames.index(first) - 1]
    assert result.tree_status == "SUCCESS" and robot.is_grasped(BOWL)
    assert "reach grasp point" in before.visited
    assert np.linalg.norm(before.eef - (point + [0, 0, approach])) < 0.01


def test_a_staged_policy_that_shuts_the_gripper_on_nothing_is_stopped_and_staged_again(
        tmp_path: Path):
    """A staged call whose gripper shuts without touching the object (`closed_empty`) is stopped
    within a few steps, not left to spend its `steps`, and the grasp is staged again."""
    from tests.behaviours.test_vla import Scripted
    from tests.trees.harness import BOWL, compile_path, scene, tree_file
    from tests.trees.harness import run as run_tree
    from tether.models.policies import POLICIES, register_policy
    from tether.scenes.robot import CLOSE

    shut = np.array([[0, 0, 0.2, 0, 0, 0, CLOSE]])  # rising slowly, away from the bowl
    register_policy("shuts", lambda robot: Scripted(shut))
    try:
        robot = scene()
        path = tree_file(tmp_path, f"""
            root:
              subtree: vla_grasp
              with: {json.dumps({"object": BOWL, "policy": "shuts", "steps": 100})}
            """)
        result, frames = run_tree(compile_path(path, robot).root, robot, budget=400)
    finally:
        POLICIES.unregister("shuts")
    calls = [f.steps for f in frames if f.commander == "shuts grasp"]
    stopped = next(f for f in frames if f.status["not shut on nothing"] == FAILURE)
    assert "PREEMPTED" in [e["code"] for e in result.errors]
    assert stopped.steps - calls[0] < 20
    assert "re-staged higher" in set().union(*(f.visited for f in frames))


def test_place_goes_on_when_lowering_stalls_above_a_region_s_top(tmp_path: Path):
    """A region's top can lie below what bears the object (a stove's cook region under its
    burner): the lowering stalls 1.4 cm short of it and the on check decides, not the stall."""
    from tether.scenes.kinematic import KinematicScene

    robot = KinematicScene({"burner": ([0.3, 0.0, 0.025], [0.1, 0.1, 0.025]),
                            "cook_region": ([0.3, 0.0, 0.023], [0.08, 0.08, 0.023]),
                            "moka_pot_1": ([0.0, 0.0, 0.1], [0.02, 0.02, 0.02])},
                           goal=[("on", "moka_pot_1", "cook_region")], eef=(0.0, 0.0, 0.1))
    _place_through_a_stall(tmp_path, robot, "moka_pot_1", "cook_region", clearance=-0.01)


def test_place_succeeds_when_the_retreat_is_out_of_reach(tmp_path: Path):
    """On a high fixture (a wine bottle on a cabinet's top) the arm cannot lift all of
    `release`'s retreat: the object is down and let go, so the placing counts."""
    from tether.scenes.kinematic import KinematicScene

    class ReachLimited(KinematicScene):
        def _apply(self, action):
            super()._apply(action)
            self.eef[2] = min(self.eef[2], 0.25)

    robot = ReachLimited({"cabinet": ([0.3, 0.0, 0.1], [0.1, 0.1, 0.1]),
                          "bottle": ([0.0, 0.0, 0.2], [0.02, 0.02, 0.02])},
                         goal=[("on", "bottle", "cabinet")], eef=(0.0, 0.0, 0.2))
    _place_through_a_stall(tmp_path, robot, "bottle", "cabinet", height=0.02)


def test_place_comes_over_its_target_high_and_then_down(tmp_path: Path):
    """Lifted 35 cm, with `cross` 0.15 the object first reaches the plate 25 cm over it, so
    what lies on the way (a drawer's walls it came out of) is cleared, and only then comes
    down."""
    from tests.trees.harness import compile_path, tree_file
    from tests.trees.harness import run as run_tree
    from tether.scenes.kinematic import KinematicScene

    robot = KinematicScene({"plate_1": ([0.3, 0.0, 0.005], [0.05, 0.05, 0.005]),
                            "bowl_1": ([0.0, 0.0, 0.37], [0.03, 0.03, 0.02])},
                           goal=[("on", "bowl_1", "plate_1")], eef=(0.0, 0.0, 0.37))
    path = tree_file(tmp_path, """
        root:
          sequence:
            - set_gripper: close
            - subtree: place
              with: {object: bowl_1, target: plate_1, cross: 0.15}
        """)
    result, frames = run_tree(compile_path(path, robot).root, robot)
    assert result.tree_status == "SUCCESS" and robot.goal_predicate("on", ["bowl_1", "plate_1"])
    # the bowl hangs 2 cm under the end effector: its bottom is the end effector's height - 0.02
    first_over = next(i for i, f in enumerate(frames)
                      if np.linalg.norm(f.eef[:2] - [0.3, 0.0]) <= 0.01)
    crossing = 0.01 + 0.25  # the plate's top plus `height` and `cross`
    assert all(f.eef[2] - 0.02 >= crossing - 0.01 for f in frames[:first_over + 1])
    assert frames[-1].eef[2] - 0.02 < crossing - 0.1  # and then down


# --- planned grasps around obstacles (kinematic obstacles: cheap and exact) ------------------
PLANNED_PICK = """
sequence:
  - set_gripper: open
  - plan_grasp: cream_cheese_1
  - set_gripper: close
  - plan_to: {target: {relative: [0, 0, 0.12]}}
"""


def _planned_pick_in(tmp_path: Path, robot):
    from tests.trees.harness import compile_node
    from tests.trees.harness import run as run_tree

    return run_tree(compile_node(tmp_path, PLANNED_PICK, robot), robot, budget=1500)


def test_a_planned_grasp_goes_around_the_shelf_that_blocks_the_straight_way_down(tmp_path):
    from tether.scenes.obstacles import shelf_scene

    robot = shelf_scene(0)
    start = robot.eef_pose().pos
    cheese = robot.boxes["cream_cheese_1"].pos.copy()
    assert robot.blocked(np.array([cheese[0], cheese[1], 0.09]))  # straight down meets the shelf
    result, frames = _planned_pick_in(tmp_path, robot)

    assert result.tree_status == "SUCCESS" and robot.is_grasped("cream_cheese_1")
    assert not any(robot.blocked(f.eef) for f in frames)
    assert start[2] > 0.1 and any(f.eef[2] < 0.08 for f in frames)  # it went in under the shelf


def test_a_planned_grasp_no_way_reaches_fails_unreachable_before_the_arm_moves(tmp_path):
    from tests.trees.harness import errors
    from tether.scenes.obstacles import shelf_scene

    robot = shelf_scene(0, sides_blocked=("-x", "+x", "-y", "+y"))
    start = robot.eef_pose().pos
    result, frames = _planned_pick_in(tmp_path, robot)

    assert result.tree_status == "FAILURE"
    assert {e["code"] for e in errors()} == {"UNREACHABLE"}
    assert all(np.array_equal(f.eef, start) for f in frames)


# --- a grasp whose way down stalls is not tried again the same way ---------------------------
class _JammedBelow:
    """A mixin for a kinematic scene: within 1 cm (horizontally) of each point in `jams` the
    hand cannot come lower than that point's z plus 2 cm (a neighbour under a finger)."""

    jams: list[np.ndarray]

    def _apply(self, action: np.ndarray) -> None:
        super()._apply(action)
        for jam in self.jams:
            if np.linalg.norm(self.eef[:2] - jam[:2]) < 0.01:
                self.eef[2] = max(self.eef[2], jam[2] + 0.02)


def _jammed_cheese(jam_first: int | None):
    """The cream cheese beside a milk carton (no room with the wrist unturned), the way down to
    its first `jam_first` turned grasps (None: all) jammed."""
    from tests.scenes.test_grasps import CHEESE, BoxesFromAbove
    from tether.scenes.grasps import NoGraspLeft, Stall, turned_grasp

    class Scene(_JammedBelow, BoxesFromAbove):
        pass

    robot = Scene({"cream_cheese_1": CHEESE,
                   "milk_1": ([-0.0325, 0.075, 0.07], [0.0275, 0.025, 0.07])})
    low, high = robot.extent_of("cream_cheese_1")
    robot.jams, stalls = [], []
    while jam_first is None or len(stalls) < jam_first:
        try:
            point, yaw = turned_grasp(robot, "cream_cheese_1", stalls)
        except NoGraspLeft:
            break
        robot.jams.append(point)
        stalls.append(Stall.of(low, high, point, yaw))
    return robot


def test_a_grasp_whose_descent_stalls_is_retried_at_the_next_candidate(tmp_path):
    """The first turned grasp's way down jams (STUCK); the grasp tree's retry tries it once more
    (a stall may be a passing contact), then takes the next candidate, which is free, instead of
    repeating the same descent until its attempts run out."""
    from tests.trees.harness import compile_node, errors
    from tests.trees.harness import run as run_tree
    from tether.blackboard import grasp_stalls

    robot = _jammed_cheese(1)
    root = compile_node(tmp_path, "subtree: grasp\nwith: {object: cream_cheese_1}", robot)
    result, frames = run_tree(root, robot, budget=1500)

    assert result.tree_status == "SUCCESS" and robot.is_grasped("cream_cheese_1")
    assert [e["code"] for e in errors()] == ["STUCK"] * STALLS
    assert len(grasp_stalls.of("cream_cheese_1")) == STALLS
    closed = next(f for f in frames if f.status.get("set_gripper close") is not None
                  and f.commander == "set_gripper close")
    assert np.linalg.norm(closed.eef[:2] - robot.jams[0][:2]) >= 0.01


def test_a_grasp_whose_every_descent_stalls_fails_once_no_new_candidate_is_left(tmp_path):
    """Every turned grasp jammed: each attempt tries a new one, and once none is left the next
    attempt fails with UNREACHABLE saying so (`grasp_left`), on its first tick, without moving."""
    from tests.trees.harness import compile_node, errors
    from tests.trees.harness import run as run_tree
    from tether.blackboard import grasp_stalls

    robot = _jammed_cheese(None)
    n = len(robot.jams)
    root = compile_node(tmp_path, "subtree: grasp\nwith: {object: cream_cheese_1, attempts: "
                        f"{n + 1}}}", robot)
    result, frames = run_tree(root, robot, budget=5000)

    assert result.tree_status == "FAILURE"
    history = errors()
    assert [e["code"] for e in history] == ["STUCK"] * n + ["UNREACHABLE"]
    assert "every grasp of 'cream_cheese_1' tried stalled" in history[-1]["message"]
    assert history[-1]["node"] == "grasp of cream_cheese_1 left"
    assert len(grasp_stalls.of("cream_cheese_1")) == n
    assert np.array_equal(frames[-1].eef, frames[-2].eef)  # the last attempt did not move

@pytest.mark.slow
def test_a_drawer_shuts_with_a_bowl_just_put_in_it(tmp_path: Path):
    """libero_10_swap/3: after a pick and place the wrist stands where turning the closed hand
    either way round took the half whose lean put the forearm against the cabinet's front;
    close_drawer turns to the half its lean is written for, and the drawer shuts over the bowl."""
    from tests.trees.harness import compile_path, tree_file
    from tests.trees.harness import run as run_tree
    from tether.scenes.libero_scene import LiberoScene

    bowl, drawer = "akita_black_bowl_1", "white_cabinet_1_bottom_region"
    robot = LiberoScene("libero_10_swap/3", init_state=0)
    try:
        path = tree_file(tmp_path, f"""
            root:
              sequence:
                - subtree: grasp
                  with: {{object: {bowl}}}
                - subtree: place
                  with: {{object: {bowl}, target: {drawer}}}
                - subtree: close_drawer
                  with: {{drawer: {drawer}}}
            """)
        result, _ = run_tree(compile_path(path, robot).root, robot, budget=1200)
        assert result.tree_status == "SUCCESS", result.errors
        assert robot.goal_predicate("close", [drawer])
        assert robot.goal_predicate("in", [bowl, drawer])
    finally:
        robot.close()
