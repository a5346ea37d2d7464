"""`localize`: look at the scene again, from where the hand is or from where it started.

Under camera perception (`tether.blackboard.world`) object estimates are refreshed on their own
every few control steps; `localize` forces a look at a moment the tree chooses (before a grasp,
after a push) and is the recovery for OBJECT_NOT_FOUND: with `vantage: start` the hand first goes
back to where it was when the episode started, out of the agent-view camera's way, then looks.
Under privileged perception the scene always knows where everything is, and the look finds all.
"""

from __future__ import annotations

import py_trees

from tether.behaviours.leaf import RobotLeaf
from tether.blackboard.episode import OBJECT_NOT_FOUND, UNREACHABLE
from tether.blackboard.references import deref
from tether.scenes.robot import Pose

Status = py_trees.common.Status
VANTAGES = ("here", "start")


class Localize(RobotLeaf):
    """Look again, optionally from the episode's start pose.

    Tick contract: with `vantage: start`, RUNNING while it commands servo steps toward the end
    effector's pose at setup (the episode's start), FAILURE with UNREACHABLE when not within
    `tolerance` after `max_steps`; then, in the tick it arrives (at once with `vantage: here`), one
    look: SUCCESS when every entity in `objects` (none given: every movable object of the task)
    was seen, else FAILURE with OBJECT_NOT_FOUND naming the missing ones. `terminate` releases
    nothing beyond the command slot.
    """

    def __init__(self, name: str, objects: tuple, *, vantage: str, tolerance: float = 0.02,
                 max_steps: int = 150):
        super().__init__(name)
        self.objects, self.vantage = objects, vantage
        self.tolerance, self.max_steps = tolerance, max_steps
        self.start: Pose | None = None

    def setup(self, **kwargs) -> None:
        super().setup(**kwargs)
        self.start = self.robot.eef_pose()

    def initialise(self) -> None:
        self.ticks = 0

    def update(self) -> Status:
        if self.vantage == "start" and self.start is not None:
            here = self.robot.eef_pose().pos
            if float(((here - self.start.pos) ** 2).sum() ** 0.5) > self.tolerance:
                self.ticks += 1
                if self.ticks > self.max_steps:
                    return self.fail(UNREACHABLE, f"the start pose is not reached in "
                                                  f"{self.max_steps} steps")
                self.command(self.robot.servo(self.start.pos, self.start.quat,
                                              self.robot.gripper_command))
                self.feedback_message = "back to the start pose"
                return Status.RUNNING
        unseen = set(self.robot.look())
        wanted = [deref(o) for o in self.objects] or self.robot.objects()
        missing = [name for name in (self.robot.resolve(w) for w in wanted) if name in unseen]
        if missing:
            return self.fail(OBJECT_NOT_FOUND, f"{', '.join(missing)} not seen")
        self.feedback_message = f"saw {len(wanted)} objects"
        return Status.SUCCESS
