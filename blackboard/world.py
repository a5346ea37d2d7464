"""The world model leaves read object state from, and its camera provider.

Leaves, guards, checks, referring expressions and the planner ask a `Robot` where things are
(`pose_of`, `extent_of`, `is_grasped`, `goal_predicate`, ...). Two providers answer:

- `privileged`: the simulated scene itself (MuJoCo's poses, exact): the oracle, for debugging and
  as the reference camera runs are measured against;
- `camera`: a `Perceived` robot. It acts, reads its own joints and renders through the scene,
  but answers about the task's movable objects from a `CameraWorld`: the project's segmenter
  on the agent-view and wrist RGB frames, depth back-projected to world points
  (`tether.scenes.localization`), both views fused, copies of one category kept apart and
  tracked from look to look. The scene's isolation is enforced while the tree ticks
  (`tether.scenes.isolation`): a leaf that reads the simulator's object state fails loudly.

What camera mode still takes from the simulator, each under a named exception counted in
`scene.isolation.reads` (docs/perception.md): `static layout` (fixtures and regions: where the
table's regions, cabinets and stoves stand; they do not move by themselves), `articulation`
(joints of fixtures, and open/closed/on/off), `collision geometry` (ray casts and motion
planning against the scene's geometry), `identity` (which copy of a category the task file
names: the region or fixture its `:init` puts it on or in, read once at the first look; a copy
put on another object is found by that object, as the cameras see it).

An estimate is refreshed at the first question after `period` control steps, and whenever a
`localize` node asks (`look`); an object seen once and hidden now keeps its last estimate,
carried (moved and turned) with the hand while the gripper holds it; one never seen raises
`ObjectNotFound`, which fails the asking leaf with OBJECT_NOT_FOUND (`tether.behaviours.leaf`).

    world = CameraWorld(scene, CameraConfig())
    robot = Perceived(scene, world)
    robot.pose_of("akita_black_bowl_1").pos    # from the cameras
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from tether.blackboard import trace_events
from tether.errors import TetherError
from tether.registry import Registry
from tether.scenes.localization import LocalizeConfig, Located, Sighting, localize_instances
from tether.scenes.predicates import box_distance
from tether.scenes.projection import CameraGeometry
from tether.scenes.robot import CLOSE, ConfigurationSpace, Hinge, Pose, Robot
from tether.scenes.vocabulary import category_of

SEGMENTER = Path(__file__).resolve().parents[1] / "models" / "checkpoints" / "segmenter"
# Fingers closed on nothing end 1-2 mm apart; on a bowl's rim, the thinnest grasp, 3.5 mm.
EMPTY_WIDTH = 0.0028
HOLD_REACH = 0.05  # an object whose box is this near the fingertips when they close is held
CONFIDENT = 0.5  # a sighting with fewer points than this share of the first one is a glimpse
SETTLED = 0.0005  # fingers moving less than this (m) in a step have stopped
GATE = 0.2  # a copy not held moves less than this (m) from one look to the next
MARGIN = 0.01  # room a grasp needs beyond the probes (m): how far off a camera box may be
SHIFTS = [np.zeros(3), *(np.array(v) * MARGIN for v in ((1, 0, 0), (-1, 0, 0), (0, 1, 0),
                                                         (0, -1, 0)))]
SURE, JUMP = 0.8, 0.04  # a sighting that moves a resting object over JUMP m needs SURE
# An object resting on or in its target has its box's bottom from ON_BELOW under the target's
# bottom to ON_ABOVE over its top (m): the cameras complete a box down to the surface seen around
# it, and a mug covering a plate is completed to the table, under the plate's top; a bowl's
# underside is hidden, its wall seen from above starts a little higher. Inside the target's
# footprint nothing rests lower, so `on` and `in` are the same test.
ON_BELOW, ON_ABOVE = 0.03, 0.05


class ObjectNotFound(TetherError):
    """An object the cameras have not seen (enough of) since the episode started."""

    def __init__(self, name: str, reason: str):
        self.name = name
        super().__init__(reason)


@dataclass(frozen=True)
class CameraConfig:
    """The camera provider: a `tether train-perception` `checkpoint`, the `cameras` fused, and
    how many control steps an estimate stays current (`period`)."""

    checkpoint: Path = SEGMENTER
    # the wrist camera is not fused by default: the segmenter, trained on frames near the start
    # pose, mislabels its close-ups of the object being approached (estimates 5-7 cm off)
    cameras: tuple[str, ...] = ("agentview",)
    period: int = 10
    # the whole visible box, completed where the camera cannot see: no border pixel dropped but
    # the background past a 2 cm depth gap, half a pixel around, a tall object's far half, the
    # bottom on the surface around it (on 2,618 objects of seg_all with the simulator's masks:
    # centres 0.30 cm off at the median, 1.03 cm with the old one-pixel erosion; see
    # benchmarks/localization_geometry.py and docs/perception.md)
    localize: LocalizeConfig = field(default_factory=lambda: LocalizeConfig(
        erode=0, low=0.5, high=99.5, gap=0.02, stray=0.1, pad=True, far_side=True, support=0.03))

    def __post_init__(self) -> None:
        if self.period < 1 or not self.cameras:
            raise TetherError(f"camera perception: period >= 1 and at least one camera, not "
                              f"{self.period}, {list(self.cameras)}")


@dataclass(frozen=True)
class Estimate:
    """What the cameras last made of one object: its box, the control `step` it was seen at,
    the cameras that saw it, and its yaw (rad, mod pi) from the points' principal axis."""

    name: str
    position: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    step: int
    cameras: tuple[str, ...]
    yaw: float = 0.0
    points: int = 0

    def carried(self, grip: Pose, hand: Pose) -> Estimate:
        """Where the object is when the hand that gripped it at `grip` is at `hand`: moved with
        the hand and turned about the vertical as much as the hand turned (its box is the
        upright box around the turned one)."""
        turn = (Rotation.from_quat(hand.quat) * Rotation.from_quat(grip.quat).inv()
                ).as_euler("zyx")[0]
        about = Rotation.from_euler("z", turn)

        def place(points: np.ndarray) -> np.ndarray:
            return about.apply(points - grip.pos) + hand.pos

        corners = place(np.array([[x, y, z] for x in (self.lower[0], self.upper[0])
                                  for y in (self.lower[1], self.upper[1])
                                  for z in (self.lower[2], self.upper[2])]))
        return Estimate(self.name, place(self.position), corners.min(axis=0),
                        corners.max(axis=0), self.step, self.cameras,
                        float((self.yaw + turn) % np.pi), self.points)


class CameraWorld:
    """The task's movable objects as the cameras see them (see the module docstring)."""

    def __init__(self, scene: Robot, config: CameraConfig | None = None) -> None:
        from tether.models.perception.category_segmenter import loaded
        from tether.scenes.observations import Observer

        self.scene, self.config = scene, config or CameraConfig()
        self.segmenter = loaded(self.config.checkpoint)
        self.observer = Observer(scene)  # type: ignore[arg-type]
        self.names = scene.objects()
        self.categories = sorted({category_of(n) for n in self.names})
        self.estimates: dict[str, Estimate] = {}
        self.first: dict[str, Estimate] = {}
        self.looked_at: int | None = None
        self.looks = 0
        self.held: str | None = None
        self._grip: Pose | None = None  # the hand's pose when it took `held`
        self._let_go: set[str] = set()  # objects let go and not seen since: they may have fallen
        self._closing = True  # the fingers are closing from open (a hold may begin)
        self._width = scene.gripper_width()

    # --- looking -----------------------------------------------------------------------------
    def look(self) -> list[str]:
        """Localize every object from all cameras now; the names not seen this time."""
        size = self.segmenter.config.size
        views = [self.observer.observe(c, size, rgb=True, depth=True, own_body=True)
                 for c in self.config.cameras]
        sightings = [Sighting.of(v, m) for v, m in zip(views, self._segment(views), strict=True)]
        by_category: dict[str, list[str]] = {}
        for name in self.names:
            if name != self.held:  # a held object moves with the hand (see `estimate`)
                by_category.setdefault(category_of(name), []).append(name)
        step, hand = self.scene.steps, self.scene.eef_pose().pos
        held = self.estimate(self.held) if self.held is not None else None
        seen: list[str] = []  # found this look (`updated`: and believed)
        updated: list[str] = []
        for category, labels in by_category.items():
            found = [f for f in localize_instances(sightings, category, self.config.localize,
                                                   count=len(labels))
                     if held is None or not _near_held(f, hand, held)]
            for name, located in self._assign(labels, found).items():
                seen.append(name)
                if not self._believed(name, located):
                    continue  # a glimpse (the arm in the way): the last estimate stands
                self.estimates[name] = Estimate(name, located.position, located.lower,
                                                located.upper, step, located.cameras,
                                                _principal_yaw(located), located.points)
                self.first.setdefault(name, self.estimates[name])
                self._let_go.discard(name)
                updated.append(name)
        self.looked_at, self.looks = step, self.looks + 1
        missing = [n for n in self.names if n not in seen]
        self._report(views[0].geometry, updated, missing)
        return missing

    def _report(self, geometry: CameraGeometry, updated: list[str], missing: list[str]) -> None:
        """A `localized` trace event: each estimate this look updated (box, and its middle's
        pixel in the first camera's frame), the objects not seen, and the camera's geometry,
        for the viewer's overlay."""
        def r(v: np.ndarray) -> list[float]:
            return [round(float(x), 4) for x in v]

        objects = {}
        for name in updated:
            e = self.estimates[name]
            objects[name] = {"pos": r(e.position), "lower": r(e.lower), "upper": r(e.upper),
                             "px": r(geometry.project(e.position[None])[0][0]),
                             "cameras": list(e.cameras)}
        trace_events.emit("localized", "camera world", objects=objects, missing=missing,
                          camera={"name": geometry.camera, "size": list(geometry.size),
                                  "focal": geometry.focal, "position": r(geometry.position),
                                  "rotation": [r(row) for row in geometry.rotation]})

    def _believed(self, name: str, located: Located) -> bool:
        """Whether a sighting replaces the last estimate: any first one, and the first since the
        hand let the object go (it may have dropped or tipped); later, one with at least
        `CONFIDENT` of the first sighting's points, or `SURE` of them if it moves the object
        more than `JUMP` (a resting object seen whole where it was not is believed moved; a
        fragment of something else, half hidden by the arm, is not)."""
        first, last = self.first.get(name), self.estimates.get(name)
        if first is None or last is None or name in self._let_go:
            return True
        share = located.points / max(first.points, 1)
        jump = float(np.linalg.norm(located.position - last.position))
        return share >= (SURE if jump > JUMP else CONFIDENT)

    def _segment(self, views: list) -> list[dict[str, np.ndarray]]:
        """The scene's category masks of every view's frame (look-alikes merged:
        `scene_masks`), in one batch on one CPU thread (the tick's thread: more threads only wait
        on each other on a shared machine)."""
        import torch

        from tether.models.perception.category_segmenter import scene_masks

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:  # the robot's own body is never an object
            masks = self.segmenter.category_masks_batch(np.stack([v.rgb for v in views]),
                                                        ignore=np.stack([v.own for v in views]))
            return [scene_masks(m, self.categories) for m in masks]
        finally:
            torch.set_num_threads(threads)

    def _assign(self, labels: list[str], found: list[Located]) -> dict[str, Located]:
        """Which instance is which label: nearest to each label's last estimate, else to where
        the task file starts it (`_anchor`), by an optimal assignment. Among copies, an instance
        farther than `GATE` from a label's last estimate is not that object (a piece of another
        copy, while it is hidden): the label keeps its estimate. A single object may go far
        between looks (a pushed plate, hidden by the hand)."""
        from scipy.optimize import linear_sum_assignment

        if not found:
            return {}
        if len(labels) == 1 and labels[0] not in self.estimates:
            return {labels[0]: found[0]}  # most points first
        anchors = np.array([self._anchor(n) for n in labels])
        cost = np.linalg.norm(anchors[:, None, :2] - np.array(
            [f.position[:2] for f in found])[None, :, :], axis=2)
        gated = (cost > GATE) & np.array([n in self.estimates and len(labels) > 1
                                           for n in labels])[:, None]
        rows, cols = linear_sum_assignment(np.where(gated, 2 * GATE + cost.max(), cost))
        return {labels[r]: found[c] for r, c in zip(rows, cols, strict=True) if not gated[r, c]}

    def _anchor(self, name: str, chain: tuple[str, ...] = ()) -> np.ndarray:
        """Where `name` is believed to be: its estimate, else its start support's place: an
        object's the same way (`the bowl on the ramekin`), a region's or fixture's from the
        task file (`identity`)."""
        if name in self.estimates:
            return self.estimates[name].position
        support = self.scene.start_support(name)
        if support is None or support in chain:
            return np.zeros(3)
        if support in self.names:
            return self._anchor(support, (*chain, name))
        with self.scene.isolation.allowed("identity"):
            return self.scene.pose_of(support).pos

    def after_step(self) -> None:
        """Follow the grasp by proprioception after every control step: the object nearest the
        fingertips when they stop closing short of shut is held, until they open; it moves
        and turns with the hand meanwhile (`Estimate.carried`)."""
        scene = self.scene
        width, last = scene.gripper_width(), self._width
        self._width = width
        if scene.gripper_command != CLOSE or width <= EMPTY_WIDTH:
            if self.held is not None and self._grip is not None:  # it stays where it went
                self.estimates[self.held] = self.estimates[self.held].carried(
                    self._grip, scene.eef_pose())
                self._let_go.add(self.held)
            self.held = None
            # a hold begins as the fingers close from open; shut fingers that a push parts
            # a little hold nothing
            self._closing = scene.gripper_command != CLOSE
            return
        if self.held is None and self._closing and abs(width - last) < SETTLED:
            hand = scene.eef_pose().pos
            near = [(box_distance(hand, e.lower, e.upper), n) for n, e in self.estimates.items()]
            near = [x for x in near if x[0] <= HOLD_REACH]
            if near:
                self.held, self._grip = min(near)[1], scene.eef_pose()

    # --- answering ---------------------------------------------------------------------------
    def current(self) -> None:
        """Look again when the last look is `period` steps old (or none was made)."""
        if self.looked_at is None or self.scene.steps - self.looked_at >= self.config.period:
            self.look()

    def estimate(self, name: str) -> Estimate:
        """The current estimate of object `name`; `ObjectNotFound` when never seen."""
        if name != self.held:
            self.current()
        if name not in self.estimates:
            raise ObjectNotFound(name, f"'{name}' is not seen by "
                                       f"{' or '.join(self.config.cameras)}")
        e = self.estimates[name]
        if name == self.held and self._grip is not None:
            return e.carried(self._grip, self.scene.eef_pose())
        return e

    def close(self) -> None:
        self.observer.close()


def _near_held(found: Located, hand: np.ndarray, held: Estimate) -> bool:
    """Whether a sighting may be the held object itself or hold its pixels: a box within
    `HOLD_REACH` of the hand, or one the held object's box reaches into (a plate the held mug
    is being set down on)."""
    return box_distance(hand, found.lower, found.upper) <= HOLD_REACH or bool(
        np.all(found.lower <= held.upper) and np.all(held.lower <= found.upper))


def _principal_yaw(located: Located) -> float:
    """The yaw (rad) of the box's longer horizontal side (0 when square)."""
    span = located.upper[:2] - located.lower[:2]
    return 0.0 if span[0] >= span[1] else float(np.pi / 2)


class Perceived(Robot):
    """The robot leaves get under camera perception: the scene's body, the cameras' world.

    Acting, proprioception, rendering, the task's names and goal come from `scene`; the pose,
    box, start pose and grasp of a movable object come from `world`; fixtures, regions,
    articulation and collision geometry from the scene under a named exception (see the
    module docstring)."""

    def __init__(self, scene: Robot, world: CameraWorld) -> None:
        super().__init__()
        self.scene, self.world = scene, world
        self.control_dt, self.gains = scene.control_dt, scene.gains
        self.steps = scene.steps

    def _layout(self, reason: str):
        return self.scene.isolation.allowed(reason)

    # --- proprioception and the task ---------------------------------------------------------
    @property
    def task(self):
        """The scene's task (its file, names and aliases), or None: what a planner reads of
        which entities are fixtures."""
        return getattr(self.scene, "task", None)

    def eef_pose(self) -> Pose:
        return self.scene.eef_pose()

    def gripper_width(self) -> float:
        return self.scene.gripper_width()

    def reach(self, pos: np.ndarray) -> float:
        return self.scene.reach(pos)

    def entities(self) -> list[str]:
        return self.scene.entities()

    def objects(self) -> list[str]:
        return self.scene.objects()

    def resolve(self, name: str) -> str:
        return self.scene.resolve(name)

    def goal(self) -> list[tuple[str, ...]]:
        return self.scene.goal()

    def start_support(self, name: str) -> str | None:
        return self.scene.start_support(name)

    # --- objects from the cameras ------------------------------------------------------------
    def _movable(self, name: str) -> str | None:
        name = self.resolve(name)
        return name if name in self.world.names else None

    def pose_of(self, name: str) -> Pose:
        movable = self._movable(name)
        if movable is None:
            with self._layout("static layout"):
                return self.scene.pose_of(name)
        e = self.world.estimate(movable)
        return Pose(e.position, Rotation.from_euler("z", e.yaw).as_quat())

    def extent_of(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        movable = self._movable(name)
        if movable is None:
            with self._layout("static layout"):
                return self.scene.extent_of(name)
        e = self.world.estimate(movable)
        return e.lower, e.upper

    def start_pose_of(self, name: str) -> Pose:
        movable = self._movable(name)
        if movable is None:
            with self._layout("static layout"):
                return self.scene.start_pose_of(name)
        self.world.current()
        if movable not in self.world.first:
            self.world.estimate(movable)  # raises ObjectNotFound
        e = self.world.first[movable]
        return Pose(e.position, Rotation.from_euler("z", e.yaw).as_quat())

    def is_grasped(self, name: str) -> bool:
        movable = self._movable(name)
        self.world.current()
        return movable is not None and self.world.held == movable

    def goal_predicate(self, name: str, args: list[str]) -> bool:
        """`on` and `in` from the boxes the cameras saw (an object at rest on or inside its
        target); the articulated states (`open`, `turn_on`, ...) from the joints."""
        if name in ("on", "in"):
            thing = self.resolve(args[0])
            if self.is_grasped(thing):
                return False
            low, high = self.extent_of(thing)
            t_low, t_high = self.extent_of(args[1])
            centre = (low + high) / 2
            inside = bool(np.all(centre[:2] >= t_low[:2] - 0.01)
                          and np.all(centre[:2] <= t_high[:2] + 0.01))
            return inside and t_low[2] - ON_BELOW <= low[2] <= t_high[2] + ON_ABOVE
        with self._layout("articulation"):
            return self.scene.goal_predicate(name, args)

    # --- the scene's geometry, under declared exceptions -------------------------------------
    def clear_from_above(self, points: list[np.ndarray], *, ignore: str) -> bool:
        """Room around the points wherever within `MARGIN` the cameras' box may have put them:
        the points are also tried shifted that much each way horizontally."""
        with self._layout("collision geometry"):
            return all(self.scene.clear_from_above([p + shift for p in points], ignore=ignore)
                       for shift in SHIFTS)

    def carry_way(self, carried: str | None, start: np.ndarray, goal: np.ndarray, *,
                  past: str | None) -> list[np.ndarray]:
        with self._layout("collision geometry"):
            return self.scene.carry_way(carried, start, goal, past=past)

    def headroom(self, name: str) -> float:
        with self._layout("collision geometry"):
            return self.scene.headroom(name)

    def surface(self, name: str) -> float:
        if self._movable(name) is not None:
            return super().surface(name)  # the top of the box the cameras saw
        with self._layout("collision geometry"):
            return self.scene.surface(name)

    def motion_space(self, allow: Sequence[str], carrying: str | None = None
                     ) -> ConfigurationSpace:
        with self._layout("collision geometry"):
            return self.scene.motion_space(allow, carrying)

    def handle_of(self, name: str):
        with self._layout("collision geometry"):
            return self.scene.handle_of(name)

    def is_hollow(self, name: str) -> bool:
        with self._layout("collision geometry"):
            return self.scene.is_hollow(name)

    def thin_top(self, name: str) -> float:
        with self._layout("collision geometry"):
            return self.scene.thin_top(name)

    def set_down(self, target: str, carried: str, near: np.ndarray) -> tuple[np.ndarray, bool]:
        with self._layout("collision geometry"):
            return self.scene.set_down(target, carried, near)

    def spot_with_room(self, carried: str, near: np.ndarray, room: np.ndarray,
                       keep_out: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        with self._layout("collision geometry"):
            return self.scene.spot_with_room(carried, near, room, keep_out)

    def hinge_of(self, name: str) -> Hinge:
        with self._layout("articulation"):
            return self.scene.hinge_of(name)

    def joint_of(self, name: str):
        with self._layout("articulation"):
            return self.scene.joint_of(name)

    def swept(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        with self._layout("articulation"):
            return self.scene.swept(name)

    # --- cameras and acting ------------------------------------------------------------------
    def look(self) -> list[str]:
        return self.world.look()

    def render(self, camera: str, size: tuple[int, int],
               draft: bool = False) -> np.ndarray | None:
        return self.scene.render(camera, size, draft)

    def capture(self, camera: str, size: tuple[int, int], draft: bool = False):
        return self.scene.capture(camera, size, draft)

    def observe(self) -> dict:
        return self.scene.observe()

    def steer(self, pos: np.ndarray | None, quat: np.ndarray | None = None) -> None:
        with self._layout("collision geometry"):  # the arm's kinematics, checked on fixtures
            self.scene.steer(pos, quat)

    def _apply(self, action: np.ndarray) -> None:
        with self._layout("simulation"):
            self.scene.step(action)
        self.world.after_step()

    def close(self) -> None:
        """Release the cameras' renderers (the scene belongs to whoever opened it)."""
        self.world.close()


PERCEPTION: Registry[Any] = Registry("perception mode")
PERCEPTION.register("privileged", lambda scene, config: scene)
PERCEPTION.register("camera", lambda scene, config: Perceived(scene, CameraWorld(scene, config)))


def perceive(scene: Robot, mode: str, config: CameraConfig | None = None) -> Robot:
    """The robot leaves get under perception `mode` (`privileged`: the scene itself)."""
    return PERCEPTION.get(mode, where="--perception: ")(scene, config)
