"""The five packages import strictly downward: scenes < models < blackboard < behaviours < trees."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["scenes", "models", "blackboard", "behaviours", "trees"]


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & set(LAYERS)


@pytest.mark.parametrize("package", LAYERS)
def test_package_imports_only_layers_above_it(package: str):
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) - allowed)
        for path in (ROOT / package).rglob("*.py")
        if imported_packages(path) - allowed
    }
    assert not offenders, f"{package} imports from layers below it: {offenders}"
