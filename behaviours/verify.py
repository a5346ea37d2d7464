"""The `verify` leaf: check an expected effect once, through a verifier.

Unlike `check` (always the sim's predicate), `verify` asks a `tether.behaviours.verifier.Verifier`:
the sim predicates by default, or the VLM verifier the run was given (the `verifier` service).

Tick contract (`Verify`): never RUNNING, never commands. Each tick it requests a verdict on the
scene as it is and waits for it inside the tick (in simulation the sim does not advance while a
VLM answers). SUCCESS when the predicate holds; FAILURE writing `error` when it does not;
FAILURE writing VERIFIER_ERROR when there is no usable answer (an unparseable reply, a failed
backend, no camera) or `verifier: vlm` was asked for and the run has no VLM verifier.
"""

from __future__ import annotations

from typing import Any

import py_trees

from tether.behaviours.leaf import RobotLeaf
from tether.behaviours.services import NO_SERVICES, Services
from tether.behaviours.verifier import Expectation, choose_verifier
from tether.blackboard.episode import VERIFIER_ERROR
from tether.blackboard.trace_events import emit

Status = py_trees.common.Status


class Verify(RobotLeaf):
    """Check `expectation` once per tick through the chosen verifier; see the module docstring."""

    def __init__(self, name: str, expectation: Expectation, *, verifier: str, error: str):
        super().__init__(name)
        self.expectation, self.choice, self.error = expectation, verifier, error

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        services: Services = kwargs.get("services", NO_SERVICES)
        self.verifier = choose_verifier(self.choice, services.verifier)

    def update(self) -> Status:
        if self.verifier is None:
            return self.fail(VERIFIER_ERROR, "verifier: vlm, but this run has no VLM verifier")
        verdict = self.verifier.request(self.robot, self.expectation).result()
        emit("verdict", self.name, expectation=str(self.expectation), by=verdict.by,
             value=verdict.value, observed_step=verdict.step, error=verdict.error)
        if verdict.error is not None:
            return self.fail(VERIFIER_ERROR, f"{verdict.by}: {verdict.error}")
        if verdict.contradicts(self.expectation):
            return self.fail(self.error, f"{self.expectation} does not hold ({verdict.by})")
        self.feedback_message = f"{self.expectation} holds ({verdict.by})"
        return Status.SUCCESS
