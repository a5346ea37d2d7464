"""The `Robot` interface: everything behaviours may ask of the world, and the one way to act on it.

Behaviours never touch MuJoCo or LIBERO directly. They read poses through this interface (and
the named predicates built on it, `tether.scenes.predicates`) and produce one action per control
step; the tick loop hands that action to `step`. A real robot replaces the simulated scene by
implementing the same interface.

Conventions (robosuite's, which LIBERO and lerobot share):
- positions in metres in the world frame; quaternions `(x, y, z, w)`;
- an action is 7-D and normalised to [-1, 1]: an OSC_POSE delta of the end effector
  (3 translation, 3 axis-angle rotation in the world frame) and the gripper (-1 open, +1 close);
- one `step` is one control period, `control_dt` seconds of simulated time.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from tether.errors import TetherError
from tether.scenes import quaternions
from tether.scenes.cameras import Capture, Still
from tether.scenes.handles import Handle
from tether.scenes.isolation import Isolation
from tether.scenes.joints import Joint

OPEN, CLOSE = -1.0, 1.0


@dataclass(frozen=True)
class Pose:
    """A position (m) and an orientation quaternion (x, y, z, w) in the world frame."""

    pos: np.ndarray
    quat: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))

    @property
    def yaw(self) -> float:
        return quaternions.yaw(self.quat)

    @property
    def tilt(self) -> float:
        """How far (rad) the hand points from straight down (its z axis from the world's -z)."""
        return quaternions.tilt(self.quat)


@dataclass(frozen=True)
class Hinge:
    """A hinged door: its hinge's point (m), the world direction (rad about z) from the hinge to
    the door's middle, and the sense (+1: counter-clockwise seen from above) it turns to close."""

    anchor: np.ndarray
    direction: float
    closing: int

    def frame(self, ahead: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Unit vectors along the door and out of the face that is pushed to close it, with the
        door turned `ahead` rad further shut."""
        a = self.direction + self.closing * ahead
        along = np.array([np.cos(a), np.sin(a), 0.0])
        return along, self.closing * np.array([along[1], -along[0], 0.0])


@dataclass(frozen=True)
class ServoGains:
    """Scales of the normalised action: metres and radians for a full (+-1) action, and a P gain."""

    max_translation: float = 0.05
    max_rotation: float = 0.5
    gain: float = 2.0


class ConfigurationSpace(Protocol):
    """An arm among obstacles, as a motion planner sees it for one motion
    (`Robot.motion_space`, `tether.scenes.motion`)."""

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of each coordinate of a configuration."""

    def current(self) -> np.ndarray:
        """The configuration the arm is in now."""

    def free(self, q: np.ndarray) -> bool:
        """Whether configuration `q` touches nothing the motion may not touch."""

    def pose(self, q: np.ndarray) -> Pose:
        """The end effector's pose at configuration `q`."""

    def solve(self, pos: np.ndarray, quat: np.ndarray, seed: int) -> np.ndarray | None:
        """A free configuration whose end effector is at (`pos`, `quat`), or None."""


class Robot(abc.ABC):
    """A manipulator in a scene, stepped one control period at a time."""

    CLEARANCE = 0.12  # how far above a point `clear_from_above` looks (m)
    FAR_REACH = 0.6  # m from the arm's base, horizontally, beyond which `steer` steers ...
    SQUARE = np.radians(30)  # ... a hand pointing down or level within this (rad)

    control_dt: float = 0.05
    gains = ServoGains()

    def __init__(self) -> None:
        self.steps = 0
        self._hold: Pose | None = None
        self._gripper = OPEN
        self.sent: np.ndarray | None = None  # the last action applied (a command, or a hold)
        self.isolation = Isolation()  # `tether.scenes.isolation`: camera perception's guard

    # --- what the world looks like -------------------------------------------------------
    @abc.abstractmethod
    def eef_pose(self) -> Pose:
        """The end effector's pose."""

    @abc.abstractmethod
    def gripper_width(self) -> float:
        """Distance between the fingers (m)."""

    def reach(self, pos: np.ndarray) -> float:
        """How far `pos` lies from the arm's base, horizontally (m): the robot knows where it
        stands. 0 for a scene without an arm model (everything is in reach)."""
        return 0.0

    @abc.abstractmethod
    def entities(self) -> list[str]:
        """Every name a target or predicate may use: objects, fixtures and regions."""

    def objects(self) -> list[str]:
        """The task's movable objects (the entities a camera world model localizes; fixtures and
        regions are the scene's static layout)."""
        return self.entities()

    def start_support(self, name: str) -> str | None:
        """The region, fixture or object the task file puts `name` on or in at the start (its
        `:init` literal), if any."""
        return None

    def look(self) -> list[str]:
        """Localize the objects again now (a camera world model does); the names not seen. The
        simulated scene always knows where everything is: none."""
        return []

    def world_key(self) -> bytes | None:
        """A value that changes whenever anything but the robot may have moved or turned, so an
        answer computed from the world alone still holds while it stays the same; None when
        the robot cannot tell (ask again every time)."""
        return None

    @abc.abstractmethod
    def pose_of(self, name: str) -> Pose:
        """Pose of an object, fixture or region by its canonical name."""

    @abc.abstractmethod
    def extent_of(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World-frame axis-aligned bounding box (low corner, high corner) of an entity."""

    @abc.abstractmethod
    def resolve(self, name: str) -> str:
        """The canonical name for a name or alias; `TetherError` when unknown or ambiguous."""

    @abc.abstractmethod
    def start_pose_of(self, name: str) -> Pose:
        """Pose of an entity when the episode started (after the scene settled)."""

    @abc.abstractmethod
    def goal(self) -> list[tuple[str, ...]]:
        """The task's goal literals, e.g. `[("on", "akita_black_bowl_1", "plate_1")]`."""

    @abc.abstractmethod
    def goal_predicate(self, name: str, args: list[str]) -> bool:
        """Evaluate one goal predicate (`on`, `in`, `open`, ...) as the task's success test does."""

    @abc.abstractmethod
    def is_grasped(self, name: str) -> bool:
        """Whether the gripper holds the object (both fingers in contact with it)."""

    def clear_from_above(self, points: list[np.ndarray], *, ignore: str) -> bool:
        """Whether something can come straight down onto each point (from `CLEARANCE` m above)
        touching nothing but entity `ignore` and the robot. Scenes without geometry say yes."""
        return True

    def carry_way(self, carried: str | None, start: np.ndarray, goal: np.ndarray, *,
                  past: str | None) -> list[np.ndarray]:
        """The end effector's way points (`start` and `goal` excluded) along which `carried`
        (None: the open fingertips, `tether.scenes.grasps.open_hand_box`) goes around or over
        everything between but the robot, itself and `past` (the target it is set down on or
        taken from, or the fixture a target region is part of; None: nothing is passed over):
        `tether.scenes.carry_way`. Scenes without
        geometry say none: the straight line."""
        return []

    def handle_of(self, name: str) -> Handle | None:
        """The handle of object `name` (a mug's: `tether.scenes.handles`), or None when it has
        none or the scene has no geometry."""
        return None

    def is_hollow(self, name: str) -> bool:
        """Whether object `name` is open-topped, taken at its rim (`tether.scenes.grasps`); False
        when the scene has no geometry."""
        return False

    def hinge_of(self, name: str) -> Hinge:
        """The hinge of articulated fixture `name`'s door (a microwave's); `TetherError` when
        the scene knows of none."""
        raise TetherError(f"'{name}' has no hinged door in this scene")

    def headroom(self, name: str) -> float:
        """The free height (m) straight above entity `name`'s middle, up to the first thing in
        the way (a microwave's roof over its heating region); inf when nothing is, or the scene
        has no geometry."""
        return float("inf")

    def thin_top(self, name: str) -> float:
        """How far (m) an object's top is made of thin parts only (a carton's gable of panels),
        which a grasp is not measured from (`tether.scenes.grasps.grasp_box`); 0 unless a scene
        knows the object's parts."""
        return 0.0

    def surface(self, name: str) -> float:
        """The height (m, world z) at which something set on entity `name` comes to rest: the
        top of its box, unless a scene knows better (a region's box can lie below what bears it:
        a stove's cook region under its burner)."""
        return float(self.extent_of(name)[1][2])

    def joint_of(self, name: str) -> Joint:
        """The joint that moves entity `name`: a region's (a drawer's) or a fixture's first
        (a stove's knob); `TetherError` when the scene knows of none."""
        raise TetherError(f"'{name}' has no joint in this scene")

    def swept(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The box (low, high world corners) that the part sliding on entity `name`'s joint (a
        drawer, by its region) passes through from where it is now to fully open; `TetherError`
        when the scene knows of no such part."""
        raise TetherError(f"'{name}' has no sliding part in this scene")

    def motion_space(self, allow: Sequence[str], carrying: str | None = None
                     ) -> ConfigurationSpace:
        """The arm among the scene's geometry for one planned motion that may touch the
        entities in `allow` (`tether.scenes.motion`), with the object `carrying` moving with the
        hand as it is held now; `TetherError` when the scene has no geometry."""
        raise TetherError("this scene has no geometry to plan motions in")

    def steer(self, pos: np.ndarray | None,  # noqa: B027 - optional, nothing to steer by default
              quat: np.ndarray | None = None) -> None:
        """Lean the arm's spare freedom (its null space) toward a configuration that has the
        end effector at (`pos`, `quat`), found by the arm's kinematics alone, when `pos` lies
        `FAR_REACH` or more from the arm's base horizontally with the hand pointing down or level
        within `SQUARE` (one that would hit a fixture swung clear where it can be); None, a nearer
        pose, a hand tipped part way or a pose it does not find gives the controller's own
        posture back. Near the edge of its workspace a controller that tracks the end effector
        alone folds the arm into a joint limit (an elbow straightened reaching far and high, then
        stuck a few cm short); nearer, its own posture serves, and so it does for a hand tipped
        part way (an object tipped 45 degrees to be laid in a drawer: the kinematics'
        configurations turned the wrist's last joint to its limit and the carry stalled short).
        A robot without a model of its arm keeps its posture."""

    def set_down(self, target: str, carried: str, near: np.ndarray) -> tuple[np.ndarray, bool]:
        """Where (x, y) the middle of `carried` goes down on `target` near the point `near`,
        and whether the wrist turns a quarter first: `near` unturned, unless a scene knows
        better (a region where something stands there, `tether.scenes.placing`)."""
        return np.asarray(near, dtype=float), False

    def spot_with_room(self, carried: str, near: np.ndarray, room: np.ndarray,
                       keep_out: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Where (x, y) the middle of `carried` goes down on the bare surface near the point
        `near`, off the box `keep_out`, so that the hand has the rectangle `room` (2 x 2: low and
        high xy corners from that spot) bare to take it again
        (`tether.scenes.placing.spot_with_room`): `near` unless a scene knows better (where
        something stands there)."""
        return np.asarray(near, dtype=float)[:2]

    def success(self) -> bool:
        """The task's own success test: every goal literal holds."""
        return all(self.goal_predicate(lit[0], list(lit[1:])) for lit in self.goal())

    def position(self, name: str) -> np.ndarray:
        """Position of an entity; 'gripper' is the end effector."""
        return self.eef_pose().pos if name == "gripper" else self.pose_of(name).pos

    @abc.abstractmethod
    def _apply(self, action: np.ndarray) -> None:
        """Advance the world by one control period under `action`."""

    def observe(self) -> dict:
        """The observation of the current step (robot state; images when a camera is configured)."""
        pose = self.eef_pose()
        return {"eef_pos": pose.pos, "eef_quat": pose.quat, "gripper_width": self.gripper_width()}

    def render(self, camera: str, size: tuple[int, int],
               draft: bool = False) -> np.ndarray | None:
        """An upright RGB frame (h, w, 3, uint8) from a named camera, rendered now (a cheaper
        `draft` where a simulator has one: `tether.scenes.cameras.Rasteriser`); None when the
        scene has no cameras. Rendering costs far more than a step: callers choose when."""
        return None

    def capture(self, camera: str, size: tuple[int, int],
                draft: bool = False) -> Capture | None:
        """What `camera` sees now, as a frame drawn when asked, maybe on another thread
        (`tether.scenes.cameras`); None when the scene has no cameras. A robot rendering here
        gives a `Still`; a MuJoCo scene captures its visual scene and defers the drawing."""
        image = self.render(camera, size, draft)
        return None if image is None else Still(image)

    # --- acting ------------------------------------------------------------------------
    @property
    def sim_time(self) -> float:
        return self.steps * self.control_dt

    @property
    def gripper_command(self) -> float:
        """The last gripper command (OPEN or CLOSE); holding keeps it."""
        return self._gripper

    def step(self, action: np.ndarray) -> None:
        """Apply one commanded action for one control period."""
        action = np.asarray(action, dtype=float)
        if action.shape != (7,) or not np.all(np.isfinite(action)):
            raise ValueError(f"an action is 7 finite numbers, got {action!r}")
        self._gripper = CLOSE if action[6] > 0 else OPEN
        self._hold = None
        self.sent = np.clip(action, -1.0, 1.0)
        self._apply(self.sent)
        self.steps += 1

    def hold(self) -> None:
        """Step once holding the pose where the last command left the end effector."""
        if self._hold is None:
            self._hold = self.eef_pose()
        self.sent = self.servo(self._hold.pos, self._hold.quat, self._gripper)
        self._apply(self.sent)
        self.steps += 1

    def servo(self, pos: np.ndarray, quat: np.ndarray, gripper: float) -> np.ndarray:
        """The P-controlled action that moves the end effector toward (`pos`, `quat`)."""
        here = self.eef_pose()
        g = self.gains
        dpos = (np.asarray(pos) - here.pos) / g.max_translation * g.gain
        drot = quaternions.rotvec(quaternions.relative(quat, here.quat))
        drot = drot / g.max_rotation * g.gain
        return np.clip(np.concatenate([dpos, drot, [gripper]]), -1.0, 1.0)

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release the simulator or hardware."""
