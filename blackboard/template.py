"""Text templates over the blackboard: `${/key}` placeholders, replaced, never evaluated.

    render("${/task/instruction} Objects: ${/scene/entities}")
    # 'put the bowl on the plate Objects: akita_black_bowl_1, plate_1'

A list or tuple value is joined with ", "; any other value is `str()`-ed. A placeholder naming a
key that has not been written raises `MissingKey`.
"""

from __future__ import annotations

import re

from tether.blackboard.episode import storage

PLACEHOLDER = re.compile(r"\$\{(/[A-Za-z0-9_/.\-]+)\}")


class MissingKey(RuntimeError):
    """A template named a blackboard key that has not been written."""


def render(template: str) -> str:
    """`template` with every `${/key}` replaced by that key's value."""
    store = storage()

    def value(match: re.Match) -> str:
        key = match.group(1)
        if key not in store:
            raise MissingKey(f"template '{template}': blackboard key '{key}' has not been written")
        v = store[key]
        return ", ".join(map(str, v)) if isinstance(v, list | tuple) else str(v)

    return PLACEHOLDER.sub(value, template)
