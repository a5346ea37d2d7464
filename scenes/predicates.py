"""Named predicates: the conditions `check` and `guard` nodes may test, and success tests of tasks.

A predicate has a name, named parameters (entity names or numbers, with defaults) and a function of
a `Robot`. The goal predicates are LIBERO's own (`on`, `in`, `open`, ...), evaluated by the scene
exactly as LIBERO's success check does; the others (`grasped`, `lifted`, `near`, ...) are tether's.
Trees refer to predicates only by name, so a tree file never carries code.

    evaluate(robot, "lifted", {"object": "akita_black_bowl_1", "height": 0.08})

The `Robot` interface knows nothing of this module; predicates are functions built on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tether.registry import Registry
from tether.scenes.grasps import clear_grasp, clear_handle_grasp

if TYPE_CHECKING:
    from tether.scenes.robot import Robot

ENTITY = "entity"
NUMBER = "number"
SHUT = 0.004  # m between the fingertips: shut on nothing (a rim or a handle keeps them apart)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # ENTITY or NUMBER
    default: float | None = None


@dataclass(frozen=True)
class Predicate:
    name: str
    params: tuple[Param, ...]
    doc: str
    fn: Callable[..., bool]
    goal: bool = False  # one of LIBERO's goal predicates


PREDICATES: Registry[Predicate] = Registry("predicate")


def register(name: str, params: tuple[Param, ...], doc: str, *, goal: bool = False):
    def wrap(fn: Callable[..., bool]) -> Callable[..., bool]:
        PREDICATES.register(name, Predicate(name, params, doc, fn, goal))
        return fn

    return wrap


def evaluate(robot: Robot, predicate: str, args: dict) -> bool:
    """Evaluate the named predicate on `robot` with resolved arguments."""
    return bool(PREDICATES.get(predicate).fn(robot, **args))


OBJECT = Param("object", ENTITY)
TARGET = Param("target", ENTITY)


def _goal(name: str, doc: str, params: tuple[Param, ...]) -> None:
    register(name, params, doc, goal=True)(
        lambda robot, **args: robot.goal_predicate(name, [args[p.name] for p in params])
    )


_goal("on", "`object` rests on top of `target` (LIBERO's On).", (OBJECT, TARGET))
_goal("in", "`object` is inside region or container `target` (LIBERO's In).", (OBJECT, TARGET))
_goal("open", "articulated `object` (drawer, door, microwave) is open.", (OBJECT,))
_goal("close", "articulated `object` is closed.", (OBJECT,))
_goal("turn_on", "`object` (stove, faucet) is turned on.", (OBJECT,))
_goal("turn_off", "`object` (stove, faucet) is turned off.", (OBJECT,))


@register(
    "opened_past",
    (OBJECT, Param("share", NUMBER, 0.75)),
    "the joint that moves `object` (`Robot.joint_of`: a drawer's slide, a door's hinge) is open "
    "at least `share` of its travel.",
)
def opened_past(robot: Robot, object: str, share: float) -> bool:
    joint = robot.joint_of(object)
    return joint.open >= share * joint.travel


@register("grasped", (OBJECT,), "both fingers touch `object` (robosuite's grasp check).")
def grasped(robot: Robot, object: str) -> bool:
    return robot.is_grasped(object)


@register(
    "closed_empty",
    (OBJECT,),
    "the gripper has shut, fingers under 4 mm apart, without touching `object` (a missed grasp).",
)
def closed_empty(robot: Robot, object: str) -> bool:
    return robot.gripper_width() < SHUT and not robot.is_grasped(object)


@register(
    "lifted",
    (OBJECT, Param("height", NUMBER, 0.05)),
    "`object` is at least `height` m above where it rested when the episode started.",
)
def lifted(robot: Robot, object: str, height: float) -> bool:
    return robot.pose_of(object).pos[2] - robot.start_pose_of(object).pos[2] >= height


@register(
    "lifted_other",
    (OBJECT, Param("height", NUMBER, 0.05)),
    "an object other than `object` is at least `height` m above where it rested when the "
    "episode started (another object was taken).",
)
def lifted_other(robot: Robot, object: str, height: float) -> bool:
    chosen = robot.resolve(object)
    return any(lifted(robot, other, height) for other in robot.objects() if other != chosen)


@register(
    "near",
    (OBJECT, TARGET, Param("distance", NUMBER, 0.05)),
    "the centres of `object` and `target` ('gripper' is the end effector) are within `distance` m.",
)
def near(robot: Robot, object: str, target: str, distance: float) -> bool:
    return float(np.linalg.norm(robot.position(object) - robot.position(target))) <= distance


@register(
    "within_reach",
    (OBJECT, TARGET, Param("distance", NUMBER, 0.03)),
    "the nearest point of `object`'s bounding box is within `distance` m of the centre of `target` "
    "('gripper' is the end effector): a held object is, whatever its size.",
)
def within_reach(robot: Robot, object: str, target: str, distance: float) -> bool:
    return box_distance(robot.position(target), *robot.extent_of(object)) <= distance


def box_distance(point: np.ndarray, low: np.ndarray, high: np.ndarray) -> float:
    """How far `point` is from the axis-aligned box `low`..`high` (0 inside it)."""
    point = np.asarray(point, float)
    return float(np.linalg.norm(point - np.clip(point, low, high)))


@register(
    "grasp_clear",
    (OBJECT, Param("yaw", NUMBER, 0.0)),
    "the open gripper (fingertips and hand) can come straight down onto `object`'s grasp point, "
    "slid across the closing axis if need be (`tether.scenes.grasps.clear_grasp`), with the wrist "
    "at `yaw` (0: fingers closing along world y, pi/2: along x) without touching anything else.",
)
def grasp_clear(robot: Robot, object: str, yaw: float) -> bool:
    return clear_grasp(robot, object, yaw)[1]


@register(
    "grasp_by_handle",
    (OBJECT,),
    "`object` is taken by its handle and the open gripper has room to come straight down onto it "
    "there: it is open-topped and its handle (a narrow part sticking out of its body) rises to its "
    "top, as a frying pan's (`tether.scenes.grasps.clear_handle_grasp`).",
)
def grasp_by_handle(robot: Robot, object: str) -> bool:
    return clear_handle_grasp(robot, object) is not None


@register("gripper_open", (), "the gripper was last commanded open and its fingers are apart.")
def gripper_open(robot: Robot) -> bool:
    return robot.gripper_command < 0 and robot.gripper_width() > 0.06


@register("task_success", (), "the task's own goal (all of its goal predicates) holds.")
def task_success(robot: Robot) -> bool:
    return robot.success()
