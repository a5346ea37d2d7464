"""The policy protocol and the base of policy configs, registered by type.

A `Policy` maps an `Observation` (images, 8-D state, instruction) to a chunk of 7-D actions in
the robot's normalised OSC_POSE space (`infer` returns an (n, 7) float array, n >= 1); `reset`
starts a new episode (drops queued actions, recurrent state). It declares the `cameras` it wants
rendered.

Each adapter module defines its config dataclass, registers it by type name here
(`@PolicyConfig.register("openpi")`, lerobot's `register_subclass` style) and builds its policy
in `build`; heavy libraries are imported only then. `tether.models.policies` imports every
adapter and keeps the named policies trees refer to. Adapters import this module, never that one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from tether.errors import TetherError, data_problem, did_you_mean, key_path
from tether.models.observation import CameraSpec, Observation
from tether.registry import Registry
from tether.scenes.robot import Robot


@runtime_checkable
class Policy(Protocol):
    cameras: tuple[CameraSpec, ...]

    def reset(self) -> None:
        """Start a new episode."""

    def infer(self, obs: Observation) -> np.ndarray:
        """A chunk of actions, shape (n, 7), for the observation."""


@dataclass
class PolicyConfig:
    """Base of the per-type configs; `type` names the registered subclass."""

    type: ClassVar[str] = ""
    servable: ClassVar[bool] = True  # False: it reads the simulator, `tether serve-policy` cannot

    @classmethod
    def register(cls, kind: str) -> Callable[[type[PolicyConfig]], type[PolicyConfig]]:
        def wrap(sub: type[PolicyConfig]) -> type[PolicyConfig]:
            sub.type = kind
            return POLICY_TYPES.register(kind, sub)

        return wrap

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "") -> PolicyConfig:
        """The config `data` describes; a `TetherError` prefixed by `where` when it cannot be."""
        if (problem := data_problem(data)) is not None:
            path, message = problem
            raise TetherError(f"{where}{key_path(path)}: {message}")
        data = dict(data)
        kind = str(data.pop("type", None))
        sub = POLICY_TYPES.get(kind, where=where)
        fields = {f.name for f in dataclasses.fields(sub)}
        unknown = [k for k in data if k not in fields]
        if unknown:
            raise TetherError(f"{where}unknown field '{unknown[0]}' of a {kind} policy"
                              + did_you_mean(unknown[0], fields) + "; fields: "
                              + ", ".join(sorted(fields)))
        try:
            return sub(**data)
        except TypeError as exc:
            raise TetherError(f"{where}{kind} policy: {exc}") from None

    def build(self, robot: Robot) -> Policy:
        raise NotImplementedError

    def on(self, device: str) -> PolicyConfig:
        """This config on `device`, where its type runs on one and it names none itself."""
        return self

    @property
    def gpu(self) -> bool:
        """Whether the policy runs on a CUDA GPU of the process that builds it."""
        return False


POLICY_TYPES: Registry[type[PolicyConfig]] = Registry("policy type")


def check_chunk(chunk: Any) -> np.ndarray:
    """A policy's output as an (n, 7) float array; ValueError when it is not one."""
    arr = np.asarray(chunk, dtype=float)
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != 7 or arr.shape[0] == 0:
        raise ValueError(f"expected an (n, 7) action chunk, got shape {arr.shape}")
    return arr
