"""A kinematic tabletop with solid obstacles the end effector cannot pass through.

`ObstacleScene` is a `KinematicScene` whose `obstacles` (named boxes, listed among the entities
so trees and memory see them) block the end effector: a step that would take it into an obstacle
leaves it where it is, so a `move_to` through one ends STUCK. It makes scene-specific failures
cheap and deterministic, e.g. a shelf over an object blocks the usual top-down grasp while a
side approach works (the learning measurement of docs/memory.md).
"""

from __future__ import annotations

import numpy as np

from scenes.kinematic import KinematicScene


class ObstacleScene(KinematicScene):
    """A `KinematicScene` plus `obstacles`, {name: (centre, half extents)} the gripper can't enter."""

    def __init__(self, boxes: dict[str, tuple[list[float], list[float]]],
                 obstacles: dict[str, tuple[list[float], list[float]]], **kwargs):
        super().__init__({**boxes, **obstacles}, **kwargs)
        self.obstacles = set(obstacles)

    def blocked(self, point: np.ndarray) -> bool:
        return any(np.all(np.abs(point - self.boxes[n].pos) <= self.boxes[n].half)
                   for n in self.obstacles)

    def _apply(self, action: np.ndarray) -> None:
        before = self.eef.copy()
        super()._apply(action)
        if self.blocked(self.eef):
            self.eef = before
            if self.held is not None:
                self.boxes[self.held].pos = before.copy()
