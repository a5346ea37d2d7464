"""Collision-free motion: a path for the end effector from where it is to a goal pose.

The planner works on a `ConfigurationSpace` (`tether.scenes.robot`), the interface a scene provides
for one motion: the arm's joint limits and current configuration, whether a configuration is free
(touching nothing but what the motion may touch), the end effector's pose at a configuration, and
inverse kinematics. The MuJoCo scene's space reads the simulator's geometry
(`tether.scenes.arm_space`, privileged); a perceived geometry can stand in later behind the same
interface.

    space = robot.motion_space(allow=["akita_black_bowl_1"])
    plan = plan_motion(space, goal_pos, goal_quat, seed=0)
    if plan.failure: ...                      # no IK solution, or no collision-free path
    for pose in plan.waypoints: ...           # end-effector poses, about `spacing` m apart

The goal configuration comes from IK; OMPL's RRT-Connect joins the start to it through free
configurations (edges checked every `resolution` of the space's extent), the path is
shortcut-simplified and interpolated, and its configurations are turned into end-effector poses
that the Cartesian controller tracks. OMPL's random generator is seeded, so a seed gives the same
path; the search stops after `max_checks` collision checks, a budget of work rather than of
time, so whether a hard query is solved does not depend on the machine's speed or load.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tether.scenes.robot import ConfigurationSpace, Pose

LEAVE = 0.01  # how far from a start in contact the contact is ignored (of the space's extent)


@dataclass(frozen=True)
class Plan:
    """A planned motion: end-effector waypoints (the last is the goal), or why there is none."""

    waypoints: list[Pose] = field(default_factory=list)
    failure: str | None = None
    seconds: float = 0.0  # computation time of the plan (reported, never used to decide)


def plan_motion(space: ConfigurationSpace, pos: np.ndarray, quat: np.ndarray, *, seed: int,
                max_checks: int = 20000, resolution: float = 0.005,
                spacing: float = 0.02) -> Plan:
    """Plan from the current configuration to the end effector at (`pos`, `quat`)."""
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou

    began = time.perf_counter()
    ou.setLogLevel(ou.LOG_NONE)
    ou.RNG.setSeed(seed + 1)  # OMPL takes 0 as "choose a seed"
    goal = space.solve(np.asarray(pos, float), np.asarray(quat, float), seed)
    if goal is None:
        return Plan(failure="no collision-free arm configuration reaches the target",
                    seconds=time.perf_counter() - began)
    start = space.current()
    low, high = space.limits()
    n = len(start)
    bounds = ob.RealVectorBounds(n)
    for i in range(n):
        bounds.setLow(i, float(low[i]))
        bounds.setHigh(i, float(high[i]))
    state_space = ob.RealVectorStateSpace(n)
    state_space.setBounds(bounds)
    setup = og.SimpleSetup(state_space)
    # an arm that starts in contact (a finger on what it just set down) may leave it: near a
    # start that is not free, every configuration counts as free
    leave = 0.0 if space.free(start) else LEAVE * float(np.linalg.norm(high - low))

    checks = [0]

    def valid(state) -> bool:
        checks[0] += 1
        q = np.array([state[i] for i in range(n)])
        return bool(np.linalg.norm(q - start) < leave) or space.free(q)

    setup.setStateValidityChecker(valid)
    setup.getSpaceInformation().setStateValidityCheckingResolution(resolution)
    endpoints = []
    for q in (np.clip(start, low, high), goal):
        state = state_space.allocState()
        for i in range(n):
            state[i] = float(q[i])
        endpoints.append(state)
    setup.setStartAndGoalStates(*endpoints)
    setup.setPlanner(og.RRTConnect(setup.getSpaceInformation()))
    spent = ob.PlannerTerminationCondition(lambda: checks[0] >= max_checks)
    solved = setup.solve(spent) and setup.haveExactSolutionPath()
    if not solved:
        return Plan(failure=f"no collision-free path found in {max_checks} collision checks",
                    seconds=time.perf_counter() - began)
    setup.simplifySolution()
    path = setup.getSolutionPath()
    configs = [np.array([path.getState(k)[i] for i in range(n)])
               for k in range(path.getStateCount())]
    waypoints = _dense([space.pose(q) for q in _joint_steps(configs, space, spacing)], spacing)
    return Plan(waypoints=waypoints, seconds=time.perf_counter() - began)


def _joint_steps(configs: list[np.ndarray], space: ConfigurationSpace,
                 spacing: float) -> list[np.ndarray]:
    """The path's configurations with each segment cut so that the end effector moves about
    `spacing` m or less per piece (a straight joint segment curves in Cartesian space)."""
    out = [configs[0]]
    for a, b in zip(configs, configs[1:], strict=False):
        travel = float(np.linalg.norm(space.pose(b).pos - space.pose(a).pos))
        pieces = max(1, int(np.ceil(2 * travel / spacing)))
        out.extend(a + (b - a) * t for t in np.linspace(0, 1, pieces + 1)[1:])
    return out


def _dense(poses: list[Pose], spacing: float) -> list[Pose]:
    """Drop poses closer than `spacing` to the last kept one (the goal is always kept)."""
    kept = [poses[0]]
    for p in poses[1:-1]:
        if np.linalg.norm(p.pos - kept[-1].pos) >= spacing:
            kept.append(p)
    return [*kept[1:], poses[-1]]
