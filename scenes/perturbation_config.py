"""LIBERO-PRO's `(:perturbation_config ...)` section of a BDDL task, read into typed configs.

LIBERO-PRO's robustness task files (7 cases: visual_noise_glare, camera_view_angle,
runtime_object_move, object_texture, view_occlusion, object_shape, initial_pose_position_angle)
end with one section after `(:goal ...)`: a few `(:key value)` facts about the case and eight
subsections, each `(:NAME (:enabled BOOL) (:mode MODE) (:key value ...) ...)`. A subsection acts
when it is enabled and its mode is not `none` (upstream's rule: `enabled` defaults to true, modes
`none`/`default`/`identity`/`disabled`/`off` switch it off); absent keys take upstream's
defaults. Every key and value is checked: an unknown key, a mode tether does not apply, a wrong
number of values, an absurd value or, in an enabled subsection, an undeclared name is a
`TetherError` at file:line:col (disabled ones may name objects the file lacks, as upstream's
files do).

    config = read_problem("task.bddl").perturbation_config   # None without the section
    config.case, config.active()                             # 'object_shape', [Shape(...)]

`tether.scenes.perturbations.bddl_config` maps each active subsection onto perturbation kinds.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

from tether.errors import did_you_mean
from tether.scenes.sexpr import Reader, SList, Token

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Vec4 = tuple[float, float, float, float]
OFF_MODES = ("none", "default", "identity", "disabled", "off")
FACTS = ("case", "category", "source_suite", "source_task", "bddl_only", "detail", "layer")


@dataclass(frozen=True)
class Lighting:
    """Every light set to these levels (upstream `dark_lighting`)."""

    key: ClassVar[str] = "lighting"
    modes: ClassVar[tuple[str, ...]] = ("dark_lighting",)
    ambient: float = 0.01
    diffuse: float = 0.22
    specular: float = 0.02


@dataclass(frozen=True)
class Observation:
    """The policy's images darkened by `brightness` plus Gaussian noise `sigma` (0..255 units)."""

    key: ClassVar[str] = "observation"
    modes: ClassVar[tuple[str, ...]] = ("dark_noise",)
    brightness: float = 0.42
    sigma: float = 24.0


@dataclass(frozen=True)
class Camera:
    """A camera moved to `pos` with orientation `quat` (w x y z), world frame."""

    key: ClassVar[str] = "camera"
    modes: ClassVar[tuple[str, ...]] = ("agentview_angle",)
    name: str = "agentview"
    pos: Vec3 = (0.48, 0.24, 1.62)
    quat: Vec4 = (0.6099232, 0.3594558, 0.3594558, 0.6099232)


@dataclass(frozen=True)
class RuntimeMove:
    """`object` moved by `delta_xy` (at least `min_delta_norm` m) once during the episode: at
    `step` (trigger `step`), or when the gripper comes within `distance_threshold` m of it, else
    at `fallback_step` (trigger `near_grasp`)."""

    key: ClassVar[str] = "runtime_move"
    modes: ClassVar[tuple[str, ...]] = ("qpos_delta_xy",)
    object: str = ""
    step: int = 80
    trigger: str = "step"
    distance_threshold: float = 0.09
    fallback_step: int = 160
    delta_xy: Vec2 = (0.10, 0.04)
    min_delta_norm: float = 0.0
    distance_metric: str = "xyz"


@dataclass(frozen=True)
class Appearance:
    """`targets` painted `rgba`, their material textures off."""

    key: ClassVar[str] = "object_appearance"
    modes: ClassVar[tuple[str, ...]] = ("table_like_material", "rgba")
    targets: tuple[str, ...] = ()
    rgba: Vec4 = (0.58, 0.45, 0.31, 1.0)
    override_material_rgba: bool = True
    disable_material_texture: bool = True
    apply_visible_geom_rgba: bool = False


@dataclass(frozen=True)
class Placement:
    """`targets` (objects of the file, e.g. a book) stood at `reference` + offset toward
    `front_direction`, scaled by `mesh_scale`, and held there every step when `pin_targets`."""

    key: ClassVar[str] = "object_placement"
    modes: ClassVar[tuple[str, ...]] = ("front_occlusion",)
    reference: str = ""
    front_direction: Vec2 = (1.0, 0.0)
    targets: tuple[str, ...] = ()
    offsets_xy: tuple[Vec2, ...] = ((0.0, -0.14),)
    target_quat: Vec4 = (1.0, 0.0, 0.0, 0.0)
    z_offset: float = 0.0
    mesh_scale: Vec3 = (1.0, 1.0, 1.0)
    min_reference_distance: float = 0.0
    pin_targets: bool = False
    between_object: str = ""
    min_between_distance: float = 0.0
    between_delta_xy: Vec2 = (0.14, 0.0)
    avoid_targets: tuple[str, ...] = ()
    min_avoid_distance: float = 0.0


@dataclass(frozen=True)
class Shape:
    """`target`'s meshes scaled by `mesh_scale`."""

    key: ClassVar[str] = "object_shape"
    modes: ClassVar[tuple[str, ...]] = ("mesh_scale",)
    target: str = ""
    mesh_scale: Vec3 = (1.18, 1.18, 1.18)


@dataclass(frozen=True)
class InitialPose:
    """After the reset `target` is shifted by `delta_xy` (at least `min_delta_norm` m) and
    turned to `yaw` radians about the vertical."""

    key: ClassVar[str] = "initial_pose"
    modes: ClassVar[tuple[str, ...]] = ("delta_xy_yaw",)
    target: str = ""
    delta_xy: Vec2 = (0.06, 0.0)
    min_delta_norm: float = 0.0
    yaw: float = math.pi / 4


SECTIONS: dict[str, type] = {c.key: c for c in (Lighting, Observation, Camera, RuntimeMove,
                                                 Appearance, Placement, Shape, InitialPose)}
Section = Lighting | Observation | Camera | RuntimeMove | Appearance | Placement | Shape | \
    InitialPose
# Names that must be objects or fixtures of the file, per section.
_NAMES = {"object", "target", "targets", "reference", "between_object", "avoid_targets"}
_CHOICES = {"trigger": ("step", "fixed_step", "near_grasp", "near_object", "distance"),
            "distance_metric": ("xyz",)}  # tether measures gripper-object distance in 3D
_NON_NEGATIVE = {"ambient", "diffuse", "specular", "brightness", "sigma", "distance_threshold",
                 "min_delta_norm", "min_reference_distance", "min_between_distance",
                 "min_avoid_distance", "step", "fallback_step"}


@dataclass(frozen=True)
class PerturbationConfig:
    """The whole section: the case's facts and each enabled subsection (None when off)."""

    case: str = ""
    category: str = ""
    source_suite: str = ""
    source_task: str = ""
    detail: str = ""
    lighting: Lighting | None = None
    observation: Observation | None = None
    camera: Camera | None = None
    runtime_move: RuntimeMove | None = None
    object_appearance: Appearance | None = None
    object_placement: Placement | None = None
    object_shape: Shape | None = None
    initial_pose: InitialPose | None = None

    def active(self) -> list[Section]:
        """The enabled subsections, in the file's canonical order."""
        return [s for key in SECTIONS if (s := getattr(self, key)) is not None]


def read_perturbation_config(form: SList, r: Reader, declared: set[str]) -> PerturbationConfig:
    """The `(:perturbation_config ...)` form read and checked; `declared` are the file's
    object, fixture and region names (an enabled subsection may name only those)."""
    facts: dict[str, str] = {}
    sections: dict[str, Section | None] = {}
    seen: set[str] = set()
    for item in form.items[1:]:
        if not isinstance(item, SList) or not item.items:
            raise r.error(item, "expected (:key value ...) in :perturbation_config")
        key = _key(r, item)
        if key in seen:
            raise r.error(item, f"':{key}' appears twice in :perturbation_config")
        seen.add(key)
        if key in SECTIONS:
            sections[key] = _section(SECTIONS[key], item, r, declared)
        elif key in FACTS:
            facts[key] = " ".join(r.word(t, "a word") for t in item.items[1:])
        else:
            known = (*FACTS, *SECTIONS)
            raise r.error(item, f"unknown key ':{key}' in :perturbation_config"
                                f"{did_you_mean(key, known)}; tether reads "
                                f"{', '.join(':' + k for k in known)}")
    return PerturbationConfig(**{k: v for k, v in facts.items() if k in
                                 {f.name for f in dataclasses.fields(PerturbationConfig)}},
                              **sections)


def _key(r: Reader, item: SList) -> str:
    head = r.word(item.items[0], "a :key")
    if not head.startswith(":"):
        raise r.error(item, f"expected a key like ':{head}', found '{head}'")
    return head[1:].replace("-", "_")


def _section(cls: type, form: SList, r: Reader, declared: set[str]) -> Section | None:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, object] = {}
    enabled, mode, mode_at = True, "", form
    named: list[tuple[str, Token | SList]] = []  # names that must exist, checked when enabled
    for item in form.items[1:]:
        if not isinstance(item, SList) or not item.items:
            raise r.error(item, f":{cls.key}: expected (:key value ...)")
        key = _key(r, item)
        args = item.items[1:]
        if key == "enabled":
            enabled = _bool(r, _one(r, item, args, key))
        elif key == "mode":
            mode, mode_at = r.word(_one(r, item, args, key), "a mode"), item
        elif key in fields:
            if key in values:
                raise r.error(item, f":{cls.key}: ':{key}' appears twice")
            values[key] = _value(r, item, key, fields[key].type, args)
            if key in _NAMES:
                named += [(r.word(a, "a name"), a) for a in args]
        else:
            known = ("enabled", "mode", *fields)
            raise r.error(item, f":{cls.key} has no key ':{key}'{did_you_mean(key, known)}; "
                                f"its keys: {', '.join(':' + k for k in known)}")
    if not enabled or mode in OFF_MODES:
        return None
    if mode and mode not in cls.modes:
        raise r.error(mode_at, f":{cls.key}: tether does not apply mode '{mode}'"
                               f"{did_you_mean(mode, cls.modes)}; it applies "
                               f"{', '.join(cls.modes)} (or none)")
    for name, tok in named:
        if name not in declared:
            raise r.error(tok, f":{cls.key}: '{name}' is not an object, fixture or region of "
                               f"this task{did_you_mean(name, declared)}")
    required = [k for k in ("target", "targets") if k in fields and not values.get(k)]
    if required:
        raise r.error(form, f":{cls.key} is enabled but names no (:{required[0]} ...)")
    return cls(**values)


def _one(r: Reader, item: SList, args: list, key: str) -> Token | SList:
    if len(args) != 1:
        raise r.error(item, f"':{key}' takes one value, got {len(args)}")
    return args[0]


def _bool(r: Reader, item: Token | SList) -> bool:
    text = r.word(item, "true or false")
    if text not in ("true", "false"):
        raise r.error(item, f"expected true or false, found '{text}'")
    return text == "true"


def _numbers(r: Reader, item: SList, key: str, args: list, n: int) -> tuple[float, ...]:
    if len(args) != n:
        raise r.error(item, f"':{key}' takes {n} numbers, got {len(args)}")
    numbers = tuple(r.number(a) for a in args)
    bad = next((a for a, x in zip(args, numbers, strict=True) if not math.isfinite(x)), None)
    if bad is not None:
        raise r.error(bad, f"':{key}' must be finite")
    return numbers


def _value(r: Reader, item: SList, key: str, typ: str, args: list) -> object:
    if typ in ("float", "int"):
        (x,) = _numbers(r, item, key, args, 1)
        if typ == "int" and x != int(x):
            raise r.error(args[0], f"':{key}' must be a whole number, got {x}")
        if key in _NON_NEGATIVE and x < 0:
            raise r.error(args[0], f"':{key}' must be >= 0, got {x}")
        return int(x) if typ == "int" else x
    if typ == "bool":
        return _bool(r, _one(r, item, args, key))
    if typ.startswith("Vec"):
        values = _numbers(r, item, key, args, int(typ[3]))
        if key in ("mesh_scale",) and min(values) <= 0:
            raise r.error(item, f"':{key}' must be > 0, got {' '.join(map(str, values))}")
        if key in ("quat", "target_quat") and math.hypot(*values) < 1e-6:
            raise r.error(item, f"':{key}' is a zero quaternion")
        if key == "rgba" and not all(0 <= v <= 1 for v in values):
            raise r.error(item, f"':{key}' values must be in 0..1")
        return values
    if typ == "tuple[Vec2, ...]":
        pairs = args[0].items if len(args) == 1 and isinstance(args[0], SList) and all(
            isinstance(a, SList) for a in args[0].items) else args
        out = []
        for pair in pairs:
            if not isinstance(pair, SList):
                raise r.error(pair, f"':{key}' is a list of (x y) pairs")
            out.append(_numbers(r, pair, key, pair.items, 2))
        if not out:
            raise r.error(item, f"':{key}' needs at least one (x y) pair")
        return tuple(out)
    names = tuple(r.word(a, "a name") for a in args)
    if not names:
        raise r.error(item, f"':{key}' needs a value")
    if typ == "str":
        if len(names) != 1:
            raise r.error(item, f"':{key}' takes one value, got {len(names)}")
        if key in _CHOICES and names[0] not in _CHOICES[key]:
            raise r.error(args[0], f"':{key}' is one of {', '.join(_CHOICES[key])}, not "
                                   f"'{names[0]}'{did_you_mean(names[0], _CHOICES[key])}")
        return names[0]
    return names
