"""The way a carried object goes to its target: straight, around what stands in its way, or over.

A `place` carries an object in a straight line from where it was lifted to over its target. A
fixture standing between the two (a cabinet beside the plate) can be taller than that line, and
the object, held below the hand, knocks into it and is torn from the fingers. `carry_way` gives
the end effector's way points (the target's point itself excluded):

- for a target higher than the start (a cabinet's top), unless something is over the object:
  straight up to the target's height first, then as below from there (coming up diagonally, the
  object meets the edge of what it is set down on, which the way does not look under);
- none when the straight line is clear: the object's footprint (its box's corners and middle,
  `INFLATE` wider), looked under every `STEP` along the way by `floor_at` (which a scene answers
  from its geometry, `Robot.carry_way`), stays `MARGIN` above everything there, coming down
  evenly as it goes when the target's point is lower than the start;
- else, for a target lower than the start, when the level line at the carry's height is clear:
  across at that height, then straight down onto the target's point (a bowl lifted off a
  cabinet's top and carried down to a plate would otherwise sink into what stands between);
- else a way around at the height the object is carried: the shortest path over a `STEP` grid
  of footprints with room (A*, eight neighbours, cut short where a straight line has room),
  never farther from the robot's base than `ARM_REACH` or, beyond it, than the farther of its
  two ends, if it is at most `DETOUR` times the straight line's length;
- else straight up to the height at which the straight line has room, and across at that
  height (at most `RISE` up, and only with nothing over the object: `ceiling_at`; a bowl lifted
  inside a drawer cannot rise through the cabinet's top);
- else none: the straight line, as before.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

MARGIN = 0.03  # the carried object's bottom above what it passes over (m)
INFLATE = 0.01  # the footprint looked under, wider than the object's box on every side (m)
STEP = 0.02  # between the places looked under along a way, and the grid's cell size (m)
RISE = 0.30  # the highest a carry rises above where the end effector is (m): the arm's reach
DETOUR = 2.0  # the longest way around, as a multiple of the straight line's length
REACH = 0.25  # how far outside the straight line's box a way around may go (m)
ARM_REACH = 0.75  # how far from the robot's base, horizontally, a way around may go (m): an
# arm stretched past it can no longer follow the way

Floor = Callable[[np.ndarray], float]


def footprint(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The corners and the middle of the box's horizontal extent, `INFLATE` wider, around its
    middle (5 x 2)."""
    half = (high[:2] - low[:2]) / 2 + INFLATE
    return np.array([[-1, -1], [-1, 1], [1, -1], [1, 1], [0, 0]]) * half


def carry_way(start: np.ndarray, goal: np.ndarray, low: np.ndarray, high: np.ndarray,
              floor_at: Floor, ceiling_at: Floor, base: np.ndarray | None = None
              ) -> list[np.ndarray]:
    """The end effector's way points from `start` to `goal` (both excluded) carrying the object
    in the box (`low`, `high`, moving with the end effector): see the module's docstring.
    `floor_at(xy points)` is the top of the highest thing under them, `ceiling_at(xy points)`
    the bottom of the lowest thing over the object; `base` the robot base's x, y (None: no
    limit of reach)."""
    start, goal = np.asarray(start, dtype=float), np.asarray(goal, dtype=float)
    shape, offset = footprint(low, high), (low[:2] + high[:2]) / 2 - start[:2]
    bottom = float(low[2])

    def floor(xy: np.ndarray) -> float:  # under the object with the end effector at xy
        return floor_at(shape + xy + offset)

    def line(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:  # from a, b excluded
        n = max(int(np.ceil(np.linalg.norm(b - a) / STEP)), 1)
        return [a + t * (b - a) for t in np.arange(n) / n]

    def room(xy: np.ndarray) -> bool:
        return floor(xy) + MARGIN <= bottom

    reach = np.inf if base is None else max(
        ARM_REACH, *(float(np.linalg.norm(end[:2] - base[:2])) for end in (start, goal)))

    def reached(xy: np.ndarray) -> bool:
        return base is None or float(np.linalg.norm(xy - base[:2])) <= reach

    climb = goal[2] - start[2]
    if climb > 0.0 and ceiling_at(shape + start[:2] + offset) >= high[2] + climb + MARGIN:
        raised, up = np.array([*start[:2], goal[2]]), np.array([0.0, 0.0, climb])
        return [raised, *carry_way(raised, goal, low + up, high + up, floor_at, ceiling_at, base)]
    straight = line(start[:2], goal[:2])
    drop = min(climb, 0.0)  # a carry that ends lower comes down as it goes
    if all(floor(xy) + MARGIN <= bottom + drop * k / len(straight)
           for k, xy in enumerate(straight)):
        return []
    down = [np.array([*goal[:2], start[2]])] if drop < 0.0 else []  # then straight down
    rise = max(floor(xy) for xy in straight) + MARGIN - bottom
    if rise <= 0.0:  # the level line has room
        return down
    around = _around(start[:2], goal[:2], lambda xy: reached(xy) and room(xy), line)
    if around is not None:
        return [np.array([x, y, start[2]]) for x, y in around] + down
    if rise <= RISE and ceiling_at(shape + start[:2] + offset) >= high[2] + rise + MARGIN:
        height = start[2] + rise
        return [np.array([*start[:2], height]), np.array([*goal[:2], height])]
    return []


def _around(start: np.ndarray, goal: np.ndarray, room: Callable[[np.ndarray], bool],
            line: Callable[[np.ndarray, np.ndarray], list[np.ndarray]]
            ) -> list[np.ndarray] | None:
    """The corners of the shortest way from `start` to `goal` (both excluded) through grid
    points with `room`, cut short where a straight line has room; None when there is none or it
    is longer than `DETOUR` times the straight line."""
    def point(cell: tuple[int, int]) -> np.ndarray:
        return start + STEP * np.array(cell, dtype=float)

    target = tuple(np.round((goal - start) / STEP).astype(int))
    reach = int(REACH / STEP)
    lo = np.minimum((0, 0), target) - reach
    hi = np.maximum((0, 0), target) + reach
    free: dict[tuple[int, int], bool] = {(0, 0): True, target: True}

    def open_(cell: tuple[int, int]) -> bool:
        if cell not in free:
            free[cell] = bool(np.all(cell >= lo) and np.all(cell <= hi) and room(point(cell)))
        return free[cell]

    straight = float(np.linalg.norm(goal - start))
    came: dict[tuple[int, int], tuple[int, int]] = {}
    cost = {(0, 0): 0.0}
    queue = [(0.0, (0, 0))]
    while queue:
        _, cell = heapq.heappop(queue)
        if cell == target:
            break
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                step = (cell[0] + dx, cell[1] + dy)
                if (dx or dy) and open_(step):
                    new = cost[cell] + STEP * float(np.hypot(dx, dy))
                    if new < cost.get(step, np.inf) and new <= DETOUR * straight:
                        cost[step], came[step] = new, cell
                        rest = STEP * float(np.hypot(*np.subtract(target, step)))
                        heapq.heappush(queue, (new + rest, step))
    if target not in came:
        return None
    path = [target]
    while path[-1] != (0, 0):
        path.append(came[path[-1]])
    points = [point(c) for c in reversed(path)]
    points[-1] = goal
    corners, here = [], 0
    while here < len(points) - 1:  # the farthest point a straight line from here has room to
        there = next(k for k in range(len(points) - 1, here, -1)
                     if k == here + 1 or all(room(xy) for xy in line(points[here], points[k])))
        corners.append(points[there])
        here = there
    return corners[:-1]
