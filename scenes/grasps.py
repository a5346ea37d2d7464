"""Where the fingers close on an object, from its name and bounding box.

The Panda's fingers close along one horizontal world axis: y with the wrist at yaw 0 (LIBERO's
default), x with the wrist turned to yaw pi/2. A grasp is a point the fingertips straddle, for
fingers closing along `axis`. Bowls are hollow: they are taken at the rim, on the wall the
fingers can pinch (the +y wall for `axis="y"`, the -x wall, nearer the robot, for `axis="x"`),
3 cm above their base. Everything else is taken across its middle, a little below its top.
`grasp_point` is a pure function of the object's name and world bounding box; `finger_probes`
gives the points the open fingertips will occupy there, which a scene can test for room
(`Robot.clear_from_above`, the `grasp_clear` predicate) before choosing how to come down.
"""

from __future__ import annotations

import re

import numpy as np

RIM_INSET = 0.012  # from the bowl's outer edge to the middle of its wall (m)
RIM_DEPTH = 0.023  # fingertips below the rim: 3 cm above a LIBERO bowl's base (m)
BODY_DEPTH = 0.03  # fingertips below the top of a solid object (m)
FINGER_REACH = 0.045  # open fingertip centre from the grasp point, along the closing axis (m)
FINGER_HALF_WIDTH = 0.01  # half the width of a fingertip, across the closing axis (m)
HOLLOW = ("bowl", "basket", "mug", "cup", "ramekin")


def is_hollow(name: str) -> bool:
    return any(tok in HOLLOW for tok in re.split(r"[_\s]+", name.lower()))


def grasp_point(name: str, low: np.ndarray, high: np.ndarray, axis: str = "y") -> np.ndarray:
    """The fingertip point for grasping entity `name` (bounding box `low`, `high`) with fingers
    closing along world `axis` ("y" or "x")."""
    centre = (low + high) / 2.0
    if is_hollow(name):
        if axis == "y":
            return np.array([centre[0], high[1] - RIM_INSET, high[2] - RIM_DEPTH])
        return np.array([low[0] + RIM_INSET, centre[1], high[2] - RIM_DEPTH])
    depth = min(BODY_DEPTH, (high[2] - low[2]) / 2.0)
    return np.array([centre[0], centre[1], high[2] - depth])


def finger_probes(point: np.ndarray, axis: str = "y") -> list[np.ndarray]:
    """Points the open fingertips occupy when grasping at `point` with fingers closing along
    world `axis`: each fingertip's centre and its two edges."""
    along = np.array([0.0, 1.0, 0.0]) if axis == "y" else np.array([1.0, 0.0, 0.0])
    across = np.array([1.0, 0.0, 0.0]) if axis == "y" else np.array([0.0, 1.0, 0.0])
    return [point + side * FINGER_REACH * along + edge * FINGER_HALF_WIDTH * across
            for side in (-1, 1) for edge in (-1, 0, 1)]
