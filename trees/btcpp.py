"""BehaviorTree.CPP XML (`BTCPP_format="4"`, what Groot2 edits and Nav2 ships) to and from tree
files.

`tree_to_xml(path)` writes a tree file and every tree it includes as one XML document: one
`<BehaviorTree ID>` per tree file (the tree's name), `<SubTree ID="grasp" object="{object}"/>` for
`subtree: grasp` with `with: {object: "{object}"}` (tether's `{param}` is BT.CPP's `{port}`
remapping: both name the enclosing tree's value), and a `<TreeNodesModel>` generated from the node
registry (every tether node type with its parameters as ports, every tree with its params) so
Groot2 can open and edit the file. A node type with an exact BT.CPP counterpart is written as that
built-in (`sequence` is `Sequence`, `retry` is `RetryUntilSuccessful num_attempts`, ...,
`COUNTERPARTS`); every other node keeps its tether name (`<move_to .../>`), declared in the model.
Values are attributes in YAML flow syntax (`offset="[0, 0, {over}]"` keeps its `{over}` as text
inside a list: `[0, 0, '{over}']`).

`xml_to_documents(path)` reads such a file, or one written by hand or by Groot2 in BT.CPP's own
shapes (`<Action ID="move_to"/>`, `<include path>`), into tree-file mappings, as far as its node
types exist in tether. A construct with no counterpart (`Script`, `Precondition`, `_skipIf`,
`SequenceWithMemory`, a `Parallel` threshold tether cannot express, an unknown node type) is a
`TreeError` located at its `file:line:column` and naming it; nothing is dropped silently.
`convert(source, output)` converts in the direction the suffixes give and writes the files; a
YAML it wrote that does not check (a parameter a node does not take) is reported, located in it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET
from xml.parsers import expat

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from tether.errors import MAX_NESTING, did_you_mean
from tether.registry import Registry
from tether.scenes.predicates import PREDICATES
from tether.trees.compiler import (
    Compiler,
    TreeFile,
    compile_document,
    compile_tree,
    read_tree_file,
    tree_file_of,
)
from tether.trees.nodes import COMPOSITE, DECORATOR, NODE_TYPES, SUBTREE, NodeType
from tether.trees.source import TreeError, Where, display_path
from tether.trees.values import PARAM_TYPES, TARGET, Context, TargetType

FORMAT = "4"
WHOLE_PORT = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}$")
YAML_SUFFIXES = (".yaml", ".yml")
MODEL_TAGS = {COMPOSITE: "Control", DECORATOR: "Decorator", "leaf": "Action"}
WRAPPERS = ("Action", "Condition", "Control", "Decorator")  # `<Action ID="move_to"/>`
SCRIPTING = ("_skipIf", "_while", "_failureIf", "_successIf", "_onSuccess", "_onFailure",
             "_onHalted", "_post")
NOT_CODE = "tether never evaluates strings as code: use a check or guard with a named predicate"
# BT.CPP built-ins tether has no counterpart for, and why (an import names them in its error).
UNMAPPED = {
    "Script": NOT_CODE, "ScriptCondition": NOT_CODE, "Precondition": NOT_CODE,
    "SequenceWithMemory": "it keeps its place after a failure; tether's sequence starts again",
    "ParallelAll": "it waits for every child and counts failures; use parallel",
    "IfThenElse": "use a selector over a sequence", "WhileDoElse": "use a reactive_selector",
    "Switch2": "tether has no switch on a blackboard value", "Switch3": "see Switch2",
    "Switch4": "see Switch2", "Switch5": "see Switch2", "Switch6": "see Switch2",
    "KeepRunningUntilFailure": "no counterpart", "TryCatch": "use a selector with error_is",
    "Delay": "it waits wall-clock milliseconds; tether's clock is simulated steps (use wait)",
    "Sleep": "it waits wall-clock milliseconds; tether's clock is simulated steps (use wait)",
    "AlwaysSuccess": "no counterpart leaf", "AlwaysFailure": "no counterpart leaf",
    "SetBlackboard": "use set (a blackboard key, not a port)", "UnsetBlackboard": "no counterpart",
    "SubTreePlus": "BTCPP_format 3; use SubTree", "ManualSelector": "no counterpart",
    "EntryUpdated": "no counterpart", "SkipUnlessUpdated": "no counterpart",
    "WaitValueUpdate": "no counterpart", "LoopInt": "no counterpart",
    "LoopDouble": "no counterpart", "LoopString": "no counterpart", "LoopBool": "no counterpart",
}
PORT_TYPES = {"std::string": "str", "string": "str", "double": "float", "float": "float",
              "int": "int", "unsigned": "int", "long": "int", "bool": "bool"}
INFERRED_DOC = "a port of the BehaviorTree.CPP tree (no TreeNodesModel entry)"

_yaml = YAML(typ="safe", pure=True)  # YAML 1.2: `on` and `yes` stay strings
_dumper = YAML(typ="rt")  # writes the round-trip types a tree file is read as, and plain ones
_dumper.default_flow_style = True
_dumper.width = 10_000


# --- values: attribute text <-> YAML value ------------------------------------------------------
def attr_value(text: str) -> Any:
    """The value an attribute's text stands for: `{name}` stays the text (a port remapping, a
    tether parameter), also inside a list or mapping (`[0, 0, {h}]`); anything else is read as
    YAML flow syntax (text that is not stays text)."""
    if WHOLE_PORT.match(text):
        return text
    try:
        return _ports(_yaml.load(text)) if text.strip() else text
    except YAMLError:
        return text


def _ports(value: Any) -> Any:
    """`{name: null}` (YAML's reading of an unquoted `{name}`) back to the text `{name}`."""
    if isinstance(value, dict):
        port = f"{{{next(iter(value))}}}" if len(value) == 1 else ""
        if None in value.values() and WHOLE_PORT.match(port):
            return port
        return {k: _ports(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ports(v) for v in value]
    return value


def attr_text(value: Any) -> str:
    """The attribute text `attr_value` reads back as `value`."""
    if isinstance(value, str) and attr_value(value) == value:
        return value
    stream = StringIO()
    _dumper.dump(value, stream)
    return stream.getvalue().strip().removesuffix("...").strip()


# --- BT.CPP built-ins with an exact tether counterpart ------------------------------------------
@dataclass(frozen=True)
class Counterpart:
    """A tether node type written as a BT.CPP built-in: `to_xml` gives its ports from the
    node's parameters (None: not expressible, the node keeps its tether name); `from_xml` the
    parameters from the ports (and the number of children), or raises `ValueError` naming
    what does not map."""

    tether: str
    btcpp: str
    to_xml: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda p: {} if not p else None
    from_xml: Callable[[dict[str, Any], int], dict[str, Any]] = lambda ports, n: _only(ports)


def _only(ports: dict[str, Any], *allowed: str) -> dict[str, Any]:
    """No parameters; `ValueError` for a port that is not one of `allowed`."""
    for port in ports:
        if port not in allowed:
            raise ValueError(f"unknown port '{port}'" + did_you_mean(port, (*allowed, "name")))
    return {}


def _renamed(tether: str, btcpp: str) -> tuple[Callable, Callable]:
    def to_xml(params: dict[str, Any]) -> dict[str, Any] | None:
        return {btcpp: params[tether]} if set(params) == {tether} else None

    def from_xml(ports: dict[str, Any], _children: int) -> dict[str, Any]:
        _only(ports, btcpp)
        if btcpp not in ports:
            raise ValueError(f"missing port '{btcpp}'")
        return {tether: ports[btcpp]}
    return to_xml, from_xml


def _timeout_to(params: dict[str, Any]) -> dict[str, Any] | None:
    seconds = params.get("seconds")
    if params.get("steps") is not None or not isinstance(seconds, int | float):
        return None  # steps, or a `{param}`: tether's own timeout
    return {"msec": round(seconds * 1000)}


def _timeout_from(ports: dict[str, Any], _children: int) -> dict[str, Any]:
    _only(ports, "msec")
    msec = ports.get("msec")
    if isinstance(msec, bool) or not isinstance(msec, int | float):
        raise ValueError("Timeout needs a number in 'msec' (tether counts simulated time)")
    return {"seconds": msec / 1000}


def _parallel_to(params: dict[str, Any]) -> dict[str, Any] | None:
    counts = {"all": -1, "one": 1}
    success_on = params.get("success_on", "all")
    if not isinstance(success_on, str) or success_on not in counts \
            or params.get("synchronise", True) is not True:
        return None  # named children, no synchronising, or a `{param}`: tether's own parallel
    return {"success_count": counts[success_on], "failure_count": 1}


def _parallel_from(ports: dict[str, Any], children: int) -> dict[str, Any]:
    _only(ports, "success_count", "failure_count")
    success, failure = ports.get("success_count", -1), ports.get("failure_count", 1)
    # a negative count n means children + n + 1: -1 is all of them
    if failure not in (1, -children):
        raise ValueError(f"failure_count={failure} (tether's parallel fails at the first failing "
                         "child: failure_count=1)")
    if success in (-1, children):
        return {"success_on": "all"}
    if success in (1, -children):
        return {"success_on": "one"}
    raise ValueError(f"success_count={success} of {children} children (tether's parallel "
                     "succeeds on all, or one: success_count=-1 or 1)")


def _once_from(ports: dict[str, Any], _children: int) -> dict[str, Any]:
    _only(ports, "then_skip")
    if ports.get("then_skip", True) is not False:
        raise ValueError("then_skip=true (a skipped node has no counterpart; tether's once "
                         "returns its first result again: then_skip=\"false\")")
    return {}


COUNTERPARTS: Registry[Counterpart] = Registry("BehaviorTree.CPP built-in")
for _cp in (
    Counterpart("sequence", "Sequence"), Counterpart("selector", "Fallback"),
    Counterpart("reactive_sequence", "ReactiveSequence"),
    Counterpart("reactive_selector", "ReactiveFallback"),
    Counterpart("parallel", "Parallel", _parallel_to, _parallel_from),
    Counterpart("invert", "Inverter"), Counterpart("force_success", "ForceSuccess"),
    Counterpart("force_failure", "ForceFailure"),
    Counterpart("retry", "RetryUntilSuccessful", *_renamed("n", "num_attempts")),
    Counterpart("repeat", "Repeat", *_renamed("n", "num_cycles")),
    Counterpart("timeout", "Timeout", _timeout_to, _timeout_from),
    Counterpart("once", "RunOnce", lambda p: {"then_skip": False} if not p else None, _once_from),
):
    COUNTERPARTS.register(_cp.btcpp, _cp)
BY_TETHER = {cp.tether: cp for cp in COUNTERPARTS.values()}


# --- the TreeNodesModel -------------------------------------------------------------------------
def _port(name: str, type_name: str | None, default: Any, doc: str) -> ET.Element:
    port = ET.Element("input_port", name=name)
    if type_name:
        port.set("type", type_name)
    if default is not None:
        port.set("default", attr_text(default))
    port.text = doc or None
    return port


def node_ports(nt: NodeType) -> Iterator[ET.Element]:
    """The ports of a node type: its parameters, a predicate node's `predicate` and the
    predicates' arguments, a target's keys."""
    for pname, spec in nt.params.items():
        yield _port(pname, spec.type.name, None if spec.required else spec.default, spec.doc)
    if nt.predicate:
        yield _port("predicate", "str", None, "one of: " + ", ".join(sorted(PREDICATES)))
        args = sorted({p.name for pred in PREDICATES.values() for p in pred.params})
        for arg in args:
            if arg not in nt.params:
                yield _port(arg, None, None, "an argument of the predicate")
    if nt.primary in nt.params and nt.params[nt.primary].type is TARGET:
        for key in TargetType.FIELDS:
            yield _port(key, None, None, f"the target's '{key}' (instead of 'target')")


def nodes_model(trees: list[TreeFile]) -> ET.Element:
    """`<TreeNodesModel>`: every tether node type and every tree (as a SubTree) with its ports."""
    model = ET.Element("TreeNodesModel")
    for name, nt in sorted(NODE_TYPES.items()):
        element = ET.SubElement(model, MODEL_TAGS[nt.kind], ID=name)
        element.extend(list(node_ports(nt)))
        ET.SubElement(ET.SubElement(element, "MetadataFields"), "Metadata", doc=nt.doc)
    for tf in trees:
        element = ET.SubElement(model, "SubTree", ID=tf.name)
        for p in tf.params.values():
            element.append(_port(p.name, p.type.name, None if p.required else p.default, p.doc))
        meta = ET.SubElement(element, "MetadataFields")
        if tf.doc:
            ET.SubElement(meta, "Metadata", doc=tf.doc.strip())
        if tf.goal:
            ET.SubElement(meta, "Metadata", goal=" ".join(tf.goal))
        for p in tf.params.values():
            if p.from_goal is not None:
                ET.SubElement(meta, "Metadata", {f"from_goal.{p.name}": str(p.from_goal)})
    return model


# --- YAML -> XML ------------------------------------------------------------------------------
def _node_parts(node: dict) -> tuple[str, Any, str | None]:
    """A node's type, body and name (beside or inside its type)."""
    kind = next(k for k in node if k in NODE_TYPES or k == SUBTREE)
    body, name = node[kind], node.get("name")
    if isinstance(body, dict) and "name" in body and kind != SUBTREE and (
            NODE_TYPES[kind].kind != DECORATOR or "child" in body):
        name, body = body["name"], {k: v for k, v in body.items() if k != "name"}
    return kind, body, name


class _Writer:
    """Collects the tree files a tree includes and writes each as a `<BehaviorTree>`."""

    def __init__(self, here: Path | None):
        self.finder = Compiler(Context(), here)
        self.trees: dict[str, TreeFile] = {}
        self.roots: dict[str, ET.Element] = {}
        self.ids: dict[Path, str] = {}

    def include(self, ref: str, here: Path | None) -> str:
        path = self.finder.find(ref, here, Where.logical(ref))
        assert path is not None, ref  # the tree compiled, so every subtree was found
        resolved = path.resolve()
        if resolved not in self.ids:
            tf = read_tree_file(path)
            self.add(tf, resolved.parent, resolved)
        return self.ids[resolved]

    def add(self, tf: TreeFile, here: Path | None, resolved: Path | None = None) -> None:
        if tf.name in self.trees:
            raise TreeError([f"{display_path(tf.path) if tf.path else tf.where.file}: two "
                             f"trees are named '{tf.name}'; BehaviorTree IDs must differ"])
        self.trees[tf.name] = tf
        if resolved is not None:
            self.ids[resolved] = tf.name
        self.roots[tf.name] = self.element(tf.root, here)

    def element(self, node: dict, here: Path | None) -> ET.Element:
        kind, body, name = _node_parts(node)
        attrs: dict[str, Any] = {}
        children: list[dict] = []
        if kind == SUBTREE:
            tag, attrs = "SubTree", {"ID": self.include(body, here), **(node.get("with") or {})}
        else:
            nt = NODE_TYPES[kind]
            if nt.kind == COMPOSITE:
                children = body if isinstance(body, list) else body["children"]
                params = {} if isinstance(body, list) else {
                    k: v for k, v in body.items() if k != "children"}
            elif nt.kind == DECORATOR:
                child = body.get("child") if "child" in body else body
                children = [child]
                params = {k: v for k, v in body.items() if k != "child"} if "child" in body \
                    else {}
            else:
                params = body if isinstance(body, dict) else {nt.primary: body}
            counterpart = BY_TETHER.get(kind)
            ports = counterpart.to_xml(params) if counterpart else None
            tag, attrs = (counterpart.btcpp, ports) if ports is not None else (kind, params)
        element = ET.Element(tag)
        if name is not None:
            element.set("name", str(name))
        for key, value in attrs.items():
            element.set(str(key), value if key == "ID" else attr_text(value))
        element.extend([self.element(c, here) for c in children])
        return element

    def document(self, main: str) -> str:
        root = ET.Element("root", BTCPP_format=FORMAT, main_tree_to_execute=main)
        for tid in self.trees:
            ET.SubElement(root, "BehaviorTree", ID=tid).append(self.roots[tid])
        root.append(nodes_model(list(self.trees.values())))
        ET.indent(root, space="  ")
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(
            root, encoding="unicode") + "\n"


def tree_to_xml(path: Path | str) -> str:
    """A tree file (checked by compiling it) and the trees it includes as BT.CPP XML."""
    path = Path(path)
    compile_tree(path, placeholders=True)
    writer = _Writer(path.resolve().parent)
    writer.add(read_tree_file(path), path.resolve().parent, path.resolve())
    return writer.document(writer.ids[path.resolve()])


def document_to_xml(document: dict, origin: str, here: Path | None = None) -> str:
    """A tree file's mapping held in memory (a plan's tree) as BT.CPP XML; subtrees are found
    in `here` (when given) and the library."""
    compile_document(document, origin, here=here, placeholders=True)
    tf = tree_file_of(document, Where.logical(origin))
    writer = _Writer(here)
    writer.add(tf, here)
    return writer.document(tf.name)


# --- XML -> YAML ------------------------------------------------------------------------------
@dataclass
class XNode:
    """An XML element with the place it starts at."""

    tag: str
    attrs: dict[str, str]
    where: Where
    children: list[XNode] = field(default_factory=list)
    text: str = ""

    def error(self, message: str) -> TreeError:
        return TreeError([self.where.error(message)])


def parse_xml(path: Path) -> XNode:
    """Parse an XML file into located `XNode`s; syntax errors, DTDs (entities) and nesting deeper
    than `MAX_NESTING` are located `TreeError`s."""
    shown = display_path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TreeError([f"{shown}: no such file"]) from None
    except OSError as exc:
        raise TreeError([f"{shown}: cannot read: {exc}"]) from None
    parser = expat.ParserCreate()
    stack: list[XNode] = []
    top: list[XNode] = []

    def where() -> Where:
        return Where(shown, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1, "")

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = XNode(tag, attrs, where())
        if len(stack) > MAX_NESTING:
            raise node.error(f"elements nest more than {MAX_NESTING} deep")
        (stack[-1].children if stack else top).append(node)
        stack.append(node)

    def text(data: str) -> None:
        if stack:
            stack[-1].text += data

    def doctype(*_args: Any) -> None:
        raise TreeError([where().error("a DOCTYPE (DTD) is not read in tree files")])

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.CharacterDataHandler = text
    parser.StartDoctypeDeclHandler = doctype
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise TreeError([f"{shown}:{exc.lineno}:{exc.offset + 1}: XML: "
                         f"{expat.ErrorString(exc.code)}"]) from None
    return top[0]


@dataclass
class _Model:
    """What a file's TreeNodesModel says about its trees: params and metadata."""

    ports: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    meta: dict[str, dict[str, str]] = field(default_factory=dict)


class _Reader:
    """Reads `<BehaviorTree>`s (with their includes) into tree-file mappings."""

    def __init__(self) -> None:
        self.trees: dict[str, XNode] = {}
        self.model = _Model()
        self.seen: set[Path] = set()

    def read(self, path: Path, at: XNode | None = None) -> str | None:
        """Read a file's trees and model; its main tree's ID (None when it does not say)."""
        resolved = path.resolve()
        if resolved in self.seen:
            if at is not None:
                raise at.error(f"cyclic include of {display_path(path)}")
            return None
        self.seen.add(resolved)
        root = parse_xml(path)
        if root.tag != "root":
            raise root.error(f"expected <root BTCPP_format=\"4\">, found <{root.tag}>")
        fmt = root.attrs.get("BTCPP_format", FORMAT)
        if fmt != FORMAT:
            raise root.error(f"BTCPP_format=\"{fmt}\": only format 4 is read (BT.CPP's "
                             "convert_v3_to_v4.py converts older files)")
        for child in root.children:
            if child.tag == "BehaviorTree":
                self.behavior_tree(child)
            elif child.tag == "TreeNodesModel":
                self.read_model(child)
            elif child.tag == "include":
                if "ros_pkg" in child.attrs or "path" not in child.attrs:
                    raise child.error("include takes a 'path' relative to this file (ros_pkg "
                                      "is not read)")
                included = path.parent / child.attrs["path"]
                if not included.is_file():
                    raise child.error(f"include: no file {display_path(included)}")
                self.read(included, child)
            else:
                raise child.error(f"unexpected <{child.tag}> in <root> (BehaviorTree, "
                                  "TreeNodesModel or include)")
        return root.attrs.get("main_tree_to_execute")

    def behavior_tree(self, tree: XNode) -> None:
        tid = tree.attrs.get("ID")
        if not tid:
            raise tree.error("a <BehaviorTree> needs an ID")
        if tid in self.trees:
            raise tree.error(f"a second <BehaviorTree ID=\"{tid}\">")
        if len(tree.children) != 1:
            raise tree.error(f"<BehaviorTree ID=\"{tid}\"> has {len(tree.children)} root nodes; "
                             "it needs exactly one")
        self.trees[tid] = tree

    def read_model(self, model: XNode) -> None:
        for entry in model.children:
            if entry.tag != "SubTree":
                continue  # node types are tether's own (the registry), not the file's
            tid = entry.attrs.get("ID", "")
            ports, meta = self.model.ports.setdefault(tid, {}), self.model.meta.setdefault(tid, {})
            for port in entry.children:
                if port.tag == "MetadataFields":
                    for item in port.children:
                        meta.update(item.attrs)
                    continue
                if "name" not in port.attrs:
                    raise port.error(f"<{port.tag}> needs a name")
                ports[port.attrs["name"]] = self.param(port)

    @staticmethod
    def param(port: XNode) -> dict[str, Any]:
        type_name = port.attrs.get("type", "str")
        type_name = PORT_TYPES.get(type_name, type_name)
        if type_name not in PARAM_TYPES:
            raise port.error(f"port type '{port.attrs['type']}' has no counterpart (tether "
                             f"params are {', '.join(PARAM_TYPES)})")
        decl: dict[str, Any] = {"type": type_name}
        if "default" in port.attrs:
            decl["default"] = attr_value(port.attrs["default"])
        doc = port.attrs.get("description") or port.text  # BT.CPP reads the attribute
        if doc.strip():
            decl["doc"] = " ".join(doc.split())
        return decl

    # --- nodes ------------------------------------------------------------------------
    def node(self, x: XNode) -> dict:
        tag, attrs = x.tag, dict(x.attrs)
        if tag in WRAPPERS:
            if "ID" not in attrs:
                raise x.error(f"<{tag}> needs an ID (the node type)")
            tag = attrs.pop("ID")
        for attr in attrs:
            if attr in SCRIPTING:
                raise x.error(f"'{attr}' (a scripted pre/post condition) has no counterpart: "
                              + NOT_CODE)
            if attr.startswith("_"):
                raise x.error(f"'{attr}' on <{tag}> has no counterpart"
                              + ("; name each remapped port" if attr == "_autoremap" else ""))
        name = attrs.pop("name", None)
        ports = {k: attr_value(v) for k, v in attrs.items()}
        node: dict[str, Any] = {} if name is None else {"name": name}
        if tag == "SubTree":
            return self.subtree(x, node, ports)
        if tag in UNMAPPED:
            raise x.error(f"'{tag}' has no counterpart in tether: {UNMAPPED[tag]}")
        if tag in COUNTERPARTS:
            cp = COUNTERPARTS[tag]
            try:
                params = cp.from_xml(ports, len(x.children))
            except ValueError as exc:
                raise x.error(f"{tag}: {exc}") from None
            kind = cp.tether
        elif tag in NODE_TYPES:
            kind, params = tag, ports
        else:
            known = [*NODE_TYPES, *COUNTERPARTS, "SubTree"]
            raise x.error(f"node type '{tag}' has no counterpart in tether (neither a tether node "
                          "type nor a BehaviorTree.CPP built-in it maps)"
                          + did_you_mean(tag, known))
        return {**node, kind: self.body(x, NODE_TYPES[kind], params)}

    def body(self, x: XNode, nt: NodeType, params: dict[str, Any]) -> Any:
        children = [self.node(c) for c in x.children]
        if nt.kind == COMPOSITE:
            if not children:
                raise x.error(f"<{x.tag}> needs at least one child")
            return {**params, "children": children} if params else children
        if nt.kind == DECORATOR:
            if len(children) != 1:
                raise x.error(f"<{x.tag}> (a decorator) needs exactly one child, found "
                              f"{len(children)}")
            return {**params, "child": children[0]}
        if children:
            raise x.error(f"<{x.tag}> (a leaf) has no children")
        if nt.primary is not None and set(params) == {nt.primary}:
            return params[nt.primary]
        return params

    def subtree(self, x: XNode, node: dict, ports: dict[str, Any]) -> dict:
        if x.children:
            raise x.error("<SubTree> has no children")
        tid = ports.pop("ID", None)
        if not isinstance(tid, str) or not tid:
            raise x.error("<SubTree> needs an ID (the tree it runs)")
        for key, value in ports.items():
            if isinstance(value, str) and value.startswith("{@"):
                raise x.error(f"{key}: '{value}' (the root blackboard) has no counterpart: "
                              "pass it down as a port")
        return {**node, SUBTREE: tid, **({"with": ports} if ports else {})}

    def document(self, tid: str) -> dict:
        tree = self.trees[tid]
        root = self.node(tree.children[0])
        meta = self.model.meta.get(tid, {})
        params = {k: dict(v) for k, v in self.model.ports.get(tid, {}).items()}
        for pname, decl in params.items():
            if f"from_goal.{pname}" in meta:
                decl["from_goal"] = int(meta[f"from_goal.{pname}"])
        for pname in sorted(_ports_used(tree) - set(params)):
            params[pname] = {"type": "str", "doc": INFERRED_DOC}
        document: dict[str, Any] = {"tree": tid}
        if meta.get("doc"):
            document["doc"] = meta["doc"]
        if meta.get("goal"):
            document["goal"] = meta["goal"].split()
        if params:
            document["params"] = params
        document["root"] = root
        return document


def _ports_used(x: XNode) -> set[str]:
    """The `{name}`s the attributes of a tree's nodes read."""
    used = {m for k, v in x.attrs.items() if k not in ("ID", "name")
            for m in re.findall(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}", v)}
    for child in x.children:
        used |= _ports_used(child)
    return used


def xml_to_documents(path: Path | str) -> tuple[str, dict[str, dict]]:
    """The main tree's ID and every tree of a BT.CPP XML file (and its includes) as tree-file
    mappings, by ID; `TreeError` located in the XML for what has no counterpart."""
    path = Path(path)
    reader = _Reader()
    main = reader.read(path)
    if not reader.trees:
        raise TreeError([f"{display_path(path)}: no <BehaviorTree> in the file"])
    if main is None:
        if len(reader.trees) > 1:
            raise TreeError([f"{display_path(path)}: {len(reader.trees)} trees and no "
                             "main_tree_to_execute on <root> to say which one runs"])
        main = next(iter(reader.trees))
    if main not in reader.trees:
        raise TreeError([f"{display_path(path)}: main_tree_to_execute='{main}' is not a "
                         "<BehaviorTree> ID" + did_you_mean(main, reader.trees)])
    return main, {tid: reader.document(tid) for tid in reader.trees}


def dump_document(document: dict) -> str:
    """A tree-file mapping as YAML text."""
    return yaml.safe_dump(document, sort_keys=False, width=100, default_flow_style=None,
                          allow_unicode=True)


def convert(source: Path | str, output: Path | str) -> list[Path]:
    """Convert a tree file to BT.CPP XML or back, the direction given by the suffixes; the files
    written. XML -> YAML writes the main tree to `output` and every other tree as `ID.yaml`
    beside it (where the compiler finds subtrees first); an existing file there with other
    content is an error, never overwritten."""
    source, output = Path(source), Path(output)
    kinds = (source.suffix.lower(), output.suffix.lower())
    if kinds[0] in YAML_SUFFIXES and kinds[1] == ".xml":
        output.write_text(tree_to_xml(source), encoding="utf-8")
        return [output]
    if kinds[0] == ".xml" and kinds[1] in YAML_SUFFIXES:
        main, documents = xml_to_documents(source)
        texts = {output: dump_document(documents.pop(main))}
        for tid, document in documents.items():
            path = output.parent / f"{tid}.yaml"
            text = dump_document(document)
            if path in texts or (path.exists() and path.read_text(encoding="utf-8") != text):
                raise TreeError([f"{display_path(path)}: exists; the subtree '{tid}' would "
                                 "overwrite it (write into another folder)"])
            texts[path] = text
        for path, text in texts.items():
            path.write_text(text, encoding="utf-8")
        try:  # parameters are tether's to check: say so now, not at the first run
            compile_tree(output, placeholders=True)
        except TreeError as exc:
            raise TreeError([f"{display_path(output)}: written from {display_path(source)}, but "
                             "it does not check:", *exc.problems]) from None
        return list(texts)
    raise TreeError([f"{display_path(source)} -> {display_path(output)}: convert goes from "
                     ".yaml to .xml or from .xml to .yaml"])

