"""Where the fingers close on an object, from its bounding box and whether it is hollow.

The Panda's fingers close along one horizontal world axis: y with the wrist at yaw 0 (LIBERO's
default), x with the wrist turned to yaw pi/2. A grasp is a point the fingertips straddle, for
fingers closing along `axis`. A hollow object (open-topped, `Robot.is_hollow`, decided from its
geometry by `tether.scenes.hollows`: a bowl, a mug, a basket) is taken at the rim, on the wall the
fingers can pinch (the +y wall for `axis="y"`, the -x wall, nearer the robot, for `axis="x"`), 3 cm
above a bowl's base. Everything else is taken across its middle, a little below its top (below
the thin parts on top, a carton's gable, as far as the fingers reach: `grasp_box`).
`grasp_point` is a pure function of the object's world bounding box and its hollowness;
`finger_probes` gives the points the open fingertips and the hand above them (20 cm long along the
closing axis) occupy there, with the wrist at any yaw, which a scene can test for room
(`Robot.clear_from_above`). `clear_grasp` is the grasp the scene has room for at a yaw: a solid
object's grasp point is slid across the closing axis, as little as will do, until the gripper
clears its neighbours; a hollow one's is raised, a few mm at most, until the hand (3 cm above the
fingertips) clears the walls of a drawer the bowl stands in. A hollow object at the edge of the
arm's reach (`EDGE_REACH` from its base, `Robot.reach`) is taken only at the wall nearer the
robot, with the wrist turned: the +y wall, as far out as the middle, leaves the elbow straight,
at its limit, and the lift and carry stall there. `turned_grasp` is the one tried when
the wrist at yaw 0 has no room: the wrist turned a quarter; when that has no room either, for a
hollow object the rim point, every 15 degrees around it, with room for fingers closing across its
wall there (`rim_grasps`: the wrist least turned first), and for a solid object the open fingers
can span, a smaller turn. `square_yaw` is the wrist yaw that closes the fingers across an upright
box's thinner horizontal side (a standing book), and `slot_yaw` the one that lines that side up
with a region's narrower side, so that what is held that way goes into a narrow slot.

A grasp whose way down stalled is a `Stall` (the episode remembers them:
`tether.blackboard.grasp_stalls`); `clear_grasp` and `turned_grasp` pass over a candidate
`STALLS` stalls `match` (the same yaw, within `SAME_PLACE` of the same point on the object, the
object not moved `MOVED` since), so a retry takes the next candidate instead of the same motion
once more, and `turned_grasp` raises `NoGraspLeft` when every candidate it would take has
stalled so.
`handle_grasps` take a handle (`tether.scenes.handles`) from above across it, from its outer
end inward; `by_handle` says which objects are taken so (a hollow one whose handle rises to its
top) and `clear_handle_grasp` is the first of them the hand has room for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from tether.scenes.handles import Handle

if TYPE_CHECKING:
    from tether.scenes.robot import Robot

RIM_INSET = 0.012  # from the bowl's outer edge to the middle of its wall (m)
RIM_DEPTH = 0.023  # fingertips below the rim: 3 cm above a LIBERO bowl's base (m)
RIM_FLOOR = 0.012  # ... and at least this far above its bottom: over a plate's dish floor (m)
BODY_DEPTH = 0.03  # fingertips below the top of a solid object (m)
FINGER_REACH = 0.045  # open fingertip centre from the grasp point, along the closing axis (m)
FINGER_HALF_WIDTH = 0.01  # half the width of a fingertip, across the closing axis (m)
HAND_HALF_LENGTH = 0.105  # the hand's half length, along the closing axis (m)
# The hand across the closing axis, in two tiers: (height of the tier's underside above the grasp
# point, its half width) for the narrow finger mount and the wider body above it (m).
HAND_TIERS = ((0.03, 0.025), (0.085, 0.035))
HAND_PROBE_SPACING = 0.015  # between the hand's probes along the closing axis (m)
SLIDE_STEP = 0.005  # between the grasp points tried across the closing axis (m)
SLIDE_MARGIN = 0.005  # kept between a slid fingertip's edge and the object's edge (m)
RIM_RAISE = 0.008  # highest a rim grasp is raised for the hand: fingertips 1.5 cm under the rim (m)
RAISE_STEP = 0.002  # between the heights a rim grasp tries (m)
MAX_SPAN = 0.065  # widest object chord the open fingers (7.7 cm apart) close on (m)
TURNED_YAWS = (np.pi / 2, -np.pi / 6, np.pi / 6, -np.pi / 3, np.pi / 3)  # in the order tried
RIM_STEP = 15  # between the rim points a hollow object's turned grasp tries (degrees)
FINGER_OUTER = 0.008  # an open fingertip's centre to its outer face, along the closing axis (m)
FINGERTIP_BELOW = 0.01  # the fingertips' lowest point under the end effector (m)
HANDLE_INSET = 0.012  # from a handle's outer end to where the fingers close on it (m)
HANDLE_DEPTH = 0.012  # fingertips below the handle's top (m)
HANDLE_SHARE = 0.75  # a handle grasp slides over this outer share of the handle's length
HANDLE_AT_TOP = 0.005  # a handle whose top is this near the object's top is its highest part (m)
SAME_PLACE = 0.01  # grasp points nearer than this on the object are the same candidate (m)
SAME_YAW = np.radians(5)  # wrist yaws nearer than this are the same candidate (rad)
MOVED = 0.02  # an object moved this far since a grasp stalled is a new situation (m)
STALLS = 2  # a candidate is passed over once it stalled this often: once may be a passing contact
EDGE_REACH = 0.72  # m from the arm's base (horizontally) beyond which a rim is taken nearest it
THIN_PART = 0.008  # a part thinner than this (a panel, a beam) is no top a grasp is measured from
FINGERS_UNDER_TOP = 0.045  # deepest fingertips go under the top of what fills their gap (m; the
# hand meets a carton's ridge 4.7 cm above them)


class NoGraspLeft(Exception):
    """Every grasp candidate of an object stalled on its way down."""


@dataclass(frozen=True)
class Stall:
    """A grasp whose way down stalled: the object's box middle then (`middle`), the grasp
    point's offset from it (`offset`) and the wrist yaw (`yaw`), world frame."""

    middle: tuple[float, float, float]
    offset: tuple[float, float, float]
    yaw: float

    @classmethod
    def of(cls, low: np.ndarray, high: np.ndarray, point: np.ndarray, yaw: float) -> Stall:
        """The stall of the grasp at `point`, `yaw` of the object in the box (`low`, `high`)."""
        middle = (np.asarray(low) + np.asarray(high)) / 2.0
        return cls(tuple(map(float, middle)), tuple(map(float, np.asarray(point) - middle)),
                   float(yaw))

    def matches(self, low: np.ndarray, high: np.ndarray, point: np.ndarray, yaw: float) -> bool:
        """Whether the grasp at `point`, `yaw` of the object now in (`low`, `high`) is this
        one, the object still where it was."""
        middle = (np.asarray(low) + np.asarray(high)) / 2.0
        return bool(np.linalg.norm(middle - self.middle) < MOVED
                    and np.linalg.norm(np.asarray(point) - middle - self.offset) < SAME_PLACE
                    and abs(fold(yaw - self.yaw)) < SAME_YAW)


def _stalled(stalls: Sequence[Stall], low: np.ndarray, high: np.ndarray, point: np.ndarray,
             yaw: float) -> bool:
    return sum(s.matches(low, high, point, yaw) for s in stalls) >= STALLS


def grasp_box(robot: Robot, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The box a grasp of object `name` is measured from: its bounding box, a solid object's
    topped below the thin parts on its top (`Robot.thin_top`), as far as the fingers reach
    (`FINGERS_UNDER_TOP`): the pads close on a carton's body, not on the ends of its gable's
    panels, where a fingertip let go hooks and lifts it."""
    low, high = robot.extent_of(name)
    if robot.is_hollow(name):
        return low, high
    drop = min(robot.thin_top(name), FINGERS_UNDER_TOP - BODY_DEPTH)
    return low, high - [0.0, 0.0, drop]


def grasp_point(low: np.ndarray, high: np.ndarray, axis: str = "y", *, hollow: bool
                ) -> np.ndarray:
    """The fingertip point for grasping an object (bounding box `low`, `high`; `hollow`: taken
    at the rim) with fingers closing along world `axis` ("y" or "x")."""
    centre = (low + high) / 2.0
    if hollow:
        rim = rim_height(low, high)
        if axis == "y":
            return np.array([centre[0], high[1] - RIM_INSET, rim])
        return np.array([low[0] + RIM_INSET, centre[1], rim])
    depth = min(BODY_DEPTH, (high[2] - low[2]) / 2.0)
    return np.array([centre[0], centre[1], high[2] - depth])


def rim_height(low: np.ndarray, high: np.ndarray) -> float:
    """The height of the fingertips on a hollow object's rim: `RIM_DEPTH` below its top, and
    no lower than `RIM_FLOOR` above its bottom."""
    return float(max(high[2] - RIM_DEPTH, low[2] + RIM_FLOOR))


def axis_of(yaw: float) -> str:
    """The world axis ("y" or "x") nearest the one fingers close along with the wrist at `yaw`."""
    return "x" if abs(np.sin(yaw)) > 0.7 else "y"


def _axes(yaw: float) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors along and across the fingers' closing axis with the wrist at `yaw`."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([-s, c, 0.0]), np.array([c, s, 0.0])


def finger_probes(point: np.ndarray, yaw: float = 0.0, outer: bool = False) -> list[np.ndarray]:
    """Points the open gripper occupies when grasping at `point` with the wrist at `yaw`: each
    fingertip's centre and its two edges (with `outer`, its outer face's too: a rim grasp puts
    the outer finger in the gap around a bowl's wall), and a grid over each tier of the hand's
    underside."""
    along, across = _axes(yaw)
    reaches = (FINGER_REACH, FINGER_REACH + FINGER_OUTER) if outer else (FINGER_REACH,)
    tips = np.array([(side * reach, edge * FINGER_HALF_WIDTH)
                     for reach in reaches for side in (-1, 1) for edge in (-1, 0, 1)])
    tips = point + tips[:, :1] * along + tips[:, 1:] * across
    n = int(np.ceil(2 * HAND_HALF_LENGTH / HAND_PROBE_SPACING)) + 1
    hand = np.array([(height, a, edge * half_width)
                     for height, half_width in HAND_TIERS for edge in (-1, 0, 1)
                     for a in np.linspace(-HAND_HALF_LENGTH, HAND_HALF_LENGTH, n)])
    hand = (point + hand[:, :1] * [0, 0, 1]) + hand[:, 1:2] * along + hand[:, 2:] * across
    return list(tips) + list(hand)


def span(low: np.ndarray, high: np.ndarray, yaw: float) -> float:
    """Length of the chord through the middle of the box (`low`, `high`) along the closing axis
    at `yaw`: how far apart the fingers must be to come down around it."""
    size = high - low
    along = np.abs(_axes(yaw)[0][:2])
    return float(min(size[i] / along[i] for i in (0, 1) if along[i] > 1e-9))


def grasp_candidates(low: np.ndarray, high: np.ndarray, yaw: float = 0.0, *, hollow: bool
                     ) -> list[np.ndarray]:
    """Grasp points to try with the wrist at `yaw`, nearest the middle first: `grasp_point`, then
    a hollow object's raised in `RAISE_STEP`s up to `RIM_RAISE` (the hand above the rim clears
    what the bowl stands in), a solid object's slid across the closing axis in `SLIDE_STEP`s
    while the fingertips stay on the object."""
    point = grasp_point(low, high, axis_of(yaw), hollow=hollow)
    if hollow:
        steps = int(RIM_RAISE / RAISE_STEP + 1e-9)
        return [point + [0, 0, k * RAISE_STEP] for k in range(steps + 1)]
    across = _axes(yaw)[1]
    room = float(np.abs(across) @ (high - low)) / 2.0 - FINGER_HALF_WIDTH - SLIDE_MARGIN
    steps = int(max(room, 0.0) / SLIDE_STEP + 1e-9)
    return [point] + [point + sign * k * SLIDE_STEP * across
                      for k in range(1, steps + 1) for sign in (-1, 1)]


def clear_grasp(robot: Robot, name: str, yaw: float = 0.0, stalls: Sequence[Stall] = ()
                ) -> tuple[np.ndarray, bool]:
    """The first of `grasp_candidates` no stall matches that the open gripper at `yaw` can come
    straight down onto, and True; `grasp_point` and False when none can, or when a hollow
    object beyond `EDGE_REACH` would be taken anywhere but at the wall nearer the robot."""
    low, high = grasp_box(robot, name)
    hollow = robot.is_hollow(name)
    candidates = grasp_candidates(low, high, yaw=yaw, hollow=hollow)
    if hollow and axis_of(yaw) == "y" and robot.reach((low + high) / 2.0) > EDGE_REACH:
        return candidates[0], False
    for point in candidates:
        if not _stalled(stalls, low, high, point, yaw) and \
                robot.clear_from_above(finger_probes(point, yaw), ignore=name):
            return point, True
    return candidates[0], False


def rim_grasps(low: np.ndarray, high: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """A hollow object's rim points every `RIM_STEP` degrees around it, each with the wrist yaw
    that closes the fingers across its wall there; the wrist least turned first (ties: the
    side nearer the robot, -x), and none with the wrist unturned."""
    centre = (low + high) / 2.0
    radius = min(high[0] - low[0], high[1] - low[1]) / 2.0 - RIM_INSET
    rim = rim_height(low, high)
    grasps = []
    for degrees in range(0, 360, RIM_STEP):
        out = np.array([np.cos(np.radians(degrees)), np.sin(np.radians(degrees)), 0.0])
        yaw = fold(np.arctan2(-out[0], out[1]))  # the fingers close along (-sin yaw, cos yaw)
        point = centre + radius * out
        point[2] = rim
        grasps.append((round(abs(yaw), 6), abs(degrees - 180), point, yaw))
    return [(point, yaw) for turn, _, point, yaw in sorted(grasps, key=lambda g: g[:2]) if turn]


def open_hand_box(eef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The box the open fingertips fill, whatever the wrist's yaw, with the end effector at
    `eef`: `FINGER_REACH` + `FINGER_OUTER` every way across, from `FINGERTIP_BELOW` under it to
    the hand's top tier above."""
    half = np.array([FINGER_REACH + FINGER_OUTER] * 2)
    return (np.array([*(eef[:2] - half), eef[2] - FINGERTIP_BELOW]),
            np.array([*(eef[:2] + half), eef[2] + HAND_TIERS[-1][0]]))


def turned_grasp(robot: Robot, name: str, stalls: Sequence[Stall] = ()
                 ) -> tuple[np.ndarray, float]:
    """The grasp point and wrist yaw when the wrist at yaw 0 has no room: the quarter turn when
    it has room; else for a hollow object the first of `rim_grasps` with room, fingertips'
    outer faces included, and for a solid one the first other of `TURNED_YAWS` with room whose
    `span` the open fingers fit; else, as the last resort, the quarter turn's grasp point, or
    for a solid object too long across it (a cream cheese box lying lengthwise) the first other
    turn whose span they fit: fingers closing along the long side stay open on it, wedged, and
    lift it only to keep it when they open. (The quarter turn comes first because `place`
    turns a hand at it back to yaw 0 to set a bowl into a drawer.) Each passes over the
    candidates `stalls` match; `NoGraspLeft` when even the last resort did."""
    low, high = grasp_box(robot, name)
    hollow = robot.is_hollow(name)
    quarter, clear = clear_grasp(robot, name, TURNED_YAWS[0], stalls)
    if clear and (hollow or span(low, high, TURNED_YAWS[0]) <= MAX_SPAN):
        return quarter, TURNED_YAWS[0]
    if hollow:
        for point, yaw in rim_grasps(low, high):
            if not _stalled(stalls, low, high, point, yaw) and \
                    robot.clear_from_above(finger_probes(point, yaw, outer=True), ignore=name):
                return point, yaw
    else:
        for yaw in (y for y in TURNED_YAWS[1:] if span(low, high, y) <= MAX_SPAN):
            point, clear = clear_grasp(robot, name, yaw, stalls)
            if clear:
                return point, yaw
    last = quarter, TURNED_YAWS[0]
    if not hollow and span(low, high, TURNED_YAWS[0]) > MAX_SPAN:
        last = next(((grasp_candidates(low, high, yaw, hollow=False)[0], yaw)
                     for yaw in TURNED_YAWS[1:] if span(low, high, yaw) <= MAX_SPAN), last)
    if _stalled(stalls, low, high, *last):
        raise NoGraspLeft(f"every grasp of '{name}' tried stalled on its way down "
                          f"({len(stalls)} stalled)")
    return last


def handle_grasps(handle: Handle) -> list[tuple[np.ndarray, float]]:
    """Grasps of `handle` from above, the wrist turned to close the fingers across it: the point
    `HANDLE_INSET` in from its outer end, `HANDLE_DEPTH` below its top, then slid toward the body
    in `SLIDE_STEP`s over the outer `HANDLE_SHARE` of its length (where a neighbour leaves the
    hand no room at its end)."""
    out = handle.outward
    length = float(np.abs(out) @ (handle.high - handle.low))
    yaw = fold(float(np.arctan2(out[1], out[0])))  # fingers close along (-sin yaw, cos yaw)
    end = handle.middle + (length / 2.0 - HANDLE_INSET) * out
    end[2] = handle.high[2] - HANDLE_DEPTH
    steps = int(max(HANDLE_SHARE * length - HANDLE_INSET, 0.0) / SLIDE_STEP + 1e-9)
    return [(end - k * SLIDE_STEP * out, yaw) for k in range(steps + 1)]


def clear_handle_grasp(robot: Robot, name: str, stalls: Sequence[Stall] = ()
                       ) -> tuple[np.ndarray, float] | None:
    """The first of `handle_grasps` of the handle `name` is taken by (`by_handle`) that no stall
    matches and the open gripper can come straight down onto; None when there is none."""
    handle = by_handle(robot, name)
    if handle is None:
        return None
    low, high = grasp_box(robot, name)
    return next(((point, yaw) for point, yaw in handle_grasps(handle)
                 if not _stalled(stalls, low, high, point, yaw)
                 and robot.clear_from_above(finger_probes(point, yaw), ignore=name)), None)


def by_handle(robot: Robot, name: str) -> Handle | None:
    """The handle an object is taken by, or None: a hollow object's (`Robot.handle_of`) whose
    top is the object's top (within `HANDLE_AT_TOP`), as a frying pan's. Its rim, lower, is
    not where `grasp_point` puts the fingertips (that is measured from the top), and the rim
    point on the handle's side lands on the handle; a mug's handle, below its rim, is not."""
    if not robot.is_hollow(name):
        return None
    handle = robot.handle_of(name)
    if handle is None or handle.high[2] < robot.extent_of(name)[1][2] - HANDLE_AT_TOP:
        return None
    return handle


def fold(yaw: float) -> float:
    """`yaw` plus a multiple of pi, in [-pi/2, pi/2): the fingers close along the same line."""
    return float((yaw + np.pi / 2) % np.pi - np.pi / 2)


def nearest_yaw(yaw: float, near: float) -> float:
    """The wrist yaw nearest `near` at which the fingers close along the same line as at `yaw`."""
    return near + fold(yaw - near)


def square_yaw(quat: np.ndarray, low: np.ndarray, high: np.ndarray) -> float:
    """The wrist yaw at which the fingers close across the thinner horizontal side of an upright
    box turned by `quat` (x, y, z, w) whose world bounding box is (`low`, `high`). The box's
    sides a (along its own x) and b (along its own y) turned by t give a world box
    a|cos t| + b|sin t| by a|sin t| + b|cos t|, so a - b has the sign of
    (size x - size y) / (|cos t| - |sin t|)."""
    x = Rotation.from_quat(quat).apply([1.0, 0.0, 0.0])
    t = float(np.arctan2(x[1], x[0]))
    size = high - low
    thin = t if (size[0] - size[1]) * (abs(np.cos(t)) - abs(np.sin(t))) < 0 else t + np.pi / 2
    return fold(thin - np.pi / 2)  # the fingers close along (-sin yaw, cos yaw)


def slot_yaw(low: np.ndarray, high: np.ndarray, yaw: float) -> float:
    """The wrist yaw nearest `yaw` at which the fingers close along the narrower horizontal side
    of the region (`low`, `high`)."""
    size = high - low
    return nearest_yaw(np.pi / 2 if size[0] < size[1] else 0.0, yaw)
