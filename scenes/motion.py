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

A straight line comes first (unless `straight_first` is off): when every pose along it (every
`spacing` m, the hand turning evenly) has a free IK solution, it is the plan, as a straight
`move_to` would go. Otherwise the
goal configuration comes from IK; OMPL's RRT-Connect joins the start to it through free
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
from scipy.spatial.transform import Rotation, Slerp

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
                spacing: float = 0.02, straight_first: bool = True) -> Plan:
    """Plan from the current configuration to the end effector at (`pos`, `quat`)."""
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou

    began = time.perf_counter()
    ou.setLogLevel(ou.LOG_NONE)
    ou.RNG.setSeed(seed + 1)  # OMPL takes 0 as "choose a seed"
    straight = straight_first and _straight(space, np.asarray(pos, float),
                                            np.asarray(quat, float), seed, spacing)
    if straight:
        return Plan(waypoints=straight, seconds=time.perf_counter() - began)
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


def _straight(space: ConfigurationSpace, pos: np.ndarray, quat: np.ndarray, seed: int,
              spacing: float) -> list[Pose]:
    """The straight line to the goal, the hand turning evenly on the way, as waypoints every
    `spacing` m, when every one of them has a free IK solution; else []."""
    here = space.pose(space.current())
    if not space.free(space.current()):
        return []  # in contact at the start (a finger on what it set down): plan the way out
    turn = Slerp([0.0, 1.0], Rotation.from_quat([here.quat, quat]))
    pieces = max(1, int(np.ceil(np.linalg.norm(pos - here.pos) / spacing)))
    poses = [Pose(here.pos + (pos - here.pos) * t, turn([t]).as_quat()[0])
             for t in np.linspace(0.0, 1.0, pieces + 1)[1:]]
    for p in poses:
        if space.solve(p.pos, p.quat, seed) is None:
            return []
    return poses


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
