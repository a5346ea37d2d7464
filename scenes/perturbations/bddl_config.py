"""A task file's LIBERO-PRO `:perturbation_config`, as tether perturbations.

Each enabled subsection (`tether.scenes.perturbation_config`) becomes kinds with upstream's
parameters, so a scene opened on the file (`tether run TREE --task FILE.bddl`) is perturbed the
way LIBERO-PRO's own evaluation perturbs it, and its record lists them like any `-p` spec:

| section | kinds |
| --- | --- |
| lighting | `light_levels` |
| observation | `image_noise` |
| camera | `camera_pose` |
| runtime_move | `object_move` (direction and minimum distance from the file) |
| object_appearance | `recolour`, one per target |
| object_placement | `occluder`, one per target |
| object_shape | `object_scale` |
| initial_pose | `pose_shift` |

    perturbations_of(read_problem("task.bddl").perturbation_config)
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tether.errors import TetherError
from tether.registry import Registry
from tether.scenes.perturbation_config import (
    Appearance,
    Camera,
    InitialPose,
    Lighting,
    Observation,
    PerturbationConfig,
    Placement,
    RuntimeMove,
    Section,
    Shape,
)
from tether.scenes.perturbations.base import REGISTRY, Perturbation

MAPPINGS: Registry[Callable[[Section], list[Perturbation]]] = Registry("perturbation_config "
                                                                       "section")


def _kind(name: str, **config: object) -> Perturbation:
    """The registered kind `name` with `config` (kinds by name: the scene imports this module)."""
    cls = REGISTRY.get(name)
    return cls(cls.Config(**config))


def _words(values: tuple[float, ...]) -> str:
    return " ".join(repr(float(v)) for v in values)


def _uniform(section: str, scale: tuple[float, float, float]) -> float:
    if max(scale) - min(scale) > 1e-9:
        raise TetherError(f":{section}: tether scales uniformly; mesh_scale "
                          f"{_words(scale)} differs per axis")
    return scale[0]


def _lighting(s: Lighting) -> list[Perturbation]:
    return [_kind("light_levels", ambient=s.ambient, diffuse=s.diffuse, specular=s.specular)]


def _observation(s: Observation) -> list[Perturbation]:
    return [_kind("image_noise", brightness=s.brightness, sigma=s.sigma)]


def _camera(s: Camera) -> list[Perturbation]:
    return [_kind("camera_pose", pos=_words(s.pos), quat=_words(s.quat), camera=s.name)]


def _runtime_move(s: RuntimeMove) -> list[Perturbation]:
    at_step = s.step if s.trigger in ("step", "fixed_step") else 0
    if at_step == 0 and s.trigger in ("step", "fixed_step"):
        raise TetherError(":runtime_move: trigger 'step' needs a (:step N) above 0")
    distance = max(math.hypot(*s.delta_xy), s.min_delta_norm)
    return [_kind("object_move", object=s.object, trigger=s.distance_threshold,
                  fallback_step=s.fallback_step, distance=distance,
                  direction=_words(s.delta_xy), at_step=at_step)]


def _appearance(s: Appearance) -> list[Perturbation]:
    return [_kind("recolour", object=t, rgb=_words(s.rgba[:3])) for t in s.targets]


def _placement(s: Placement) -> list[Perturbation]:
    w, x, y, z = s.target_quat
    if abs(x) > 1e-6 or abs(y) > 1e-6:
        raise TetherError(f":{Placement.key}: tether turns an occluder about the vertical only; "
                          f"target_quat {_words(s.target_quat)} tilts it")
    if s.z_offset:
        raise TetherError(f":{Placement.key}: tether keeps the occluder's height; z_offset "
                          f"{s.z_offset} is not applied")
    return [_kind("occluder", object=t, reference=s.reference,
                  offset=_words(s.offsets_xy[min(i, len(s.offsets_xy) - 1)]),
                  front=_words(s.front_direction), yaw=2 * math.atan2(z, w),
                  scale=_uniform(Placement.key, s.mesh_scale), pin=s.pin_targets,
                  min_distance=s.min_reference_distance, avoid="+".join(s.avoid_targets),
                  avoid_gap=s.min_avoid_distance, between=s.between_object,
                  between_distance=s.min_between_distance,
                  between_shift=_words(s.between_delta_xy))
            for i, t in enumerate(s.targets)]


def _shape(s: Shape) -> list[Perturbation]:
    return [_kind("object_scale", object=s.target, scale=_uniform(Shape.key, s.mesh_scale))]


def _initial_pose(s: InitialPose) -> list[Perturbation]:
    return [_kind("pose_shift", object=s.target, delta=_words(s.delta_xy),
                  min_distance=s.min_delta_norm, yaw=repr(float(s.yaw)))]


for _cls, _fn in ((Lighting, _lighting), (Observation, _observation), (Camera, _camera),
                  (RuntimeMove, _runtime_move), (Appearance, _appearance),
                  (Placement, _placement), (Shape, _shape), (InitialPose, _initial_pose)):
    MAPPINGS.register(_cls.key, _fn)


def perturbations_of(config: PerturbationConfig | None) -> list[Perturbation]:
    """The perturbations that apply `config` (none for None), in the section's order."""
    if config is None:
        return []
    return [p for section in config.active() for p in MAPPINGS.get(section.key)(section)]
