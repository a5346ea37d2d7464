"""Grasps chosen by feasibility: candidates from an object's geometry, kept when the arm reaches
them without the hand or fingers touching anything else.

`candidates` lists the ways to take an object from its bounding box (`tether.scenes.grasps` for
the points) and its handle when it has one (`Robot.handle_of`, `tether.scenes.handles`): first
by the handle from above, the fingers closing across it near its outer end
(`tether.scenes.grasps.handle_grasps`; a mug's handle is made to hold it: its body's rim is
wider than the open fingers); then from above with the wrist at each yaw whose chord the open
fingers span (`top`; at yaw 0 when they span it at no yaw: what is at the top may be narrower
than the box, a pot's knob), a hollow object's rim all around (`rim`), and from the side at half
height, the hand horizontal and pointing along each horizontal axis (`side`). `feasible_grasps`
keeps, in that order of preference (handle, top, rim, side; the wrist least turned first),
those for which every pose along the straight way in (from `approach` m before the grasp to
the grasp) has a collision-free IK solution in the scene's configuration space
(`Robot.motion_space`: reachability and whole-hand clearance; the object itself may be
touched). A tree tries the first and moves to the next on
EMPTY_GRASP.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from tether.scenes.grasps import (
    MAX_SPAN,
    TURNED_YAWS,
    axis_of,
    fold,
    grasp_box,
    grasp_point,
    handle_grasps,
    rim_grasps,
    span,
)
from tether.scenes.handles import Handle
from tether.scenes.robot import Robot

KINDS = ("handle", "top", "rim", "side")  # in the order preferred
DOWN = Rotation.from_euler("xyz", [np.pi, 0.0, 0.0])  # the hand straight down, fingers along y
LINE_STEP = 0.01  # between the poses checked along the way in (m)
SIDE_DIRECTIONS = (0.0, np.pi / 2, np.pi, -np.pi / 2)  # world yaws the hand may point along
OPEN_SPAN = 0.073  # the widest chord the open fingers (7.7 cm apart) close on at all (m)


@dataclass(frozen=True)
class Grasp:
    """Where the fingertips go (`point`), the hand's orientation there (`quat`, x y z w), the
    unit direction the hand comes in along (`approach`) and the grasp's kind."""

    point: np.ndarray
    quat: np.ndarray
    approach: np.ndarray
    kind: str


def candidates(low: np.ndarray, high: np.ndarray, down: Rotation, handle: Handle | None = None,
               *, hollow: bool) -> list[Grasp]:
    """Every candidate grasp of the object in the box (`low`, `high`), in the order preferred;
    `down` is the hand pointing straight down with the wrist at yaw 0; `handle` the object's
    handle, if it has one; `hollow` whether it is open-topped (`Robot.is_hollow`)."""
    below = np.array([0.0, 0.0, -1.0])
    by_handle = [] if handle is None else [_handle_grasp(handle, down)]
    if hollow:  # pinched at the wall: the unturned rim point, then the rest of the rim
        return by_handle + [Grasp(grasp_point(low, high, hollow=True), down.as_quat(), below,
                                  "top")] + [
            Grasp(point, _turn(down, yaw).as_quat(), below, "rim")
            for point, yaw in rim_grasps(low, high)]
    grasps = by_handle + [
        Grasp(grasp_point(low, high, axis_of(yaw), hollow=False), _turn(down, yaw).as_quat(),
              below, "top")
        for yaw in _spanned(low, high, (0.0, *TURNED_YAWS)) or [0.0]]
    middle = (low + high) / 2.0
    for direction in _spanned(low, high, SIDE_DIRECTIONS):
        along = np.array([np.cos(direction), np.sin(direction), 0.0])
        # tip the downward hand a quarter about the closing axis so that it points `along`
        closing = np.array([-along[1], along[0], 0.0])
        hand = Rotation.from_rotvec(np.pi / 2 * closing) * _turn(down, fold(direction))
        if hand.apply([0.0, 0.0, 1.0]) @ along < 0:  # tipped the other way round
            hand = Rotation.from_rotvec(-np.pi / 2 * closing) * _turn(down, fold(direction))
        grasps.append(Grasp(middle.copy(), hand.as_quat(), along, "side"))
    return grasps


def feasible(robot: Robot, name: str, *, approach: float = 0.10) -> Iterator[Grasp]:
    """The candidates for `name` the arm reaches free of collision all along the straight way
    in (from `approach` m before the grasp, every `LINE_STEP` m), best first, each checked only
    when asked for (a tree that takes the first checks no more)."""
    space = robot.motion_space([name])
    along = np.linspace(0.0, approach, int(np.ceil(approach / LINE_STEP)) + 1)
    every = candidates(*grasp_box(robot, name), DOWN, robot.handle_of(name),
                       hollow=robot.is_hollow(name))
    return (grasp for seed, grasp in enumerate(every)
            if all(space.solve(grasp.point - back * grasp.approach, grasp.quat, seed) is not None
                   for back in along))


def feasible_grasps(robot: Robot, name: str, *, approach: float = 0.10) -> list[Grasp]:
    """All of `feasible`'s grasps."""
    return list(feasible(robot, name, approach=approach))


def _spanned(low: np.ndarray, high: np.ndarray, yaws: tuple[float, ...]) -> list[float]:
    """The wrist yaws at which the open fingers span the box comfortably (`MAX_SPAN`); when at
    none, those at which they span it at all (`OPEN_SPAN`: a can as wide as that every way)."""
    spans = [span(low, high, yaw) for yaw in yaws]
    easy = [yaw for yaw, width in zip(yaws, spans, strict=True) if width <= MAX_SPAN]
    return easy or [yaw for yaw, width in zip(yaws, spans, strict=True) if width <= OPEN_SPAN]


def _handle_grasp(handle: Handle, down: Rotation) -> Grasp:
    """From above onto `handle`'s outer end, the fingers closing across it (`handle_grasps`)."""
    point, yaw = handle_grasps(handle)[0]
    return Grasp(point, _turn(down, yaw).as_quat(), np.array([0.0, 0.0, -1.0]), "handle")


def _turn(down: Rotation, yaw: float) -> Rotation:
    """The downward hand with the wrist turned to `yaw` (fingers closing along -sin, cos)."""
    return Rotation.from_euler("z", yaw) * down
