"""Perturbations of the layout: swapped positions, added objects, the robot's start pose.

- `position_swap` (reset): two objects trade places; the instruction is unchanged (LIBERO-PRO
  "swap", Harness VLA's layout shift).
- `distractors` (scene): extra objects from a grocery pool at free spots (LIBERO-SOMA clutter).
- `identical_copies` (scene): copies of the main object's own asset near it, so the instruction
  no longer tells which one (LIBERO-SOMA visual focus).
- `occlusion` (scene): a tall object between the agent-view camera and the main object.
- `robot_init_pose` (reset): the arm starts from perturbed joint angles.
- `pose_shift` (reset): an object starts shifted to a clear spot and turned (LIBERO-PRO
  initial_pose_position_angle).
- `occluder` (reset, run): an object of the task stands, scaled, in front of another, held
  there every step (LIBERO-PRO view_occlusion, whose files add the book).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tether.errors import TetherError
from tether.scenes.bddl import Problem
from tether.scenes.perturbations.appearance import _object_geoms, scale_object
from tether.scenes.perturbations.base import RESET, SCENE, Perturbation, numbers, register
from tether.scenes.perturbations.edits import (
    add_object,
    free_spot,
    initial_spot,
    main_object,
    taken_spots,
)

if TYPE_CHECKING:
    from tether.scenes.perturbations.scene import PerturbedScene

DISTRACTOR_POOL = ("cream_cheese", "butter", "alphabet_soup", "tomato_sauce", "ketchup",
                   "chocolate_pudding", "cookies", "milk", "orange_juice", "bbq_sauce",
                   "macaroni_and_cheese", "salad_dressing", "popcorn")


@dataclass(frozen=True)
class SwapConfig:
    a: str = ""  # default: the task's main object
    b: str = ""  # default: the movable object nearest to `a`


@register
class PositionSwap(Perturbation):
    name, stage, Config = "position_swap", RESET, SwapConfig
    summary = "two objects trade places (default: the main object and its nearest neighbour)"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        a = scene.resolve(self.config.a) if self.config.a else main_object(scene.problem)
        pa = scene.true_pose_of(a).pos
        others = [o for o in scene.movable_objects() if o != a]
        if self.config.b:
            b = scene.resolve(self.config.b)
        elif others:
            b = min(others, key=lambda o: np.linalg.norm(scene.true_pose_of(o).pos[:2] - pa[:2]))
        else:
            raise TetherError("position_swap needs a second movable object")
        pb = scene.true_pose_of(b).pos
        scene.set_object_position(a, np.array([pb[0], pb[1], pa[2] + 0.005]))
        scene.set_object_position(b, np.array([pa[0], pa[1], pb[2] + 0.005]))


@dataclass(frozen=True)
class DistractorsConfig:
    n: int = 4
    categories: str = ""  # '+'-separated; default: a seeded draw from the grocery pool
    clearance: float = 0.12  # metres from every other object's start

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("n must be at least 1")


@register
class Distractors(Perturbation):
    name, stage, Config = "distractors", SCENE, DistractorsConfig
    summary = "adds n grocery objects at free spots on the table (clutter)"

    def pool(self) -> tuple[str, ...]:
        """The categories drawn from: the configured ones, else `DISTRACTOR_POOL`."""
        return tuple(filter(None, self.config.categories.split("+"))) or DISTRACTOR_POOL

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        pool = self.pool()
        problem = problem.copy()
        for _ in range(self.config.n):
            category = pool[int(rng.integers(len(pool)))]
            add_object(problem, category, free_spot(problem, rng, self.config.clearance))
        return problem

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        stand_clear(scene, set(self.pool()))


@dataclass(frozen=True)
class CopiesConfig:
    n: int = 2
    object: str = ""  # default: the task's main object
    within: float = 0.3  # metres from the object's start

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("n must be at least 1")


@register
class IdenticalCopies(Perturbation):
    name, stage, Config = "identical_copies", SCENE, CopiesConfig
    summary = "adds n copies of the main object's own asset near it (look-alike targets)"

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        problem = problem.copy()
        target = main_object(problem, self.config.object)
        category = problem.category_of(target)
        near = initial_spot(problem, target)
        for _ in range(self.config.n):
            add_object(problem, category, free_spot(problem, rng, 0.11, near=near,
                                                    within=self.config.within))
        return problem

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        stand_clear(scene, {scene.problem.category_of(main_object(scene.problem,
                                                                   self.config.object))})


@dataclass(frozen=True)
class OcclusionConfig:
    category: str = "milk"  # a tall object
    object: str = ""  # what to hide; default: the task's main object
    offset: float = 0.13  # metres toward the agent-view camera (+x), or more to find room


@register
class Occlusion(Perturbation):
    name, stage, Config = "occlusion", SCENE, OcclusionConfig
    summary = "stands a tall object between the agent-view camera and the main object"

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        problem = problem.copy()
        target = main_object(problem, self.config.object)
        spot = initial_spot(problem, target)
        if spot is None:
            raise TetherError(f"occlusion: '{target}' does not start in a table region")
        taken = [s for s in taken_spots(problem) if np.linalg.norm(s - spot) > 1e-6]
        for dx in np.arange(self.config.offset, 0.3, 0.02):
            for dy in (0.0, 0.03, -0.03, 0.06, -0.06):
                xy = spot + np.array([dx, dy])
                if all(np.linalg.norm(xy - s) >= 0.1 for s in taken):
                    add_object(problem, self.config.category, np.round(xy, 3))
                    return problem
        raise TetherError(f"occlusion: no free spot between the camera and '{target}'")

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        stand_clear(scene, {self.config.category})


@dataclass(frozen=True)
class RobotPoseConfig:
    scale: float = 0.15  # radians: each arm joint moves by a uniform draw in [-scale, scale]


@register
class RobotInitPose(Perturbation):
    name, stage, Config = "robot_init_pose", RESET, RobotPoseConfig
    summary = "the arm starts from randomly offset joint angles"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        robot = scene._robot
        qpos = list(robot._ref_joint_pos_indexes)
        scene.data.qpos[qpos] += rng.uniform(-self.config.scale, self.config.scale, len(qpos))
        scene.data.qvel[list(robot._ref_joint_vel_indexes)] = 0.0


SAFE_XY = 0.6  # metres from the world origin a moved object may stand (LIBERO-PRO's bound)
GAP = 0.01  # metres kept between footprints
DEFAULT_RADIUS = 0.04  # metres, for an object that declares no horizontal radius
LEVEL = 0.04  # metres: bodies closer than this in height stand on one level


def _footprint(scene: PerturbedScene, name: str) -> tuple[np.ndarray, float, float]:
    """Where `name` stands as LIBERO-PRO measures it: its body's position (x y), the horizontal
    radius its LIBERO object declares (`DEFAULT_RADIUS` for none) and its body's height."""
    pos = scene.true_pose_of(name).pos
    obj = scene._env.env.objects_dict.get(scene._canonical(name))
    radius = float(np.asarray(getattr(obj, "horizontal_radius", 0.0)).reshape(-1)[0])
    return pos[:2], radius if radius > 0 else DEFAULT_RADIUS, float(pos[2])


def _clear_test(scene: PerturbedScene, name: str) -> Callable[[np.ndarray], bool]:
    """Whether `name` may stand at a point (x y of its body): inside the table bounds and its
    radius `GAP` clear of every other movable object on its level (bodies within `LEVEL` in
    height), LIBERO-PRO's test."""
    _, radius, z = _footprint(scene, name)
    others = [_footprint(scene, o) for o in scene.movable_objects() if o != name]

    def clear(xy: np.ndarray) -> bool:
        return not np.any(np.abs(xy) > SAFE_XY) and all(
            np.linalg.norm(xy - c) >= radius + r + GAP or abs(z - oz) > LEVEL
            for c, r, oz in others) and not _penetrates(scene, name, xy)
    return clear


def _penetrates(scene: PerturbedScene, name: str, xy: np.ndarray) -> bool:
    """Whether `name` moved to `xy` would sink more than 1 mm into anything but the table or
    floor (LIBERO-PRO's contact test); the scene is left as it was."""
    import mujoco

    model, data = scene.model, scene.data
    qpos = data.qpos.copy()
    body_pos = model.body_pos.copy()
    here = scene.true_pose_of(name).pos
    scene.set_object_position(name, np.array([xy[0], xy[1], here[2]]))
    mujoco.mj_forward(model, data)
    own = set(_object_geoms(scene, name))
    try:
        for contact in data.contact[:data.ncon]:
            pair = {int(contact.geom1), int(contact.geom2)}
            if contact.dist >= -1e-3 or not pair & own:
                continue
            names = " ".join(model.geom(g).name for g in pair).lower()
            if "table" not in names and "floor" not in names:
                return True
        return False
    finally:
        data.qpos[:] = qpos
        model.body_pos[:] = body_pos
        mujoco.mj_forward(model, data)


def stand_clear(scene: PerturbedScene, categories: set[str]) -> None:
    """Set each object the perturbations added of `categories` down on the table (its bottom at
    the top of the thin region box it was added in) where it stands clear (`_box_clear_test`):
    where it is, else at the nearest such spot on rings 1 cm apart. An object added at a free
    spot of the task file is dropped from above, and may land on a fixture or on a neighbour its
    region's sampler put off-centre, tilted or thrown off the table."""
    import mujoco

    regions = {lit[1]: lit[2] for lit in scene.problem.init if lit[0] == "on"}
    for name in [n for n in scene.added_objects() if scene.problem.category_of(n) in categories]:
        mujoco.mj_forward(scene.model, scene.data)
        pos = scene.true_pose_of(name).pos
        pos[2] -= scene.extent_of(name)[0][2] - scene.extent_of(regions[name])[1][2]
        scene.set_object_position(name, pos)
        mujoco.mj_forward(scene.model, scene.data)
        clear = _box_clear_test(scene, name)
        rings = ((r, a) for r in np.arange(0.0, 0.31, 0.01) for a in np.arange(16) * np.pi / 8)
        spot = next((xy for r, a in rings
                     if clear(xy := pos[:2] + r * np.array([np.cos(a), np.sin(a)]))), None)
        if spot is None:
            raise TetherError(f"no clear spot within 30 cm of where '{name}' was added")
        scene.set_object_position(name, np.array([*spot, pos[2]]))


def _box_clear_test(scene: PerturbedScene, name: str) -> Callable[[np.ndarray], bool]:
    """Whether `name` may stand at a point (x y of its body): inside `SAFE_XY`, its box `GAP`
    clear of every other movable object's box at any height, and cutting into no fixture."""
    low, high = scene.extent_of(name)
    half, offset = (high[:2] - low[:2]) / 2, (high[:2] + low[:2]) / 2 - _footprint(scene, name)[0]
    others = [scene.extent_of(o) for o in scene.movable_objects() if o != name]

    def clear(xy: np.ndarray) -> bool:
        middle = xy + offset
        return not np.any(np.abs(xy) > SAFE_XY) and all(
            np.any(np.abs(middle - (lo[:2] + hi[:2]) / 2) >= half + (hi[:2] - lo[:2]) / 2 + GAP)
            for lo, hi in others) and not _penetrates(scene, name, xy)
    return clear


def clear_shift(scene: PerturbedScene, name: str, delta: np.ndarray,
                min_norm: float) -> np.ndarray:
    """The horizontal shift of `name` closest to `delta` (length at least `min_norm`) that
    leaves its footprint clear (`_clear_test`): the requested one, else the same length turned
    by 90, 180, 45 and 135 degrees, else 0.9, 1.1 and 1.25 times as long (LIBERO-PRO's order)."""
    norm = max(float(np.linalg.norm(delta)), min_norm)
    base = float(np.arctan2(delta[1], delta[0])) if np.linalg.norm(delta) > 1e-9 else 0.0
    centre, clear = _footprint(scene, name)[0], _clear_test(scene, name)  # body x y
    for length in (norm, max(0.9 * norm, min_norm), 1.1 * norm, 1.25 * norm):
        for turn in (0, 0.5, -0.5, 1, 0.25, -0.25, 0.75, -0.75):
            angle = base + turn * np.pi
            shift = length * np.array([np.cos(angle), np.sin(angle)])
            if clear(centre + shift):
                return shift
    raise TetherError(f"no clear spot {norm:.2f} m from '{name}' on the table")


def front_offsets(requested: np.ndarray, front: np.ndarray) -> list[np.ndarray]:
    """Offsets from a reference to try, in LIBERO-PRO's order, for an object meant to stand
    `requested` from it toward `front`: the requested one, then arcs of 0.12-0.20 m around the
    front direction (within 0.48 rad), then a grid ahead of the reference (32 at most)."""
    unit = front / np.linalg.norm(front)
    front_angle = float(np.arctan2(unit[1], unit[0]))
    norm = float(np.linalg.norm(requested))
    if norm < 0.06:
        norm, base = 0.10, front_angle
    else:
        base = float(np.arctan2(requested[1], requested[0]))
        off = np.arctan2(np.sin(base - front_angle), np.cos(base - front_angle))
        base = front_angle if abs(off) > 1.2 else base
    out = [np.asarray(requested, dtype=float)]
    for radius in (max(norm, 0.12), max(norm + 0.04, 0.16), max(norm + 0.08, 0.20)):
        for turn in (0.0, -0.16, 0.16, -0.32, 0.32, -0.48, 0.48):
            out.append(radius * np.array([np.cos(base + turn), np.sin(base + turn)]))
    side = np.array([-unit[1], unit[0]])
    out += [unit * ahead + side * lateral for ahead in (0.075, 0.095, 0.12, 0.16, 0.20, 0.24)
            for lateral in (0.0, -0.065, 0.065, -0.10, 0.10)]
    unique: list[np.ndarray] = []
    for o in out:
        if not any(np.allclose(o, u, atol=5e-5) for u in unique):
            unique.append(o)
    return unique[:32]


@dataclass(frozen=True)
class PoseShiftConfig:
    object: str = ""  # default: the task's main object
    delta: str = "0.17 -0.06"  # 'dx dy' metres, the requested shift (world frame)
    min_distance: float = 0.18  # metres the object moves at least
    yaw: str = "0.7853981633974483"  # radians about the vertical, absolute; '' keeps it

    def __post_init__(self) -> None:
        numbers("delta", self.delta, 2)
        if self.yaw:
            numbers("yaw", self.yaw, 1)
        if self.min_distance < 0:
            raise ValueError("min_distance must be >= 0")


@register
class PoseShift(Perturbation):
    name, stage, Config = "pose_shift", RESET, PoseShiftConfig
    summary = "an object starts shifted (to a clear spot) and turned (LIBERO-PRO initial_pose)"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        target = scene.resolve(self.config.object) if self.config.object else \
            main_object(scene.problem)
        here = scene.true_pose_of(target).pos
        shift = clear_shift(scene, target, numbers("delta", self.config.delta, 2),
                            self.config.min_distance)
        scene.set_object_position(target, np.array([*(here[:2] + shift), here[2]]),
                                  yaw=float(self.config.yaw) if self.config.yaw else None)


@dataclass(frozen=True)
class OccluderConfig:
    object: str = ""  # the occluder, an object of the task (LIBERO-PRO's files add a book)
    reference: str = ""  # what it hides; default: the task's main object
    offset: str = "0.08 0.0"  # 'dx dy' metres from the reference, tried first
    front: str = "1.0 0.0"  # 'dx dy': toward the agent-view camera; other spots are tried there
    yaw: float = 0.0  # radians about the vertical, absolute
    scale: float = 1.6  # factor on the occluder's size
    pin: bool = True  # put it back there after every control step
    min_distance: float = 0.02  # metres from the reference's centre at least
    avoid: str = ""  # '+'-separated objects to keep away from (e.g. the goal's destination)
    avoid_gap: float = 0.08  # metres between the occluder's and their footprints
    between: str = ""  # an object moved aside first when within between_distance of the reference
    between_distance: float = 0.0
    between_shift: str = "0.14 0.0"  # 'dx dy' requested for it (to a clear spot)

    def __post_init__(self) -> None:
        for key in ("offset", "front", "between_shift"):
            numbers(key, getattr(self, key), 2)
        if np.linalg.norm(numbers("front", self.front, 2)) < 1e-6:
            raise ValueError("front must not be zero")
        if not 0 < self.scale <= 10:
            raise ValueError("scale must be in (0, 10]")
        if min(self.min_distance, self.avoid_gap, self.between_distance) < 0:
            raise ValueError("distances must be >= 0")


@register
class Occluder(Perturbation):
    name, stage, Config = "occluder", RESET, OccluderConfig
    summary = "an object of the task stands, scaled, in front of another and is held there"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        c = self.config
        if not c.object:
            raise TetherError("occluder: name the occluding object (object=NAME)")
        book = scene.resolve(c.object)
        reference = scene.resolve(c.reference) if c.reference else main_object(scene.problem)
        scale_object(scene, book, c.scale)
        if c.between:
            self._move_aside(scene, scene.resolve(c.between), reference)
        ref = scene.true_pose_of(reference).pos[:2]
        clear, radius = _clear_test(scene, book), _footprint(scene, book)[1]
        avoid = [_footprint(scene, n) for n in filter(None, c.avoid.split("+"))
                 if n in scene.movable_objects()]  # regions and fixtures: nothing to avoid
        for offset in front_offsets(numbers("offset", c.offset, 2), numbers("front", c.front, 2)):
            xy = ref + offset
            if np.linalg.norm(offset) >= c.min_distance and clear(xy) and all(
                    np.linalg.norm(xy - a) >= radius + r + c.avoid_gap for a, r, _ in avoid):
                break
        else:
            raise TetherError(f"occluder: no clear spot for '{book}' in front of '{reference}'")
        spot = np.array([*xy, scene.true_pose_of(book).pos[2]])
        scene.set_object_position(book, spot, yaw=c.yaw)
        scene.perturbation_state[self.name] = {"object": book, "at": spot, "offset": offset}

    def _move_aside(self, scene: PerturbedScene, other: str, reference: str) -> None:
        here = scene.true_pose_of(other).pos
        gap = np.linalg.norm(here[:2] - scene.true_pose_of(reference).pos[:2])
        if gap < self.config.between_distance:
            shift = clear_shift(scene, other, numbers("between_shift", self.config.between_shift,
                                                      2), 0.0)
            scene.set_object_position(other, np.array([*(here[:2] + shift), here[2]]))

    def after_step(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        state = scene.perturbation_state[self.name]
        if self.config.pin:
            scene.set_object_position(state["object"], state["at"], yaw=self.config.yaw)
            scene._env.env.sim.forward()
