"""Tree files as parsed YAML that remembers where every key and item came from.

`load_source(path)` parses a file with ruamel.yaml (round-trip mode keeps line and column of each
mapping key and sequence item) and turns YAML syntax errors, duplicate keys and unreadable files
into a located `TreeError`, and so is a file that nests mappings and lists more than
`MAX_NESTING` deep (found before the YAML reader recurses that deep). `Where` is a position used
to locate every later validation message as `file:line:column: key: message`. A tree held in
memory (a plan's document, one of its steps) has no lines: `Where.logical(origin, key)` locates
its messages by key path alone, as `origin: key: message` (`subtasks[0].steps[2].with.object:
...` when the origin is empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError

from tether.errors import MAX_NESTING, TetherError


class TreeError(TetherError):
    """One or more located problems in tree files."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Where:
    """A position in a tree file (1-based line and column; line 0: a mapping held in memory,
    located by key path only) and the key path that led there."""

    file: str
    line: int
    column: int
    key: str

    @classmethod
    def logical(cls, origin: str, key: str = "") -> Where:
        """The start of a mapping held in memory, named `origin` (may be empty)."""
        return cls(origin, 0, 0, key)

    def error(self, message: str) -> str:
        """`file:line:column: key: message` (without `key: ` at the top level of a file); an
        in-memory mapping's `origin: key: message`."""
        at = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return ": ".join(part for part in (at, self.key, message) if part)

    def place(self) -> str:
        """Where a node is written: `file:line`, or its origin and key path in memory."""
        return f"{self.file}:{self.line}" if self.line else " ".join(
            part for part in (self.file, self.key) if part)

    def of_key(self, mapping: Any, key: str, path: str | None = None) -> Where:
        """Where `key` of `mapping` is written (this position when the mapping has no marks)."""
        path = path or (f"{self.key}.{key}" if self.key else key)
        if self.line and isinstance(mapping, CommentedMap) and key in mapping:
            line, col = mapping.lc.key(key)
            return Where(self.file, line + 1, col + 1, path)
        return Where(self.file, self.line, self.column, path)

    def at(self, data: Any, path: tuple[str | int, ...]) -> Where:
        """Where the value at `path` (keys and indices) inside `data` is written."""
        where = self
        for key in path:
            where = where.of_item(data, key) if isinstance(key, int) else where.of_key(data, key)
            data = data[key]
        return where

    def of_item(self, seq: Any, index: int) -> Where:
        """Where item `index` of `seq` is written."""
        path = f"{self.key}[{index}]"
        if self.line and isinstance(seq, CommentedSeq) and index < len(seq):
            line, col = seq.lc.item(index)
            return Where(self.file, line + 1, col + 1, path)
        return Where(self.file, self.line, self.column, path)


def display_path(path: Path) -> str:
    """A path relative to the working directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def read_text(path: Path) -> str:
    """A tree file's text; a located error when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TreeError([f"{display_path(path)}: no such tree file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TreeError([f"{display_path(path)}: cannot read tree file: {exc}"]) from None


def load_source(path: Path, text: str | None = None) -> tuple[Any, Where]:
    """Parse a tree file (`text`: its text, already read); return its top-level value and the
    position of its start."""
    shown = display_path(path)
    if text is None:
        text = read_text(path)
    yaml = YAML(typ="rt")
    yaml.max_depth = MAX_NESTING + 1  # ruamel counts the scalars inside the deepest collection
    try:
        data = yaml.load(text)
    except MaxDepthExceededError as exc:
        mark = exc.problem_mark
        raise TreeError([f"{shown}:{mark.line + 1}:{mark.column + 1}: nested more than "
                         f"{MAX_NESTING} levels deep (mappings and lists inside each other)"]
                        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        start = exc.context_mark  # where the construct being parsed began, e.g. an open '['
        if exc.problem and exc.context and start and (start.line, start.column) != (line - 1,
                                                                                    col - 1):
            problem += f" ({exc.context} at {start.line + 1}:{start.column + 1})"
        if "'\\t'" in problem:
            problem += "; indent with spaces, not tabs"
        raise TreeError([f"{shown}:{line}:{col}: YAML: {problem}"]) from None
    return data, Where(shown, 1, 1, "")
