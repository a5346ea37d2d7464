"""Condition nodes: `check` (a leaf) and `guard` (a decorator), both over named predicates, and
`grasp_left` (a leaf): whether an object has a grasp left that has not stalled this episode.

A `PredicateCall` is a predicate name from `tether.scenes.predicates` with its arguments (entity
names, numbers, or `Ref`s to blackboard keys resolved at evaluation). Nothing is ever evaluated as
code. """

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import py_trees

from tether.behaviours.leaf import RobotLeaf
from tether.behaviours.primitives import Target
from tether.blackboard.episode import CONDITION_FAILED, record_error
from tether.blackboard.references import Ref, deref
from tether.scenes.grasps import NoGraspLeft
from tether.scenes.predicates import evaluate
from tether.scenes.robot import Robot

Status = py_trees.common.Status


@dataclass(frozen=True)
class PredicateCall:
    predicate: str
    args: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(str(v) for v in self.args.values())})"

    def __call__(self, robot: Robot) -> bool:
        return evaluate(robot, self.predicate, deref(self.args))


class Check(RobotLeaf):
    """Test a predicate once per tick.

    Tick contract: never RUNNING and never commands. SUCCESS when the predicate holds; otherwise
    FAILURE, and when `error` is set that error code is written to /errors/last.
    """

    def __init__(self, name: str, call: PredicateCall, *, error: str | None):
        super().__init__(name)
        self.call, self.error = call, error

    def update(self) -> Status:
        if self.call(self.robot):
            self.feedback_message = "holds"
            return Status.SUCCESS
        if self.error:
            return self.fail(self.error, f"{self.call} does not hold")
        self.feedback_message = "does not hold"
        return Status.FAILURE


class Guard(py_trees.decorators.EternalGuard):
    """py_trees' EternalGuard over a predicate: re-checked before every tick of the child.

    Tick contract: while the predicate holds, reflects the child's status. The first tick it does
    not hold, the running child is stopped (INVALID, so a primitive stops commanding and the robot
    holds), CONDITION_FAILED is written to /errors/last, and the guard returns FAILURE.
    """

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour, call: PredicateCall):
        super().__init__(name=name, child=child, condition=self._holds)
        self.call = call

    def setup(self, **kwargs: Any) -> None:
        self.robot: Robot = kwargs["robot"]

    def _holds(self) -> bool:
        if self.call(self.robot):
            return True
        self.feedback_message = f"{self.call} stopped holding"
        record_error(CONDITION_FAILED, self.name, self.feedback_message, self.robot.steps)
        return False


class GraspLeft(RobotLeaf):
    """Whether `object` still has a grasp from above whose way down has not stalled this episode
    (`tether.blackboard.grasp_stalls`): the `grasp_clear` or `grasp_turned` target finds one.

    Tick contract: never RUNNING and never commands. SUCCESS when one is left; otherwise FAILURE
    with UNREACHABLE and the reason (`NoGraspLeft`), so a grasp's retries stop at once instead
    of moving for nothing.
    """

    ANCHORS = ("grasp_clear", "grasp_turned")

    def __init__(self, name: str, obj: str | Ref):
        super().__init__(name)
        self.object = obj

    def update(self) -> Status:
        reason = None
        for at in self.ANCHORS:
            try:
                Target(object=deref(self.object), at=at).grasp(self.robot)
            except NoGraspLeft as none:
                reason = none
                continue
            self.feedback_message = f"{at} left"
            return Status.SUCCESS
        raise reason
