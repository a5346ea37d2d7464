"""Where the arm can hold its hand for each goal's skill: kinematic reach per task; prints a table.

    python benchmarks/reach_limits.py libero_10/8 libero_10_swap/8 libero_10/9 libero_10_swap/9

Privileged geometry (`LiberoScene`), each task at `--init-states` (0). For every `on`/`in` goal
literal, the skill selection (`tether.planning.skills.skill_for`) names the library tree, and the
poses that tree puts the hand in are checked:

- `pick_place`, `insert` and `lay_in` (an object set down on or in its target): over each spot
  of the target, `STEP` apart and `INSET` inside its edges, the end effector where it holds the
  object as it rests on the target's surface (the object's grasp point,
  `scenes.grasps.grasp_point`, moved with it), the hand straight down, fingers along y or
  along x (either counts; `lay_in`'s hand, tipped 45 degrees over the drawer, is not checked);
- `slide_in`: the level hand (fingers toward +y, as `slide_in` holds a mug by its handle) at the
  handle (the tree's `handle` offset) with the mug staged on the table (`stage`), in front of
  the opening (`front`), and on the way in to `inside`, `SLIDE_POINTS` poses in all: the library
  tree's own defaults, from the region's middle.

A pose counts as reachable when the arm's inverse kinematics finds a solution for it
(`ArmSpace.solve`: damped least squares from the start posture, then random restarts), with
collisions ignored: what stands in the way can only take poses away. A row gives the object and
its target, the skill, the horizontal distance of the target's middle from the arm's base
(`Robot.reach`), the poses reached out of those checked, and the range of x (along the arm's
reach) they span.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table
from scipy.spatial.transform import Rotation

os.environ.setdefault("MUJOCO_GL", "egl")  # offscreen on a machine without a display

from tether.planning.skills import Goal, parts_of, skill_for
from tether.scenes.grasp_choice import DOWN
from tether.scenes.grasps import grasp_point
from tether.scenes.libero_scene import LiberoScene
from tether.scenes.placing import INSET
from tether.trees.compiler import LIBRARY, read_tree_file

STEP = 0.02  # between the spots checked over a target (m)
ACROSS = DOWN * Rotation.from_euler("z", np.pi / 2)  # the hand down, fingers along x
LEVEL = np.array([0.5, 0.5, 0.5, -0.5])  # the level hand, fingers toward +y (x, y, z, w)
SLIDE_POINTS = 6  # poses checked on slide_in's way: staged, in front, and 4 on the way in


def placing_poses(scene: LiberoScene, obj: str, target: str) -> Iterator[list]:
    """Per spot over `target`, the end effector's positions and orientations that hold `obj`
    resting there (either one reached will do)."""
    low, high = scene.extent_of(obj)
    held = grasp_point(low, high, hollow=scene.is_hollow(obj)) - [*(low[:2] + high[:2]) / 2, low[2]]
    t_low, t_high = scene.extent_of(target)
    surface = scene.surface(target)
    xs, ys = (np.arange(t_low[a] + INSET, t_high[a] - INSET + 1e-9, STEP) for a in (0, 1))
    for x in xs:
        for y in ys:
            pos = np.array([x, y, surface]) + held
            yield [(pos, DOWN.as_quat()), (pos, ACROSS.as_quat())]


def sliding_poses(scene: LiberoScene, obj: str, region: str) -> Iterator[list]:
    """`slide_in`'s hand poses, one at a time (see the module docstring)."""
    params = read_tree_file(LIBRARY / "slide_in.yaml").params
    stage, front, inside, handle = (np.array(params[p].default, float)
                                    for p in ("stage", "front", "inside", "handle"))
    low, high = scene.extent_of(region)
    middle = (low + high) / 2
    table = scene.extent_of(obj)[0][2]
    yield [(np.array([*(middle[:2] + stage[:2] + handle[:2]), table + handle[2]]), LEVEL)]
    for k in range(SLIDE_POINTS - 1):
        yield [(middle + front + (inside - front) * k / (SLIDE_POINTS - 2) + handle, LEVEL)]


def rows(scene: LiberoScene) -> Iterator[tuple]:
    """Per `on`/`in` goal literal: (object, target, skill, reach of the target's middle, poses
    reached, poses checked, x range reached)."""
    parts = parts_of(scene)
    arm = scene.motion_space(scene.objects())
    arm.collisions = False
    for literal in scene.goal():
        goal = Goal(literal[0], tuple(literal[1:]))
        if goal.predicate not in ("on", "in"):
            continue
        obj, target = goal.args
        skill = skill_for(goal, parts)
        poses = sliding_poses(scene, obj, target) if skill == "slide_in" else \
            placing_poses(scene, obj, target)
        checked, reached = 0, []
        for options in poses:
            checked += 1
            hit = next((pos for pos, quat in options if arm.solve(pos, quat, seed=0) is not None),
                       None)
            if hit is not None:
                reached.append(hit)
        low, high = scene.extent_of(target)
        span = f"{min(p[0] for p in reached):.2f} to {max(p[0] for p in reached):.2f}" \
            if reached else "-"
        yield obj, target, skill, scene.reach((low + high) / 2), len(reached), checked, span


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="+", help="SUITE/TASK addresses")
    parser.add_argument("--init-states", nargs="+", type=int, default=[0])
    args = parser.parse_args(argv)
    table = Table("task", "state", "object", "target", "skill", "reach (m)", "poses reached",
                  "x reached")
    for task in track(args.tasks, description="tasks", transient=True):
        scene = LiberoScene(task, init_state=args.init_states[0], seed=0, textures=False)
        try:
            for state in args.init_states:
                scene.reset(init_state=state)
                for obj, target, skill, reach, hit, checked, span in rows(scene):
                    table.add_row(task, str(state), obj, target, skill, f"{reach:.3f}",
                                  f"{hit}/{checked}", span)
        finally:
            scene.close()
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
