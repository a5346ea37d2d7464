"""`plan_to`: `move_to` along a collision-free path planned before the arm moves.

The path comes from `tether.scenes.motion` (OMPL's RRT-Connect over the scene's configuration
space, `Robot.motion_space`), as end-effector waypoints a few cm apart that the Cartesian
controller tracks one control step per tick, so guards and monitors above the leaf still
re-check every step. A target that no collision-free arm configuration reaches, or that no path
joins, fails with UNREACHABLE on the first tick, before any command.
"""

from __future__ import annotations

import numpy as np
import py_trees
from scipy.spatial.transform import Rotation

from tether.behaviours.primitives import MoveTo, Progress, Target
from tether.blackboard.episode import STUCK, UNREACHABLE
from tether.blackboard.references import Ref, deref
from tether.scenes.motion import plan_motion

Status = py_trees.common.Status


class PlanTo(MoveTo):
    """Move the end effector to a target along a planned collision-free path.

    Tick contract: when it starts, reads the target once (its position and orientation as
    `move_to` computes them) and plans a path that touches nothing but the entities in `allow`
    and the target's own entity (and what it carries). The first tick after a failed plan returns
    FAILURE with UNREACHABLE without commanding. Otherwise each tick servos toward the next
    waypoint (passed within `PASS` m); SUCCESS within `tolerance` m (and YAW_TOLERANCE) of the
    last, without a command that tick. FAILURE with UNREACHABLE after `max_steps` ticks, with
    STUCK when the path left to go has not shrunk by 2 mm over `stuck_steps` ticks. The planner
    is seeded (`seed`), so a run is reproducible; `planning_time` bounds its computation (s).
    """

    PASS = 0.02  # m

    def __init__(self, name: str, target: Target, *, tolerance: float, max_steps: int,
                 stuck_steps: int, yaw: float | None, allow: tuple[str | Ref, ...],
                 planning_time: float, seed: int = 0):
        super().__init__(name, target, tolerance=tolerance, max_steps=max_steps,
                         stuck_steps=stuck_steps, yaw=yaw)
        self.allow, self.planning_time, self.seed = allow, planning_time, seed

    def initialise(self) -> None:
        super().initialise()
        allow = [deref(a) for a in self.allow]
        allow += [deref(n) for n in (self.target.object, self.target.carrying) if n is not None]
        goal = self.target.position(self.robot, self.start)
        space = self.robot.motion_space(allow)
        self.plan = plan_motion(space, goal, self.quat, seed=self.seed,
                                time_limit=self.planning_time)
        self.next, self.progress = 0, Progress(0.002, self.stuck_steps)

    def update(self) -> Status:
        if self.plan.failure:
            return self.fail(UNREACHABLE, self.plan.failure)
        here = self.robot.eef_pose()
        points = self.plan.waypoints
        while self.next < len(points) - 1 and \
                np.linalg.norm(points[self.next].pos - here.pos) <= self.PASS:
            self.next += 1
        goal = points[-1]
        error = float(np.linalg.norm(goal.pos - here.pos))
        turn = float((Rotation.from_quat(goal.quat) * Rotation.from_quat(here.quat).inv())
                     .magnitude()) if self.turning else 0.0
        left = float(np.linalg.norm(points[self.next].pos - here.pos)) + sum(
            float(np.linalg.norm(b.pos - a.pos))
            for a, b in zip(points[self.next:], points[self.next + 1:], strict=False))
        self.feedback_message = f"waypoint {self.next + 1}/{len(points)}, {left * 100:.1f} cm to go"
        if error <= self.tolerance and turn <= self.YAW_TOLERANCE:
            return Status.SUCCESS
        self.ticks += 1
        if self.ticks > self.max_steps:
            return self.fail(UNREACHABLE, f"{left * 100:.1f} cm of path left after "
                                          f"{self.max_steps} steps")
        if self.progress.stalled(-(left + self.METRES_PER_RADIAN * turn)):
            return self.fail(STUCK, f"no progress for {self.stuck_steps} steps, "
                                    f"{left * 100:.1f} cm of path left")
        point = points[self.next]
        self.command(self.robot.servo(point.pos, point.quat, self.robot.gripper_command))
        return Status.RUNNING
