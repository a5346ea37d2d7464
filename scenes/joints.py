"""Joints: an articulated part (a drawer, a door, a knob) as its model's joint describes it.

A `Joint` is read from the scene (privileged: MuJoCo's joint type, axis, range and the moving
body's pose; `Robot.joint_of`) and gives skills a frame to act in, so that the same library
tree opens a drawer, closes it or turns a knob however its fixture stands:

    joint = robot.joint_of("wooden_cabinet_1_top_region")
    joint.kind, joint.opening()        # 'slide', the world direction the drawer comes out
    joint.frame_yaw()                  # the world turned about z so that +y is that direction

The joint frame is the world frame turned about z so that its +y points the way the part's
`origin` moves as the joint opens (turns on), or closes (turns off) with `closing`: written in
it, a tree's offsets and turns are those of a part whose opening faces world +y.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SLIDE, HINGE = "slide", "hinge"


@dataclass(frozen=True)
class Joint:
    """One joint: `kind` (`slide` or `hinge`), a point on its axis and the unit axis along which
    a positive move opens the part (m or rad), `origin` (a slide's moving part, the point of a
    hinge's arm: its axis point), `arm` (a hinge's horizontal unit vector from the axis along
    the moving body's x axis, toward the robot; zero for a slide), how far it is `open` from shut
    and its full `travel` (both >= 0, m or rad)."""

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

    def frame_yaw(self, closing: bool = False) -> float:
        """The joint frame's turn about world z (rad): +y along `opening()`, or against it when
        `closing`."""
        way = self.opening() * (-1.0 if closing else 1.0)
        return float(np.arctan2(way[1], way[0]) - np.pi / 2)


def arm_of(corners: np.ndarray, anchor) -> np.ndarray:
    """The horizontal unit direction a hinged body's arm lies along, from the world corners
    (n x 3) of its geometry's boxes: their principal horizontal axis, counting only what stands
    in the upper half of the body's height (a knob's bar above its disc; all of a door)."""
    corners = np.asarray(corners, dtype=float)
    low, high = corners[:, 2].min(), corners[:, 2].max()
    upper = corners[corners[:, 2] >= (low + high) / 2][:, :2] - np.asarray(anchor, float)[:2]
    spread = upper - upper.mean(axis=0)
    _, vectors = np.linalg.eigh(spread.T @ spread)
    return np.array([*vectors[:, -1], 0.0])


def from_model(kind: str, anchor, axis, low: float, high: float, qpos: float, origin,
               arm, toward) -> Joint:
    """A `Joint` from a model's joint: its world `anchor` and `axis`, range `low..high` (shut at
    the end nearer zero, open toward the far end), position `qpos`, the moving part's world
    `origin`, a hinge's `arm` direction (`arm_of`; either sense) and a point `toward` which the
    arm is turned (the robot)."""
    sense = -1.0 if abs(low) > abs(high) else 1.0
    anchor = np.asarray(anchor, dtype=float)
    arm = np.zeros(3) if kind == SLIDE else np.asarray(arm, dtype=float)
    if np.dot(arm[:2], np.asarray(toward, float)[:2] - anchor[:2]) < 0:
        arm = -arm
    return Joint(kind, anchor, sense * np.asarray(axis, dtype=float),
                 np.asarray(origin if kind == SLIDE else anchor, dtype=float), arm,
                 float(sense * qpos), float(max(abs(low), abs(high))))
