"""The perturbation contract, the registry of kinds, and `KIND[:key=value,...]` specs.

A perturbation is a kind (registered by name, lerobot's `register_subclass` style) plus a
dataclass config. It acts through hooks, each given a numpy `Generator` seeded from
(run seed, position in the list, kind), so the same task, perturbations and seed always give the
same scene and instruction, and different seeds differ:

- scene stage (before the env exists): `edit_problem` edits the task's BDDL `Problem` (add
  objects, retarget the goal), `edit_instruction` rewrites the instruction;
- reset (after the initial state is loaded, before the scene settles): `on_reset` moves objects,
  the robot, the camera, lights, colours, friction and masses in the live MuJoCo model;
- run time: `on_action` changes each commanded action, `after_step` may change the world after
  a control step, `perceive` changes the poses behaviours read, `see` changes the camera
  images the scene renders for a consumer (`render`: policies, verifiers, detectors).

    p = build("distractors:n=3")            # a Perturbation; `TetherError` on a bad spec
    REGISTRY["lighting"].Config()           # the defaults, documented in docs/perturbations.md

Perturbations compose: a list is applied in order, each with its own generator.
"""

from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tether.errors import TetherError, did_you_mean, finite_problem, not_finite
from tether.registry import Registry

if TYPE_CHECKING:
    from tether.scenes.bddl import Problem
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.robot import Pose

SCENE, RESET, RUN = "scene", "reset", "run"


@dataclass(frozen=True)
class NoConfig:
    """A kind without parameters."""


class Perturbation:
    """One configured perturbation; subclasses override the hooks they need. The `scene` the
    hooks get is the `PerturbedScene` applying them (`tether.scenes.perturbations.scene`, which
    builds on this contract), with its helpers for hooks."""

    name: ClassVar[str]
    summary: ClassVar[str]  # one line for `tether scenes list`
    stage: ClassVar[str]  # SCENE, RESET or RUN: where it acts
    Config: ClassVar[type] = NoConfig

    def __init__(self, config: Any = None) -> None:
        self.config = config if config is not None else self.Config()

    def __repr__(self) -> str:
        return spec_of(self)

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        return problem

    def edit_instruction(self, text: str, problem: Problem, rng: np.random.Generator) -> str:
        return text

    def on_reset(self, scene: LiberoScene, rng: np.random.Generator) -> None:
        """Change the freshly loaded initial state or model (re-applied at every reset)."""

    def on_action(self, scene: LiberoScene, action: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        return action

    def after_step(self, scene: LiberoScene, rng: np.random.Generator) -> None:
        """Change the world after a control step."""

    def perceive(self, name: str, pose: Pose, rng: np.random.Generator) -> Pose:
        return pose

    def see(self, camera: str, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Change one rendered camera image (uint8 H x W x 3, upright)."""
        return image


REGISTRY: Registry[type[Perturbation]] = Registry("perturbation")


def register(cls: type[Perturbation]) -> type[Perturbation]:
    """Class decorator: make a kind selectable by its `name`."""
    return REGISTRY.register(cls.name, cls)


def rng_for(seed: int, index: int, name: str, stream: str) -> np.random.Generator:
    """The generator of the `index`-th perturbation for one stream (scene, reset or run)."""
    return np.random.default_rng([seed, index, zlib.crc32(name.encode()),
                                  zlib.crc32(stream.encode())])


def numbers(key: str, text: str, n: int) -> np.ndarray:
    """A config string of `n` space-separated finite numbers ('0.1 0.2'); ValueError if not."""
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        values = np.array([])
    if len(values) != n or not np.all(np.isfinite(values)):
        raise ValueError(f"{key} must be {n} numbers separated by spaces, got '{text}'")
    return values


def _convert(kind: str, field: dataclasses.Field, text: str) -> Any:
    typ = field.type if isinstance(field.type, str) else field.type.__name__
    try:
        if typ == "bool":
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return text.lower() in ("true", "1", "yes")
        if typ == "int":
            return int(text)
        if typ == "float":
            if not_finite(number := float(text)):
                raise TetherError(f"perturbation '{kind}': {field.name} {finite_problem(number)}")
            return number
    except ValueError:
        raise TetherError(f"perturbation '{kind}': {field.name} must be {typ}, got '{text}'") \
            from None
    return text


def build(spec: str) -> Perturbation:
    """A perturbation from `KIND` or `KIND:key=value,key=value`."""
    kind, _, args = spec.strip().partition(":")
    kind = kind.strip()
    cls = REGISTRY.get(kind)
    fields = {f.name: f for f in dataclasses.fields(cls.Config)}
    values: dict[str, Any] = {}
    for pair in filter(None, (a.strip() for a in args.split(","))):
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq:
            raise TetherError(f"perturbation '{kind}': '{pair}' is not key=value")
        if key not in fields:
            known = ", ".join(fields) or "none"
            raise TetherError(f"perturbation '{kind}' has no parameter '{key}'"
                              f"{did_you_mean(key, fields)}; its parameters: {known}")
        values[key] = _convert(kind, fields[key], value.strip())
    try:
        return cls(cls.Config(**values))
    except ValueError as e:
        raise TetherError(f"perturbation '{kind}': {e}") from None


def spec_of(p: Perturbation) -> str:
    """The spec string that builds `p` again (non-default parameters only)."""
    default = type(p).Config()
    changed = [f"{f.name}={getattr(p.config, f.name)}" for f in dataclasses.fields(p.config)
               if getattr(p.config, f.name) != getattr(default, f.name)]
    return p.name + (":" + ",".join(changed) if changed else "")
