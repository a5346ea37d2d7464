"""The one family of user-facing errors, and the checks every reader of user files shares.

Every mistake a user can make (a malformed tree file, an unknown task or object, a bad CLI
argument) raises a `TetherError` whose message says what is wrong, where, and what was probably
meant. The CLI prints the message and exits with code 2, never a traceback. An exception raised
while a tree runs becomes a `TickError` naming the node and where the tree file writes it
(BehaviorTree.CPP's `NodeExecutionError`). This module is the bottom layer: every other package
may import it, and it imports none of them.

Files (trees, plans, suites, policies) give plain data: `data_problem` finds what no reader
accepts in it, a number that is not finite (`.nan`, `.inf`, `1e999`, JSON's `NaN`) or mappings
and lists nested more than `MAX_NESTING` deep (the YAML reader enforces the same limit).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Any

MAX_NESTING = 150  # mappings and lists inside each other in any file a user gives


class TetherError(Exception):
    """A user-facing error with a clear, self-contained message."""


class TickError(TetherError):
    """An exception raised while a tree ran, located at the node it was raised in.

    The message is one line, `FILE:LINE: in 'PATH': MESSAGE`, where PATH is the node's path of
    names from the root; `node` and `origin` hold those two, `__cause__` the original exception.
    """

    def __init__(self, node: str, origin: str | None, cause: BaseException):
        self.node, self.origin = node, origin
        what = str(cause) if isinstance(cause, TetherError) else (
            f"{type(cause).__name__}: {cause}")
        super().__init__(f"{origin + ': ' if origin else ''}in '{node}': {what}")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest of `choices`, or '' when nothing is close."""
    close = difflib.get_close_matches(str(name), sorted(set(choices)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def not_finite(value: Any) -> bool:
    """Whether `value` is a number that is nan or infinite."""
    return isinstance(value, float) and not math.isfinite(value)


def finite_problem(value: float) -> str:
    """The message for a number that is not finite."""
    return f"must be a finite number, got {float(value)!r}"


def data_problem(data: Any) -> tuple[tuple[str | int, ...], str] | None:
    """The first problem in plain data (dicts, lists, scalars) as (key path, message), or None.

    The walk is iterative, so data nested any depth is checked without recursion.
    """
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if not_finite(value):
            return path, finite_problem(value)
        if isinstance(value, dict | list | tuple):
            if len(path) >= MAX_NESTING:
                return path, f"nested more than {MAX_NESTING} levels deep"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(((*path, key), item) for key, item in reversed(list(items)))
    return None


def key_path(path: Iterable[str | int], longest: int = 10) -> str:
    """`subtasks[0].steps[2].move_to` for ('subtasks', 0, 'steps', 2, 'move_to'); a path of more
    than `longest` keys shows its first and last few around `…`."""
    keys = list(path)
    if len(keys) > longest:
        return f"{key_path(keys[:longest - 2])}…{key_path(keys[-2:])}"
    out = ""
    for key in keys:
        out += f"[{key}]" if isinstance(key, int) else f".{key}" if out else str(key)
    return out
