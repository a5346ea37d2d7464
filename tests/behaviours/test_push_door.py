"""`push_door` and `move_to`'s `at: door` target, against a kinematic hinged door."""

from __future__ import annotations

import numpy as np
import pytest

from tests.trees.harness import BOXES, compile_node, errors, run
from tether.behaviours.primitives import door_point, door_yaw
from tether.errors import TetherError
from tether.scenes.kinematic import KinematicScene
from tether.scenes.robot import Hinge

ANCHOR = np.array([0.0, 0.3, 0.1])
FINGER = 0.02  # half the closed fingers' thickness (m)


class _DoorScene(KinematicScene):
    """A door hinged at ANCHOR, 25 cm long, open a quarter turn (pointing -y); it shuts
    counter-clockwise to angle 0 and turns when the fingers press on its outer face."""

    def __init__(self, *, jammed: bool = False):
        super().__init__({**BOXES, "door": ([0.0, 0.3, 0.1], [0.01, 0.01, 0.01])})
        self.angle, self.jammed = -np.pi / 2, jammed

    def hinge_of(self, name: str) -> Hinge:
        if name != "door":
            return super().hinge_of(name)
        return Hinge(ANCHOR.copy(), self.angle, 1)

    def goal_predicate(self, name: str, args: list[str]) -> bool:
        if name == "close":
            return self.angle >= -0.005
        return super().goal_predicate(name, args)

    def _apply(self, action: np.ndarray) -> None:
        super()._apply(action)
        rel = self.eef[:2] - ANCHOR[:2]
        r, phi = np.linalg.norm(rel), np.arctan2(rel[1], rel[0])
        pressed = 0.03 < r < 0.25 and r * np.sin(self.angle - phi) < FINGER
        if pressed and not self.jammed:
            self.angle = min(0.0, phi + np.arcsin(FINGER / r))


def test_door_frame_offsets_are_along_the_door_out_of_its_pushed_face_and_up():
    hinge = Hinge(ANCHOR, -np.pi / 2, 1)  # the door points -y; it shuts toward +x
    assert door_point(hinge, (0.1, 0.05, 0.02)) == pytest.approx(ANCHOR + [-0.05, -0.1, 0.02])
    assert door_yaw(hinge, 0.1) == pytest.approx(0.0)  # fingers close along y: along the door
    assert door_yaw(hinge, 3.0) == pytest.approx(np.pi)  # the same line, nearer the wrist
    # a quarter turn further shut it points +x and its pushed face looks toward -y
    assert door_point(hinge, (0.1, 0.05, 0.0), np.pi / 2) == pytest.approx(ANCHOR + [0.1, -0.05, 0])
    assert door_yaw(hinge, 1.0, np.pi / 2) == pytest.approx(np.pi / 2)


def test_push_door_follows_the_door_round_its_hinge_until_it_is_closed(tmp_path):
    robot = _DoorScene()
    root = compile_node(tmp_path, """
        sequence:
          - move_to: {object: door, at: door, offset: [0.12, 0.05, 0]}
          - push_door: {door: door, press: 0.0, height: 0.0, name: push}
        """, robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert robot.angle >= -0.005
    # the wrist turned with the door, the short way: from yaw 0 to a quarter turn and a bit
    assert 1.0 < robot.eef_pose().yaw < np.pi / 2 + 0.25
    assert sum(f.commander == "push" for f in frames) >= 5  # it turned the door, tick by tick


def test_push_door_fails_stuck_when_the_door_does_not_turn(tmp_path):
    robot = _DoorScene(jammed=True)
    root = compile_node(tmp_path, "push_door: {door: door, stuck_steps: 5}", robot)
    result, _ = run(root, robot)
    assert result.tree_status == "FAILURE"
    assert [e["code"] for e in errors()] == ["STUCK"]
    assert robot.angle == -np.pi / 2


def test_a_fixture_without_a_hinged_door_is_a_clear_error(tmp_path):
    robot = KinematicScene(BOXES)
    root = compile_node(tmp_path, "push_door: {door: akita_black_bowl_1}", robot)
    with pytest.raises(TetherError, match="has no hinged door"):
        run(root, robot)
