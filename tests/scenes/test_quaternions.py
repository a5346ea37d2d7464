"""Quaternion arithmetic for one rotation: scipy's `Rotation` results, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tether.scenes import quaternions

RNG = np.random.default_rng(7)
# pairs near and far apart (the servo's error is small, a move's first turn is not), unnormalised
FIRST = RNG.normal(size=(4000, 4))
SECOND = FIRST + RNG.normal(size=(4000, 4)) * 10.0 ** RNG.uniform(-9, 0.5, (4000, 1))


def scipy_relative(a: np.ndarray, b: np.ndarray) -> Rotation:
    return Rotation.from_quat(a) * Rotation.from_quat(b).inv()


def test_normalising_and_composing_give_scipys_quaternion():
    for a, b in zip(FIRST, SECOND, strict=True):
        assert quaternions.unit(a) == tuple(Rotation.from_quat(a).as_quat())
        assert quaternions.relative(a, b) == tuple(scipy_relative(a, b).as_quat())


def test_the_rotation_vector_and_the_angle_are_scipys():
    for a, b in zip(FIRST, SECOND, strict=True):
        turn = quaternions.relative(a, b)
        assert np.array_equal(quaternions.rotvec(turn), scipy_relative(a, b).as_rotvec())
        assert quaternions.angle(turn) == float(scipy_relative(a, b).magnitude())
    tiny = quaternions.relative([0, 0, 0, 1], [1e-5, 0, 0, 1])  # scipy's small-angle series
    assert np.array_equal(quaternions.rotvec(tiny), scipy_relative(
        np.array([0, 0, 0, 1.0]), np.array([1e-5, 0, 0, 1.0])).as_rotvec())


def test_the_yaw_is_scipys_third_extrinsic_euler_angle():
    for q in np.vstack([FIRST, SECOND]):
        assert quaternions.yaw(q) == float(Rotation.from_quat(q).as_euler("xyz")[2])
    down = Rotation.from_euler("xyz", [np.pi, 0.0, 2.5]).as_quat()  # a hand pointing down
    assert quaternions.yaw(down) == pytest.approx(2.5)


def test_the_tilt_is_the_angle_of_scipys_turned_z_axis_from_straight_down():
    for q in FIRST:
        pointing = Rotation.from_quat(q).apply([0.0, 0.0, 1.0])
        assert quaternions.tilt(q) == pytest.approx(np.arccos(np.clip(-pointing[2], -1, 1)),
                                                    abs=1e-9)
    assert quaternions.tilt(Rotation.from_euler("xyz", [np.pi, 0.0, 1.0]).as_quat()) == \
        pytest.approx(0.0, abs=1e-7)  # pointing down, any yaw
    assert quaternions.tilt([0.0, 0.0, 0.0, 1.0]) == pytest.approx(np.pi)  # pointing up


def test_at_a_gimbal_lock_the_yaw_is_zero_as_scipys():
    locked = Rotation.from_euler("xyz", [0.3, np.pi / 2, 0.4]).as_quat()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that the angles are not unique
        assert quaternions.yaw(locked) == float(Rotation.from_quat(locked).as_euler("xyz")[2])
    assert quaternions.yaw(locked) == 0.0
