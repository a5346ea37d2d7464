"""Services: what an episode's nodes may call besides the robot and the long-term store.

A run hands one `Services` to every node's `setup(services=...)` (`tether.trees.episode`):

- `verifier`: judges the `verify`/`monitor` nodes set to `vlm` or `auto` (None: the sim's own
  predicates, `tether.behaviours.verifier.SimVerifier`);
- `replanner`: the planner the `replan` node asks (`tether do` gives one; None: it fails);
- `diagnoser`: diagnoses the episode for consolidation when it ends (None: the rule-based
  `tether.memory.diagnosis.diagnose`).

Which ones a run gets is chosen by name (`tether.session.services`); `close()` releases what
they hold (the VLM verifier's worker thread).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import py_trees

from tether.behaviours.verifier import Verifier
from tether.memory.diagnosis import Diagnoser

Replanner = Callable[[dict[str, Any]], py_trees.behaviour.Behaviour]


@dataclass(frozen=True)
class Services:
    verifier: Verifier | None = None
    replanner: Replanner | None = None
    diagnoser: Diagnoser | None = None

    def close(self) -> None:
        """Release what the services hold (idempotent)."""
        for service in (self.verifier, self.replanner, self.diagnoser):
            close = getattr(service, "close", None)
            if close is not None:
                close()


NO_SERVICES = Services()
