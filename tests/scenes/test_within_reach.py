"""The `within_reach` predicate: whether a carried object is still with the gripper."""

from __future__ import annotations

import numpy as np

from tether.scenes.kinematic import KinematicScene
from tether.scenes.predicates import box_distance, evaluate


def test_within_reach_holds_for_a_tall_object_held_far_from_its_centre():
    """A bottle held by its neck: its centre is 12 cm below the fingers, its box is not."""
    robot = KinematicScene({"wine_bottle_1": ([0.0, 0.0, 0.15], [0.03, 0.03, 0.15])},
                           goal=[], eef=(0.0, 0.0, 0.27))
    bottle = {"object": "wine_bottle_1", "target": "gripper"}
    assert not evaluate(robot, "near", {**bottle, "distance": 0.09})
    assert evaluate(robot, "within_reach", {**bottle, "distance": 0.03})
    robot.boxes["wine_bottle_1"].pos = np.array([0.3, 0.0, 0.15])  # it fell out
    assert not evaluate(robot, "within_reach", {**bottle, "distance": 0.03})


def test_box_distance_is_zero_inside_and_to_the_nearest_face_edge_or_corner_outside():
    low, high = np.zeros(3), np.ones(3)
    assert box_distance(np.array([0.5, 0.2, 1.0]), low, high) == 0.0
    assert box_distance(np.array([0.5, 0.5, 1.25]), low, high) == 0.25  # above the top face
    assert box_distance([2.0, 0.5, 3.0], low, high) == np.sqrt(5.0)  # to the edge x=1, z=1
    assert box_distance([-1.0, -2.0, -2.0], low, high) == 3.0  # to the corner at the origin
