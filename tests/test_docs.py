"""The docs name code that exists: every dotted name they give in backticks (`tether.x.y`,
`tether.replay.trace.read_trace(...)`) imports, and none uses a bare top-level folder name
(`trees.trace`), which is not installed."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]
DOCS = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
FOLDERS = ("tether", "trees", "behaviours", "blackboard", "models", "scenes")
NAME = re.compile(rf"(?<=`)((?:{'|'.join(FOLDERS)})\.[A-Za-z_][\w.]*\w)(?=[`(])")


def resolves(name: str) -> bool:
    """Whether `name` is a module, or an attribute path inside the longest module it starts with."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(found, attr):
                return False
            found = getattr(found, attr)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_dotted_names_in_the_docs_exist(doc):
    names = NAME.findall(doc.read_text(encoding="utf-8"))
    assert [n for n in names if not n.startswith("tether.")] == []
    assert [n for n in names if not resolves(n)] == []
