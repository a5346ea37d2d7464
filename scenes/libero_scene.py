"""`LiberoScene`: a LIBERO task on robosuite/MuJoCo, behind the `Robot` interface.

A scene is one catalogue task, one of its recorded initial states and a seed. It drives LIBERO's
own environment (`libero.libero.envs.env_wrapper.ControlEnv` on the task's BDDL file, the Panda with
robosuite's OSC_POSE controller at 20 Hz, exactly as LIBERO's evaluations do), so goals, predicates
and success are LIBERO's and results compare with published numbers.

    scene = LiberoScene("libero_goal/put_the_bowl_on_the_plate", init_state=0, seed=0)
    scene.pose_of(scene.resolve("black bowl")).pos        # privileged state
    scene.step(scene.servo(target_pos, target_quat, OPEN)) # one control period
    scene.success()                                        # LIBERO's own success test
    scene.close()

Lifecycle: construction creates the env and calls `reset()`. `reset` seeds numpy's global RNG
(LIBERO's `env.seed`; fixture placement during the reset draws from it), resets the env (a hard
reset: the model is rebuilt), loads the initial state, then settles the scene with
`settle_steps` no-op actions (gripper open): the recorded states hold objects a few cm above the
table and they drop in the first steps. Settling does not count in `steps`. After it, every
entity's pose is recorded for `start_pose_of`. The same task, initial state and seed give
bit-identical trajectories under the same actions.

Entities are LIBERO's movable objects, fixtures (cabinet, stove, ...) and regions (BDDL sites such
as `wooden_cabinet_1_top_region`). Bodies are posed by their root body and bounded by their exact
geometry (`tether.scenes.extents`), regions by their site's box. Any method taking an entity also
accepts an alias ("black bowl"). Goal literals use tether's predicate names (`turn_on`, where
LIBERO writes `turnon`).

Cameras are off by default (a step is 25 physics substeps, ~10-40 ms on 2 CPU cores); with
`cameras=("agentview", "robot0_eye_in_hand")` each step also renders them (~35-70 ms per camera
on llvmpipe) and `observe()` adds `images`, as robosuite renders them (OpenGL convention: upside
down; policy adapters flip them the way their training data was).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from tether.errors import TetherError, did_you_mean
from tether.scenes import quaternions
from tether.scenes.aliases import resolve as resolve_alias
from tether.scenes.arm_space import ArmSpace
from tether.scenes.cameras import Cameras, View
from tether.scenes.carry_way import carry_way
from tether.scenes.catalogue import Task, get_task
from tether.scenes.extents import DIGITS, BodyExtents
from tether.scenes.grasps import THIN_PART, axis_of, open_hand_box
from tether.scenes.handles import Handle, find_handle
from tether.scenes.hollows import HOLLOW_RATIO, depth_ratio
from tether.scenes.isolation import privileged
from tether.scenes.joints import HINGE, SLIDE, Joint, arm_of, from_model
from tether.scenes.placing import set_down, spot_with_room, top_of
from tether.scenes.robot import OPEN, Hinge, Pose, Robot

NOOP = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])
JOINTS = "robot0_joint_pos"  # the one robosuite observable read besides camera images
SURFACE_REACH = 0.05  # m above a region's box where the ray finding what bears it starts
CEILING = 2.0  # world z (m) above every scene's geometry, where rays looking down start
UNSEEN_GROUP = 5  # geom group rays do not see (they look at group 0, collision geometry)
# LIBERO spells these without the underscore; tether's predicate registry with it.
_LIBERO_PREDICATE = {"turn_on": "turnon", "turn_off": "turnoff"}
_TETHER_PREDICATE = {v: k for k, v in _LIBERO_PREDICATE.items()}
JOINT_KINDS = {mujoco.mjtJoint.mjJNT_SLIDE: SLIDE, mujoco.mjtJoint.mjJNT_HINGE: HINGE}
QPOS_SIZE = {int(mujoco.mjtJoint.mjJNT_FREE): 7, int(mujoco.mjtJoint.mjJNT_BALL): 4,
             int(mujoco.mjtJoint.mjJNT_SLIDE): 1, int(mujoco.mjtJoint.mjJNT_HINGE): 1}


def _xyzw(wxyz: np.ndarray) -> np.ndarray:
    w, x, y, z = wxyz
    return np.array((x, y, z, w), dtype=float)


def _mat_to_xyzw(mat: np.ndarray) -> np.ndarray:
    wxyz = np.empty(4)
    mujoco.mju_mat2Quat(wxyz, np.asarray(mat, dtype=float).reshape(9))
    return _xyzw(wxyz)


def _off_square(quat: np.ndarray | None) -> float:
    """How far (rad) a hand at `quat` points from straight down or from level, the nearer
    (None: not at all)."""
    if quat is None:
        return 0.0
    tilt = quaternions.tilt(quat)
    return min(tilt, abs(tilt - np.pi / 2))


class LiberoScene(Robot):
    """One LIBERO task instance (task, initial state, seed) driven through the `Robot` interface.
    Built with `cameras`, robosuite renders them at every step; without `textures` (and without
    cameras) the model's image textures are compiled at its first render, not before
    (`tether.scenes.fast_physics.textures_later`)."""

    def __init__(
        self,
        task: Task | str,
        init_state: int = 0,
        seed: int = 0,
        *,
        cameras: Sequence[str] = (),
        textures: bool = True,
        image_size: tuple[int, int] = (128, 128),
        settle_steps: int = 15,
        control_freq: int = 20,
    ) -> None:
        super().__init__()
        from tether.scenes.fast_physics import (
            cache_compiled_models,
            contacts_by_id,
            keep_compiled_model,
            observe_only,
            skip_repeated_forward,
            streamline_control,
            textures_later,
        )
        from tether.scenes.libero_setup import import_libero

        import_libero()
        cache_compiled_models()
        from libero.libero.envs.env_wrapper import ControlEnv

        self.task = get_task(task) if isinstance(task, str) else task
        self.cameras = tuple(cameras)
        self.settle_steps = settle_steps
        self.control_dt = 1.0 / control_freq
        self._init_states = None if self.task.sampled else self.task.init_states()
        self._aliases = {a.lower(): c for a, c in self.task.aliases}
        self.init_state, self.seed = init_state, seed
        self._check_init_state(init_state)
        try:
            with nullcontext() if textures or self.cameras else textures_later():
                self._env = ControlEnv(
                    bddl_file_name=str(self.task.bddl_file),
                    controller="OSC_POSE",
                    control_freq=control_freq,
                    ignore_done=True,  # tether budgets steps itself; robosuite's would stop it
                    use_camera_obs=bool(self.cameras),
                    has_offscreen_renderer=bool(self.cameras),
                    camera_names=list(self.cameras) or ["agentview"],
                    camera_heights=image_size[0],
                    camera_widths=image_size[1],
                )
        except ValueError as e:
            if "observable" not in str(e):
                raise
            raise TetherError(
                f"unknown camera in {list(self.cameras)} ({e}); LIBERO's are 'agentview' and "
                "'robot0_eye_in_hand'"
            ) from None
        streamline_control(self._env.env)
        skip_repeated_forward(self._env.env)
        observe_only(self._env.env, {JOINTS, *(f"{c}_image" for c in self.cameras)})
        contacts_by_id(self._env.env)
        self._compiled = keep_compiled_model(self._env.env)
        self._obs: dict[str, Any] = {}
        self._frames = Cameras()
        try:
            self.reset()
        except BaseException:
            self.close()
            raise

    # --- episode ---------------------------------------------------------------------------
    @property
    def num_init_states(self) -> int:
        return self.task.num_init_states if self._init_states is None else len(self._init_states)

    def _check_init_state(self, index: int) -> None:
        if not 0 <= index < self.num_init_states:
            raise TetherError(
                f"{self.task.id} has initial states 0..{self.num_init_states - 1}, not {index}"
            )

    def reset(self, init_state: int | None = None, seed: int | None = None) -> None:
        """Start a new episode from initial state `init_state` (default: the current one).

        A sampled task's initial state k is LIBERO's placement at reset under seed k.
        """
        self._check_init_state(self.init_state if init_state is None else init_state)
        self.init_state = self.init_state if init_state is None else init_state
        self.seed = self.seed if seed is None else seed
        self._compiled.restore(self._env.env.sim.model._model)
        gripper = self._env.env.robots[0].gripper  # its command ramp (a hard reset rebuilt it)
        gripper.current_action = np.zeros(gripper.dof)
        self._env.seed(self.init_state if self._init_states is None else self.seed)
        self._env.reset()
        self._obs = self._start_state()
        for _ in range(self.settle_steps):
            self._obs = self._env.step(NOOP)[0]
        self.steps = 0
        self._hold = None
        self._gripper = OPEN
        self._index_model()
        self._start = {name: self.pose_of(name) for name in self._entities}

    def _start_state(self) -> dict[str, Any]:
        """Load the episode's initial state after the env's reset; returns the observation."""
        if self._init_states is None:
            return self._env.regenerate_obs_from_state(self._env.get_sim_state())
        return self._env.set_init_state(self._init_states[self.init_state])

    def _index_model(self) -> None:
        """Look up MuJoCo ids and extents for every entity."""
        e = self._env.env
        model = e.sim.model._model
        self._robot = e.robots[0]
        self._posture: tuple[Any, np.ndarray] | None = None  # (controller, its own posture)
        self._kinematics: ArmSpace | None = None  # `steer`'s, made at its first far goal
        self._eef_body = model.body(self._robot.robot_model.eef_name).id
        self._finger_qpos = list(self._robot._ref_gripper_joint_pos_indexes)
        self._bodies = {n: e.obj_body_id[n] for n in [*e.objects_dict, *e.fixtures_dict]}
        self._sites = {n: model.site(n).id for n in e.object_sites_dict}
        self._entities = [*self._bodies, *self._sites]
        self._extents = BodyExtents(model, self._bodies)
        self._depth_ratios: dict[str, float] = {}
        robot_bodies = [b for b in range(model.nbody)
                        if (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or "")
                        .startswith(("robot0_", "gripper0_", "mount0_"))]
        self._robot_geoms = set(np.flatnonzero(np.isin(model.geom_bodyid, robot_bodies)).tolist())
        self._world_bodies = np.setdiff1d(np.arange(1, model.nbody), robot_bodies)
        joints = np.flatnonzero(~np.isin(model.jnt_bodyid, robot_bodies))
        self._world_qpos = np.array([a + k for a, t in zip(model.jnt_qposadr[joints],
                                                           model.jnt_type[joints], strict=True)
                                     for k in range(QPOS_SIZE[int(t)])], dtype=int)

    # --- what the world looks like ---------------------------------------------------------
    @property
    def _data(self) -> mujoco.MjData:
        return self._env.env.sim.data._data

    def world_key(self) -> bytes:
        """The poses of every body but the robot's and the positions of their joints (what
        `pose_of`, `extent_of` and the geometric queries read), orientations and joint
        positions to `extents.DIGITS` decimals: a resting object's quaternion wanders in its
        last bits (~1e-16) every step while its position stays put."""
        d, bodies = self._data, self._world_bodies
        return d.xpos[bodies].tobytes() + np.round(d.xquat[bodies], DIGITS).tobytes() + \
            np.round(d.qpos[self._world_qpos], DIGITS).tobytes()

    def reach(self, pos: np.ndarray) -> float:
        return float(np.linalg.norm(np.subtract(pos[:2], self._robot.base_pos[:2])))

    def eef_pose(self) -> Pose:
        d = self._data
        return Pose(d.site_xpos[self._robot.eef_site_id].copy(), _xyzw(d.xquat[self._eef_body]))

    def gripper_width(self) -> float:
        q = self._data.qpos[self._finger_qpos]
        return float(q[0] - q[1])

    def entities(self) -> list[str]:
        return list(self._entities)

    def objects(self) -> list[str]:
        return list(self._env.env.objects_dict)

    def start_support(self, name: str) -> str | None:
        for literal in self._env.env.parsed_problem["initial_state"]:
            if len(literal) == 3 and literal[1] == name and (literal[2] in self._sites
                                                             or literal[2] in self._bodies):
                return literal[2]
        return None

    def resolve(self, name: str) -> str:
        alias = self._aliases.get(" ".join(name.lower().split()))
        return alias if alias is not None else resolve_alias(name, self._entities)

    def _canonical(self, name: str) -> str:
        return name if name in self._bodies or name in self._sites else self.resolve(name)

    @privileged
    def pose_of(self, name: str) -> Pose:
        name, d = self._canonical(name), self._data
        if name in self._bodies:
            b = self._bodies[name]
            return Pose(np.array(d.xpos[b]), _xyzw(d.xquat[b]))
        s = self._sites[name]
        return Pose(np.array(d.site_xpos[s]), _mat_to_xyzw(d.site_xmat[s]))

    @privileged
    def start_pose_of(self, name: str) -> Pose:
        return self._start[self._canonical(name)]

    @privileged
    def extent_of(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        name, d = self._canonical(name), self._data
        if name in self._bodies:
            if name not in self._extents:
                raise TetherError(f"'{name}' has no geometry to bound")
            return self._extents.of(name, d)
        s = self._sites[name]
        half = np.abs(d.site_xmat[s].reshape(3, 3)) @ self._env.env.sim.model._model.site_size[s]
        return d.site_xpos[s] - half, d.site_xpos[s] + half

    def goal(self) -> list[tuple[str, ...]]:
        return [
            (_TETHER_PREDICATE.get(lit[0], lit[0]), *lit[1:])
            for lit in self._env.env.parsed_problem["goal_state"]
        ]

    @privileged
    def goal_predicate(self, name: str, args: list[str]) -> bool:
        from libero.libero.envs.predicates import VALIDATE_PREDICATE_FN_DICT, eval_predicate_fn

        fn = _LIBERO_PREDICATE.get(name, name)
        if fn not in VALIDATE_PREDICATE_FN_DICT:
            known = [_TETHER_PREDICATE.get(k, k) for k in VALIDATE_PREDICATE_FN_DICT]
            raise TetherError(f"no goal predicate '{name}'{did_you_mean(name, known)}")
        states = self._env.env.object_states_dict
        return bool(eval_predicate_fn(fn, *[states[self._canonical(a)] for a in args]))

    @privileged
    def is_grasped(self, name: str) -> bool:
        name, e = self._canonical(name), self._env.env
        model = e.objects_dict.get(name, e.fixtures_dict.get(name))
        if model is None:
            raise TetherError(f"'{name}' is a region; only objects and fixtures can be grasped")
        return bool(e._check_grasp(gripper=self._robot.gripper, object_geoms=model))

    @privileged
    def clear_from_above(self, points: list[np.ndarray], *, ignore: str) -> bool:
        """Cast a ray down onto each point through collision geometry (geom group 0), skipping
        the robot's geoms and `ignore`'s; any other hit before the point means no room."""
        skip = set(self._extents.geoms.get(self._canonical(ignore), ())) | self._robot_geoms
        starts = np.asarray(points, dtype=float).reshape(-1, 3) + [0, 0, self.CLEARANCE]
        with self._opaque(), self._unseen(skip):
            return all(self._cast(start, -1.0, set()) > self.CLEARANCE for start in starts)

    @privileged
    def carry_way(self, carried: str | None, start: np.ndarray, goal: np.ndarray, *,
                  past: str | None) -> list[np.ndarray]:
        """`carry_way` over the collision geometry (geom group 0) of everything but the robot,
        `carried` and `past` (a region's: the body it belongs to), looked under by rays cast
        down from `CEILING` and over by rays cast up from the carried box's top (the carried
        object's, or with None the open fingertips' at `start`)."""
        carried = None if carried is None else self._canonical(carried)
        past = None if past is None else self._canonical(past)
        skip = self._robot_geoms | set(self._extents.geoms.get(carried, ()))
        for name, geoms in self._extents.geoms.items():
            if past is not None and (past == name or past.startswith(name + "_")):
                skip |= set(geoms)
        low, high = open_hand_box(start) if carried is None else self.extent_of(carried)

        def first(points: np.ndarray, z: float, way: float) -> list[float]:
            return [z + way * self._cast(np.array([x, y, z]), way, skip) for x, y in points]

        with self._opaque():
            return carry_way(start, goal, low, high,
                             lambda points: max(first(points, CEILING, -1.0)),
                             lambda points: min(first(points, float(high[2]), 1.0)),
                             base=self._robot.base_pos)

    @contextmanager
    def _opaque(self) -> Iterator[None]:
        """Fully transparent collision geoms (group 0) made opaque while `_cast`s run: `mj_ray`
        passes over them, and some objects collide only through one (a cream cheese's box)."""
        model = self._env.env.sim.model._model
        hidden = np.flatnonzero((model.geom_group == 0) & (model.geom_rgba[:, 3] == 0))
        model.geom_rgba[hidden, 3] = 1.0
        try:
            yield
        finally:
            model.geom_rgba[hidden, 3] = 0.0

    @contextmanager
    def _unseen(self, geoms: set[int]) -> Iterator[None]:
        """`geoms` moved out of geom group 0 while `_cast`s run, so that one ray passes them by
        where `_cast` would stop at each and cast again (the same hits; distances may differ in
        their last bits, so only for yes-or-no questions)."""
        model = self._env.env.sim.model._model
        index = np.fromiter(geoms, dtype=int, count=len(geoms))
        kept = model.geom_group[index].copy()
        model.geom_group[index] = UNSEEN_GROUP
        try:
            yield
        finally:
            model.geom_group[index] = kept

    def _cast(self, start: np.ndarray, way: float, skip: set[int]) -> float:
        """The distance from `start` straight up (`way` 1) or down (-1) to the first collision
        geom (group 0) not in `skip`; inf if none. Called inside `_opaque`."""
        model, hit = self._env.env.sim.model._model, np.zeros(1, dtype=np.int32)
        direction, groups = np.array([0.0, 0.0, way]), np.array([1, 0, 0, 0, 0, 0], np.uint8)
        gone = 0.0
        while (dist := mujoco.mj_ray(model, self._data, start, direction, groups, 1, -1,
                                     hit)) >= 0:
            gone += dist
            if int(hit[0]) not in skip:
                return gone
            start, gone = start + direction * (dist + 1e-4), gone + 1e-4
        return float("inf")

    @privileged
    def handle_of(self, name: str) -> Handle | None:
        """The handle among the boxes of body `name`'s collision geoms in its own frame
        (`find_handle`), turned into the world frame."""
        name = self._canonical(name)
        if name not in self._extents:
            return None
        pose = self.pose_of(name)
        axes = Rotation.from_quat(pose.quat).as_matrix()
        handle = find_handle(self._extents.parts(name, self._data, pose.pos, axes))
        if handle is None:
            return None
        corners = np.array([[x, y, z] for x in (handle.low[0], handle.high[0])
                            for y in (handle.low[1], handle.high[1])
                            for z in (handle.low[2], handle.high[2])]) @ axes.T + pose.pos
        outward = axes @ handle.outward
        outward[2] = 0.0
        return Handle(corners.min(axis=0), corners.max(axis=0), outward / np.linalg.norm(outward))

    @privileged
    def depth_ratio(self, name: str) -> float:
        """How deep straight down into body `name`'s footprint its own collision geometry
        begins, over its height (`tether.scenes.hollows.depth_ratio`); measured once per
        episode, when first asked. 0 for what has no geometry."""
        name = self._canonical(name)
        if name not in self._depth_ratios:
            geoms = self._extents.geoms.get(name, np.zeros(0, int))
            colliding = geoms[self._extents.colliding[name]] if name in self._extents else geoms
            self._depth_ratios[name] = 0.0 if len(colliding) == 0 else depth_ratio(
                self._env.env.sim.model._model, self._data, colliding, *self.extent_of(name))
        return self._depth_ratios[name]

    def is_hollow(self, name: str) -> bool:
        """`depth_ratio` at least `HOLLOW_RATIO` (`tether.scenes.hollows`)."""
        return self.depth_ratio(name) >= HOLLOW_RATIO

    @privileged
    def hinge_of(self, name: str) -> Hinge:
        """The first hinge joint among fixture `name`'s bodies. Its door is the body it turns
        (direction: from the hinge to that body's centre of mass); the door is shut at the
        joint's zero and opens toward the far end of its range (LIBERO's microwave: -2.09..0)."""
        name = self._canonical(name)
        model, data = self._env.env.sim.model._model, self._data
        for j in range(model.njnt):
            body = int(model.jnt_bodyid[j])
            if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE or not (
                    mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or ""
            ).startswith(name + "_"):
                continue
            anchor = data.xanchor[j].copy()
            middle = data.xipos[body] - anchor
            low, high = model.jnt_range[j]
            opens = -1 if abs(low) > abs(high) else 1
            closing = int(np.sign(data.xaxis[j][2])) * -opens
            return Hinge(anchor, float(np.arctan2(middle[1], middle[0])), closing)
        return super().hinge_of(name)

    @privileged
    def headroom(self, name: str) -> float:
        """A ray cast up from entity `name`'s middle through collision geometry (geom group 0),
        skipping the robot's geoms, every movable object's (one standing in a region is no roof
        over it: it can be taken out) and, for a body, its own: the distance to the first hit."""
        name = self._canonical(name)
        return self._ray(self.pose_of(name).pos, 1.0, set(self._extents.geoms.get(name, ())))

    @privileged
    def thin_top(self, name: str) -> float:
        """From the top of `name`'s box down to the top of its colliding geoms at least
        `THIN_PART` thick, when thinner ones rise more than `THIN_PART` above those (a roof of
        panels, not a can's rim); else 0."""
        name = self._canonical(name)
        if name not in self._extents:
            return 0.0
        thick, thin = self._extents.tops(name, self._data, THIN_PART)
        if not np.isfinite(thick) or thin - thick <= THIN_PART:
            return 0.0
        return float(self.extent_of(name)[1][2]) - thick

    @privileged
    def surface(self, name: str) -> float:
        """A movable object's top; for a region or fixture, where a ray cast down at its middle
        from `SURFACE_REACH` above its box meets collision geometry (skipping the robot and the
        movable objects, as `headroom` does): a stove's burner over its cook region's box."""
        name = self._canonical(name)
        if name in self.objects():
            return super().surface(name)
        low, high = self.extent_of(name)
        start = np.array([*(low[:2] + high[:2]) / 2, high[2] + SURFACE_REACH])
        return float(start[2] - self._ray(start, -1.0, set()))

    def _ray(self, start: np.ndarray, up: float, skip: set[int]) -> float:
        """The distance from `start` straight up (`up` 1) or down (-1) to the first collision
        geom (group 0) that is not in `skip`, the robot's or a movable object's; inf if none."""
        skip = skip | self._robot_geoms
        for movable in self.objects():
            skip.update(self._extents.geoms.get(movable, ()))
        with self._opaque():
            return self._cast(np.asarray(start, dtype=float), up, skip)

    @privileged
    def joint_of(self, name: str) -> Joint:
        """The slide or hinge joint that moves entity `name`: for a region, the nearest such joint
        up its site's body chain (a drawer's region moves with the drawer); for a fixture, the
        first among its bodies (a stove's knob). `TetherError` when nothing moves it."""
        found = self._joint(self._canonical(name))
        return super().joint_of(name) if found is None else found[1]

    def _joint(self, name: str) -> tuple[int, Joint] | None:
        """`joint_of`'s joint for a canonical name, with the index of the body it moves; None
        when nothing moves it."""
        j = self._joint_index(name)
        if j is None:
            return None
        model, data = self._env.env.sim.model._model, self._data
        body = int(model.jnt_bodyid[j])
        origin = self.pose_of(name).pos if name in self._sites else data.xpos[body]
        kind = JOINT_KINDS[model.jnt_type[j]]
        arm = None if kind == SLIDE else arm_of(self._corners(body), data.xanchor[j],
                                                self._robot.base_pos)
        return body, from_model(kind, data.xanchor[j], data.xaxis[j], *model.jnt_range[j],
                                float(data.qpos[model.jnt_qposadr[j]]), origin, arm)

    def _joint_index(self, name: str) -> int | None:
        """The index of `joint_of`'s joint in the model, or None."""
        model = self._env.env.sim.model._model
        movable = [j for j in range(model.njnt) if model.jnt_type[j] in JOINT_KINDS]
        if name in self._sites:
            body, found = int(model.site_bodyid[self._sites[name]]), []
            while body and not found:
                found = [j for j in movable if model.jnt_bodyid[j] == body]
                body = int(model.body_parentid[body])
        else:
            found = [j for j in movable if (mujoco.mj_id2name(
                model, mujoco.mjtObj.mjOBJ_BODY, int(model.jnt_bodyid[j])) or ""
            ).startswith(name + "_")]
        return found[0] if found else None

    @privileged
    def swept(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The box of the collision geometry of the body on `name`'s slide joint (a drawer with
        its front and handle) as it is now and as it is fully open, together."""
        found = self._joint(self._canonical(name))
        if found is None or found[1].kind != SLIDE:
            return super().swept(name)
        body, joint = found
        corners = self._corners(body)
        corners = np.vstack([corners, corners + joint.axis * (joint.travel - joint.open)])
        return corners.min(axis=0), corners.max(axis=0)

    def _corners(self, body: int) -> np.ndarray:
        """World corners of the bounding boxes of `body`'s collision geoms (group 0)."""
        model, data = self._env.env.sim.model._model, self._data
        signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
        return np.concatenate([
            data.geom_xpos[g] + (model.geom_aabb[g][:3] + signs * model.geom_aabb[g][3:])
            @ data.geom_xmat[g].reshape(3, 3).T
            for g in np.flatnonzero((model.geom_bodyid == body) & (model.geom_group == 0))])

    @privileged
    def motion_space(self, allow: Sequence[str], carrying: str | None = None) -> ArmSpace:
        """The Panda's seven joints among the scene's collision geometry, on a copy of the
        simulation (`tether.scenes.arm_space`); the bodies named in `allow` may be touched; the
        object `carrying` (on a free joint) moves with the hand."""
        model = self._env.env.sim.model._model
        allowed = [g for name in allow for g in self._extents.geoms.get(self._canonical(name), ())]
        carried, joint = (), None
        if carrying is not None:
            body = self._bodies[self._canonical(carrying)]
            if model.body_jntnum[body] and \
                    model.jnt_type[model.body_jntadr[body]] == mujoco.mjtJoint.mjJNT_FREE:
                carried, joint = self._extents.geoms[self._canonical(carrying)], \
                    int(model.body_jntadr[body])
        return ArmSpace(model, self._data, list(self._robot._ref_joint_indexes),
                        site=self._robot.eef_site_id, body=self._eef_body,
                        robot_geoms=self._robot_geoms, allowed_geoms=allowed,
                        carried_geoms=carried, carried_joint=joint)

    def steer(self, pos: np.ndarray | None, quat: np.ndarray | None = None) -> None:
        """Set robosuite's operational-space controller's null-space target (`initial_joint`,
        the posture it otherwise keeps from its reset) to the configuration `ArmSpace.solve`
        finds by the arm's kinematics alone (from the current one first); when that one would
        hit a fixture, the nearest free one along the arm's self-motion (`ArmSpace.swivel`:
        a forearm over a cabinet's corner swung clear). Movable objects do not count: they give
        way. Only that check reads the scene (its collision geometry)."""
        controller = self._robot.controller
        if self._posture is None or self._posture[0] is not controller:  # rebuilt at each reset
            self._posture = (controller, np.array(controller.initial_joint))
        q = None
        if pos is not None and self.reach(pos) >= self.FAR_REACH \
                and _off_square(quat) <= self.SQUARE:
            if self._kinematics is None:
                self._kinematics = ArmSpace(
                    self._env.env.sim.model._model, self._data,
                    list(self._robot._ref_joint_indexes), site=self._robot.eef_site_id,
                    body=self._eef_body, robot_geoms=(), allowed_geoms=(), collisions=False)
            self._kinematics.restart(self._data)
            pos = np.asarray(pos, float)
            q = self._kinematics.solve(pos, quat, seed=0)
            if q is not None:
                fixtures = self.motion_space(self.objects())
                if not fixtures.free(q):
                    free = fixtures.swivel(q, pos, quat)
                    q = q if free is None else free
        controller.initial_joint = self._posture[1] if q is None else q

    @privileged
    def set_down(self, target: str, carried: str, near: np.ndarray) -> tuple[np.ndarray, bool]:
        """In a region, or on an object (near its origin: `placing.top_of`), the spot and turn
        where `carried` and the hand overlap the things standing there least, nearest `near`
        (`tether.scenes.placing`); the region's owner (a basket's walls, the stove under its
        cook region) or the object itself does not count."""
        target, carried = self._canonical(target), self._canonical(carried)
        if target in self._sites:
            region = self.extent_of(target)
        elif target in self._extents:
            region = top_of(self.pose_of(target).pos, self.extent_of(target))
        else:
            return super().set_down(target, carried, near)
        others = [self._extents.of(n, self._data) for n in self._bodies if n in self._extents
                  and n not in (carried, target) and not target.startswith(n + "_")]
        return set_down(region, self.extent_of(carried), others, axis_of(self.eef_pose().yaw),
                        np.asarray(near, dtype=float))

    @privileged
    def spot_with_room(self, carried: str, near: np.ndarray, room: np.ndarray,
                       keep_out: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """`spot_with_room` over the tops of the collision geometry (geom group 0) of everything
        but the robot and `carried`, looked at by rays cast down from `CEILING`; `near` when
        no spot has room."""
        carried, near = self._canonical(carried), np.asarray(near, dtype=float)[:2]
        skip = self._robot_geoms | set(self._extents.geoms.get(carried, ()))
        low, high = self.extent_of(carried)

        def heights(points: np.ndarray) -> np.ndarray:
            with self._opaque(), self._unseen(skip):
                return np.array([CEILING - self._cast(np.array([x, y, CEILING]), -1.0, set())
                                 for x, y in points])

        spot = spot_with_room(near, (high[:2] - low[:2]) / 2.0, room, heights,
                              self._robot.base_pos, keep_out)
        return near if spot is None else spot

    def observe(self) -> dict:
        obs = super().observe()
        obs["gripper_qpos"] = np.array(self._data.qpos[self._finger_qpos])
        obs["joint_pos"] = np.array(self._obs[JOINTS])
        if self.cameras:
            obs["images"] = {c: self._obs[f"{c}_image"] for c in self.cameras}
        return obs

    def render(self, camera: str, size: tuple[int, int] = (128, 128),
               draft: bool = False) -> np.ndarray:
        """An upright frame of `camera` ('agentview', 'robot0_eye_in_hand') rendered now, whether
        or not the scene was built with `cameras` (those render every step)."""
        return self._frames.render(self._env.env.sim.model._model, self._data, camera, size,
                                   draft)

    def capture(self, camera: str, size: tuple[int, int] = (128, 128),
                draft: bool = False) -> View:
        """`camera`'s visual scene now, drawn later (see `Robot.capture`)."""
        model = self._env.env.sim.model._model
        return View(model, self._frames.capture(model, self._data, camera), size, self._frames,
                    draft)

    # --- acting ----------------------------------------------------------------------------
    def _apply(self, action: np.ndarray) -> None:
        self._obs = self._env.step(action)[0]

    def close(self) -> None:
        self._frames.close()
        if self._env is not None:
            self._env.close()
            self._env = None
