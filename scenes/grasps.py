"""Where the fingers close on an object, from its name and bounding box.

The Panda's fingers close along one world axis (y, with the default top-down wrist), so a grasp
is a point the fingertips straddle. Bowls are hollow: they are taken at the rim, on the +y wall,
so the fingers pinch the wall. Everything else is taken across its middle, a little below its
top. `grasp_point` is a pure function of the object's name and world bounding box.
"""

from __future__ import annotations

import re

import numpy as np

RIM_INSET = 0.012  # from the bowl's outer edge to the middle of its wall (m)
RIM_DEPTH = 0.015  # fingertips below the rim (m)
BODY_DEPTH = 0.03  # fingertips below the top of a solid object (m)
HOLLOW = ("bowl", "basket", "mug", "cup")


def is_hollow(name: str) -> bool:
    return any(tok in HOLLOW for tok in re.split(r"[_\s]+", name.lower()))


def grasp_point(name: str, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The fingertip point for grasping entity `name` with bounding box (`low`, `high`)."""
    centre = (low + high) / 2.0
    if is_hollow(name):
        return np.array([centre[0], high[1] - RIM_INSET, high[2] - RIM_DEPTH])
    depth = min(BODY_DEPTH, (high[2] - low[2]) / 2.0)
    return np.array([centre[0], centre[1], high[2] - depth])
