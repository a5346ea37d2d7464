"""Joints: an articulated part (a drawer, a door, a knob) as its model's joint describes it.

A `Joint` is read from the scene (privileged: MuJoCo's joint type, axis, range and the moving
body's pose; `Robot.joint_of`) and gives skills a frame to act in, so that the same library
tree opens a drawer, closes it or turns a knob however its fixture stands:

    joint = robot.joint_of("wooden_cabinet_1_top_region")
    joint.kind, joint.opening()        # 'slide', the world direction the drawer comes out
    joint.frame()                      # 3x3: columns x, y, z of the joint frame in the world

The joint frame's +y points the way the part moves as the joint opens (a drawer comes out, a
knob's bar end nearest the robot moves as it turns on), its +z up, its +x along a hinge's arm
toward that end (for a slide: to the right of +y, seen from above). With `closing` its +y is
reversed, a mirror image: the same offsets then push the same point of the part the other way
(a knob turned off by that end). Written in it, a tree's offsets and turns
are those of a part whose opening faces world +y, whatever the fixture's yaw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SLIDE, HINGE = "slide", "hinge"


@dataclass(frozen=True)
class Joint:
    """One joint: `kind` (`slide` or `hinge`), a point on its axis and the unit axis along which
    a positive move opens the part (m or rad), `origin` (a slide's moving part, a hinge's axis
    point), `arm` (a hinge's horizontal unit vector from the axis along its arm toward the
    robot, `arm_of`; zero for a slide), how far it is `open` from shut and its full `travel`
    (both >= 0, m or rad)."""

    kind: str
    anchor: np.ndarray
    axis: np.ndarray
    origin: np.ndarray
    arm: np.ndarray
    open: float
    travel: float

    def opening(self) -> np.ndarray:
        """The horizontal unit direction in which the part moves as it opens: a slide's axis, or
        for a hinge the direction its arm's end (`arm` from the axis) moves."""
        way = self.axis if self.kind == SLIDE else np.cross(self.axis, self.arm)
        flat = np.array([way[0], way[1], 0.0])
        return flat / np.linalg.norm(flat)

    def frame(self, closing: bool = False) -> np.ndarray:
        """The joint frame's axes as the columns of a 3x3 matrix (see the module docstring): a
        rotation, or with `closing` a mirror image (+y reversed)."""
        y, z = self.opening(), np.array([0.0, 0.0, 1.0])
        x = self.arm if self.kind == HINGE else np.cross(y, z)
        return np.column_stack([x, -y if closing else y, z])


def arm_of(corners: np.ndarray, anchor, toward) -> np.ndarray:
    """The horizontal unit direction from a hinge's axis (through `anchor`) along its body's
    arm, from the world corners (n x 3) of the body's geometry's boxes: their principal
    horizontal axis, counting only what stands in the upper half of the body's height (a knob's
    bar above its disc; all of a door), toward the side nearer the point `toward` (the robot)."""
    corners = np.asarray(corners, dtype=float)
    low, high = corners[:, 2].min(), corners[:, 2].max()
    upper = corners[corners[:, 2] >= (low + high) / 2][:, :2] - np.asarray(anchor, float)[:2]
    spread = upper - upper.mean(axis=0)
    _, vectors = np.linalg.eigh(spread.T @ spread)
    arm = vectors[:, -1]
    if np.dot(arm, np.asarray(toward, float)[:2] - np.asarray(anchor, float)[:2]) < 0:
        arm = -arm
    return np.array([*arm, 0.0])


def from_model(kind: str, anchor, axis, low: float, high: float, qpos: float, origin,
               arm) -> Joint:
    """A `Joint` from a model's joint: its world `anchor` and `axis`, range `low..high` (shut at
    the end nearer zero, open toward the far end), position `qpos`, the moving part's world
    `origin` and a hinge's `arm` (`arm_of`)."""
    sense = -1.0 if abs(low) > abs(high) else 1.0
    anchor = np.asarray(anchor, dtype=float)
    arm = np.zeros(3) if kind == SLIDE else np.asarray(arm, dtype=float)
    return Joint(kind, anchor, sense * np.asarray(axis, dtype=float),
                 np.asarray(origin if kind == SLIDE else anchor, dtype=float), arm,
                 float(sense * qpos), float(max(abs(low), abs(high))))
