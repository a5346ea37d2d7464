"""Perturbations of physics and actuation, acting while the episode runs.

- `friction_mass` (reset): an object's sliding friction and mass are scaled, so grasps slip.
- `object_move` (run): the object is displaced once, when the gripper first comes within
  `trigger` metres of it (0.09 m in LIBERO-PRO's runtime_object_move) or at `fallback_step`
  (or at `at_step` whatever the distance), in a seeded or a given direction, to a spot clear of
  every other object (LIBERO-PRO's test: the nearest turn or length of that shift that is).
- `actuation_noise` (run): Gaussian noise on every commanded arm action (normalised units).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tether.scenes.perturbations.appearance import _object_geoms
from tether.scenes.perturbations.base import RESET, RUN, Perturbation, numbers, register
from tether.scenes.perturbations.edits import TABLE_X, TABLE_Y, main_object
from tether.scenes.perturbations.layout import clear_shift

if TYPE_CHECKING:
    from tether.scenes.perturbations.scene import PerturbedScene


@dataclass(frozen=True)
class FrictionMassConfig:
    object: str = ""  # default: the task's main object
    friction: float = 0.3  # factor on sliding friction
    mass: float = 1.0  # factor on mass


@register
class FrictionMass(Perturbation):
    name, stage, Config = "friction_mass", RESET, FrictionMassConfig
    summary = "scales an object's sliding friction (default x0.3: it slips) and mass"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        target = scene.resolve(self.config.object) if self.config.object else \
            main_object(scene.problem)
        m = scene.model
        for g in _object_geoms(scene, target):
            m.geom_friction[g, 0] *= self.config.friction
        bodies = {int(m.geom_bodyid[g]) for g in _object_geoms(scene, target)}
        bodies.add(scene._bodies[target])
        for b in bodies:
            m.body_mass[b] *= self.config.mass


@dataclass(frozen=True)
class MoveConfig:
    object: str = ""  # default: the task's main object
    trigger: float = 0.09  # metres between the gripper and the object that trigger the move
    fallback_step: int = 160  # move at this step if never triggered (0: never)
    distance: float = 0.08  # metres it moves at least
    direction: str = ""  # 'dx dy': the requested direction; '' a seeded one (to a clear spot)
    at_step: int = 0  # move at this step whatever the distance (0: on the trigger)

    def __post_init__(self) -> None:
        if self.direction:
            numbers("direction", self.direction, 2)
        if min(self.trigger, self.distance, self.fallback_step, self.at_step) < 0:
            raise ValueError("trigger, distance, fallback_step and at_step must be >= 0")


@register
class ObjectMove(Perturbation):
    name, stage, Config = "object_move", RUN, MoveConfig
    summary = "the object jumps away once the gripper comes within 0.09 m (LIBERO-PRO)"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        scene.perturbation_state[self.name] = {"moved_at": None}

    def after_step(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        state = scene.perturbation_state[self.name]
        if state["moved_at"] is not None:
            return
        target = scene.resolve(self.config.object) if self.config.object else \
            main_object(scene.problem)
        here = scene.true_pose_of(target).pos
        step = scene.steps + 1
        if self.config.at_step:
            due = step >= self.config.at_step
        else:
            due = np.linalg.norm(scene.eef_pose().pos - here) <= self.config.trigger or \
                0 < self.config.fallback_step <= step
        if not due:
            return
        if self.config.direction:
            want = numbers("direction", self.config.direction, 2)
        else:  # a seeded direction that stays on the table
            for _ in range(100):
                angle = rng.uniform(0, 2 * np.pi)
                want = self.config.distance * np.array([np.cos(angle), np.sin(angle)])
                xy = here[:2] + want
                if TABLE_X[0] <= xy[0] <= TABLE_X[1] and TABLE_Y[0] <= xy[1] <= TABLE_Y[1]:
                    break
        xy = here[:2] + clear_shift(scene, target, want, self.config.distance)
        scene.set_object_position(target, np.array([xy[0], xy[1], here[2] + 0.005]))
        scene._env.env.sim.forward()
        state["moved_at"] = step
        state["from"], state["to"] = here, np.array([xy[0], xy[1], here[2]])


@dataclass(frozen=True)
class ActuationConfig:
    sigma: float = 0.1  # standard deviation, normalised action units (1 = a full command)
    bias: float = 0.0  # constant offset on every arm dimension


@register
class ActuationNoise(Perturbation):
    name, stage, Config = "actuation_noise", RUN, ActuationConfig
    summary = "Gaussian noise on every commanded arm action"

    def on_action(self, scene: PerturbedScene, action: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        noisy = np.array(action, dtype=float)
        noisy[:6] += rng.normal(self.config.bias, self.config.sigma, 6)
        return noisy
