"""The base of every leaf that talks to the robot, and blackboard references in parameters.

A `RobotLeaf` receives the `Robot` in `setup(robot=...)` (py_trees passes `BehaviourTree.setup`
keyword arguments to every node), commands it only through the per-tick command slot, and reports
failures as error codes on the blackboard. Parameters may be `Ref`s to blackboard keys, resolved
(`deref`) each time the leaf uses them, so a tree can act on values other nodes wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import py_trees

from tether.blackboard.episode import COMMAND, record_error, storage
from tether.scenes.robot import Robot


@dataclass(frozen=True)
class Ref:
    """A reference to a blackboard key, written `${/key}` in tree files."""

    key: str

    def __str__(self) -> str:
        return f"${{{self.key}}}"


class MissingKey(RuntimeError):
    """A `Ref` named a blackboard key that no node has written."""


def deref(value: Any) -> Any:
    """The value itself, or the blackboard value a `Ref` points at (recursively in lists/dicts)."""
    if isinstance(value, Ref):
        store = storage()
        if value.key not in store:
            raise MissingKey(f"blackboard key '{value.key}' has not been written")
        return store[value.key]
    if isinstance(value, list):
        return [deref(v) for v in value]
    if isinstance(value, dict):
        return {k: deref(v) for k, v in value.items()}
    return value


class RobotLeaf(py_trees.behaviour.Behaviour):
    """A leaf with access to the robot; see each subclass for its tick contract.

    Stopped (INVALID) in a tick after it commanded, e.g. by a parallel whose monitor child fails
    after it, a leaf takes its action back: a stopped leaf never moves the robot.
    """

    robot: Robot
    acts_for: py_trees.behaviour.Behaviour | None = None  # the tree leaf a helper leaf drives for

    def setup(self, **kwargs: Any) -> None:
        if "robot" not in kwargs:
            raise KeyError(f"{self.name}: setup() needs robot=...")
        self.robot = kwargs["robot"]

    def command(self, action: np.ndarray) -> None:
        """Put this tick's action into the command slot."""
        COMMAND.put(action, by=self.name, node=(self.acts_for or self).id)

    def terminate(self, new_status: py_trees.common.Status) -> None:
        if new_status == py_trees.common.Status.INVALID:
            COMMAND.withdraw(self.id)

    def fail(self, code: str, message: str) -> py_trees.common.Status:
        """Record an error code and return FAILURE."""
        self.feedback_message = f"{code}: {message}"
        record_error(code, self.name, message, self.robot.steps)
        return py_trees.common.Status.FAILURE
