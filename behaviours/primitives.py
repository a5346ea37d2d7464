"""Analytic motion primitives: `move_to`, `rotate`, `set_gripper`, `release`, `wait`,
`push_door`.

Each is a non-blocking leaf: it puts at most one action per tick into the command slot and
returns RUNNING until its goal is reached, so guards and reactive composites above it re-check
their conditions every control step. None of them holds resources: when stopped (`terminate` with
INVALID, e.g. preempted by a guard) it simply stops commanding and the tick loop holds the robot
where it is. Caps and waits count ticks, and one tick is one control step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
import py_trees
from scipy.spatial.transform import Rotation

from tether.behaviours.leaf import RobotLeaf
from tether.blackboard import grasp_stalls
from tether.blackboard.episode import CONDITION_FAILED, STUCK, TARGET_MOVED, UNREACHABLE
from tether.blackboard.references import Ref, deref
from tether.errors import TetherError
from tether.scenes import quaternions
from tether.scenes.grasps import (
    NoGraspLeft,
    Stall,
    axis_of,
    clear_grasp,
    clear_handle_grasp,
    grasp_box,
    grasp_point,
    nearest_yaw,
    slot_yaw,
    square_yaw,
    turned_grasp,
)
from tether.scenes.robot import CLOSE, OPEN, Hinge, Robot

Status = py_trees.common.Status
GRASP_ANCHORS = ("grasp_clear", "grasp_turned", "grasp_handle")  # grasp candidates' `Target.at`s


@dataclass(frozen=True)
class Target:
    """Where `move_to` goes: a world point, a point relative to an entity, or to the start pose.

    Exactly one of `world`, `object` or `relative` is set. For an entity, `at` picks its `center`
    (body origin), `top` or `bottom` (of its bounding box, above/below the origin), `grasp`
    (where fingers closing along world y close on it), `grasp_clear` (the same slid along the
    object to where the gripper has room) or `grasp_turned` (a grasp with room with the wrist
    turned to the yaw `yaw` gives: see `tether.scenes.grasps`) or `grasp_handle` (on the handle
    it is taken by, as near its outer end as the hand has room: `clear_handle_grasp`, the wrist
    turned to close the fingers across it); these pass over the grasps whose way down stalled
    this episode (`tether.blackboard.grasp_stalls`) and raise `NoGraspLeft` when none is left),
    `grasp_square` (the fingers closing across its thinner horizontal side, at its middle, or an
    open-topped object's wall there at the rim), `slot` (a region's `top`, with the
    wrist turned so that the fingers close along the region's narrower side) or `door` (the
    hinge of its door, `Robot.hinge_of`: `offset` is then along the door, out of the face
    pushed to shut it, and up, and the fingers close along the door) or `joint` (the origin of
    the joint that moves it, `Robot.joint_of`: a drawer's region, a knob's axis; `offset` is
    then in the joint frame, +y the way the part moves to open or, with `closing`, to close:
    `tether.scenes.joints`); otherwise `offset` is added in the world frame. `relative` is an
    offset from where the end effector was when the node started, in the world frame or, with
    `along`, in that entity's joint frame as it is when the node starts. `offset` and `relative`
    may be `Ref`s to a blackboard key holding
    [x, y, z] (e.g. an approach offset memory chose), read each time the position is computed.
    With `carrying`, the point is where the carried object's bottom should go: the end effector
    is sent to the point plus its current offset from that bottom (used to set objects down); on
    a region's `top`, the point moves aside when something stands there, and may ask for the
    wrist turned a quarter (`Robot.set_down`). With `rise`, the point is raised by up to that
    much, but not above where the end effector started: a carry comes over its target high
    enough to clear what it crosses, and never climbs to do so. With `avoid`, the way to the
    point, fixed when the node starts, goes around what stands between the carried object (or,
    without `carrying`, the open fingertips) and the point, or over it (`Robot.carry_way`):
    `place` carries so, and `grasp` approaches with the wrist turned so. With `carrying` and
    `room` (low and high xy corners, from the point), the point, fixed when the node starts,
    moves to the nearest spot where the carried object and that rectangle beside it stand on
    bare surface (`Robot.spot_with_room`): `slide_in` stages a mug where the hand has room to
    take it again by its handle; with `clear_of` too, that spot keeps the carried object off the
    box that entity's sliding part passes through as it opens (`Robot.swept`): `make_way` sets
    an object down out of a drawer's way.
    """

    world: tuple[float, float, float] | None = None
    object: str | Ref | None = None
    offset: tuple[float, float, float] | Ref = (0.0, 0.0, 0.0)
    at: str = "center"
    relative: tuple[float, float, float] | Ref | None = None
    carrying: str | Ref | None = None
    rise: float = 0.0
    along: str | Ref | None = None
    closing: bool = False
    avoid: bool = False
    room: tuple[tuple[float, float], tuple[float, float]] | None = None
    clear_of: str | Ref | None = None

    def __str__(self) -> str:
        if self.world is not None:
            return f"[{', '.join(f'{v:g}' for v in self.world)}]"
        if self.relative is not None:
            return f"here+{_vec(self.relative)}" + (f" along {self.along}" if self.along else "")
        at = "" if self.at == "center" else f".{self.at}"
        off = f"+{_vec(self.offset)}" if isinstance(self.offset, Ref) or any(self.offset) else ""
        held = f" with {self.carrying}" if self.carrying else ""
        return f"{self.object}{at}{off}{held}" + (f" rising {self.rise:g}" if self.rise else "") \
            + (" where the hand has room" if self.room else "") \
            + (f" clear of {self.clear_of}" if self.clear_of else "") \
            + (" around or over what is on the way" if self.avoid else "")

    def position(self, robot: Robot, start: np.ndarray) -> np.ndarray:
        if self.world is not None:
            return np.asarray(self.world, dtype=float)
        if self.relative is not None:
            return start + np.asarray(deref(self.relative), dtype=float)
        name = deref(self.object)
        if self.at == "door":
            return door_point(robot.hinge_of(name), deref(self.offset))
        if self.at == "joint":
            return robot.joint_of(name).origin + robot.joint_of(name).frame(self.closing) @ \
                np.asarray(deref(self.offset), dtype=float)
        pos = robot.pose_of(name).pos.copy()
        if self.at == "grasp":
            pos = grasp_point(*grasp_box(robot, name), hollow=robot.is_hollow(name))
        elif self.at == "grasp_square":
            pos = grasp_point(*grasp_box(robot, name), axis_of(self.yaw(robot)),
                              hollow=robot.is_hollow(name))
        elif self.at in GRASP_ANCHORS:
            pos = self.grasp(robot)[0]
        elif self.at != "center":
            low, high = robot.extent_of(name)
            pos[2] = low[2] if self.at == "bottom" else high[2]
        pos = pos + np.asarray(deref(self.offset), dtype=float)
        if self.carrying is not None:
            if self.at == "top":
                pos[:2] = self._set_down(robot)[0]
            low, high = robot.extent_of(deref(self.carrying))
            bottom = np.array([(low[0] + high[0]) / 2, (low[1] + high[1]) / 2, low[2]])
            pos = pos + robot.eef_pose().pos - bottom
        if self.rise:
            pos[2] = max(pos[2], min(pos[2] + self.rise, start[2]))
        return pos

    def inputs(self, robot: Robot) -> tuple | None:
        """What `position` reads besides the node's start: the world (`Robot.world_key`), the
        blackboard values it names and the object's stalled grasps; equal inputs, equal
        position. None when it follows the hand (`carrying`) or the robot cannot tell."""
        if self.carrying is not None or (world := robot.world_key()) is None:
            return None
        name = None if self.object is None else deref(self.object)
        stalls = grasp_stalls.of(name) if self.at in GRASP_ANCHORS else ()
        vectors = tuple(None if v is None else tuple(np.asarray(deref(v), float).ravel())
                        for v in (self.offset, self.relative))
        return world, name, stalls, vectors

    def grasp(self, robot: Robot) -> tuple[np.ndarray, float]:
        """The grasp point and wrist yaw of a `grasp_clear`, `grasp_turned` or `grasp_handle`
        target, passing over the object's stalled grasps."""
        name = deref(self.object)
        stalls = grasp_stalls.of(name)
        if self.at == "grasp_turned":
            return turned_grasp(robot, name, stalls)
        if self.at == "grasp_handle":
            grasp = clear_handle_grasp(robot, name, stalls)
            if grasp is None:
                raise NoGraspLeft(f"no grasp of '{name}' by a handle with room is left untried "
                                  f"({len(stalls)} stalled)")
            return grasp
        point, clear = clear_grasp(robot, name, 0.0, stalls)
        if stalls and not clear:
            raise NoGraspLeft(f"no grasp of '{name}' with the wrist unturned is left untried "
                              f"({len(stalls)} stalled)")
        return point, 0.0

    def frame(self, robot: Robot) -> np.ndarray:
        """The axes (3x3, columns) of the frame the target's offsets are in: its joint frame for
        `at: joint` or `along` (`Robot.joint_of`), else the world's."""
        if self.at == "joint":
            return robot.joint_of(deref(self.object)).frame(self.closing)
        if self.along is not None:
            return robot.joint_of(deref(self.along)).frame(self.closing)
        return np.eye(3)

    def in_world(self, robot: Robot) -> Target:
        """This target fixed as the node starts: a `relative` offset `along` a joint turned into
        the world frame now (so a push along a knob's arm stays straight while the knob turns),
        a `room` found now (`Robot.spot_with_room`) as an offset."""
        if self.room is not None and self.carrying is not None:
            offset = np.asarray(deref(self.offset), dtype=float)
            near = replace(self, carrying=None, rise=0.0).position(robot, np.zeros(3))
            keep_out = None if self.clear_of is None else robot.swept(deref(self.clear_of))
            spot = robot.spot_with_room(deref(self.carrying), near[:2], np.asarray(self.room),
                                        keep_out)
            return replace(self, offset=tuple(offset + [*(spot - near[:2]), 0.0]), room=None,
                           clear_of=None)
        if self.relative is None or self.along is None:
            return self
        return Target(relative=tuple(self.frame(robot) @ np.asarray(deref(self.relative), float)))

    def way(self, robot: Robot, start: np.ndarray) -> list[np.ndarray]:
        """The end effector's way points from `start` to this target's point (both excluded):
        with `avoid`, around or over what stands between (`Robot.carry_way`), the target's own
        entity among it unless the point is over that entity's footprint; else none."""
        if not self.avoid:
            return []
        name, goal = deref(self.object), self.position(robot, start)
        low, high = robot.extent_of(name)
        onto = bool(np.all((low[:2] <= goal[:2]) & (goal[:2] <= high[:2])))
        return robot.carry_way(deref(self.carrying), start, goal, past=name if onto else None)

    def yaw(self, robot: Robot) -> float | None:
        """The wrist yaw the target asks for: the turned grasp's, a handle grasp's the way round
        nearer the hand's own (the fingers close along the same line a half turn round: the
        wrist, turned far by a knob it pushed round, met its joint's limit turning the long
        way), or a quarter turn to set a carried object down (`Robot.set_down`), else None."""
        if self.at == "grasp_turned":
            return self.grasp(robot)[1]
        if self.at == "grasp_handle":
            return nearest_yaw(self.grasp(robot)[1], robot.eef_pose().yaw)
        if self.at == "grasp_square":
            return square_yaw(robot.pose_of(deref(self.object)).quat,
                              *robot.extent_of(deref(self.object)))
        if self.at == "door":
            return door_yaw(robot.hinge_of(deref(self.object)), robot.eef_pose().yaw)
        if self.at == "slot":
            return slot_yaw(*robot.extent_of(deref(self.object)), robot.eef_pose().yaw)
        if self.carrying is not None and self.at == "top" and self._set_down(robot)[1]:
            yaw = robot.eef_pose().yaw
            return min(yaw + np.pi / 2, yaw - np.pi / 2, key=abs)
        return None

    def _set_down(self, robot: Robot) -> tuple[np.ndarray, bool]:
        """Where and whether turned the carried object goes down, near the top's x, y plus
        `offset` (`Robot.set_down`)."""
        name = deref(self.object)
        near = robot.pose_of(name).pos[:2] + np.asarray(deref(self.offset), dtype=float)[:2]
        return robot.set_down(name, deref(self.carrying), near)


def turning(frame: np.ndarray) -> Rotation:
    """The rotation that takes the world's axes to `frame`'s (3x3 axes as columns, `Joint.frame`);
    a mirror image turns as the frame it mirrors (its +y reversed back)."""
    proper = frame if np.linalg.det(frame) > 0 else frame @ np.diag([1.0, -1.0, 1.0])
    return Rotation.from_matrix(proper)


def frame_yaw(frame: np.ndarray, yaw: float) -> float:
    """The world yaw of the direction at `yaw` in `frame`."""
    way = frame @ np.array([np.cos(yaw), np.sin(yaw), 0.0])
    return float(np.arctan2(way[1], way[0]))


def door_point(hinge: Hinge, offset, ahead: float = 0.0) -> np.ndarray:
    """The point `offset` (along the door, out of its pushed face, up) from `hinge`, with the
    door turned `ahead` rad further shut."""
    along, out = hinge.frame(ahead)
    return hinge.anchor + offset[0] * along + offset[1] * out + np.array([0.0, 0.0, offset[2]])


def door_yaw(hinge: Hinge, near: float, ahead: float = 0.0) -> float:
    """The wrist yaw nearest `near` at which the fingers close along the door (the hand lies
    along it), with the door turned `ahead` rad further shut."""
    return nearest_yaw(hinge.direction + hinge.closing * ahead - np.pi / 2, near)


class Progress:
    """Whether a measure that should grow has stalled: it has not grown by `step` over its best
    for `patience` calls in a row."""

    def __init__(self, step: float, patience: int):
        self.step, self.patience, self.best, self.since = step, patience, -np.inf, 0

    def stalled(self, value: float) -> bool:
        if value > self.best + self.step:
            self.best, self.since = value, 0
            return False
        self.since += 1
        return self.since >= self.patience


def _vec(value: tuple[float, ...] | Ref) -> str:
    return str(value) if isinstance(value, Ref) else f"[{', '.join(f'{v:g}' for v in value)}]"


class MoveTo(RobotLeaf):
    """Servo the end effector to a target position, keeping its orientation.

    Tick contract: each tick re-reads the target (so a moving object is followed) and commands a
    P-controlled step toward it with the gripper as last commanded, or toward the next of the
    way points an `avoid` target gives when the node starts (`Target.way`; one within `PASS` is
    passed; the distance left is along them). SUCCESS once within
    `tolerance` m (and, when turning to a yaw, within YAW_TOLERANCE of it; no command that tick).
    FAILURE with UNREACHABLE after `max_steps` ticks, or with STUCK when the remaining distance
    (a radian of turn counting as 5 cm) has not shrunk by 2 mm over `stuck_steps` ticks; a
    descent onto a grasp point that fails so is remembered as a stalled grasp, which the next
    grasp targets of that object pass over once it stalled twice (`STALLS`); with UNREACHABLE on
    the first tick when no grasp candidate is left (`NoGraspLeft`); with TARGET_MOVED when the
    object of a move toward its grasp (a grasp anchor) jumps more than JUMP in one tick (knocked
    or carried off: followed sideways at its height, the hand would shove it on; an object the
    hand pushes is followed, its camera estimate jumps from look to look). The
    orientation is the one the end effector had when the node started, turned to `yaw` (rad,
    world; in the target's joint frame for `at: joint` or `along`) if given, else, for a target
    offset from an entity that asks for a yaw (`Target.yaw`:
    an approach to a turned grasp), to that yaw; turning toward a grasp point (`grasp_clear`,
    `grasp_turned`) it also rights a hand tilted more than TILT_TOLERANCE to point straight down
    (a tilt left by an earlier contact would bring one fingertip down first; the start pose's
    few degrees are kept, as the reach to a raised object may need them); a move onto the point
    itself (the descent after the approach) keeps the orientation it starts with. From its start
    until another move (or a policy) begins, the arm's posture leans toward a configuration at
    its goal (`Robot.steer`).
    """

    YAW_TOLERANCE = 0.05  # rad
    PASS = 0.02  # m: a way point (`Target.way`) this near is passed
    TILT_TOLERANCE = np.radians(10)  # a hand tilted more than this is righted toward a grasp
    METRES_PER_RADIAN = 0.05
    JUMP = 0.05  # m the target may move in one tick and still be followed

    def __init__(self, name: str, target: Target, *, tolerance: float, max_steps: int,
                 stuck_steps: int, yaw: float | None):
        super().__init__(name)
        self.target, self.tolerance, self.max_steps = target, tolerance, max_steps
        self.stuck_steps, self.yaw = stuck_steps, yaw

    def initialise(self) -> None:
        here = self.robot.eef_pose()
        self.start = here.pos.copy()
        self.quat = here.quat
        yaw = self.yaw
        if yaw is not None:
            yaw = frame_yaw(self.target.frame(self.robot), yaw)
        self.goal = self.target.in_world(self.robot)
        if yaw is None and self.target.object is not None and any(deref(self.target.offset)):
            yaw = self.target.yaw(self.robot)
        self.turning = yaw is not None
        if self.turning:
            roll, pitch, _ = Rotation.from_quat(here.quat).as_euler("xyz")
            tilted = here.tilt > self.TILT_TOLERANCE
            if tilted and self.target.object is not None and self.target.at in GRASP_ANCHORS:
                roll, pitch = np.pi, 0.0  # a grasp from above: the hand straight down
            self.quat = Rotation.from_euler("xyz", [roll, pitch, yaw]).as_quat()
        self.ticks, self.progress = 0, Progress(0.002, self.stuck_steps)
        self.where: np.ndarray | None = None  # the grasped object's position last tick
        self.way = self.goal.way(self.robot, self.start)
        self.last: tuple[tuple | None, np.ndarray] | None = None  # the goal's inputs, position
        self.robot.steer(self.position(), self.quat)

    def position(self) -> np.ndarray:
        """The goal's position now: the last one computed while its inputs stay the same
        (`Target.inputs`), so a grasp point is not searched again while nothing but the arm
        moves."""
        inputs = self.goal.inputs(self.robot)
        if inputs is None or self.last is None or self.last[0] != inputs:
            self.last = (inputs, self.goal.position(self.robot, self.start))
        return self.last[1]

    def update(self) -> Status:
        here = self.robot.eef_pose()
        goal = self.position()
        if self.target.object is not None and self.target.at in GRASP_ANCHORS:
            name = deref(self.target.object)
            where, last = self.robot.position(name), self.where
            if last is not None and (jump := float(np.linalg.norm(where - last))) > self.JUMP:
                return self.fail(TARGET_MOVED, f"{name} moved {jump * 100:.1f} cm at once")
            self.where = where
        while self.way and np.linalg.norm(self.way[0] - here.pos) <= self.PASS:
            self.way.pop(0)
        points = [here.pos, *self.way, goal]
        error = float(sum(np.linalg.norm(b - a) for a, b in pairwise(points)))
        turn = 0.0
        if self.turning:
            turn = quaternions.angle(quaternions.relative(self.quat, here.quat))
        self.feedback_message = f"{error * 100:.1f} cm to go" + (
            f", {np.degrees(turn):.0f} deg to turn" if turn > self.YAW_TOLERANCE else "") + (
            f" by {len(self.way)} way point(s)" if self.way else "")
        if error <= self.tolerance and turn <= self.YAW_TOLERANCE:
            return Status.SUCCESS
        self.ticks += 1
        if self.ticks > self.max_steps:
            self._stalled(goal)
            return self.fail(UNREACHABLE,
                             f"{error * 100:.1f} cm short after {self.max_steps} steps")
        if self.progress.stalled(-(error + self.METRES_PER_RADIAN * turn)):
            self._stalled(goal)
            return self.fail(STUCK, f"no progress for {self.stuck_steps} steps, "
                                    f"{error * 100:.1f} cm short")
        self.command(self.robot.servo(points[1], self.quat, self.robot.gripper_command))
        return Status.RUNNING

    def _stalled(self, goal: np.ndarray) -> None:
        """A descent onto a grasp point (a grasp anchor, no offset) that fails: remember the
        grasp as stalled, so the next attempt takes another (`tether.blackboard.grasp_stalls`)."""
        target = self.goal
        if target.object is None or target.at not in GRASP_ANCHORS or any(deref(target.offset)):
            return
        name = deref(target.object)
        yaw = float(Rotation.from_quat(self.quat).as_euler("xyz")[2])
        grasp_stalls.record(name, Stall.of(*grasp_box(self.robot, name), goal, yaw))


class Rotate(RobotLeaf):
    """Turn the wrist about a world axis (`x`, `y` or `z`) by `yaw` rad, holding the position.

    The angle is called `yaw` because the default axis is z. With `relative` the end effector's
    orientation is rotated by the angle about the world axis (turns compose: a pitch about x then a
    roll about y); otherwise that axis's extrinsic xyz Euler angle is set to the angle. With
    `along`, axes and angles are those of that entity's joint frame (`Target`'s `at: joint`) as it
    is when the node starts: the hand's orientation is taken relative to the frame (a mirrored
    frame, `closing` on a hinge, turns as the frame it mirrors). With `either_way` (for a closed
    parallel gripper, which looks the same turned half round its fingers), an absolute turn goes to
    the angle or the angle + pi, whichever is nearer. With `handle` (an object the hand holds),
    the turn is about z by what brings that object's handle (`Robot.handle_of`) to point at
    heading `yaw` (rad from the world's +x), the shorter way round; where the hand stops turning
    (for `STALL` ticks) more than `SHORT` short of it (the wrist's last joint at its limit: a
    half turn stopped 9 degrees short), the other way round, led at most `LEAD` ahead of the
    hand so that it keeps that way, with `max_steps` ticks afresh. Tick contract: commands
    a servo step holding the start position each tick; SUCCESS within `tolerance` rad; FAILURE
    with UNREACHABLE after `max_steps` ticks, or at once with CONDITION_FAILED when `handle`'s
    object shows no handle.
    """

    STALL = 10  # ticks without 0.01 rad more of a handle's turn ...
    SHORT = 0.1  # ... more than this short of it (rad) before it goes the other way ...
    LEAD = np.pi / 2  # ... led this far ahead of the hand (rad)

    AXES = "xyz"

    def __init__(self, name: str, yaw: float, *, relative: bool, tolerance: float, max_steps: int,
                 axis: str = "z", along: str | Ref | None = None, closing: bool = False,
                 either_way: bool = False, handle: str | Ref | None = None):
        super().__init__(name)
        if axis not in self.AXES:
            raise ValueError(f"axis is one of x, y, z, got {axis!r}")
        if handle is not None and (along is not None or axis != "z"):
            raise TetherError("`handle` turns about the world's z, not with `along` or another "
                              "`axis`")
        self.yaw, self.relative = yaw, relative
        self.tolerance, self.max_steps = tolerance, max_steps
        self.axis, self.along, self.closing = axis, along, closing
        self.either_way, self.handle = either_way, handle

    def initialise(self) -> None:
        here = self.robot.eef_pose()
        self.pos = here.pos.copy()
        self.goal, self.turn = None, None
        if self.handle is not None:
            handle = self.robot.handle_of(deref(self.handle))
            if handle is not None:
                heading = np.arctan2(handle.outward[1], handle.outward[0])
                self.turn = (self.yaw - heading + np.pi) % (2 * np.pi) - np.pi
                self.start, self.turned, self.last = Rotation.from_quat(here.quat), 0.0, here.yaw
                self.goal = Rotation.from_euler("z", self.turn) * self.start
                self.progress, self.other_way = Progress(0.01, self.STALL), None
            self.ticks = 0
            return
        frame = Rotation.identity() if self.along is None else turning(self.robot.joint_of(
            deref(self.along)).frame(self.closing))
        start = frame.inv() * Rotation.from_quat(here.quat)  # the hand's orientation in the frame
        if self.relative:
            goal = Rotation.from_euler(self.axis, self.yaw) * start
        else:
            angles = start.as_euler("xyz")
            turns = [self.yaw, self.yaw + np.pi] if self.either_way else [self.yaw]
            goals = []
            for angle in turns:
                angles[self.AXES.index(self.axis)] = angle
                goals.append(Rotation.from_euler("xyz", angles))
            goal = min(goals, key=lambda g: (g * start.inv()).magnitude())
        self.goal = frame * goal
        self.ticks = 0

    def update(self) -> Status:
        if self.goal is None:
            return self.fail(CONDITION_FAILED, f"'{deref(self.handle)}' shows no handle to turn")
        pose = self.robot.eef_pose()
        here = Rotation.from_quat(pose.quat)
        error = float((self.goal * here.inv()).magnitude())
        self.feedback_message = f"{np.degrees(error):.1f} deg to go"
        if error <= self.tolerance:
            return Status.SUCCESS
        self.ticks += 1
        if self.ticks > self.max_steps:
            return self.fail(UNREACHABLE, f"{np.degrees(error):.1f} deg short after "
                                          f"{self.max_steps} steps")
        self.command(self.robot.servo(self.pos, self._led(pose).as_quat(),
                                      self.robot.gripper_command))
        return Status.RUNNING

    def _led(self, pose) -> Rotation:
        """The orientation commanded now: the goal, or once a handle's turn has stalled, the
        hand's turn so far (followed tick by tick) plus at most `LEAD` the other way round."""
        if self.turn is None:
            return self.goal
        self.turned += (pose.yaw - self.last + np.pi) % (2 * np.pi) - np.pi
        self.last = pose.yaw
        if self.other_way is None and self.progress.stalled(abs(self.turned)):
            heading = self.turn + 2 * np.pi * np.round((self.turned - self.turn) / (2 * np.pi))
            if abs(heading - self.turned) > self.SHORT:  # short of where it was going
                self.other_way, self.ticks = heading - np.copysign(2 * np.pi, self.turned), 0
        if self.other_way is None:
            return self.goal
        ahead = self.turned + np.clip(self.other_way - self.turned, -self.LEAD, self.LEAD)
        return Rotation.from_euler("z", ahead) * self.start


class SetGripper(RobotLeaf):
    """Open or close the gripper while holding the end effector where it is.

    Tick contract: commands the gripper every tick; SUCCESS once the fingers have stopped moving
    (width changed < 0.5 mm over 3 ticks, after at least `min_steps`) or after `max_steps` ticks.
    Whether something was grasped is a separate `check: grasped`.
    """

    def __init__(self, name: str, state: str, *, min_steps: int = 4, max_steps: int = 30):
        super().__init__(name)
        self.value = CLOSE if state == "close" else OPEN
        self.min_steps, self.max_steps = min_steps, max_steps

    def initialise(self) -> None:
        self.hold = self.robot.eef_pose()
        self.widths: list[float] = []

    def update(self) -> Status:
        self.widths.append(self.robot.gripper_width())
        settled = len(self.widths) > self.min_steps and np.ptp(self.widths[-3:]) < 5e-4
        self.feedback_message = f"width {self.widths[-1] * 100:.1f} cm"
        if settled or len(self.widths) > self.max_steps:
            return Status.SUCCESS
        self.command(self.robot.servo(self.hold.pos, self.hold.quat, self.value))
        return Status.RUNNING


class Release(RobotLeaf):
    """Open the gripper, then retreat `lift` m straight up.

    Tick contract: first the gripper phase of `set_gripper: open`, for at least `OPEN_STEPS`
    ticks, then a servo toward the retreat point; SUCCESS within 1 cm of it; FAILURE with STUCK
    if it is not reached within `max_steps` ticks of retreat. The gripper's command ramps from
    closed to open over about 8 ticks, so fingers closed on a wide object (a moka pot, 7.7 cm)
    do not move for that long: retreating sooner lifts the object with them.
    """

    OPEN_STEPS = 10

    def __init__(self, name: str, *, lift: float, max_steps: int = 80):
        super().__init__(name)
        self.lift, self.max_steps = lift, max_steps
        self.opener = SetGripper(f"{name}/open", "open", min_steps=self.OPEN_STEPS)
        self.opener.acts_for = self

    def setup(self, **kwargs) -> None:
        super().setup(**kwargs)
        self.opener.setup(**kwargs)

    def initialise(self) -> None:
        self.opener.initialise()
        self.retreat = self.robot.eef_pose()
        self.retreat = (self.retreat.pos + np.array([0.0, 0.0, self.lift]), self.retreat.quat)
        self.opened, self.ticks = False, 0

    def update(self) -> Status:
        if not self.opened:
            self.opened = self.opener.update() == Status.SUCCESS
            if not self.opened:
                return Status.RUNNING
        pos, quat = self.retreat
        error = float(np.linalg.norm(pos - self.robot.eef_pose().pos))
        self.feedback_message = f"retreating, {error * 100:.1f} cm to go"
        if error <= 0.01:
            return Status.SUCCESS
        self.ticks += 1
        if self.ticks > self.max_steps:
            return self.fail(STUCK, f"retreat blocked {error * 100:.1f} cm short")
        self.command(self.robot.servo(pos, quat, OPEN))
        return Status.RUNNING


class Wait(RobotLeaf):
    """Let `steps` control steps pass without commanding (the robot holds).

    Tick contract: RUNNING for `steps` ticks, SUCCESS on the next.
    """

    def __init__(self, name: str, steps: int):
        super().__init__(name)
        self.steps = steps

    def initialise(self) -> None:
        self.ticks = 0

    def update(self) -> Status:
        if self.ticks >= self.steps:
            return Status.SUCCESS
        self.ticks += 1
        self.feedback_message = f"{self.ticks}/{self.steps}"
        return Status.RUNNING


class PushDoor(RobotLeaf):
    """Swing a hinged door shut with the closed fingers against its outer face.

    Tick contract: each tick reads the door (`Robot.hinge_of`) and servos the fingers to
    `radius` m from the hinge along the door turned `ahead` rad further shut, `press` m out of
    the face they push and `height` m above the hinge, the hand lying along the door (its roll
    and pitch kept from the start), so the target runs ahead of the door as it turns. SUCCESS
    once the door is closed (its `close` goal predicate); FAILURE with STUCK when the door has not
    turned 0.01 rad further shut over `stuck_steps` ticks, with UNREACHABLE after `max_steps`.
    """

    def __init__(self, name: str, door: str | Ref, *, radius: float, press: float,
                 height: float, ahead: float, max_steps: int, stuck_steps: int):
        super().__init__(name)
        self.door, self.radius, self.press, self.height = door, radius, press, height
        self.ahead, self.max_steps, self.stuck_steps = ahead, max_steps, stuck_steps

    def initialise(self) -> None:
        self.roll, self.pitch, _ = Rotation.from_quat(self.robot.eef_pose().quat).as_euler("xyz")
        self.ticks, self.progress = 0, Progress(0.01, self.stuck_steps)

    def update(self) -> Status:
        door = deref(self.door)
        if self.robot.goal_predicate("close", [door]):
            return Status.SUCCESS
        hinge = self.robot.hinge_of(door)
        shut = hinge.closing * hinge.direction  # grows as the door closes
        self.feedback_message = f"door at {np.degrees(hinge.direction):.0f} deg"
        self.ticks += 1
        if self.ticks > self.max_steps:
            return self.fail(UNREACHABLE, f"door still open after {self.max_steps} steps")
        if self.progress.stalled(shut):
            return self.fail(STUCK, f"the door has not moved for {self.stuck_steps} steps")
        goal = door_point(hinge, (self.radius, self.press, self.height), self.ahead)
        yaw = door_yaw(hinge, self.robot.eef_pose().yaw, self.ahead)
        quat = Rotation.from_euler("xyz", [self.roll, self.pitch, yaw]).as_quat()
        self.command(self.robot.servo(goal, quat, self.robot.gripper_command))
        return Status.RUNNING
