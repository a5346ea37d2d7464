"""The layers of `tether` import strictly downward, and no two modules import each other in a cycle.

The order (docs/layout.md): errors < files < registry < scenes < models < blackboard < memory
< behaviours < trees < replay < session < planning < datasets < bench < cli. A module may import
its own layer and the layers before it; every import counts, including the lazy ones inside
functions.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["errors", "files", "registry", "scenes", "models", "blackboard", "memory", "behaviours",
          "trees", "replay", "session", "planning", "datasets", "bench", "cli"]
TOP_FOLDERS = {"trees", "behaviours", "blackboard", "models", "scenes"}  # installed as tether.X
GENERIC = TOP_FOLDERS


def module_files() -> dict[str, Path]:
    """Every module of the installed `tether` package, by dotted name."""
    files: dict[str, Path] = {}
    for folder in [*TOP_FOLDERS, "tether"]:
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join(parts if parts[0] == "tether" else ["tether", *parts])
            files[name] = path
    return files


MODULES = module_files()


@cache
def imports_of(name: str) -> frozenset[str]:
    """The tether modules `name` imports (a `from M import n` of a submodule counts as M.n)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES
                      else node.module for a in node.names}
    return frozenset(m for m in found if m in MODULES and m != name)


def layer(name: str) -> str | None:
    """The layer of a module; None for the root package `tether` (its `__version__`)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def test_the_root_package_imports_no_layer():  # so every layer may read tether.__version__
    assert imports_of("tether") == frozenset()


@pytest.mark.parametrize("package", LAYERS)
def test_layer_imports_only_layers_before_it(package: str):
    allowed = {None, *LAYERS[: LAYERS.index(package) + 1]}
    offenders = {name: sorted(m for m in imports_of(name) if layer(m) not in allowed)
                 for name in MODULES if layer(name) == package}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"tether.{package} imports from layers after it: {offenders}"


def test_every_module_belongs_to_a_layer():
    assert {layer(m) for m in MODULES} - {None} <= set(LAYERS)


def test_no_import_cycles_between_modules():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in sorted(imports_of(name)):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[name] = 2

    for name in sorted(MODULES):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_no_generic_top_level_import_names():
    """`import trees` (or models, scenes, ...) would import another distribution's package or a
    folder in the user's working directory; everything is under `tether.`."""
    offenders = []
    for path in [*MODULES.values(), *(ROOT / "tests").rglob("*.py"),
                 *(ROOT / "benchmarks").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module \
                and node.level == 0 else []
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names
                          if n.split(".")[0] in GENERIC]
    assert not offenders, offenders


def test_the_readme_layout_table_lists_the_layers_in_this_order():
    doc = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip().strip("`") for line in doc.splitlines()
            if line.startswith("| `tether")]
    assert rows == [f"tether.{name}" for name in LAYERS]
