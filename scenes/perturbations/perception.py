"""Perturbations of privileged perception: what `pose_of` reports, not where things are.

- `pose_noise` (run): every entity's reported position is off by a Gaussian offset drawn once per
  episode and entity (a calibration error a detector would also make); success tests and the
  world are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tether.scenes.perturbations.base import RUN, Perturbation, register
from tether.scenes.robot import Pose


@dataclass(frozen=True)
class PoseNoiseConfig:
    sigma: float = 0.01  # metres per axis


@register
class PoseNoise(Perturbation):
    name, stage, Config = "pose_noise", RUN, PoseNoiseConfig
    summary = "reported object poses are off by a per-object Gaussian offset"

    def perceive(self, name: str, pose: Pose, rng: np.random.Generator) -> Pose:
        return replace(pose, pos=pose.pos + rng.normal(0.0, self.config.sigma, 3))
