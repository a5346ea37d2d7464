"""The base of every leaf that talks to the robot.

A `RobotLeaf` receives the `Robot` in `setup(robot=...)` (py_trees passes `BehaviourTree.setup`
keyword arguments to every node), commands it only through the per-tick command slot, and reports
failures as error codes on the blackboard. Parameters may be `Ref`s to blackboard keys
(`tether.blackboard.references`), resolved (`deref`) each time the leaf uses them, so a tree can
act on values other nodes wrote.

Under camera perception an object the cameras have never seen cannot be a target: the leaf that
asks for it fails with OBJECT_NOT_FOUND (`tether.blackboard.world.ObjectNotFound`) in that tick,
instead of acting on a guess, and recovery chooses by the code. Likewise a grasp target whose
every candidate stalled this episode (`tether.scenes.grasps.NoGraspLeft`) fails with UNREACHABLE
in that tick, without moving.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import py_trees

from tether.blackboard.episode import COMMAND, OBJECT_NOT_FOUND, UNREACHABLE, record_error
from tether.blackboard.world import ObjectNotFound
from tether.scenes.grasps import NoGraspLeft
from tether.scenes.robot import Robot


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

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        """py_trees' tick; an `ObjectNotFound` from `initialise` or `update` is FAILURE with
        OBJECT_NOT_FOUND, a `NoGraspLeft` FAILURE with UNREACHABLE."""
        try:
            yield from super().tick()
        except (ObjectNotFound, NoGraspLeft) as missing:
            code = OBJECT_NOT_FOUND if isinstance(missing, ObjectNotFound) else UNREACHABLE
            status = self.fail(code, str(missing))
            self.stop(status)
            self.status = status
            yield self

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
