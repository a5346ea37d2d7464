"""Validate and compile tree files into real py_trees trees.

A tree file has a root node and may declare typed `params` (with defaults) and the `goal`
predicates whose arguments bind them. Nodes are mappings with one node-type key (see
`tether.trees.nodes`) and optionally `name:`; `subtree: NAME` (with `with:` bindings) includes
another file. `{param}` in a value is replaced by the parameter's value; `${/key}` reads a
blackboard key at run time. Compilation checks everything before anything runs (node types, keys,
parameter types, required parameters, object names when a scene is known, subtree cycles) and
reports every problem found as `file:line:column: key: message`, with the closest valid name when
one is near. A tree nests nodes at most `MAX_DEPTH` deep (subtrees included). Each compiled node
keeps `origin` (`file:line` of its node type in its file) and `node_type`, so an exception raised
while it runs is reported there (`tether.errors.TickError`).

`compile_tree(path)` compiles a file; `compile_document(mapping, origin)` a tree-file mapping
held in memory (a plan's tree) and `compile_node(value, where)` one node of one (a plan's step),
whose problems are located by key path from a logical origin (`Where.logical`), no file written.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import py_trees
import yaml

from tether.behaviours.conditions import PredicateCall
from tether.blackboard.references import Ref
from tether.errors import TetherError, data_problem, did_you_mean, key_path
from tether.scenes.predicates import ENTITY as ENTITY_ARG
from tether.scenes.predicates import PREDICATES
from tether.trees.nodes import (
    ALL_NODE_NAMES,
    COMPOSITE,
    DECORATOR,
    NODE_TYPES,
    REQUIRED,
    SUBTREE,
    NodeType,
)
from tether.trees.source import TreeError, Where, display_path, load_source, read_text
from tether.trees.values import ENTITY, FLOAT, PARAM_TYPES, TARGET, Context, Invalid, Type

LIBRARY = Path(__file__).parent / "library"
TOP_KEYS = ("tree", "doc", "params", "goal", "root")
PARAM_KEYS = ("type", "default", "doc", "from_goal")
WHOLE_PARAM = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}$")
INLINE_PARAM = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
BAD = object()  # a value whose problem has been recorded
MAX_DEPTH = 100  # nodes inside each other, subtrees included; real trees nest a dozen or so
PARSED = 64  # parsed tree files a process keeps (more than the library holds)


@dataclass(frozen=True)
class Param:
    """A parameter a tree file declares."""

    name: str
    type: Type
    default: Any
    doc: str
    from_goal: int | None
    where: Where

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass
class TreeFile:
    path: Path | None  # None: a document held in memory
    name: str
    doc: str
    goal: tuple[str, ...]
    params: dict[str, Param]
    root: Any
    where: Where


@dataclass
class CompiledTree:
    """A compiled root, the file it came from, and the values its params were bound to."""

    root: py_trees.behaviour.Behaviour
    file: TreeFile
    bindings: dict[str, Any]
    nodes: int = field(default=0)


def read_tree_file(path: Path) -> TreeFile:
    """Parse a tree file and check its top level and its `params:` declarations. A process
    parses a file's text once: an episode compiles the same library files as the one before."""
    return _parsed(path, str(path.resolve()), display_path(path), read_text(path))


@functools.lru_cache(maxsize=PARSED)
def _parsed(path: Path, resolved: str, shown: str, text: str) -> TreeFile:
    """`path` parsed from `text` (`resolved` and `shown` key it: the same path may name another
    file from another working directory)."""
    return tree_file_of(*load_source(path, text), path)


def tree_file_of(data: Any, where: Where, path: Path | None = None) -> TreeFile:
    """Check the top level and the `params:` declarations of a tree file's mapping (`path`:
    the file it was read from; None for one held in memory, named by `where`)."""
    problems: list[str] = []
    if not isinstance(data, dict):
        found = "empty" if data is None else "a list" if isinstance(data, list) else "a scalar"
        raise TreeError([where.error(f"a tree file is a mapping with a 'root:' node; this one is "
                                     f"{found}")])
    for key in data:
        if key not in TOP_KEYS:
            problems.append(where.of_key(data, key).error(
                f"unknown top-level key '{key}'" + did_you_mean(key, TOP_KEYS)))
    if "root" not in data:
        problems.append(where.error("missing 'root:' (the tree's root node)"))
    params: dict[str, Param] = {}
    declared = data.get("params") or {}
    pwhere = where.of_key(data, "params")
    if not isinstance(declared, dict):
        problems.append(pwhere.error("expected a mapping of parameter declarations"))
        declared = {}
    for pname, decl in declared.items():
        w = pwhere.of_key(declared, pname)
        try:
            params[pname] = _read_param(str(pname), decl, w)
        except Invalid as exc:
            problems.append(w.error(str(exc)))
    goal = data.get("goal") or []
    if isinstance(goal, str):
        goal = [goal]
    gwhere = where.of_key(data, "goal")
    if not isinstance(goal, list) or not all(isinstance(g, str) for g in goal):
        problems.append(gwhere.error("expected a predicate name or a list of them, e.g. [on, in]"))
        goal = []
    for g in goal:
        if g not in PREDICATES:
            problems.append(gwhere.error(f"unknown predicate '{g}'" + did_you_mean(g, PREDICATES)))
    if problems:
        raise TreeError(problems)
    name = data.get("tree") or (path.stem if path else where.file)
    return TreeFile(path=path, name=str(name), doc=str(data.get("doc", "")), goal=tuple(goal),
                    params=params, root=data["root"], where=where.of_key(data, "root"))


def _read_param(name: str, decl: Any, where: Where) -> Param:
    if isinstance(decl, str):
        decl = {"type": decl}
    if not isinstance(decl, dict):
        raise Invalid("expected a type name or {type, default, doc, from_goal}")
    for key in decl:
        if key not in PARAM_KEYS:
            raise Invalid(f"unknown key '{key}' in a parameter declaration"
                          + did_you_mean(key, PARAM_KEYS))
    tname = decl.get("type")
    if tname not in PARAM_TYPES:
        raise Invalid(f"unknown parameter type '{tname}' (one of {', '.join(PARAM_TYPES)})"
                      + did_you_mean(str(tname), PARAM_TYPES))
    ptype = PARAM_TYPES[tname]
    default = REQUIRED
    if "default" in decl:
        try:
            default = ptype.convert(decl["default"], Context())
        except Invalid as exc:
            raise Invalid(f"default: {exc}") from None
    from_goal = decl.get("from_goal")
    if from_goal is not None and (isinstance(from_goal, bool) or not isinstance(from_goal, int)
                                  or from_goal < 0):
        raise Invalid("from_goal is the 1-based position of a goal argument (0: the predicate)")
    return Param(name, ptype, default, str(decl.get("doc", "")), from_goal, where)


def parse_binding(text: str) -> tuple[str, Any]:
    """`KEY=VALUE` from the command line; VALUE is read as a YAML scalar or list."""
    if "=" not in text:
        raise TetherError(f"--with expects KEY=VALUE, got '{text}'")
    key, raw = text.split("=", 1)
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        return key.strip(), raw
    if (problem := data_problem(value)) is not None:
        path, message = problem
        raise TetherError(f"--with {key_path([key.strip(), *path])}: {message}")
    return key.strip(), value


class Compiler:
    """Compiles one tree file (and the subtrees it includes), collecting every problem."""

    def __init__(self, ctx: Context, here: Path | None = None):
        self.ctx = ctx
        self.here = here  # where a document held in memory finds subtrees (else the library)
        self.problems: list[str] = []
        self.count = 0
        self.files: dict[Path, TreeFile] = {}  # parsed once, however often they are included
        self.depth = 0  # of the node being compiled

    # --- files and parameters -----------------------------------------------------------
    def bind(self, tf: TreeFile, given: dict[str, Any], where: Where,
             marks: Any = None) -> dict[str, Any] | None:
        """Typed values for every parameter of `tf` from `given`, defaults, or errors.

        A problem with one given value is located at its key in `marks` (the `with:` mapping)
        when there is one, else at `where`.
        """
        values: dict[str, Any] = {}
        ok = True
        for key, raw in given.items():
            kwhere = where.of_key(marks, key) if marks is not None else where
            if key not in tf.params:
                self.problems.append(kwhere.error(
                    f"'{tf.name}' has no parameter '{key}'" + did_you_mean(key, tf.params)
                    + (f"; its parameters: {', '.join(tf.params)}" if tf.params else "")))
                ok = False
                continue
            try:
                values[key] = raw if isinstance(raw, Ref) else tf.params[key].type.convert(
                    raw, self.ctx)
            except (Invalid, TetherError) as exc:
                self.problems.append(kwhere.error(f"parameter '{key}' of '{tf.name}': {exc}"))
                ok = False
        for p in tf.params.values():
            if p.name not in values and p.name not in given:
                if p.required:
                    self.problems.append(where.error(
                        f"missing required parameter '{p.name}' of '{tf.name}'"
                        + (f" ({p.doc})" if p.doc else "")))
                    ok = False
                else:
                    values[p.name] = p.default
        return values if ok else None

    def compile_file(self, path: Path, given: dict[str, Any], where: Where,
                     stack: tuple[Path, ...] = (),
                     marks: Any = None) -> py_trees.behaviour.Behaviour | None:
        resolved = path.resolve()
        if resolved in stack:
            chain = " -> ".join(display_path(p) for p in (*stack, resolved))
            self.problems.append(where.error(f"cyclic subtree: {chain}"))
            return None
        try:
            tf = self.files.get(resolved) or read_tree_file(path)
        except TreeError as exc:
            self.problems.extend(exc.problems)
            return None
        self.files[resolved] = tf
        return self.compile_parsed(tf, given, where, (*stack, resolved), marks)

    def compile_parsed(self, tf: TreeFile, given: dict[str, Any], where: Where,
                       stack: tuple[Path, ...],
                       marks: Any = None) -> py_trees.behaviour.Behaviour | None:
        """Bind `tf`'s params and compile its root (`stack`: the files it is included from,
        ending with its own)."""
        bindings = self.bind(tf, given, where, marks)
        if bindings is None:
            return None
        root = self.node(tf.root, tf.where, bindings, stack)
        if root is not None:
            shown = display_path(tf.path) if tf.path else tf.where.file
            root.tree_file = shown  # type: ignore[attr-defined]
            root.bindings = bindings  # type: ignore[attr-defined]  # the file's params, bound
        return root

    # --- nodes ------------------------------------------------------------------------
    def node(self, value: Any, where: Where, bindings: dict[str, Any],
             stack: tuple[Path, ...]) -> py_trees.behaviour.Behaviour | None:
        """Compile one node (and its children), at most `MAX_DEPTH` nodes below the root."""
        if self.depth == MAX_DEPTH:  # located by line and column: the key path is that long
            self.problems.append(replace(where, key="").error(
                f"nodes nest more than {MAX_DEPTH} deep here (subtrees included)"))
            return None
        self.depth += 1
        try:
            return self.checked_node(value, where, bindings, stack)
        finally:
            self.depth -= 1

    def checked_node(self, value: Any, where: Where, bindings: dict[str, Any],
                     stack: tuple[Path, ...]) -> py_trees.behaviour.Behaviour | None:
        if not isinstance(value, dict):
            self.problems.append(where.error(
                "expected a node: a mapping with one node type, e.g. {wait: 10}"))
            return None
        types = [k for k in value if k in NODE_TYPES or k == SUBTREE]
        extra = [k for k in value if k not in types and k not in ("name", "with")]
        if len(types) != 1:
            if extra:
                bad = extra[0]
                self.problems.append(where.of_key(value, bad).error(
                    f"unknown node type '{bad}'" + did_you_mean(str(bad), ALL_NODE_NAMES)))
            elif types:
                self.problems.append(where.error(
                    f"a node has exactly one type, found {', '.join(types)}"))
            else:
                self.problems.append(where.error(
                    f"no node type (one of {', '.join(ALL_NODE_NAMES)})"))
            return None
        kind = types[0]
        for key in extra:
            if kind in NODE_TYPES and key in NODE_TYPES[kind].params:
                hint = f"'{key}' is a parameter of {kind}: write it inside '{kind}:'"
            else:
                hint = "a node takes only 'name'" + (" and 'with'" if kind == SUBTREE else "") + \
                    " beside its type"
            self.problems.append(where.of_key(value, key).error(
                f"unknown key '{key}' beside '{kind}' ({hint})"))
        if "with" in value and kind != SUBTREE:
            self.problems.append(where.of_key(value, "with").error(
                "'with' binds a subtree's parameters; this node is not a subtree"))
        if extra:
            return None
        name = value.get("name")
        if name is not None and not isinstance(name, str):
            self.problems.append(where.of_key(value, "name").error("a node name is a string"))
            return None
        if name is not None:
            name = self.located(name, bindings, where.of_key(value, "name"))
            if name is BAD:
                return None
        nwhere = where.of_key(value, kind, f"{where.key}.{kind}" if where.key else kind)
        body = value[kind]
        if self.named_inside(kind, body):
            if name is not None:
                self.problems.append(nwhere.of_key(body, "name").error(
                    "the node is named twice (beside and inside its type)"))
                return None
            name = self.located(body["name"], bindings, nwhere.of_key(body, "name"))
            if name is BAD:
                return None
        if kind == SUBTREE:
            built = self.subtree(value, nwhere, where, name, bindings, stack)
        else:
            built = self.typed(NODE_TYPES[kind], body, nwhere, name, bindings, stack)
        if built is not None:
            built.origin = nwhere.place()  # type: ignore[attr-defined]
            built.node_type = kind  # type: ignore[attr-defined]
            self.count += 1
        return built

    @staticmethod
    def named_inside(kind: str, body: Any) -> bool:
        """Whether `name:` sits inside the node's body (a decorator's only with `child:`)."""
        nt = NODE_TYPES[kind] if kind in NODE_TYPES else None
        return (nt is not None and isinstance(body, dict) and "name" in body
                and (nt.kind != DECORATOR or "child" in body))

    def subtree(self, value: dict, nwhere: Where, where: Where, name: str | None,
                bindings: dict[str, Any],
                stack: tuple[Path, ...]) -> py_trees.behaviour.Behaviour | None:
        ref = value[SUBTREE]
        if not isinstance(ref, str):
            self.problems.append(nwhere.error("expected the name of a tree file"))
            return None
        path = self.find(ref, stack[-1].parent if stack else self.here, nwhere)
        if path is None:
            return None
        given = value.get("with") or {}
        wwhere = where.of_key(value, "with")
        if not isinstance(given, dict):
            self.problems.append(wwhere.error("expected a mapping of parameter values"))
            return None
        marks = given
        given = {str(k): self.located(v, bindings, wwhere.of_key(marks, k))
                 for k, v in marks.items()}
        if any(v is BAD for v in given.values()):
            return None
        root = self.compile_file(path, given, wwhere if "with" in value else nwhere, stack, marks)
        if root is None:
            return None
        if name:
            root.name = name
        return root

    def find(self, ref: str, here: Path | None, where: Where) -> Path | None:
        folders = (LIBRARY,) if here is None else (here, LIBRARY)
        for folder in folders:
            for candidate in (folder / ref, folder / f"{ref}.yaml"):
                if candidate.is_file():
                    return candidate
        known = sorted({p.stem for folder in folders for p in folder.glob("*.yaml")})
        self.problems.append(where.error(
            f"no tree file '{ref}' {'in' if here is None else 'next to this file or in'} the "
            "library" + did_you_mean(ref, known)))
        return None

    def typed(self, nt: NodeType, body: Any, where: Where, name: str | None,
              bindings: dict[str, Any],
              stack: tuple[Path, ...]) -> py_trees.behaviour.Behaviour | None:
        if nt.kind == COMPOSITE:
            return self.composite(nt, body, where, name, bindings, stack)
        if nt.kind == DECORATOR:
            return self.decorator(nt, body, where, name, bindings, stack)
        return self.leaf(nt, body, where, name, bindings)

    def composite(self, nt: NodeType, body: Any, where: Where, name: str | None,
                  bindings: dict[str, Any], stack: tuple[Path, ...]):
        params_body: dict = {}
        if isinstance(body, list):
            children_raw, cwhere = body, where
        elif isinstance(body, dict) and "children" in body:
            children_raw, cwhere = body["children"], where.of_key(body, "children")
            params_body = {k: v for k, v in body.items() if k not in ("children", "name")}
        else:
            self.problems.append(where.error(
                "expected a list of children, or a mapping with 'children:'"))
            return None
        if not isinstance(children_raw, list) or not children_raw:
            self.problems.append(cwhere.error("a composite needs a non-empty list of children"))
            return None
        params = self.params(nt, params_body, body if isinstance(body, dict) else None, where,
                             bindings)
        children = [self.node(c, cwhere.of_item(children_raw, i), bindings, stack)
                    for i, c in enumerate(children_raw)]
        if params is None or any(c is None for c in children):
            return None
        if "success_on" in params:
            params["success_on"] = self.success_on(params["success_on"], children, where, body)
            if params["success_on"] is None:
                return None
        return self.build(nt, where, name or nt.name, children, **params)

    def success_on(self, value: Any, children: list, where: Where, body: Any):
        if value in ("all", "one"):
            return value
        names = {c.name: c for c in children}
        w = where.of_key(body, "success_on")
        if not isinstance(value, list) or not value:
            self.problems.append(w.error("expected all, one, or a list of child names"))
            return None
        missing = [v for v in value if v not in names]
        if missing:
            self.problems.append(w.error(f"no child named '{missing[0]}'"
                                         + did_you_mean(str(missing[0]), names)))
            return None
        return [names[v] for v in value]

    def decorator(self, nt: NodeType, body: Any, where: Where, name: str | None,
                  bindings: dict[str, Any], stack: tuple[Path, ...]):
        if not isinstance(body, dict):
            self.problems.append(where.error("expected {child: NODE}" + (
                f" with {', '.join(nt.params)}" if nt.params else "")))
            return None
        if "child" not in body:
            if nt.params or nt.predicate:
                self.problems.append(where.error("missing 'child:' (the decorated node)"))
                return None
            body = {"child": body}
        params = self.params(nt, {k: v for k, v in body.items() if k not in ("child", "name")},
                             body, where, bindings)
        child = self.node(body["child"], where.of_key(body, "child"), bindings, stack)
        if params is None or child is None:
            return None
        if nt.name == "timeout" and (params["steps"] is None) == (params["seconds"] is None):
            self.problems.append(where.error("timeout takes exactly one of 'steps' or 'seconds'"))
            return None
        return self.build(nt, where, name or self.label(nt, params), child, **params)

    def leaf(self, nt: NodeType, body: Any, where: Where, name: str | None,
             bindings: dict[str, Any]):
        marks = body
        if not isinstance(body, dict):
            if nt.primary is None:
                self.problems.append(where.error(
                    f"expected a mapping of parameters ({', '.join(nt.params)})"))
                return None
            body = {nt.primary: body}
        elif nt.primary in nt.params and nt.params[nt.primary].type is TARGET \
                and nt.primary not in body:
            # `move_to: {object: bowl, offset: [..], tolerance: 0.02}`: the keys that are not the
            # node's own parameters make up the target.
            own = {k: v for k, v in body.items() if k in nt.params or k == "name"}
            rest = {k: v for k, v in body.items() if k not in own}
            body = {**own, nt.primary: rest} if rest else own
        params = self.params(nt, {k: v for k, v in body.items() if k != "name"}, marks, where,
                             bindings)
        if params is None:
            return None
        return self.build(nt, where, name or self.label(nt, params), **params)

    def build(self, nt: NodeType, where: Where, *args: Any, **params: Any
              ) -> py_trees.behaviour.Behaviour | None:
        """Build the py_trees node; it keeps its parameters as `.params` (for the trace). A
        node's own objection (parameters that do not go together) is a problem at `where`."""
        try:
            built = nt.build(*args, **params)
        except TetherError as exc:
            self.problems.append(where.error(str(exc)))
            return None
        built.params = params  # type: ignore[attr-defined]
        return built

    def label(self, nt: NodeType, params: dict) -> str:
        return nt.label(params) if nt.label else nt.name

    def params(self, nt: NodeType, body: dict, marks: Any, where: Where,
               bindings: dict[str, Any]) -> dict[str, Any] | None:
        """Check and convert a node's parameters (and, for predicate nodes, the predicate's)."""
        ok = True
        out: dict[str, Any] = {}
        specs = dict(nt.params)
        pred = None
        if nt.predicate:
            pred = self.predicate(body, marks, where, bindings)
            if pred is None:
                return None
        for key, raw in body.items():
            if key == "predicate" and nt.predicate:
                continue
            kwhere = where.of_key(marks, key)
            if pred is not None and key in {p.name for p in PREDICATES[pred.predicate].params}:
                continue
            if key not in specs:
                valid = list(specs) + ([p.name for p in PREDICATES[pred.predicate].params]
                                       if pred else [])
                self.problems.append(kwhere.error(
                    f"unknown parameter '{key}' of {nt.name}" + did_you_mean(str(key), valid)
                    + (f"; valid: {', '.join(valid)}" if valid else "")))
                ok = False
                continue
            try:
                value = self.substitute(raw, bindings, kwhere)
                out[key] = value if isinstance(value, Ref) else specs[key].type.convert(value,
                                                                                      self.ctx)
            except (Invalid, TetherError) as exc:
                self.problems.append(kwhere.error(str(exc)))
                ok = False
        for key, spec in specs.items():
            if key not in out and key not in body:
                if spec.required:
                    self.problems.append(where.error(
                        f"missing required parameter '{key}' of {nt.name}"
                        + (f" ({spec.doc})" if spec.doc else "")))
                    ok = False
                else:
                    out[key] = spec.default
        if pred is not None:
            out["call"] = pred
        return out if ok else None

    def predicate(self, body: dict, marks: Any, where: Where,
                  bindings: dict[str, Any]) -> PredicateCall | None:
        if "predicate" not in body:
            self.problems.append(where.error(
                f"missing 'predicate:' (one of {', '.join(sorted(PREDICATES))})"))
            return None
        pname = self.located(body["predicate"], bindings, where.of_key(marks, "predicate"))
        if pname is BAD:
            return None
        if not isinstance(pname, str) or pname not in PREDICATES:
            self.problems.append(where.of_key(marks, "predicate").error(
                f"unknown predicate '{pname}'" + did_you_mean(str(pname), PREDICATES)))
            return None
        args: dict[str, Any] = {}
        ok = True
        for p in PREDICATES[pname].params:
            pw = where.of_key(marks, p.name)
            if p.name not in body:
                if p.default is None:
                    self.problems.append(where.error(
                        f"predicate '{pname}' needs '{p.name}'"))
                    ok = False
                else:
                    args[p.name] = p.default
                continue
            try:
                value = self.substitute(body[p.name], bindings, pw)
                ptype = ENTITY if p.kind == ENTITY_ARG else FLOAT
                if isinstance(value, Ref) or (ptype is ENTITY and value == "gripper"):
                    args[p.name] = value
                else:
                    args[p.name] = ptype.convert(value, self.ctx)
            except (Invalid, TetherError) as exc:
                self.problems.append(pw.error(str(exc)))
                ok = False
        return PredicateCall(pname, args) if ok else None

    def located(self, value: Any, bindings: dict[str, Any], where: Where) -> Any:
        """`substitute`, recording a problem at `where` (and returning BAD) when it fails."""
        try:
            return self.substitute(value, bindings, where)
        except Invalid as exc:
            self.problems.append(where.error(str(exc)))
            return BAD

    def substitute(self, value: Any, bindings: dict[str, Any], where: Where) -> Any:
        """Replace `{param}` in a value by the bound parameter values."""
        if isinstance(value, dict) and len(value) == 1:
            (key, inner), = value.items()
            if inner is None and key in bindings:  # `tolerance: {height}` without quotes
                raise Invalid(f"write \"{{{key}}}\" in quotes: unquoted, YAML reads {{{key}}} as a "
                              "mapping")
        if isinstance(value, dict):
            return {k: self.substitute(v, bindings, where.of_key(value, k)) for k, v in
                    value.items()}
        if isinstance(value, list):
            return [self.substitute(v, bindings, where.of_item(value, i)) for i, v in
                    enumerate(value)]
        if not isinstance(value, str):
            return value
        whole = WHOLE_PARAM.match(value)
        names = [whole.group(1)] if whole else INLINE_PARAM.findall(value)
        for pname in names:
            if pname not in bindings:
                raise Invalid(f"unknown parameter '{{{pname}}}'" + did_you_mean(pname, bindings)
                              + ("" if bindings else " (this tree declares no params)"))
        if whole:
            return bindings[whole.group(1)]
        return INLINE_PARAM.sub(lambda m: str(bindings[m.group(1)]), value)


PLACEHOLDERS = {"int": 0, "float": 0.0, "bool": False, "vec3": [0.0, 0.0, 0.0]}


def compile_tree(path: Path | str, given: dict[str, Any] | None = None, *,
                 resolve=None, placeholders: bool = False) -> CompiledTree:
    """Validate and compile a tree file; raise `TreeError` listing every problem found.

    `given` binds the file's params (values are converted to the declared types); `resolve`
    maps object names and aliases to the scene's canonical names (unchecked when None). With
    `placeholders`, required params left unbound get a stand-in (`<name>` for names) so a tree
    can be checked without a task.
    """
    path = Path(path)
    tf = read_tree_file(path)
    compiler = Compiler(Context(resolve=resolve))
    compiler.files[path.resolve()] = tf
    return _compile_root(compiler, tf, given, placeholders, (path.resolve(),))


def compile_document(document: Any, origin: str, given: dict[str, Any] | None = None, *,
                     resolve=None, here: Path | None = None,
                     placeholders: bool = False) -> CompiledTree:
    """`compile_tree` for a tree file's mapping held in memory (a plan's tree), named `origin`:
    its problems are located as `origin: root.sequence[2].move_to.tolerance: ...`. Subtrees are
    found in `here` (when given) and the library."""
    where = Where.logical(origin)
    tf = tree_file_of(document, where)
    return _compile_root(Compiler(Context(resolve=resolve), here), tf, given, placeholders, ())


def compile_node(value: Any, where: Where, *, resolve=None,
                 kind: str | None = None) -> py_trees.behaviour.Behaviour:
    """Compile one node held in memory at `where` (e.g. `Where.logical("", "subtasks[0]
    .steps[2]")`), or with `kind` the body of a node of that type (a plan's `expect` entry is
    the body of a `check`); `TreeError` listing every problem. Subtrees come from the library."""
    compiler = Compiler(Context(resolve=resolve))
    if kind is None:
        built = compiler.node(value, where, {}, ())
    else:
        built = compiler.typed(NODE_TYPES[kind], value, where, None, {}, ())
    if compiler.problems or built is None:
        raise TreeError(list(dict.fromkeys(compiler.problems)))
    return built


def _compile_root(compiler: Compiler, tf: TreeFile, given: dict[str, Any] | None,
                  placeholders: bool, stack: tuple[Path, ...]) -> CompiledTree:
    given = dict(given or {})
    if placeholders:
        for p in tf.params.values():
            if p.required and p.name not in given:
                given[p.name] = PLACEHOLDERS.get(p.type.name, f"<{p.name}>")
    root = compiler.compile_parsed(tf, given, tf.where, stack)
    if compiler.problems or root is None:
        raise TreeError(list(dict.fromkeys(compiler.problems)))
    bindings = dict(given)
    for p in tf.params.values():
        bindings.setdefault(p.name, p.default)
    return CompiledTree(root=root, file=tf, bindings=bindings, nodes=compiler.count)


def goal_bindings(tf: TreeFile, goal: list[tuple[str, ...]]) -> dict[str, Any]:
    """Bind params declared `from_goal: N` from the first task goal literal the tree achieves."""
    for literal in goal:
        if literal[0] in tf.goal:
            return {p.name: literal[p.from_goal] for p in tf.params.values()
                    if p.from_goal is not None and p.from_goal < len(literal)}
    return {}
