"""`plan_to`: `move_to` along a collision-free path planned before the arm moves; `plan_grasp`:
the same to an object's best feasible grasp, the next one each time it starts again.

The path comes from `tether.scenes.motion` (OMPL's RRT-Connect over the scene's configuration
space, `Robot.motion_space`), as end-effector waypoints a few cm apart that the Cartesian
controller tracks one control step per tick, so guards and monitors above the leaf still
re-check every step. A target that no collision-free arm configuration reaches, or that no path
joins, fails with UNREACHABLE on the first tick, before any command.
"""

from __future__ import annotations

from itertools import islice

import numpy as np
import py_trees
from scipy.spatial.transform import Rotation

from tether.behaviours.primitives import MoveTo, Progress, Target
from tether.blackboard.episode import STUCK, UNREACHABLE
from tether.blackboard.references import Ref, deref
from tether.scenes.grasp_choice import feasible
from tether.scenes.motion import Plan, plan_motion
from tether.scenes.robot import CLOSE, Pose

Status = py_trees.common.Status


class PlanTo(MoveTo):
    """Move the end effector to a target along a planned collision-free path.

    Tick contract: when it starts, reads the target once (its position and orientation as
    `move_to` computes them) and plans a path that touches nothing but the entities in `allow`
    and the target's own entity; the object a target is `carrying` moves with the hand in the
    plan, and may not touch anything else either. The first tick after a failed plan returns
    FAILURE with UNREACHABLE without commanding. Otherwise each tick servos toward the next
    waypoint (passed within `PASS` m) in the waypoint's orientation or, with the gripper closed
    (holding something), turning to the goal's orientation and keeping it as `move_to` does;
    SUCCESS within `tolerance` m (and YAW_TOLERANCE) of the last, without a command that tick.
    FAILURE with UNREACHABLE after `max_steps` ticks, with STUCK when the path left to go has not
    shrunk by 2 mm over `stuck_steps` ticks. The planner is seeded (`seed`) and its search
    bounded by `planning_checks` collision checks, so a run is reproducible.
    """

    PASS = 0.02  # m

    def __init__(self, name: str, target: Target, *, tolerance: float, max_steps: int,
                 stuck_steps: int, yaw: float | None, allow: tuple[str | Ref, ...],
                 planning_checks: int, seed: int = 0):
        super().__init__(name, target, tolerance=tolerance, max_steps=max_steps,
                         stuck_steps=stuck_steps, yaw=yaw)
        self.allow, self.planning_checks, self.seed = allow, planning_checks, seed

    def initialise(self) -> None:
        super().initialise()
        self.plan = self.make_plan()
        self.next, self.progress = 0, Progress(0.002, self.stuck_steps)

    def make_plan(self) -> Plan:
        """The path to the target, touching only what the motion may touch."""
        allow = [deref(a) for a in self.allow]
        allow += [deref(n) for n in (self.target.object, self.target.carrying) if n is not None]
        carrying = None if self.target.carrying is None else deref(self.target.carrying)
        goal = self.target.position(self.robot, self.start)
        return plan_motion(self.robot.motion_space(allow, carrying), goal, self.quat,
                           seed=self.seed, max_checks=self.planning_checks)

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
        turn = float((Rotation.from_quat(self.quat) * Rotation.from_quat(here.quat).inv())
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
        # holding something, the hand turns to the goal's orientation and keeps it (as `move_to`),
        # whatever the joint path does between its waypoints: what it carries is not tipped out
        grip = self.robot.gripper_command
        quat = self.quat if grip == CLOSE else points[self.next].quat
        self.command(self.robot.servo(points[self.next].pos, quat, grip))
        return Status.RUNNING


class PlanGrasp(PlanTo):
    """Bring the open fingers onto one of an object's feasible grasps along a planned path.

    Tick contract: when it starts, ranks the object's grasps (`tether.scenes.grasp_choice`:
    from above, around the rim, from the side; kept when reachable with the whole hand clear
    all along the way in; checked lazily, so the first costs only its own checks) and takes the
    first the first time it starts, the next each time it starts again (a retry after
    EMPTY_GRASP), round the list; plans a collision-free path to
    `approach` m before it and then goes straight in, the hand turned as the grasp says. The
    first tick returns FAILURE with UNREACHABLE when the object has no feasible grasp or no path
    reaches it; otherwise as `plan_to` (SUCCESS at the grasp point). It does not close the
    gripper.
    """

    def __init__(self, name: str, obj: str | Ref, *, approach: float, tolerance: float,
                 max_steps: int, stuck_steps: int, allow: tuple[str | Ref, ...],
                 planning_checks: int, seed: int = 0):
        super().__init__(name, Target(object=obj), tolerance=tolerance, max_steps=max_steps,
                         stuck_steps=stuck_steps, yaw=None, allow=allow,
                         planning_checks=planning_checks, seed=seed)
        self.approach, self.starts = approach, 0

    def make_plan(self) -> Plan:
        name = deref(self.target.object)
        grasp = next(islice(feasible(self.robot, name, approach=self.approach), self.starts,
                            None), None)
        if grasp is None and self.starts:  # past the last: round to the first again
            self.starts = 0
            grasp = next(feasible(self.robot, name, approach=self.approach), None)
        if grasp is None:
            return Plan(failure=f"'{name}' has no grasp the arm reaches with the hand clear")
        self.starts += 1
        self.quat, self.turning = grasp.quat, True
        self.feedback_message = f"{grasp.kind} grasp, feasible grasp {self.starts}"
        before = grasp.point - self.approach * grasp.approach
        allow = [deref(a) for a in self.allow]
        plan = plan_motion(self.robot.motion_space(allow), before, grasp.quat, seed=self.seed,
                           max_checks=self.planning_checks, straight_first=False)
        if plan.failure:
            return plan
        steps = int(np.ceil(self.approach / self.PASS))
        way_in = [Pose(before + (grasp.point - before) * k / steps, grasp.quat)
                  for k in range(1, steps + 1)]
        return Plan(waypoints=[*plan.waypoints, *way_in], seconds=plan.seconds)
