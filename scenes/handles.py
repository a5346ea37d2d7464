"""An object's handle, found from the boxes of its collision geometry (a mug's, a pot's).

A handle is a narrow part sticking out of a round body along one of the object's own horizontal
axes. Seen from above in the object's frame, the body alone is as wide along both axes (its
diameter, the narrower width of the footprint); the handle widens the footprint along the axis
it points. Along that axis the body spans one diameter from one end, and the boxes whose middles
lie beyond that on the other end, each narrow, are the handle when they are narrow across it
together (the far wall of the body, found on the wrong end, is as wide as the body). A
footprint that is longer by less than `MIN_PROTRUSION`, or whose part beyond is wider than
`MAX_WIDTH` or than `MAX_SHARE` of the diameter, has no handle (a long box made of several
parts: its parts beyond a width from either end are as wide as it).
Pure functions of boxes in the object's frame, tested without a scene (`Robot.handle_of` gives a
scene's, in the world frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_PROTRUSION = 0.015  # how far a handle sticks out of the body's footprint at least (m)
MAX_WIDTH = 0.04  # widest a handle is across the direction it points (m) ...
MAX_SHARE = 0.5  # ... and at most this share of the body's diameter

Box = tuple[np.ndarray, np.ndarray]  # (low, high) corners, world frame


@dataclass(frozen=True)
class Handle:
    """A handle's bounding box and the horizontal unit vector it points along, out of the body
    (in the frame of the boxes it was found among)."""

    low: np.ndarray
    high: np.ndarray
    outward: np.ndarray

    @property
    def middle(self) -> np.ndarray:
        return (self.low + self.high) / 2.0


def find_handle(boxes: list[Box]) -> Handle | None:
    """The handle among an object's collision boxes (in its own frame), or None."""
    if len(boxes) < 2:
        return None
    lows, highs = np.array([b[0] for b in boxes]), np.array([b[1] for b in boxes])
    corners = _corners(lows, highs)
    units = np.eye(2)
    along = corners @ units.T  # (corners, directions)
    widths = along.max(0) - along.min(0)
    diameter, widest = float(widths.min()), int(widths.argmax())
    if widths[widest] - diameter < MIN_PROTRUSION:
        return None
    u = units[widest]
    v = np.array([-u[1], u[0]])
    middles = (lows[:, :2] + highs[:, :2]) / 2.0 @ u
    low_end, high_end = float(along[:, widest].min()), float(along[:, widest].max())
    best = None
    narrow = (highs - lows)[:, :2] @ np.abs(v) <= MAX_WIDTH  # a wide box is no handle's part
    ends = ((1.0, middles > low_end + diameter), (-1.0, middles < high_end - diameter))
    for sign, beyond in ends:
        beyond = beyond & narrow
        if not beyond.any():
            continue
        across = _corners(lows[beyond], highs[beyond]) @ v
        width = float(across.max() - across.min())
        if width <= min(MAX_WIDTH, MAX_SHARE * diameter) and (best is None or width < best[0]):
            best = (width, sign, beyond)
    if best is None:
        return None
    _, sign, beyond = best
    return Handle(lows[beyond].min(0), highs[beyond].max(0), np.array([*(sign * u), 0.0]))


def _corners(lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """The four horizontal corners of each box, as (x, y) rows."""
    return np.concatenate([np.stack([xs[:, 0], ys[:, 1]], 1)
                           for xs in (lows, highs) for ys in (lows, highs)])
