"""The one family of user-facing errors.

Every mistake a user can make (a malformed tree file, an unknown task or object, a bad CLI
argument) raises a `TetherError` whose message says what is wrong, where, and what was probably
meant. The CLI prints the message and exits with code 2, never a traceback. This module is the
bottom layer: every other package may import it, and it imports none of them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TetherError(Exception):
    """A user-facing error with a clear, self-contained message."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest of `choices`, or '' when nothing is close."""
    close = difflib.get_close_matches(str(name), sorted(set(choices)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
