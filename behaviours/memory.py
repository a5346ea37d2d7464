"""Memory nodes: `retrieve` (long-term memory onto the blackboard) and `remember` (a note into
the short-term event log).

Both receive the long-term store in `setup(memory=...)` (`ExperienceStore`, or None when memory
is disabled), next to the robot; neither commands the robot.
"""

from __future__ import annotations

from typing import Any

import py_trees

from tether.behaviours.leaf import RobotLeaf
from tether.blackboard.events import Event, event_log
from tether.blackboard.references import render
from tether.memory.retrieval import retrieve

Status = py_trees.common.Status


class Retrieve(RobotLeaf):
    """Search long-term memory once and write what was found and what it advises.

    Tick contract: on its first tick renders `query` (`${/key}` placeholders read the
    blackboard), searches every partition for its top `k` entries with similarity >= `threshold`,
    writes /memory/retrieved, /memory/advice and /memory/params/NAME for every NAME in `defaults`
    (see `tether.memory.retrieval`), and returns SUCCESS in the same tick. Without a store (memory
    disabled) it writes the defaults and empty hits. Never RUNNING, never commands; `stop()`
    releases nothing.
    """

    def __init__(self, name: str, *, query: str, k: int, threshold: float,
                 defaults: dict[str, Any]):
        super().__init__(name)
        self.query, self.k, self.threshold, self.defaults = query, k, threshold, defaults

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self.store = kwargs.get("memory")

    def update(self) -> Status:
        found = retrieve(self.store, render(self.query), k=self.k,
                         threshold=self.threshold, defaults=self.defaults)
        self.feedback_message = ", ".join(f"{len(found[p])} {p}" for p in
                                          ("successes", "failures", "rules"))
        return Status.SUCCESS


class Remember(RobotLeaf):
    """Add a note to the episode's short-term event log.

    Tick contract: renders `note` (`${/key}` placeholders read the blackboard), appends it as a
    NOTE event at the current step (closing the current segment when `boundary`), and returns
    SUCCESS in the same tick. Never RUNNING, never commands.
    """

    logs_itself = True  # the event recorder does not log this node's completion again

    def __init__(self, name: str, *, note: str, boundary: bool):
        super().__init__(name)
        self.note, self.boundary = note, boundary

    def update(self) -> Status:
        text = render(self.note)
        event_log().append(Event(step=self.robot.steps, node=self.name, action="note", args=text,
                                 outcome="NOTE", boundary=self.boundary))
        self.feedback_message = text
        return Status.SUCCESS
