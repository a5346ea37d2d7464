"""Fakes for verifier tests: a kinematic scene with a camera whose picture shows whether the bowl
is in the gripper, and a chat backend that looks at that picture (optionally slowly)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from tests.trees.harness import BOWL, BOXES, PLATE
from tether.models.planners import ChatMessage
from tether.scenes.kinematic import KinematicScene
from tether.scenes.robot import CLOSE


class CameraScene(KinematicScene):
    """Renders a white frame while the bowl is held, a black one otherwise."""

    def render(self, camera: str, size: tuple[int, int],
               draft: bool = False) -> np.ndarray | None:
        return np.full((*size, 3), 255 if self.held == BOWL else 0, dtype=np.uint8)


def holding_scene() -> CameraScene:
    """The bowl already closed in the gripper, 5 cm above its start."""
    robot = CameraScene(BOXES, goal=[("on", BOWL, PLATE)], eef=(0.10, 0.0, 0.07))
    robot.held = BOWL
    robot.boxes[BOWL].pos = robot.eef.copy()
    robot._gripper = CLOSE
    return robot


def slip(robot: KinematicScene) -> None:
    """The bowl falls out of the gripper, far from it (an event between ticks)."""
    robot.held = None
    robot.boxes[BOWL].pos = np.array([-0.2, 0.0, 0.02])


class EyeBackend:
    """Answers `yes_word` for a white frame and `no_word` for a black one, after `delay` s."""

    name = "eye"

    def __init__(self, delay: float = 0.0, yes_word: str = "Yes.", no_word: str = "no"):
        self.delay, self.yes_word, self.no_word = delay, yes_word, no_word
        self.questions: list[str] = []

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        time.sleep(self.delay)
        self.questions.append(messages[-1].text)
        return self.yes_word if messages[-1].images[0].mean() > 127 else self.no_word
