"""A physics-free tabletop: boxes, a point end effector and an ideal gripper.

`KinematicScene` implements the `Robot` interface in a few microseconds per step, so tree
semantics (RUNNING across ticks, preemption, budgets) can be tested and trees dry-run without
MuJoCo. The end effector follows a fraction of each commanded delta; closing the gripper within
`GRASP_RADIUS` of an object's centre attaches it; a carried object cannot be pushed down through
what is below it, and an opened gripper drops it onto that. Goals are `on` literals; `on(a, b)`
holds when a rests on b's top inside its extent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from tether.scenes.aliases import resolve as resolve_alias
from tether.scenes.robot import CLOSE, Pose, Robot

RESPONSE = 0.4  # fraction of a commanded delta the end effector achieves in one step
GRASP_RADIUS = 0.02
FINGER_SPEED = 0.01  # m per step
TABLE_Z = 0.0


class PointSpace:
    """The configuration space of a `KinematicScene`'s point end effector (`tether.scenes.motion`):
    a configuration is its position, inside `bounds`; it is free outside every obstacle grown by
    `margin`; its orientation stays `quat`."""

    def __init__(self, scene: KinematicScene, obstacles: list[str], bounds: tuple[np.ndarray,
                 np.ndarray], margin: float):
        self.scene, self.obstacles, self.bounds, self.margin = scene, obstacles, bounds, margin
        self.quat = scene.eef_pose().quat

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self.bounds

    def current(self) -> np.ndarray:
        return self.scene.eef_pose().pos

    def free(self, q: np.ndarray) -> bool:
        boxes = self.scene.boxes
        return not any(np.all(np.abs(q - boxes[n].pos) <= boxes[n].half + self.margin)
                       for n in self.obstacles)

    def pose(self, q: np.ndarray) -> Pose:
        return Pose(np.array(q, float), self.quat.copy())

    def solve(self, pos: np.ndarray, quat: np.ndarray, seed: int) -> np.ndarray | None:
        inside = np.all((pos >= self.bounds[0]) & (pos <= self.bounds[1]))
        return np.array(pos, float) if inside and self.free(pos) else None


@dataclass
class Box:
    pos: np.ndarray
    half: np.ndarray


class KinematicScene(Robot):
    """A table with named boxes; `goal` is a list of `("on", a, b)` literals. The end effector
    passes through them all unless they are `obstacles` (`tether.scenes.obstacles`)."""

    obstacles: frozenset[str] = frozenset()
    MARGIN = 0.01  # clearance a planned motion keeps from obstacles (m)
    REACH = 0.6  # half side of the cube around the origin a planned motion stays in (m)

    def __init__(self, boxes: dict[str, tuple[list[float], list[float]]],
                 goal: list[tuple[str, ...]] = (), eef: tuple[float, float, float] = (0, 0, 0.3)):
        super().__init__()
        self.boxes = {n: Box(np.array(p, float), np.array(h, float)) for n, (p, h) in boxes.items()}
        self.start = {n: b.pos.copy() for n, b in self.boxes.items()}
        self._goal = list(goal)
        self.eef = np.array(eef, float)
        self.quat = Rotation.from_euler("xyz", [np.pi, 0, 0]).as_quat()
        self.width = 0.08
        self.held: str | None = None

    def eef_pose(self) -> Pose:
        return Pose(self.eef.copy(), self.quat.copy())

    def motion_space(self, allow, carrying: str | None = None) -> PointSpace:
        """The end effector as a point (what it carries is not modelled); obstacles not in
        `allow` are avoided."""
        reach = np.full(3, self.REACH)
        return PointSpace(self, [n for n in sorted(self.obstacles) if n not in allow],
                          (-reach, reach), self.MARGIN)

    def gripper_width(self) -> float:
        return self.width

    def entities(self) -> list[str]:
        return list(self.boxes)

    def resolve(self, name: str) -> str:
        return resolve_alias(name, self.entities())

    def world_key(self) -> bytes:
        """Where every box is and its size (a held box moves with the hand)."""
        return b"".join(b.pos.tobytes() + b.half.tobytes() for b in self.boxes.values())

    def pose_of(self, name: str) -> Pose:
        return Pose(self.boxes[name].pos.copy())

    def start_pose_of(self, name: str) -> Pose:
        return Pose(self.start[name].copy())

    def extent_of(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        b = self.boxes[name]
        return b.pos - b.half, b.pos + b.half

    def goal(self) -> list[tuple[str, ...]]:
        return self._goal

    def goal_predicate(self, name: str, args: list[str]) -> bool:
        if name != "on":
            return False
        a, b = self.boxes[args[0]], self.boxes[args[1]]
        inside = np.all(np.abs(a.pos[:2] - b.pos[:2]) <= b.half[:2])
        resting = abs((a.pos[2] - a.half[2]) - (b.pos[2] + b.half[2])) < 0.005
        return bool(inside and resting and self.held != args[0])

    def is_grasped(self, name: str) -> bool:
        return self.held == name

    def _apply(self, action: np.ndarray) -> None:
        self.eef = self.eef + action[:3] * self.gains.max_translation * RESPONSE
        turn = Rotation.from_rotvec(action[3:6] * self.gains.max_rotation * RESPONSE)
        self.quat = (turn * Rotation.from_quat(self.quat)).as_quat()
        if action[6] >= CLOSE:
            self._close_fingers()
        else:
            self.width = min(0.08, self.width + FINGER_SPEED)
            if self.held is not None:
                self._drop(self.held)
                self.held = None
        if self.held is not None:
            box = self.boxes[self.held]
            box.pos[:2] = self.eef[:2]
            self.eef[2] = max(self.eef[2], self._support(self.held) + box.half[2])
            box.pos = self.eef.copy()

    def _close_fingers(self) -> None:
        if self.held is None:
            near = [n for n, b in self.boxes.items()
                    if np.linalg.norm(b.pos - self.eef) <= GRASP_RADIUS]
            if near:
                self.held = near[0]
        stop = 2 * self.boxes[self.held].half[1] if self.held else 0.0
        self.width = max(stop, self.width - FINGER_SPEED)

    def _support(self, name: str) -> float:
        """The highest top under `name`'s footprint that is not above its bottom (or the table)."""
        box = self.boxes[name]
        support = TABLE_Z
        for other, b in self.boxes.items():
            if other != name and np.all(np.abs(box.pos[:2] - b.pos[:2]) <= b.half[:2]):
                top = b.pos[2] + b.half[2]
                if top <= box.pos[2] - box.half[2] + 1e-6:
                    support = max(support, top)
        return support

    def _drop(self, name: str) -> None:
        box = self.boxes[name]
        box.pos[2] = self._support(name) + box.half[2]
