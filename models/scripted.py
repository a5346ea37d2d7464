"""`ScriptedGrasp`: the privileged expert for the grasp phase, behind the `Policy` protocol.

It reads the object's pose from the `Robot` (privileged sim state: no images) and produces the
actions the analytic primitives would, through `Robot.servo`: descend onto the object's grasp
point (`tether.scenes.grasps`) with the gripper open, close until the fingers stop, then lift `lift`
m, keeping the orientation the end effector had at `reset`. Each `infer` returns a chunk of one
action, so the expert closes the loop every step. It records the demonstrations `tether collect`
turns into a LeRobotDataset, and serves as the reference a learned grasp policy is compared to.

    expert = ScriptedGrasp(robot, "akita_black_bowl_1")
    expert.reset()
    robot.step(expert.infer(obs)[0])    # obs is ignored; it may be anything
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tether.models.observation import CameraSpec, Observation
from tether.models.policy import Policy, PolicyConfig
from tether.scenes.grasps import grasp_point
from tether.scenes.robot import CLOSE, OPEN, Robot

REACHED = 0.008  # m: the fingertips are at the grasp point
DESCENT_STEPS = 80  # give up descending (and close where it is) after this many steps
SETTLED = 5e-4  # m of finger travel over 3 steps that means the fingers stopped


@PolicyConfig.register("scripted")
@dataclass
class ScriptedConfig(PolicyConfig):
    """The privileged grasp expert; `object` defaults to the first object of the task's goal."""

    servable = False  # it reads the simulator: there is nothing to serve
    object: str | None = None
    lift: float = 0.10

    def build(self, robot: Robot) -> Policy:
        name = self.object or robot.goal()[0][1]
        return ScriptedGrasp(robot, robot.resolve(name), lift=self.lift)


class ScriptedGrasp:
    """Descend, close, lift: one servo action per call. `phase` is `descend`, `close` or `lift`."""

    cameras: tuple[CameraSpec, ...] = ()

    def __init__(self, robot: Robot, object: str, *, lift: float = 0.10):
        self.robot, self.object, self.lift = robot, object, lift
        self.reset()

    def reset(self) -> None:
        self.quat = self.robot.eef_pose().quat
        self.phase, self.ticks = "descend", 0
        self.widths: list[float] = []
        self.lift_to: np.ndarray | None = None

    def _grasp_point(self) -> np.ndarray:
        robot, name = self.robot, self.object
        return grasp_point(*robot.extent_of(name), hollow=robot.is_hollow(name))

    def infer(self, obs: Observation | None = None) -> np.ndarray:
        self.ticks += 1
        here = self.robot.eef_pose().pos
        if self.phase == "descend":
            goal = self._grasp_point()
            if np.linalg.norm(goal - here) > REACHED and self.ticks <= DESCENT_STEPS:
                return self.robot.servo(goal, self.quat, OPEN)[None]
            self.phase, self.hold = "close", goal
        if self.phase == "close":
            self.widths.append(self.robot.gripper_width())
            if len(self.widths) < 5 or np.ptp(self.widths[-3:]) >= SETTLED:
                return self.robot.servo(self.hold, self.quat, CLOSE)[None]
            self.phase, self.lift_to = "lift", here + np.array([0.0, 0.0, self.lift])
        return self.robot.servo(self.lift_to, self.quat, CLOSE)[None]
