"""`tether render`: draw a tree file with graphviz.

The tree is compiled (without a task, unbound params shown as placeholders, or against a task's
scene) and drawn by py_trees' own dot renderer (`py_trees.display.dot_tree`: composites as boxes
and octagons, decorators, leaves as ellipses) through graphviz's `dot`, in the format the output
file's suffix names (svg, png, pdf, or dot for the graph source).

    render_tree(Path("trees/library/pick_place.yaml"), Path("pick_place.svg"))
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import py_trees

from tether.errors import TetherError
from tether.trees.compiler import compile_tree

FORMATS = ("svg", "png", "pdf", "dot")


def render_tree(tree: Path, out: Path, *, given: dict[str, Any] | None = None,
                resolve=None) -> Path:
    """Compile `tree` and draw it to `out`; raise `TetherError` for a bad suffix or no graphviz."""
    fmt = out.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise TetherError(f"cannot render to '{out.name}': the file name ends in one of "
                          f"{', '.join('.' + f for f in FORMATS)}")
    if fmt != "dot" and shutil.which("dot") is None:
        raise TetherError("graphviz's `dot` is not installed (Debian: apt-get install graphviz)")
    compiled = compile_tree(tree, given, resolve=resolve, placeholders=resolve is None)
    graph = py_trees.display.dot_tree(compiled.root)
    graph.set_name(compiled.file.name)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "dot":
        out.write_text(graph.to_string(), encoding="utf-8")
    else:
        graph.write(str(out), format=fmt)
    return out
