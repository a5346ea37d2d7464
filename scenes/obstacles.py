"""A kinematic tabletop with solid obstacles the end effector cannot pass through.

`ObstacleScene` is a `KinematicScene` whose `obstacles` (named boxes, listed among the entities
so trees and memory see them) block the end effector: a step that would take it into an obstacle
leaves it where it is, so a `move_to` through one ends STUCK. It makes scene-specific failures
cheap and deterministic, e.g. a shelf over an object blocks the usual top-down grasp while a
side approach works (the learning measurement of docs/memory.md).
"""

from __future__ import annotations

import numpy as np

from tether.scenes.kinematic import KinematicScene


class ObstacleScene(KinematicScene):
    """A `KinematicScene` plus solid `obstacles`: {name: (centre, half extents)}."""

    def __init__(self, boxes: dict[str, tuple[list[float], list[float]]],
                 obstacles: dict[str, tuple[list[float], list[float]]], **kwargs):
        super().__init__({**boxes, **obstacles}, **kwargs)
        self.obstacles = frozenset(obstacles)

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


SHELF_TASK = "kinematic/put_the_cream_cheese_under_the_shelf_on_the_plate"
SHELF_INSTRUCTION = "put the cream cheese on the plate"


def shelf_scene(seed: int = 0, *, sides_blocked: tuple[str, ...] = (),
                shelf: bool = True) -> ObstacleScene:
    """A cream cheese box under a shelf (so a top-down approach is blocked) and a plate.

    The box's position varies with `seed` (a few cm); `sides_blocked` (`-x`, `+x`, `-y`, `+y`)
    adds walls beside the box, blocking side approaches too; `shelf=False` leaves the box in the
    open (the control case). The goal is on(cheese, plate).
    """
    rng = np.random.default_rng(seed)
    x, y = 0.2 + rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03)
    walls = {"-x": ("wall_minus_x", [x - 0.06, y, 0.04], [0.005, 0.06, 0.04]),
             "+x": ("wall_plus_x", [x + 0.06, y, 0.04], [0.005, 0.06, 0.04]),
             "-y": ("wall_minus_y", [x, y - 0.06, 0.04], [0.06, 0.005, 0.04]),
             "+y": ("wall_plus_y", [x, y + 0.06, 0.04], [0.06, 0.005, 0.04])}
    obstacles = {"shelf_1": ([x, y, 0.09], [0.05, 0.06, 0.01])} if shelf else {}
    for side in sides_blocked:
        name, centre, half = walls[side]
        obstacles[name] = (centre, half)
    return ObstacleScene({"cream_cheese_1": ([x, y, 0.02], [0.02, 0.02, 0.02]),
                          "plate_1": ([-0.1, 0.2, 0.005], [0.05, 0.05, 0.005])},
                         obstacles, goal=[("on", "cream_cheese_1", "plate_1")])
