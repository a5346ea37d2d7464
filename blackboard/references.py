"""Blackboard references: `${/key}` in tree values and text, read at run time.

A value that is exactly `"${/key}"` is a `Ref`, read (`deref`) each time the node uses it; a
text with `${/key}` placeholders is filled in (`render`), a list or tuple joined with ", ", any
other value `str()`-ed. Nothing is ever evaluated. A key is `/` and names (letters, digits, `_`,
not starting with a digit) separated by `/`, the same keys `set` writes. One function,
`parse_text`, reads the syntax for all of them; a `${` that does not start a well-formed
reference is a `TetherError` (the compiler reports it at its place in the tree file).

    render("${/task/instruction} Objects: ${/scene/entities}")
    # 'put the bowl on the plate Objects: akita_black_bowl_1, plate_1'

Reading a key that has not been written raises `MissingKey`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tether.blackboard.episode import storage
from tether.errors import TetherError

NAMES = r"[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*"  # a key without its leading '/'
REFERENCE = re.compile(r"\$\{(/" + NAMES + r")\}")


@dataclass(frozen=True)
class Ref:
    """A reference to a blackboard key, written `${/key}` in tree files."""

    key: str

    def __str__(self) -> str:
        return f"${{{self.key}}}"


class MissingKey(TetherError):
    """A reference named a blackboard key that no node has written."""


@lru_cache(maxsize=1024)
def parse_text(text: str) -> tuple[str | Ref, ...]:
    """`text` as its literal pieces and `Ref`s, in order; a malformed `${...` is a TetherError."""
    pieces: list[str | Ref] = []
    at = 0
    while (start := text.find("${", at)) >= 0:
        match = REFERENCE.match(text, start)
        if match is None:
            end = text.find("}", start)
            bad = text[start:end + 1] if end >= 0 else text[start:]
            raise TetherError(f"malformed blackboard reference '{bad}': write ${{/key}} with a "
                              "key like /user/target")
        pieces += [text[at:start]] if start > at else []
        pieces.append(Ref(match.group(1)))
        at = match.end()
    pieces += [text[at:]] if at < len(text) else []
    return tuple(pieces)


def as_ref(value: Any) -> Ref | None:
    """The `Ref` a value is when it is exactly one `${/key}`, else None."""
    if isinstance(value, Ref):
        return value
    if isinstance(value, str) and "${" in value:
        pieces = parse_text(value)
        if len(pieces) == 1 and isinstance(pieces[0], Ref):
            return pieces[0]
    return None


def read(key: str) -> Any:
    """The blackboard value of `key`; `MissingKey` when no node has written it."""
    store = storage()
    if key not in store:
        raise MissingKey(f"blackboard key '{key}' has not been written")
    return store[key]


def deref(value: Any) -> Any:
    """The value itself, or the blackboard value a `Ref` points at (recursively in lists/dicts)."""
    if isinstance(value, Ref):
        return read(value.key)
    if isinstance(value, list):
        return [deref(v) for v in value]
    if isinstance(value, dict):
        return {k: deref(v) for k, v in value.items()}
    return value


def render(text: str) -> str:
    """`text` with every `${/key}` replaced by that key's value."""
    def shown(piece: str | Ref) -> str:
        if isinstance(piece, str):
            return piece
        value = read(piece.key)
        return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)

    return "".join(shown(p) for p in parse_text(text))
