"""Work robosuite repeats without changing a number: recompiling a model, re-running a forward.

Seven shortcuts, each giving bit-identical simulations (tests/scenes/test_fast_physics.py,
tests/scenes/test_scene_cache.py):

- `cache_compiled_models()`: robosuite builds every `MjSim` from a model XML string
  (`MjSim.from_xml_string`), and a LIBERO env compiles its XML at construction and again at every
  (hard) reset, ~0.3-0.5 s each. Compiling is deterministic, so each process keeps the compiled
  `MjModel` of its last `MODELS` XML strings and hands out a copy (`mj_copyModel`); a copy, not
  the kept model, because perturbations edit the model of the scene they run in. A process's
  first compile of an XML (seconds: textures decoded, meshes built) is read from the machine's
  store of compiled models instead when an earlier run stored it (`tether.scenes.model_store`).
- `skip_repeated_forward(env)`: each of robosuite's physics substeps runs `sim.forward()`, then
  the controller (`_pre_action`), then `sim.step()`. The OSC controller calls `sim.forward()`
  again to read the state the first call has just computed, and `mj_step` runs a whole forward
  once more before it integrates. Nothing but the controls changes in between, and only the
  actuation, acceleration and constraint stages read the controls (the controllers read
  positions, velocities, Jacobians, the mass matrix and the bias forces), so a substep's first
  forward is `mj_step1` (the stages before the controls, with `mj_step`'s checks for a diverged
  state), the controller's forward is skipped, and the step is `mj_step2` (the stages that read
  the controls, then the integrator): `mj_step1` + `mj_step2` is `mj_step`, so what robosuite
  reads after its substeps (success checks, observations) is what it read before. Not for RK4,
  whose `mj_step2` is Euler.
- `streamline_control(env)`: at each of the 25 physics substeps of a control step robosuite's
  arm controller re-reads the arm's state (`Controller.update`): it looks the end-effector site
  up by name four times, runs `mj_jacSite` four times (twice for the velocities, twice for the
  Jacobians), allocates a full mass matrix, and the robot recomputes its action limits three
  times and its torque limits and gripper ranges once. For a single arm under operational-space
  control (LIBERO's `OSC_POSE`) these become one `mj_jacSite` into kept arrays and indices looked
  up once per controller (robosuite builds a new controller at every reset); every number is
  computed by the same numpy operation on the same operands as before. The controller's law
  (`run_controller`) is robosuite's compiled as one function (`tether.scenes.osc_law`), when
  robosuite compiles its parts (its default) and the controller does not interpolate.
- `keep_compiled_model(env)`: a reset of a built scene keeps its compiled model (robosuite's
  soft reset, `mj_resetData`) instead of rebuilding it from the XML, whose copy alone costs
  ~0.25 s (a LIBERO model carries ~140 MB of textures). What an episode may have edited in the
  model (perturbations recolour, rescale, move the camera, change friction and mass) is put back
  first by the `ModelFields` it returns: every model array but the large asset arrays (`ASSETS`:
  textures, meshes, BVHs, height fields), which nothing edits after compiling but the mesh
  vertices `object_scale` scales (`_RESHAPED`, kept too). A hard reset also
  rebuilt the gripper's model, whose command ramp (`current_action`) the caller zeroes.
- `observe_only(env, names)`: after each of the 25 physics substeps robosuite offers every
  observable (~26 in a LIBERO scene: the arm's and each object's poses, sines and cosines of the
  joints, ...) a sample. Its caller reads a few of them; the others are disabled (robosuite's
  own switch: a disabled observable runs no sensor and is left out of the observations) and
  no longer visited, and the ones kept sample exactly as before.
- `contacts_by_id(env)`: LIBERO's success test asks robosuite's `check_contact` whether two
  objects touch, twice a control step per `on` literal; it walks the contacts in Python, naming
  both geoms of each. Each set of names becomes a mask over the model's geoms once, and the
  contacts' geom pairs are looked up in it as arrays: the same answer.
- `textures_later()`: a LIBERO model carries ~143 MB of image textures (two 4096 x 4096), which
  its compile decodes and every copy, store and load moves, though no physics reads them.
  Scenes built in this context compile their XML with each image texture replaced by a flat
  8 x 8 one (same name and kind, so every material keeps its texture's id); `textured(model)`
  gives what draws them: the model compiled from the real XML at the first call, with every
  other array set to the scene model's at each call (perturbations recolour, move lights and
  cameras, and scale meshes). `textured(model, limit)` does the same with its textures no
  longer than `limit` texels a side (`tether.scenes.light_textures`), for small frames.
"""

from __future__ import annotations

import contextlib
import copy
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import mujoco
import numpy as np

from tether.scenes.light_textures import lighter
from tether.scenes.model_store import load_or_compile

MODELS = 4  # compiled models kept per process
_compiled: OrderedDict[str, mujoco.MjModel] = OrderedDict()
_compiling = threading.Lock()  # a trace writer's thread may ask for a textured model
ASSETS = ("tex_data", "mesh_", "bvh_", "hfield_data", "skin_", "flex")  # model arrays left alone
_TEXTURE = re.compile(r"<texture\b[^>]*/>")
_IDENTITY = re.compile(r'\s(?:name|type)="[^"]*"')  # what a material's reference keeps
_UNDRAWN = ("tex_", "paths", "names", "name_")  # model arrays a texture-less compile changes
_RESHAPED = ("mesh_vert",)  # the asset array a perturbation edits (`object_scale`)
_later = threading.local()  # .on: this thread's scenes compile without their image textures
# per model compiled from an XML: the XML, and whether it was compiled without its image textures
_sources: weakref.WeakKeyDictionary[mujoco.MjModel, tuple[str, bool]] = \
    weakref.WeakKeyDictionary()
# per model: how many times its mesh vertices were edited (`meshes_edited`)
_mesh_edits: weakref.WeakKeyDictionary[mujoco.MjModel, int] = weakref.WeakKeyDictionary()
# per such model: the models that draw it, by texture limit (None: the textures as they are)
_drawn: weakref.WeakKeyDictionary[mujoco.MjModel, dict[int | None, mujoco.MjModel]] = \
    weakref.WeakKeyDictionary()


def compiled_model(xml: str) -> mujoco.MjModel:
    """A fresh copy of the model `xml` compiles to (compiled once per process while kept)."""
    with _compiling:
        model = _compiled.pop(xml, None)
        if model is None:
            model = load_or_compile(xml)
        _compiled[xml] = model
        while len(_compiled) > MODELS:
            _compiled.popitem(last=False)
        return copy.copy(model)


@contextmanager
def textures_later() -> Iterator[None]:
    """Scenes built in this context (on this thread) leave their image textures to
    `textured` (see the module docstring)."""
    _later.on = True
    try:
        yield
    finally:
        _later.on = False


def _flat(texture: re.Match[str]) -> str:
    """An image texture's element as a flat 8 x 8 one of the same name and kind; others kept."""
    element = texture.group(0)
    if not re.search(r'\sfile="', element):
        return element
    identity = "".join(_IDENTITY.findall(element))
    return f'<texture{identity} builtin="flat" width="8" height="8" rgb1="0.5 0.5 0.5"/>'


def textured(model: mujoco.MjModel, limit: int | None = None) -> mujoco.MjModel:
    """The model to draw `model` with: `model` itself when it has its image textures and no
    `limit` is asked, else the model compiled from its XML with them (no longer than `limit`
    texels a side when given), its other arrays set to `model`'s now."""
    xml, flat = _sources.get(model, (None, False))
    if xml is None or (limit is None and not flat):
        return model
    twins = _drawn.setdefault(model, {})
    drawn = twins.get(limit)
    if drawn is None:
        drawn = twins[limit] = _twin(xml, limit)
    for name in [*_editable(model), *_RESHAPED]:
        if not name.startswith(_UNDRAWN):
            np.copyto(getattr(drawn, name), getattr(model, name))
    return drawn


def _twin(xml: str, limit: int | None) -> mujoco.MjModel:
    """The model `xml` compiles to, with its textures reduced to `limit` when given and the
    reduced XML compiles (a reduced image MuJoCo refuses leaves the textures as they are)."""
    if limit is not None:
        with contextlib.suppress(ValueError):
            return compiled_model(lighter(xml, limit))
    return compiled_model(xml)


def meshes_edited(model: mujoco.MjModel) -> None:
    """Note that `model`'s mesh vertices changed (`object_scale`, a reset putting them back):
    a render context made before draws the old meshes (`mesh_edits`)."""
    _mesh_edits[model] = _mesh_edits.get(model, 0) + 1


def mesh_edits(model: mujoco.MjModel) -> int:
    """How many times `model`'s mesh vertices were edited: what a render context made from it
    compares to know its meshes are `model`'s still."""
    return _mesh_edits.get(model, 0)


def cache_compiled_models() -> None:
    """Make robosuite's `MjSim.from_xml_string` build from `compiled_model` (idempotent)."""
    from robosuite.utils.binding_utils import MjSim

    if getattr(MjSim.from_xml_string, "__func__", None) is not _from_xml_string:
        MjSim.from_xml_string = classmethod(_from_xml_string)


def _from_xml_string(cls: Any, xml: str) -> Any:
    flat = getattr(_later, "on", False)
    model = compiled_model(_TEXTURE.sub(_flat, xml) if flat else xml)
    _sources[model] = (xml, flat)
    return cls(model)


def _nothing() -> None:
    return None


def skip_repeated_forward(env: Any) -> None:
    """Run each of `env`'s physics substeps as `mj_step1`, the controllers (`_pre_action`)
    without the sim forwards they repeat, then `mj_step2`: robosuite's `mj_forward`, forwards and
    `mj_step` less the stages computed twice. Not for RK4, whose `mj_step2` is Euler."""
    step, pre_action = env.step, env._pre_action
    split = False  # this control step's substeps are halves (not RK4)
    left = 0  # substeps of this control step whose leading forward is still to come

    def first_half(sim: Any) -> None:
        """This once, `sim.forward()` is `mj_step1`: what the controllers read (positions,
        velocities); the stages that read the controls are left to `second_half`."""
        del sim.forward
        mujoco.mj_step1(sim.model._model, sim.data._data)

    def second_half(sim: Any) -> None:
        """This once, `sim.step()` is `mj_step2`; the next substep's forward is `first_half`."""
        nonlocal left
        del sim.step
        mujoco.mj_step2(sim.model._model, sim.data._data)
        left -= 1
        if left > 0:
            sim.forward = partial(first_half, sim)

    def _step(action: Any) -> Any:
        nonlocal split, left
        sim = env.sim
        split = sim.model._model.opt.integrator != mujoco.mjtIntegrator.mjINT_RK4
        if split:
            left = int(env.control_timestep / env.model_timestep)  # robosuite's count
            sim.forward = partial(first_half, sim)
        try:
            return step(action)
        finally:
            split, left = False, 0
            for name in ("forward", "step"):
                vars(sim).pop(name, None)

    def _pre_action(action: Any, policy_step: bool = False) -> None:
        sim = env.sim
        sim.forward = _nothing
        try:
            pre_action(action, policy_step)
        finally:
            del sim.forward
        if split:
            sim.step = partial(second_half, sim)

    env.step, env._pre_action = _step, _pre_action


@dataclass
class _ArmState:
    """What `Controller.update` reads for one controller, looked up once, and its kept arrays."""

    controller: Any
    site: int
    qpos: np.ndarray
    qvel: np.ndarray
    jacp: np.ndarray
    jacr: np.ndarray
    full_mass: np.ndarray
    law: Any  # tether.scenes.osc_law (imported once robosuite is)

    @classmethod
    def of(cls, controller: Any) -> _ArmState:
        from tether.scenes import osc_law

        nv = controller.sim.model.nv
        qvel = np.asarray(controller.qvel_index)
        return cls(controller, controller.sim.model.site_name2id(controller.eef_name),
                   np.asarray(controller.qpos_index), qvel,
                   np.zeros((3, nv)), np.zeros((3, nv)), np.zeros((nv, nv)), osc_law)

    def update(self, force: bool = False) -> None:
        """`Controller.update`: the same values, one Jacobian evaluation."""
        c = self.controller
        if not (c.new_update or force):
            return
        c.sim.forward()
        model, data = c.sim.model._model, c.sim.data._data
        mujoco.mj_jacSite(model, data, self.jacp, self.jacr, self.site)
        qvel = data.qvel
        c.ee_pos = np.array(data.site_xpos[self.site])
        c.ee_ori_mat = np.array(data.site_xmat[self.site].reshape([3, 3]))
        c.ee_pos_vel = np.dot(self.jacp, qvel)
        c.ee_ori_vel = np.dot(self.jacr, qvel)
        c.joint_pos = data.qpos[self.qpos]
        c.joint_vel = qvel[self.qvel]
        c.J_pos = self.jacp[:, self.qvel]
        c.J_ori = self.jacr[:, self.qvel]
        c.J_full = np.concatenate([c.J_pos, c.J_ori])
        mujoco.mj_fullM(model, self.full_mass, data.qM)
        c.mass_matrix = self.full_mass[self.qvel, :][:, self.qvel]  # Fortran order, as robosuite's
        c.new_update = False

    def torques(self) -> np.ndarray:
        """`OperationalSpaceController.run_controller` without interpolators (LIBERO's), its law
        compiled as one function (`tether.scenes.osc_law`)."""
        c = self.controller
        self.update()
        c.torques = self.law.torques(
            np.array(c.goal_pos), np.array(c.goal_ori), c.ee_pos, c.ee_ori_mat, c.ee_pos_vel,
            c.ee_ori_vel, c.kp, c.kd, c.mass_matrix, c.J_full, c.J_pos, c.J_ori,
            c.sim.data._data.qfrc_bias[self.qvel], c.initial_joint, c.joint_pos, c.joint_vel,
            bool(c.uncoupling))
        c.new_update = True
        return c.torques


class _ArmControl:
    """`SingleArm.control` for an operational-space controller and a gripper, its limits and
    actuator indices looked up once; a controller that does not interpolate and a Panda gripper
    (LIBERO's) are commanded by `tether.scenes.osc_law` when robosuite compiles its law."""

    def __init__(self, robot: Any) -> None:
        from robosuite.models.grippers.panda_gripper import PandaGripper

        self.robot, self.arm = robot, None
        self.action_dim = robot.action_dim
        model = robot.sim.model
        self.torque_low, self.torque_high = robot.torque_limits
        self.joint_actuators = np.asarray(robot._ref_joint_actuator_indexes)
        self.grip_actuators = np.array([model.actuator_name2id(a)
                                        for a in robot.gripper.actuators])
        ctrl_range = model.actuator_ctrlrange[self.grip_actuators]
        self.grip_bias = 0.5 * (ctrl_range[:, 1] + ctrl_range[:, 0])
        self.grip_weight = 0.5 * (ctrl_range[:, 1] - ctrl_range[:, 0])
        self.panda = type(robot.gripper).format_action is PandaGripper.format_action

    def __call__(self, action: np.ndarray, policy_step: bool = False) -> None:
        robot = self.robot
        controller = robot.controller
        if self.arm is None or self.arm.controller is not controller:
            self.arm = _ArmState.of(controller)
            controller.update = self.arm.update
        assert len(action) == self.action_dim, f"expected an action of {self.action_dim}"
        dim = controller.control_dim
        if policy_step:
            controller.set_goal(action[:dim])
        data = robot.sim.data._data
        if controller.interpolator_pos is None and controller.interpolator_ori is None \
                and self.arm.law.COMPILED and self.panda:
            gripper = robot.gripper
            robot.torques, gripper.current_action = self.arm.law.actuate(
                self.arm.torques(), self.torque_low, self.torque_high, self.joint_actuators,
                gripper.current_action, gripper.speed, action[dim:], self.grip_bias,
                self.grip_weight, self.grip_actuators, data.ctrl)
            return
        robot.torques = np.clip(controller.run_controller(), self.torque_low, self.torque_high)
        grip = robot.gripper.format_action(action[dim:])
        data.ctrl[self.grip_actuators] = self.grip_bias + self.grip_weight * grip
        data.ctrl[self.joint_actuators] = robot.torques


def streamline_control(env: Any) -> None:
    """Give `env`'s single-arm operational-space robots the streamlined `control` (others keep
    robosuite's), and `env` a `_pre_action` that hands each its slice of the action with the
    sizes looked up once. Call it before `skip_repeated_forward`, which wraps `_pre_action`."""
    from robosuite.controllers.osc import OperationalSpaceController
    from robosuite.robots.single_arm import SingleArm

    for robot in env.robots:
        if (type(robot).control is SingleArm.control and robot.has_gripper
                and type(robot.controller) is OperationalSpaceController):
            robot.control = _ArmControl(robot)
    bounds = np.cumsum([0] + [robot.action_dim for robot in env.robots])
    robots = list(zip(env.robots, bounds[:-1], bounds[1:], strict=True))

    def _pre_action(action: np.ndarray, policy_step: bool = False) -> None:
        assert len(action) == bounds[-1], f"expected an action of {bounds[-1]}"
        for robot, start, stop in robots:
            robot.control(action[start:stop], policy_step=policy_step)

    env._pre_action = _pre_action


def observe_only(env: Any, names: set[str]) -> None:
    """Keep only `env`'s observables named in `names` (the observations then hold only them);
    each substep visits those alone. The observables live as long as the env's soft resets."""
    for name, observable in env._observables.items():
        if name not in names:
            observable.set_enabled(False)
    kept = [o for o in env._observables.values() if o.is_enabled()]

    def _update_observables(force: bool = False) -> None:
        for observable in kept:
            observable.update(timestep=env.model_timestep, obs_cache=env._obs_cache, force=force)

    env._update_observables = _update_observables


def contacts_by_id(env: Any) -> None:
    """Give `env` a `check_contact` with robosuite's meaning (see the module docstring)."""
    from robosuite.models.base import MujocoModel

    masks: dict[tuple[str, ...], np.ndarray] = {}  # names -> which of the model's geoms they are
    model = None

    def geom_mask(geoms: Any) -> np.ndarray:
        if type(geoms) is str:
            geoms = [geoms]
        elif isinstance(geoms, MujocoModel):
            geoms = geoms.contact_geoms
        key = tuple(geoms)
        if key not in masks:
            masks[key] = np.zeros(model.ngeom, dtype=bool)
            for name in key:
                i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)
                if i >= 0:
                    masks[key][i] = True
        return masks[key]

    def check_contact(geoms_1: Any, geoms_2: Any = None) -> bool:
        nonlocal model
        if model is not env.sim.model._model:  # masks are per model
            model = env.sim.model._model
            masks.clear()
        contact = env.sim.data._data.contact
        first, second = contact.geom1, contact.geom2
        mask_1 = geom_mask(geoms_1)
        if geoms_2 is None:
            return bool(mask_1[first].any() or mask_1[second].any())
        mask_2 = geom_mask(geoms_2)
        return bool((mask_1[first] & mask_2[second]).any()
                    or (mask_2[first] & mask_1[second]).any())

    env.check_contact = check_contact


class ModelFields:
    """A model's arrays as they were when this was made (but `ASSETS`, bar the mesh vertices a
    perturbation scales), to put back later."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self._kept = {name: np.copy(getattr(model, name))
                      for name in [*_editable(model), *_RESHAPED]}

    def restore(self, model: mujoco.MjModel) -> None:
        """Write the kept arrays back into `model` (the one they came from, or its copy); mesh
        vertices put back are `meshes_edited`."""
        for name, value in self._kept.items():
            if name in _RESHAPED and not np.array_equal(getattr(model, name), value):
                meshes_edited(model)
            np.copyto(getattr(model, name), value)


def _editable(model: mujoco.MjModel) -> list[str]:
    return [name for name in dir(model) if not name.startswith(("_", *ASSETS))
            and isinstance(getattr(model, name, None), np.ndarray)]


def keep_compiled_model(env: Any) -> ModelFields:
    """Make `env`'s resets soft (keep the model) and return its fields to restore before each."""
    env.hard_reset = False
    return ModelFields(env.sim.model._model)
