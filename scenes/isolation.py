"""Perception isolation: which reads of a robot are privileged, and the guard that forbids them.

A simulated scene knows every object's pose, box and contacts exactly; a real robot does not.
The `Robot` methods that answer from the simulator's object state are marked `@privileged`.
While a robot's isolation is `enforced()` (an episode under camera perception), calling one
raises `IsolationError`, which fails the episode at the node that made the read, unless the
caller declared an exception with `allowed(reason)`. Every privileged call made under an
exception is counted by reason in `reads` (calls it makes itself are not), so a run reports
exactly what it still took from the simulator and why (docs/perception.md lists the reasons).

    with scene.isolation.enforced():
        scene.pose_of("plate_1")                       # IsolationError
        with scene.isolation.allowed("outcome"):
            scene.success()                            # the benchmark's own goal test
    scene.isolation.reads                              # Counter({"outcome": 1})
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from tether.errors import TetherError


class IsolationError(TetherError):
    """A read of the simulator's object state where only perception may be used."""


class Isolation:
    """One robot's guard: off by default; `enforced()` turns it on, `allowed(reason)` lets the
    privileged calls inside it through, counted under `reason`."""

    def __init__(self) -> None:
        self.on = False
        self.reads: Counter[str] = Counter()
        self._reasons: list[str] = []

    def enforced(self) -> AbstractContextManager[None]:
        return self._switched(True)

    @contextmanager
    def allowed(self, reason: str) -> Iterator[None]:
        self._reasons.append(reason)
        try:
            yield
        finally:
            self._reasons.pop()

    def check(self, what: str) -> None:
        """Count the privileged call `what` under the innermost allowed reason; without one,
        raise `IsolationError`."""
        if not self._reasons:
            raise IsolationError(
                f"perception isolation: {what} reads the simulator's object state; under camera "
                "perception leaves read object state from the camera world model only")
        self.reads[self._reasons[-1]] += 1

    def suspended(self) -> AbstractContextManager[None]:
        """Off while a privileged method runs (its own privileged calls are its business)."""
        return self._switched(False)

    @contextmanager
    def _switched(self, on: bool) -> Iterator[None]:
        before, self.on = self.on, on
        try:
            yield
        finally:
            self.on = before


def privileged[F: Callable[..., Any]](method: F) -> F:
    """Mark a `Robot` method as answering from the simulator's object state."""

    @functools.wraps(method)
    def guarded(self, *args: Any, **kwargs: Any) -> Any:
        isolation = self.isolation
        if not isolation.on:
            return method(self, *args, **kwargs)
        shown = ", ".join(repr(a) for a in args if isinstance(a, str))
        isolation.check(f"{method.__name__}({shown})")
        with isolation.suspended():
            return method(self, *args, **kwargs)

    return guarded  # type: ignore[return-value]
