"""The policy protocol, policy configs registered by type, and named policies.

A `Policy` maps an `Observation` (images, 8-D state, instruction) to a chunk of 7-D actions in
the robot's normalised OSC_POSE space (`infer` returns an (n, 7) float array, n >= 1); `reset`
starts a new episode (drops queued actions, recurrent state). It declares the `cameras` it wants
rendered. Adapters, one module each, import their heavy libraries only when built:

    lerobot    any lerobot checkpoint saved with `save_pretrained` (models/lerobot_policy.py)
    openpi     a policy served over openpi's websocket protocol (models/remote.py)
    scripted   the privileged grasp expert (models/scripted.py)

Configs are dataclasses registered by type name (lerobot's `register_subclass` style) and built by
`make_policy(config, robot)`. Named policies are what trees refer to (`vla: {policy: grasp_act}`):
the built-ins below, plus any added with `register_policy` or read from a YAML file of
`NAME: {type: TYPE, ...fields}` entries (`load_policies`).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from tether.models.observation import CameraSpec, Observation
from tether.errors import MAX_NESTING, TetherError, data_problem, did_you_mean, key_path
from tether.scenes.robot import Robot

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"  # shipped as package data


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
    KINDS: ClassVar[dict[str, type[PolicyConfig]]] = {}

    @classmethod
    def register(cls, kind: str) -> Callable[[type[PolicyConfig]], type[PolicyConfig]]:
        def wrap(sub: type[PolicyConfig]) -> type[PolicyConfig]:
            sub.type = kind
            cls.KINDS[kind] = sub
            return sub

        return wrap

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "") -> PolicyConfig:
        """The config `data` describes; a `TetherError` prefixed by `where` when it cannot be."""
        if (problem := data_problem(data)) is not None:
            path, message = problem
            raise TetherError(f"{where}{key_path(path)}: {message}")
        data = dict(data)
        kind = data.pop("type", None)
        if kind not in cls.KINDS:
            raise TetherError(f"{where}unknown policy type {kind!r}"
                              + did_you_mean(str(kind), cls.KINDS)
                              + f"; types: {', '.join(sorted(cls.KINDS))}")
        sub = cls.KINDS[kind]
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


@PolicyConfig.register("lerobot")
@dataclass
class LerobotConfig(PolicyConfig):
    """A lerobot checkpoint directory (config.json, model.safetensors, processor files)."""

    path: str
    n_action_steps: int | None = None  # actions used per chunk; default: the checkpoint's own
    device: str = "cpu"

    def build(self, robot: Robot) -> Policy:
        from tether.models.lerobot_policy import LerobotPolicy

        return LerobotPolicy(Path(self.path), n_action_steps=self.n_action_steps, device=self.device)


@PolicyConfig.register("openpi")
@dataclass
class OpenpiConfig(PolicyConfig):
    """A policy served over openpi's websocket protocol (openpi's `serve_policy`, or
    `tether serve-policy`). `replan_steps` actions of each returned chunk are executed."""

    host: str = "localhost"
    port: int | None = 8000
    api_key: str | None = None
    image_size: tuple[int, int] = (224, 224)
    replan_steps: int = 5
    timeout: float = 10.0  # seconds to wait for the server to accept the connection

    def build(self, robot: Robot) -> Policy:
        from tether.models.remote import OpenpiPolicy

        return OpenpiPolicy(self)


@PolicyConfig.register("scripted")
@dataclass
class ScriptedConfig(PolicyConfig):
    """The privileged grasp expert; `object` defaults to the first object of the task's goal."""

    object: str | None = None
    lift: float = 0.10

    def build(self, robot: Robot) -> Policy:
        from tether.models.scripted import ScriptedGrasp

        name = self.object or robot.goal()[0][1]
        return ScriptedGrasp(robot, robot.resolve(name), lift=self.lift)


GRASP_CHECKPOINT = str(CHECKPOINTS / "grasp_act")
POLICIES: dict[str, PolicyConfig | Callable[[Robot], Policy]] = {
    "grasp_act": LerobotConfig(path=GRASP_CHECKPOINT),
    "expert": ScriptedConfig(),
}


def register_policy(name: str, policy: PolicyConfig | Callable[[Robot], Policy]) -> None:
    """Make `name` usable in trees: a config, or a factory of the robot (e.g. a test double)."""
    POLICIES[name] = policy


def load_policies(path: Path | str) -> list[str]:
    """Register the named policies of a YAML file (`NAME: {type: TYPE, ...}`); returns the names.

    Problems are located at the policy's name in the file (`FILE:LINE:COLUMN: NAME: ...`).
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import MaxDepthExceededError
    from ruamel.yaml.error import YAMLError

    path = Path(path)
    yaml = YAML(typ="rt")
    yaml.max_depth = MAX_NESTING + 1  # ruamel counts the scalars inside the deepest collection
    try:
        data = yaml.load(path.read_text(encoding="utf-8")) or {}
    except MaxDepthExceededError as exc:
        mark = exc.problem_mark
        raise TetherError(f"{path}:{mark.line + 1}:{mark.column + 1}: nested more than "
                          f"{MAX_NESTING} levels deep") from None
    except (OSError, YAMLError) as exc:
        raise TetherError(f"{path}: cannot read policies ({exc})") from None
    if not isinstance(data, dict):
        raise TetherError(f"{path}: expected a mapping of policy names to configs")
    for name, body in data.items():
        line, column = data.lc.key(name)
        where = f"{path}:{line + 1}:{column + 1}: {name}: "
        if not isinstance(body, dict):
            raise TetherError(f"{where}expected a mapping with 'type'")
        register_policy(str(name), PolicyConfig.from_dict(body, where=where))
    return [str(n) for n in data]


def make_policy(name: str, robot: Robot) -> Policy:
    """Build the named policy for `robot`."""
    if name not in POLICIES:
        raise TetherError(f"no policy named '{name}'" + did_you_mean(name, POLICIES)
                          + f"; known: {', '.join(sorted(POLICIES))}")
    entry = POLICIES[name]
    return entry.build(robot) if isinstance(entry, PolicyConfig) else entry(robot)


def check_chunk(chunk: Any) -> np.ndarray:
    """A policy's output as an (n, 7) float array; ValueError when it is not one."""
    arr = np.asarray(chunk, dtype=float)
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != 7 or arr.shape[0] == 0:
        raise ValueError(f"expected an (n, 7) action chunk, got shape {arr.shape}")
    return arr


_BUILT: weakref.WeakKeyDictionary[Robot, dict[str, Policy]] = weakref.WeakKeyDictionary()


def policy_for(name: str, robot: Robot) -> Policy:
    """The named policy for `robot`, built once per robot (every tree node naming it shares it;
    a node `reset`s it when it starts)."""
    built = _BUILT.setdefault(robot, {})
    if name not in built:
        built[name] = make_policy(name, robot)
    return built[name]
