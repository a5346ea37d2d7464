"""The episode blackboard: its key layout, its isolation, and the command slot.

Every episode starts from an empty blackboard (`new_episode`), so nothing leaks between runs in
one process. Keys are absolute and grouped by namespace:

    /task/name, /task/instruction, /task/params   what the episode is asked to do
    /scene/entities                               the names targets and predicates may use
    /command/action, /command/by, /command/node   the one action of this tick and who put it
    /errors/last, /errors/history                 error codes written by failing leaves
    /grasps/stalled/<object>                      grasps whose way down stalled (`grasp_stalls`)
    /user/...                                     keys written by `set` nodes in trees

The command slot enforces "at most one commander per tick": a second `put` in the same tick
raises `CommandConflict`, naming both leaves. A leaf stopped in the tick it commanded (e.g. by a
parallel's monitor that fails after it) `withdraw`s its action, so the robot holds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import py_trees

from tether.blackboard import trace_events
from tether.errors import TetherError

# Error codes leaves write to /errors/last (Nav2 style: recoveries choose by code).
EMPTY_GRASP = "EMPTY_GRASP"
STUCK = "STUCK"
UNREACHABLE = "UNREACHABLE"
OBJECT_NOT_FOUND = "OBJECT_NOT_FOUND"
TARGET_MOVED = "TARGET_MOVED"
TIMEOUT = "TIMEOUT"
BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
CONDITION_FAILED = "CONDITION_FAILED"
POLICY_ERROR = "POLICY_ERROR"
PREEMPTED = "PREEMPTED"
VERIFIER_ERROR = "VERIFIER_ERROR"
ERROR_CODES = (
    EMPTY_GRASP, STUCK, UNREACHABLE, OBJECT_NOT_FOUND, TARGET_MOVED, TIMEOUT, BUDGET_EXHAUSTED,
    CONDITION_FAILED, POLICY_ERROR, PREEMPTED, VERIFIER_ERROR,
)

USER_NAMESPACE = "/user"


class CommandConflict(TetherError):
    """Two leaves commanded the robot in the same tick."""


@dataclass(frozen=True)
class ErrorRecord:
    code: str
    node: str
    message: str
    step: int


def storage() -> dict:
    """The blackboard's key/value store (py_trees keeps one per process)."""
    return py_trees.blackboard.Blackboard.storage


def new_episode(*, task: str, instruction: str, params: dict, entities: list[str]) -> None:
    """Clear the blackboard (and pending trace events) and write the task namespace."""
    py_trees.blackboard.Blackboard.clear()
    trace_events.drain()
    store = storage()
    store["/task/name"] = task
    store["/task/instruction"] = instruction
    store["/task/params"] = dict(params)
    store["/scene/entities"] = list(entities)
    store["/errors/history"] = []
    store["/errors/last"] = None


def record_error(code: str, node: str, message: str, step: int) -> None:
    """Write an error code to /errors/last and append it to /errors/history."""
    record = asdict(ErrorRecord(code, node, message, step))
    store = storage()
    store["/errors/last"] = record
    store.setdefault("/errors/history", []).append(record)


def last_error() -> dict | None:
    return storage().get("/errors/last")


class CommandSlot:
    """The per-tick command slot: leaves `put` an action, the tick loop `take`s it."""

    def put(self, action: np.ndarray, by: str, node: object = None) -> None:
        """Put this tick's action; `by` names the leaf, `node` identifies it for `withdraw`."""
        store = storage()
        if store.get("/command/action") is not None:
            raise CommandConflict(
                f"two leaves commanded the robot in one tick: '{store['/command/by']}' and '{by}'"
            )
        store["/command/action"] = np.asarray(action, dtype=float)
        store["/command/by"] = by
        store["/command/node"] = node

    def withdraw(self, node: object) -> None:
        """Take back this tick's action if `node` put it (it was stopped after commanding)."""
        store = storage()
        if store.get("/command/action") is not None and store.get("/command/node") == node:
            self.take()

    def take(self) -> tuple[np.ndarray | None, str | None]:
        store = storage()
        action, by = store.get("/command/action"), store.get("/command/by")
        store["/command/action"] = None
        store["/command/by"] = None
        store["/command/node"] = None
        return action, by


COMMAND = CommandSlot()
