"""Perception behind a small protocol: object masks in a camera's frame.

`Perception.masks(robot, camera, size, names)` returns a boolean (h, w) mask per requested entity
that is visible, upright (as `Robot.render` frames are). Input interventions ask it where the
distractors and the target are.

    privileged   the simulator's own segmentation (`scenes.observations.Observer`): exact, the
                 default in simulation
    (detectors)  GroundingDINO / SAM2 adapters implement the same protocol from local weights
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from scenes.errors import TetherError
from scenes.robot import Robot


class Perception(Protocol):
    def masks(self, robot: Robot, camera: str, size: tuple[int, int],
              names: Sequence[str]) -> dict[str, np.ndarray]:
        """Upright boolean masks of the visible entities among `names`."""


class PrivilegedPerception:
    """Masks from the simulator's segmentation render (one `Observer` per scene)."""

    def __init__(self) -> None:
        self._observers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def masks(self, robot: Robot, camera: str, size: tuple[int, int],
              names: Sequence[str]) -> dict[str, np.ndarray]:
        from scenes.libero_scene import LiberoScene
        from scenes.observations import Observer

        if not isinstance(robot, LiberoScene):
            raise TetherError(f"privileged perception needs a LIBERO scene, not "
                              f"{type(robot).__name__}")
        if robot not in self._observers:
            self._observers[robot] = Observer(robot)
        view = self._observers[robot].observe(camera, size, rgb=False, segmentation=True)
        return {n: view.masks[n] for n in names if n in view.masks}


PRIVILEGED = PrivilegedPerception()
