"""Whether an object is hollow (open-topped), read from its geometry.

A hollow object is taken at its rim, on a wall the fingers pinch (`tether.scenes.grasps`); a
solid one across its middle. `depth_ratio` looks straight down into the middle of the object's
footprint: rays from just above the top of its world bounding box, at the box's centre and
`PROBE_OFFSET` of its half-size off the centre along +x, -x, +y and -y, each tested against the
object's own collision geoms only (`mju_rayGeom`, `mj_rayMesh`: neighbours and what it stands
in do not count). How far below the top each ray first meets the object, over the box's height,
is that point's depth ratio (1 when a ray meets nothing); the median of the five is the
object's (one ray landing on a mug's handle does not decide). `is_hollow`
holds when the ratio is at least `HOLLOW_RATIO`.

Measured at init state 0 over every movable object of LIBERO's four suites, LIBERO-PRO's new
categories and tether's suite (`benchmarks/hollow_objects.py`; the table: docs/results/hollow.md):
solid ones 0.00-0.13 (bottles, cans, boxes, books, a moka pot), a plate 0.59 (a 1.1 cm dish
1.9 cm high), hollow ones 0.79-0.95 (bowls, ramekin, baskets, mugs, a frying pan).
`HOLLOW_RATIO` sits in the gap between the solid ones and the plate: a plate, too flat to span
with the open fingers, is taken at its rim like a bowl (fingertips `RIM_FLOOR` above its bottom:
`tether.scenes.grasps.rim_height`).
"""

from __future__ import annotations

import mujoco
import numpy as np

HOLLOW_RATIO = 0.4  # median depth ratio from which an object is hollow
PROBE_OFFSET = 0.25  # the off-centre rays, as a fraction of the box's half-size
_ABOVE = 0.01  # rays start this far above the box's top (m)
_DOWN = np.array([0.0, 0.0, -1.0])


def _first_hit(model: mujoco.MjModel, data: mujoco.MjData, geoms: np.ndarray,
               start: np.ndarray) -> float:
    """Distance straight down from `start` to the nearest of `geoms`; inf when none is hit."""
    nearest = np.inf
    for g in geoms:
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            d = mujoco.mj_rayMesh(model, data, int(g), start, _DOWN)
        else:
            d = mujoco.mju_rayGeom(data.geom_xpos[g], data.geom_xmat[g], model.geom_size[g],
                                   start, _DOWN, int(model.geom_type[g]))
        if d >= 0:
            nearest = min(nearest, d)
    return nearest


def depth_ratio(model: mujoco.MjModel, data: mujoco.MjData, geoms: np.ndarray,
                low: np.ndarray, high: np.ndarray) -> float:
    """The median, over the five rays into the middle of the box (`low`, `high`), of how far
    below its top the first of the object's `geoms` lies, over the box's height."""
    height = float(high[2] - low[2])
    centre, half = (low + high) / 2.0, (high - low) / 2.0
    ratios = []
    for dx, dy in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
        start = np.array([centre[0] + dx * PROBE_OFFSET * half[0],
                          centre[1] + dy * PROBE_OFFSET * half[1], high[2] + _ABOVE])
        depth = _first_hit(model, data, geoms, start) - _ABOVE
        ratios.append(min(max(depth, 0.0), height) / height if height > 0 else 0.0)
    return float(np.median(ratios))


def is_hollow(model: mujoco.MjModel, data: mujoco.MjData, geoms: np.ndarray,
              low: np.ndarray, high: np.ndarray) -> bool:
    """Whether the object made of `geoms` (world box `low`, `high`) is open-topped."""
    return depth_ratio(model, data, geoms, low, high) >= HOLLOW_RATIO
