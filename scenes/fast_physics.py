"""Work robosuite repeats without changing a number: recompiling a model, re-running a forward.

Three shortcuts, each giving bit-identical simulations (tests/scenes/test_fast_physics.py,
tests/scenes/test_scene_cache.py):

- `cache_compiled_models()`: robosuite builds every `MjSim` from a model XML string
  (`MjSim.from_xml_string`), and a LIBERO env compiles its XML at construction and again at every
  (hard) reset, ~0.3-0.5 s each. Compiling is deterministic, so each process keeps the compiled
  `MjModel` of its last `MODELS` XML strings and hands out a copy (`mj_copyModel`); a copy, not
  the kept model, because perturbations edit the model of the scene they run in.
- `skip_repeated_forward(env)`: each of robosuite's physics substeps runs `sim.forward()`, then
  the controller (`_pre_action`), then `sim.step()`. The OSC controller calls `sim.forward()`
  again to read the state the first call has just computed, and `mj_step` runs a whole forward
  once more before it integrates. Nothing but the controls changes in between, and only the
  actuation and acceleration stages read the controls, so during `_pre_action` the sim's
  forward is skipped and the step that follows is `mj_step2` (those stages, then the
  integrator: MuJoCo's `mj_step1` + `mj_step2` is `mj_step`, `mj_step1` being what the first
  forward computed). Not for RK4, whose `mj_step2` is Euler; `mj_step`'s check for a diverged
  state (a reset with a warning) is skipped with its forward.
- `keep_compiled_model(env)`: a reset of a built scene keeps its compiled model (robosuite's
  soft reset, `mj_resetData`) instead of rebuilding it from the XML, whose copy alone costs
  ~0.25 s (a LIBERO model carries ~140 MB of textures). What an episode may have edited in the
  model (perturbations recolour, rescale, move the camera, change friction and mass) is put back
  first by the `ModelFields` it returns: every model array but the large asset arrays (`ASSETS`:
  textures, meshes, BVHs, height fields), which nothing edits after compiling. A hard reset also
  rebuilt the gripper's model, whose command ramp (`current_action`) the caller zeroes.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from functools import partial
from typing import Any

import mujoco
import numpy as np

MODELS = 4  # compiled models kept per process
_compiled: OrderedDict[str, mujoco.MjModel] = OrderedDict()
ASSETS = ("tex_data", "mesh_", "bvh_", "hfield_data", "skin_", "flex")  # model arrays left alone


def compiled_model(xml: str) -> mujoco.MjModel:
    """A fresh copy of the model `xml` compiles to (compiled once per process while kept)."""
    model = _compiled.pop(xml, None)
    if model is None:
        model = mujoco.MjModel.from_xml_string(xml)
    _compiled[xml] = model
    while len(_compiled) > MODELS:
        _compiled.popitem(last=False)
    return copy.copy(model)


def cache_compiled_models() -> None:
    """Make robosuite's `MjSim.from_xml_string` build from `compiled_model` (idempotent)."""
    from robosuite.utils.binding_utils import MjSim

    if getattr(MjSim.from_xml_string, "__func__", None) is not _from_xml_string:
        MjSim.from_xml_string = classmethod(_from_xml_string)


def _from_xml_string(cls: Any, xml: str) -> Any:
    return cls(compiled_model(xml))


def _nothing() -> None:
    return None


def _second_half(sim: Any) -> None:
    """This once, `sim.step()` is `mj_step2`: the first forward of the substep did `mj_step1`."""
    del sim.step
    mujoco.mj_step2(sim.model._model, sim.data._data)


def skip_repeated_forward(env: Any) -> None:
    """Run `env`'s `_pre_action` (the controllers) without the sim forwards it repeats, and the
    step after it without the forward stages that do not read the controls."""
    pre_action = env._pre_action

    def _pre_action(action: Any, policy_step: bool = False) -> None:
        sim = env.sim
        sim.forward = _nothing
        try:
            pre_action(action, policy_step)
        finally:
            del sim.forward
        if sim.model._model.opt.integrator != mujoco.mjtIntegrator.mjINT_RK4:
            sim.step = partial(_second_half, sim)

    env._pre_action = _pre_action


class ModelFields:
    """A model's arrays as they were when this was made (but `ASSETS`), to put back later."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self._kept = {name: np.copy(getattr(model, name)) for name in _editable(model)}

    def restore(self, model: mujoco.MjModel) -> None:
        """Write the kept arrays back into `model` (the one they came from, or its copy)."""
        for name, value in self._kept.items():
            np.copyto(getattr(model, name), value)


def _editable(model: mujoco.MjModel) -> list[str]:
    return [name for name in dir(model) if not name.startswith(("_", *ASSETS))
            and isinstance(getattr(model, name, None), np.ndarray)]


def keep_compiled_model(env: Any) -> ModelFields:
    """Make `env`'s resets soft (keep the model) and return its fields to restore before each."""
    env.hard_reset = False
    return ModelFields(env.sim.model._model)
