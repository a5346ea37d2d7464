"""`SimTimeout`: a timeout that counts control steps, not wall-clock time.

py_trees' own `Timeout` reads `time.monotonic()`, which would make a run depend on how fast the
machine is. Here one tick is one control step, so the budget is a number of ticks (a duration in
simulated seconds is converted with the robot's control period at setup).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import py_trees

from tether.blackboard.episode import TIMEOUT, record_error

Status = py_trees.common.Status


class SimTimeout(py_trees.decorators.Decorator):
    """Fail a child that is still RUNNING after `steps` ticks (or `seconds` of sim time).

    Tick contract: the child is ticked at most `steps` times per activation and its status is
    reflected. On the next tick, before the child is ticked again (so it cannot command), a child
    still RUNNING is stopped (INVALID), TIMEOUT is written to /errors/last and the decorator
    returns FAILURE.
    """

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour, *,
                 steps: int | None = None, seconds: float | None = None):
        super().__init__(name=name, child=child)
        if (steps is None) == (seconds is None):
            raise ValueError("SimTimeout takes exactly one of steps or seconds")
        self.steps, self.seconds = steps, seconds

    def setup(self, **kwargs: Any) -> None:
        self.robot = kwargs["robot"]
        if self.seconds is not None:
            self.steps = math.ceil(round(self.seconds / self.robot.control_dt, 9))

    def initialise(self) -> None:
        self.ticks = 0

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        if self.status == Status.RUNNING and self.ticks >= self.steps:
            self.feedback_message = f"timed out after {self.steps} steps"
            record_error(TIMEOUT, self.name, self.feedback_message, self.robot.steps)
            self.stop(Status.FAILURE)
            yield self
            return
        yield from super().tick()

    def update(self) -> Status:
        self.ticks += 1
        self.feedback_message = f"{self.ticks}/{self.steps} steps"
        return self.decorated.status
