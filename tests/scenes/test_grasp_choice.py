"""Grasps chosen by feasibility (`scenes/grasp_choice.py`): candidates from geometry, kept when the
way in is reachable and clear."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from tether.scenes.grasp_choice import candidates, feasible_grasps
from tether.scenes.obstacles import shelf_scene

DOWN = Rotation.from_euler("xyz", [np.pi, 0.0, 0.0])
CHEESE = "cream_cheese_1"


def test_a_solid_box_has_top_grasps_then_side_grasps_pointing_the_way_they_come_in():
    low, high = np.array([0.0, 0.0, 0.0]), np.array([0.04, 0.04, 0.04])
    grasps = candidates(low, high, DOWN, hollow=False)
    kinds = [g.kind for g in grasps]
    assert kinds == ["top"] * 6 + ["side"] * 4
    for g in grasps:  # the hand points (its z axis) the way it comes in
        assert np.allclose(Rotation.from_quat(g.quat).apply([0.0, 0.0, 1.0]), g.approach)
    assert all(np.allclose(g.point, [0.02, 0.02, 0.02]) for g in grasps[6:])  # at half height
    assert np.allclose(grasps[0].quat, DOWN.as_quat())


def test_a_hollow_object_has_rim_grasps_and_no_side_grasps():
    low, high = np.array([0.0, 0.0, 0.0]), np.array([0.06, 0.06, 0.05])
    kinds = {g.kind for g in candidates(low, high, DOWN, hollow=True)}
    assert kinds == {"top", "rim"}


def test_an_object_too_long_to_span_is_not_taken_across_its_length():
    low, high = np.array([0.0, 0.0, 0.0]), np.array([0.2, 0.03, 0.03])  # long along x
    grasps = candidates(low, high, DOWN, hollow=False)
    # fingers close along (-sin yaw, cos yaw): the quarter turn would close them along x
    yaws = sorted(round(float((Rotation.from_quat(g.quat) * DOWN.inv()).as_rotvec()[2]), 6)
                  for g in grasps if g.kind == "top")
    assert yaws == [round(y, 6) for y in (-np.pi / 3, -np.pi / 6, 0.0, np.pi / 6, np.pi / 3)]
    # from the side it comes in along its length, closing across its thin side
    assert {tuple(np.round(g.approach, 6) + 0.0) for g in grasps if g.kind == "side"} == {
        (1.0, 0.0, 0.0), (-1.0, 0.0, 0.0)}


def test_in_the_open_the_first_feasible_grasp_is_from_above():
    assert feasible_grasps(shelf_scene(0, shelf=False), CHEESE)[0].kind == "top"


def test_under_a_shelf_only_side_grasps_are_feasible():
    grasps = feasible_grasps(shelf_scene(0), CHEESE)
    assert [g.kind for g in grasps] == ["side"] * 4


def test_a_wall_on_one_side_removes_the_grasp_that_comes_in_through_it():
    grasps = feasible_grasps(shelf_scene(0, sides_blocked=("-x",)), CHEESE)
    assert [tuple(np.round(g.approach, 6)) for g in grasps] == [
        (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0)]


def test_boxed_in_under_a_shelf_no_grasp_is_feasible():
    assert feasible_grasps(shelf_scene(0, sides_blocked=("-x", "+x", "-y", "+y")), CHEESE) == []


def test_an_object_with_a_handle_is_taken_by_it_first_the_fingers_closing_across_it():
    from tether.scenes.handles import Handle

    handle = Handle(np.array([-0.008, -0.075, 0.02]), np.array([0.008, -0.045, 0.085]),
                    np.array([0.0, -1.0, 0.0]))
    low, high = np.array([-0.05, -0.075, 0.0]), np.array([0.05, 0.05, 0.1])
    grasps = candidates(low, high, DOWN, handle, hollow=True)
    first = grasps[0]
    assert first.kind == "handle" and [g.kind for g in grasps[1:]].count("handle") == 0
    # 1.2 cm in from the handle's outer end, 1.2 cm below its top
    assert np.allclose(first.point, [0.0, -0.063, 0.073])
    # the fingers close along (-sin yaw, cos yaw): across the handle, along world x
    closing = Rotation.from_quat(first.quat).apply([0.0, 1.0, 0.0])
    assert np.allclose(np.abs(closing), [1.0, 0.0, 0.0], atol=1e-6)
    assert candidates(low, high, DOWN, hollow=True)[0].kind == "top"  # no handle: as before


def test_an_object_the_fingers_span_only_just_every_way_is_still_taken_from_above():
    """A can 6.6 x 7.1 cm: wider than the comfortable span every way, within the open fingers."""
    low, high = np.array([0.0, 0.0, 0.0]), np.array([0.066, 0.071, 0.084])
    grasps = candidates(low, high, DOWN, hollow=False)
    assert [g.kind for g in grasps][:1] == ["top"]
    assert np.allclose(grasps[0].quat, DOWN.as_quat())  # the narrower chord: fingers along y
    # wider than the fingers every way: from above at yaw 0 only (a knob on top may fit them)
    assert [g.kind for g in candidates(low, high + [0.02, 0.02, 0], DOWN, hollow=False)] == ["top"]
