"""Planning time per motion of `plan_to`'s planner on LIBERO scenes; prints a table.

    python benchmarks/motion_planning.py                          # libero_goal/0..2, state 0
    python benchmarks/motion_planning.py --task libero_10/3 --init-states 0 1 2

For the entity each goal literal of each scene acts on (privileged geometry:
`LiberoScene.motion_space`), two motions are planned from the start pose without moving the arm: an
approach 10 cm above the entity's top (touching nothing) and the descent onto its `grasp` point
(the entity may be touched), the hand kept as it starts. A row gives the motion, whether a path was
found (else the planner's reason), the waypoints and the computation time (IK + RRT-Connect +
shortcutting + interpolation), `time.perf_counter` around `plan_motion`. For each entity an
`on` or `in` literal moves, the ranking of its grasps (`feasible_grasps`: IK with the whole hand
clear along each candidate's way in, what `plan_grasp` does when it starts) is timed too. Timing
is wall time on this machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from rich.console import Console
from rich.table import Table

os.environ.setdefault("MUJOCO_GL", "egl")  # offscreen on a machine without a display

from tether.scenes.grasp_choice import DOWN, candidates, feasible_grasps
from tether.scenes.grasps import grasp_point
from tether.scenes.libero_scene import LiberoScene
from tether.scenes.motion import plan_motion


def motions(scene: LiberoScene):
    """(label, goal position, allowed entities) for the entity each goal literal acts on."""
    for name in dict.fromkeys(literal[1] for literal in scene.goal()):
        low, high = scene.extent_of(name)
        top = np.array([(low[0] + high[0]) / 2, (low[1] + high[1]) / 2, high[2] + 0.10])
        yield f"{name} approach", top, []
        yield f"{name} grasp", grasp_point(low, high, hollow=scene.is_hollow(name)), [name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", default=["libero_goal/0", "libero_goal/1",
                                                      "libero_goal/2"])
    parser.add_argument("--init-states", nargs="+", type=int, default=[0])
    parser.add_argument("--planning-checks", type=int, default=20000)
    args = parser.parse_args()
    table = Table("task", "state", "motion", "planned", "waypoints", "ms")
    times: list[float] = []
    ranking: list[float] = []
    found = 0
    for task in args.task:
        scene = LiberoScene(task, init_state=args.init_states[0], seed=0)
        try:
            for state in args.init_states:
                scene.reset(init_state=state)
                quat = scene.eef_pose().quat
                for label, goal, allow in motions(scene):
                    plan = plan_motion(scene.motion_space(allow), goal, quat, seed=0,
                                       max_checks=args.planning_checks)
                    times.append(plan.seconds * 1000)
                    found += plan.failure is None
                    table.add_row(task, str(state), label, plan.failure or "yes",
                                  str(len(plan.waypoints)), f"{plan.seconds * 1000:.0f}")
                moved = (lit[1] for lit in scene.goal() if lit[0] in ("on", "in"))
                for name in dict.fromkeys(moved):
                    began = time.perf_counter()
                    kept = feasible_grasps(scene, name)
                    ranking.append((time.perf_counter() - began) * 1000)
                    every = candidates(*scene.extent_of(name), DOWN, scene.handle_of(name),
                                       hollow=scene.is_hollow(name))
                    table.add_row(task, str(state), f"{name} grasp ranking",
                                  f"{len(kept)} of {len(every)} kept", "-", f"{ranking[-1]:.0f}")
        finally:
            scene.close()
    console = Console(width=140)
    console.print(table)
    console.print(f"{found}/{len(times)} motions planned; planning time per motion: median "
                  f"{statistics.median(times):.0f} ms, mean {statistics.mean(times):.0f} ms, "
                  f"max {max(times):.0f} ms")
    if ranking:
        console.print(f"grasp ranking per object: median {statistics.median(ranking):.0f} ms, "
                      f"max {max(ranking):.0f} ms over {len(ranking)} objects")


if __name__ == "__main__":
    main()
