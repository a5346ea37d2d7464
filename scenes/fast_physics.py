"""Work robosuite repeats without changing a number: recompiling a model, re-running a forward.

Two shortcuts, each giving bit-identical simulations (tests/scenes/test_fast_physics.py):

- `cache_compiled_models()`: robosuite builds every `MjSim` from a model XML string
  (`MjSim.from_xml_string`), and a LIBERO env compiles its XML at construction and again at every
  (hard) reset, ~0.3-0.5 s each. Compiling is deterministic, so each process keeps the compiled
  `MjModel` of its last `MODELS` XML strings and hands out a copy (`mj_copyModel`); a copy, not
  the kept model, because perturbations edit the model of the scene they run in.
- `skip_repeated_forward(env)`: each of robosuite's physics substeps runs `sim.forward()`, then
  the controller (`_pre_action`), then `sim.step()`. The OSC controller calls `sim.forward()`
  again to read the state the first call has just computed; nothing between the two changes
  the state it reads (positions, velocities, the previous controls), so during `_pre_action` the
  sim's forward is skipped.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import mujoco

MODELS = 4  # compiled models kept per process
_compiled: OrderedDict[str, mujoco.MjModel] = OrderedDict()


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


def skip_repeated_forward(env: Any) -> None:
    """Run `env`'s `_pre_action` (the controllers) without the sim forwards it repeats."""
    pre_action = env._pre_action

    def _pre_action(action: Any, policy_step: bool = False) -> None:
        sim = env.sim
        sim.forward = _nothing
        try:
            pre_action(action, policy_step)
        finally:
            del sim.forward

    env._pre_action = _pre_action
