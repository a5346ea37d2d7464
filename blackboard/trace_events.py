"""Events a leaf reports for the trace, beyond what its status already says.

Starts, stops, failures, preemptions, error codes and recoveries are derived by the recorder from
statuses and the blackboard. What a status cannot show, a leaf reports here: a VLA leaf each
action chunk it starts (`emit("vla_chunk", self.name, size=8)`), a perception leaf a detection.
The recorder drains the pending events after every tick, gives them a camera frame and puts them
on the viewer's timeline. Like the blackboard, the queue is process-global; without a recorder
it is cleared at every episode start and stays small.

    emit("vla_chunk", self.name, size=8, instruction="pick up the bowl")
"""

from __future__ import annotations

from typing import Any

_pending: list[dict[str, Any]] = []


def emit(kind: str, node: str, **data: Any) -> None:
    """Report an event of `kind` (a short snake_case word) by the leaf named `node`."""
    _pending.append({"kind": kind, "node": node, **data})


def drain() -> list[dict[str, Any]]:
    """The events reported since the last drain, oldest first; the queue is left empty."""
    events = list(_pending)
    _pending.clear()
    return events
