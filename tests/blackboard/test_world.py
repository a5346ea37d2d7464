"""Camera perception (`blackboard/world.py`) on real LIBERO scenes: localization of identical
copies, a whole episode under isolation, and objects the segmenter does not know."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tether.blackboard.world import (
    SEGMENTER,
    CameraConfig,
    CameraWorld,
    Estimate,
    ObjectNotFound,
    perceive,
)
from tether.errors import TetherError
from tether.scenes.robot import CLOSE, OPEN, Pose
from tether.session.run import RunConfig, run
from tether.session.session import SessionConfig

if TYPE_CHECKING:
    from tether.scenes.libero_scene import LiberoScene

DECLARED = {"static layout", "articulation", "collision geometry", "identity", "simulation",
            "outcome", "trace"}
LIBRARY = Path(__file__).resolve().parents[2] / "trees" / "library"


@contextmanager
def camera_view(task: str, config: CameraConfig | None = None
                ) -> Iterator[tuple[LiberoScene, CameraWorld]]:
    """`task`'s scene at init state 0 and the camera world that sees it, closed after."""
    from tether.scenes.libero_scene import LiberoScene

    scene = LiberoScene(task, init_state=0)
    robot = perceive(scene, "camera", config)
    try:
        yield scene, robot
    finally:
        robot.close()
        scene.close()


@pytest.mark.slow
@pytest.mark.parametrize("task", ["libero_spatial/0",  # the bowls start in table regions
                                  "libero_spatial/5"])  # on the ramekin and on the cookie box
def test_two_identical_bowls_are_told_apart_and_named_as_the_task_file_places_them(task):
    with camera_view(task) as (scene, robot):
        with scene.isolation.enforced():
            assert robot.look() == []
            seen = {n: robot.pose_of(n).pos for n in ("akita_black_bowl_1", "akita_black_bowl_2")}
        for name, pos in seen.items():  # a camera pose is the middle of the box it saw
            assert np.linalg.norm(pos - np.mean(scene.extent_of(name), axis=0)) < 0.02, name
        assert set(scene.isolation.reads) == {"identity"}  # regions' places, never objects'


@pytest.mark.slow
def test_a_planner_under_camera_perception_knows_the_fixtures_and_plans_what_it_would_privileged():
    from tether.planning.grounding import rank
    from tether.scenes.referring import SceneFacts

    with camera_view("libero_goal/turn_on_the_stove") as (scene, robot):
        with scene.isolation.enforced():
            facts = SceneFacts.of(robot)
        assert facts.fixtures == SceneFacts.of(scene).fixtures >= {"flat_stove_1"}
        assert [str(g) for g in rank("turn on the stove", facts).decide()] == \
            ["turn_on(flat_stove_1)"]


@pytest.mark.slow
def test_an_object_the_segmenter_does_not_know_is_not_found_never_guessed(tmp_path: Path):
    """The shipped segmenter with its `yellow_plate` label renamed: the plate's pixels are
    labelled, but with a category no object of the scene has, so the plate is not seen."""
    checkpoint = tmp_path / "segmenter"
    shutil.copytree(SEGMENTER, checkpoint)
    config = json.loads((checkpoint / "config.json").read_text())
    config["categories"] = [c.replace("yellow_plate", "unlisted_plate")
                            for c in config["categories"]]
    (checkpoint / "config.json").write_text(json.dumps(config))
    with camera_view("libero_spatial_object/0", CameraConfig(checkpoint=checkpoint)) as (
            scene, robot):
        with scene.isolation.enforced():
            assert "yellow_plate_1" in robot.look()
            with pytest.raises(ObjectNotFound, match="'yellow_plate_1' is not seen by agentview"):
                robot.pose_of("yellow_plate_1")


@pytest.mark.slow
def test_a_camera_episode_succeeds_by_the_task_test_reading_only_declared_exceptions(tmp_path):
    record = run(RunConfig(LIBRARY / "pick_place.yaml", SessionConfig(
        task="libero_spatial/0", init_state=1, record=False, memory="none", runs=tmp_path,
        perception="camera")))
    assert record.result.success and record.perception == "camera"
    assert set(record.privileged_reads) <= DECLARED and record.privileged_reads["outcome"] == 1
    assert "IsolationError" not in str(record.result.errors)


def test_a_held_object_moves_and_turns_with_the_hand():
    """A bowl gripped by its rim 5 cm from its middle, carried 10 cm along +y while the wrist
    turns a quarter: its middle swings round the fingers, its box turns with it."""
    bowl = Estimate("bowl_1", np.array([0.05, 0.0, 0.92]), np.array([-0.01, -0.05, 0.90]),
                    np.array([0.11, 0.05, 0.95]), step=3, cameras=("agentview",), yaw=0.0)
    down = np.array([1.0, 0.0, 0.0, 0.0])  # the hand pointing down, unturned
    quarter = (Rotation.from_euler("z", np.pi / 2) * Rotation.from_quat(down)).as_quat()
    grip = Pose(np.array([0.0, 0.0, 0.93]), down)
    held = bowl.carried(grip, Pose(np.array([0.0, 0.1, 1.03]), quarter))
    assert np.allclose(held.position, [0.0, 0.15, 1.02])
    assert np.allclose(held.lower, [-0.05, 0.09, 1.00])
    assert np.allclose(held.upper, [0.05, 0.21, 1.05])
    assert held.yaw == pytest.approx(np.pi / 2) and held.step == 3
    assert np.allclose(bowl.carried(grip, grip).lower, bowl.lower)  # not moved: where it was


class _Hand:
    """Just enough of a scene for `CameraWorld.after_step`: a gripper command and width."""

    def __init__(self) -> None:
        self.gripper_command, self.width = OPEN, 0.08

    def gripper_width(self) -> float:
        return self.width

    def eef_pose(self) -> Pose:
        return Pose(np.array([0.0, 0.0, 0.93]), np.array([1.0, 0.0, 0.0, 0.0]))


def test_a_hold_begins_only_as_the_fingers_close_from_open():
    """Shut fingers pushing a plate are parted a little by it: that is no grasp."""
    world = CameraWorld.__new__(CameraWorld)  # no segmenter or cameras: proprioception only
    hand = world.scene = _Hand()
    world.held, world._grip, world._let_go, world._closing = None, None, set(), True
    world._width = hand.width
    world.estimates = {"plate_1": Estimate("plate_1", np.array([0.0, 0.0, 0.91]),
                                           np.array([-0.07, -0.07, 0.90]),
                                           np.array([0.07, 0.07, 0.92]), 0, ("agentview",))}

    def settle(width: float) -> None:
        hand.width = width
        for _ in range(2):
            world.after_step()

    hand.gripper_command = CLOSE
    settle(0.0015)  # shut on nothing
    settle(0.0029)  # a push parts them past the empty width
    assert world.held is None
    hand.gripper_command = OPEN
    settle(0.08)
    hand.gripper_command = CLOSE
    settle(0.004)  # closing from open onto the plate's rim
    assert world.held == "plate_1"
    hand.gripper_command = OPEN
    settle(0.08)
    assert world.held is None and world._let_go == {"plate_1"}


def test_an_unknown_perception_mode_is_a_clear_error_before_the_scene_loads(tmp_path):
    with pytest.raises(TetherError, match=r"--perception: unknown perception mode 'cameras' "
                                          r"\(did you mean 'camera'\?\)"):
        run(RunConfig(LIBRARY / "pick_place.yaml", SessionConfig(
            task="libero_spatial/0", record=False, memory="none", runs=tmp_path,
            perception="cameras")))
