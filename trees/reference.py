"""The node tables of the language reference, rendered from the node registry.

docs/trees.md holds generated tables between marker comments: the table of all node types
(`<!-- nodes -->` ... `<!-- /nodes -->`) and, in the section of each node type that takes
parameters, its parameter table (`<!-- params: move_to -->` ... `<!-- /params -->`). Names,
kinds, summaries, parameter types, defaults and docs come from `tether.trees.nodes.NODE_TYPES`,
so the reference cannot drift from the code; the prose around the tables is written by hand.

    python -m tether.trees.reference docs/trees.md           # rewrite the tables in place
    python -m tether.trees.reference                          # print them (an installed copy's)

`tests/trees/test_docs.py` fails when the file differs from what `rewrite` makes of it.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether.trees.nodes import COMPOSITE, DECORATOR, LEAF, NODE_TYPES, REQUIRED, NodeType, Spec
from tether.trees.values import Choice, Float, Int, Type

KINDS = (COMPOSITE, DECORATOR, LEAF)
TABLES = re.compile(r"(<!-- (nodes|params: (\w+)) -->\n)(.*?)(<!-- /(?:nodes|params) -->)", re.S)
FIX = "python -m tether.trees.reference docs/trees.md"


def type_text(t: Type) -> str:
    """A parameter type as the reference writes it: `int >= 1`, `` `x`, `y` or `z` ``."""
    if isinstance(t, Choice):
        names = [f"`{c}`" for c in t.choices]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    if isinstance(t, Int | Float) and t.minimum is not None:
        return f"{t.name} >= {t.minimum:g}"
    return t.name


def default_text(default: Any) -> str:
    if default is REQUIRED:
        return "required"
    if default is None:
        return "none"
    if isinstance(default, str):
        return f"`{default}`"
    return f"`{json.dumps(default)}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def node_table(node_types: Mapping[str, NodeType]) -> str:
    """Every node type: name, kind and what it does, composites first, then decorators, leaves."""
    rows = ["| node | kind | what it does |", "| --- | --- | --- |"]
    for kind in KINDS:
        rows += [f"| [`{name}`](#{name}) | {kind} | {_cell(nt.doc)} |"
                 for name, nt in sorted(node_types.items()) if nt.kind == kind]
    return "\n".join(rows) + "\n"


def param_table(nt: NodeType) -> str:
    """A node type's parameters: type, default and doc (a predicate node's `predicate` first)."""
    rows = ["| param | type | default | what it is |", "| --- | --- | --- | --- |"]
    if nt.predicate:
        rows.append("| `predicate` | predicate name | required | a [predicate](#predicates); its "
                    "arguments are written beside it |")
    rows += [_param_row(name, spec) for name, spec in nt.params.items()]
    if nt.primary:
        rows.append("")
        rows.append(f"Shorthand: `{nt.name}: VALUE` sets `{nt.primary}`.")
    return "\n".join(rows) + "\n"


def _param_row(name: str, spec: Spec) -> str:
    return (f"| `{name}` | {_cell(type_text(spec.type))} | {_cell(default_text(spec.default))} "
            f"| {_cell(spec.doc)} |")


def documented(nt: NodeType) -> bool:
    """Whether the node type has a parameter table (it takes parameters or a predicate)."""
    return bool(nt.params) or nt.predicate


def rewrite(text: str, node_types: Mapping[str, NodeType] = NODE_TYPES) -> str:
    """`text` with every marked table regenerated from `node_types`."""
    def table(m: re.Match[str]) -> str:
        name = m.group(3)
        if name is None:
            body = node_table(node_types)
        elif name in node_types:
            body = param_table(node_types[name])
        else:
            raise ValueError(f"a params marker names '{name}', which is not a node type")
        return m.group(1) + body + m.group(5)

    return TABLES.sub(table, text)


def marked(text: str) -> list[str]:
    """The node types whose parameter table `text` marks, in order."""
    return [m.group(3) for m in TABLES.finditer(text) if m.group(3)]


def main(argv: list[str]) -> int:
    if not argv:
        print(node_table(NODE_TYPES))
        for name, nt in sorted(NODE_TYPES.items()):
            if documented(nt):
                print(f"### {name}\n\n{param_table(nt)}")
        return 0
    path = Path(argv[0])
    text = path.read_text(encoding="utf-8")
    new = rewrite(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"rewrote the node tables of {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
