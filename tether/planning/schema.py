"""The JSON Schema of plans, generated from the node registry, the predicates and the library.

Nothing here lists node types by hand: every `NodeType` in `tether.trees.nodes.NODE_TYPES` becomes
one alternative of `$defs/node` (its body built from its `Spec`s), every tree file of the library
one alternative of `$defs/subtree` (its `with:` from the file's `params:`), so a node type or a
library tree added tomorrow is in the schema, and in the prompt, without a change here.

    plan_schema()                       # the whole plan document
    plan_schema(entities=[...])         # entity-typed strings restricted to a scene's names

Parameter types map to JSON Schema through `TYPE_SCHEMAS` (keyed by the type's class); a type
without an entry is accepted as any JSON value and described by its name. The schema is what an
LLM is shown and what a constrained decoder may enforce; the compiler remains the judge of a
plan (its messages are exact, the schema's are not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tether.blackboard.episode import ERROR_CODES
from tether.scenes.predicates import ENTITY as ENTITY_ARG
from tether.scenes.predicates import PREDICATES
from tether.trees.compiler import LIBRARY, read_tree_file
from tether.trees.nodes import COMPOSITE, DECORATOR, NODE_TYPES, SUBTREE, NodeType
from tether.trees.values import (
    Bool,
    Choice,
    Entity,
    ErrorCode,
    Float,
    Int,
    Key,
    Mapping,
    Str,
    TargetType,
    Type,
    Vec3,
)

SCHEMA_ID = "https://tether.dev/schemas/plan.json"
REF_STRING = {"type": "string", "pattern": r"^\$\{/[A-Za-z0-9_/.\-]+\}$"}


def _number(t: Int | Float, kind: str) -> dict:
    out: dict[str, Any] = {"type": kind}
    if t.minimum is not None:
        out["minimum"] = t.minimum
    return out


def _vec3(_: Type, __: list[str] | None = None) -> dict:
    return {"anyOf": [{"type": "array", "items": {"type": "number"}, "minItems": 3,
                       "maxItems": 3}, REF_STRING]}


def _entity(_: Type, entities: list[str] | None = None) -> dict:
    if entities:
        return {"anyOf": [{"type": "string", "enum": entities}, REF_STRING]}
    return {"type": "string", "description": "an object, fixture or region name"}


def _target(_: Type, entities: list[str] | None = None) -> dict:
    return {"anyOf": [
        _vec3(_),
        {"type": "object", "required": ["object"], "additionalProperties": False,
         "properties": {"object": _entity(_, entities), "offset": _vec3(_),
                        "at": {"enum": ["center", "top", "bottom", "grasp"]},
                        "carrying": _entity(_, entities)}},
        {"type": "object", "required": ["relative"], "additionalProperties": False,
         "properties": {"relative": _vec3(_)}},
    ]}


TYPE_SCHEMAS: dict[type, Callable[..., dict]] = {
    Int: lambda t, e=None: _number(t, "integer"),
    Float: lambda t, e=None: _number(t, "number"),
    Bool: lambda t, e=None: {"type": "boolean"},
    Str: lambda t, e=None: {"type": "string"},
    Choice: lambda t, e=None: {"enum": list(t.choices)},
    Mapping: lambda t, e=None: {"type": "object"},
    Vec3: _vec3,
    Entity: _entity,
    Key: lambda t, e=None: {"type": "string", "pattern": r"^/?[A-Za-z_][A-Za-z0-9_/]*$"},
    ErrorCode: lambda t, e=None: {"enum": list(ERROR_CODES)},
    TargetType: _target,
}


def type_schema(t: Type, entities: list[str] | None = None) -> dict:
    """The JSON Schema of one parameter type (any value for a type without an entry)."""
    make = TYPE_SCHEMAS.get(type(t))
    return make(t, entities) if make else {"description": f"a {t.name} value"}


def _predicate_args(entities: list[str] | None) -> dict[str, dict]:
    args: dict[str, dict] = {}
    for pred in PREDICATES.values():
        for p in pred.params:
            args[p.name] = (_entity(None, (entities or []) + ["gripper"]) if entities
                            else {"type": "string"}) if p.kind == ENTITY_ARG \
                else {"type": "number"}
    return args


def _node_body(nt: NodeType, entities: list[str] | None) -> dict:
    props = {k: {**type_schema(s.type, entities), "description": s.doc} if s.doc
             else type_schema(s.type, entities) for k, s in nt.params.items()}
    props["name"] = {"type": "string"}
    required = [k for k, s in nt.params.items() if s.required]
    if nt.predicate:
        props["predicate"] = {"enum": sorted(PREDICATES)}
        props.update(_predicate_args(entities))
        required.append("predicate")
    node = {"$ref": "#/$defs/node"}
    if nt.kind == COMPOSITE:
        children = {"type": "array", "items": node, "minItems": 1}
        return {"anyOf": [children, {"type": "object", "required": ["children"],
                                     "properties": {**props, "children": children},
                                     "additionalProperties": False}]}
    if nt.kind == DECORATOR:
        body = {"type": "object", "required": ["child", *required],
                "properties": {**props, "child": node}, "additionalProperties": False}
        return body if required else {"anyOf": [body, node]}
    body = {"type": "object", "required": required, "properties": props,
            "additionalProperties": False}
    if nt.primary is not None:
        return {"anyOf": [body, props[nt.primary]]}
    return body


def _subtrees(entities: list[str] | None, library: Path) -> list[dict]:
    out = []
    for path in sorted(library.glob("*.yaml")):
        tf = read_tree_file(path)
        props = {p.name: {**type_schema(p.type, entities), "description": p.doc}
                 for p in tf.params.values()}
        required = [p.name for p in tf.params.values() if p.required]
        out.append({
            "type": "object", "description": " ".join(tf.doc.split()),
            "required": [SUBTREE, *(["with"] if required else [])],
            "properties": {SUBTREE: {"const": tf.name}, "name": {"type": "string"},
                           "with": {"type": "object", "properties": props,
                                    "required": required, "additionalProperties": False}},
            "additionalProperties": False})
    return out


def node_schemas(entities: list[str] | None = None) -> dict[str, dict]:
    """One schema per node type: `{TYPE: body, name?}`."""
    return {name: {"type": "object", "description": nt.doc, "required": [name],
                   "properties": {name: _node_body(nt, entities), "name": {"type": "string"}},
                   "additionalProperties": False}
            for name, nt in NODE_TYPES.items()}


def plan_schema(entities: Iterable[str] | None = None, library: Path = LIBRARY) -> dict:
    """The JSON Schema of a plan document (see docs/planner.md, "The plan format")."""
    names = sorted(entities) if entities is not None else None
    predicate = {"type": "object", "required": ["predicate"],
                 "properties": {"predicate": {"enum": sorted(PREDICATES)},
                                **_predicate_args(names)}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "tether plan",
        "type": "object",
        "required": ["subtasks"],
        "additionalProperties": False,
        "properties": {
            "instruction": {"type": "string"},
            "subtasks": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["goal", "steps"], "additionalProperties": False,
                "properties": {
                    "goal": {"type": "string", "description": "what this sub-task achieves"},
                    "expect": {"type": "array", "items": predicate,
                               "description": "predicates that hold when it is done"},
                    "steps": {"type": "array", "minItems": 1,
                              "items": {"$ref": "#/$defs/node"}}}}},
        },
        "$defs": {
            "node": {"oneOf": [*({"$ref": f"#/$defs/{n}"} for n in NODE_TYPES),
                               {"$ref": "#/$defs/subtree"}]},
            "subtree": {"oneOf": _subtrees(names, library)},
            **node_schemas(names),
        },
    }
