"""The `monitor` decorator: an expectation checked every N steps while its child runs; a
contradiction preempts the child (OmniAct's visual preemption, VLA²'s periodic verifier).

Checks are requested through a verifier (`tether.behaviours.verifier`: the sim's predicates, or a
VLM in a worker thread) on the scene **as it is at the step of the request**, and their verdicts
are acted on exactly `lag` steps later. Time is counted in ticks (one tick is one control step),
and a verdict that is not in yet when it is due is waited for (in simulation the sim does not
advance meanwhile), so a slow model and a fast model give the same episode.

Tick contract (`Monitor`), with k the number of times the child has been ticked since the
monitor started:
- `initialise`: k = 0, no checks in flight.
- each tick, before the child is ticked:
  1. when k is a multiple of `every`, request a check on the scene as it is now (so the first
     check is on the child's first tick);
  2. collect every check requested at k - `lag` or earlier (waiting for it if needed). A verdict
     that contradicts the expectation stops the running child (INVALID: it does not command this
     tick, the robot holds), writes PREEMPTED with what was seen at which step, emits a
     `preempted` trace event and returns FAILURE. No usable verdict (VERIFIER_ERROR) stops the
     child the same way.
  3. tick the child and reflect its status.
- `terminate`: checks still in flight are dropped (a VLM's late answer is never used).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import py_trees

from tether.behaviours.services import NO_SERVICES, Services
from tether.behaviours.verifier import Expectation, Pending, Verdict, Verifier, choose_verifier
from tether.blackboard.episode import PREEMPTED, VERIFIER_ERROR, record_error
from tether.blackboard.trace_events import emit
from tether.scenes.robot import Robot

Status = py_trees.common.Status


class Monitor(py_trees.decorators.Decorator):
    """Preempt the child when a periodic check contradicts `expectation`; see the module
    docstring for the tick contract."""

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour, *,
                 expectation: Expectation, every: int, lag: int, verifier: str):
        super().__init__(name=name, child=child)
        if every < 1 or lag < 0:
            raise ValueError("Monitor needs every >= 1 and lag >= 0")
        self.expectation, self.every, self.lag, self.choice = expectation, every, lag, verifier
        self.in_flight: deque[tuple[int, Pending]] = deque()
        self.ticks = 0
        self.checks = 0  # verdicts collected since the monitor started

    def setup(self, **kwargs: Any) -> None:
        self.robot: Robot = kwargs["robot"]
        services: Services = kwargs.get("services", NO_SERVICES)
        self.verifier: Verifier | None = choose_verifier(self.choice, services.verifier)

    def initialise(self) -> None:
        self.ticks = self.checks = 0
        self.in_flight.clear()

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        failed = self.watch()
        if failed:
            self.stop(Status.FAILURE)
            yield self
            return
        yield from self.decorated.tick()
        self.ticks += 1
        new_status = self.update()
        if new_status != Status.RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

    def watch(self) -> bool:
        """Request this tick's check and act on the due ones; True when the child must stop."""
        if self.verifier is None:
            return self.preempt(VERIFIER_ERROR, "verifier: vlm, but this run has no VLM verifier")
        if self.ticks % self.every == 0:
            self.in_flight.append((self.ticks + self.lag, self.verifier.request(
                self.robot, self.expectation)))
        while self.in_flight and self.in_flight[0][0] <= self.ticks:
            verdict = self.in_flight.popleft()[1].result()
            self.checks += 1
            if verdict.error is not None:
                return self.preempt(VERIFIER_ERROR, f"{verdict.by}: {verdict.error}", verdict)
            if verdict.contradicts(self.expectation):
                return self.preempt(PREEMPTED, f"{self.expectation} contradicted by {verdict.by} "
                                               f"at step {verdict.step}", verdict)
            self.feedback_message = f"{self.expectation} at step {verdict.step} ({verdict.by})"
        return False

    def preempt(self, code: str, message: str, verdict: Verdict | None = None) -> bool:
        message = f"{message}; {self.decorated.name} preempted at step {self.robot.steps}"
        self.feedback_message = message
        record_error(code, self.name, message, self.robot.steps)
        emit("preempted", self.name, code=code, child=self.decorated.name,
             expectation=str(self.expectation), observed_step=verdict.step if verdict else None,
             by=verdict.by if verdict else None, message=message)
        return True

    def update(self) -> Status:
        return self.decorated.status

    def terminate(self, new_status: Status) -> None:
        self.in_flight.clear()
