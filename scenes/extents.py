"""Exact world bounding boxes of MuJoCo bodies, from their geometry.

`geom_aabb` rotated into the world over-estimates a bowl by 40% (a ring of small boxes becomes
a square of big ones), which is fatal when fingers must land on a rim. `BodyExtents` keeps each
body subtree's geometry as points in the geoms' own frames (mesh vertices; the 8 corners of
boxes; the corners of the local bounding box for spheres, cylinders and capsules) and transforms
them with the current geom poses, so the box is tight for any orientation. A mesh is reduced to
its convex hull's vertices (same box under any rotation; a bowl's 128k vertices become 1.6k), cached
by content so LIBERO's hard resets do not recompute it: a bowl's box costs ~1 ms, not ~100 ms.
"""

from __future__ import annotations

import hashlib

import mujoco
import numpy as np
from scipy.spatial import ConvexHull, QhullError

DIGITS = 12  # decimals of a pose (m, quaternion components) that tell it from another
_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
_HULLS: dict[bytes, np.ndarray] = {}


def _hull(points: np.ndarray) -> np.ndarray:
    """The vertices of the convex hull of `points` (all of them when the hull is degenerate)."""
    key = hashlib.blake2b(points.tobytes(), digest_size=16).digest()
    if key not in _HULLS:
        try:
            _HULLS[key] = points[ConvexHull(points).vertices]
        except QhullError:
            _HULLS[key] = points
    return _HULLS[key]


def _local_points(model: mujoco.MjModel, geom: int) -> np.ndarray:
    if model.geom_type[geom] == mujoco.mjtGeom.mjGEOM_MESH:
        mesh = model.geom_dataid[geom]
        start = model.mesh_vertadr[mesh]
        return _hull(np.array(model.mesh_vert[start:start + model.mesh_vertnum[mesh]], float))
    aabb = model.geom_aabb[geom]
    return aabb[:3] + _CORNERS * aabb[3:]


class BodyExtents:
    """World AABBs of body subtrees, computed from exact geometry at the geoms' current poses."""

    def __init__(self, model: mujoco.MjModel, roots: dict[str, int]):
        children: dict[int, list[int]] = {}
        for b in range(1, model.nbody):
            children.setdefault(int(model.body_parentid[b]), []).append(b)
        self.bodies: dict[str, np.ndarray] = {}  # per name: its subtree's bodies
        self.geoms: dict[str, np.ndarray] = {}
        self.points: dict[str, list[np.ndarray]] = {}
        self.colliding: dict[str, np.ndarray] = {}  # per geom: in collision group 0
        self.thickness: dict[str, list[float]] = {}  # per geom: its least extent in its own frame
        # per name: its geoms grouped by number of points rounded up to a power of two (places
        # in `geoms`, points stacked and padded with zeros), to be posed a group at a time
        self._stacks: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self._last: dict[str, _Posed] = {}  # the last poses each body was asked at
        for name, root in roots.items():
            bodies, stack = [], [root]
            while stack:
                b = stack.pop()
                bodies.append(b)
                stack.extend(children.get(b, []))
            geoms = np.flatnonzero(np.isin(model.geom_bodyid, bodies))
            self.bodies[name] = np.array(bodies)
            self.geoms[name] = geoms
            self.points[name] = [_local_points(model, g) for g in geoms]
            self.colliding[name] = model.geom_group[geoms] == 0
            self.thickness[name] = [float(np.ptp(p, axis=0).min()) for p in self.points[name]]
            self._stacks[name] = _stacks(self.points[name])

    def __contains__(self, name: str) -> bool:
        return name in self.geoms and len(self.geoms[name]) > 0

    def of(self, name: str, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) corners of `name`'s world-frame bounding box."""
        low, high = self._posed(name, data).box
        return low.copy(), high.copy()

    def parts(self, name: str, data: mujoco.MjData, origin: np.ndarray, axes: np.ndarray
              ) -> list[tuple[np.ndarray, np.ndarray]]:
        """(low, high) corners of each of `name`'s collision geoms' bounding boxes in the frame
        at `origin` whose axes are the columns of `axes` (3x3, world)."""
        local = [(pts - origin) @ axes for pts in self._posed(name, data).points]
        return [(pts.min(axis=0), pts.max(axis=0))
                for pts, colliding in zip(local, self.colliding[name], strict=True) if colliding]

    def tops(self, name: str, data: mujoco.MjData, thin: float) -> tuple[float, float]:
        """The highest points of `name`'s colliding geoms that are at least `thin` thick in their
        own frame and of those thinner (slabs, beams); -inf for a kind it has none of."""
        tops = {True: -np.inf, False: -np.inf}
        for world, thickness, colliding in zip(self._posed(name, data).points,
                                               self.thickness[name], self.colliding[name],
                                               strict=True):
            if colliding:
                tops[thickness >= thin] = max(tops[thickness >= thin], float(world[:, 2].max()))
        return tops[True], tops[False]

    def _posed(self, name: str, data: mujoco.MjData) -> _Posed:
        """`name` at its geoms' poses in `data`; computed again only when one of its bodies has
        moved by `DIGITS` decimals (fixtures never move, a resting object's orientation wanders
        only in its last bits, and a tick asks for the same body several times). Poses equal to
        the last ones bit for bit are not rounded to be compared."""
        geoms, bodies = self.geoms[name], self.bodies[name]
        xpos, xquat = data.xpos[bodies], data.xquat[bodies]
        raw = xpos.tobytes() + xquat.tobytes()
        posed = self._last.get(name)
        if posed is not None and posed.raw == raw:
            return posed
        poses = np.round(xpos, DIGITS).tobytes() + np.round(xquat, DIGITS).tobytes()
        if posed is None or posed.poses != poses:
            points: list[np.ndarray] = [np.empty(0)] * len(geoms)
            for places, stacked in self._stacks[name]:
                g = geoms[places]  # each geom's points at its pose, a group in one product
                world = data.geom_xpos[g][:, None, :] + np.matmul(
                    stacked, data.geom_xmat[g].reshape(-1, 3, 3).transpose(0, 2, 1))
                for place, posed_points in zip(places, world, strict=True):
                    points[place] = posed_points[:len(self.points[name][place])]
            posed = _Posed(poses, points)
        posed.raw = raw
        self._last[name] = posed
        return posed


def _stacks(points: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Geoms' points grouped by their number rounded up to a power of two: each group's places
    in `points` and its points stacked, padded with zeros (a padded row changes no other: each
    point is posed by itself)."""
    rounded = np.array([1 << (len(p) - 1).bit_length() for p in points], dtype=int)
    stacks = []
    for size in np.unique(rounded):
        places = np.flatnonzero(rounded == size)
        stacked = np.zeros((len(places), size, 3))
        for row, place in zip(stacked, places, strict=True):
            row[:len(points[place])] = points[place]
        stacks.append((places, stacked))
    return stacks


class _Posed:
    """A body's points in the world at one set of geom poses, and their bounding box (`raw`:
    the poses it was last asked at, unrounded)."""

    def __init__(self, poses: bytes, points: list[np.ndarray]):
        self.poses, self.points, self.raw = poses, points, b""
        # a column at a time: numpy reduces an (n, 3) array along its rows ten times slower
        columns = np.ascontiguousarray(np.concatenate(points).T)
        self.box = columns.min(axis=1), columns.max(axis=1)
