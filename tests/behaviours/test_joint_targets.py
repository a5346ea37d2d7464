"""`move_to`'s `at: joint` and `along` targets, `rotate`'s `along`: in a joint's frame."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.trees.harness import BOXES, compile_node, run
from tether.behaviours.primitives import Target
from tether.scenes.joints import HINGE, SLIDE, Joint, from_model
from tether.scenes.kinematic import KinematicScene

TURN = 0.7  # rad: how far the drawer's slide is turned from world +y


class _JointScene(KinematicScene):
    """A drawer `drawer` sliding out along +y turned TURN about z, and a knob `knob` at the
    origin whose bar lies along x, turning on counter-clockwise."""

    def joint_of(self, name: str) -> Joint:
        if name == "drawer":
            out = np.array([-np.sin(TURN), np.cos(TURN), 0.0])
            return from_model(SLIDE, [0.0, 0.3, 0.1], -out, -0.16, 0.01, 0.0,
                              [0.1, 0.3, 0.2], None)
        if name == "knob":
            return from_model(HINGE, [0.0, 0.0, 0.0], [0, 0, 1], -0.005, 2.1, 0.0,
                              [0.0, 0.0, 0.0], [-1.0, 0.0, 0.0])
        return super().joint_of(name)


def scene() -> _JointScene:
    return _JointScene({**BOXES, "drawer": ([0.1, 0.3, 0.2], [0.05, 0.05, 0.02]),
                        "knob": ([0.0, 0.0, 0.0], [0.02, 0.02, 0.02])})


def test_a_slide_opens_the_far_way_of_its_range_and_its_frame_is_turned_with_it():
    joint = scene().joint_of("drawer")
    assert joint.opening() == pytest.approx([-np.sin(TURN), np.cos(TURN), 0.0])
    assert Rotation.from_matrix(joint.frame()).as_euler("xyz") == pytest.approx([0, 0, TURN])
    robot = scene()
    target = Target(object="drawer", at="joint", offset=(0.0, 0.2, 0.05))
    assert target.position(robot, np.zeros(3)) == pytest.approx(
        [0.1 - 0.2 * np.sin(TURN), 0.3 + 0.2 * np.cos(TURN), 0.25])


def test_a_knob_turned_off_is_the_mirror_image_of_turned_on():
    knob = scene().joint_of("knob")
    on, off = knob.frame(), knob.frame(closing=True)
    assert on[:, 0] == pytest.approx([-1.0, 0.0, 0.0])  # along the bar, both ways
    assert off[:, 0] == pytest.approx([-1.0, 0.0, 0.0])
    assert on[:, 1] == pytest.approx([0.0, -1.0, 0.0])  # its end moves toward -y turning on
    assert off[:, 1] == pytest.approx([0.0, 1.0, 0.0])  # ... toward +y turning off
    assert np.linalg.det(off) == pytest.approx(-1.0)


def test_a_relative_push_along_a_joint_goes_along_its_slide(tmp_path):
    robot = scene()
    start = robot.eef_pose().pos.copy()
    node = compile_node(tmp_path, """
        move_to: {target: {relative: [0, 0.1, 0], along: drawer}, tolerance: 0.005}
    """, robot)
    assert run(node, robot)[0].tree_status == "SUCCESS"
    assert robot.eef_pose().pos - start == pytest.approx(
        [-0.1 * np.sin(TURN), 0.1 * np.cos(TURN), 0.0], abs=0.006)


def test_rotate_along_a_joint_turns_about_its_frame_and_either_way_takes_the_nearer_half(
        tmp_path):
    start = scene().eef_pose().yaw
    robot = scene()
    node = compile_node(tmp_path, "rotate: {yaw: 0.0, relative: false, along: drawer}", robot)
    assert run(node, robot)[0].tree_status == "SUCCESS"
    assert robot.eef_pose().yaw == pytest.approx(TURN, abs=0.03)  # frame yaw 0: world TURN
    # yaw pi in the frame, or pi + pi: the nearer of TURN + pi and TURN to where the wrist is
    robot = scene()
    node = compile_node(tmp_path, "rotate: {yaw: 3.1416, relative: false, along: drawer, "
                        "either_way: true}", robot)
    assert run(node, robot)[0].tree_status == "SUCCESS"
    nearer = min(TURN, TURN - np.pi, key=lambda y: abs(y - start))
    assert robot.eef_pose().yaw == pytest.approx(nearer, abs=0.03)
    # a relative turn about the frame's z is one about the world's z (the frame is turned about z)
    robot = scene()
    node = compile_node(tmp_path, "rotate: {yaw: 0.3, along: drawer}", robot)
    assert run(node, robot)[0].tree_status == "SUCCESS"
    assert robot.eef_pose().yaw == pytest.approx(start + 0.3, abs=0.03)
