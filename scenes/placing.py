"""Where and how a carried object is set down in a region: room for it and for the hand.

A region (LIBERO's "to the right of the plate", a cook region, a basket's inside) is an area,
and the goal holds wherever in it the object's origin ends up. Its middle may be taken: the
plate next to "the right of the plate" reaches into the region, a mug on that plate stands where
the hand holding the object would come down. `set_down` slides two footprints over the region:
the object's (its bounding box seen from above, widened by `MARGIN` for the fingers on its
sides), which must miss whatever stands on the surface up to the object's height, and the hand's
(`HAND_HALF` along the axis the fingers close on, `HAND_SIDE` across), which must miss whatever
stands taller than the object. It also tries the wrist turned a quarter (the object and the hand
turn with it). The answer is the centre and turn where the footprints overlap those things
least, nearest the point asked for (the region's middle, or beside it when several objects share
the region): that point itself when it is free. Between the two turns, the one where the object
sticks out of the region less wins a tie (a book turned to fit a slot), then the one nearer the
point asked for (the hand turned to miss a rack beside a bowl rather than the object set down on
the bowl's slope), and then not turning.
Pure functions of bounding boxes, so they are tested without a scene.

`spot_with_room` answers a different question, for an object set down on a bare surface (a table)
to be taken again another way: where near a point both its footprint and the `room` the hand
needs beside it (as it comes down and in to the new grasp) are bare surface, from a height map
of what stands there (rays cast down through the scene's geometry).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from tether.scenes.carry_way import ARM_REACH

MARGIN = 0.01  # around the carried object's footprint: the fingers on its sides (m)
HAND_HALF = 0.10  # the hand's half length along the axis its fingers close on (m)
HAND_SIDE = 0.03  # the hand's half width across that axis (m)
HAND_GAP = 0.01  # from the held object's top to the bottom of the hand (m)
INSET = 0.015  # how far inside the region's edge the object's centre stays (m)
STEP = 0.01  # spacing of the candidate centres (m)
ON_OFFSET = 0.014  # on another object, the farthest the centre goes off its origin along x or y:
# LIBERO's On holds only within 3 cm of it horizontally (2 cm at a corner here) (m)

SEARCH = 0.25  # how far from the point asked for a spot with room is looked for (m)
RAY_STEP = 0.005  # spacing of the heights looked at and of the spots tried (m): no thicker
# than a mug's or a door's wall, so that some ray meets it
BARE = 0.005  # what stands less than this above the surface does not count (m)
ROOM_MARGIN = 0.01  # around the footprint and the room: thin walls between two rays (m)

Box = tuple[np.ndarray, np.ndarray]  # (low, high) corners, world frame


def set_down(region: Box, carried: Box, obstacles: list[Box], axis: str,
             near: np.ndarray) -> tuple[np.ndarray, bool]:
    """The xy centre for `carried` (held by fingers closing along world `axis`, "x" or "y") in
    `region` nearest `near`, and whether to turn the wrist a quarter first."""
    (r_low, r_high), (c_low, c_high) = region, carried
    middle = (r_low[:2] + r_high[:2]) / 2.0
    reach = np.maximum((r_high[:2] - r_low[:2]) / 2.0 - INSET, 0.0)
    grid = np.vstack([near, _offsets(*np.floor(reach / STEP + 1e-9).astype(int)) + middle])
    top, height = r_high[2], c_high[2] - c_low[2]
    low = _footprints([b for b in obstacles if b[1][2] > top + 0.005 and b[0][2] < top + height])
    tall = _footprints([b for b in obstacles if b[1][2] > top + height + HAND_GAP])
    size = (c_high[:2] - c_low[:2]) / 2.0 + MARGIN
    hand = np.array([HAND_SIDE, HAND_HALF] if axis == "y" else [HAND_HALF, HAND_SIDE])
    away = grid - near
    distance = np.sqrt(np.add.reduce(away * away, axis=1))  # np.linalg.norm's sum, unwrapped
    options = []
    for turn in (False, True):
        order = slice(None, None, -1 if turn else 1)  # a quarter turn swaps x and y
        cost = _overlap(grid, size[order], low) + _overlap(grid, hand[order], tall)
        best = int(np.lexsort((distance, np.round(cost, 6)))[0])
        body = (c_high[:2] - c_low[:2])[order] / 2.0
        outside = 4 * body.prod() - _overlap(grid[best:best + 1], body, _footprints([region]))[0]
        options.append((round(float(cost[best]), 6), round(float(outside), 6),
                        round(float(distance[best]), 6), turn, grid[best].copy()))
    *_, turn, spot = min(options, key=lambda o: o[:4])
    return spot, turn


def top_of(origin: np.ndarray, extent: Box) -> Box:
    """The region an object set down on another keeps to: around the other's `origin`, at the
    top of its `extent`."""
    half = ON_OFFSET + INSET
    return (np.r_[origin[:2] - half, extent[1][2]], np.r_[origin[:2] + half, extent[1][2]])


@cache
def _offsets(nx: int, ny: int) -> np.ndarray:
    """The candidate centres' offsets from a region's middle, `STEP` apart, x-major."""
    xs, ys = STEP * np.arange(-nx, nx + 1), STEP * np.arange(-ny, ny + 1)
    offsets = np.column_stack([np.repeat(xs, len(ys)), np.tile(ys, len(xs))])
    offsets.flags.writeable = False
    return offsets


def _footprints(boxes: list[Box]) -> np.ndarray:
    """The boxes seen from above, for `_overlap`: their low and high xy corners (2, n, 1, 2)."""
    if not boxes:
        return np.zeros((2, 0, 1, 2))
    return np.array(boxes, dtype=float)[:, :, None, :2].transpose(1, 0, 2, 3)


def _overlap(centres: np.ndarray, half: np.ndarray, footprints: np.ndarray) -> np.ndarray:
    """Area of a `half`-sized rectangle at each centre covered by the `_footprints`, summed box
    after box."""
    low, high = footprints
    if not len(low):
        return np.zeros(len(centres))
    wide = np.maximum(np.minimum(centres + half, high) - np.maximum(centres - half, low), 0.0)
    return np.cumsum(wide[..., 0] * wide[..., 1], axis=0)[-1]


def spot_with_room(near: np.ndarray, half: np.ndarray, room: np.ndarray,
                   heights: Callable[[np.ndarray], np.ndarray],
                   base: np.ndarray, keep_out: Box | None = None) -> np.ndarray | None:
    """The xy nearest `near` (within `SEARCH`, on a `RAY_STEP` grid, and no farther from the arm's
    `base` than `ARM_REACH` or `near` is) where the object's footprint (`half` its xy size,
    around the spot) is bare surface, off the box `keep_out` (seen from above; where a drawer
    comes as it opens), and nothing stands in the rectangle `room` (2 x 2: low and high xy
    corners, from the spot; the hand may pass over an edge), all `ROOM_MARGIN` wider; None when
    there is none. `heights` gives the height of the top of what stands at each of n
    xy points (n x 2; -inf over nothing); the surface is the height most of the searched area
    has (the table: the commonest centimetre, and in it the middle height)."""
    near, base = np.asarray(near, dtype=float), np.asarray(base, dtype=float)[:2]
    reach = max(ARM_REACH, float(np.linalg.norm(near - base)))
    room = np.asarray(room, dtype=float)
    low = np.minimum(-half, room[0]) - ROOM_MARGIN - SEARCH - RAY_STEP
    high = np.maximum(half, room[1]) + ROOM_MARGIN + SEARCH + RAY_STEP
    n_low, n_high = np.floor(low / RAY_STEP).astype(int), np.ceil(high / RAY_STEP).astype(int)
    axes = [np.arange(a, b + 1) for a, b in zip(n_low, n_high, strict=True)]
    cells = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    top = np.asarray(heights(cells.reshape(-1, 2) * RAY_STEP + near), dtype=float)
    top = top.reshape(cells.shape[:2])
    found = top[np.isfinite(top)]
    if not len(found):
        return None
    centimetres = np.round(found, 2)
    values, counts = np.unique(centimetres, return_counts=True)
    surface = float(np.median(found[centimetres == values[counts.argmax()]]))
    standing = _summed(top > surface + BARE)
    off = _summed(~(top >= surface - BARE))  # past the table's edge, or into a hole

    def clear(summed: np.ndarray, centre: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
        a = np.floor((lo - ROOM_MARGIN) / RAY_STEP).astype(int) + centre - n_low
        b = np.ceil((hi + ROOM_MARGIN) / RAY_STEP).astype(int) + centre - n_low + 1
        return summed[b[0], b[1]] - summed[a[0], b[1]] - summed[b[0], a[1]] \
            + summed[a[0], a[1]] == 0

    off_limits = _footprints([] if keep_out is None else [keep_out])
    steps = np.arange(-round(SEARCH / RAY_STEP), round(SEARCH / RAY_STEP) + 1)
    offsets = np.stack(np.meshgrid(steps, steps, indexing="ij"), axis=-1).reshape(-1, 2)
    offsets = offsets[np.argsort(np.hypot(*offsets.T), kind="stable")]
    for offset in offsets:
        spot = near + offset * RAY_STEP
        if np.hypot(*offset) * RAY_STEP <= SEARCH and np.linalg.norm(spot - base) <= reach \
                and clear(standing, offset, -half, half) and clear(off, offset, -half, half) \
                and clear(standing, offset, room[0], room[1]) \
                and not _overlap(spot[None], half + ROOM_MARGIN, off_limits)[0]:
            return spot
    return None


def _summed(cells: np.ndarray) -> np.ndarray:
    """The summed-area table of a 2-D mask, a row and a column of zeros before it."""
    return np.pad(cells.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
