"""`ArmSpace`: a MuJoCo arm's configuration space for the motion planner (privileged geometry).

It works on its own copy of the scene's `MjData` (the scene is never disturbed): a configuration
sets the arm's joints, `mj_fwdPosition` places the geometry and finds contacts, and the
configuration is free when no geom of the robot (arm, hand, fingers) penetrates a geom outside
the robot other than those of the entities the motion may touch. An object the hand carries
(`carried_joint`, its free joint) moves with the hand as it was held when the space was made,
and its geoms count as the robot's: what it would knock into is a collision too. Everything else
(other objects, fingers' opening) stays as it was when the space was made.

Inverse kinematics is damped least squares on MuJoCo's own site Jacobian (position and
orientation), started from the last solution this space found (poses asked in sequence, such as
along a way in, converge in a few steps), then the current configuration, then seeded random
ones inside the joint limits; a solution counts when its pose error is within `POS_TOLERANCE`
and `ROT_TOLERANCE` and it is free. A space made without `collisions` asks only the arm's
kinematics and finds every configuration free (`Robot.steer`). `swivel` moves a configuration
along the arm's self-motion, the hand held at its pose, to the nearest free one.
"""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from tether.scenes.robot import Pose


class ArmSpace:
    """Arm joints `joints` (MuJoCo joint ids) of `model`, posed on a copy of `data`."""

    POS_TOLERANCE = 0.003  # m
    ROT_TOLERANCE = 0.03  # rad
    RESTARTS = 12
    ITERATIONS = 150
    DAMPING = 0.05
    PENETRATION = 1e-3  # contacts deeper than this (m) are collisions

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, joints: list[int], *,
                 site: int, body: int, robot_geoms: Iterable[int], allowed_geoms: Iterable[int],
                 carried_geoms: Iterable[int] = (), carried_joint: int | None = None,
                 collisions: bool = True):
        self.model, self.data = model, mujoco.MjData(model)
        self.collisions = collisions
        mujoco.mj_copyData(self.data, model, data)
        self.carried = None if carried_joint is None else int(model.jnt_qposadr[carried_joint])
        if self.carried is not None:  # the object's pose in the hand's frame
            hand = data.xmat[body].reshape(3, 3)
            pos, wxyz = data.qpos[self.carried:self.carried + 3], \
                data.qpos[self.carried + 3:self.carried + 7]
            self.held_pos = hand.T @ (pos - data.xpos[body])
            self.held_rot = Rotation.from_matrix(hand).inv() * Rotation.from_quat(
                [*wxyz[1:], wxyz[0]])
        self.qadr = np.array([model.jnt_qposadr[j] for j in joints])
        self.dofs = np.array([model.jnt_dofadr[j] for j in joints])
        self.low, self.high = model.jnt_range[joints, 0].copy(), model.jnt_range[joints, 1].copy()
        self.site, self.body = site, body
        self.robot = np.zeros(model.ngeom, bool)
        self.robot[list(robot_geoms)] = True
        self.robot[list(carried_geoms)] = True
        self.allowed = np.zeros(model.ngeom, bool)
        self.allowed[list(allowed_geoms)] = True
        self.start = self.data.qpos[self.qadr].copy()
        self.last: np.ndarray | None = None  # the last solution, where the next solve starts

    def restart(self, data: mujoco.MjData) -> None:
        """Start again from `data`'s configuration (all that kinematics reads: positions and
        mocap poses), forgetting the last solution: a space without collisions kept across
        calls instead of copied anew."""
        self.data.qpos[:] = data.qpos
        self.data.mocap_pos[:], self.data.mocap_quat[:] = data.mocap_pos, data.mocap_quat
        self.start, self.last = self.data.qpos[self.qadr].copy(), None

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low, self.high

    def current(self) -> np.ndarray:
        return self.start.copy()

    def _place(self, q: np.ndarray) -> None:
        self.data.qpos[self.qadr] = q
        if self.carried is not None:
            mujoco.mj_kinematics(self.model, self.data)
            hand = self.data.xmat[self.body].reshape(3, 3)
            a = self.carried
            self.data.qpos[a:a + 3] = self.data.xpos[self.body] + hand @ self.held_pos
            xyzw = (Rotation.from_matrix(hand) * self.held_rot).as_quat()
            self.data.qpos[a + 3:a + 7] = [xyzw[3], *xyzw[:3]]
        if self.collisions:
            mujoco.mj_fwdPosition(self.model, self.data)
        else:  # what the site's pose and Jacobian need
            mujoco.mj_kinematics(self.model, self.data)
            mujoco.mj_comPos(self.model, self.data)

    def free(self, q: np.ndarray) -> bool:
        if not self.collisions:
            return True
        self._place(q)
        n = self.data.ncon
        if n == 0:
            return True
        contacts = self.data.contact
        g1, g2 = contacts.geom1[:n], contacts.geom2[:n]
        deep = contacts.dist[:n] < -self.PENETRATION
        robot1, robot2 = self.robot[g1], self.robot[g2]
        other = np.where(robot1, g2, g1)
        hits = deep & (robot1 ^ robot2) & ~self.allowed[other]
        return not bool(hits.any())

    def pose(self, q: np.ndarray) -> Pose:
        self._place(q)
        wxyz = self.data.xquat[self.body]
        return Pose(self.data.site_xpos[self.site].copy(), np.array([*wxyz[1:], wxyz[0]]))

    def solve(self, pos: np.ndarray, quat: np.ndarray, seed: int) -> np.ndarray | None:
        rng = np.random.default_rng(seed)
        goal = Rotation.from_quat(quat)
        warm = [self.start] if self.last is None else [self.last, self.start]
        for attempt in range(self.RESTARTS):
            q = warm[attempt].copy() if attempt < len(warm) else rng.uniform(self.low, self.high)
            q = self._converge(q, pos, goal)
            if q is not None and self.free(q):
                self.last = q
                return q
        return None

    def _converge(self, q: np.ndarray, pos: np.ndarray, goal: Rotation) -> np.ndarray | None:
        """Damped least-squares steps from `q` toward the pose; None if it does not get there."""
        jacp, jacr = np.zeros((3, self.model.nv)), np.zeros((3, self.model.nv))
        for _ in range(self.ITERATIONS):
            here = self.pose(q)
            dpos = pos - here.pos
            drot = (goal * Rotation.from_quat(here.quat).inv()).as_rotvec()
            if np.linalg.norm(dpos) < self.POS_TOLERANCE and \
                    np.linalg.norm(drot) < self.ROT_TOLERANCE:
                return q
            mujoco.mj_jacSite(self.model, self.data, jacp, jacr, self.site)
            jac = np.vstack([jacp[:, self.dofs], jacr[:, self.dofs]])
            err = np.concatenate([dpos, drot])
            step = jac.T @ np.linalg.solve(jac @ jac.T + self.DAMPING ** 2 * np.eye(6), err)
            q = np.clip(q + step, self.low, self.high)
        return None

    def swivel(self, q: np.ndarray, pos: np.ndarray, quat: np.ndarray, *, step: float = 0.05,
               reach: float = 2.0) -> np.ndarray | None:
        """The free configuration nearest `q` along the arm's self-motion at the pose (`pos`,
        `quat`): its null-space direction followed both ways in `step`s, each step brought back
        onto the pose (the elbow swung about the shoulder-wrist line, the hand held still), up to
        `reach` rad of travel; None when there is none."""
        goal = Rotation.from_quat(quat)
        first = self._null(q)
        walkers = [(q, first), (q, -first)]  # (configuration, direction it follows)
        for _ in range(int(reach / step)):
            moved = []
            for here, direction in walkers:
                there = self._converge(np.clip(here + step * direction, self.low, self.high),
                                       pos, goal)
                if there is None:
                    continue
                if self.free(there):
                    return there
                null = self._null(there)
                moved.append((there, null if null @ direction >= 0 else -null))
            if not moved:
                return None
            walkers = moved
        return None

    def _null(self, q: np.ndarray) -> np.ndarray:
        """The unit joint motion at `q` that moves the end effector least: the null space of its
        6 x 7 Jacobian."""
        self._place(q)
        jacp, jacr = np.zeros((3, self.model.nv)), np.zeros((3, self.model.nv))
        mujoco.mj_jacSite(self.model, self.data, jacp, jacr, self.site)
        return np.linalg.svd(np.vstack([jacp[:, self.dofs], jacr[:, self.dofs]]))[2][-1]
