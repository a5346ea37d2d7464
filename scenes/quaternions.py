"""Single-rotation quaternion arithmetic, bit for bit as scipy's `Rotation` computes it.

Every control tick asks for a few rotations of one quaternion each (the servo's error, the turn
a move has left, the wrist's yaw); scipy's `Rotation` spends 10-45 us a call dispatching before
it computes. These functions do scipy's arithmetic (normalise; compose, then normalise; its
rotation-vector and Euler-angle formulas) in plain floats, about 4x faster.
tests/scenes/test_quaternions.py holds them to scipy's results bit for bit on random rotations,
so a scipy that changes its formulas fails there, not in an episode. Quaternions are
(x, y, z, w), as scipy's.

    rotvec(relative(goal, here))   # Rotation.from_quat(goal) * Rotation.from_quat(here).inv()
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Quat = tuple[float, float, float, float]
GIMBAL = 1e-7  # rad from a gimbal lock at which scipy sets the third Euler angle to 0


def unit(q: Sequence[float]) -> Quat:
    """`q` normalised (`Rotation.from_quat(q)`)."""
    x, y, z, w = (float(v) for v in q)
    n = math.sqrt(x * x + y * y + z * z + w * w)
    return x / n, y / n, z / n, w / n


def relative(target: Sequence[float], current: Sequence[float]) -> Quat:
    """The rotation that takes `current` to `target` (`R(target) * R(current).inv()`)."""
    px, py, pz, pw = unit(target)
    qx, qy, qz, qw = unit(current)
    qx, qy, qz = -qx, -qy, -qz
    return unit((pw * qx + qw * px + (py * qz - pz * qy),
                 pw * qy + qw * py + (pz * qx - px * qz),
                 pw * qz + qw * pz + (px * qy - py * qx),
                 pw * qw - px * qx - py * qy - pz * qz))


def rotvec(q: Quat) -> np.ndarray:
    """The rotation vector (rad) of a unit quaternion (`Rotation.as_rotvec`)."""
    x, y, z, w = q if q[3] >= 0 else (-q[0], -q[1], -q[2], -q[3])
    angle = 2 * math.atan2(math.sqrt(x * x + y * y + z * z), w)
    if angle <= 1e-3:
        square = angle * angle
        scale = 2 + square / 12 + 7 * square * square / 2880
    else:
        scale = angle / math.sin(angle / 2)
    return np.array([scale * x, scale * y, scale * z])


def angle(q: Quat) -> float:
    """The angle (rad, 0..pi) a unit quaternion turns by (`Rotation.magnitude`)."""
    x, y, z, w = q
    return 2 * math.atan2(math.sqrt(x * x + y * y + z * z), abs(w))


def tilt(q: Sequence[float]) -> float:
    """How far (rad) the frame turned by `q` points its z axis from the world's -z (a hand from
    pointing straight down): that axis, turned, rises 1 - 2 (x^2 + y^2)."""
    x, y, _, _ = unit(q)
    return math.acos(max(-1.0, min(1.0, 2 * (x * x + y * y) - 1)))


def yaw(q: Sequence[float]) -> float:
    """The third of `q`'s extrinsic x-y-z Euler angles (`Rotation.as_euler("xyz")[2]`), 0 at a
    gimbal lock (where scipy warns)."""
    x, y, z, w = unit(q)
    a, b, c, d = w - y, x + z, y + w, z - x
    pitch = 2 * math.atan2(math.hypot(c, d), math.hypot(a, b))
    if abs(pitch) <= GIMBAL or abs(pitch - math.pi) <= GIMBAL:
        return 0.0
    out = math.atan2(b, a) + math.atan2(d, c)
    if out < -math.pi:
        return out + 2 * math.pi
    return out - 2 * math.pi if out > math.pi else out
