"""Parameter types of the tree language: how a YAML value is checked and converted.

Every node parameter and every tree `params:` entry has one of these types. `convert` returns
the typed value or raises `Invalid` with a message that the compiler locates in the file.
Strings `${/key}` become `Ref`s to blackboard keys where a type admits them (entities, vectors),
text checks its `${/key}` placeholders (`tether.blackboard.references` reads both); numbers must
be finite; nothing is ever evaluated as code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.behaviours.primitives import Target
from tether.blackboard.episode import ERROR_CODES, USER_NAMESPACE
from tether.blackboard.references import NAMES, Ref, as_ref, parse_text
from tether.errors import (
    TetherError,
    data_problem,
    did_you_mean,
    finite_problem,
    key_path,
    not_finite,
)

KEY = re.compile(f"/?{NAMES}")


class Invalid(Exception):
    """A value does not fit its type (the message says how)."""


Resolver = Callable[[str], str]


@dataclass(frozen=True)
class Context:
    """What conversion may consult: an entity resolver when a scene is known."""

    resolve: Resolver | None = None


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        shown = f"[{', '.join(_describe(v) for v in value)}]"
        return shown if len(shown) <= 40 else f"a list of {len(value)} items"
    return repr(value)


class Type:
    name = "any"

    def convert(self, value: Any, ctx: Context) -> Any:
        reference(value)  # a malformed `${...` is an error here too
        return plain(value)


class Int(Type):
    name = "int"

    def __init__(self, minimum: int | None = None):
        self.minimum = minimum

    def convert(self, value: Any, ctx: Context) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"expected an integer, got {_describe(value)}")
        if self.minimum is not None and value < self.minimum:
            raise Invalid(f"must be >= {self.minimum}, got {value}")
        return int(value)


class Float(Type):
    name = "float"

    def __init__(self, minimum: float | None = None):
        self.minimum = minimum

    def convert(self, value: Any, ctx: Context) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Invalid(f"expected a number, got {_describe(value)}")
        if not_finite(value):
            raise Invalid(finite_problem(value))
        if self.minimum is not None and value < self.minimum:
            raise Invalid(f"must be >= {self.minimum}, got {value}")
        return float(value)


class Bool(Type):
    name = "bool"

    def convert(self, value: Any, ctx: Context) -> bool:
        if not isinstance(value, bool):
            raise Invalid(f"expected true or false, got {_describe(value)}")
        return value


class Str(Type):
    name = "str"

    def convert(self, value: Any, ctx: Context) -> str:
        if not isinstance(value, str):
            raise Invalid(f"expected a string, got {_describe(value)}")
        return value


class Text(Str):
    """A string whose `${/key}` placeholders are filled in each time the node uses it."""

    def convert(self, value: Any, ctx: Context) -> str:
        text = super().convert(value, ctx)
        try:
            parse_text(text)
        except TetherError as exc:
            raise Invalid(str(exc)) from None
        return text


class Choice(Type):
    def __init__(self, *choices: str):
        self.choices = choices
        self.name = "|".join(choices)

    def convert(self, value: Any, ctx: Context) -> str:
        if value not in self.choices:
            raise Invalid(f"expected one of {', '.join(self.choices)}, got {_describe(value)}"
                          + did_you_mean(str(value), self.choices))
        return value


class Mapping(Type):
    """A mapping of names (identifiers) to plain values."""

    name = "mapping"

    def convert(self, value: Any, ctx: Context) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise Invalid(f"expected a mapping of names to values, got {_describe(value)}")
        for key in value:
            if not isinstance(key, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
                raise Invalid(f"expected names (letters, digits, _) as keys, got {_describe(key)}")
        return plain(value)


class Vec3(Type):
    """Three numbers; `${/key}` reads a vector from the blackboard at run time."""

    name = "vec3"

    def convert(self, value: Any, ctx: Context) -> tuple[float, float, float] | Ref:
        if (ref := reference(value)) is not None:
            return ref
        if (not isinstance(value, list | tuple) or len(value) != 3
                or any(isinstance(v, bool) or not isinstance(v, int | float) for v in value)):
            raise Invalid(f"expected a list of 3 numbers [x, y, z], got {_describe(value)}")
        for axis, v in zip("xyz", value, strict=True):
            if not_finite(v):
                raise Invalid(f"{axis} {finite_problem(v)}")
        return tuple(float(v) for v in value)  # type: ignore[return-value]


class Entity(Type):
    """An object, fixture or region name (or alias); `${/key}` reads the name at run time."""

    name = "entity"

    def convert(self, value: Any, ctx: Context) -> str | Ref:
        if (ref := reference(value)) is not None:  # also one passed in through `with:`
            return ref
        if not isinstance(value, str) or not value:
            raise Invalid(f"expected an object name, got {_describe(value)}")
        return ctx.resolve(value) if ctx.resolve else value


class Entities(Type):
    """A list of entity names (each as `Entity` reads it)."""

    name = "entities"

    def convert(self, value: Any, ctx: Context) -> tuple[str | Ref, ...]:
        if not isinstance(value, list | tuple):
            raise Invalid(f"expected a list of object names, got {_describe(value)}")
        return tuple(Entity().convert(v, ctx) for v in value)


class Key(Type):
    """A blackboard key; relative keys live under /user."""

    name = "key"

    def convert(self, value: Any, ctx: Context) -> str:
        if not isinstance(value, str) or not KEY.fullmatch(value):
            raise Invalid(f"expected a blackboard key like /user/attempts, got {_describe(value)}")
        return value if value.startswith("/") else f"{USER_NAMESPACE}/{value}"


class ErrorCode(Type):
    name = "error code"

    def convert(self, value: Any, ctx: Context) -> str:
        if value not in ERROR_CODES:
            raise Invalid(f"unknown error code {_describe(value)}"
                          + did_you_mean(str(value), ERROR_CODES))
        return value


AT = Choice("center", "top", "bottom", "grasp", "grasp_clear", "grasp_turned", "grasp_handle",
            "grasp_square", "slot", "door", "joint")


class TargetType(Type):
    """`[x, y, z]`, `{object, offset, at, carrying, rise, closing, avoid, room, clear_of}` or
    `{relative: [dx, dy, dz], along, closing}`."""

    name = "target"
    FIELDS = ("object", "offset", "at", "carrying", "rise", "closing", "avoid", "room", "clear_of")
    RELATIVE = ("relative", "along", "closing")

    def convert(self, value: Any, ctx: Context) -> Target:
        if isinstance(value, list | tuple):  # a tuple is a vec3 param's value
            return Target(world=VEC3.convert(value, ctx))
        if not isinstance(value, dict):
            raise Invalid("expected [x, y, z], {object: NAME, offset: [dx, dy, dz]} or "
                          f"{{relative: [dx, dy, dz]}}, got {_describe(value)}")
        if "relative" in value:
            for key in value:
                if key not in self.RELATIVE:
                    raise Invalid(f"a relative target has only the keys {', '.join(self.RELATIVE)}"
                                  f", not '{key}'")
            return Target(relative=VEC3.convert(value["relative"], ctx),
                          along=ENTITY.convert(value["along"], ctx) if "along" in value else None,
                          closing=BOOL.convert(value.get("closing", False), ctx))
        for key in value:
            if key not in self.FIELDS:
                raise Invalid(f"unknown target key '{key}'" + did_you_mean(key, self.FIELDS))
        if "object" not in value:
            raise Invalid("an object-relative target needs 'object'")
        return Target(
            object=ENTITY.convert(value["object"], ctx),
            offset=VEC3.convert(value.get("offset", [0, 0, 0]), ctx),
            at=AT.convert(value.get("at", "center"), ctx),
            carrying=ENTITY.convert(value["carrying"], ctx) if "carrying" in value else None,
            rise=Float(0.0).convert(value.get("rise", 0.0), ctx),
            closing=BOOL.convert(value.get("closing", False), ctx),
            avoid=BOOL.convert(value.get("avoid", False), ctx),
            room=self._room(value["room"], value) if "room" in value else None,
            clear_of=self._clear_of(value["clear_of"], value, ctx) if "clear_of" in value else None,
        )

    @staticmethod
    def _clear_of(value: Any, target: dict, ctx: Context) -> str | Any:
        """An entity whose sliding part the spot `room` finds keeps clear of."""
        if "room" not in target:
            raise Invalid("'clear_of' keeps the spot 'room' finds off a drawer's way: it needs "
                          "'room'")
        return ENTITY.convert(value, ctx)

    @staticmethod
    def _room(value: Any, target: dict) -> tuple[tuple[float, float], tuple[float, float]]:
        """`[[x0, y0], [x1, y1]]`: a rectangle's low and high corners (m), for a carry."""
        if "carrying" not in target:
            raise Invalid("'room' is where the hand takes a carried object again: it needs "
                          "'carrying'")
        if not isinstance(value, list | tuple) or len(value) != 2 or any(
                not isinstance(c, list | tuple) or len(c) != 2
                or any(isinstance(v, bool) or not isinstance(v, int | float) for v in c)
                for c in value):
            raise Invalid(f"'room' expects [[x0, y0], [x1, y1]] (m), got {_describe(value)}")
        for corner, c in zip(("low", "high"), value, strict=True):
            for axis, v in zip("xy", c, strict=True):
                if not_finite(v):
                    raise Invalid(f"'room' {corner} corner's {axis} {finite_problem(v)}")
        (x0, y0), (x1, y1) = value
        if x0 >= x1 or y0 >= y1:
            raise Invalid(f"'room' needs its low corner below its high one, got {_describe(value)}")
        return (float(x0), float(y0)), (float(x1), float(y1))


def reference(value: Any) -> Ref | None:
    """The `Ref` a value is when it is exactly `${/key}`; `Invalid` for a malformed one."""
    try:
        return as_ref(value)
    except TetherError as exc:
        raise Invalid(str(exc)) from None


def plain(value: Any) -> Any:
    """A YAML value as plain Python (dicts, lists, scalars); `Invalid` for a non-finite number."""
    if (problem := data_problem(value)) is not None:
        path, message = problem
        raise Invalid(f"{key_path(path)} {message}" if path else message)
    return _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    for kind in (bool, int, float, str):  # ruamel's ScalarInt & co. (a `0` keeps its format)
        if isinstance(value, kind):
            return kind(value)
    return value


INT, FLOAT, BOOL, STR, TEXT, VEC3 = Int(), Float(), Bool(), Str(), Text(), Vec3()
ENTITY, KEY_TYPE, ERROR_CODE, TARGET, ANY = Entity(), Key(), ErrorCode(), TargetType(), Type()
MAPPING, ENTITIES = Mapping(), Entities()
PARAM_TYPES: dict[str, Type] = {t.name: t for t in (INT, FLOAT, BOOL, STR, VEC3, ENTITY)}
