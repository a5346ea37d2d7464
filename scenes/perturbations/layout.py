"""Perturbations of the layout: swapped positions, added objects, the robot's start pose.

- `position_swap` (reset): two objects trade places; the instruction is unchanged (LIBERO-PRO
  "swap", Harness VLA's layout shift).
- `distractors` (scene): extra objects from a grocery pool at free spots (LIBERO-SOMA clutter).
- `identical_copies` (scene): copies of the main object's own asset near it, so the instruction
  no longer tells which one (LIBERO-SOMA visual focus).
- `occlusion` (scene): a tall object between the agent-view camera and the main object.
- `robot_init_pose` (reset): the arm starts from perturbed joint angles (LIBERO-PRO initial pose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tether.errors import TetherError
from tether.scenes.bddl import Problem
from tether.scenes.perturbations.base import RESET, SCENE, Perturbation, register
from tether.scenes.perturbations.edits import (
    add_object,
    free_spot,
    initial_spot,
    main_object,
    taken_spots,
)

if TYPE_CHECKING:
    from tether.scenes.perturbations.scene import PerturbedScene

DISTRACTOR_POOL = ("cream_cheese", "butter", "alphabet_soup", "tomato_sauce", "ketchup",
                   "chocolate_pudding", "cookies", "milk", "orange_juice", "bbq_sauce",
                   "macaroni_and_cheese", "salad_dressing", "popcorn")


@dataclass(frozen=True)
class SwapConfig:
    a: str = ""  # default: the task's main object
    b: str = ""  # default: the movable object nearest to `a`


@register
class PositionSwap(Perturbation):
    name, stage, Config = "position_swap", RESET, SwapConfig
    summary = "two objects trade places (default: the main object and its nearest neighbour)"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        a = scene.resolve(self.config.a) if self.config.a else main_object(scene.problem)
        pa = scene.true_pose_of(a).pos
        others = [o for o in scene.movable_objects() if o != a]
        if self.config.b:
            b = scene.resolve(self.config.b)
        elif others:
            b = min(others, key=lambda o: np.linalg.norm(scene.true_pose_of(o).pos[:2] - pa[:2]))
        else:
            raise TetherError("position_swap needs a second movable object")
        pb = scene.true_pose_of(b).pos
        scene.set_object_position(a, np.array([pb[0], pb[1], pa[2] + 0.005]))
        scene.set_object_position(b, np.array([pa[0], pa[1], pb[2] + 0.005]))


@dataclass(frozen=True)
class DistractorsConfig:
    n: int = 4
    categories: str = ""  # '+'-separated; default: a seeded draw from the grocery pool
    clearance: float = 0.12  # metres from every other object's start

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("n must be at least 1")


@register
class Distractors(Perturbation):
    name, stage, Config = "distractors", SCENE, DistractorsConfig
    summary = "adds n grocery objects at free spots on the table (clutter)"

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        pool = tuple(filter(None, self.config.categories.split("+"))) or DISTRACTOR_POOL
        problem = problem.copy()
        for _ in range(self.config.n):
            category = pool[int(rng.integers(len(pool)))]
            add_object(problem, category, free_spot(problem, rng, self.config.clearance))
        return problem


@dataclass(frozen=True)
class CopiesConfig:
    n: int = 2
    object: str = ""  # default: the task's main object
    within: float = 0.3  # metres from the object's start

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("n must be at least 1")


@register
class IdenticalCopies(Perturbation):
    name, stage, Config = "identical_copies", SCENE, CopiesConfig
    summary = "adds n copies of the main object's own asset near it (look-alike targets)"

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        problem = problem.copy()
        target = main_object(problem, self.config.object)
        category = problem.category_of(target)
        near = initial_spot(problem, target)
        for _ in range(self.config.n):
            add_object(problem, category, free_spot(problem, rng, 0.11, near=near,
                                                    within=self.config.within))
        return problem


@dataclass(frozen=True)
class OcclusionConfig:
    category: str = "milk"  # a tall object
    object: str = ""  # what to hide; default: the task's main object
    offset: float = 0.13  # metres toward the agent-view camera (+x), or more to find room


@register
class Occlusion(Perturbation):
    name, stage, Config = "occlusion", SCENE, OcclusionConfig
    summary = "stands a tall object between the agent-view camera and the main object"

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        problem = problem.copy()
        target = main_object(problem, self.config.object)
        spot = initial_spot(problem, target)
        if spot is None:
            raise TetherError(f"occlusion: '{target}' does not start in a table region")
        taken = [s for s in taken_spots(problem) if np.linalg.norm(s - spot) > 1e-6]
        for dx in np.arange(self.config.offset, 0.3, 0.02):
            for dy in (0.0, 0.03, -0.03, 0.06, -0.06):
                xy = spot + np.array([dx, dy])
                if all(np.linalg.norm(xy - s) >= 0.1 for s in taken):
                    add_object(problem, self.config.category, np.round(xy, 3))
                    return problem
        raise TetherError(f"occlusion: no free spot between the camera and '{target}'")


@dataclass(frozen=True)
class RobotPoseConfig:
    scale: float = 0.15  # radians: each arm joint moves by a uniform draw in [-scale, scale]


@register
class RobotInitPose(Perturbation):
    name, stage, Config = "robot_init_pose", RESET, RobotPoseConfig
    summary = "the arm starts from randomly offset joint angles"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        robot = scene._robot
        qpos = list(robot._ref_joint_pos_indexes)
        scene.data.qpos[qpos] += rng.uniform(-self.config.scale, self.config.scale, len(qpos))
        scene.data.qvel[list(robot._ref_joint_vel_indexes)] = 0.0
