"""How high a carry must go for the carried object to pass over what lies on its way.

A `place` carries an object in a straight line from where it was lifted to over its target. A
fixture standing between the two (a cabinet beside the plate) can be taller than that line, and
the object, held below the hand, knocks into it and is torn from the fingers. `crossing_height`
is the end-effector height at which the object's bottom passes `MARGIN` above everything under
its way: the object's footprint (its box's corners and middle, `INFLATE` wider) is looked under
every `STEP` along the way by `floor_at`, which a scene answers from its geometry
(`Robot.crossing`). A carry rises straight up to that height, goes across and comes down over
its target. It cannot rise where something is over the object (a bowl lifted inside a drawer,
under the cabinet's top: `ceiling_at`); then, and where the way is low enough anyway, the
height is where the end effector is, and the carry goes as it always did.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

MARGIN = 0.03  # the carried object's bottom above what it passes over (m)
INFLATE = 0.01  # the footprint looked under, wider than the object's box on every side (m)
STEP = 0.02  # between the places looked under along the way (m)
RISE = 0.30  # the highest a carry rises above where the end effector is (m): the arm's reach


def footprint(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The corners and the middle of the box's horizontal extent, `INFLATE` wider (5 x 2)."""
    (x0, y0), (x1, y1) = low[:2] - INFLATE, high[:2] + INFLATE
    return np.array([[x0, y0], [x0, y1], [x1, y0], [x1, y1], [(x0 + x1) / 2, (y0 + y1) / 2]])


def crossing_height(start: np.ndarray, goal: np.ndarray, low: np.ndarray, high: np.ndarray,
                    floor_at: Callable[[np.ndarray], float],
                    ceiling_at: Callable[[np.ndarray], float]) -> float:
    """The end-effector height at which the object held in the box (`low`, `high`, moving with
    the end effector, now at `start`) crosses to `goal`'s x, y with its bottom `MARGIN` above
    `floor_at(xy points)` (the top of the highest thing under them) all the way; `start`'s own
    height when that is enough, when it would rise more than `RISE`, or when
    `ceiling_at(xy points)` (the bottom of the lowest thing above the object) leaves it no room
    to rise. The goal's own footprint is not looked under: the object comes down there."""
    start, goal = np.asarray(start, dtype=float), np.asarray(goal, dtype=float)
    shape = footprint(low, high) - start[:2]
    n = max(int(np.ceil(np.linalg.norm(goal[:2] - start[:2]) / STEP)), 1)
    floor = max(floor_at(shape + start[:2] + t * (goal[:2] - start[:2])) for t in np.arange(n) / n)
    rise = floor + MARGIN - low[2]
    if rise <= 0.0 or rise > RISE or ceiling_at(shape + start[:2]) < high[2] + rise + MARGIN:
        return float(start[2])
    return float(start[2] + rise)
