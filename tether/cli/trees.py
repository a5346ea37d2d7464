"""`tether check`, `tether render` and `tether convert`: tree files validated, printed, drawn and
converted to and from BehaviorTree.CPP XML (`tether.trees`).

    tether check FILE... [--task SUITE/TASK] [--with KEY=VALUE]...   validate and print trees
    tether render TREE -o tree.svg|png|pdf|dot [--with KEY=VALUE]... draw a tree (graphviz)
    tether convert TREE.yaml -o tree.xml   (or TREE.xml -o tree.yaml)  BT.CPP XML and back

`check` reports every file's errors and exits 1 when any has one; a bad `--task` or `--with`
is a user error (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import py_trees
import typer
from rich.text import Text

from tether.cli.options import WithOpt, bindings, err, out
from tether.errors import TetherError


def check(
    files: Annotated[list[Path], typer.Argument(help="Tree files to validate.")],
    task: Annotated[str | None, typer.Option(
        "--task", "-t", metavar="SUITE/TASK",
        help="Also check object names against this task's scene and bind params from its "
             "goal.")] = None,
    with_: WithOpt = None,
) -> None:
    """Validate tree files and print each compiled tree. Exit code 1 when any has errors.

    Without --task, object names are not checked and unbound parameters are shown as <name>.
    """
    from tether.trees.compiler import compile_tree, goal_bindings, read_tree_file

    given = bindings(with_)
    scene = None
    if task:
        from tether.scenes.catalogue import get_task
        from tether.scenes.libero_scene import LiberoScene

        scene = LiberoScene(get_task(task), init_state=0, seed=0)
    failed = False
    try:
        for path in files:
            try:
                params = dict(given)
                if scene is not None:
                    params = {**goal_bindings(read_tree_file(path), scene.goal()), **params}
                compiled = compile_tree(path, params, resolve=scene.resolve if scene else None,
                                        placeholders=scene is None)
            except TetherError as exc:  # a file's errors are its report, not the end of check
                failed = True
                err.print(str(exc), markup=False)
                err.print(Text(f"✗ {path}", style="red"))
                continue
            out.print(Text.assemble((f"✓ {path}", "green"), f" ({compiled.nodes} nodes)"))
            out.print(py_trees.display.unicode_tree(compiled.root), markup=False)
    finally:
        if scene is not None:
            scene.close()
    raise typer.Exit(1 if failed else 0)


def render(
    tree: Annotated[Path, typer.Argument(help="Tree file (YAML).")],
    output: Annotated[Path, typer.Option("--output", "-o",
                                         help="tree.svg, tree.png, tree.pdf or tree.dot")],
    with_: WithOpt = None,
) -> None:
    """Draw a tree file with graphviz (unbound parameters are shown as <name>)."""
    from tether.trees.render import render_tree

    render_tree(tree, output, given=bindings(with_))
    out.print(f"wrote {output}")


def convert(
    source: Annotated[Path, typer.Argument(help="A tree file (.yaml) or BT.CPP XML (.xml).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="tree.xml or tree.yaml: the "
                                         "suffixes give the direction")],
) -> None:
    """Convert a tree file to BehaviorTree.CPP XML (Groot2, BTCPP_format 4) or back.

    YAML -> XML writes the tree and every tree it includes, with a TreeNodesModel of tether's
    node types. XML -> YAML writes the main tree to OUTPUT and each other tree as ID.yaml beside it.
    """
    from tether.trees.btcpp import convert as convert_file

    for path in convert_file(source, output):
        out.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    """Add `check`, `render` and `convert` to the tether app."""
    app.command()(check)
    app.command()(render)
    app.command()(convert)
